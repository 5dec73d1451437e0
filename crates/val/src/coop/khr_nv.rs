//! Cooperative-matrix family rules: KHR / NV load, store, muladd, length.

use super::*;

/// The pointer operand's (storage class, pointee) if it is a typed pointer; `Err` if not a pointer.
pub(super) fn pointer_of(cx: &Ctx, id: u32) -> Result<Option<(u32, u32)>, ()> {
    match cx.vshape_ty(id) {
        Ty::Pointer { storage, pointee } => Ok(Some((storage, pointee))),
        Ty::OpaquePointer { .. } => Ok(None),
        _ => Err(()),
    }
}

impl Ctx<'_> {
    pub(super) fn vshape_ty(&self, id: u32) -> Ty {
        self.ty(self.vty(id))
    }
    pub(super) fn storage_of(&self, id: u32) -> Option<u32> {
        match self.vshape_ty(id) {
            Ty::Pointer { storage, .. } | Ty::OpaquePointer { storage } => Some(storage),
            _ => None,
        }
    }
}

/// Finds the operand index of the first operand of `kind`.
pub(super) fn operand_of_kind(inst: &Instruction, kind: OperandKind, from: usize) -> Option<usize> {
    (from..inst.operands.len()).find(|&k| inst.operands[k].kind == Some(kind))
}

/// Checks the `Pointer` operand of a cooperative-matrix load or store: a pointer whose pointee
/// is a scalar or vector (KHR and NV alike). Returns the storage class of a typed pointer,
/// `Ok(None)` for an untyped one, `Err` when it is no pointer (already reported).
pub(super) fn coop_pointer(
    cx: &mut Ctx,
    i: usize,
    ptr: u32,
    rule: &'static Rule,
) -> Result<Option<u32>, ()> {
    match pointer_of(cx, ptr) {
        Err(()) => {
            cx.err(
                rule,
                i,
                format!("Pointer {} is not a pointer", cx.name(ptr)),
            );
            Err(())
        }
        Ok(Some((storage, pointee))) => {
            if !matches!(
                cx.ty(pointee),
                Ty::Int { .. } | Ty::Float { .. } | Ty::Vector { .. }
            ) {
                cx.err(
                    rule,
                    i,
                    "Pointer's pointee type must be a scalar or vector type",
                )
                .rel_id(cx.vty(ptr), "pointer type");
            }
            Ok(Some(storage))
        }
        Ok(None) => Ok(None),
    }
}

pub(super) fn load_store_khr(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let load = inst.opcode == op::CooperativeMatrixLoadKHR;
    let (ptr, obj_ty, layout_k) = if load {
        (cx.op_word(inst, 2), inst.result_type.unwrap_or(0), 3)
    } else {
        let o = cx.op_word(inst, 1);
        (cx.op_word(inst, 0), cx.vty(o), 2)
    };
    if !matches!(cx.ty(obj_ty), Ty::CoopKhr { .. }) {
        let what = if load { "Result Type" } else { "Object's type" };
        cx.err(
            &KHR_LOAD_TYPES,
            i,
            format!("{what} must be an OpTypeCooperativeMatrixKHR"),
        )
        .rel_id(obj_ty, "type");
    }
    match coop_pointer(cx, i, ptr, &KHR_LOAD_POINTER) {
        Ok(Some(storage)) => pointer_storage(cx, i, storage, &KHR_LOAD_STORAGE),
        Ok(None) => {
            if let Some(s) = cx.storage_of(ptr) {
                pointer_storage(cx, i, s, &KHR_LOAD_STORAGE);
            }
        }
        Err(()) => {}
    }
    let lay = cx.op_word(inst, layout_k);
    let mut layout_value = None;
    if !cx.is_constant(lay) || !cx.is_int32_value(lay) {
        cx.err(
            &KHR_LOAD_LAYOUT,
            i,
            format!(
                "MemoryLayout {} must be a 32-bit integer constant instruction",
                cx.name(lay)
            ),
        )
        .rel_id(lay, "MemoryLayout");
    } else if let Some(v) = cx.const_or_default(lay) {
        let arm = v == layout::RowBlockedInterleavedARM as u64
            || v == layout::ColumnBlockedInterleavedARM as u64;
        if v > 1 && !arm {
            cx.err(
                &KHR_LOAD_LAYOUT,
                i,
                format!("MemoryLayout value {v} is not a Cooperative Matrix Layout"),
            );
        } else if arm && !cx.has_cap(capability::CooperativeMatrixLayoutsARM) {
            cx.err(
                &CORE_CAPABILITY,
                i,
                "blocked-interleaved layouts need the CooperativeMatrixLayoutsARM capability",
            );
        }
        layout_value = Some(v);
    }
    let stride_k = layout_k + 1;
    let has_stride = inst
        .operands
        .get(stride_k)
        .is_some_and(|o| o.kind == Some(OperandKind::IdRef));
    if has_stride {
        let s = cx.op_word(inst, stride_k);
        if !cx.is_int(cx.vty(s)) {
            cx.err(
                &KHR_LOAD_STRIDE,
                i,
                format!("Stride {} must be a scalar integer", cx.name(s)),
            );
        } else if !load && cx.const_value(s) == Some(0) {
            cx.err(
                &KHR_LOAD_STRIDE,
                i,
                "Stride must be greater than 0 when passed to OpCooperativeMatrixStoreKHR",
            );
        }
    } else if matches!(layout_value, Some(0) | Some(1)) {
        cx.err(
            &KHR_LOAD_STRIDE,
            i,
            "Stride is required with RowMajorKHR and ColumnMajorKHR layouts",
        );
    }
    mem_operand(cx, i, inst, load, &KHR_LOAD_MEMOP);
}

