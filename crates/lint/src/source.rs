//! Source positions of instructions from OpLine and NonSemantic.Shader.DebugInfo.100 DebugLine,
//! and the source text from OpSource / DebugSource (glslang `-g`, `-gV`, `-gVS`).

use coopmat_spirv::Module;
use coopmat_spirv::grammar::{self, op};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// A position in a shader source file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SourceLoc {
    /// The file name as the module records it.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (0: unknown).
    pub column: u32,
    /// The text of that line, when the module carries the source.
    #[serde(skip)]
    pub text: Option<String>,
}

impl std::fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.column > 0 {
            write!(f, "{}:{}:{}", self.file, self.line, self.column)
        } else {
            write!(f, "{}:{}", self.file, self.line)
        }
    }
}

/// The positions of a module's instructions.
pub(crate) struct Lines {
    at: FxHashMap<usize, (u32, u32, u32)>,
    /// File string id -> (name, source text).
    files: FxHashMap<u32, (String, Option<String>)>,
}

const DEBUG_INFO: &str = "NonSemantic.Shader.DebugInfo.100";
/// glslang 16 imports the set as `NonSemantic.Shader.DebugInfo.102`; the instructions the
/// positions need keep their numbers.
const DEBUG_INFO_PREFIX: &str = "NonSemantic.Shader.DebugInfo.";

impl Lines {
    pub fn new(m: &Module) -> Lines {
        let strings: FxHashMap<u32, String> = m
            .instructions
            .iter()
            .filter(|i| i.opcode == op::String)
            .filter_map(|i| Some((i.result_id?, i.string(1)?)))
            .collect();
        let debug_set: Option<u32> = m
            .instructions
            .iter()
            .find(|i| {
                i.opcode == op::ExtInstImport
                    && i.string(1)
                        .is_some_and(|n| n.starts_with(DEBUG_INFO_PREFIX))
            })
            .and_then(|i| i.result_id);
        let set = grammar::ext_inst_set(DEBUG_INFO);
        let number = |name: &str| {
            set.and_then(|s| s.instruction_by_name(name))
                .map(|d| d.opcode)
        };
        let (source_no, continued_no, line_no, noline_no) = (
            number("DebugSource"),
            number("DebugSourceContinued"),
            number("DebugLine"),
            number("DebugNoLine"),
        );
        let mut files: FxHashMap<u32, (String, Option<String>)> = FxHashMap::default();
        // DebugSource result id -> file string id.
        let mut debug_sources: FxHashMap<u32, u32> = FxHashMap::default();
        let mut last_text: Option<u32> = None;
        let mut at = FxHashMap::default();
        let mut cur: Option<(u32, u32, u32)> = None;
        for (i, inst) in m.instructions.iter().enumerate() {
            let ext =
                (inst.opcode == op::ExtInst && inst.word(2) == debug_set && debug_set.is_some())
                    .then(|| inst.word(3))
                    .flatten();
            match inst.opcode {
                op::Source => {
                    if let Some(file) = inst.word(2) {
                        let text = inst.string(3);
                        files.insert(
                            file,
                            (strings.get(&file).cloned().unwrap_or_default(), text),
                        );
                        last_text = Some(file);
                    }
                }
                op::SourceContinued => {
                    if let (Some(f), Some(more)) = (last_text, inst.string(0))
                        && let Some((_, Some(t))) = files.get_mut(&f)
                    {
                        t.push_str(&more);
                    }
                }
                op::Line => {
                    cur = Some((
                        inst.word(0).unwrap_or(0),
                        inst.word(1).unwrap_or(0),
                        inst.word(2).unwrap_or(0),
                    ));
                }
                op::NoLine | op::Label | op::Function | op::FunctionEnd => cur = None,
                _ => {}
            }
            if let Some(e) = ext {
                let a = 4; // operands after result type, id, set and instruction
                let w = |k: usize| inst.word(a + k);
                if Some(e) == source_no {
                    if let (Some(id), Some(file)) = (inst.result_id, w(0)) {
                        debug_sources.insert(id, file);
                        let text = w(1).and_then(|t| strings.get(&t).cloned());
                        let entry = files.entry(file).or_insert_with(|| {
                            (strings.get(&file).cloned().unwrap_or_default(), None)
                        });
                        if entry.1.is_none() {
                            entry.1 = text;
                        }
                        last_text = Some(file);
                    }
                } else if Some(e) == continued_no {
                    if let (Some(f), Some(more)) = (last_text, w(0).and_then(|t| strings.get(&t)))
                        && let Some((_, Some(t))) = files.get_mut(&f)
                    {
                        t.push_str(more);
                    }
                } else if Some(e) == line_no {
                    let c = |k: usize| w(k).and_then(|id| m.constant_u64(id)).unwrap_or(0) as u32;
                    if let Some(&file) = w(0).and_then(|s| debug_sources.get(&s)) {
                        cur = Some((file, c(1), c(3)));
                    }
                } else if Some(e) == noline_no {
                    cur = None;
                }
            }
            if let Some(pos) = cur {
                at.insert(i, pos);
            }
            if coopmat_spirv::module::is_terminator(inst.opcode) {
                cur = None;
            }
        }
        for (&id, name) in &strings {
            files.entry(id).or_insert_with(|| (name.clone(), None));
        }
        Lines { at, files }
    }

    /// The position of instruction `i`.
    pub fn at(&self, i: usize) -> Option<SourceLoc> {
        let &(file, line, column) = self.at.get(&i)?;
        let (name, text) = self.files.get(&file)?;
        Some(SourceLoc {
            file: name.clone(),
            line,
            column,
            text: text
                .as_ref()
                .and_then(|t| t.lines().nth(line.checked_sub(1)? as usize))
                .map(str::to_string),
        })
    }
}
