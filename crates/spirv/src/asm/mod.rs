//! The assembler: SPIR-V assembly text to a binary, word-identical to SPIRV-Tools' `spirv-as`
//! (2026.4) for the same text and options.
//!
//! It accepts everything `spirv-dis` prints and the hand-written forms `spirv-as` accepts:
//! named ids (`%name`, characters `[A-Za-z0-9_]`), `%result = OpX ...`, every alias spelling of
//! opcodes and enumerants, masks as `A|B` (mask parameters follow in bit order, lowest bit
//! first), extended instructions by name, `OpSpecConstantOp` with the opcode name without
//! `Op`, literals whose width comes from a type (`OpConstant`, `OpSwitch` cases), hex floats,
//! strings with `\"` and `\\` escapes, `;` comments and `!<n>` raw words.
//!
//! Behaviour that matches `spirv-as` and is easy to trip over:
//! - Ids are numbered in order of first appearance (`%12` is just a name). With
//!   [`AsmOptions::preserve_numeric_ids`], numeric names keep their number and the other names
//!   fill the gaps from 1 up. The bound is one more than the largest id.
//! - Integers follow C++ stream rules: `0x` hex, and a leading `0` means *octal* (`010` is 8).
//! - Hex floats are truncated, not rounded; f16/bf16/fp8/fp6/fp4 decimal literals are read as
//!   f32 and then truncated toward zero. Formats without infinity (E4M3, FP6, FP4) fail above
//!   their largest finite value and saturate to it when the exponent is above the bias; E8M0
//!   and MXInt8 take only exactly representable values. Hex subnormals of FP6/FP4 come out
//!   shifted (the reader puts their implicit bit at the wrong place), as `spirv-as` writes them.
//! - Without a target environment, a `; Version: 1.N` comment before the first instruction (as
//!   `spirv-dis` prints it) picks the version word.
//! - `!<n>` as an operand switches the rest of the instruction to raw mode (each word an
//!   immediate, an id, a string, a 32-bit integer or a number with a `.` as an f32); an
//!   instruction that *starts* with `!<n>` is raw words with no word count filled in.
//! - An optional operand ends where the next word starts an instruction (`OpX...` with an
//!   upper-case letter after `Op`, or `%id =`).
//!
//! The header is: magic, the target environment's version, [`GENERATOR`] (what `spirv-as`
//! writes: the SPIRV-Tools Assembler's registered tool id 7, version 0), the bound, 0.
//!
//! Known differences: the extended instruction sets whose grammar coopmat does not carry
//! (`OpenCL.std`, `SPV_AMD_*`, `DebugInfo`, `OpenCL.DebugInfo.100`, `TOSA.001000.1`,
//! `Arm.MotionEngine.100`, and instructions of `NonSemantic.VkspReflection.*` by name) are
//! rejected when used. `spirv-as` rejects `A|B` in the *required* MemoryAccess operand of
//! `OpCooperativeMatrixLoadTensorNV`/`StoreTensorNV` (which `spirv-dis` prints); coopmat
//! accepts it like every other mask. The text is `&str`, so bytes that are not UTF-8 (which
//! `spirv-as` copies into strings) cannot be given.

mod lex;
mod literal;

use crate::binary::{MAGIC, decode_string};
use crate::grammar::{
    self, EnumerantDesc, ExtInstSetDesc, InstructionDesc, OperandCategory, OperandDesc,
    OperandKind, Quantifier, fp_encoding, op,
};
use lex::Token;
use literal::{FloatFormat, Literal};
use std::collections::{HashMap, HashSet};
use std::fmt;

use std::sync::OnceLock;

/// The generator word `spirv-as` writes: tool id 7 (Khronos "SPIRV-Tools Assembler") in the high
/// half, tool version 0 in the low half.
pub const GENERATOR: u32 = 7 << 16;

/// A target environment, named as `spirv-as --target-env` names it; it picks the version word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetEnv {
    name: &'static str,
    version: (u8, u8),
}

