//! The module IR the whole toolkit uses.
//!
//! A [`Module`] keeps the instructions in file order (so writing back is exact) and indexes
//! them: the logical section of each instruction, id -> defining instruction, names and
//! decorations by id, functions with their parameters and blocks, entry points, and (on
//! demand) def-use chains. Edits go through the instruction list followed by [`Module::reindex`].

use crate::binary::{self, Endian, Header, Instruction, ParseError, ParsedBinary};
use crate::grammar::{decoration, op};
use std::collections::HashMap;
use std::ops::Range;

/// The logical sections of a module (SPIR-V 2.4 "Logical Layout of a Module").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    /// OpCapability.
    Capability,
    /// OpExtension.
    Extension,
    /// OpExtInstImport.
    ExtInstImport,
    /// OpMemoryModel.
    MemoryModel,
    /// OpEntryPoint.
    EntryPoint,
    /// OpExecutionMode, OpExecutionModeId.
    ExecutionMode,
    /// OpString, OpSource, OpSourceExtension, OpSourceContinued.
    DebugSource,
    /// OpName, OpMemberName.
    DebugName,
    /// OpModuleProcessed.
    DebugModuleProcessed,
    /// Decorations.
    Annotation,
    /// Types, constants, global variables, OpUndef, OpLine and non-semantic instructions.
    Global,
    /// Function declarations and definitions.
    Function,
}

/// The section an opcode belongs to when it appears before the first function.
pub fn section_of(opcode: u16) -> Section {
    match opcode {
        op::Capability => Section::Capability,
        op::Extension => Section::Extension,
        op::ExtInstImport => Section::ExtInstImport,
        op::MemoryModel => Section::MemoryModel,
        op::EntryPoint => Section::EntryPoint,
        op::ExecutionMode | op::ExecutionModeId => Section::ExecutionMode,
        op::String | op::Source | op::SourceExtension | op::SourceContinued => Section::DebugSource,
        op::Name | op::MemberName => Section::DebugName,
        op::ModuleProcessed => Section::DebugModuleProcessed,
        op::Decorate
        | op::MemberDecorate
        | op::DecorationGroup
        | op::GroupDecorate
        | op::GroupMemberDecorate
        | op::DecorateId
        | op::DecorateString
        | op::MemberDecorateString => Section::Annotation,
        op::Function | op::FunctionParameter | op::FunctionEnd | op::Label => Section::Function,
        _ => Section::Global,
    }
}

/// A basic block: its OpLabel and the instructions after it, through its terminator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The label's id.
    pub id: u32,
    /// Index of the OpLabel instruction.
    pub label: usize,
    /// Indices of the instructions after the label, the terminator last.
    pub body: Range<usize>,
}

/// A function declaration or definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// The function's result id.
    pub id: u32,
    /// Index of OpFunction.
    pub def: usize,
    /// Indices of its OpFunctionParameter instructions.
    pub params: Vec<usize>,
    /// Its blocks in order (empty for a declaration).
    pub blocks: Vec<Block>,
    /// Index of OpFunctionEnd.
    pub end: usize,
}

/// A decoration applied to an id (or a struct member).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecorationRef {
    /// Index of the decorating instruction.
    pub inst: usize,
    /// The member index for OpMemberDecorate*.
    pub member: Option<u32>,
    /// The decoration value.
    pub decoration: u32,
    /// Index of the first operand after the decoration value.
    pub first_param: usize,
}

/// Why the IR could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModuleError {
    /// The binary is malformed.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The function structure is broken.
    #[error("word {offset}: {message}")]
    Structure {
        /// Word offset of the offending instruction.
        offset: usize,
        /// What is wrong.
        message: String,
    },
}

/// A SPIR-V module: instructions in order plus indexes over them.
#[derive(Clone, Debug)]
pub struct Module {
    /// The header.
    pub header: Header,
    /// The byte order the input had.
    pub endian: Endian,
    /// All instructions in file order.
    pub instructions: Vec<Instruction>,
    /// Parser diagnostics (unknown opcodes and enumerants).
    pub diagnostics: Vec<binary::Diagnostic>,
    sections: Vec<Section>,
    defs: HashMap<u32, usize>,
    names: HashMap<u32, usize>,
    member_names: HashMap<(u32, u32), usize>,
    decorations: HashMap<u32, Vec<DecorationRef>>,
    functions: Vec<Function>,
    function_by_id: HashMap<u32, usize>,
    /// Index of each instruction's function in `functions`, for function-section instructions.
    owner: Vec<Option<u32>>,
}

impl Module {
    /// Parses bytes (either byte order) and builds the IR.
    pub fn from_bytes(bytes: &[u8]) -> Result<Module, ModuleError> {
        Self::from_parsed(binary::parse_bytes(bytes)?)
    }

