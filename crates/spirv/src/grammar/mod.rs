//! SPIR-V grammar tables, generated from SPIRV-Headers' JSON by `cargo xtask grammar`.
//!
//! The tables describe every instruction (operands, kinds, quantifiers, requirements),
//! every operand kind with its enumerants and their parameters, and the embedded extended
//! instruction sets. Lookups accept every alias spelling and report the grammar's current name.

#[rustfmt::skip]
mod generated;

pub use generated::*;

use std::collections::HashMap;
use std::sync::OnceLock;

/// A SPIR-V version as (major, minor).
pub type Version = (u8, u8);

/// How often an operand may occur.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantifier {
    /// Exactly once.
    One,
    /// Zero or one time (`?`).
    Optional,
    /// Zero or more times (`*`).
    Variadic,
}

/// The category of an operand kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandCategory {
    /// A set of flag bits, each of which may carry parameters.
    BitEnum,
    /// One value from a list, which may carry parameters.
    ValueEnum,
    /// An `<id>`.
    Id,
    /// A literal number or string.
    Literal,
    /// A fixed sequence of other kinds (e.g. `PairLiteralIntegerIdRef`).
    Composite,
}

/// One operand slot of an instruction or enumerant.
#[derive(Clone, Copy, Debug)]
pub struct OperandDesc {
    /// Its kind.
    pub kind: OperandKind,
    /// Whether it is required, optional or repeated.
    pub quantifier: Quantifier,
    /// The grammar's descriptive name (may be empty).
    pub name: &'static str,
}

/// A core instruction.
#[derive(Debug)]
pub struct InstructionDesc {
    /// Current name, e.g. `OpCooperativeMatrixReduceEXT`.
    pub name: &'static str,
    /// Other accepted spellings, e.g. `OpCooperativeMatrixReduceNV`.
    pub aliases: &'static [&'static str],
    /// The opcode.
    pub opcode: u16,
    /// The grammar's instruction class (e.g. `Memory`).
    pub class: &'static str,
    /// Operand slots in order.
    pub operands: &'static [OperandDesc],
    /// Capabilities, any one of which enables the instruction.
    pub capabilities: &'static [&'static str],
    /// Extensions, any one of which enables the instruction.
    pub extensions: &'static [&'static str],
    /// First SPIR-V version that has it in core (`None`: only through extensions).
    pub version: Option<Version>,
    /// Last SPIR-V version that has it.
    pub last_version: Option<Version>,
    /// Provisional (not in a ratified spec).
    pub provisional: bool,
}

impl InstructionDesc {
    /// Whether the instruction has a result type operand.
    pub fn has_result_type(&self) -> bool {
        self.operands
            .first()
            .is_some_and(|o| o.kind == OperandKind::IdResultType)
    }

    /// Whether the instruction defines a result id.
    pub fn has_result(&self) -> bool {
        self.operands
            .iter()
            .take(2)
            .any(|o| o.kind == OperandKind::IdResult)
    }
}

/// One enumerant of a value or bit enum.
#[derive(Debug)]
pub struct EnumerantDesc {
    /// Current name.
    pub name: &'static str,
    /// Other accepted spellings.
    pub aliases: &'static [&'static str],
    /// Its value (a single bit for bit enums, or 0 for `None`).
    pub value: u32,
    /// Operands that follow when it is used.
    pub parameters: &'static [OperandDesc],
    /// Capabilities, any one of which enables it.
    pub capabilities: &'static [&'static str],
    /// Extensions, any one of which enables it.
    pub extensions: &'static [&'static str],
    /// First SPIR-V version that has it in core.
    pub version: Option<Version>,
    /// Last SPIR-V version that has it.
    pub last_version: Option<Version>,
    /// Provisional.
    pub provisional: bool,
}

/// An operand kind and its enumerants.
#[derive(Debug)]
pub struct OperandKindDesc {
    /// The kind.
    pub kind: OperandKind,
    /// Its grammar name.
    pub name: &'static str,
    /// Its category.
    pub category: OperandCategory,
    /// Enumerants of a value or bit enum.
    pub enumerants: &'static [EnumerantDesc],
    /// The parts of a composite kind.
    pub bases: &'static [OperandKind],
}

/// An instruction of an extended instruction set.
#[derive(Debug)]
pub struct ExtInstDesc {
    /// Name, e.g. `FMix`.
    pub name: &'static str,
    /// Instruction number within the set.
    pub opcode: u32,
    /// Operand slots (after the set and instruction number).
    pub operands: &'static [OperandDesc],
    /// Capabilities, any one of which enables it.
    pub capabilities: &'static [&'static str],
}

