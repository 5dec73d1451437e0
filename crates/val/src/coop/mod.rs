//! Rules of the cooperative-matrix family: SPV_NV_cooperative_matrix, SPV_KHR_cooperative_matrix,
//! SPV_NV_cooperative_matrix2, SPV_NV_tensor_addressing, SPV_NV_cooperative_matrix_decode_vector,
//! SPV_QCOM_cooperative_matrix_conversion and SPV_NV_cooperative_vector.

use crate::ctx::Words;
use crate::ctx::{Ctx, Ty};
use crate::rules::*;
use coopmat_spirv::binary::Instruction;
use coopmat_spirv::grammar::{
    OperandKind, capability, cooperative_matrix_layout as layout,
    cooperative_matrix_operands as mo, cooperative_matrix_reduce as red,
    cooperative_matrix_use as usage, decoration, execution_mode, memory_access, op, scope,
    storage_class as sc, tensor_addressing_operands as tao,
};
use coopmat_spirv::scalar_ops::{OpClass, ScalarOpRow};
use std::collections::HashMap;

mod coopvec;
mod generic;
mod khr_nv;
mod nv2;
mod qcom;
mod tangled;
mod tensor;
mod types;

use coopvec::*;
use generic::*;
use khr_nv::*;
use nv2::*;
use qcom::*;
use tangled::*;
use tensor::*;
use types::*;

/// A cooperative matrix type, KHR or NV.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mat {
    khr: bool,
    comp: u32,
    scope: u32,
    rows: u32,
    cols: u32,
    /// Use id (KHR only).
    usage: u32,
}

/// A dimension or enum operand of a type: known value, or the id when not a plain constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Val {
    Known(u64),
    Id(u32),
}

impl Val {
    /// Definitely different (both known and unequal); unknown values never conflict.
    fn differs(self, o: Val) -> bool {
        matches!((self, o), (Val::Known(a), Val::Known(b)) if a != b)
    }
    fn known(self) -> Option<u64> {
        match self {
            Val::Known(v) => Some(v),
            Val::Id(_) => None,
        }
    }
}

fn show(v: Val) -> String {
    match v {
        Val::Known(x) => x.to_string(),
        Val::Id(id) => format!("%{id}"),
    }
}

fn use_name(v: Val) -> String {
    match v.known() {
        Some(0) => "MatrixAKHR".into(),
        Some(1) => "MatrixBKHR".into(),
        Some(2) => "MatrixAccumulatorKHR".into(),
        _ => show(v),
    }
}

impl Ctx<'_> {
    fn mat(&self, ty: u32) -> Option<Mat> {
        match self.ty(ty) {
            Ty::CoopKhr {
                comp,
                scope,
                rows,
                cols,
                usage,
            } => Some(Mat {
                khr: true,
                comp,
                scope,
                rows,
                cols,
                usage,
            }),
            Ty::CoopNv {
                comp,
                scope,
                rows,
                cols,
            } => Some(Mat {
                khr: false,
                comp,
                scope,
                rows,
                cols,
                usage: 0,
            }),
            _ => None,
        }
    }
    fn vmat(&self, id: u32) -> Option<Mat> {
        self.mat(self.vty(id))
    }
    fn val(&self, id: u32) -> Val {
        match self.const_value(id) {
            Some(v) => Val::Known(v),
            None => Val::Id(id),
        }
    }
    fn is_coop_type(&self, ty: u32) -> bool {
        matches!(self.ty(ty), Ty::CoopKhr { .. } | Ty::CoopNv { .. })
    }
    /// Whether a type is or contains a cooperative matrix (through arrays and structs).
    fn contains_coop(&self, ty: u32, depth: u32) -> bool {
        if depth > 32 {
            return false;
        }
        match self.ty(ty) {
            Ty::CoopKhr { .. } | Ty::CoopNv { .. } => true,
            Ty::Array { elem, .. } | Ty::RuntimeArray { elem } => {
                self.contains_coop(elem, depth + 1)
            }
            Ty::Struct => self.def(ty).is_some_and(|d| {
                let inst = &self.m.instructions[d];
                (1..inst.operands.len())
                    .any(|k| self.contains_coop(inst.w(k).unwrap_or(0), depth + 1))
            }),
            _ => false,
        }
    }
    fn type_name(&self, ty: u32) -> String {
        self.type_name_at(ty, 0)
    }
    /// `depth` stops self-referencing (malformed) types from recursing without end.
    fn type_name_at(&self, ty: u32, depth: u32) -> String {
        if depth > 3 {
            return self.name(ty);
        }
        match self.ty(ty) {
            Ty::Int { width, signed } => format!("{}int{width}", if signed { "" } else { "u" }),
            Ty::Float {
                width,
                encoding: None,
            } => format!("float{width}"),
            Ty::Float { width, .. } => format!("float{width} (encoded)"),
            Ty::Bool => "bool".into(),
            Ty::Vector { comp, count } => {
                format!("vec{count} of {}", self.type_name_at(comp, depth + 1))
            }
            Ty::CoopKhr { .. } | Ty::CoopNv { .. } => {
                let m = self.mat(ty).expect("coop type");
                let mut s = format!(
                    "coopmat<{}, scope {}, {}x{}",
                    self.type_name_at(m.comp, depth + 1),
                    show(self.val(m.scope)),
                    show(self.val(m.rows)),
                    show(self.val(m.cols))
                );
                if m.khr {
                    s.push_str(&format!(", {}", use_name(self.val(m.usage))));
                }
                s.push('>');
                s
            }
            _ => self.name(ty),
        }
    }
    fn op_word(&self, inst: &Instruction, k: usize) -> u32 {
        inst.w(k).unwrap_or(0)
    }
    /// Argument `k` (counted after Result Type and Result, as `grammar::operands` counts) of an
    /// instruction with both.
    fn arg_word(&self, inst: &Instruction, k: usize) -> u32 {
        self.op_word(inst, 2 + k)
    }
}

