//! Cooperative-matrix family rules: cooperative vector.

use super::*;

pub(super) fn coopvec_storage_ok(s: u32, workgroup: bool) -> bool {
    matches!(
        s,
        sc::StorageBuffer | sc::PhysicalStorageBuffer | sc::CrossWorkgroup
    ) || (workgroup && s == sc::Workgroup)
}

pub(super) fn coopvec_load_store(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let load = inst.opcode == op::CooperativeVectorLoadNV;
    let base = if load { 2 } else { 0 };
    let ptr = cx.op_word(inst, base);
    let off = cx.op_word(inst, base + 1);
    let vt = if load {
        inst.result_type.unwrap_or(0)
    } else {
        cx.vty(cx.op_word(inst, 2))
    };
    if !matches!(cx.ty(vt), Ty::CoopVec { .. }) {
        cx.err(
            &CV_LOAD_STORE,
            i,
            "the loaded or stored object must be an OpTypeCooperativeVectorNV",
        );
    }
    match cx.vshape_ty(ptr) {
        Ty::Pointer { storage, pointee } => {
            if !coopvec_storage_ok(storage, true) {
                cx.err(&CV_LOAD_STORE, i, "Pointer must be in Workgroup, StorageBuffer, PhysicalStorageBuffer or CrossWorkgroup storage");
            }
            if !matches!(cx.ty(pointee), Ty::Array { .. } | Ty::RuntimeArray { .. }) {
                cx.err(&CV_LOAD_STORE, i, "Pointer must point to an array");
            }
        }
        Ty::OpaquePointer { .. } => {}
        _ => {
            cx.err(&CV_LOAD_STORE, i, "Pointer is not a pointer");
        }
    }
    if !cx.is_int32_value(off) {
        cx.err(&CV_LOAD_STORE, i, "Offset must be a 32-bit integer");
    }
}

pub(super) fn coopvec_matmul(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let add = inst.opcode == op::CooperativeVectorMatrixMulAddNV;
    let rt = inst.result_type.unwrap_or(0);
    if !matches!(cx.ty(rt), Ty::CoopVec { .. }) {
        cx.err(
            &CV_MATMUL,
            i,
            "Result Type must be a cooperative vector type",
        );
    }
    let input = cx.op_word(inst, 2);
    if !matches!(cx.vshape_ty(input), Ty::CoopVec { .. }) {
        cx.err(&CV_MATMUL, i, "Input must be a cooperative vector");
    }
    let mut ptrs = vec![(cx.op_word(inst, 4), cx.op_word(inst, 5), "Matrix")];
    let mut consts = vec![
        (cx.op_word(inst, 3), "InputInterpretation"),
        (cx.op_word(inst, 6), "MatrixInterpretation"),
    ];
    let rest = if add {
        ptrs.push((cx.op_word(inst, 7), cx.op_word(inst, 8), "Bias"));
        consts.push((cx.op_word(inst, 9), "BiasInterpretation"));
        10
    } else {
        7
    };
    // "The number of components of 'Result Type' must equal 'M'"; unless the input
    // interpretation is packed, "'Input' must have 'K' components" (SPV_NV_cooperative_vector).
    let (m_id, k_id) = (cx.op_word(inst, rest), cx.op_word(inst, rest + 1));
    if let (Ty::CoopVec { count, .. }, Some(mv)) = (cx.ty(rt), cx.const_value(m_id))
        && cx.const_value(count).is_some_and(|c| c != mv)
    {
        cx.err(
            &CV_MATMUL,
            i,
            format!(
                "Result Type has {} components but M is {mv}",
                cx.const_value(count).unwrap_or(0)
            ),
        );
    }
    let packed = cx.const_value(cx.op_word(inst, 3)).is_some_and(|v| {
        v == coopmat_spirv::grammar::component_type::SignedInt8PackedNV as u64
            || v == coopmat_spirv::grammar::component_type::UnsignedInt8PackedNV as u64
    });
    if let (false, Ty::CoopVec { count, .. }, Some(kv)) =
        (packed, cx.ty(cx.vty(input)), cx.const_value(k_id))
        && cx.const_value(count).is_some_and(|c| c != kv)
    {
        cx.err(
            &CV_MATMUL,
            i,
            format!(
                "Input has {} components but K is {kv}",
                cx.const_value(count).unwrap_or(0)
            ),
        );
    }
    consts.push((cx.op_word(inst, rest), "M"));
    consts.push((cx.op_word(inst, rest + 1), "K"));
    consts.push((cx.op_word(inst, rest + 2), "MemoryLayout"));
    for (p, off, what) in ptrs {
        match cx.storage_of(p) {
            Some(s) if coopvec_storage_ok(s, false) => {}
            _ => {
                cx.err(&CV_MATMUL, i, format!("{what} must be a pointer in StorageBuffer, PhysicalStorageBuffer or CrossWorkgroup storage"));
            }
        }
        if !cx.is_int32_value(off) {
            cx.err(
                &CV_MATMUL,
                i,
                format!("{what}Offset must be a 32-bit integer"),
            );
        }
    }
    for (c, what) in consts {
        if !cx.is_constant(c) || !cx.is_int32_value(c) {
            cx.err(
                &CV_MATMUL,
                i,
                format!("{what} must be a 32-bit integer constant instruction"),
            );
        }
    }
    let tr = cx.op_word(inst, rest + 3);
    if !cx.is_constant(tr) || cx.ty(cx.vty(tr)) != Ty::Bool {
        cx.err(
            &CV_MATMUL,
            i,
            "Transpose must be a boolean constant instruction",
        );
    }
}

pub(super) fn coopvec_accumulate(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let ptr = cx.op_word(inst, 0);
    let off = cx.op_word(inst, 1);
    match cx.storage_of(ptr) {
        Some(s) if coopvec_storage_ok(s, true) => {}
        _ => {
            cx.err(&CV_ACCUMULATE, i, "Pointer must be a pointer in Workgroup, StorageBuffer, PhysicalStorageBuffer or CrossWorkgroup storage");
        }
    }
    if !cx.is_int32_value(off) {
        cx.err(&CV_ACCUMULATE, i, "Offset must be a 32-bit integer");
    }
    if inst.opcode == op::CooperativeVectorOuterProductAccumulateNV {
        let a = cx.vshape_ty(cx.op_word(inst, 2));
        let b = cx.vshape_ty(cx.op_word(inst, 3));
        match (a, b) {
            (Ty::CoopVec { comp: ca, .. }, Ty::CoopVec { comp: cb, .. }) if ca == cb => {}
            _ => {
                cx.err(
                    &CV_ACCUMULATE,
                    i,
                    "A and B must be cooperative vectors with the same component type",
                );
            }
        }
    } else if !matches!(cx.vshape_ty(cx.op_word(inst, 2)), Ty::CoopVec { .. }) {
        cx.err(&CV_ACCUMULATE, i, "V must be a cooperative vector");
    }
}
