//! Cooperative-matrix family rules: generic instructions on cooperative matrices.

use super::*;

/// The arithmetic row of `o` if it is an element-wise arithmetic instruction on cooperative
/// matrices of the given flavour (the scalar-op table's matrix column: KHR "Arithmetic
/// instructions"; NV lacks OpFMul and OpIMul).
pub(super) fn matrix_arith(o: u16, khr: bool) -> Option<&'static ScalarOpRow> {
    ScalarOpRow::for_opcode(o)
        .filter(|r| r.class != OpClass::Conversion && r.allowed_on_matrix(khr))
}

/// Whether `o` is a numeric conversion defined on cooperative matrices (the table's
/// conversion rows, plus OpBitcast).
pub(super) fn is_conversion(o: u16) -> bool {
    o == op::Bitcast
        || ScalarOpRow::for_opcode(o)
            .is_some_and(|r| r.class == OpClass::Conversion && r.allowed_on_matrix(true))
}

pub(super) fn generic(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let rmat = cx.mat(rt);
    let o = inst.opcode;
    if matches!(
        o,
        op::CompositeConstruct | op::ConstantComposite | op::SpecConstantComposite
    ) {
        if let Some(m) = rmat {
            let n = inst.operands.len().saturating_sub(2);
            if n != 1 {
                cx.err(
                    &KHR_COMPOSITE,
                    i,
                    format!(
                        "a cooperative matrix composite takes exactly one constituent, found {n}"
                    ),
                );
            } else {
                let c = cx.op_word(inst, 2);
                if cx.vty(c) != m.comp {
                    cx.err(
                        &KHR_COMPOSITE,
                        i,
                        format!(
                            "the constituent must have the component type {}",
                            cx.type_name(m.comp)
                        ),
                    );
                }
            }
        }
        return;
    }
    if matches!(o, op::CompositeExtract | op::CompositeInsert) {
        let (comp_id, obj) = if o == op::CompositeExtract {
            (cx.op_word(inst, 2), None)
        } else {
            (cx.op_word(inst, 3), Some(cx.op_word(inst, 2)))
        };
        if let Some(m) = cx.vmat(comp_id) {
            let idx = inst
                .operands
                .len()
                .saturating_sub(if o == op::CompositeExtract { 3 } else { 4 });
            if idx != 1 {
                cx.err(
                    &KHR_EXTRACT,
                    i,
                    format!(
                        "component access into a cooperative matrix takes one index, found {idx}"
                    ),
                );
            }
            let elem_ty = match obj {
                None => rt,
                Some(ob) => cx.vty(ob),
            };
            if elem_ty != m.comp {
                cx.err(
                    &KHR_EXTRACT,
                    i,
                    format!(
                        "the component must have the matrix's component type {}",
                        cx.type_name(m.comp)
                    ),
                );
            }
            if obj.is_some() && rt != cx.vty(comp_id) {
                cx.err(
                    &KHR_EXTRACT,
                    i,
                    "OpCompositeInsert's Result Type must be the composite's type",
                );
            }
        }
        return;
    }
    let class = crate::ctx::desc(inst.opcode).map(|d| d.class).unwrap_or("");
    if !matches!(
        class,
        "Arithmetic"
            | "Bit"
            | "Relational_and_Logical"
            | "Conversion"
            | "Extension"
            | "Derivative"
            | "Composite"
    ) {
        return;
    }
    let first = inst.first_arg();
    let operand_mat = (first..inst.operands.len())
        .filter(|&k| inst.operands[k].kind == Some(OperandKind::IdRef))
        .map(|k| cx.op_word(inst, k))
        .find_map(|id| cx.vmat(id).map(|mm| (id, mm)));
    if rmat.is_none() && operand_mat.is_none() {
        return;
    }
    let khr = rmat.or(operand_mat.map(|x| x.1)).is_some_and(|m| m.khr);
    if let Some(row) = matrix_arith(o, khr) {
        let Some(r) = rmat else {
            cx.err(
                &KHR_ARITH,
                i,
                "arithmetic on cooperative matrices must produce a cooperative matrix",
            );
            return;
        };
        for k in first..inst.operands.len() {
            let id = cx.op_word(inst, k);
            if cx.vty(id) != rt {
                cx.err(
                    &KHR_ARITH,
                    i,
                    format!(
                        "operand {} must have the Result Type {}",
                        cx.name(id),
                        cx.type_name(rt)
                    ),
                )
                .rel_id(cx.vty(id), "operand type");
                return;
            }
        }
        let float_op = row.class == OpClass::Float;
        if float_op != matches!(cx.ty(r.comp), Ty::Float { .. }) {
            cx.err(
                &KHR_ARITH,
                i,
                format!(
                    "{} does not fit the component type {}",
                    crate::ctx::desc(inst.opcode).map(|d| d.name).unwrap_or("?"),
                    cx.type_name(r.comp)
                ),
            );
        }
        return;
    }
    if o == op::MatrixTimesScalar {
        let mat = cx.op_word(inst, 2);
        let s = cx.op_word(inst, 3);
        match (rmat, cx.vty(mat) == rt) {
            (Some(r), true) => {
                if cx.vty(s) != r.comp {
                    cx.err(
                        &KHR_MATRIX_TIMES_SCALAR,
                        i,
                        format!(
                            "Scalar must have the component type {}",
                            cx.type_name(r.comp)
                        ),
                    );
                }
            }
            _ => {
                cx.err(
                    &KHR_MATRIX_TIMES_SCALAR,
                    i,
                    "Matrix must have the Result Type",
                );
            }
        }
        return;
    }
    if is_conversion(o) {
        let src = cx.op_word(inst, 2);
        let (Some(r), Some(s)) = (rmat, cx.vmat(src)) else {
            cx.err(&KHR_CONVERT, i, "a conversion involving a cooperative matrix must have cooperative matrix operand and result");
            return;
        };
        let v = |id: u32| cx.val(id);
        if r.khr != s.khr
            || v(r.scope).differs(v(s.scope))
            || v(r.rows).differs(v(s.rows))
            || v(r.cols).differs(v(s.cols))
        {
            cx.err(
                &KHR_CONVERT,
                i,
                format!(
                    "conversion must keep Scope, Rows and Columns: {} to {}",
                    cx.type_name(cx.vty(src)),
                    cx.type_name(rt)
                ),
            );
            return;
        }
        if r.khr {
            let (ru, su) = (v(r.usage), v(s.usage));
            if ru.differs(su) {
                let relaxed = o != op::Bitcast
                    && (cx.has_cap(capability::CooperativeMatrixConversionsNV)
                        || cx.has_cap(capability::CooperativeMatrixConversionsEXT))
                    && su.known() == Some(usage::MatrixAccumulatorKHR as u64);
                if !relaxed {
                    cx.err(
                        &KHR_CONVERT,
                        i,
                        format!(
                            "conversion must keep Use ({} to {})",
                            use_name(su),
                            use_name(ru)
                        ),
                    );
                }
            }
        }
        // "OpBitcast on objects of cooperative matrix type whose Component Type are integer
        // types with the same Width" (SPV_KHR_cooperative_matrix, conversion instructions).
        if o == op::Bitcast
            && (!cx.is_int(r.comp) || !cx.is_int(s.comp) || cx.width(r.comp) != cx.width(s.comp))
        {
            cx.err(
                &KHR_CONVERT,
                i,
                "OpBitcast between cooperative matrices needs integer components of the same width",
            );
        }
        return;
    }
    if matches!(
        o,
        op::CopyObject | op::CopyLogical | op::CompositeConstructReplicateEXT
    ) {
        return;
    }
    let name = crate::ctx::desc(inst.opcode).map(|d| d.name).unwrap_or("?");
    cx.err(
        &KHR_ARITH,
        i,
        format!("{name} is not allowed on cooperative matrices"),
    );
}
