//! SPV_KHR_cooperative_matrix / SPV_NV_cooperative_matrix: loads, stores, MulAdd, Length (element-wise arithmetic on matrices is compiled from the scalar-op table in the dispatcher).

use super::*;

impl<'m> Cx<'m> {
    /// Element-wise arithmetic, conversions, scaling and splats whose result is a cooperative matrix (see [`Family`]).
    pub(super) fn matrix_elementwise_inst(&mut self, inst: &Inst, out: &mut Vec<Op>) -> Compiled {
        let (opcode, rt, rid, d, a) = (inst.opcode, inst.rt, inst.rid, inst.d, inst.a);
        let arg = |i: usize| operand(a, i);
        // Element-wise ops on cooperative matrices.
        if self.cm_of(rt).is_some() {
            let dm = d.mat;
            // The scalar-op table says which arithmetic and conversions apply to matrices.
            if let Some(row) = ScalarOpRow::for_opcode(opcode).filter(|r| r.allowed_on_matrix(true))
            {
                let a0 = self.val(arg(0)?)?.mat;
                out.push(match row.op {
                    ScalarOp::Un(op) => Op::CmUn(CmUnArgs { op, d: dm, a: a0 }),
                    ScalarOp::Bin(op) => Op::CmBin(CmBinArgs {
                        op,
                        d: dm,
                        a: a0,
                        b: self.val(arg(1)?)?.mat,
                    }),
                    ScalarOp::Cvt(kind) => Op::CmCvt(CmCvtArgs { kind, d: dm, a: a0 }),
                    ScalarOp::Tern(t) => return bad(format!("{t:?} on cooperative matrices")),
                });
                return Ok(true);
            }
            if opcode == op::CooperativeMatrixConvertUseEXT
                && self
                    .m
                    .decoration_param(rid, decoration::CooperativeMatrixTransposeEXT)
                    .is_some()
            {
                self.coop2_inst(opcode, rt, d, a, out)?;
                return Ok(true);
            }
            if matches!(opcode, op::CooperativeMatrixConvertUseEXT | op::Bitcast) {
                // Same component kind or same-width integers: a plain element copy.
                let src = self.val(arg(0)?)?;
                let kind = if self.mats[src.mat.ix()].num.is_float() {
                    CvtKind::FConv
                } else {
                    CvtKind::UConv
                };
                out.push(Op::CmCvt(CmCvtArgs {
                    kind,
                    d: dm,
                    a: src.mat,
                }));
                return Ok(true);
            }
            match opcode {
                op::MatrixTimesScalar => {
                    out.push(Op::CmScale(CmScaleArgs {
                        d: dm,
                        a: self.val(arg(0)?)?.mat,
                        s: self.col(arg(1)?)?,
                    }));
                    return Ok(true);
                }
                op::CompositeConstruct | op::CompositeConstructReplicateEXT => {
                    out.push(Op::CmSplat(CmSplatArgs {
                        d: dm,
                        v: self.col(arg(0)?)?,
                    }));
                    return Ok(true);
                }
                _ => {}
            }
        }
        Ok(false)
    }

