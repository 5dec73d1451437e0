//! Coverage of the cooperative-matrix family by the hand-written files in `tests/spvasm/coop/`.
//!
//! The lists come from the grammar, so a grammar update that adds an instruction, alias or
//! enumerant makes this test fail until a `.spvasm` file uses it:
//! - capabilities whose `extensions` name one of the extensions below (and their aliases);
//! - instructions whose `extensions` or `capabilities` name one of those (and their aliases);
//! - every enumerant of every enum kind those instructions take as operands (masks included:
//!   each bit must occur in an assembled operand of that kind);
//! - the kinds the specs pass as constant `<id>`s (layout, use, clamp mode, component type):
//!   the grammar does not tie them to instructions, so they are named here; each enumerant must
//!   be defined as `%<Enumerant> = OpConstant %<type> <value>` with the grammar's value.

use coopmat_spirv::asm::{AsmOptions, assemble};
use coopmat_spirv::binary::parse_words;
use coopmat_spirv::grammar::{self, OperandCategory, OperandKind};
use std::collections::{BTreeSet, HashSet};

const EXTENSIONS: &[&str] = &[
    "SPV_NV_cooperative_matrix",
    "SPV_KHR_cooperative_matrix",
    "SPV_NV_cooperative_matrix2",
    "SPV_NV_tensor_addressing",
    "SPV_NV_cooperative_matrix_decode_vector",
    "SPV_QCOM_cooperative_matrix_conversion",
    "SPV_NV_cooperative_vector",
];

/// Enum kinds whose values the specs pass as constant ids.
const ID_CONSTANT_KINDS: &[OperandKind] = &[
    OperandKind::CooperativeMatrixLayout,
    OperandKind::CooperativeMatrixUse,
    OperandKind::TensorClampMode,
    OperandKind::CooperativeVectorMatrixLayout,
    OperandKind::ComponentType,
];

struct Files {
    /// All text, comments stripped, as whitespace-separated words.
    words: HashSet<String>,
    /// Lines of all files.
    lines: Vec<String>,
    /// Opcodes in the assembled binaries.
    opcodes: HashSet<u16>,
    /// (kind, value) of every enum operand in the binaries (masks: every set bit; 0 too).
    enum_values: HashSet<(OperandKind, u32)>,
}

fn load() -> Files {
    let dir = coopmat_testkit::repo_root().join("tests/spvasm/coop");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "spvasm"))
        .collect();
    paths.sort();
    let mut f = Files {
        words: HashSet::new(),
        lines: Vec::new(),
        opcodes: HashSet::new(),
        enum_values: HashSet::new(),
    };
    for p in paths {
        let text = std::fs::read_to_string(&p).unwrap();
        for line in text.lines() {
            let code = line.split(';').next().unwrap_or("");
            f.words.extend(code.split_whitespace().map(str::to_string));
            f.lines.push(code.trim().to_string());
        }
        let words = assemble(&text, &AsmOptions::default())
            .unwrap_or_else(|e| panic!("{}", e.render(&p.display().to_string(), &text)));
        let parsed = parse_words(&words).unwrap();
        for inst in &parsed.instructions {
            f.opcodes.insert(inst.opcode);
            for (i, o) in inst.operands.iter().enumerate() {
                let Some(kind) = o.kind else { continue };
                let value = inst.operand_words(i)[0];
                match grammar::operand_kind(kind).category {
                    OperandCategory::ValueEnum => {
                        f.enum_values.insert((kind, value));
                    }
                    OperandCategory::BitEnum => {
                        f.enum_values.insert((kind, 0));
                        for bit in 0..32 {
                            if value & (1 << bit) != 0 {
                                f.enum_values.insert((kind, 1 << bit));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    f
}

fn family_capabilities() -> Vec<&'static grammar::EnumerantDesc> {
    grammar::operand_kind(OperandKind::Capability)
        .enumerants
        .iter()
        .filter(|e| e.extensions.iter().any(|x| EXTENSIONS.contains(x)))
        .collect()
}

fn family_instructions() -> Vec<&'static grammar::InstructionDesc> {
    let caps: HashSet<&str> = family_capabilities()
        .iter()
        .flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()))
        .collect();
    grammar::INSTRUCTIONS
        .iter()
        .filter(|i| {
            i.extensions.iter().any(|x| EXTENSIONS.contains(x))
                || i.capabilities.iter().any(|c| caps.contains(c))
        })
        .collect()
}

#[test]
fn every_family_capability_extension_and_instruction_is_used() {
    let f = load();
    let mut missing = BTreeSet::new();
    for ext in EXTENSIONS {
        if !f.words.contains(&format!("\"{ext}\"")) {
            missing.insert(format!("OpExtension \"{ext}\""));
        }
    }
    let caps = family_capabilities();
    assert!(
        caps.len() >= 12,
        "grammar lists only {} family capabilities",
        caps.len()
    );
    for cap in caps {
        for name in std::iter::once(cap.name).chain(cap.aliases.iter().copied()) {
            if !f.lines.iter().any(|l| l == &format!("OpCapability {name}")) {
                missing.insert(format!("OpCapability {name}"));
            }
        }
    }
    let insts = family_instructions();
    assert!(
        insts.len() >= 35,
        "grammar lists only {} family instructions",
        insts.len()
    );
    for inst in insts {
        if !f.opcodes.contains(&inst.opcode) {
            missing.insert(format!("{} (opcode {})", inst.name, inst.opcode));
        }
        for name in std::iter::once(inst.name).chain(inst.aliases.iter().copied()) {
            if !f.words.contains(name) {
                missing.insert(format!("spelling {name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not covered by tests/spvasm/coop: {missing:#?}"
    );
}

#[test]
fn every_enumerant_of_family_operand_kinds_is_used() {
    let f = load();
    let mut kinds = BTreeSet::new();
    for inst in family_instructions() {
        for o in inst.operands {
            if matches!(
                grammar::operand_kind(o.kind).category,
                OperandCategory::ValueEnum | OperandCategory::BitEnum
            ) {
                kinds.insert(o.kind);
            }
        }
    }
    assert!(kinds.contains(&OperandKind::TensorAddressingOperands));
    let mut missing = BTreeSet::new();
    for kind in &kinds {
        for e in grammar::operand_kind(*kind).enumerants {
            if !f.enum_values.contains(&(*kind, e.value)) {
                missing.insert(format!("{kind:?} {} ({:#x})", e.name, e.value));
            }
            for name in std::iter::once(e.name).chain(e.aliases.iter().copied()) {
                // Every spelling appears in some mask or value operand.
                let used = f
                    .words
                    .iter()
                    .any(|w| w.split('|').any(|part| part == name));
                if !used {
                    missing.insert(format!("{kind:?} spelling {name}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not covered by tests/spvasm/coop: {missing:#?}"
    );
}

#[test]
fn every_id_constant_enumerant_is_defined_with_its_value() {
    let f = load();
    let mut missing = BTreeSet::new();
    for kind in ID_CONSTANT_KINDS {
        for e in grammar::operand_kind(*kind).enumerants {
            let prefix = format!("%{} = OpConstant %", e.name);
            let ok = f.lines.iter().any(|l| {
                l.strip_prefix(&prefix).is_some_and(|rest| {
                    rest.split_whitespace()
                        .nth(1)
                        .and_then(|v| v.parse::<u32>().ok())
                        == Some(e.value)
                })
            });
            if !ok {
                missing.insert(format!("%{} = OpConstant %uint {}", e.name, e.value));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not covered by tests/spvasm/coop: {missing:#?}"
    );
}