/// Every environment `spirv-as` accepts, with the SPIR-V version it writes in the header.
const TARGET_ENVS: &[(&str, (u8, u8))] = &[
    ("spv1.0", (1, 0)),
    ("spv1.1", (1, 1)),
    ("spv1.2", (1, 2)),
    ("spv1.3", (1, 3)),
    ("spv1.4", (1, 4)),
    ("spv1.5", (1, 5)),
    ("spv1.6", (1, 6)),
    ("vulkan1.0", (1, 0)),
    ("vulkan1.1", (1, 3)),
    ("vulkan1.1spv1.4", (1, 4)),
    ("vulkan1.2", (1, 5)),
    ("vulkan1.3", (1, 6)),
    ("vulkan1.4", (1, 6)),
    ("opencl1.2embedded", (1, 0)),
    ("opencl1.2", (1, 0)),
    ("opencl2.0embedded", (1, 0)),
    ("opencl2.0", (1, 0)),
    ("opencl2.1embedded", (1, 0)),
    ("opencl2.1", (1, 0)),
    ("opencl2.2embedded", (1, 2)),
    ("opencl2.2", (1, 2)),
    ("opengl4.0", (1, 0)),
    ("opengl4.1", (1, 0)),
    ("opengl4.2", (1, 0)),
    ("opengl4.3", (1, 0)),
    ("opengl4.5", (1, 0)),
];

impl TargetEnv {
    /// Finds an environment by its `spirv-as` name (`spv1.6`, `vulkan1.3`, ...).
    pub fn from_name(name: &str) -> Option<TargetEnv> {
        TARGET_ENVS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(name, version)| TargetEnv { name, version })
    }

    /// All accepted names.
    pub fn names() -> impl Iterator<Item = &'static str> {
        TARGET_ENVS.iter().map(|(n, _)| *n)
    }

    /// The environment for a SPIR-V version (`spvX.Y`), if there is one.
    pub fn for_version(major: u8, minor: u8) -> Option<TargetEnv> {
        Self::from_name(&format!("spv{major}.{minor}"))
    }

    /// Its name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The SPIR-V version it writes.
    pub fn version(&self) -> (u8, u8) {
        self.version
    }

    /// The header version word `0x00MMmm00`.
    pub fn version_word(&self) -> u32 {
        u32::from(self.version.0) << 16 | u32::from(self.version.1) << 8
    }
}

impl Default for TargetEnv {
    /// `spv1.6`, the default of `spirv-as` 2026.4.
    fn default() -> Self {
        TargetEnv {
            name: "spv1.6",
            version: (1, 6),
        }
    }
}

impl std::str::FromStr for TargetEnv {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        TargetEnv::from_name(s).ok_or_else(|| {
            format!(
                "unknown target environment '{s}' (one of: {})",
                TargetEnv::names().collect::<Vec<_>>().join(", ")
            )
        })
    }
}

impl fmt::Display for TargetEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// Assembler options (those of `spirv-as`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AsmOptions {
    /// The environment (`--target-env`): sets the header version word. `None` does what
    /// `spirv-as` does without the flag: the version of a `; Version: 1.N` comment before the
    /// first instruction (as `spirv-dis` prints it), else SPIR-V 1.6.
    pub target_env: Option<TargetEnv>,
    /// Keep numeric ids (`%12`) as their numbers (`--preserve-numeric-ids`).
    pub preserve_numeric_ids: bool,
}

/// An assembly error with its place in the text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct AsmError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// Byte offset in the text.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl AsmError {
    fn at(text: &[u8], offset: usize, message: impl Into<String>) -> AsmError {
        let offset = offset.min(text.len());
        let before = &text[..offset];
        let line_start = before
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let line = 1 + before.iter().filter(|&&c| c == b'\n').count();
        let column = 1 + String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count();
        AsmError {
            line,
            column,
            offset,
            message: message.into(),
        }
    }

    /// Formats the error as `path:line:col: error: message`, the source line and a caret
    /// under the column.
    pub fn render(&self, path: &str, source: &str) -> String {
        self.render_bytes(path, source.as_bytes())
    }

    /// [`AsmError::render`] for text given as bytes (see [`assemble_bytes`]).
    pub fn render_bytes(&self, path: &str, source: &[u8]) -> String {
        let bytes = source;
        let offset = self.offset.min(bytes.len());
        let start = bytes[..offset]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let end = bytes[offset..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(bytes.len(), |p| offset + p);
        let line_text = String::from_utf8_lossy(&bytes[start..end]);
        let line_text = line_text.trim_end_matches('\r');
        let pad: String = line_text
            .chars()
            .take(self.column.saturating_sub(1))
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        format!(
            "{path}:{}:{}: error: {}\n{line_text}\n{pad}^\n",
            self.line, self.column, self.message
        )
    }
}

/// Assembles SPIR-V assembly text into words (header included).
///
/// ```
/// use coopmat_spirv::asm::{AsmOptions, GENERATOR, assemble};
/// use coopmat_spirv::grammar::{capability, op};
/// let words = assemble("OpCapability Shader ; a comment", &AsmOptions::default()).unwrap();
/// assert_eq!(words[2], GENERATOR);
/// assert_eq!(words[5..], [2 << 16 | u32::from(op::Capability), capability::Shader]);
/// ```
pub fn assemble(text: &str, options: &AsmOptions) -> std::result::Result<Vec<u32>, AsmError> {
    assemble_bytes(text.as_bytes(), options)
}

