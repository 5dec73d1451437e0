//! Cooperative-matrix family rules: tangled instructions in callbacks.

use super::*;

/// Whether an instruction is tangled (executes across the invocations of a scope).
pub(super) fn is_tangled(cx: &Ctx, inst: &Instruction) -> bool {
    let o = inst.opcode;
    if o == op::ControlBarrier || coopmat_spirv::info::is_tangled_matrix_instruction(o) {
        return true;
    }
    let class = crate::ctx::desc(inst.opcode).map(|d| d.class).unwrap_or("");
    if matches!(class, "Group" | "Non-Uniform" | "Derivative") {
        return true;
    }
    if (matrix_arith(o, true).is_some()
        || is_conversion(o)
        || matches!(
            o,
            op::CompositeConstruct | op::CompositeConstructReplicateEXT | op::MatrixTimesScalar
        ))
        && (inst.result_type.is_some_and(|t| cx.is_coop_type(t))
            || (inst.first_arg()..inst.operands.len())
                .any(|k| cx.is_coop_type(cx.vty(inst.w(k).unwrap_or(0)))))
    {
        return true;
    }
    false
}

pub(super) fn no_tangled(cx: &mut Ctx, callbacks: &[(usize, u32, &'static str)]) {
    if callbacks.is_empty() {
        return;
    }
    let m = cx.m;
    // Direct facts per function: first tangled instruction and callees.
    let mut direct: HashMap<u32, (Option<usize>, Vec<u32>)> = HashMap::new();
    for f in m.functions() {
        let mut first = None;
        let mut callees = Vec::new();
        for b in &f.blocks {
            for i in b.body.clone() {
                let inst = &m.instructions[i];
                if inst.opcode == op::FunctionCall {
                    callees.push(inst.w(2).unwrap_or(0));
                }
                if first.is_none() && is_tangled(cx, inst) {
                    first = Some(i);
                }
            }
        }
        direct.insert(f.id, (first, callees));
    }
    let mut memo: HashMap<u32, Option<usize>> = HashMap::new();
    let mut reported: std::collections::HashSet<(u32, usize)> = Default::default();
    for &(i, f, what) in callbacks {
        let found = find_tangled(f, &direct, &mut memo, &mut Vec::new());
        if let Some(t) = found {
            if !reported.insert((f, i)) {
                continue;
            }
            let tname = crate::ctx::desc(m.instructions[t].opcode)
                .map(|d| d.name)
                .unwrap_or("?");
            let owner = m.owner(t).unwrap_or(0);
            let msg = if owner == f {
                format!(
                    "{what} {} contains the tangled instruction {tname}",
                    cx.name(f)
                )
            } else {
                format!(
                    "{what} {} calls {} which contains the tangled instruction {tname}",
                    cx.name(f),
                    cx.name(owner)
                )
            };
            cx.err(&NV2_NO_TANGLED, i, msg)
                .at(t, "tangled instruction")
                .rel_id(f, what);
        }
    }
}

pub(super) fn find_tangled(
    f: u32,
    direct: &HashMap<u32, (Option<usize>, Vec<u32>)>,
    memo: &mut HashMap<u32, Option<usize>>,
    stack: &mut Vec<u32>,
) -> Option<usize> {
    if let Some(&r) = memo.get(&f) {
        return r;
    }
    // Recursion is invalid SPIR-V anyway; the depth cap keeps hostile call chains from
    // exhausting the stack (and bounds the `contains` scan).
    if stack.len() > 512 || stack.contains(&f) {
        return None;
    }
    let (first, callees) = direct.get(&f)?;
    let mut r = *first;
    if r.is_none() {
        stack.push(f);
        for &c in callees {
            if let Some(t) = find_tangled(c, direct, memo, stack) {
                r = Some(t);
                break;
            }
        }
        stack.pop();
    }
    memo.insert(f, r);
    r
}