pub(super) fn pointer_storage(cx: &mut Ctx, i: usize, storage: u32, rule: &'static Rule) {
    if cx.opts.target_env.is_vulkan()
        && !matches!(
            storage,
            sc::Workgroup | sc::StorageBuffer | sc::PhysicalStorageBuffer
        )
    {
        cx.err(rule, i, format!("Pointer's storage class {storage} must be Workgroup, StorageBuffer or PhysicalStorageBuffer"));
    }
}

pub(super) fn mem_operand(
    cx: &mut Ctx,
    i: usize,
    inst: &Instruction,
    load: bool,
    rule: &'static Rule,
) {
    if let Some(k) = operand_of_kind(inst, OperandKind::MemoryAccess, 0) {
        let bits = cx.op_word(inst, k);
        if load && bits & memory_access::MakePointerAvailable != 0 {
            cx.err(rule, i, "MakePointerAvailable cannot be used with a load");
        }
        if !load && bits & memory_access::MakePointerVisible != 0 {
            cx.err(rule, i, "MakePointerVisible cannot be used with a store");
        }
    }
}

pub(super) fn load_store_nv(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let load = inst.opcode == op::CooperativeMatrixLoadNV;
    let (ptr, obj_ty, k) = if load {
        (cx.op_word(inst, 2), inst.result_type.unwrap_or(0), 3)
    } else {
        (cx.op_word(inst, 0), cx.vty(cx.op_word(inst, 1)), 2)
    };
    if !matches!(cx.ty(obj_ty), Ty::CoopNv { .. }) {
        cx.err(
            &NV_LOAD,
            i,
            "the loaded or stored object must be an OpTypeCooperativeMatrixNV",
        );
    }
    if let Ok(Some(storage)) = coop_pointer(cx, i, ptr, &NV_LOAD)
        && !matches!(
            storage,
            sc::Workgroup | sc::StorageBuffer | sc::PhysicalStorageBuffer
        )
    {
        cx.err(
            &NV_LOAD,
            i,
            "Pointer must be in Workgroup, StorageBuffer or PhysicalStorageBuffer storage",
        );
    }
    let stride = cx.op_word(inst, k);
    if !cx.is_int(cx.vty(stride)) {
        cx.err(&NV_LOAD, i, "Stride must be a scalar integer");
    }
    let cm = cx.op_word(inst, k + 1);
    if !cx.is_constant(cm) || cx.ty(cx.vty(cm)) != Ty::Bool {
        cx.err(
            &NV_LOAD,
            i,
            "Column Major must be a boolean constant instruction",
        );
    }
}

pub(super) fn int_comp(cx: &Ctx, m: &Mat) -> bool {
    cx.is_int(m.comp)
}

