//! Cooperative-matrix family rules: coopmat2.

use super::*;

/// The Dim of a tensor layout or view type, if known.
pub(super) fn tensor_dim(cx: &Ctx, ty: u32) -> Option<u64> {
    match cx.ty(ty) {
        Ty::Layout { dim, .. } | Ty::View { dim, .. } => cx.const_or_default(dim),
        _ => None,
    }
}

/// Walks a tensor layout value back to its last OpTensorLayoutSetBlockSizeNV; returns the
/// block size operand ids, or `None` when unknown (phi, parameter, load) or never set (all 1).
pub(super) fn block_sizes(cx: &Ctx, mut id: u32) -> Option<(usize, Vec<u32>)> {
    for _ in 0..4096 {
        let d = cx.def(id)?;
        let inst = &cx.m.instructions[d];
        match inst.opcode {
            op::TensorLayoutSetBlockSizeNV => {
                return Some((
                    d,
                    (3..inst.operands.len())
                        .map(|k| inst.w(k).unwrap_or(0))
                        .collect(),
                ));
            }
            op::TensorLayoutSetDimensionNV
            | op::TensorLayoutSetStrideNV
            | op::TensorLayoutSliceNV
            | op::TensorLayoutSetClampValueNV => {
                id = inst.w(2)?;
            }
            // Unoptimized glslang output keeps the layout in a Function variable: follow the
            // load to the last store to the same variable earlier in the same block.
            op::Load => {
                let var = inst.w(2)?;
                if cx.def_op(var) != op::Variable {
                    return None;
                }
                id = stored_before(cx, d, var)?;
            }
            _ => return None,
        }
    }
    None
}

/// The value last stored to `var` before instruction `load`, scanning back within its block;
/// `None` at the block start or at a call (which may store to it).
pub(super) fn stored_before(cx: &Ctx, load: usize, var: u32) -> Option<u32> {
    for j in (0..load).rev() {
        let inst = &cx.m.instructions[j];
        match inst.opcode {
            op::Store if inst.w(0) == Some(var) => return inst.w(1),
            op::Label | op::FunctionCall => return None,
            _ => {}
        }
    }
    None
}

