//! Structured-control and function instructions that compile to ops: no-ops (merges, lines, phis: phis become edge copies), OpFunctionCall, OpControlBarrier.

use super::*;

impl<'m> Cx<'m> {
    /// Compiles `opcode` if it is of this family (see [`Family`]).
    pub(super) fn control_inst(&mut self, inst: &Inst, out: &mut Vec<Op>) -> Compiled {
        let (opcode, d, a) = (inst.opcode, inst.d, inst.a);
        let arg = |i: usize| operand(a, i);
        match opcode {
            op::Nop
            | op::Line
            | op::NoLine
            | op::LoopMerge
            | op::SelectionMerge
            | op::MemoryBarrier
            | op::Undef
            | op::Phi
            | op::Label => {}
            op::FunctionCall => {
                let callee = arg(0)?;
                let fi = *self
                    .func_index
                    .get(&callee)
                    .ok_or_else(|| ExecError::invalid("call to unknown function"))?;
                let f = self.m.function(callee).unwrap();
                let mut args = Vec::new();
                for (k, &pi) in f.params.iter().enumerate() {
                    let pid = self.m.instructions[pi].result_id.unwrap_or(0);
                    args.push((self.val(pid)?, self.val(arg(k + 1)?)?));
                }
                let ret = if d.ncols + d.nmats > 0 {
                    Some((d, Val::default()))
                } else {
                    None
                };
                out.push(Op::Call(CallArgs {
                    f: fi,
                    args: args.into(),
                    ret,
                }));
            }
            // Execution scope Subgroup (GLSL's subgroupBarrier) asks only the subgroup to be
            // there: ggml's KHR cooperative-matrix matmuls use one inside a branch that differs
            // between subgroups. Any other scope is taken as Workgroup (Vulkan allows only the
            // two for compute).
            op::ControlBarrier => out.push(Op::Barrier {
                subgroup: self.const_u64(arg(0)?)? == grammar::scope::Subgroup as u64,
            }),
            _ => return Ok(false),
        }
        Ok(true)
    }
}