    /// Parses words (host order) and builds the IR.
    pub fn from_words(words: &[u32]) -> Result<Module, ModuleError> {
        Self::from_parsed(binary::parse_words(words)?)
    }

    /// Builds the IR over already parsed instructions.
    pub fn from_parsed(parsed: ParsedBinary) -> Result<Module, ModuleError> {
        let mut m = Module {
            header: parsed.header,
            endian: parsed.endian,
            instructions: parsed.instructions,
            diagnostics: parsed.diagnostics,
            sections: Vec::new(),
            defs: HashMap::new(),
            names: HashMap::new(),
            member_names: HashMap::new(),
            decorations: HashMap::new(),
            functions: Vec::new(),
            function_by_id: HashMap::new(),
            owner: Vec::new(),
        };
        m.reindex()?;
        Ok(m)
    }

    /// The module as words (header first); identical to the input when nothing was edited.
    pub fn to_words(&self) -> Vec<u32> {
        binary::write_words(&self.header, &self.instructions)
    }

    /// The module as bytes in the given byte order.
    pub fn to_bytes(&self, endian: Endian) -> Vec<u8> {
        binary::bytes_from_words(&self.to_words(), endian)
    }

    /// Rebuilds every index after the instruction list changed.
    pub fn reindex(&mut self) -> Result<(), ModuleError> {
        self.sections.clear();
        self.defs.clear();
        self.names.clear();
        self.member_names.clear();
        self.decorations.clear();
        self.functions.clear();
        self.function_by_id.clear();
        self.owner.clear();
        let mut in_functions = false;
        let mut current: Option<Function> = None;
        let mut block: Option<(u32, usize)> = None;
        for (i, inst) in self.instructions.iter().enumerate() {
            let structure = |message: String| ModuleError::Structure {
                offset: inst.offset,
                message,
            };
            if inst.opcode == op::Function {
                in_functions = true;
            }
            let section = if in_functions {
                Section::Function
            } else {
                section_of(inst.opcode)
            };
            self.sections.push(section);
            if let Some(id) = inst.result_id
                && self.defs.insert(id, i).is_some()
            {
                return Err(structure(format!("id %{id} is defined more than once")));
            }
            match inst.opcode {
                op::Name => {
                    if let Some(t) = inst.word(0) {
                        self.names.insert(t, i);
                    }
                }
                op::MemberName => {
                    if let (Some(t), Some(mem)) = (inst.word(0), inst.word(1)) {
                        self.member_names.insert((t, mem), i);
                    }
                }
                op::Decorate | op::DecorateId | op::DecorateString => {
                    if let (Some(t), Some(d)) = (inst.word(0), inst.word(1)) {
                        self.decorations.entry(t).or_default().push(DecorationRef {
                            inst: i,
                            member: None,
                            decoration: d,
                            first_param: 2,
                        });
                    }
                }
                op::MemberDecorate | op::MemberDecorateString => {
                    if let (Some(t), Some(mem), Some(d)) =
                        (inst.word(0), inst.word(1), inst.word(2))
                    {
                        self.decorations.entry(t).or_default().push(DecorationRef {
                            inst: i,
                            member: Some(mem),
                            decoration: d,
                            first_param: 3,
                        });
                    }
                }
                _ => {}
            }
            let mut owner = current.as_ref().map(|f| f.id);
            match inst.opcode {
                op::Function => {
                    if current.is_some() {
                        return Err(structure(
                            "OpFunction inside a function (missing OpFunctionEnd)".into(),
                        ));
                    }
                    let id = inst.result_id.unwrap_or(0);
                    owner = Some(id);
                    current = Some(Function {
                        id,
                        def: i,
                        params: Vec::new(),
                        blocks: Vec::new(),
                        end: i,
                    });
                }
                op::FunctionParameter => match current.as_mut() {
                    Some(f) if f.blocks.is_empty() && block.is_none() => f.params.push(i),
                    _ => {
                        return Err(structure(
                            "OpFunctionParameter outside a function header".into(),
                        ));
                    }
                },
                op::Label => {
                    if current.is_none() {
                        return Err(structure("OpLabel outside a function".into()));
                    }
                    if block.is_some() {
                        return Err(structure(
                            "OpLabel before the previous block's terminator".into(),
                        ));
                    }
                    block = Some((inst.result_id.unwrap_or(0), i));
                }
                op::FunctionEnd => {
                    let Some(mut f) = current.take() else {
                        return Err(structure("OpFunctionEnd outside a function".into()));
                    };
                    if block.is_some() {
                        return Err(structure(
                            "OpFunctionEnd inside a block (missing terminator)".into(),
                        ));
                    }
                    f.end = i;
                    self.function_by_id.insert(f.id, self.functions.len());
                    self.functions.push(f);
                }
                opcode if is_terminator(opcode) => match (block.take(), current.as_mut()) {
                    (Some((id, label)), Some(f)) => f.blocks.push(Block {
                        id,
                        label,
                        body: label + 1..i + 1,
                    }),
                    _ => return Err(structure("block terminator outside a block".into())),
                },
                _ => {
                    if in_functions
                        && current.is_some()
                        && block.is_none()
                        && !is_debug_line(inst.opcode)
                    {
                        let f = current
                            .as_ref()
                            .map(|f| !f.blocks.is_empty())
                            .unwrap_or(false);
                        if f {
                            return Err(structure(
                                "instruction between blocks (after a terminator, before OpLabel)"
                                    .into(),
                            ));
                        }
                    }
                }
            }
            self.owner.push(owner);
        }
        if let Some(f) = current {
            let offset = self.instructions[f.def].offset;
            return Err(ModuleError::Structure {
                offset,
                message: format!("function %{} has no OpFunctionEnd", f.id),
            });
        }
        Ok(())
    }