/// Assembles text given as bytes: like [`assemble`], but bytes that are not UTF-8 are copied
/// into literal strings as they are (as `spirv-as` does).
pub fn assemble_bytes(
    text: &[u8],
    options: &AsmOptions,
) -> std::result::Result<Vec<u32>, AsmError> {
    let toks = lex::tokenize(text);
    let mut asm = Asm {
        text,
        out: Vec::with_capacity(toks.len() + 5),
        toks,
        pos: 0,
        names: HashMap::default(),
        preserved: HashSet::default(),
        next_id: 1,
        bound: 1,
        types: IdTable::default(),
        value_types: IdTable::default(),
        ext_sets: HashMap::default(),
    };
    if options.preserve_numeric_ids {
        for i in 0..asm.toks.len() {
            if let Some(name) = asm.tok(i).strip_prefix('%')
                && let Some(n) = literal::parse_u32(name)
            {
                asm.preserved.insert(n);
            }
        }
    }
    let env = options
        .target_env
        .or_else(|| version_comment(text))
        .unwrap_or_default();
    asm.out
        .extend_from_slice(&[MAGIC, env.version_word(), GENERATOR, 0, 0]);
    while asm.pos < asm.toks.len() {
        asm.instruction()?;
    }
    asm.out[3] = asm.bound;
    Ok(asm.out)
}

/// The environment named by the first `; Version: M.N` comment line before any instruction
/// (exact spelling, one space after the colon; lines naming no known `spvM.N` are skipped).
fn version_comment(b: &[u8]) -> Option<TargetEnv> {
    let mut i = 0;
    loop {
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
            i += 1;
        }
        if i >= b.len() || b[i] != b';' {
            return None;
        }
        let end = b[i..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |p| i + p);
        if let Some(r) = b[i..end].strip_prefix(b"; Version: ") {
            let major = r.iter().take_while(|c| c.is_ascii_digit()).count();
            if major > 0 && r.get(major) == Some(&b'.') {
                let minor = r[major + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                if minor > 0
                    && let Some(env) = TargetEnv::from_name(&format!(
                        "spv{}",
                        String::from_utf8_lossy(&r[..major + 1 + minor])
                    ))
                {
                    return Some(env);
                }
            }
        }
        i = end;
    }
}

use crate::binary::IdTable;

type FastMap<K, V> = rustc_hash::FxHashMap<K, V>;
type FastSet<K> = rustc_hash::FxHashSet<K>;

/// What the assembler knows about a type id.
#[derive(Clone, Copy, Debug)]
enum TypeInfo {
    Int { width: u32, signed: bool },
    Float { width: u32, encoding: Option<u32> },
    Other,
}

/// How an extended instruction set's instructions are read.
#[derive(Clone, Copy, Debug)]
enum ExtSet {
    /// A set with a grammar: instructions by name (and by number for `NonSemantic.*` sets).
    Grammar {
        desc: &'static ExtInstSetDesc,
        non_semantic: bool,
    },
    /// A set `spirv-as` knows but coopmat has no grammar for.
    NoGrammar { non_semantic: bool },
    /// Any other `NonSemantic.*` set: instructions by number, operands are ids.
    NonSemanticUnknown,
}

/// The opcodes `OpSpecConstantOp` accepts (by name without `Op`), as `spirv-as` does; the
/// validator checks binaries against the same list.
pub const SPEC_CONSTANT_OPS: &[u16] = &[
    op::AccessChain,
    op::InBoundsAccessChain,
    op::PtrAccessChain,
    op::InBoundsPtrAccessChain,
    op::VectorShuffle,
    op::CompositeExtract,
    op::CompositeInsert,
    op::ConvertFToU,
    op::ConvertFToS,
    op::ConvertSToF,
    op::ConvertUToF,
    op::UConvert,
    op::SConvert,
    op::FConvert,
    op::QuantizeToF16,
    op::ConvertPtrToU,
    op::ConvertUToPtr,
    op::PtrCastToGeneric,
    op::GenericCastToPtr,
    op::Bitcast,
    op::SNegate,
    op::FNegate,
    op::IAdd,
    op::FAdd,
    op::ISub,
    op::FSub,
    op::IMul,
    op::FMul,
    op::UDiv,
    op::SDiv,
    op::FDiv,
    op::UMod,
    op::SRem,
    op::SMod,
    op::FRem,
    op::FMod,
    op::LogicalEqual,
    op::LogicalNotEqual,
    op::LogicalOr,
    op::LogicalAnd,
    op::LogicalNot,
    op::Select,
    op::IEqual,
    op::INotEqual,
    op::UGreaterThan,
    op::SGreaterThan,
    op::UGreaterThanEqual,
    op::SGreaterThanEqual,
    op::ULessThan,
    op::SLessThan,
    op::ULessThanEqual,
    op::SLessThanEqual,
    op::ShiftRightLogical,
    op::ShiftRightArithmetic,
    op::ShiftLeftLogical,
    op::BitwiseOr,
    op::BitwiseXor,
    op::BitwiseAnd,
    op::Not,
    op::UntypedAccessChainKHR,
    op::UntypedInBoundsAccessChainKHR,
    op::UntypedPtrAccessChainKHR,
    op::UntypedInBoundsPtrAccessChainKHR,
    op::CooperativeMatrixLengthKHR,
    op::CooperativeMatrixLengthNV,
];