    /// Compiles `opcode` if it is of this family (see [`Family`]).
    pub(super) fn coopmat_inst(&mut self, inst: &Inst, out: &mut Vec<Op>) -> Compiled {
        let (opcode, d, a) = (inst.opcode, inst.d, inst.a);
        let arg = |i: usize| operand(a, i);
        match opcode {
            op::CooperativeMatrixLoadKHR | op::CooperativeMatrixLoadNV => {
                let (ptr, stride, col_major, pbytes) =
                    self.cm_access(opcode == op::CooperativeMatrixLoadKHR, a, 1)?;
                // Lazy only where the shared-A kernel can read the tile in place. Any other
                // leaves the set, so that its MulAdds (compiled after it) do not take the
                // operand as lazy: its slot may hold another lazy load's record.
                let cm = self.mats[d.mat.ix()];
                if (cm.num, cm.rows, cm.cols, col_major) != (Num::F16, 16, 16, false) {
                    self.lazy_loads.remove(&inst.rid);
                }
                out.push(Op::CmLoad(CmLoadArgs {
                    d: d.mat,
                    ptr,
                    stride,
                    col_major,
                    pbytes,
                    lazy: self.lazy_loads.contains(&inst.rid),
                }));
            }
            op::CooperativeMatrixStoreKHR | op::CooperativeMatrixStoreNV => {
                let obj = self.val(arg(1)?)?;
                let (ptr, stride, col_major, pbytes) =
                    self.cm_access(opcode == op::CooperativeMatrixStoreKHR, a, 2)?;
                out.push(Op::CmStore(CmStoreArgs {
                    ptr,
                    m: obj.mat,
                    stride,
                    col_major,
                    pbytes,
                }));
            }
            op::CooperativeMatrixMulAddKHR | op::CooperativeMatrixMulAddNV => {
                let (va, vb, vc) = (self.val(arg(0)?)?, self.val(arg(1)?)?, self.val(arg(2)?)?);
                let mut flags = if opcode == op::CooperativeMatrixMulAddKHR {
                    a.get(3).copied().unwrap_or(0)
                } else {
                    0
                };
                if opcode == op::CooperativeMatrixMulAddNV {
                    // NV: signedness from the component types (SPV_NV_cooperative_matrix).
                    let s = |cx: &Self, m: Mat| cx.mats[m.ix()].signed;
                    use grammar::cooperative_matrix_operands as f;
                    if s(self, va.mat) {
                        flags |= f::MatrixASignedComponentsKHR
                    }
                    if s(self, vb.mat) {
                        flags |= f::MatrixBSignedComponentsKHR
                    }
                    if s(self, vc.mat) {
                        flags |= f::MatrixCSignedComponentsKHR
                    }
                    if s(self, d.mat) {
                        flags |= f::MatrixResultSignedComponentsKHR
                    }
                }
                let (ma, mb, mc, md) = (
                    self.mats[va.mat.ix()],
                    self.mats[vb.mat.ix()],
                    self.mats[vc.mat.ix()],
                    self.mats[d.mat.ix()],
                );
                if ma.rows != md.rows
                    || mb.cols != md.cols
                    || ma.cols != mb.rows
                    || mc.rows != md.rows
                    || mc.cols != md.cols
                {
                    return bad(format!(
                        "MulAdd shapes do not match: A {}x{}, B {}x{}, C {}x{}, result {}x{}",
                        ma.rows, ma.cols, mb.rows, mb.cols, mc.rows, mc.cols, md.rows, md.cols
                    ));
                }
                out.push(Op::CmMulAdd(CmMulAddArgs {
                    d: d.mat,
                    a: va.mat,
                    b: vb.mat,
                    c: vc.mat,
                    flags,
                    feeds_next: self.chain_heads.contains(&inst.rid),
                    lazy: [arg(0)?, arg(1)?].map(|x| self.lazy_loads.contains(&x)),
                }));
            }
            op::CooperativeMatrixLengthKHR | op::CooperativeMatrixLengthNV => {
                let cm = self
                    .t
                    .coopmat(arg(0)?)
                    .ok_or_else(|| ExecError::invalid("Length of a non-matrix type"))?;
                let len = self.t.mat_length(&cm) as u64;
                let c = self.alloc_cols(1);
                self.img[c.ix()] = len;
                // The length is a constant: copy it from a constant column.
                self.const_len.push((c, len));
                out.push(Op::Copy(CopyArgs {
                    d,
                    a: Val {
                        col: c,
                        mat: Mat(0),
                        ncols: 1,
                        nmats: 0,
                    },
                }));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Pointer column, stride column (when present), column-major flag and pointee size
    /// of a KHR or NV cooperative-matrix load (layout operands from `a[1]`) or store (from `a[2]`).
    pub(super) fn cm_access(
        &self,
        khr: bool,
        a: &[u32],
        first: usize,
    ) -> Result<(Col, Option<Col>, bool, u32), ExecError> {
        let arg = |i: usize| operand(a, i);
        let ptr = arg(0)?;
        let (stride, col_major) = if khr {
            let layout = self.const_u64(arg(first)?)? as u32;
            (a.get(first + 1).copied(), self.layout(layout)?)
        } else {
            (Some(arg(first)?), self.const_u64(arg(first + 1)?)? != 0)
        };
        let pbytes = self.pointee_bytes(ptr)?;
        let stride = stride.map(|s| self.col(s)).transpose()?;
        Ok((self.col(ptr)?, stride, col_major, pbytes))
    }

    pub(super) fn layout(&self, layout: u32) -> Result<bool, ExecError> {
        use grammar::cooperative_matrix_layout as l;
        match layout {
            l::RowMajorKHR => Ok(false),
            l::ColumnMajorKHR => Ok(true),
            l::RowBlockedInterleavedARM | l::ColumnBlockedInterleavedARM => unsupported(
                "unsupported: SPV_ARM_cooperative_matrix_layouts blocked interleaved layouts",
            ),
            x => bad(format!("unknown cooperative matrix layout {x}")),
        }
    }

    pub(super) fn pointee_bytes(&self, ptr: u32) -> Result<u32, ExecError> {
        let pty = self.ty_of(ptr)?;
        match self.t.get(pty)? {
            Ty::Pointer { pointee, .. } => Ok(self.t.size_align(*pointee)?.0),
            _ => bad("cooperative matrix load/store through a non-pointer"),
        }
    }
}