pub(crate) fn check(cx: &mut Ctx) {
    let m = cx.m;
    let mut uses_workgroup_scope: Option<usize> = None;
    let mut callbacks: Vec<(usize, u32, &'static str)> = Vec::new();
    for (i, inst) in m.instructions.iter().enumerate() {
        match inst.opcode {
            op::TypeCooperativeMatrixKHR => {
                if type_khr(cx, i, inst) {
                    uses_workgroup_scope.get_or_insert(i);
                }
            }
            op::TypeCooperativeMatrixNV => type_nv(cx, i, inst),
            op::TypeTensorLayoutNV => type_layout(cx, i, inst),
            op::TypeTensorViewNV => type_view(cx, i, inst),
            op::TypeCooperativeVectorNV => type_coopvec(cx, i, inst),
            op::Variable | op::UntypedVariableKHR => storage(cx, i, inst),
            op::CooperativeMatrixLoadKHR | op::CooperativeMatrixStoreKHR => {
                load_store_khr(cx, i, inst)
            }
            op::CooperativeMatrixLoadNV | op::CooperativeMatrixStoreNV => {
                load_store_nv(cx, i, inst)
            }
            op::CooperativeMatrixMulAddKHR => muladd_khr(cx, i, inst),
            op::CooperativeMatrixMulAddNV => muladd_nv(cx, i, inst),
            op::CooperativeMatrixLengthKHR | op::CooperativeMatrixLengthNV => length(cx, i, inst),
            op::CooperativeMatrixLoadTensorNV | op::CooperativeMatrixStoreTensorNV => {
                tensor_load_store(cx, i, inst, &mut callbacks)
            }
            op::CooperativeMatrixReduceNV => {
                reduce(cx, i, inst);
                callbacks.push((i, cx.op_word(inst, 4), "CombineFunc"));
            }
            op::CooperativeMatrixPerElementOpNV => {
                per_element(cx, i, inst);
                callbacks.push((i, cx.op_word(inst, 3), "per-element Func"));
            }
            op::CooperativeMatrixConvertNV => convert_use(cx, i, inst),
            op::CooperativeMatrixTransposeNV => transpose(cx, i, inst),
            op::CreateTensorLayoutNV | op::CreateTensorViewNV => create_tensor(cx, i, inst),
            op::TensorLayoutSetDimensionNV
            | op::TensorLayoutSetStrideNV
            | op::TensorLayoutSliceNV
            | op::TensorLayoutSetClampValueNV
            | op::TensorLayoutSetBlockSizeNV
            | op::TensorViewSetDimensionNV
            | op::TensorViewSetStrideNV
            | op::TensorViewSetClipNV => tensor_set(cx, i, inst),
            op::BitCastArrayQCOM => qcom_bitcast(cx, i, inst),
            op::CompositeConstructCoopMatQCOM => qcom_construct(cx, i, inst, true),
            op::CompositeExtractCoopMatQCOM => qcom_construct(cx, i, inst, false),
            op::ExtractSubArrayQCOM => qcom_sub_array(cx, i, inst),
            op::CooperativeVectorLoadNV | op::CooperativeVectorStoreNV => {
                coopvec_load_store(cx, i, inst)
            }
            op::CooperativeVectorMatrixMulNV | op::CooperativeVectorMatrixMulAddNV => {
                coopvec_matmul(cx, i, inst)
            }
            op::CooperativeVectorOuterProductAccumulateNV
            | op::CooperativeVectorReduceSumAccumulateNV => coopvec_accumulate(cx, i, inst),
            _ => generic(cx, i, inst),
        }
    }
    if let Some(t) = uses_workgroup_scope {
        workgroup_size_specified(cx, t);
    }
    if cx.has_cap(capability::CooperativeMatrixKHR)
        && cx.has_cap(capability::Shader)
        && !cx.has_cap(capability::VulkanMemoryModel)
        && m.header.version() < (1, 5)
        && !cx.exts.contains("SPV_KHR_vulkan_memory_model")
    {
        cx.err_module(&KHR_VMM, "CooperativeMatrixKHR in a shader needs the Vulkan memory model (SPV_KHR_vulkan_memory_model or SPIR-V 1.5)");
    }
    no_tangled(cx, &callbacks);
}