/// Finds an enumerant by name or alias (hashed: the grammar lookup is a linear scan).
fn enumerant_by_name(kind: OperandKind, name: &str) -> Option<&'static EnumerantDesc> {
    static MAP: OnceLock<FastMap<(OperandKind, &'static str), &'static EnumerantDesc>> =
        OnceLock::new();
    MAP.get_or_init(|| {
        let mut m = FastMap::default();
        for k in grammar::OPERAND_KINDS {
            for e in k.enumerants {
                m.insert((k.kind, e.name), e);
                for a in e.aliases {
                    m.entry((k.kind, *a)).or_insert(e);
                }
            }
        }
        m
    })
    .get(&(kind, name))
    .copied()
}

/// One expected operand.
#[derive(Clone, Copy)]
struct Slot {
    kind: OperandKind,
    quantifier: Quantifier,
}

fn push_slots(stack: &mut Vec<Slot>, list: &[OperandDesc]) {
    for o in list.iter().rev() {
        stack.push(Slot {
            kind: o.kind,
            quantifier: o.quantifier,
        });
    }
}

struct Asm<'a> {
    text: &'a [u8],
    toks: Vec<Token>,
    pos: usize,
    out: Vec<u32>,
    names: FastMap<&'a str, u32>,
    preserved: FastSet<u32>,
    next_id: u32,
    bound: u32,
    types: IdTable<TypeInfo>,
    value_types: IdTable<u32>,
    ext_sets: FastMap<u32, ExtSet>,
}

type Result<T> = std::result::Result<T, AsmError>;

