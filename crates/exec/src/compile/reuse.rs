//! What the decoded-tile cache may rely on (`Batch::decode_tile`, DESIGN.md "Decoded tiles
//! reused"): which functions compute their results from their arguments and the memory they
//! read alone, and which buffers the module can write.

use coopmat_spirv::Module;
use coopmat_spirv::binary::Instruction;
use coopmat_spirv::grammar::{decoration, op, storage_class};
use std::collections::HashSet;

/// The storage class of `id`'s pointer type, if its type is an OpTypePointer.
fn pointer_class(m: &Module, id: u32) -> Option<u32> {
    let ty = m.def(m.type_of(id)?)?;
    (ty.opcode == op::TypePointer).then(|| ty.word(1)).flatten()
}

/// The functions (of `order`) whose calls read memory but write none outside their own
/// Function variables, and whose results depend on nothing but their arguments, constants and
/// that memory: no Input, Output or Private variables (`touches_private`), no group, barrier,
/// atomic, clock or printing instructions, no calls to other kinds of functions. Two calls with
/// the same arguments over the same memory give the same results (the instructions allowed
/// are deterministic; per-lane order does not matter to them).
pub(super) fn pure_readers(
    m: &Module,
    order: &[u32],
    touches_private: &HashSet<u32>,
) -> HashSet<u32> {
    let glsl: HashSet<u32> = m
        .find(op::ExtInstImport)
        .filter_map(|i| {
            let inst = &m.instructions[i];
            (inst.string(1).as_deref() == Some("GLSL.std.450"))
                .then_some(inst.result_id)
                .flatten()
        })
        .collect();
    let allowed = |inst: &Instruction, calls: &mut Vec<u32>| -> bool {
        let class = inst.desc().map_or("", |d| d.class);
        match inst.opcode {
            op::Variable
            | op::AccessChain
            | op::InBoundsAccessChain
            | op::PtrAccessChain
            | op::InBoundsPtrAccessChain
            | op::ArrayLength
            | op::FunctionParameter
            | op::Phi
            | op::LoopMerge
            | op::SelectionMerge
            | op::Label
            | op::Branch
            | op::BranchConditional
            | op::Switch
            | op::Return
            | op::ReturnValue
            | op::Unreachable => true,
            op::Load => inst.word(2).is_some_and(|p| {
                !matches!(
                    pointer_class(m, p),
                    None | Some(storage_class::Input | storage_class::Output)
                )
            }),
            op::Store => inst
                .word(0)
                .is_some_and(|p| pointer_class(m, p) == Some(storage_class::Function)),
            op::FunctionCall => {
                calls.extend(inst.word(2));
                true
            }
            // GLSL.std.450 only; Modf and Frexp write through a pointer operand: only to
            // the function's own variables.
            op::ExtInst => inst.word(2).is_some_and(|set| glsl.contains(&set))
                && coopmat_analysis::arg_ids(inst).all(
                    |id| !matches!(pointer_class(m, id), Some(c) if c != storage_class::Function),
                ),
            _ => {
                matches!(
                    class,
                    "Arithmetic"
                        | "Bit"
                        | "Relational_and_Logical"
                        | "Conversion"
                        | "Composite"
                        | "Constant-Creation"
                        | "Debug"
                        | "Annotation"
                ) || matches!(
                    inst.opcode,
                    op::Nop | op::Undef | op::CooperativeMatrixLengthKHR
                )
            }
        }
    };
    let mut calls_of: Vec<(u32, Vec<u32>)> = Vec::new();
    let mut pure: HashSet<u32> = HashSet::new();
    for &fid in order {
        let Some(f) = m.function(fid) else { continue };
        let mut calls = Vec::new();
        let ok = !touches_private.contains(&fid)
            && f.blocks
                .iter()
                .flat_map(|b| b.body.clone())
                .all(|i| allowed(&m.instructions[i], &mut calls));
        if ok {
            pure.insert(fid);
            calls_of.push((fid, calls));
        }
    }
    // A function is pure only if everything it calls is.
    loop {
        let before = pure.len();
        for (f, calls) in &calls_of {
            if calls.iter().any(|c| !pure.contains(c)) {
                pure.remove(f);
            }
        }
        if pure.len() == before {
            return pure;
        }
    }
}

/// The (set, binding) of every buffer variable the module's functions can write, or None when
/// some instruction may write buffer memory that is not reached from a bound variable by
/// access chains (a PhysicalStorageBuffer pointer, a pointer parameter, a pointer chosen by a
/// select or phi). Any instruction that takes a buffer pointer counts as a write through it
/// unless it is known only to read or derive pointers.
pub(super) fn written_bindings(m: &Module) -> Option<Vec<(u32, u32)>> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for f in m.functions() {
        for i in f.blocks.iter().flat_map(|b| b.body.clone()) {
            let inst = &m.instructions[i];
            if matches!(
                inst.opcode,
                op::Load
                    | op::AccessChain
                    | op::InBoundsAccessChain
                    | op::PtrAccessChain
                    | op::InBoundsPtrAccessChain
                    | op::ArrayLength
                    | op::CopyObject
                    | op::ConvertPtrToU
                    | op::PtrEqual
                    | op::PtrNotEqual
                    | op::PtrDiff
                    | op::Bitcast
                    | op::Select
                    | op::Phi
                    | op::FunctionCall
                    | op::AtomicLoad
                    | op::CooperativeMatrixLoadKHR
                    | op::CooperativeMatrixLoadNV
                    | op::CooperativeMatrixLoadTensorNV
                    | op::CooperativeVectorLoadNV
            ) {
                continue;
            }
            // A store writes through its pointer; a pointer it stores is a value (a later
            // write through it starts from a load, which has no binding root).
            let targets: Vec<u32> = if inst.opcode == op::Store {
                inst.word(0).into_iter().collect()
            } else {
                coopmat_analysis::arg_ids(inst).collect()
            };
            for id in targets {
                match pointer_class(m, id) {
                    Some(
                        storage_class::Function
                        | storage_class::Private
                        | storage_class::Workgroup
                        | storage_class::Input
                        | storage_class::Output,
                    )
                    | None => {}
                    Some(storage_class::StorageBuffer | storage_class::Uniform) => {
                        out.push(binding_root(m, id)?);
                    }
                    Some(_) => return None,
                }
            }
            // A write whose target is no pointer operand (an image, say) is not understood.
            if inst.opcode == op::ImageWrite {
                return None;
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// The (set, binding) of the variable `ptr` is derived from by access chains and copies.
fn binding_root(m: &Module, mut ptr: u32) -> Option<(u32, u32)> {
    for _ in 0..256 {
        let d = m.def(ptr)?;
        match d.opcode {
            op::AccessChain
            | op::InBoundsAccessChain
            | op::PtrAccessChain
            | op::InBoundsPtrAccessChain
            | op::CopyObject => ptr = d.word(2)?,
            op::Variable => {
                let set = m.decoration_param(ptr, decoration::DescriptorSet)??;
                let binding = m.decoration_param(ptr, decoration::Binding)??;
                return Some((set, binding));
            }
            _ => return None,
        }
    }
    None
}
