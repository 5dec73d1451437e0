//! What the analysis knows of memory: each pointer's possible variables (through access chains,
//! copies and function parameters), each variable's storage class, built-in and whether anything
//! writes it, and the workgroup size.

use crate::{Level, SourceKind, arg_ids};
use coopmat_spirv::Instruction;
use coopmat_spirv::Module;
use coopmat_spirv::grammar::{built_in, decoration, execution_mode, op, storage_class};
use coopmat_spirv::types::{Dim, Type};
use rustc_hash::{FxHashMap, FxHashSet};

/// The variables a pointer may point into.
pub(crate) enum Root {
    /// One of these OpVariables.
    Vars(Vec<u32>),
    /// Unknown (a pointer loaded from memory, converted from an integer, ...), in this class.
    Unknown(u32),
}

/// Memory facts of a module.
pub(crate) struct Memory {
    class: FxHashMap<u32, u32>,
    builtin: FxHashMap<u32, u32>,
    written: FxHashSet<u32>,
    /// Storage classes written through pointers of unknown origin.
    written_classes: FxHashSet<u32>,
    non_writable: FxHashSet<u32>,
    /// Extended instruction set imports whose name starts with `NonSemantic.`.
    non_semantic_sets: FxHashSet<u32>,
    /// Per function id: for each pointer parameter, the variables its arguments may point to
    /// (None: unknown).
    param_roots: FxHashMap<u32, Option<Vec<u32>>>,
    /// The workgroup size per dimension where it is a plain constant.
    pub local_size: [Option<u64>; 3],
}

/// Whether a storage class holds per-invocation memory that the analysis tracks per variable.
pub(crate) fn is_private(class: u32) -> bool {
    matches!(class, storage_class::Function | storage_class::Private)
}

/// The level of a load from a storage class at a uniform address; None for Input memory.
/// Read-only memory gives one value for the whole dispatch; memory that invocations may write
/// gives, in a race-free program, one value per workgroup at most.
pub(crate) fn class_level(class: u32, read_only: bool) -> Option<(Level, SourceKind)> {
    let shared = |l| Some((l, SourceKind::SharedMemory));
    match class {
        storage_class::UniformConstant | storage_class::PushConstant => shared(Level::Uniform),
        storage_class::Uniform
        | storage_class::StorageBuffer
        | storage_class::PhysicalStorageBuffer => shared(if read_only {
            Level::Uniform
        } else {
            Level::Workgroup
        }),
        storage_class::Workgroup => shared(Level::Workgroup),
        storage_class::Input => None,
        _ => Some((Level::Divergent, SourceKind::UnknownMemory)),
    }
}

impl Memory {
    pub fn new(m: &Module) -> Memory {
        let mut mem = Memory {
            class: FxHashMap::default(),
            builtin: FxHashMap::default(),
            written: FxHashSet::default(),
            written_classes: FxHashSet::default(),
            non_writable: FxHashSet::default(),
            non_semantic_sets: m
                .instructions
                .iter()
                .filter(|i| {
                    i.opcode == op::ExtInstImport
                        && i.string(1).is_some_and(|n| n.starts_with("NonSemantic."))
                })
                .filter_map(|i| i.result_id)
                .collect(),
            param_roots: FxHashMap::default(),
            local_size: [None; 3],
        };
        for inst in &m.instructions {
            if inst.opcode == op::Variable
                && let (Some(id), Some(sc)) = (inst.result_id, inst.word(2))
            {
                mem.class.insert(id, sc);
                if let Some(Some(b)) = m.decoration_param(id, decoration::BuiltIn) {
                    mem.builtin.insert(id, b);
                }
                if m.has_decoration(id, decoration::NonWritable) || block_read_only(m, inst) {
                    mem.non_writable.insert(id);
                }
            }
        }
        mem.local_size = local_size(m);
        // Parameter roots: the union over call sites, to a fixed point (calls may pass
        // parameters on).
        loop {
            let mut changed = false;
            for inst in &m.instructions {
                if inst.opcode != op::FunctionCall {
                    continue;
                }
                let a = inst.first_arg();
                let Some(callee) = inst.word(a).and_then(|f| m.function(f)) else {
                    continue;
                };
                for (k, &p) in callee.params.iter().enumerate() {
                    let Some(arg) = inst.word(a + 1 + k) else {
                        break;
                    };
                    let pid = m.instructions[p].result_id.unwrap_or(0);
                    if !is_pointer(m, pid) {
                        continue;
                    }
                    let new = match mem.roots(m, arg) {
                        Root::Vars(v) => Some(v),
                        Root::Unknown(_) => None,
                    };
                    let entry = mem
                        .param_roots
                        .entry(pid)
                        .or_insert_with(|| Some(Vec::new()));
                    match (entry.as_mut(), new) {
                        (Some(cur), Some(v)) => {
                            for x in v {
                                if !cur.contains(&x) {
                                    cur.push(x);
                                    changed = true;
                                }
                            }
                        }
                        (Some(_), None) => {
                            *entry = None;
                            changed = true;
                        }
                        (None, _) => {}
                    }
                }
            }
            if !changed {
                break;
            }
        }
        for inst in &m.instructions {
            if !mem.writes(inst) {
                continue;
            }
            for ptr in written_pointers(m, inst) {
                match mem.roots(m, ptr) {
                    Root::Vars(v) => mem.written.extend(v),
                    Root::Unknown(c) => {
                        mem.written_classes.insert(c);
                    }
                }
            }
        }
        mem
    }