impl<'a> Asm<'a> {
    /// Word `i` as text (a word that is not UTF-8 reads as U+FFFD: it can only be a string,
    /// which [`Asm::tok_bytes`] reads, or an error).
    fn tok(&self, i: usize) -> &'a str {
        std::str::from_utf8(self.tok_bytes(i)).unwrap_or("\u{fffd}")
    }

    fn tok_bytes(&self, i: usize) -> &'a [u8] {
        let t = self.toks[i];
        &self.text[t.start..t.end]
    }

    fn err(&self, i: usize, message: impl Into<String>) -> AsmError {
        let offset = self.toks.get(i).map_or(self.text.len(), |t| t.start);
        AsmError::at(self.text, offset, message)
    }

    fn err_end(&self, message: impl Into<String>) -> AsmError {
        AsmError::at(self.text, self.text.len(), message)
    }

    /// Whether word `i` starts an instruction: `Op` and an upper-case letter, or `%id =`.
    fn starts_instruction(&self, i: usize) -> bool {
        let t = self.tok(i).as_bytes();
        if t.len() >= 3 && t[0] == b'O' && t[1] == b'p' && t[2].is_ascii_uppercase() {
            return true;
        }
        t.first() == Some(&b'%') && i + 1 < self.toks.len() && self.tok(i + 1) == "="
    }

    fn instruction(&mut self) -> Result<()> {
        let first = self.pos;
        self.pos += 1;
        let (result, op_index) = if self.tok(first).starts_with('%') {
            match self.toks.get(self.pos) {
                None => return Err(self.err_end("Expected '=', found end of stream.")),
                Some(_) if self.tok(self.pos) != "=" => {
                    return Err(self.err(
                        self.pos,
                        format!(
                            "'=' expected after result id but found '{}'.",
                            self.tok(self.pos)
                        ),
                    ));
                }
                Some(_) => {}
            }
            self.pos += 1;
            if self.pos >= self.toks.len() {
                return Err(self.err_end("Expected opcode, found end of stream."));
            }
            self.pos += 1;
            (Some(first), self.pos - 1)
        } else {
            (None, first)
        };
        let name = self.tok(op_index);
        if name.starts_with('!') {
            if result.is_some() {
                return Err(self.err(op_index, format!("Invalid Opcode prefix '{name}'.")));
            }
            // Raw words: no word count is filled in.
            let w = self.immediate(op_index)?;
            self.out.push(w);
            return self.raw_rest();
        }
        if !name.starts_with("Op") {
            return Err(self.err(
                op_index,
                format!("Expected <opcode> or <result-id> at the beginning of an instruction, found '{name}'."),
            ));
        }
        let Some(desc) = grammar::instruction_by_name(name) else {
            return Err(self.err(op_index, format!("Invalid Opcode name '{name}'")));
        };
        match (result, desc.has_result()) {
            (Some(r), false) => {
                return Err(self.err(
                    r,
                    format!(
                        "Cannot set ID {} because {name} does not produce a result ID.",
                        self.tok(r)
                    ),
                ));
            }
            (None, true) => {
                return Err(self.err(
                    op_index,
                    format!(
                        "Expected <result-id> at the beginning of an instruction, found '{name}'."
                    ),
                ));
            }
            _ => {}
        }
        let start = self.out.len();
        self.out.push(0);
        let mut stack: Vec<Slot> = Vec::with_capacity(8);
        push_slots(&mut stack, desc.operands);
        while let Some(slot) = stack.pop() {
            if slot.kind == OperandKind::IdResult {
                let r = result.unwrap_or(op_index);
                let id = self.id(r)?;
                self.out.push(id);
                continue;
            }
            let at_end = self.pos >= self.toks.len();
            let next_inst = !at_end && self.starts_instruction(self.pos);
            if slot.quantifier != Quantifier::One {
                if at_end || next_inst {
                    break;
                }
            } else if at_end {
                return Err(self.err_end(format!(
                    "Expected operand for {name} instruction, but found the end of the stream."
                )));
            } else if next_inst {
                return Err(self.err(
                    self.pos,
                    format!("Expected operand for {name} instruction, but found the next instruction instead."),
                ));
            }
            if slot.quantifier == Quantifier::Variadic {
                stack.push(slot);
            }
            if self.tok(self.pos).starts_with('!') {
                let w = self.immediate(self.pos)?;
                self.pos += 1;
                self.out.push(w);
                self.raw_rest()?;
                break;
            }
            self.operand(slot.kind, desc, start, &mut stack)?;
        }
        let count = self.out.len() - start;
        if count > 0xffff {
            return Err(self.err(
                op_index,
                format!("{name} has {count} words; the limit is 65535"),
            ));
        }
        self.out[start] = (count as u32) << 16 | u32::from(desc.opcode);
        self.record(desc, start, op_index)
    }

    /// Parses `!<n>` at word `i`.
    fn immediate(&self, i: usize) -> Result<u32> {
        let t = self.tok(i);
        literal::parse_u32(&t[1..])
            .ok_or_else(|| self.err(i, format!("Invalid immediate integer: {t}")))
    }

    /// Raw mode: words up to the next instruction, each an immediate, an id, a string or a
    /// 32-bit number.
    fn raw_rest(&mut self) -> Result<()> {
        while self.pos < self.toks.len() && !self.starts_instruction(self.pos) {
            let i = self.pos;
            let t = self.tok(i);
            if t.starts_with('!') {
                let w = self.immediate(i)?;
                self.out.push(w);
            } else if t.starts_with('%') {
                let id = self.id(i)?;
                self.out.push(id);
            } else {
                match literal::raw_word(self.tok_bytes(i)) {
                    Some(Literal::Str(s)) => encode_bytes(&s, &mut self.out),
                    Some(Literal::Word(w)) => self.out.push(w),
                    _ => return Err(self.err(i, format!("Invalid word following !<integer>: {t}"))),
                }
            }
            self.pos += 1;
        }
        Ok(())
    }

    /// The id for the `%name` at word `i`.
    fn id(&mut self, i: usize) -> Result<u32> {
        let t = self.tok(i);
        let Some(name) = t.strip_prefix('%') else {
            return Err(self.err(i, "Expected id to start with %."));
        };
        if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
            return Err(self.err(i, format!("Invalid ID {name}")));
        }
        if !self.preserved.is_empty()
            && let Some(n) = literal::parse_u32(name)
            && self.preserved.contains(&n)
        {
            self.bound = self.bound.max(n.wrapping_add(1));
            return Ok(n);
        }
        if let Some(&id) = self.names.get(name) {
            return Ok(id);
        }
        let mut id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        while self.preserved.contains(&id) {
            id = self.next_id;
            self.next_id = self.next_id.wrapping_add(1);
        }
        self.names.insert(name, id);
        self.bound = self.bound.max(id.wrapping_add(1));
        Ok(id)
    }

    /// Encodes the operand at the current word as `kind`; may push further expected operands.
    fn operand(
        &mut self,
        kind: OperandKind,
        desc: &'static InstructionDesc,
        start: usize,
        stack: &mut Vec<Slot>,
    ) -> Result<()> {
        let i = self.pos;
        let t = self.tok(i);
        let kdesc = grammar::operand_kind(kind);
        if kind == OperandKind::PairIdRefIdRef {
            // spirv-as reads `PairIdRefIdRef*` (OpPhi) as plain repeated ids: an odd count is
            // accepted.
            stack.push(Slot {
                kind: OperandKind::IdRef,
                quantifier: Quantifier::Variadic,
            });
            return Ok(());
        }
        if kdesc.category == OperandCategory::Composite {
            for &k in kdesc.bases.iter().rev() {
                stack.push(Slot {
                    kind: k,
                    quantifier: Quantifier::One,
                });
            }
            return Ok(());
        }
        self.pos += 1;
        let lit = |r: std::result::Result<(), String>| r.map_err(|m| self.err(i, m));
        match kind {
            OperandKind::IdResultType
            | OperandKind::IdRef
            | OperandKind::IdScope
            | OperandKind::IdMemorySemantics => {
                let id = self.id(i)?;
                self.out.push(id);
            }
            OperandKind::LiteralInteger if desc.opcode == op::Switch => {
                let selector = self.out.get(start + 1).copied().unwrap_or(0);
                let ty = self
                    .value_types
                    .get(selector)
                    .and_then(|t| self.types.get(t));
                let Some(TypeInfo::Int { width, signed }) = ty else {
                    return Err(self.err(
                        i,
                        "The selector operand for OpSwitch must be the result of an instruction that generates an \
                         integer scalar",
                    ));
                };
                let mut w = Vec::with_capacity(2);
                lit(literal::encode_int(t, width, signed, &mut w))?;
                self.out.extend_from_slice(&w);
            }
            OperandKind::LiteralInteger => {
                let mut w = Vec::with_capacity(1);
                lit(literal::encode_int(t, 32, false, &mut w))?;
                self.out.extend_from_slice(&w);
            }
            OperandKind::LiteralFloat => {
                let mut w = Vec::with_capacity(1);
                lit(literal::encode_float(t, FloatFormat::F32, &mut w))?;
                self.out.extend_from_slice(&w);
            }
            OperandKind::LiteralString => match literal::classify(self.tok_bytes(i)) {
                Some(Literal::Str(s)) => encode_bytes(&s, &mut self.out),
                Some(_) => {
                    return Err(self.err(
                        i,
                        format!("Expected literal string, found literal number '{t}'."),
                    ));
                }
                None => return Err(self.err(i, format!("Invalid literal string '{t}'."))),
            },
            OperandKind::LiteralContextDependentNumber => {
                let ty = self.out.get(start + 1).copied().unwrap_or(0);
                let what = &desc.name[2..];
                let mut w = Vec::with_capacity(2);
                match self.types.get(ty) {
                    Some(TypeInfo::Int { width, signed }) => {
                        lit(literal::encode_int(t, width, signed, &mut w))?
                    }
                    Some(TypeInfo::Float { width, encoding }) => {
                        let format = float_format(width, encoding).map_err(|m| self.err(i, m))?;
                        lit(literal::encode_float(t, format, &mut w))?;
                    }
                    _ => {
                        return Err(self.err(
                            i,
                            format!(
                                "Type for {what} must be a scalar floating point or integer type"
                            ),
                        ));
                    }
                }
                self.out.extend_from_slice(&w);
            }
            OperandKind::LiteralExtInstInteger => self.ext_inst(i, start, stack)?,
            OperandKind::LiteralSpecConstantOpInteger => {
                let d = grammar::instruction_by_name(&format!("Op{t}"))
                    .filter(|d| !t.starts_with("Op") && SPEC_CONSTANT_OPS.contains(&d.opcode));
                let Some(d) = d else {
                    return Err(self.err(i, format!("Invalid OpSpecConstantOp opcode '{t}'.")));
                };
                self.out.push(u32::from(d.opcode));
                let rest: Vec<OperandDesc> = d
                    .operands
                    .iter()
                    .copied()
                    .filter(|o| {
                        !matches!(o.kind, OperandKind::IdResult | OperandKind::IdResultType)
                    })
                    .collect();
                push_slots(stack, &rest);
            }
            _ => match kdesc.category {
                OperandCategory::ValueEnum => {
                    let Some(e) = enumerant_by_name(kind, t) else {
                        return Err(self.err(i, format!("Invalid {} '{t}'.", kdesc.name)));
                    };
                    self.out.push(e.value);
                    push_slots(stack, e.parameters);
                }
                OperandCategory::BitEnum => {
                    let mut value = 0u32;
                    for part in t.split('|') {
                        let Some(e) = enumerant_by_name(kind, part) else {
                            return Err(
                                self.err(i, format!("Invalid {} operand '{t}'.", kdesc.name))
                            );
                        };
                        value |= e.value;
                    }
                    self.out.push(value);
                    // Parameters follow in bit order, lowest bit first.
                    let mut params: Vec<OperandDesc> = Vec::new();
                    for bit in 0..32 {
                        if value & (1 << bit) != 0
                            && let Some(e) = grammar::enumerant(kind, 1 << bit)
                        {
                            params.extend_from_slice(e.parameters);
                        }
                    }
                    push_slots(stack, &params);
                }
                _ => {
                    return Err(self.err(
                        i,
                        format!("operand kind {} cannot be assembled", kdesc.name),
                    ));
                }
            },
        }
        Ok(())
    }

    /// The instruction operand of `OpExtInst` (and its relatives): a name, or a number for
    /// `NonSemantic.*` sets.
    fn ext_inst(&mut self, i: usize, start: usize, stack: &mut Vec<Slot>) -> Result<()> {
        let t = self.tok(i);
        let set_id = self.out.get(start + 3).copied().unwrap_or(0);
        let Some(set) = self.ext_sets.get(&set_id).copied() else {
            return Err(self.err(
                i,
                format!("Invalid extended instruction import Id {set_id}"),
            ));
        };
        let by_number = |asm: &mut Self, stack: &mut Vec<Slot>| -> Result<()> {
            let Some(n) = literal::parse_u32(t) else {
                return Err(asm.err(
                    i,
                    format!("Couldn't translate unknown extended instruction name '{t}' to unsigned integer."),
                ));
            };
            asm.out.push(n);
            stack.push(Slot {
                kind: OperandKind::IdRef,
                quantifier: Quantifier::Variadic,
            });
            Ok(())
        };
        match set {
            ExtSet::Grammar { desc, non_semantic } => {
                if let Some(e) = desc.instruction_by_name(t) {
                    self.out.push(e.opcode);
                    push_slots(stack, e.operands);
                    Ok(())
                } else if non_semantic {
                    by_number(self, stack)
                } else {
                    Err(self.err(i, format!("Invalid extended instruction name '{t}'.")))
                }
            }
            ExtSet::NoGrammar { non_semantic } => {
                if non_semantic && literal::parse_u32(t).is_some() {
                    by_number(self, stack)
                } else {
                    Err(self.err(
                        i,
                        format!("extended instruction '{t}': coopmat has no grammar for this extended instruction set"),
                    ))
                }
            }
            ExtSet::NonSemanticUnknown => by_number(self, stack),
        }
    }

    /// Remembers types, value types and extended instruction sets.
    fn record(
        &mut self,
        desc: &'static InstructionDesc,
        start: usize,
        op_index: usize,
    ) -> Result<()> {
        let words = &self.out[start..];
        let has_type = desc.has_result_type();
        let result = words.get(if has_type { 2 } else { 1 }).copied();
        let info = match desc.opcode {
            op::TypeInt => match (words.get(2), words.get(3)) {
                (Some(&width), Some(&signed)) => Some(TypeInfo::Int {
                    width,
                    signed: signed != 0,
                }),
                _ => Some(TypeInfo::Other),
            },
            op::TypeFloat => match words.get(2) {
                Some(&width) => {
                    let encoding = words.get(3).copied();
                    if let Some(e) = encoding
                        && let Some(expected) = encoding_width(e)
                        && expected != width
                    {
                        let name =
                            grammar::enumerant(OperandKind::FPEncoding, e).map_or("", |d| d.name);
                        return Err(self.err(
                            op_index,
                            format!(
                                "Invalid bit width {width} for floating point encoding {name}; expected {expected}"
                            ),
                        ));
                    }
                    Some(TypeInfo::Float { width, encoding })
                }
                None => Some(TypeInfo::Other),
            },
            _ if !has_type && desc.has_result() && desc.name.starts_with("OpType") => {
                Some(TypeInfo::Other)
            }
            _ => None,
        };
        if let (Some(info), Some(id)) = (info, result) {
            if self.types.get(id).is_some() {
                return Err(self.err(
                    op_index,
                    format!("Value {id} has already been used to generate a type"),
                ));
            }
            self.types.set(id, info);
        }
        if desc.opcode == op::ExtInstImport
            && let Some(id) = result
        {
            let name = decode_string(words.get(2..).unwrap_or(&[])).0;
            let Some(set) = classify_set(&name) else {
                return Err(self.err(
                    op_index,
                    format!("Invalid extended instruction import '{name}'"),
                ));
            };
            self.ext_sets.insert(id, set);
        }
        if has_type
            && desc.has_result()
            && let (Some(&ty), Some(&id)) = (words.get(1), words.get(2))
        {
            self.value_types.set(id, ty);
        }
        Ok(())
    }
}

