//! `coopmat-layout-for-use`: with a device profile, a cooperative-matrix load whose memory
//! layout the profile measured as slow for the matrix's Use and component type, and a
//! blocked-interleaved (Arm) layout on a device without VK_ARM_cooperative_matrix_layouts.

use crate::{Cx, Finding, rules};
use coopmat_spirv::grammar::{cooperative_matrix_layout as layout, cooperative_matrix_use, op};
use coopmat_spirv::types::Type;

/// Findings start at this measured cost (percent of the baseline layout's time): smaller
/// differences are within what other code around the load changes.
const REPORTED_PERCENT: u32 = 120;

impl Cx<'_> {
    /// The rule at KHR load or store `i`.
    pub(crate) fn layout_for_use(&self, i: usize, out: &mut Vec<Finding>) {
        let Some(profile) = &self.config.profile else {
            return;
        };
        let m = self.m;
        let inst = &m.instructions[i];
        let load = inst.opcode == op::CooperativeMatrixLoadKHR;
        // Load: Result Type, Result, Pointer, MemoryLayout; store: Pointer, Object, MemoryLayout.
        let (matrix_ty, layout_id) = if load {
            (inst.result_type, inst.word(3))
        } else {
            (inst.word(1).and_then(|o| m.type_of(o)), inst.word(2))
        };
        let (Some(ty), Some(lay)) = (matrix_ty, layout_id.and_then(|l| m.constant_u64(l))) else {
            return;
        };
        let layout_name = match lay as u32 {
            layout::RowMajorKHR => "RowMajor",
            layout::ColumnMajorKHR => "ColumnMajor",
            layout::RowBlockedInterleavedARM => "RowBlockedInterleavedARM",
            layout::ColumnBlockedInterleavedARM => "ColumnBlockedInterleavedARM",
            _ => return,
        };
        let op_name = if load {
            "OpCooperativeMatrixLoadKHR"
        } else {
            "OpCooperativeMatrixStoreKHR"
        };
        if layout_name.ends_with("ARM") && !profile.arm_layouts {
            let msg = format!(
                "{op_name} with the {layout_name} layout, which needs VK_ARM_cooperative_matrix_layouts: {} does not expose it",
                profile.name
            );
            out.extend(self.finding(&rules::LAYOUT_FOR_USE, i, msg, Vec::new()));
            return;
        }
        if !load {
            return;
        }
        let Type::CoopKhr { comp, usage, .. } = m.type_view(ty) else {
            return;
        };
        let usage_name = match m.constant_u64(usage).map(|u| u as u32) {
            Some(cooperative_matrix_use::MatrixAKHR) => "A",
            Some(cooperative_matrix_use::MatrixBKHR) => "B",
            Some(cooperative_matrix_use::MatrixAccumulatorKHR) => "Accumulator",
            _ => return,
        };
        let Some(component) = component_name(m, comp) else {
            return;
        };
        for c in &profile.layout_costs {
            if c.usage == usage_name
                && c.component == component
                && c.layout == layout_name
                && c.percent >= REPORTED_PERCENT
            {
                let msg = format!(
                    "{op_name} loads a Use {usage_name} {component} matrix {layout_name}: on {} such loads measured {}% of the time of {} loads ({}); store the data the other way round or load it {}",
                    profile.name,
                    c.percent,
                    c.baseline,
                    if profile.layout_costs_source.is_empty() {
                        "the profile's layout_costs"
                    } else {
                        "see the profile's layout_costs_source"
                    },
                    c.baseline
                );
                out.extend(self.finding(&rules::LAYOUT_FOR_USE, i, msg, Vec::new()));
            }
        }
    }
}

/// A component type by the names the profiles use.
fn component_name(m: &coopmat_spirv::Module, ty: u32) -> Option<&'static str> {
    Some(match m.type_view(ty) {
        Type::Float {
            width: 16,
            encoding: None,
        } => "float16",
        Type::Float { width: 16, .. } => "bfloat16",
        Type::Float {
            width: 32,
            encoding: None,
        } => "float32",
        Type::Int { width: 8, signed } => {
            if signed {
                "sint8"
            } else {
                "uint8"
            }
        }
        Type::Int { width: 32, signed } => {
            if signed {
                "sint32"
            } else {
                "uint32"
            }
        }
        _ => return None,
    })
}