    /// A variable's storage class.
    pub fn class(&self, var: u32) -> u32 {
        self.class
            .get(&var)
            .copied()
            .unwrap_or(storage_class::Function)
    }

    /// A variable's BuiltIn decoration.
    pub fn builtin(&self, var: u32) -> Option<u32> {
        self.builtin.get(&var).copied()
    }

    /// Whether nothing in the module writes the variable (or it is declared non-writable).
    pub fn read_only(&self, var: u32) -> bool {
        self.non_writable.contains(&var)
            || !self.written.contains(&var)
                && !self.written_classes.contains(&self.class(var))
                && !self
                    .written_classes
                    .contains(&storage_class::PhysicalStorageBuffer)
    }

    /// The private variables of a class (for stores through unknown pointers).
    pub fn private_vars(&self, class: u32) -> Vec<u32> {
        self.class
            .iter()
            .filter(|&(_, &c)| c == class)
            .map(|(&v, _)| v)
            .collect()
    }

    /// Whether an instruction is an OpExtInst of a non-semantic set (debug information,
    /// printf): it computes nothing the program sees.
    pub fn non_semantic(&self, inst: &Instruction) -> bool {
        inst.opcode == op::ExtInst
            && inst
                .word(2)
                .is_some_and(|s| self.non_semantic_sets.contains(&s))
    }

    /// Whether an instruction writes through (some of) its pointer operands.
    pub fn writes(&self, inst: &Instruction) -> bool {
        if self.non_semantic(inst) {
            return false;
        }
        inst.opcode == op::ExtInst || crate::opcode_class(inst.opcode) & crate::STORES != 0
    }

    /// The component a pointer selects of a built-in vector variable: an access chain with a
    /// constant index straight into it.
    pub fn component(&self, m: &Module, ptr: u32, var: u32) -> Option<u32> {
        let d = m.def(ptr)?;
        if !matches!(d.opcode, op::AccessChain | op::InBoundsAccessChain) {
            return None;
        }
        let a = d.first_arg();
        if d.word(a)? != var {
            return None;
        }
        m.constant_u64(d.word(a + 1)?).map(|k| k as u32)
    }