    /// The logical section of instruction `i`.
    pub fn section(&self, i: usize) -> Section {
        self.sections[i]
    }

    /// Index of the instruction defining `id`.
    pub fn def_index(&self, id: u32) -> Option<usize> {
        self.defs.get(&id).copied()
    }

    /// The instruction defining `id`.
    pub fn def(&self, id: u32) -> Option<&Instruction> {
        self.def_index(id).map(|i| &self.instructions[i])
    }

    /// The result type of the value `id`.
    pub fn type_of(&self, id: u32) -> Option<u32> {
        self.def(id).and_then(|i| i.result_type)
    }

    /// The OpName of `id`.
    pub fn name(&self, id: u32) -> Option<String> {
        self.names
            .get(&id)
            .and_then(|&i| self.instructions[i].string(1))
    }

    /// The OpMemberName of member `member` of struct `id`.
    pub fn member_name(&self, id: u32, member: u32) -> Option<String> {
        self.member_names
            .get(&(id, member))
            .and_then(|&i| self.instructions[i].string(2))
    }

    /// Every decoration of `id`, its members' included.
    pub fn decorations(&self, id: u32) -> &[DecorationRef] {
        self.decorations.get(&id).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The first parameter word of decoration `dec` on `id` (not on a member), if decorated.
    pub fn decoration_param(&self, id: u32, dec: u32) -> Option<Option<u32>> {
        self.decorations(id)
            .iter()
            .find(|d| d.member.is_none() && d.decoration == dec)
            .map(|d| self.instructions[d.inst].word(d.first_param))
    }

    /// Whether `id` carries decoration `dec`.
    pub fn has_decoration(&self, id: u32, dec: u32) -> bool {
        self.decoration_param(id, dec).is_some()
    }

    /// The first parameter of decoration `dec` on member `member` of struct `id`.
    pub fn member_decoration_param(&self, id: u32, member: u32, dec: u32) -> Option<Option<u32>> {
        self.decorations(id)
            .iter()
            .find(|d| d.member == Some(member) && d.decoration == dec)
            .map(|d| self.instructions[d.inst].word(d.first_param))
    }

    /// The `SpecId` of a specialization constant.
    pub fn spec_id(&self, id: u32) -> Option<u32> {
        self.decoration_param(id, decoration::SpecId).flatten()
    }

    /// All functions in order.
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }

    /// The function with result id `id`.
    pub fn function(&self, id: u32) -> Option<&Function> {
        self.function_by_id.get(&id).map(|&i| &self.functions[i])
    }

    /// The id of the function instruction `i` belongs to.
    pub fn owner(&self, i: usize) -> Option<u32> {
        self.owner.get(i).copied().flatten()
    }