pub(super) fn tensor_load_store(
    cx: &mut Ctx,
    i: usize,
    inst: &Instruction,
    callbacks: &mut Vec<(usize, u32, &'static str)>,
) {
    let load = inst.opcode == op::CooperativeMatrixLoadTensorNV;
    let base = if load { 2 } else { 0 };
    let ptr = cx.op_word(inst, base);
    let obj = cx.op_word(inst, base + 1);
    let lay = cx.op_word(inst, base + 2);
    let rule = if load {
        &NV2_LOAD_TENSOR
    } else {
        &NV2_STORE_TENSOR
    };
    let mat_ty = if load {
        inst.result_type.unwrap_or(0)
    } else {
        cx.vty(obj)
    };
    let mat = cx.mat(mat_ty).filter(|m| m.khr);
    if mat.is_none() {
        cx.err(
            rule,
            i,
            if load {
                "Result Type must be an OpTypeCooperativeMatrixKHR"
            } else {
                "Object must be a cooperative matrix (OpTypeCooperativeMatrixKHR)"
            },
        );
    }
    if load && cx.vty(obj) != mat_ty {
        cx.err(rule, i, "Object must have the Result Type")
            .rel_id(cx.vty(obj), "Object's type");
    }
    if pointer_of(cx, ptr).is_err() {
        cx.err(
            rule,
            i,
            format!("Pointer {} is not a pointer", cx.name(ptr)),
        );
    }
    let lay_ty = cx.vty(lay);
    if !matches!(cx.ty(lay_ty), Ty::Layout { .. }) {
        cx.err(
            rule,
            i,
            format!(
                "TensorLayout {} must be a tensor layout (OpTypeTensorLayoutNV)",
                cx.name(lay)
            ),
        );
    }
    let ldim = tensor_dim(cx, lay_ty);
    mem_operand(cx, i, inst, load, &NV2_MEMOP);
    let Some(tk) = operand_of_kind(inst, OperandKind::TensorAddressingOperands, base + 3) else {
        return;
    };
    let bits = cx.op_word(inst, tk);
    let mut k = tk + 1;
    let mut next = |cx: &Ctx| {
        let v = cx.op_word(inst, k);
        k += 1;
        v
    };
    if bits & tao::TensorView != 0 {
        let v = next(cx);
        let vt = cx.vty(v);
        if !matches!(cx.ty(vt), Ty::View { .. }) {
            cx.err(
                &NV2_TENSOR_VIEW,
                i,
                format!(
                    "TensorView {} must be a tensor view (OpTypeTensorViewNV)",
                    cx.name(v)
                ),
            );
        } else if let (Some(vd), Some(ld), Ty::View { has_dim, .. }) =
            (tensor_dim(cx, vt), ldim, cx.ty(vt))
        {
            // Without its own dimensions the view indexes the layout's span[0..VDim) (the
            // spec's linearToViewCoord), so a larger VDim reads past the layout: warn.
            if vd > ld && cx.const_value(has_dim) == Some(0) {
                cx.warn(&NV2_TENSOR_VIEW, i, format!("the tensor view has Dim {vd} and no dimensions of its own, but the tensor layout has Dim {ld}"))
                    .rel_id(vt, "view type")
                    .rel_id(lay_ty, "layout type");
            }
        }
    }
    let decode = (bits & tao::DecodeFunc != 0).then(|| next(cx));
    let decode_vec = (bits & tao::DecodeVectorFunc != 0).then(|| next(cx));
    if !load && decode.is_some() {
        cx.err(
            &NV2_STORE_TENSOR,
            i,
            "DecodeFunc cannot be used with OpCooperativeMatrixStoreTensorNV",
        );
    }
    if decode_vec.is_some() && decode.is_none() {
        cx.err(
            &DV_REQUIRES_DECODE,
            i,
            "DecodeVectorFunc requires DecodeFunc to be present as well",
        );
    }
    if (decode.is_some() || decode_vec.is_some()) && load {
        match cx.storage_of(ptr) {
            Some(sc::StorageBuffer | sc::PhysicalStorageBuffer) => {}
            Some(s) => {
                cx.err(&NV2_DECODE_STORAGE, i, format!("with DecodeFunc, Pointer must be in StorageBuffer or PhysicalStorageBuffer storage, found storage class {s}"))
                    .rel_id(cx.vty(ptr), "pointer type");
            }
            None => {}
        }
    }
    let comp = mat.map(|m| m.comp);
    if let Some(f) = decode {
        callbacks.push((i, f, "DecodeFunc"));
        if load {
            decode_signature(cx, i, f, comp, ldim, None);
        }
    }
    if let Some(f) = decode_vec {
        callbacks.push((i, f, "DecodeVectorFunc"));
        let width = decode_signature(cx, i, f, comp, ldim, Some(()));
        if let (Some(w), Some((bi, sizes))) = (width, block_sizes(cx, lay))
            && let Some(&last) = sizes.last()
            && let Some(b) = cx.const_value(last)
            && b % w as u64 != 0
        {
            cx.err(
                &DV_BLOCK_MULTIPLE,
                i,
                format!(
                    "blockSize[Dim-1] = {b} is not a multiple of the DecodeVectorFunc width {w}"
                ),
            )
            .at(bi, "block size set here");
        }
    }
    if !load
        && let Some((bi, sizes)) = block_sizes(cx, lay)
        && let Some(b) = sizes
            .iter()
            .filter_map(|&s| cx.const_value(s))
            .find(|&b| b > 1)
    {
        cx.err(&NV2_STORE_BLOCK, i, format!("a tensor layout with block size {b} cannot be used with OpCooperativeMatrixStoreTensorNV"))
                    .at(bi, "block size set here");
    }
}

/// Checks a DecodeFunc (`vector` None) or DecodeVectorFunc signature; returns the vector width.
pub(super) fn decode_signature(
    cx: &mut Ctx,
    i: usize,
    f: u32,
    comp: Option<u32>,
    ldim: Option<u64>,
    vector: Option<()>,
) -> Option<u32> {
    let (what, func_rule, params_rule, ret_rule) = match vector {
        None => (
            "DecodeFunc",
            &NV2_DECODE_FUNC,
            &NV2_DECODE_PARAMS,
            &NV2_DECODE_FUNC,
        ),
        Some(()) => ("DecodeVectorFunc", &NV2_DECODE_FUNC, &DV_PARAMS, &DV_RETURN),
    };
    let Some(func) = cx.m.function(f) else {
        cx.err(
            func_rule,
            i,
            format!("{what} {} is not an OpFunction", cx.name(f)),
        );
        return None;
    };
    let def = func.def;
    let params = func.params.clone();
    let ret = cx.m.instructions[def].result_type.unwrap_or(0);
    let mut width = None;
    match vector {
        None => {
            if comp.is_some_and(|c| c != ret) {
                cx.err(
                    ret_rule,
                    i,
                    format!(
                        "{what} must return the matrix component type {}",
                        cx.type_name(comp.unwrap_or(0))
                    ),
                )
                .at(def, what);
            }
        }
        Some(()) => match cx.ty(ret) {
            Ty::Vector { comp: c, count }
                if matches!(count, 2 | 4 | 8) && comp.is_none_or(|mc| mc == c) =>
            {
                width = Some(count)
            }
            // OpTypeVectorIdEXT (LongVectorEXT): the length may be a specialization constant.
            Ty::CoopVec { comp: c, count }
                if comp.is_none_or(|mc| mc == c)
                    && cx
                        .const_or_default(count)
                        .is_none_or(|n| matches!(n, 2 | 4 | 8)) =>
            {
                width = cx.const_value(count).map(|n| n as u32)
            }
            _ => {
                cx.err(ret_rule, i, format!("{what} must return a vector of 2, 4 or 8 components of the matrix component type"))
                    .at(def, what);
            }
        },
    }
    if params.len() != 3 {
        cx.err(
            params_rule,
            i,
            format!(
                "{what} must have exactly 3 parameters, found {}",
                params.len()
            ),
        )
        .at(def, what);
        return width;
    }
    let p0 = cx.m.instructions[params[0]].result_type.unwrap_or(0);
    if !matches!(
        cx.ty(p0),
        Ty::Pointer {
            storage: sc::PhysicalStorageBuffer,
            ..
        }
    ) {
        let rule = if vector.is_some() {
            &DV_PARAMS
        } else {
            &NV2_DECODE_FUNC
        };
        cx.err(
            rule,
            i,
            format!("{what}'s first parameter must be a pointer in PhysicalStorageBuffer storage"),
        )
        .at(params[0], "parameter");
    }
    for (n, &p) in params.iter().enumerate().skip(1) {
        let pt = cx.m.instructions[p].result_type.unwrap_or(0);
        let ok = match cx.ty(pt) {
            Ty::Array { elem, len } => {
                cx.is_int32(elem)
                    && match (cx.const_value(len), ldim) {
                        (Some(l), Some(d)) => l == d,
                        _ => true,
                    }
            }
            _ => false,
        };
        if !ok {
            let dim = ldim.map(|d| d.to_string()).unwrap_or_else(|| "Dim".into());
            cx.err(
                params_rule,
                i,
                format!(
                    "{what}'s parameter {} must be an array of {dim} 32-bit integers",
                    n + 1
                ),
            )
            .at(p, "parameter");
        }
    }
    width
}

pub(super) fn reduce(cx: &mut Ctx, i: usize, inst: &Instruction) {
    use coopmat_spirv::grammar::operands::CooperativeMatrixReduceNV as r;
    let rt = inst.result_type.unwrap_or(0);
    let src = cx.arg_word(inst, r::MATRIX);
    let (Some(r), Some(s)) = (cx.mat(rt).filter(|m| m.khr), cx.vmat(src).filter(|m| m.khr)) else {
        cx.err(
            &NV2_REDUCE,
            i,
            "Result Type and Matrix must be OpTypeCooperativeMatrixKHR",
        );
        return;
    };
    let v = |id: u32| cx.val(id);
    if r.comp != s.comp {
        cx.err(
            &NV2_REDUCE,
            i,
            "Result Type and Matrix must have the same component type",
        );
    }
    let acc = Val::Known(usage::MatrixAccumulatorKHR as u64);
    if v(r.usage).differs(acc) || v(s.usage).differs(acc) {
        cx.err(
            &NV2_REDUCE,
            i,
            "Result Type and Matrix must both have Use MatrixAccumulatorKHR",
        );
    }
    if v(r.scope).differs(v(s.scope)) {
        cx.err(
            &NV2_REDUCE,
            i,
            "Result Type and Matrix must have the same scope",
        );
    }
    let mode = cx.arg_word(inst, r::REDUCE);
    let row = mode & red::Row != 0;
    let col = mode & red::Column != 0;
    let quad = mode & red::_2x2 != 0;
    if mode == 0 || (quad && (row || col)) {
        cx.err(
            &NV2_REDUCE,
            i,
            "Reduce must be Row, Column, Row|Column or 2x2 (2x2 cannot be combined)",
        );
    } else if quad {
        let half = |a: Val, b: Val| matches!((a, b), (Val::Known(x), Val::Known(y)) if x * 2 != y);
        if half(v(r.rows), v(s.rows)) || half(v(r.cols), v(s.cols)) {
            cx.err(
                &NV2_REDUCE,
                i,
                "with 2x2 the result must have half the rows and half the columns of Matrix",
            );
        }
    } else if row && !col && v(r.rows).differs(v(s.rows)) {
        cx.err(
            &NV2_REDUCE,
            i,
            "with Row the result must have the same number of rows as Matrix",
        );
    } else if col && !row && v(r.cols).differs(v(s.cols)) {
        cx.err(
            &NV2_REDUCE,
            i,
            "with Column the result must have the same number of columns as Matrix",
        );
    }
    let f = cx.arg_word(inst, r::COMBINE_FUNC);
    let Some(func) = cx.m.function(f) else {
        cx.err(
            &NV2_REDUCE_FUNC,
            i,
            format!("CombineFunc {} is not an OpFunction", cx.name(f)),
        );
        return;
    };
    let def = func.def;
    let ptys: Vec<u32> = func
        .params
        .iter()
        .map(|&p| cx.m.instructions[p].result_type.unwrap_or(0))
        .collect();
    let ret = cx.m.instructions[def].result_type.unwrap_or(0);
    if ptys.len() != 2 || ptys.iter().any(|&t| t != s.comp) || ret != s.comp {
        cx.err(
            &NV2_REDUCE_FUNC,
            i,
            format!(
                "CombineFunc must take two {} parameters and return {}",
                cx.type_name(s.comp),
                cx.type_name(s.comp)
            ),
        )
        .at(def, "CombineFunc");
    }
}

pub(super) fn per_element(cx: &mut Ctx, i: usize, inst: &Instruction) {
    use coopmat_spirv::grammar::operands::CooperativeMatrixPerElementOpNV as pe;
    let rt = inst.result_type.unwrap_or(0);
    let src = cx.arg_word(inst, pe::MATRIX);
    let Some(s) = cx.vmat(src).filter(|m| m.khr) else {
        cx.err(
            &NV2_PER_ELEMENT,
            i,
            "Matrix must be an OpTypeCooperativeMatrixKHR",
        );
        return;
    };
    if cx.vty(src) != rt {
        cx.err(
            &NV2_PER_ELEMENT,
            i,
            "Result Type must be the type of Matrix",
        );
    }
    let f = cx.arg_word(inst, pe::FUNC);
    let Some(func) = cx.m.function(f) else {
        cx.err(
            &NV2_PER_ELEMENT,
            i,
            format!("Func {} is not an OpFunction", cx.name(f)),
        );
        return;
    };
    let def = func.def;
    let ptys: Vec<(usize, u32)> = func
        .params
        .iter()
        .map(|&p| (p, cx.m.instructions[p].result_type.unwrap_or(0)))
        .collect();
    let ret = cx.m.instructions[def].result_type.unwrap_or(0);
    if ret != s.comp {
        cx.err(
            &NV2_PER_ELEMENT,
            i,
            format!(
                "Func must return the component type {}",
                cx.type_name(s.comp)
            ),
        )
        .at(def, "Func");
    }
    let extra = inst.operands.len().saturating_sub(4);
    if ptys.len() != 3 + extra {
        cx.err(
            &NV2_PER_ELEMENT,
            i,
            format!(
                "Func must take {} parameters (row, column, element and {} operand(s)), found {}",
                3 + extra,
                extra,
                ptys.len()
            ),
        )
        .at(def, "Func");
        return;
    }
    for (k, &(p, t)) in ptys.iter().enumerate().take(2) {
        if !cx.is_int32(t) {
            cx.err(
                &NV2_PER_ELEMENT,
                i,
                format!("Func parameter {} must be a 32-bit integer", k + 1),
            )
            .at(p, "parameter");
        }
    }
    if ptys[2].1 != s.comp {
        cx.err(
            &NV2_PER_ELEMENT,
            i,
            "Func parameter 3 must have the component type",
        )
        .at(ptys[2].0, "parameter");
    }
    for k in 0..extra {
        let o = cx.op_word(inst, 4 + k);
        let ot = cx.vty(o);
        let (p, pt) = ptys[3 + k];
        let ok = if cx.is_coop_type(ot) {
            ot == rt && pt == s.comp
        } else {
            ot == pt
        };
        if !ok {
            cx.err(&NV2_PER_ELEMENT, i, format!("operand {} does not match Func parameter {} (a matrix operand must have Matrix's type and the parameter its component type)", cx.name(o), 4 + k))
                .at(p, "parameter");
        }
    }
}

pub(super) fn convert_use(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let src = cx.op_word(inst, 2);
    let (Some(r), Some(s)) = (cx.mat(rt).filter(|m| m.khr), cx.vmat(src).filter(|m| m.khr)) else {
        cx.err(
            &NV2_CONVERT_USE,
            i,
            "Result Type and Matrix must be OpTypeCooperativeMatrixKHR",
        );
        return;
    };
    let v = |id: u32| cx.val(id);
    if r.comp != s.comp
        || v(r.scope).differs(v(s.scope))
        || v(r.rows).differs(v(s.rows))
        || v(r.cols).differs(v(s.cols))
    {
        cx.err(
            &NV2_CONVERT_USE,
            i,
            "Result Type and Matrix must have the same component type, scope, rows and columns",
        );
    }
    let (ru, su) = (v(r.usage), v(s.usage));
    if cx.has_cap(capability::CooperativeMatrixConversionsEXT)
        && !cx.has_cap(capability::CooperativeMatrixConversionsNV)
    {
        if !ru.differs(su) && ru.known().is_some() {
            cx.err(&NV2_CONVERT_USE, i, "the conversion must change Use");
        }
    } else if su.differs(Val::Known(usage::MatrixAccumulatorKHR as u64))
        || ru.differs(Val::Known(0)) && ru.differs(Val::Known(1))
    {
        cx.err(
            &NV2_CONVERT_USE,
            i,
            format!(
                "converts MatrixAccumulatorKHR to MatrixAKHR or MatrixBKHR, found {} to {}",
                use_name(su),
                use_name(ru)
            ),
        );
    }
}

pub(super) fn transpose(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let src = cx.op_word(inst, 2);
    let (Some(r), Some(s)) = (cx.mat(rt).filter(|m| m.khr), cx.vmat(src).filter(|m| m.khr)) else {
        cx.err(
            &NV2_TRANSPOSE,
            i,
            "Result Type and Matrix must be OpTypeCooperativeMatrixKHR",
        );
        return;
    };
    let v = |id: u32| cx.val(id);
    if v(r.scope).differs(v(s.scope))
        || v(r.rows).differs(v(s.cols))
        || v(r.cols).differs(v(s.rows))
    {
        cx.err(
            &NV2_TRANSPOSE,
            i,
            "the result must have Matrix's scope with Rows and Columns swapped",
        );
    }
    if v(s.usage).differs(Val::Known(usage::MatrixAccumulatorKHR as u64))
        || v(r.usage).differs(Val::Known(usage::MatrixBKHR as u64))
    {
        cx.err(
            &NV2_TRANSPOSE,
            i,
            format!(
                "transposes MatrixAccumulatorKHR to MatrixBKHR, found {} to {}",
                use_name(v(s.usage)),
                use_name(v(r.usage))
            ),
        );
    }
    if r.comp != s.comp {
        cx.err(
            &NV2_TRANSPOSE_COMPONENT,
            i,
            format!(
                "component types differ: {} to {}",
                cx.type_name(s.comp),
                cx.type_name(r.comp)
            ),
        )
        .rel_id(rt, "Result Type")
        .rel_id(cx.vty(src), "Matrix type");
    }
}

pub(super) fn workgroup_size_specified(cx: &mut Ctx, type_inst: usize) {
    let m = cx.m;
    let has_mode = m.instructions.iter().any(|inst| {
        matches!(inst.opcode, op::ExecutionMode | op::ExecutionModeId)
            && matches!(
                inst.w(1),
                Some(execution_mode::LocalSize | execution_mode::LocalSizeId)
            )
    });
    let has_builtin = m.instructions.iter().any(|inst| {
        inst.opcode == op::Decorate
            && inst.w(1) == Some(decoration::BuiltIn)
            && inst.w(2) == Some(coopmat_spirv::grammar::built_in::WorkgroupSize)
    });
    if !has_mode && !has_builtin {
        cx.err(&NV2_WORKGROUP_SIZE, type_inst, "a Workgroup-scope cooperative matrix type needs the workgroup size specified in the module (LocalSize, LocalSizeId or WorkgroupSize)");
    }
}
