//! SPV_NV_cooperative_vector: loads, stores, matrix-vector products and the training
//! accumulations. Cooperative vector types are vectors of `n` columns (see `declare_type`), so
//! their arithmetic, conversions, composites and GLSL.std.450 calls compile as vectors do.

use super::*;
use crate::coopvec::{ComponentType, MatrixLayout};
use coopmat_spirv::grammar::cooperative_matrix_operands as cmo;
use coopmat_spirv::grammar::operands::{
    CooperativeVectorLoadNV as LoadOps, CooperativeVectorMatrixMulAddNV as MulAddOps,
    CooperativeVectorMatrixMulNV as MulOps, CooperativeVectorOuterProductAccumulateNV as OuterOps,
    CooperativeVectorReduceSumAccumulateNV as ReduceOps, CooperativeVectorStoreNV as StoreOps,
};

impl<'m> Cx<'m> {
    /// Compiles `opcode` if it is of this family (see [`Family`]).
    pub(super) fn coopvec_inst(&mut self, inst: &Inst, out: &mut Vec<Op>) -> Compiled {
        let (opcode, rt, d, a) = (inst.opcode, inst.rt, inst.d, inst.a);
        let arg = |i: usize| operand(a, i);
        let cv = match opcode {
            op::CooperativeVectorLoadNV => {
                let (num, n) = self.t.comps(rt)?;
                Cv::Load(CvMemArgs {
                    v: d.col,
                    n,
                    num,
                    ptr: self.col(arg(LoadOps::POINTER)?)?,
                    off: self.col(arg(LoadOps::OFFSET)?)?,
                })
            }
            op::CooperativeVectorStoreNV => {
                let obj = arg(StoreOps::OBJECT)?;
                let (num, n) = self.comps_of(obj)?;
                Cv::Store(CvMemArgs {
                    v: self.col(obj)?,
                    n,
                    num,
                    ptr: self.col(arg(StoreOps::POINTER)?)?,
                    off: self.col(arg(StoreOps::OFFSET)?)?,
                })
            }
            op::CooperativeVectorReduceSumAccumulateNV => {
                let v = arg(ReduceOps::V)?;
                let (num, n) = self.comps_of(v)?;
                if !matches!(num, Num::F16 | Num::F32) {
                    // VUID-RuntimeSpirv-OpCooperativeVectorReduceSumAccumulateNV-10092.
                    return bad(format!(
                        "OpCooperativeVectorReduceSumAccumulateNV accumulates {num:?} components; \
                         Vulkan allows 16- and 32-bit floats"
                    ));
                }
                Cv::ReduceSum(CvMemArgs {
                    v: self.col(v)?,
                    n,
                    num,
                    ptr: self.col(arg(ReduceOps::POINTER)?)?,
                    off: self.col(arg(ReduceOps::OFFSET)?)?,
                })
            }
            op::CooperativeVectorOuterProductAccumulateNV => {
                let (va, vb) = (arg(OuterOps::A)?, arg(OuterOps::B)?);
                let ((num, m), (num_b, n)) = (self.comps_of(va)?, self.comps_of(vb)?);
                if num != num_b || !num.is_float() {
                    return bad("OuterProductAccumulate needs A and B of one float component type");
                }
                if m as u64 * n as u64 > 1 << 24 {
                    return unsupported(format!(
                        "OuterProductAccumulate of {m}x{n} elements per invocation: larger than the engine's limit of 2^24"
                    ));
                }
                let acc = self.component_type(arg(OuterOps::MATRIX_INTERPRETATION)?)?;
                if !matches!(acc, ComponentType::F16 | ComponentType::F32) {
                    // VUID-RuntimeSpirv-OpCooperativeVectorOuterProductAccumulateNV-10093.
                    return bad(format!(
                        "OuterProductAccumulate into {} elements; Vulkan allows float16 and float32",
                        acc.name()
                    ));
                }
                let layout = self.matrix_layout(arg(OuterOps::MEMORY_LAYOUT)?)?;
                Cv::OuterProduct(CvOuterArgs {
                    a: self.col(va)?,
                    b: self.col(vb)?,
                    m,
                    n,
                    num,
                    matrix: CvMemOperand {
                        ptr: self.col(arg(OuterOps::POINTER)?)?,
                        off: self.col(arg(OuterOps::OFFSET)?)?,
                        ty: acc,
                    },
                    layout,
                    stride: self.stride_operand(a, OuterOps::MATRIX_STRIDE, layout)?,
                })
            }
            op::CooperativeVectorMatrixMulNV | op::CooperativeVectorMatrixMulAddNV => {
                Cv::MatMul(self.matmul(opcode == op::CooperativeVectorMatrixMulAddNV, rt, d, a)?)
            }
            _ => return Ok(false),
        };
        out.push(Op::CoopVec(Box::new(cv)));
        Ok(true)
    }