    /// Instruction indices of one opcode, in order.
    pub fn find(&self, opcode: u16) -> impl Iterator<Item = usize> + '_ {
        self.instructions
            .iter()
            .enumerate()
            .filter(move |(_, i)| i.opcode == opcode)
            .map(|(n, _)| n)
    }

    /// OpEntryPoint instructions.
    pub fn entry_points(&self) -> impl Iterator<Item = &Instruction> + '_ {
        self.instructions
            .iter()
            .filter(|i| i.opcode == op::EntryPoint)
    }

    /// Declared capabilities.
    pub fn capabilities(&self) -> impl Iterator<Item = u32> + '_ {
        self.instructions
            .iter()
            .filter(|i| i.opcode == op::Capability)
            .filter_map(|i| i.word(0))
    }

    /// Declared extensions.
    pub fn extensions(&self) -> impl Iterator<Item = String> + '_ {
        self.instructions
            .iter()
            .filter(|i| i.opcode == op::Extension)
            .filter_map(|i| i.string(0))
    }

    /// The value of an integer OpConstant (up to 64 bits, zero-extended), or of a spec
    /// constant's default.
    pub fn constant_u64(&self, id: u32) -> Option<u64> {
        let inst = self.def(id)?;
        match inst.opcode {
            op::Constant | op::SpecConstant => {
                let words = inst.operand_words(2);
                Some(
                    words
                        .iter()
                        .rev()
                        .fold(0u64, |acc, &w| (acc << 32) | w as u64),
                )
            }
            op::ConstantNull => Some(0),
            op::ConstantTrue | op::SpecConstantTrue => Some(1),
            op::ConstantFalse | op::SpecConstantFalse => Some(0),
            _ => None,
        }
    }

    /// Computes def-use chains: for every id, the (instruction, operand) pairs that use it.
    pub fn def_use(&self) -> DefUse {
        let mut uses: HashMap<u32, Vec<(usize, u16)>> = HashMap::new();
        for (i, inst) in self.instructions.iter().enumerate() {
            for (n, o) in inst.operands.iter().enumerate() {
                if matches!(
                    o.kind,
                    Some(
                        crate::grammar::OperandKind::IdRef
                            | crate::grammar::OperandKind::IdResultType
                            | crate::grammar::OperandKind::IdScope
                            | crate::grammar::OperandKind::IdMemorySemantics
                    )
                ) {
                    uses.entry(inst.words[o.offset as usize])
                        .or_default()
                        .push((i, n as u16));
                }
            }
        }
        DefUse { uses }
    }
}

/// Def-use chains of a module (see [`Module::def_use`]).
#[derive(Clone, Debug, Default)]
pub struct DefUse {
    uses: HashMap<u32, Vec<(usize, u16)>>,
}

impl DefUse {
    /// The (instruction index, operand index) pairs that use `id`.
    pub fn uses(&self, id: u32) -> &[(usize, u16)] {
        self.uses.get(&id).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// Whether an opcode ends a block.
pub fn is_terminator(opcode: u16) -> bool {
    matches!(
        opcode,
        op::Branch
            | op::BranchConditional
            | op::Switch
            | op::Return
            | op::ReturnValue
            | op::Kill
            | op::Unreachable
            | op::TerminateInvocation
            | op::IgnoreIntersectionKHR
            | op::TerminateRayKHR
            | op::EmitMeshTasksEXT
    )
}

fn is_debug_line(opcode: u16) -> bool {
    matches!(
        opcode,
        op::Line | op::NoLine | op::ExtInst | op::ExtInstWithForwardRefsKHR
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::{MAGIC, encode_string};

    fn inst(opcode: u16, operands: &[u32]) -> Vec<u32> {
        let mut w = vec![((operands.len() as u32 + 1) << 16) | opcode as u32];
        w.extend_from_slice(operands);
        w
    }

    #[test]
    fn indexes_functions_names_and_decorations() {
        let mut w = vec![MAGIC, 0x0001_0600, 0, 10, 0];
        let mut name = vec![4];
        encode_string("main", &mut name);
        w.extend(inst(op::Capability, &[1]));
        w.extend(inst(op::Name, &name));
        w.extend(inst(op::Decorate, &[5, decoration::SpecId, 7]));
        w.extend(inst(op::TypeVoid, &[1]));
        w.extend(inst(op::TypeFunction, &[2, 1]));
        w.extend(inst(op::TypeInt, &[3, 32, 0]));
        w.extend(inst(op::SpecConstant, &[3, 5, 42]));
        w.extend(inst(op::Function, &[1, 4, 0, 2]));
        w.extend(inst(op::Label, &[6]));
        w.extend(inst(op::Return, &[]));
        w.extend(inst(op::FunctionEnd, &[]));
        let m = Module::from_words(&w).unwrap();
        assert_eq!(m.to_words(), w);
        assert_eq!(m.name(4).as_deref(), Some("main"));
        assert_eq!(m.spec_id(5), Some(7));
        assert_eq!(m.constant_u64(5), Some(42));
        let f = m.function(4).unwrap();
        assert_eq!(f.blocks.len(), 1);
        assert_eq!(f.blocks[0].id, 6);
        assert_eq!(m.section(0), Section::Capability);
        assert_eq!(m.section(7), Section::Function);
        assert_eq!(m.def_use().uses(3).len(), 1);
    }

    #[test]
    fn broken_structure_is_an_error() {
        let mut w = vec![MAGIC, 0x0001_0600, 0, 10, 0];
        w.extend(inst(op::TypeVoid, &[1]));
        w.extend(inst(op::TypeFunction, &[2, 1]));
        w.extend(inst(op::Function, &[1, 4, 0, 2]));
        w.extend(inst(op::Label, &[6]));
        assert!(matches!(
            Module::from_words(&w),
            Err(ModuleError::Structure { .. })
        ));
    }
}
