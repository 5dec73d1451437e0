//! Per-id tables built in one pass over the module, shared by every check.

use crate::rules::Rule;
use crate::{Diagnostic, Severity, ValidateOptions};
use coopmat_spirv::Module;
use coopmat_spirv::grammar::{self, op};
use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::OnceLock;

/// The shape of a type id: the SPIR-V core's shared type view.
pub(crate) use coopmat_spirv::types::Type as Ty;

/// What an id is as a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Konst {
    /// Not a constant instruction.
    None,
    /// A scalar OpConstant / OpConstantTrue / OpConstantFalse / OpConstantNull with its value.
    Value(u64),
    /// A scalar spec constant with its default value.
    Spec(u64),
    /// A composite constant, OpSpecConstantOp or other constant instruction.
    Other,
}

/// The validation context: the module, the options, per-id tables and the findings.
pub(crate) struct Ctx<'m> {
    pub m: &'m Module,
    pub opts: &'m ValidateOptions,
    /// Instruction index of each id's definition (`NONE` when undefined).
    pub def: Vec<u32>,
    /// Each type id's shape.
    pub ty: Vec<Ty>,
    /// Each value id's result type (0 when none).
    pub vty: Vec<u32>,
    /// Constant values.
    pub konst: Vec<Konst>,
    /// Declared capabilities, implicit ones included.
    pub caps: FxSet<u32>,
    /// Declared extensions.
    pub exts: HashSet<String>,
    /// OpName instruction of each named id.
    pub names: FxMap<u32, usize>,
    /// The disassembler's friendly names, computed when a message first needs one.
    friendly: std::cell::OnceCell<coopmat_spirv::dis::FriendlyNames>,
    /// Findings (interior mutability so checks can report while holding shared borrows).
    pub diags: RefCell<Vec<Diagnostic>>,
    /// Set when the structure is too broken for the later checks (ids out of bound).
    pub fatal: bool,
}

/// The grammar description of an opcode: an O(1) table lookup (the grammar's own lookup is a
/// binary search, too slow to repeat for every instruction of a large corpus).
pub(crate) fn desc(opcode: u16) -> Option<&'static grammar::InstructionDesc> {
    static TABLE: OnceLock<Vec<Option<&'static grammar::InstructionDesc>>> = OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let max = grammar::INSTRUCTIONS
            .iter()
            .map(|d| d.opcode)
            .max()
            .unwrap_or(0) as usize;
        let mut v = vec![None; max + 1];
        for d in grammar::INSTRUCTIONS {
            v[d.opcode as usize] = Some(d);
        }
        v
    });
    t.get(opcode as usize).copied().flatten()
}

/// Bounds-checked operand access: a malformed binary may leave an operand whose words run past
/// the instruction, and validation must not panic on it.
pub(crate) trait Words {
    /// The first word of operand `k`.
    fn w(&self, k: usize) -> Option<u32>;
    /// All words of operand `k` (empty when out of range).
    fn ow(&self, k: usize) -> &[u32];
    /// Operand `k` as a literal string.
    fn s(&self, k: usize) -> Option<String>;
    /// The word at operand-table offset `o`.
    fn at(&self, o: &coopmat_spirv::binary::ParsedOperand) -> u32;
}

impl Words for coopmat_spirv::binary::Instruction {
    fn w(&self, k: usize) -> Option<u32> {
        self.operands
            .get(k)
            .and_then(|o| self.words.get(o.offset as usize).copied())
    }
    fn ow(&self, k: usize) -> &[u32] {
        self.operands
            .get(k)
            .and_then(|o| {
                self.words
                    .get(o.offset as usize..(o.offset as usize + o.num_words as usize))
            })
            .unwrap_or(&[])
    }
    fn s(&self, k: usize) -> Option<String> {
        self.operands
            .get(k)
            .map(|_| coopmat_spirv::binary::decode_string(self.ow(k)).0)
    }
    fn at(&self, o: &coopmat_spirv::binary::ParsedOperand) -> u32 {
        self.words.get(o.offset as usize).copied().unwrap_or(0)
    }
}

/// HashMap with rustc's Fx hash (fast for the validator's small integer keys).
pub(crate) type FxMap<K, V> = rustc_hash::FxHashMap<K, V>;
/// HashSet with rustc's Fx hash.
pub(crate) type FxSet<K> = rustc_hash::FxHashSet<K>;