    fn matmul(&self, add: bool, rt: u32, d: Val, a: &[u32]) -> Result<CvMatMulArgs, ExecError> {
        let arg = |i: usize| operand(a, i);
        // MulNV's operands are MulAddNV's without the three bias operands.
        let (m_ix, k_ix, layout_ix, transpose_ix, stride_ix) = if add {
            (
                MulAddOps::M,
                MulAddOps::K,
                MulAddOps::MEMORY_LAYOUT,
                MulAddOps::TRANSPOSE,
                MulAddOps::MATRIX_STRIDE,
            )
        } else {
            (
                MulOps::M,
                MulOps::K,
                MulOps::MEMORY_LAYOUT,
                MulOps::TRANSPOSE,
                MulOps::MATRIX_STRIDE,
            )
        };
        let layout = self.matrix_layout(arg(layout_ix)?)?;
        let stride = self.stride_operand(a, stride_ix, layout)?;
        // The literal Cooperative Matrix Operands follow the stride id when there is one.
        let flags = match stride {
            Some(_) => a.get(stride_ix + 1).copied().unwrap_or(0),
            None => a.get(stride_ix).copied().unwrap_or(0),
        };
        let (m, k) = (
            self.const_u64(arg(m_ix)?)? as u32,
            self.const_u64(arg(k_ix)?)? as u32,
        );
        let transpose = self.const_u64(arg(transpose_ix)?)? != 0;
        let (d_num, d_n) = self.t.comps(rt)?;
        let input = arg(MulOps::INPUT)?;
        let (input_num, input_n) = self.comps_of(input)?;
        let input_ty = self.component_type(arg(MulOps::INPUT_INTERPRETATION)?)?;
        let matrix_ty = self.component_type(arg(MulOps::MATRIX_INTERPRETATION)?)?;
        let bias_ty = if add {
            Some(self.component_type(arg(MulAddOps::BIAS_INTERPRETATION)?)?)
        } else {
            None
        };
        let name = if add {
            "OpCooperativeVectorMatrixMulAddNV"
        } else {
            "OpCooperativeVectorMatrixMulNV"
        };
        // SPV_NV_cooperative_vector, OpCooperativeVectorMatrixMulAddNV: the rules a module can
        // break that the engine would otherwise read past.
        if d_n != m {
            return bad(format!("{name}: the result has {d_n} components, M is {m}"));
        }
        if !(matches!(d_num, Num::F16 | Num::F32 | Num::Int(32))) {
            return bad(format!(
                "{name}: result components must be 32-bit integers or 16/32-bit floats, not {d_num:?}"
            ));
        }
        if m == 0 || k == 0 {
            return bad(format!(
                "{name}: M and K must be positive (M = {m}, K = {k})"
            ));
        }
        // The decoded matrix is M·K values per distinct matrix: keep a hostile module from
        // asking for gigabytes (the largest Vulkan vector has 512 components).
        if m as u64 * k as u64 > 1 << 24 {
            return unsupported(format!(
                "{name}: a {m}x{k} matrix is larger than the engine's limit of 2^24 elements"
            ));
        }
        if input_ty.packed() {
            if input_num != Num::Int(32) {
                return bad(format!(
                    "{name}: a packed InputInterpretation needs 32-bit integer input components"
                ));
            }
            if input_n < k.div_ceil(4) {
                return bad(format!(
                    "{name}: {input_n} input words cannot hold K = {k} packed 8-bit values"
                ));
            }
        } else if input_n != k {
            return bad(format!(
                "{name}: the input has {input_n} components, K is {k}"
            ));
        }
        if matrix_ty.packed() || bias_ty.is_some_and(|t| t.packed()) {
            return bad(format!(
                "{name}: packed types are input interpretations only"
            ));
        }
        if transpose && !layout.is_optimal() {
            return bad(format!(
                "{name}: Transpose is not supported for the {} layout",
                layout.name()
            ));
        }
        if matches!(matrix_ty, ComponentType::E4M3 | ComponentType::E5M2) && !layout.is_optimal() {
            return bad(format!(
                "{name}: VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10090: {} matrices \
                 need an optimal layout, not {}",
                matrix_ty.name(),
                layout.name()
            ));
        }
        if matrix_ty.is_float() != input_ty.is_float() {
            return bad(format!(
                "{name}: input interpretation {} and matrix interpretation {} mix integer and \
                 floating-point arithmetic",
                input_ty.name(),
                matrix_ty.name()
            ));
        }
        Ok(CvMatMulArgs {
            d: d.col,
            d_num,
            d_signed: flags & cmo::MatrixResultSignedComponentsKHR != 0,
            m,
            k,
            input: self.col(input)?,
            input_num,
            input_signed: flags & cmo::MatrixBSignedComponentsKHR != 0,
            input_ty,
            matrix: CvMemOperand {
                ptr: self.col(arg(MulOps::MATRIX)?)?,
                off: self.col(arg(MulOps::MATRIX_OFFSET)?)?,
                ty: matrix_ty,
            },
            layout,
            transpose,
            stride,
            bias: match bias_ty {
                Some(ty) => Some(CvMemOperand {
                    ptr: self.col(arg(MulAddOps::BIAS)?)?,
                    off: self.col(arg(MulAddOps::BIAS_OFFSET)?)?,
                    ty,
                }),
                None => None,
            },
        })
    }

