//! Arithmetic beyond the scalar-op table: bit casts and pointer conversions, QuantizeToF16, Any/All, vector and matrix products (expanded per component), extended arithmetic, BitFieldInsert.

use super::*;

impl<'m> Cx<'m> {
    /// Per-component operations of the scalar-op table (see [`Family`]).
    pub(super) fn scalar_op_inst(&mut self, inst: &Inst, out: &mut Vec<Op>) -> Compiled {
        let (opcode, rt, rid, d, a) = (inst.opcode, inst.rt, inst.rid, inst.d, inst.a);
        let arg = |i: usize| operand(a, i);
        // Plain per-component ops: the scalar-op table maps the opcode.
        let scalar = ScalarOpRow::for_opcode(opcode).map(|r| r.op);
        // Per-component ops read n components of every operand: a malformed module whose
        // operands have fewer would read past them (SPIR-V requires the same component count).
        if scalar.is_some() {
            let (_, n) = self.comps_of(arg(0)?)?;
            let ternary = matches!(scalar, Some(ScalarOp::Tern(_)));
            let count = match scalar {
                Some(ScalarOp::Bin(_)) => 2,
                Some(ScalarOp::Tern(_)) => 3,
                _ => 1,
            };
            for k in 0..count {
                let c = self.val(arg(k)?)?.ncols;
                // Ternary ops (BitFieldInsert/Extract) may take scalar offset and count.
                if c < n && !(ternary && k > 0 && c == 1) {
                    return bad(format!(
                        "operand {k} of %{rid} has {c} components, the operation needs {n}"
                    ));
                }
            }
        }
        if let Some(ScalarOp::Bin(b)) = scalar {
            let (num, n) = self.comps_of(arg(0)?)?;
            // Unsigned division or remainder by a constant power of two: a shift or a mask.
            if matches!(b, BinOp::UDiv | BinOp::UMod)
                && n == 1
                && !num.is_float()
                && let Ok(v) = self.const_u64(arg(1)?)
                && v.is_power_of_two()
            {
                let (op2, k) = if b == BinOp::UDiv {
                    (BinOp::ShrL, v.trailing_zeros() as u64)
                } else {
                    (BinOp::And, v - 1)
                };
                let kc = self.konst(k);
                out.push(Op::Bin(BinArgs {
                    op: op2,
                    num,
                    d: d.col,
                    a: self.col(arg(0)?)?,
                    b: kc,
                    n,
                    bs: false,
                    a_scalar: false,
                }));
                return Ok(true);
            }
            let num = if matches!(opcode, op::PtrEqual | op::PtrNotEqual) {
                Num::Int(64)
            } else {
                num
            };
            // A splat never built (`Cx::splat_operand`): its scalar for every component.
            let operand = |k: usize| match self.splats.get(&arg(k)?) {
                Some(&s) => Ok((self.col(s)?, true)),
                None => Ok((self.col(arg(k)?)?, false)),
            };
            let ((left, a_scalar), (right, bs)) = (operand(0)?, operand(1)?);
            out.push(Op::Bin(BinArgs {
                op: b,
                num,
                d: d.col,
                a: left,
                b: right,
                n,
                bs,
                a_scalar,
            }));
            return Ok(true);
        }
        if let Some(ScalarOp::Un(u)) = scalar {
            let (num, n) = self.comps_of(arg(0)?)?;
            out.push(Op::Un(UnArgs {
                op: u,
                num,
                d: d.col,
                a: self.col(arg(0)?)?,
                n,
            }));
            return Ok(true);
        }
        if let Some(ScalarOp::Tern(t)) = scalar {
            let (num, n) = self.comps_of(arg(0)?)?;
            // Operands with fewer components than the result (BitField offset and count) are
            // scalars applied to every component.
            let broadcast = |cx: &Self, i: usize| -> Result<bool, ExecError> {
                Ok(cx.comps_of(arg(i)?)?.1 < n)
            };
            out.push(Op::Tern(TernArgs {
                op: t,
                num,
                d: d.col,
                a: self.col(arg(0)?)?,
                b: self.col(arg(1)?)?,
                c: self.col(arg(2)?)?,
                n,
                bs: broadcast(self, 1)?,
                cs: broadcast(self, 2)?,
            }));
            return Ok(true);
        }
        if let Some(ScalarOp::Cvt(k)) = scalar {
            let (from, n) = self.comps_of(arg(0)?)?;
            let (to, _) = self.t.comps(rt)?;
            let k = if k == CvtKind::FConv
                && self
                    .m
                    .has_decoration(rid, decoration::SaturatedToLargestFloat8NormalConversionEXT)
            {
                CvtKind::FConvSat
            } else {
                k
            };
            out.push(Op::Cvt(CvtArgs {
                kind: k,
                from,
                to,
                d: d.col,
                a: self.col(arg(0)?)?,
                n,
            }));
            return Ok(true);
        }
        Ok(false)
    }