/// Marks an id without a definition.
pub(crate) const NONE: u32 = u32::MAX;
/// Ids above this are rejected (SPIR-V 2.17 universal limit on the id bound).
pub(crate) const MAX_BOUND: u32 = 0x3F_FFFF;

impl<'m> Ctx<'m> {
    pub fn new(m: &'m Module, opts: &'m ValidateOptions) -> Ctx<'m> {
        let bound = m.header.bound.min(MAX_BOUND + 1) as usize;
        let mut cx = Ctx {
            m,
            opts,
            def: vec![NONE; bound],
            ty: vec![Ty::None; bound],
            vty: vec![0; bound],
            konst: vec![Konst::None; bound],
            caps: FxSet::default(),
            exts: HashSet::new(),
            names: FxMap::default(),
            friendly: std::cell::OnceCell::new(),
            diags: RefCell::new(Vec::new()),
            fatal: false,
        };
        cx.build();
        cx
    }

    fn build(&mut self) {
        let m = self.m;
        for (i, inst) in m.instructions.iter().enumerate() {
            match inst.opcode {
                op::Capability => {
                    if let Some(c) = inst.w(0) {
                        add_capability(&mut self.caps, c);
                    }
                }
                op::Name => {
                    if let Some(t) = inst.w(0) {
                        self.names.insert(t, i);
                    }
                }
                op::Extension => {
                    if let Some(s) = inst.s(0) {
                        self.exts.insert(s);
                    }
                }
                _ => {}
            }
            let Some(id) = inst.result_id else { continue };
            let Some(slot) = self.def.get_mut(id as usize) else {
                continue;
            };
            *slot = i as u32;
            if let Some(t) = inst.result_type {
                self.vty[id as usize] = t;
            }
            let ty = Ty::decode(inst);
            self.ty[id as usize] = ty;
            let k = match inst.opcode {
                op::Constant => {
                    let words = inst.ow(2);
                    if words.len() <= 2 {
                        Konst::Value(fold(words))
                    } else {
                        Konst::Other
                    }
                }
                op::ConstantTrue => Konst::Value(1),
                op::ConstantFalse | op::ConstantNull => Konst::Value(0),
                op::SpecConstant => Konst::Spec(fold(inst.ow(2))),
                op::SpecConstantTrue => Konst::Spec(1),
                op::SpecConstantFalse => Konst::Spec(0),
                op::ConstantComposite
                | op::SpecConstantComposite
                | op::SpecConstantOp
                | op::ConstantCompositeReplicateEXT
                | op::SpecConstantCompositeReplicateEXT
                | op::ConstantSampler => Konst::Other,
                _ => Konst::None,
            };
            self.konst[id as usize] = k;
        }
    }

    /// The shape of type `id`.
    pub fn ty(&self, id: u32) -> Ty {
        self.ty.get(id as usize).copied().unwrap_or(Ty::None)
    }

    /// The result type of value `id` (0 when none).
    pub fn vty(&self, id: u32) -> u32 {
        self.vty.get(id as usize).copied().unwrap_or(0)
    }

    /// The instruction index defining `id`.
    pub fn def(&self, id: u32) -> Option<usize> {
        self.def
            .get(id as usize)
            .copied()
            .filter(|&d| d != NONE)
            .map(|d| d as usize)
    }

    /// The opcode defining `id` (0 when undefined).
    pub fn def_op(&self, id: u32) -> u16 {
        self.def(id)
            .map(|i| self.m.instructions[i].opcode)
            .unwrap_or(0)
    }

    /// Constant kind of `id`.
    pub fn konst(&self, id: u32) -> Konst {
        self.konst.get(id as usize).copied().unwrap_or(Konst::None)
    }

    /// The value of a non-specialization scalar constant.
    pub fn const_value(&self, id: u32) -> Option<u64> {
        match self.konst(id) {
            Konst::Value(v) => Some(v),
            _ => None,
        }
    }

    /// The value of a scalar constant, a spec constant's default included.
    pub fn const_or_default(&self, id: u32) -> Option<u64> {
        match self.konst(id) {
            Konst::Value(v) | Konst::Spec(v) => Some(v),
            _ => None,
        }
    }

    /// Whether `id` is the result of a constant instruction (spec constants included).
    pub fn is_constant(&self, id: u32) -> bool {
        self.konst(id) != Konst::None
    }

    /// Whether `ty` is a scalar integer of 32 bits.
    pub fn is_int32(&self, ty: u32) -> bool {
        matches!(self.ty(ty), Ty::Int { width: 32, .. })
    }

    /// Whether value `id` has a scalar 32-bit integer type.
    pub fn is_int32_value(&self, id: u32) -> bool {
        self.is_int32(self.vty(id))
    }

    /// Whether `ty` is a scalar integer type.
    pub fn is_int(&self, ty: u32) -> bool {
        matches!(self.ty(ty), Ty::Int { .. })
    }

    /// Whether `ty` is a scalar numerical type.
    pub fn is_numerical(&self, ty: u32) -> bool {
        matches!(self.ty(ty), Ty::Int { .. } | Ty::Float { .. })
    }

    /// Bit width of a scalar type.
    pub fn width(&self, ty: u32) -> Option<u32> {
        match self.ty(ty) {
            Ty::Int { width, .. } | Ty::Float { width, .. } => Some(width),
            Ty::Bool => Some(32),
            _ => None,
        }
    }

    /// Whether the capability is declared (directly or implicitly).
    pub fn has_cap(&self, cap: u32) -> bool {
        self.caps.contains(&cap)
    }

    /// Records an error.
    pub fn err(&self, rule: &'static Rule, inst: usize, msg: impl Into<String>) -> DiagRef<'_> {
        self.push(rule, Severity::Error, Some(inst), msg.into())
    }

    /// Records a warning.
    #[allow(dead_code)]
    pub fn warn(&self, rule: &'static Rule, inst: usize, msg: impl Into<String>) -> DiagRef<'_> {
        self.push(rule, Severity::Warning, Some(inst), msg.into())
    }

    /// Records an error about the module as a whole.
    pub fn err_module(&self, rule: &'static Rule, msg: impl Into<String>) -> DiagRef<'_> {
        self.push(rule, Severity::Error, None, msg.into())
    }

    fn push(
        &self,
        rule: &'static Rule,
        severity: Severity,
        inst: Option<usize>,
        message: String,
    ) -> DiagRef<'_> {
        let mut diags = self.diags.borrow_mut();
        diags.push(Diagnostic {
            rule,
            severity,
            message,
            inst,
            related: Vec::new(),
        });
        DiagRef {
            diags: &self.diags,
            index: diags.len() - 1,
            def: &self.def,
        }
    }

    /// An id's name in messages: the friendly name `spirv-dis` prints (`%main`, `%uint`,
    /// `%_ptr_StorageBuffer_float`, ...), else `%N`.
    pub fn name(&self, id: u32) -> String {
        let names = self.friendly.get_or_init(|| {
            coopmat_spirv::dis::FriendlyNames::from_instructions(
                self.m.header.bound,
                &self.m.instructions,
            )
        });
        format!("%{}", names.name(id))
    }
}

/// A just-recorded diagnostic, to attach related instructions to.
pub(crate) struct DiagRef<'a> {
    diags: &'a RefCell<Vec<Diagnostic>>,
    index: usize,
    def: &'a [u32],
}