    /// An interpretation operand: a constant `VkComponentTypeKHR` value.
    fn component_type(&self, id: u32) -> Result<ComponentType, ExecError> {
        let v = self.const_u64(id)?;
        u32::try_from(v)
            .ok()
            .and_then(ComponentType::from_raw)
            .ok_or_else(|| ExecError::invalid(format!("%{id} = {v} is not a component type")))
    }

    /// A MemoryLayout operand.
    fn matrix_layout(&self, id: u32) -> Result<MatrixLayout, ExecError> {
        let v = self.const_u64(id)?;
        u32::try_from(v)
            .ok()
            .and_then(MatrixLayout::from_raw)
            .ok_or_else(|| {
                ExecError::invalid(format!(
                    "%{id} = {v} is not a cooperative vector matrix layout"
                ))
            })
    }

    /// The optional MatrixStride id at `ix`: needed by the row- and column-major layouts,
    /// ignored by the optimal ones. A following literal (Cooperative Matrix Operands) is told
    /// apart by not naming a value.
    fn stride_operand(
        &self,
        a: &[u32],
        ix: usize,
        layout: MatrixLayout,
    ) -> Result<Option<Col>, ExecError> {
        let stride = a.get(ix).and_then(|&id| self.val(id).ok().map(|v| v.col));
        if stride.is_none() && !layout.is_optimal() {
            return bad(format!(
                "the {} layout needs a MatrixStride operand",
                layout.name()
            ));
        }
        Ok(stride)
    }
}
