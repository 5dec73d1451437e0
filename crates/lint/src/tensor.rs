//! The tensor-layout rules: `coopmat-decode-vector-block-size`, `coopmat-decode-vector-opportunity`
//! and the block-size half of `coopmat-store-stride-overlap`. Each follows the tensor layout
//! operand back to where its block size is set (through the layout instructions, variables,
//! phis and calls) and reasons over every block size that can reach the load or store.

use crate::flow::{Origin, vector_count};
use crate::{Cx, Finding, rules};
use coopmat_analysis::{Level as Uniformity, Step};
use coopmat_spirv::grammar::{OperandKind, op, tensor_addressing_operands as tao};
use coopmat_spirv::types::Dim;

/// A block size of the innermost dimension that may reach a tensor instruction.
#[derive(Clone, Copy, Debug)]
struct BlockSize {
    /// The instruction that sets it (or creates the layout with block size 1).
    at: usize,
    value: Size,
    /// The largest constant block size of any dimension set there.
    largest: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Size {
    Known(u64),
    /// A specialization constant, with its default.
    Spec(u64),
}

impl Size {
    /// The size, or the specialization constant's default.
    fn value(self) -> u64 {
        match self {
            Size::Known(v) | Size::Spec(v) => v,
        }
    }
}

/// The operands of a tensor load or store that the rules read.
struct TensorOperands {
    layout: u32,
    decode: Option<u32>,
    decode_vector: Option<u32>,
}

fn tensor_operands(inst: &coopmat_spirv::Instruction) -> Option<TensorOperands> {
    let load = inst.opcode == op::CooperativeMatrixLoadTensorNV;
    // Load: Result Type, Result, Pointer, Object, TensorLayout; store: Pointer, Object, TensorLayout.
    let layout = inst.word(if load { 4 } else { 2 })?;
    let tk = inst
        .operands
        .iter()
        .position(|o| o.kind == Some(OperandKind::TensorAddressingOperands));
    let (mut decode, mut decode_vector) = (None, None);
    if let Some(tk) = tk {
        let bits = inst.word(tk).unwrap_or(0);
        let mut k = tk + 1;
        if bits & tao::TensorView != 0 {
            k += 1;
        }
        if bits & tao::DecodeFunc != 0 {
            decode = inst.word(k);
            k += 1;
        }
        if bits & tao::DecodeVectorFunc != 0 {
            decode_vector = inst.word(k);
        }
    }
    Some(TensorOperands {
        layout,
        decode,
        decode_vector,
    })
}

impl Cx<'_> {
    /// Every innermost block size that may reach tensor layout `layout`; None when one of them
    /// cannot be told (set from a computed value, or the layout comes from memory the walk does
    /// not follow).
    fn innermost_block_sizes(&self, layout: u32) -> Option<Vec<BlockSize>> {
        let m = self.m;
        let mut out = Vec::new();
        let mut work = vec![layout];
        let mut seen = rustc_hash::FxHashSet::default();
        while let Some(id) = work.pop() {
            if !seen.insert(id) {
                continue;
            }
            for origin in self.flow.origins(m, id) {
                let Origin::Def(i) = origin else {
                    return None;
                };
                let inst = &m.instructions[i];
                match inst.opcode {
                    // Every dimension's block size is 1 until set (SPV_NV_tensor_addressing,
                    // OpCreateTensorLayoutNV).
                    op::CreateTensorLayoutNV => out.push(BlockSize {
                        at: i,
                        value: Size::Known(1),
                        largest: 1,
                    }),
                    op::TensorLayoutSetBlockSizeNV => {
                        let last = inst.operands.len().checked_sub(1)?;
                        let size = inst.word(last)?;
                        let largest = (3..inst.operands.len())
                            .filter_map(|k| inst.word(k).and_then(|s| m.constant_u64(s)))
                            .max()
                            .unwrap_or(1);
                        // A size computed from constants (a select, a variable) may take each.
                        for value in self.constant_values(size)? {
                            out.push(BlockSize {
                                at: i,
                                value,
                                largest: largest.max(value.value()),
                            });
                        }
                    }
                    op::TensorLayoutSetDimensionNV
                    | op::TensorLayoutSetStrideNV
                    | op::TensorLayoutSliceNV
                    | op::TensorLayoutSetClampValueNV => work.push(inst.word(2)?),
                    _ => return None,
                }
            }
        }
        Some(out)
    }