    /// Compiles `opcode` if it is of this family (see [`Family`]).
    pub(super) fn arith_inst(&mut self, inst: &Inst, out: &mut Vec<Op>) -> Result<bool, ExecError> {
        let Inst {
            opcode,
            rt,
            rid: _,
            d,
            a,
        } = *inst;
        let arg = |i: usize| operand(a, i);
        match opcode {
            op::Bitcast | op::ConvertUToPtr | op::ConvertPtrToU => {
                let src = arg(0)?;
                let sty = self.ty_of(src)?;
                let s_ptr = matches!(self.t.get(sty)?, Ty::Pointer { .. });
                let d_ptr = matches!(self.t.get(rt)?, Ty::Pointer { .. });
                let (from, na) = if s_ptr {
                    (Num::Int(64), 1)
                } else {
                    self.t.comps(sty)?
                };
                let (to, nd) = if d_ptr {
                    (Num::Int(64), 1)
                } else {
                    self.t.comps(rt)?
                };
                if from.bits() * na == to.bits() * nd && !(s_ptr || d_ptr)
                    || (from == to && na == nd)
                {
                    out.push(Op::Bitcast(BitcastArgs {
                        d: d.col,
                        a: self.col(src)?,
                        from,
                        na,
                        to,
                        nd,
                    }));
                } else if s_ptr || d_ptr {
                    // Pointer <-> integer or uvec2: an address is 64 bits.
                    if nd == 2 && to.bits() == 32 {
                        out.push(Op::Bitcast(BitcastArgs {
                            d: d.col,
                            a: self.col(src)?,
                            from: Num::Int(64),
                            na: 1,
                            to,
                            nd,
                        }));
                    } else if na == 2 && from.bits() == 32 {
                        out.push(Op::Bitcast(BitcastArgs {
                            d: d.col,
                            a: self.col(src)?,
                            from,
                            na,
                            to: Num::Int(64),
                            nd: 1,
                        }));
                    } else {
                        out.push(Op::Trunc(TruncArgs {
                            d: d.col,
                            a: self.col(src)?,
                            bits: to.bits().min(from.bits()) as u8,
                        }));
                    }
                } else {
                    return bad("OpBitcast between types of different sizes");
                }
            }
            op::QuantizeToF16 => {
                let (num, n) = self.comps_of(arg(0)?)?;
                out.push(Op::Cvt(CvtArgs {
                    kind: CvtKind::FConv,
                    from: num,
                    to: Num::F16,
                    d: d.col,
                    a: self.col(arg(0)?)?,
                    n,
                }));
                out.push(Op::Cvt(CvtArgs {
                    kind: CvtKind::FConv,
                    from: Num::F16,
                    to: num,
                    d: d.col,
                    a: d.col,
                    n,
                }));
            }
            op::Any | op::All => {
                let v = self.val(arg(0)?)?;
                let b = if opcode == op::Any {
                    BinOp::LOr
                } else {
                    BinOp::LAnd
                };
                out.push(Op::Copy(CopyArgs {
                    d,
                    a: Val { ncols: 1, ..v },
                }));
                for k in 1..v.ncols {
                    out.push(Op::Bin(BinArgs {
                        op: b,
                        num: Num::Bool,
                        d: d.col,
                        a: d.col,
                        b: v.col + k,
                        n: 1,
                        bs: false,
                        a_scalar: false,
                    }));
                }
            }
            op::VectorTimesScalar | op::MatrixTimesScalar => {
                let (num, _) = self.comps_of(arg(1)?)?;
                out.push(Op::Bin(BinArgs {
                    op: BinOp::FMul,
                    num,
                    d: d.col,
                    a: self.col(arg(0)?)?,
                    b: self.col(arg(1)?)?,
                    n: d.ncols,
                    bs: true,
                    a_scalar: false,
                }));
            }
            op::Dot => {
                let (num, n) = self.comps_of(arg(0)?)?;
                self.dot(
                    num,
                    d.col,
                    self.col(arg(0)?)?,
                    1,
                    self.col(arg(1)?)?,
                    1,
                    n,
                    out,
                );
            }
            op::SDot | op::UDot | op::SUDot | op::SDotAccSat | op::UDotAccSat | op::SUDotAccSat => {
                self.integer_dot(opcode, rt, d.col, a, out)?
            }
            op::MatrixTimesVector => {
                // M: C columns of R rows; v: C components.
                let mt = self.ty_of(arg(0)?)?;
                let Ty::Matrix { col, n: ncol } = self.t.get(mt)?.clone() else {
                    return bad("not a matrix");
                };
                let (num, rows) = self.t.comps(col)?;
                let (mc, vc) = (self.col(arg(0)?)?, self.col(arg(1)?)?);
                for r in 0..rows {
                    self.dot(num, d.col + r, mc + r, rows, vc, 1, ncol, out);
                }
            }
            op::VectorTimesMatrix => {
                let mt = self.ty_of(arg(1)?)?;
                let Ty::Matrix { col, n: ncol } = self.t.get(mt)?.clone() else {
                    return bad("not a matrix");
                };
                let (num, rows) = self.t.comps(col)?;
                let (vc, mc) = (self.col(arg(0)?)?, self.col(arg(1)?)?);
                for c in 0..ncol {
                    self.dot(num, d.col + c, vc, 1, mc + c * rows, 1, rows, out);
                }
            }
            op::MatrixTimesMatrix => {
                let at = self.ty_of(arg(0)?)?;
                let bt = self.ty_of(arg(1)?)?;
                let Ty::Matrix { col, n: k } = self.t.get(at)?.clone() else {
                    return bad("not a matrix");
                };
                let Ty::Matrix { n: nc, .. } = self.t.get(bt)?.clone() else {
                    return bad("not a matrix");
                };
                let (num, rows) = self.t.comps(col)?;
                let (ac, bc) = (self.col(arg(0)?)?, self.col(arg(1)?)?);
                for j in 0..nc {
                    for r in 0..rows {
                        self.dot(
                            num,
                            d.col + j * rows + r,
                            ac + r,
                            rows,
                            bc + j * k,
                            1,
                            k,
                            out,
                        );
                    }
                }
            }
            op::OuterProduct => {
                let va = self.val(arg(0)?)?;
                let vb = self.val(arg(1)?)?;
                let (num, _) = self.comps_of(arg(0)?)?;
                for j in 0..vb.ncols {
                    out.push(Op::Bin(BinArgs {
                        op: BinOp::FMul,
                        num,
                        d: d.col + j * va.ncols,
                        a: va.col,
                        b: vb.col + j,
                        n: va.ncols,
                        bs: true,
                        a_scalar: false,
                    }));
                }
            }
            op::Transpose => {
                let st = self.ty_of(arg(0)?)?;
                let Ty::Matrix { col, n: ncol } = self.t.get(st)?.clone() else {
                    return bad("not a matrix");
                };
                let (_, rows) = self.t.comps(col)?;
                let s = self.col(arg(0)?)?;
                for c in 0..ncol {
                    for r in 0..rows {
                        out.push(Op::Copy(CopyArgs {
                            d: Val {
                                col: d.col + r * ncol + c,
                                mat: Mat(0),
                                ncols: 1,
                                nmats: 0,
                            },
                            a: Val {
                                col: s + c * rows + r,
                                mat: Mat(0),
                                ncols: 1,
                                nmats: 0,
                            },
                        }));
                    }
                }
            }
            op::IAddCarry | op::ISubBorrow | op::UMulExtended | op::SMulExtended => {
                let (num, n) = self.comps_of(arg(0)?)?;
                let (x, y) = (self.col(arg(0)?)?, self.col(arg(1)?)?);
                // The result is a struct of two members shaped like the operands.
                if d.ncols != 2 * n || self.val(arg(1)?)?.ncols < n {
                    return bad(format!(
                        "the result type of an extended-arithmetic instruction must be a struct of two members of the operands' type ({} components for {n}-component operands)",
                        d.ncols
                    ));
                }
                let (lo, hi) = match opcode {
                    op::IAddCarry => (BinOp::IAdd, BinOp::AddCarry),
                    op::ISubBorrow => (BinOp::ISub, BinOp::SubBorrow),
                    op::UMulExtended => (BinOp::IMul, BinOp::UMulHi),
                    _ => (BinOp::IMul, BinOp::SMulHi),
                };
                out.push(Op::Bin(BinArgs {
                    op: lo,
                    num,
                    d: d.col,
                    a: x,
                    b: y,
                    n,
                    bs: false,
                    a_scalar: false,
                }));
                out.push(Op::Bin(BinArgs {
                    op: hi,
                    num,
                    d: d.col + n,
                    a: x,
                    b: y,
                    n,
                    bs: false,
                    a_scalar: false,
                }));
            }
            op::BitFieldInsert => {
                let (num, n) = self.comps_of(arg(0)?)?;
                out.push(Op::BfInsert(BfInsertArgs {
                    d: d.col,
                    base: self.col(arg(0)?)?,
                    ins: self.col(arg(1)?)?,
                    off: self.col(arg(2)?)?,
                    cnt: self.col(arg(3)?)?,
                    n,
                    bits: num.bits() as u8,
                }));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// SPV_KHR_integer_dot_product: OpSDot, OpUDot, OpSUDot and their AccSat forms. The
    /// components (of integer vectors, or the four bytes of 32-bit scalars with the
    /// PackedVectorFormat4x8Bit operand) are sign- or zero-extended by the instruction's
    /// signedness, multiplied and summed in 64 bits; the plain forms keep the low bits of the
    /// sum at the result's width, the AccSat forms add the accumulator and saturate to the
    /// result's range ("the result ... clamped", SPV_KHR_integer_dot_product).
    fn integer_dot(
        &mut self,
        opcode: u16,
        rt: u32,
        d: Col,
        a: &[u32],
        out: &mut Vec<Op>,
    ) -> Result<(), ExecError> {
        // One-component ops of the expansion.
        let extend = |signed: bool| {
            if signed {
                CvtKind::SConv
            } else {
                CvtKind::UConv
            }
        };
        let cvt = |kind, from, to, d, a| {
            Op::Cvt(CvtArgs {
                kind,
                from,
                to,
                d,
                a,
                n: 1,
            })
        };
        let bin = |op, num, d, a, b| {
            Op::Bin(BinArgs {
                op,
                num,
                d,
                a,
                b,
                n: 1,
                bs: false,
                a_scalar: false,
            })
        };
        let tern = |op, num, d, a, b, c| {
            Op::Tern(TernArgs {
                op,
                num,
                d,
                a,
                b,
                c,
                n: 1,
                bs: false,
                cs: false,
            })
        };
        let acc_sat = matches!(opcode, op::SDotAccSat | op::UDotAccSat | op::SUDotAccSat);
        let (a_signed, b_signed) = match opcode {
            op::SDot | op::SDotAccSat => (true, true),
            op::UDot | op::UDotAccSat => (false, false),
            _ => (true, false),
        };
        let (x, y) = (operand(a, 0)?, operand(a, 1)?);
        let (xnum, xn) = self.comps_of(x)?;
        let (ynum, yn) = self.comps_of(y)?;
        let (rnum, _) = self.t.comps(rt)?;
        let Num::Int(rbits) = rnum else {
            return bad("an integer dot product's result is not an integer");
        };
        // The packed format's literal follows the operands (after the accumulator).
        let packed = a.len() > 2 + usize::from(acc_sat);
        if xn != yn || xnum != ynum || (packed && (xn != 1 || xnum != Num::Int(32))) {
            return bad("integer dot product operands of different shapes");
        }
        let wide = Num::Int(64);
        let (xc, yc) = (self.col(x)?, self.col(y)?);
        let n = if packed { 4 } else { xn };
        let (eight, sum, ta, tb) = (
            self.konst(8),
            self.alloc_cols(1),
            self.alloc_cols(1),
            self.alloc_cols(1),
        );
        // Component k of an operand, extended to 64 bits, into `t`.
        let widen = |cx: &mut Self, src: Col, signed: bool, k: u32, t: Col, out: &mut Vec<Op>| {
            if packed {
                let offset = cx.konst(8 * k as u64);
                let op = if signed {
                    TernOp::SExtract
                } else {
                    TernOp::UExtract
                };
                out.push(tern(op, Num::Int(32), t, src, offset, eight));
                out.push(cvt(extend(signed), Num::Int(32), wide, t, t));
            } else {
                out.push(cvt(extend(signed), xnum, wide, t, src + k));
            }
        };
        for k in 0..n {
            widen(self, xc, a_signed, k, ta, out);
            widen(self, yc, b_signed, k, tb, out);
            if k == 0 {
                out.push(bin(BinOp::IMul, wide, sum, ta, tb));
            } else {
                out.push(bin(BinOp::IMul, wide, ta, ta, tb));
                out.push(bin(BinOp::IAdd, wide, sum, sum, ta));
            }
        }
        if acc_sat {
            let acc = self.col(operand(a, 2)?)?;
            // The accumulator and the result share the result's signedness: signed but for UDot.
            let signed = opcode != op::UDotAccSat;
            out.push(cvt(extend(signed), rnum, wide, ta, acc));
            out.push(bin(BinOp::IAdd, wide, sum, sum, ta));
            let (lo, hi) = if signed {
                let half = 1u64 << (rbits - 1);
                (half.wrapping_neg(), half - 1)
            } else {
                (0, u64::MAX >> (64 - rbits))
            };
            let (lo, hi) = (self.konst(lo), self.konst(hi));
            let clamp = if signed {
                TernOp::SClamp
            } else {
                TernOp::UClamp
            };
            out.push(tern(clamp, wide, sum, sum, lo, hi));
        }
        out.push(cvt(CvtKind::UConv, wide, rnum, d, sum));
        Ok(())
    }

    /// `d = Σ a[k·sa] · b[k·sb]` over `n` components: one [`Op::Dot`] for f32 (a pass over
    /// the lanes instead of 2n − 1 ops), else the multiplies and adds as column ops, whose
    /// f16 and f64 loops are vectorized where the fused op's would not be.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn dot(
        &mut self,
        num: Num,
        d: Col,
        a: Col,
        sa: u32,
        b: Col,
        sb: u32,
        n: u32,
        out: &mut Vec<Op>,
    ) {
        if num == Num::F32 {
            out.push(Op::Dot(DotArgs {
                num,
                d,
                a,
                sa,
                b,
                sb,
                n,
            }));
            return;
        }
        let tmp = self.alloc_cols(1);
        let bin = |op, d, a, b| {
            Op::Bin(BinArgs {
                op,
                num,
                d,
                a,
                b,
                n: 1,
                bs: false,
                a_scalar: false,
            })
        };
        out.push(bin(BinOp::FMul, d, a, b));
        for k in 1..n {
            out.push(bin(BinOp::FMul, tmp, a + k * sa, b + k * sb));
            out.push(bin(BinOp::FAdd, d, d, tmp));
        }
    }
}