pub(super) fn muladd_khr(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let ids = [
        cx.op_word(inst, 2),
        cx.op_word(inst, 3),
        cx.op_word(inst, 4),
    ];
    let r = cx.mat(rt).filter(|m| m.khr);
    let a = cx.vmat(ids[0]).filter(|m| m.khr);
    let b = cx.vmat(ids[1]).filter(|m| m.khr);
    let c = cx.vmat(ids[2]).filter(|m| m.khr);
    let (Some(r), Some(a), Some(b), Some(c)) = (r, a, b, c) else {
        let d = cx.err(
            &KHR_MULADD_TYPES,
            i,
            "Result Type, A, B and C must all be OpTypeCooperativeMatrixKHR",
        );
        let _ = d;
        return;
    };
    let v = |id: u32| cx.val(id);
    let (m_, n_, k_) = (v(a.rows), v(b.cols), v(a.cols));
    let mut bad = Vec::new();
    if v(b.rows).differs(k_) {
        bad.push(format!(
            "B has {} rows but A has {} columns (K)",
            show(v(b.rows)),
            show(k_)
        ));
    }
    if v(c.rows).differs(m_) || v(c.cols).differs(n_) {
        bad.push(format!(
            "C is {}x{} but A x B is {}x{}",
            show(v(c.rows)),
            show(v(c.cols)),
            show(m_),
            show(n_)
        ));
    }
    if v(r.rows).differs(m_) || v(r.cols).differs(n_) {
        bad.push(format!(
            "Result is {}x{} but A x B is {}x{}",
            show(v(r.rows)),
            show(v(r.cols)),
            show(m_),
            show(n_)
        ));
    }
    if !bad.is_empty() {
        let msg = bad.join("; ");
        let ta = cx.vty(ids[0]);
        let tb = cx.vty(ids[1]);
        cx.err(&KHR_MULADD_SHAPE, i, msg)
            .rel_id(ta, "type of A")
            .rel_id(tb, "type of B");
    }
    for (mat, want, what, id) in [
        (a, usage::MatrixAKHR, "A", ids[0]),
        (b, usage::MatrixBKHR, "B", ids[1]),
        (c, usage::MatrixAccumulatorKHR, "C", ids[2]),
    ] {
        let u = v(mat.usage);
        if u.differs(Val::Known(want as u64)) {
            let t = cx.vty(id);
            cx.err(
                &KHR_MULADD_USE,
                i,
                format!(
                    "{what} must have Use {}, found {}",
                    use_name(Val::Known(want as u64)),
                    use_name(u)
                ),
            )
            .rel_id(t, format!("type of {what}"));
        }
    }
    let ru = v(r.usage);
    if ru.differs(Val::Known(usage::MatrixAccumulatorKHR as u64)) {
        cx.err(
            &KHR_MULADD_RESULT_USE,
            i,
            format!(
                "Result Type must have Use MatrixAccumulatorKHR, found {}",
                use_name(ru)
            ),
        )
        .rel_id(rt, "Result Type");
    }
    let s = v(r.scope);
    if [a, b, c].iter().any(|m| v(m.scope).differs(s)) {
        cx.err(
            &KHR_MULADD_SCOPE,
            i,
            "A, B, C and Result Type must have the same scope",
        );
    }
    if let Some(k) = operand_of_kind(inst, OperandKind::CooperativeMatrixOperands, 5) {
        let bits = cx.op_word(inst, k);
        for (bit, mat, what) in [
            (
                mo::MatrixASignedComponentsKHR,
                a,
                "MatrixASignedComponentsKHR",
            ),
            (
                mo::MatrixBSignedComponentsKHR,
                b,
                "MatrixBSignedComponentsKHR",
            ),
            (
                mo::MatrixCSignedComponentsKHR,
                c,
                "MatrixCSignedComponentsKHR",
            ),
            (
                mo::MatrixResultSignedComponentsKHR,
                r,
                "MatrixResultSignedComponentsKHR",
            ),
        ] {
            if bits & bit != 0 && !int_comp(cx, &mat) {
                cx.err(
                    &KHR_MULADD_SIGNED,
                    i,
                    format!(
                        "{what} is set but that matrix's component type is {}",
                        cx.type_name(mat.comp)
                    ),
                )
                .rel_id(mat.comp, "component type");
            }
        }
    }
}

pub(super) fn muladd_nv(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let r = cx.mat(rt).filter(|m| !m.khr);
    let a = cx.vmat(cx.op_word(inst, 2)).filter(|m| !m.khr);
    let b = cx.vmat(cx.op_word(inst, 3)).filter(|m| !m.khr);
    let c = cx.vmat(cx.op_word(inst, 4)).filter(|m| !m.khr);
    let (Some(r), Some(a), Some(b), Some(c)) = (r, a, b, c) else {
        cx.err(
            &NV_MULADD,
            i,
            "Result Type, A, B and C must all be OpTypeCooperativeMatrixNV",
        );
        return;
    };
    let v = |id: u32| cx.val(id);
    let (m_, n_, k_) = (v(a.rows), v(b.cols), v(a.cols));
    if v(b.rows).differs(k_)
        || v(c.rows).differs(m_)
        || v(c.cols).differs(n_)
        || v(r.rows).differs(m_)
        || v(r.cols).differs(n_)
    {
        cx.err(
            &NV_MULADD,
            i,
            format!(
                "shapes do not agree: A {}x{}, B {}x{}, C {}x{}, Result {}x{}",
                show(m_),
                show(k_),
                show(v(b.rows)),
                show(n_),
                show(v(c.rows)),
                show(v(c.cols)),
                show(v(r.rows)),
                show(v(r.cols))
            ),
        );
    }
    if [a, b, c].iter().any(|m| v(m.scope).differs(v(r.scope))) {
        cx.err(
            &NV_MULADD,
            i,
            "A, B, C and Result Type must have the same scope",
        );
    }
}

pub(super) fn length(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let khr = inst.opcode == op::CooperativeMatrixLengthKHR;
    let rule = if khr { &KHR_LENGTH } else { &NV_LENGTH };
    let rt = inst.result_type.unwrap_or(0);
    let ok = match cx.ty(rt) {
        Ty::Int { width: 32, signed } => !khr || !signed,
        _ => false,
    };
    if !ok {
        cx.err(
            rule,
            i,
            "Result Type must be a 32-bit unsigned integer (OpTypeInt 32 0)",
        );
    }
    let t = cx.op_word(inst, 2);
    let is = match cx.ty(t) {
        Ty::CoopKhr { .. } => khr,
        Ty::CoopNv { .. } => !khr,
        _ => false,
    };
    if !is {
        cx.err(
            rule,
            i,
            format!("Type {} must be a cooperative matrix type", cx.name(t)),
        );
    }
}
