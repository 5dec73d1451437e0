//! Cooperative-matrix family rules: types.

use super::*;

/// Checks OpTypeCooperativeMatrixKHR; returns whether its scope is Workgroup.
pub(super) fn type_khr(cx: &mut Ctx, i: usize, inst: &Instruction) -> bool {
    let comp = cx.op_word(inst, 1);
    if !cx.is_numerical(comp) {
        cx.err(
            &KHR_TYPE_COMPONENT,
            i,
            format!(
                "Component Type {} is not a scalar numerical type",
                cx.name(comp)
            ),
        )
        .rel_id(comp, "component type");
    }
    let names = ["Scope", "Rows", "Columns", "Use"];
    for (k, name) in names.iter().enumerate() {
        let id = cx.op_word(inst, 2 + k);
        if !cx.is_constant(id) || !cx.is_int32_value(id) {
            cx.err(
                &KHR_TYPE_OPERANDS,
                i,
                format!(
                    "{name} {} must be a constant instruction with scalar 32-bit integer type",
                    cx.name(id)
                ),
            )
            .rel_id(id, name.to_string());
        }
    }
    let use_id = cx.op_word(inst, 5);
    if let Some(u) = cx.const_value(use_id)
        && u > usage::MatrixAccumulatorKHR as u64
    {
        cx.err(&KHR_TYPE_USE, i, format!("Use {u} is not a Cooperative Matrix Use (MatrixAKHR 0, MatrixBKHR 1, MatrixAccumulatorKHR 2)"))
                .rel_id(use_id, "Use");
    }
    let scope_id = cx.op_word(inst, 2);
    let mut wg = false;
    if let Some(s) = cx.const_or_default(scope_id) {
        let vulkan = cx.opts.target_env.is_vulkan();
        if s > scope::ShaderCallKHR as u64 {
            cx.err(
                &KHR_TYPE_SCOPE,
                i,
                format!("Scope {s} is not a valid Scope"),
            )
            .rel_id(scope_id, "Scope");
        } else if vulkan && s != scope::Subgroup as u64 && s != scope::Workgroup as u64 {
            cx.err(
                &KHR_TYPE_SCOPE,
                i,
                format!(
                    "Vulkan limits cooperative matrix Scope to Subgroup or Workgroup, found {s}"
                ),
            )
            .rel_id(scope_id, "Scope");
        }
        wg = s == scope::Workgroup as u64;
    }
    wg
}

pub(super) fn type_nv(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let scope_id = cx.op_word(inst, 2);
    if let Some(s) = cx.const_or_default(scope_id)
        && (s > scope::ShaderCallKHR as u64
            || (cx.opts.target_env.is_vulkan()
                && s != scope::Subgroup as u64
                && s != scope::Workgroup as u64))
    {
        cx.err(
            &NV_TYPE,
            i,
            format!(
                "Scope {s} is not a valid cooperative matrix Scope (Vulkan: Subgroup or Workgroup)"
            ),
        )
        .rel_id(scope_id, "Scope");
    }
    let comp = cx.op_word(inst, 1);
    if !cx.is_numerical(comp) {
        cx.err(
            &NV_TYPE,
            i,
            format!(
                "Component Type {} is not a scalar numerical type",
                cx.name(comp)
            ),
        );
    }
    for (k, name) in ["Scope", "Rows", "Columns"].iter().enumerate() {
        let id = cx.op_word(inst, 2 + k);
        if !cx.is_constant(id) || !cx.is_int32_value(id) {
            cx.err(
                &NV_TYPE,
                i,
                format!(
                    "{name} {} must be a constant instruction with scalar 32-bit integer type",
                    cx.name(id)
                ),
            )
            .rel_id(id, name.to_string());
        }
    }
}

pub(super) fn type_coopvec(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let comp = cx.op_word(inst, 1);
    if !cx.is_numerical(comp) {
        cx.err(
            &CV_TYPE,
            i,
            format!(
                "Component Type {} is not a scalar numerical type",
                cx.name(comp)
            ),
        );
    }
    let n = cx.op_word(inst, 2);
    if !cx.is_constant(n) || !cx.is_int32_value(n) {
        cx.err(
            &CV_TYPE,
            i,
            "Component Count must be a constant instruction with scalar 32-bit integer type",
        )
        .rel_id(n, "Component Count");
    } else if cx.const_value(n) == Some(0) {
        cx.err(&CV_TYPE, i, "Component Count must be at least 1");
    }
}

