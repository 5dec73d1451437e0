//! Printing diagnostics: instructions as `coopmat_spirv::dis` (spirv-dis compatible, friendly
//! names) prints them, the rich report and spirv-val's one-line style.

use crate::ctx::Words;
use crate::{Diagnostic, Severity};
use coopmat_spirv::Module;

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

/// The module disassembled once, one line per instruction (spirv-dis text, friendly names).
pub struct Listing {
    lines: Vec<String>,
}

impl Listing {
    /// Disassembles `m` with `coopmat_spirv::dis` (no header, no indentation).
    pub fn new(m: &Module) -> Listing {
        Listing {
            lines: coopmat_spirv::dis::instruction_texts(m),
        }
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