/// The width an `OpTypeFloat` encoding requires.
fn encoding_width(encoding: u32) -> Option<u32> {
    Some(match encoding {
        fp_encoding::BFloat16KHR => 16,
        fp_encoding::Float8E4M3EXT | fp_encoding::Float8E5M2EXT => 8,
        fp_encoding::Float6E2M3EXT | fp_encoding::Float6E3M2EXT => 6,
        fp_encoding::Float4E2M1EXT => 4,
        fp_encoding::Float8UnsignedE8M0EXT | fp_encoding::MXInt8EXT => 8,
        _ => return None,
    })
}

/// The literal format of a float type.
fn float_format(width: u32, encoding: Option<u32>) -> std::result::Result<FloatFormat, String> {
    match (encoding, width) {
        (None, 16) => Ok(FloatFormat::F16),
        (None, 32) => Ok(FloatFormat::F32),
        (None, 64) => Ok(FloatFormat::F64),
        (None, w) => Err(format!("Unsupported {w}-bit float literals")),
        (Some(fp_encoding::BFloat16KHR), _) => Ok(FloatFormat::BF16),
        (Some(fp_encoding::Float8E4M3EXT), _) => Ok(FloatFormat::E4M3),
        (Some(fp_encoding::Float8E5M2EXT), _) => Ok(FloatFormat::E5M2),
        (Some(fp_encoding::Float6E2M3EXT), _) => Ok(FloatFormat::E2M3),
        (Some(fp_encoding::Float6E3M2EXT), _) => Ok(FloatFormat::E3M2),
        (Some(fp_encoding::Float4E2M1EXT), _) => Ok(FloatFormat::E2M1),
        (Some(fp_encoding::Float8UnsignedE8M0EXT), _) => Ok(FloatFormat::E8M0),
        (Some(fp_encoding::MXInt8EXT), _) => Ok(FloatFormat::MxInt8),
        (Some(e), _) => {
            let name = grammar::enumerant(OperandKind::FPEncoding, e).map_or("unknown", |d| d.name);
            Err(format!(
                "coopmat cannot assemble literals of floating point encoding {name}"
            ))
        }
    }
}

