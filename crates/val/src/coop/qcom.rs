//! Cooperative-matrix family rules: QCOM.

use super::*;

pub(super) fn qcom_elem_ok(cx: &Ctx, elem: u32) -> bool {
    matches!(
        cx.ty(elem),
        Ty::Int { width: 32, .. }
            | Ty::Float {
                width: 32 | 16,
                encoding: None
            }
    )
}

pub(super) fn array_of(cx: &Ctx, ty: u32) -> Option<(u32, Option<u64>)> {
    match cx.ty(ty) {
        Ty::Array { elem, len } => Some((elem, cx.const_value(len))),
        _ => None,
    }
}

pub(super) fn qcom_bitcast(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let src = cx.op_word(inst, 2);
    let (Some((re, rl)), Some((se, sl))) = (array_of(cx, rt), array_of(cx, cx.vty(src))) else {
        cx.err(
            &QCOM_BITCAST_ARRAY,
            i,
            "Result Type and Source Array must be one-dimensional arrays",
        );
        return;
    };
    if !qcom_elem_ok(cx, re) || !qcom_elem_ok(cx, se) {
        cx.err(
            &QCOM_BITCAST_ARRAY,
            i,
            "array elements must be 32-bit integers, fp32 or fp16",
        );
        return;
    }
    if let (Some(rl), Some(sl), Some(rw), Some(sw)) = (rl, sl, cx.width(re), cx.width(se))
        && rl * rw as u64 != sl * sw as u64
    {
        cx.err(
            &QCOM_BITCAST_ARRAY,
            i,
            format!(
                "total sizes differ: {} bits to {} bits",
                sl * sw as u64,
                rl * rw as u64
            ),
        );
    }
}

pub(super) fn qcom_construct(cx: &mut Ctx, i: usize, inst: &Instruction, construct: bool) {
    let rule = if construct {
        &QCOM_CONSTRUCT
    } else {
        &QCOM_EXTRACT
    };
    let rt = inst.result_type.unwrap_or(0);
    let other = cx.op_word(inst, 2);
    let (mat_ty, arr_ty) = if construct {
        (rt, cx.vty(other))
    } else {
        (cx.vty(other), rt)
    };
    let Some(mt) = cx.mat(mat_ty).filter(|m| m.khr) else {
        cx.err(
            rule,
            i,
            if construct {
                "Result Type must be an OpTypeCooperativeMatrixKHR"
            } else {
                "the source must be a cooperative matrix"
            },
        );
        return;
    };
    let Some((elem, len)) = array_of(cx, arr_ty) else {
        cx.err(
            rule,
            i,
            "the per-invocation value must be a one-dimensional array",
        );
        return;
    };
    if cx.val(mt.scope).differs(Val::Known(scope::Subgroup as u64)) {
        cx.err(rule, i, "the cooperative matrix must have Subgroup scope");
    }
    let packed = matches!(
        cx.ty(elem),
        Ty::Int {
            width: 32,
            signed: false
        }
    ) && elem != mt.comp;
    if elem != mt.comp && !packed {
        cx.err(
            rule,
            i,
            format!(
                "array elements must be the component type {} or a 32-bit unsigned integer",
                cx.type_name(mt.comp)
            ),
        );
        return;
    }
    let cw = cx.width(mt.comp).unwrap_or(32) as u64;
    let (Some(u), rows, cols) = (
        cx.val(mt.usage).known(),
        cx.val(mt.rows).known(),
        cx.val(mt.cols).known(),
    ) else {
        return;
    };
    let is_float = matches!(cx.ty(mt.comp), Ty::Float { .. });
    let comp_ok = match u {
        0 | 1 => matches!((cw, is_float), (8, false) | (32, true) | (16, true)),
        _ => matches!((cw, is_float), (32, false) | (32, true) | (16, true)),
    };
    if !comp_ok {
        cx.err(
            rule,
            i,
            format!(
                "component type {} is not allowed for this Use",
                cx.type_name(mt.comp)
            ),
        );
        return;
    }
    // Use A: Columns span 256 bits; Use B: Rows span 256 bits (one row/column per invocation).
    let span = 256 / cw;
    let (fixed, line) = match u {
        0 => (cols, cols),
        1 => (rows, rows),
        _ => (None, cols),
    };
    if u <= 1 && fixed.is_some_and(|f| f != span) {
        cx.err(
            rule,
            i,
            format!(
                "with Use {} the {} must be {span} for {}",
                use_name(Val::Known(u)),
                if u == 0 { "Columns" } else { "Rows" },
                cx.type_name(mt.comp)
            ),
        );
        return;
    }
    let want = match (u, packed) {
        (0 | 1, true) => Some(8),
        (0 | 1, false) => line,
        (_, true) if cw == 16 => line.map(|c| c / 2),
        (_, _) => line,
    };
    if let (Some(w), Some(l)) = (want, len)
        && w != l
    {
        cx.err(
            rule,
            i,
            format!("the array must have {w} elements, found {l}"),
        );
    }
}

pub(super) fn qcom_sub_array(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let src = cx.op_word(inst, 2);
    let idx = cx.op_word(inst, 3);
    let (Some((re, rl)), Some((se, sl))) = (array_of(cx, rt), array_of(cx, cx.vty(src))) else {
        cx.err(
            &QCOM_SUB_ARRAY,
            i,
            "Result Type and Source Array must be one-dimensional arrays",
        );
        return;
    };
    if re != se || !qcom_elem_ok(cx, re) {
        cx.err(
            &QCOM_SUB_ARRAY,
            i,
            "the result must be an array of the source's element type (i32, u32, f32 or f16)",
        );
    }
    if !cx.is_int32_value(idx) {
        cx.err(&QCOM_SUB_ARRAY, i, "Start Index must be a 32-bit integer");
    }
    if let (Some(rl), Some(sl)) = (rl, sl) {
        if rl > sl {
            cx.err(
                &QCOM_SUB_ARRAY,
                i,
                format!("the result ({rl} elements) is longer than the source ({sl})"),
            );
        } else if let Some(s) = cx.const_value(idx)
            && s + rl > sl
        {
            cx.err(
                &QCOM_SUB_ARRAY,
                i,
                format!("Start Index {s} + {rl} exceeds the source length {sl}"),
            );
        }
    }
}