    /// The constants an integer value may take (through selects, phis, variables and integer
    /// bit casts or conversions); None when it may be anything else.
    fn constant_values(&self, id: u32) -> Option<Vec<Size>> {
        let m = self.m;
        let mut out = Vec::new();
        let mut work = vec![id];
        let mut seen = rustc_hash::FxHashSet::default();
        while let Some(id) = work.pop() {
            if !seen.insert(id) {
                continue;
            }
            for origin in self.flow.origins(m, id) {
                let Origin::Def(d) = origin else {
                    return None;
                };
                let inst = &m.instructions[d];
                if matches!(inst.opcode, op::Bitcast | op::UConvert | op::SConvert) {
                    work.push(inst.word(2)?);
                    continue;
                }
                out.push(match m.dim(inst.result_id?) {
                    Dim::Const(v) => Size::Known(v),
                    Dim::Spec { default, .. } => Size::Spec(default),
                    Dim::Computed | Dim::Unknown => return None,
                });
            }
        }
        Some(out)
    }

    /// The tensor-layout rules at tensor load or store `i`.
    pub(crate) fn tensor_block_sizes(&self, i: usize, out: &mut Vec<Finding>) {
        let m = self.m;
        let inst = &m.instructions[i];
        let Some(ops) = tensor_operands(inst) else {
            return;
        };
        let op_name = if inst.opcode == op::CooperativeMatrixLoadTensorNV {
            "OpCooperativeMatrixLoadTensorNV"
        } else {
            "OpCooperativeMatrixStoreTensorNV"
        };
        let sizes = self.innermost_block_sizes(ops.layout);
        let step = |b: &BlockSize, note: String| Step {
            inst: b.at,
            level: Uniformity::Constant,
            note,
        };
        let describe = |b: &BlockSize| match (m.instructions[b.at].opcode, b.value) {
            (op::CreateTensorLayoutNV, _) => {
                "the tensor layout is created here, with block size 1 in every dimension"
                    .to_string()
            }
            (_, Size::Known(v)) => format!(
                "the block size is set here (innermost {v}, largest {})",
                b.largest
            ),
            (_, Size::Spec(v)) => format!(
                "the innermost block size is set here from a specialization constant (default {v})"
            ),
        };
        let value = |b: &BlockSize| b.value.value();
        if inst.opcode == op::CooperativeMatrixStoreTensorNV {
            // SPV_NV_cooperative_matrix2, Tensor Addressing Operands: "a block size larger than
            // 1 must not be used with OpCooperativeMatrixStoreTensorNV because it will lead to
            // data races".
            for b in sizes.iter().flatten().filter(|b| b.largest > 1) {
                let msg = format!(
                    "{op_name} with a tensor layout whose block size is {} in some dimension: a block size above 1 must not be used with tensor stores (its blocks' elements race)",
                    b.largest
                );
                let chain = vec![step(b, describe(b))];
                out.extend(self.finding(&rules::STORE_STRIDE_OVERLAP, i, msg, chain));
            }
            return;
        }
        if let Some(f) = ops.decode_vector {
            let Some(width) = self.decode_vector_width(f) else {
                return;
            };
            for b in sizes.iter().flatten().filter(|b| value(b) % width != 0) {
                let msg = format!(
                    "{op_name} passes DecodeVectorFunc {} (V = {width}), but the innermost block size of its tensor layout can be {}, not a multiple of {width}: the load is undefined when the implementation calls DecodeVectorFunc",
                    self.name(f),
                    value(b)
                );
                let chain = vec![step(b, describe(b))];
                out.extend(self.finding(&rules::DECODE_VECTOR_BLOCK_SIZE, i, msg, chain));
            }
        } else if let (Some(f), Some(sizes)) = (ops.decode, sizes)
            && !sizes.is_empty()
            && sizes.iter().all(|b| matches!(b.value, Size::Known(_)))
        {
            let common = sizes.iter().map(value).fold(0, gcd);
            let Some(width) = [8u64, 4, 2].into_iter().find(|w| common % w == 0) else {
                return;
            };
            let msg = format!(
                "{op_name} decodes one element per call of DecodeFunc {}, and every block size that reaches it ({}) is a multiple of {width}: a DecodeVectorFunc returning {width} components (SPV_NV_cooperative_matrix_decode_vector) would let the implementation unpack {width} elements at once",
                self.name(f),
                join(sizes.iter().map(value)),
            );
            let chain = sizes.iter().map(|b| step(b, describe(b))).collect();
            out.extend(self.finding(&rules::DECODE_VECTOR_OPPORTUNITY, i, msg, chain));
        }
    }

    /// V: the component count of a DecodeVectorFunc's return type.
    fn decode_vector_width(&self, f: u32) -> Option<u64> {
        let def = self.m.def(f)?;
        vector_count(self.m, def.result_type?).map(u64::from)
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn join(values: impl Iterator<Item = u64>) -> String {
    let mut v: Vec<u64> = values.collect();
    v.sort_unstable();
    v.dedup();
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}