    /// The variables `ptr` may point into.
    pub fn roots(&self, m: &Module, ptr: u32) -> Root {
        let mut out = Vec::new();
        let mut stack = vec![ptr];
        let mut seen = FxHashSet::default();
        while let Some(p) = stack.pop() {
            if !seen.insert(p) {
                continue;
            }
            if seen.len() > 4096 {
                return Root::Unknown(pointer_class(m, ptr));
            }
            let Some(d) = m.def(p) else {
                return Root::Unknown(pointer_class(m, ptr));
            };
            let a = d.first_arg();
            match d.opcode {
                op::Variable => out.push(p),
                op::AccessChain
                | op::InBoundsAccessChain
                | op::PtrAccessChain
                | op::InBoundsPtrAccessChain
                | op::CopyObject => stack.extend(d.word(a)),
                op::Phi => {
                    let mut k = a;
                    while let Some(v) = d.word(k) {
                        stack.push(v);
                        k += 2;
                    }
                }
                op::Select => stack.extend([d.word(a + 1), d.word(a + 2)].into_iter().flatten()),
                op::FunctionParameter => match self.param_roots.get(&p) {
                    Some(Some(v)) => out.extend(v.iter().copied()),
                    // A parameter of a function nobody calls: its arguments are unknown.
                    _ => return Root::Unknown(pointer_class(m, p)),
                },
                _ => return Root::Unknown(pointer_class(m, p)),
            }
        }
        out.sort_unstable();
        out.dedup();
        Root::Vars(out)
    }
}

/// The pointers an instruction writes through.
pub(crate) fn written_pointers(m: &Module, inst: &Instruction) -> Vec<u32> {
    match inst.opcode {
        op::ExtInst => arg_ids(inst).filter(|&id| is_pointer(m, id)).collect(),
        _ => inst.word(inst.first_arg()).into_iter().collect(),
    }
}

fn is_pointer(m: &Module, id: u32) -> bool {
    m.type_of(id).is_some_and(|t| {
        matches!(
            m.type_view(t),
            Type::Pointer { .. } | Type::OpaquePointer { .. }
        )
    })
}

fn pointer_class(m: &Module, ptr: u32) -> u32 {
    match m.type_of(ptr).map(|t| m.type_view(t)) {
        Some(Type::Pointer { storage, .. } | Type::OpaquePointer { storage }) => storage,
        _ => storage_class::Function,
    }
}

/// Whether a variable's block type has every member NonWritable (GLSL `readonly buffer`).
fn block_read_only(m: &Module, var: &Instruction) -> bool {
    let Some(Type::Pointer { pointee, .. }) = var.result_type.map(|t| m.type_view(t)) else {
        return false;
    };
    let mut ty = pointee;
    // Arrays of blocks (descriptor arrays).
    while let Type::Array { elem, .. } | Type::RuntimeArray { elem } = m.type_view(ty) {
        ty = elem;
    }
    let Some(def) = m.def(ty) else { return false };
    if def.opcode != op::TypeStruct {
        return false;
    }
    let members = def.operands.len().saturating_sub(1);
    members > 0
        && (0..members as u32).all(|k| {
            m.member_decoration_param(ty, k, decoration::NonWritable)
                .is_some()
        })
}

/// The workgroup size per dimension, where an entry point states it with plain constants: the
/// WorkgroupSize built-in wins over LocalSize/LocalSizeId (SPIR-V 3.21 BuiltIn). With several
/// entry points of different sizes, a dimension is known only when they agree.
fn local_size(m: &Module) -> [Option<u64>; 3] {
    let dim = |id: u32| match m.dim(id) {
        Dim::Const(v) => Some(v),
        _ => None,
    };
    for inst in &m.instructions {
        if matches!(
            inst.opcode,
            op::ConstantComposite | op::SpecConstantComposite
        ) && let Some(id) = inst.result_id
            && m.decoration_param(id, decoration::BuiltIn) == Some(Some(built_in::WorkgroupSize))
        {
            let a = inst.first_arg();
            return [0, 1, 2].map(|k| inst.word(a + k).and_then(dim));
        }
    }
    let mut size: Option<[Option<u64>; 3]> = None;
    for inst in &m.instructions {
        if !matches!(inst.opcode, op::ExecutionMode | op::ExecutionModeId) {
            continue;
        }
        let this = match (inst.opcode, inst.word(1)) {
            (op::ExecutionMode, Some(execution_mode::LocalSize)) => {
                [2, 3, 4].map(|k| inst.word(k).map(|v| v as u64))
            }
            (op::ExecutionModeId, Some(execution_mode::LocalSizeId)) => {
                [2, 3, 4].map(|k| inst.word(k).and_then(dim))
            }
            _ => continue,
        };
        size = Some(match size {
            None => this,
            Some(s) => [0, 1, 2].map(|k| if s[k] == this[k] { s[k] } else { None }),
        });
    }
    size.unwrap_or([None; 3])
}