/// Checks a Dim-like type operand: constant (gap rule), 32-bit integer, and returns its value.
pub(super) fn type_const_int(
    cx: &mut Ctx,
    i: usize,
    id: u32,
    what: &str,
    rule: &'static Rule,
) -> Option<u64> {
    if !cx.is_constant(id) {
        cx.err(
            &TA_TYPE_CONST,
            i,
            format!("{what} {} must be a constant instruction", cx.name(id)),
        )
        .rel_id(id, what.to_string());
        return None;
    }
    if !cx.is_int32_value(id) {
        cx.err(
            rule,
            i,
            format!(
                "{what} {} must have scalar 32-bit integer type",
                cx.name(id)
            ),
        )
        .rel_id(id, what.to_string());
        return None;
    }
    cx.const_or_default(id)
}

pub(super) fn type_layout(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let dim = cx.op_word(inst, 1);
    if let Some(d) = type_const_int(cx, i, dim, "Dim", &TA_LAYOUT_TYPE)
        && !(1..=5).contains(&d)
    {
        cx.err(
            &TA_LAYOUT_TYPE,
            i,
            format!("Dim {d} must be between 1 and 5"),
        );
    }
    let clamp = cx.op_word(inst, 2);
    if let Some(c) = type_const_int(cx, i, clamp, "ClampMode", &TA_LAYOUT_TYPE)
        && c > 4
    {
        cx.err(
            &TA_LAYOUT_TYPE,
            i,
            format!("ClampMode {c} is not a TensorClampMode"),
        );
    }
}

pub(super) fn type_view(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let dim = cx.op_word(inst, 1);
    let d = type_const_int(cx, i, dim, "Dim", &TA_VIEW_TYPE);
    if let Some(d) = d
        && !(1..=5).contains(&d)
    {
        cx.err(&TA_VIEW_TYPE, i, format!("Dim {d} must be between 1 and 5"));
    }
    let hd = cx.op_word(inst, 2);
    if !cx.is_constant(hd) {
        cx.err(
            &TA_TYPE_CONST,
            i,
            format!(
                "HasDimensions {} must be a constant instruction",
                cx.name(hd)
            ),
        );
    } else if cx.vshape_bool(hd) {
        cx.err(&TA_VIEW_TYPE, i, "HasDimensions must have boolean type");
    }
    let perms = inst.operands.len().saturating_sub(3);
    if let Some(d) = d
        && perms as u64 != d
    {
        cx.err(
            &TA_VIEW_TYPE,
            i,
            format!("{perms} permutation operands given, Dim is {d}"),
        );
        return;
    }
    let mut seen = [false; 8];
    for k in 0..perms {
        let p = cx.op_word(inst, 3 + k);
        match type_const_int(cx, i, p, "permutation operand", &TA_VIEW_TYPE) {
            Some(v) if (v as usize) < perms && !seen[v as usize] => seen[v as usize] = true,
            Some(_) => {
                cx.err(
                    &TA_VIEW_TYPE,
                    i,
                    format!("the permutation operands do not form a permutation of [0,{perms})"),
                );
                return;
            }
            None => {}
        }
    }
}

impl Ctx<'_> {
    /// True when `id` is NOT of boolean type.
    pub(super) fn vshape_bool(&self, id: u32) -> bool {
        self.ty(self.vty(id)) != Ty::Bool
    }
}

pub(super) fn storage(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let class = cx.op_word(inst, 2);
    if class == sc::Function || class == sc::Private {
        return;
    }
    let pointee = match cx.ty(inst.result_type.unwrap_or(0)) {
        Ty::Pointer { pointee, .. } => pointee,
        _ => match inst.opcode {
            op::UntypedVariableKHR => cx.op_word(inst, 3),
            _ => return,
        },
    };
    if cx.contains_coop(pointee, 0) {
        let nv = !matches!(cx.ty(pointee), Ty::CoopKhr { .. })
            && cx.has_cap(capability::CooperativeMatrixNV)
            && !cx.has_cap(capability::CooperativeMatrixKHR);
        let rule = if nv { &NV_STORAGE } else { &KHR_STORAGE };
        cx.err(
            rule,
            i,
            "cooperative matrix types may only be allocated in Function or Private storage",
        )
        .rel_id(pointee, "the allocated type");
    }
}
