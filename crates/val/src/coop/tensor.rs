//! Cooperative-matrix family rules: tensor addressing.

use super::*;

pub(super) fn create_tensor(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let ok = match inst.opcode {
        op::CreateTensorLayoutNV => matches!(cx.ty(rt), Ty::Layout { .. }),
        _ => matches!(cx.ty(rt), Ty::View { .. }),
    };
    if !ok {
        cx.err(
            &TA_CREATE,
            i,
            format!(
                "Result Type {} must be a tensor {} type",
                cx.name(rt),
                if inst.opcode == op::CreateTensorLayoutNV {
                    "layout"
                } else {
                    "view"
                }
            ),
        );
    }
}

pub(super) fn tensor_set(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let obj = cx.op_word(inst, 2);
    let layout_op = matches!(
        inst.opcode,
        op::TensorLayoutSetDimensionNV
            | op::TensorLayoutSetStrideNV
            | op::TensorLayoutSliceNV
            | op::TensorLayoutSetClampValueNV
            | op::TensorLayoutSetBlockSizeNV
    );
    let ty_ok = if layout_op {
        matches!(cx.ty(rt), Ty::Layout { .. })
    } else {
        matches!(cx.ty(rt), Ty::View { .. })
    };
    if !ty_ok {
        cx.err(
            &TA_OPERAND_TYPES,
            i,
            format!(
                "Result Type must be a tensor {} type",
                if layout_op { "layout" } else { "view" }
            ),
        );
        return;
    }
    if cx.vty(obj) != rt {
        cx.err(
            &TA_OPERAND_TYPES,
            i,
            format!(
                "the input object {} must have the Result Type",
                cx.name(obj)
            ),
        )
        .rel_id(cx.vty(obj), "its type");
    }
    let n = inst.operands.len().saturating_sub(3);
    let expect = match (inst.opcode, tensor_dim(cx, rt)) {
        (op::TensorViewSetClipNV, _) => Some(4),
        (op::TensorLayoutSetClampValueNV, _) => Some(1),
        (op::TensorLayoutSliceNV, Some(d)) => Some(2 * d as usize),
        (_, Some(d)) => Some(d as usize),
        _ => None,
    };
    if let Some(e) = expect
        && e != n
    {
        cx.err(
            &TA_OPERANDS,
            i,
            format!(
                "{} operands expected for this tensor dimension, found {n}",
                e
            ),
        )
        .rel_id(rt, "tensor type");
    }
    for k in 3..inst.operands.len() {
        let v = cx.op_word(inst, k);
        if !cx.is_int32_value(v) {
            cx.err(
                &TA_OPERAND_TYPES,
                i,
                format!("operand {} must be a scalar 32-bit integer", cx.name(v)),
            );
            break;
        }
    }
}
