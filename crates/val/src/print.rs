//! Printing diagnostics: instructions as `coopmat_spirv::dis` (spirv-dis compatible, friendly
//! names) prints them, the rich report and spirv-val's one-line style.

use crate::ctx::Words;
use crate::{Diagnostic, Severity};
use coopmat_spirv::Module;
use coopmat_spirv::binary::{Instruction, NumberKind, decode_string};
use coopmat_spirv::grammar::{self, OperandCategory, OperandKind};

/// Formats an id as `%name` (OpName) or `%N`.
pub fn id_name(m: &Module, id: u32) -> String {
    let name = m
        .instructions
        .iter()
        .find(|i| i.opcode == coopmat_spirv::grammar::op::Name && i.w(0) == Some(id))
        .and_then(|i| i.s(1));
    match name {
        Some(n) if !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
            format!("%{n}")
        }
        _ => format!("%{id}"),
    }
}

/// Disassembles one instruction in spirv-dis style (`%r = OpFoo %type operands`).
pub fn instruction(m: &Module, inst: &Instruction) -> String {
    let name = crate::ctx::desc(inst.opcode)
        .map(|d| d.name.to_string())
        .unwrap_or_else(|| format!("Op{}", inst.opcode));
    let mut s = String::new();
    if let Some(r) = inst.result_id {
        s.push_str(&id_name(m, r));
        s.push_str(" = ");
    }
    s.push_str(&name);
    for (k, o) in inst.operands.iter().enumerate() {
        if Some(k)
            == inst
                .result_id
                .map(|_| if inst.result_type.is_some() { 1 } else { 0 })
        {
            continue;
        }
        let words = inst.ow(k);
        s.push(' ');
        s.push_str(&operand(m, o.kind, o.number, words));
    }
    s
}

fn operand(m: &Module, kind: Option<OperandKind>, number: NumberKind, words: &[u32]) -> String {
    let w0 = words.first().copied().unwrap_or(0);
    let Some(kind) = kind else {
        return words
            .iter()
            .map(|w| w.to_string())
            .collect::<Vec<_>>()
            .join(" ");
    };
    match kind {
        OperandKind::IdRef
        | OperandKind::IdResultType
        | OperandKind::IdScope
        | OperandKind::IdMemorySemantics
        | OperandKind::IdResult => id_name(m, w0),
        OperandKind::LiteralString => format!("{:?}", decode_string(words).0),
        _ => {
            let desc = grammar::operand_kind(kind);
            match desc.category {
                OperandCategory::ValueEnum => grammar::enumerant(kind, w0)
                    .map(|e| e.name.to_string())
                    .unwrap_or_else(|| w0.to_string()),
                OperandCategory::BitEnum => {
                    if w0 == 0 {
                        return grammar::enumerant(kind, 0)
                            .map(|e| e.name.to_string())
                            .unwrap_or_else(|| "None".into());
                    }
                    let mut parts = Vec::new();
                    for b in 0..32 {
                        let bit = 1u32 << b;
                        if w0 & bit != 0 {
                            parts.push(
                                grammar::enumerant(kind, bit)
                                    .map(|e| e.name.to_string())
                                    .unwrap_or_else(|| format!("0x{bit:x}")),
                            );
                        }
                    }
                    parts.join("|")
                }
                _ => match number {
                    NumberKind::Float(32) => f32::from_bits(w0).to_string(),
                    NumberKind::Float(64) if words.len() == 2 => {
                        f64::from_bits(((words[1] as u64) << 32) | w0 as u64).to_string()
                    }
                    NumberKind::Signed(w) if w <= 32 => {
                        ((w0 as i32) << (32 - w) >> (32 - w)).to_string()
                    }
                    _ if words.len() == 2 => (((words[1] as u64) << 32) | w0 as u64).to_string(),
                    _ => words
                        .iter()
                        .map(|w| w.to_string())
                        .collect::<Vec<_>>()
                        .join(" "),
                },
            }
        }
    }
}

/// The module disassembled once, one line per instruction (spirv-dis text, friendly names).
pub struct Listing {
    lines: Vec<String>,
}

impl Listing {
    /// Disassembles `m` with `coopmat_spirv::dis` (no header, no indentation).
    pub fn new(m: &Module) -> Listing {
        let bin = coopmat_spirv::binary::ParsedBinary {
            header: m.header,
            endian: m.endian,
            instructions: m.instructions.clone(),
            diagnostics: Vec::new(),
        };
        let opts = coopmat_spirv::dis::Options {
            header: false,
            indent: false,
            ..Default::default()
        };
        let lines = coopmat_spirv::dis::instruction_texts(&bin, &opts);
        Listing { lines }
    }

    /// The text of instruction `i`.
    pub fn line(&self, i: usize) -> &str {
        self.lines.get(i).map(String::as_str).unwrap_or("")
    }
}

/// Where an instruction sits: `function %f, block %b` (or the module section).
pub fn location(m: &Module, i: usize) -> String {
    let Some(f) = m.owner(i) else {
        return "module scope".into();
    };
    let block = m.function(f).and_then(|func| {
        func.blocks
            .iter()
            .find(|b| b.label == i || b.body.contains(&i))
            .map(|b| b.id)
    });
    match block {
        Some(b) => format!("function {}, block {}", id_name(m, f), id_name(m, b)),
        None => format!("function {}", id_name(m, f)),
    }
}

/// The rich report of one diagnostic: rule, spec reference, instruction, location, related notes.
pub fn rich(m: &Module, listing: &Listing, d: &Diagnostic, file: &str) -> String {
    let mut s = format!("{}[{}]: {}\n", d.severity.as_str(), d.rule.id, d.message);
    match d.inst {
        Some(i) if i < m.instructions.len() => {
            s.push_str(&format!(
                "  --> {file}: instruction {} ({})\n",
                i + 1,
                location(m, i)
            ));
            s.push_str(&format!("   |  {}\n", listing.line(i)));
        }
        _ => s.push_str(&format!("  --> {file}\n")),
    }
    for (r, note) in &d.related {
        if *r < m.instructions.len() {
            s.push_str(&format!(
                "  note: {note}: instruction {} ({})\n   |  {}\n",
                r + 1,
                location(m, *r),
                listing.line(*r)
            ));
        }
    }
    s.push_str(&format!("  = spec: {}\n", d.rule.spec));
    s
}

/// spirv-val's style: `error: line N: message` followed by the disassembled instruction.
pub fn spirv_val_style(m: &Module, listing: &Listing, d: &Diagnostic) -> String {
    let line = d.inst.map(|i| i + 1).unwrap_or(0);
    let mut s = format!(
        "{}: line {line}: {} [{}]\n",
        d.severity.as_str(),
        d.message,
        d.rule.id
    );
    if let Some(i) = d.inst.filter(|&i| i < m.instructions.len()) {
        s.push_str(&format!("  {}\n", listing.line(i)));
    }
    s
}

/// Counts errors and warnings.
pub fn counts(diags: &[Diagnostic]) -> (usize, usize) {
    let e = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    (e, diags.len() - e)
}