impl DiagRef<'_> {
    /// Adds the instruction defining `id` as related (skipped when undefined).
    pub fn rel_id(self, id: u32, note: impl Into<String>) -> Self {
        if let Some(&d) = self.def.get(id as usize)
            && d != NONE
        {
            self.diags.borrow_mut()[self.index]
                .related
                .push((d as usize, note.into()));
        }
        self
    }

    /// Adds instruction `inst` as related.
    pub fn at(self, inst: usize, note: impl Into<String>) -> Self {
        self.diags.borrow_mut()[self.index]
            .related
            .push((inst, note.into()));
        self
    }
}

fn fold(words: &[u32]) -> u64 {
    words
        .iter()
        .rev()
        .fold(0u64, |acc, &w| (acc << 32) | w as u64)
}

/// Adds a capability and, transitively, the ones it implicitly declares (the grammar's
/// "capabilities" list of a Capability enumerant; SPIR-V 3.31 "Implicitly Declares").
pub(crate) fn add_capability(caps: &mut FxSet<u32>, cap: u32) {
    if !caps.insert(cap) {
        return;
    }
    if let Some(e) = grammar::enumerant(grammar::OperandKind::Capability, cap) {
        for name in e.capabilities {
            if let Some(d) = grammar::enumerant_by_name(grammar::OperandKind::Capability, name) {
                add_capability(caps, d.value);
            }
        }
    }
}