/// An extended instruction set.
#[derive(Debug)]
pub struct ExtInstSetDesc {
    /// Import name, e.g. `GLSL.std.450`.
    pub name: &'static str,
    /// Instructions sorted by number.
    pub instructions: &'static [ExtInstDesc],
}

impl ExtInstSetDesc {
    /// Finds an instruction by number.
    pub fn instruction(&self, opcode: u32) -> Option<&'static ExtInstDesc> {
        self.instructions
            .binary_search_by_key(&opcode, |i| i.opcode)
            .ok()
            .map(|i| &self.instructions[i])
    }

    /// Finds an instruction by name.
    pub fn instruction_by_name(&self, name: &str) -> Option<&'static ExtInstDesc> {
        self.instructions.iter().find(|i| i.name == name)
    }
}

/// Finds a core instruction by opcode.
pub fn instruction(opcode: u16) -> Option<&'static InstructionDesc> {
    INSTRUCTIONS
        .binary_search_by_key(&opcode, |i| i.opcode)
        .ok()
        .map(|i| &INSTRUCTIONS[i])
}

/// Finds a core instruction by its name or any alias (`OpCooperativeMatrixReduceNV` works).
pub fn instruction_by_name(name: &str) -> Option<&'static InstructionDesc> {
    static BY_NAME: OnceLock<HashMap<&'static str, &'static InstructionDesc>> = OnceLock::new();
    BY_NAME
        .get_or_init(|| {
            let mut map = HashMap::new();
            for inst in INSTRUCTIONS {
                map.insert(inst.name, inst);
                for alias in inst.aliases {
                    map.insert(*alias, inst);
                }
            }
            map
        })
        .get(name)
        .copied()
}

/// The description of an operand kind.
pub fn operand_kind(kind: OperandKind) -> &'static OperandKindDesc {
    &OPERAND_KINDS[kind as usize]
}

/// Finds an operand kind by grammar name.
pub fn operand_kind_by_name(name: &str) -> Option<&'static OperandKindDesc> {
    OPERAND_KINDS.iter().find(|k| k.name == name)
}

/// Finds the enumerant of `kind` with this exact value (for bit enums: a single bit, or 0).
pub fn enumerant(kind: OperandKind, value: u32) -> Option<&'static EnumerantDesc> {
    operand_kind(kind)
        .enumerants
        .iter()
        .find(|e| e.value == value)
}

/// Finds the enumerant of `kind` by name or alias.
pub fn enumerant_by_name(kind: OperandKind, name: &str) -> Option<&'static EnumerantDesc> {
    operand_kind(kind)
        .enumerants
        .iter()
        .find(|e| e.name == name || e.aliases.contains(&name))
}

/// Finds an embedded extended instruction set by import name.
pub fn ext_inst_set(name: &str) -> Option<&'static ExtInstSetDesc> {
    EXT_INST_SETS.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_are_sorted_and_unique() {
        assert!(INSTRUCTIONS.windows(2).all(|w| w[0].opcode < w[1].opcode));
    }

    #[test]
    fn operand_kind_table_is_indexed_by_discriminant() {
        for (i, k) in OPERAND_KINDS.iter().enumerate() {
            assert_eq!(k.kind as usize, i, "{}", k.name);
        }
    }

    #[test]
    fn aliases_resolve_to_current_names() {
        let nv = instruction_by_name("OpCooperativeMatrixReduceNV").unwrap();
        let ext = instruction_by_name("OpCooperativeMatrixReduceEXT").unwrap();
        assert_eq!(nv.opcode, ext.opcode);
        assert_eq!(nv.name, "OpCooperativeMatrixReduceEXT");
        assert_eq!(
            op::CooperativeMatrixReduceNV,
            op::CooperativeMatrixReduceEXT
        );
    }

    #[test]
    fn cooperative_family_is_present() {
        let load = instruction(op::CooperativeMatrixLoadTensorNV).unwrap();
        assert_eq!(
            load.operands.last().unwrap().kind,
            OperandKind::TensorAddressingOperands
        );
        let dv =
            enumerant_by_name(OperandKind::TensorAddressingOperands, "DecodeVectorFunc").unwrap();
        assert_eq!(dv.value, 4);
        assert_eq!(dv.parameters.len(), 1);
        assert_eq!(capability::CooperativeMatrixDecodeVectorNV, 5447);
        assert!(
            ext_inst_set("GLSL.std.450")
                .unwrap()
                .instruction(glsl_std_450::FMix)
                .is_some()
        );
    }
}