/// Classifies an `OpExtInstImport` name as `spirv-as` does.
fn classify_set(name: &str) -> Option<ExtSet> {
    let non_semantic = name.starts_with("NonSemantic.");
    if let Some(desc) = grammar::ext_inst_set(name) {
        return Some(ExtSet::Grammar { desc, non_semantic });
    }
    if name.starts_with("NonSemantic.ClspvReflection.")
        && let Some(desc) = grammar::EXT_INST_SETS
            .iter()
            .find(|s| s.name.starts_with("NonSemantic.ClspvReflection."))
    {
        return Some(ExtSet::Grammar { desc, non_semantic });
    }
    match name {
        "OpenCL.std"
        | "SPV_AMD_shader_explicit_vertex_parameter"
        | "SPV_AMD_shader_trinary_minmax"
        | "SPV_AMD_gcn_shader"
        | "SPV_AMD_shader_ballot"
        | "DebugInfo"
        | "OpenCL.DebugInfo.100"
        | "TOSA.001000.1"
        | "Arm.MotionEngine.100" => Some(ExtSet::NoGrammar {
            non_semantic: false,
        }),
        _ if name.starts_with("NonSemantic.VkspReflection.") => {
            Some(ExtSet::NoGrammar { non_semantic: true })
        }
        _ if non_semantic => Some(ExtSet::NonSemanticUnknown),
        _ => None,
    }
}

/// Encodes string bytes: a nul terminator and zero padding to a word.
fn encode_bytes(bytes: &[u8], out: &mut Vec<u32>) {
    for chunk in bytes.chunks(4) {
        let mut w = [0u8; 4];
        w[..chunk.len()].copy_from_slice(chunk);
        out.push(u32::from_le_bytes(w));
    }
    if bytes.len().is_multiple_of(4) {
        out.push(0);
    }
}
