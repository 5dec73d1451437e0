//! `coopmat-qcom-subgroup-requirements`: OpCompositeConstructCoopMatQCOM and
//! OpCompositeExtractCoopMatQCOM give row (or column) i of a matrix to the invocation whose
//! SubgroupLocalInvocationId is i, so the subgroup must have at least as many invocations as the
//! matrix has rows (Use A, Accumulator) or columns (Use B).

use crate::{Cx, Finding, rules};
use coopmat_spirv::grammar::{cooperative_matrix_use as usage, op};
use coopmat_spirv::types::Type;

impl Cx<'_> {
    /// The rule at QCOM construct or extract `i`.
    pub(crate) fn qcom_subgroup_requirements(&self, i: usize, out: &mut Vec<Finding>) {
        let m = self.m;
        let inst = &m.instructions[i];
        // Construct: the result is the matrix; extract: the operand (after result type and id).
        let matrix_ty = if inst.opcode == op::CompositeConstructCoopMatQCOM {
            inst.result_type
        } else {
            inst.word(2).and_then(|id| m.type_of(id))
        };
        let Some(Type::CoopKhr {
            rows,
            cols,
            usage: u,
            ..
        }) = matrix_ty.map(|t| m.type_view(t))
        else {
            return;
        };
        let (Some(rows), Some(cols), Some(u)) = (
            m.constant_u64(rows),
            m.constant_u64(cols),
            m.constant_u64(u),
        ) else {
            return;
        };
        let (spread, what) = if u == usage::MatrixBKHR as u64 {
            (cols, "columns")
        } else {
            (rows, "rows")
        };
        let op_name = if inst.opcode == op::CompositeConstructCoopMatQCOM {
            "OpCompositeConstructCoopMatQCOM takes"
        } else {
            "OpCompositeExtractCoopMatQCOM gives"
        };
        let mut problems = Vec::new();
        let [Some(x), Some(y), Some(z)] = self.a.workgroup_size() else {
            return self.report_qcom(i, op_name, spread, what, problems, out);
        };
        let invocations = x.saturating_mul(y).saturating_mul(z);
        if spread > invocations {
            problems.push(format!(
                "the workgroup has only {invocations} invocations, so no subgroup has {spread}"
            ));
        }
        if let Some(p) = &self.config.profile
            && p.subgroup_size > 0
        {
            let s = u64::from(p.subgroup_size);
            if spread > s {
                problems.push(format!(
                    "the subgroup size of {} is {s} (the matrix has {spread} {what}; SPV_QCOM_cooperative_matrix_conversion: at most the subgroup size)",
                    p.name
                ));
            }
            if !s.is_power_of_two() {
                problems.push(format!(
                    "the subgroup size of {} is {s}, not a power of two (the behavior is undefined)",
                    p.name
                ));
            }
            // GLSL_QCOM_cooperative_matrix_conversion, Use Accumulator: "NumCols must be one of
            // gl_SubgroupSize, gl_SubgroupSize/2, or gl_SubgroupSize/4".
            if u == usage::MatrixAccumulatorKHR as u64 && ![s, s / 2, s / 4].contains(&cols) {
                problems.push(format!(
                    "an accumulator's columns must be the subgroup size, half or a quarter of it ({s}, {}, {} on {}), not {cols}",
                    s / 2,
                    s / 4,
                    p.name
                ));
            }
        }
        self.report_qcom(i, op_name, spread, what, problems, out);
    }

    fn report_qcom(
        &self,
        i: usize,
        op_name: &str,
        spread: u64,
        what: &str,
        problems: Vec<String>,
        out: &mut Vec<Finding>,
    ) {
        for p in problems {
            let msg = format!(
                "{op_name} {what} 0..{spread} from the invocations with SubgroupLocalInvocationId 0..{spread}, but {p}"
            );
            out.extend(self.finding(&rules::QCOM_SUBGROUP_REQUIREMENTS, i, msg, Vec::new()));
        }
    }
}
