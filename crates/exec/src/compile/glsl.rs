//! GLSL.std.450 instructions expanded into column ops (matrix determinant and inverse,
//! Frexp/Modf, packing), Ldexp's exponent width, and matrix layouts carried by pointers.

use super::*;
use coopmat_spirv::grammar::glsl_std_450 as g;

/// The layout a pointer carries from the struct member (with `MatrixStride`) it was reached
/// through: the loaded type alone does not say it (SPIR-V 2.18.2, Offset/MatrixStride/RowMajor
/// decorate the member, not the matrix type).
#[derive(Clone, Copy, Debug)]
pub(crate) enum PtrLay {
    /// A matrix (or array of matrices) with this column or row stride.
    Mat { stride: u32, row_major: bool },
    /// A column of a row-major matrix: its components are `elem_stride` bytes apart.
    Col { elem_stride: u32 },
}

impl Cx<'_> {
    /// A constant column that belongs to no id.
    pub(super) fn konst(&mut self, v: u64) -> Col {
        let c = self.alloc_cols(1);
        self.img[c.ix()] = v;
        self.const_len.push((c, v));
        c
    }

    /// The memory leaves of a `ty` value loaded or stored through pointer `ptr`.
    pub(super) fn leaves_through(
        &self,
        ptr: u32,
        ty: u32,
        out: &mut Vec<MemLeaf>,
    ) -> Result<(), ExecError> {
        match self.ptr_lay.get(&ptr) {
            Some(&PtrLay::Mat { stride, row_major }) => {
                self.t.mem_leaves_matrix(ty, stride, row_major, out)
            }
            Some(&PtrLay::Col { elem_stride }) => {
                let (num, n) = self.t.comps(ty)?;
                for i in 0..n {
                    out.push(MemLeaf::Scalar {
                        off: i * elem_stride,
                        num,
                        col: i,
                    });
                }
                Ok(())
            }
            None => self.t.mem_leaves(ty, out),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn bin(&self, op: BinOp, num: Num, d: Col, a: Col, b: Col, n: u32, bs: bool) -> Op {
        Op::Bin(BinArgs {
            op,
            num,
            d,
            a,
            b,
            n,
            bs,
            a_scalar: false,
        })
    }

    /// Determinant of the square sub-matrix `rows × cols` of the column-major matrix at column
    /// `m` (`dim` rows per column), by cofactor expansion along its first column; returns the
    /// column holding it.
    #[allow(clippy::too_many_arguments)]
    fn det(
        &mut self,
        num: Num,
        m: Col,
        dim: u32,
        rows: &[u32],
        cols: &[u32],
        out: &mut Vec<Op>,
    ) -> Col {
        let at = |r: u32, c: u32| m + (c * dim + r);
        match rows.len() {
            1 => at(rows[0], cols[0]),
            2 => {
                let (t, u) = (self.alloc_cols(1), self.alloc_cols(1));
                let (a, b) = (at(rows[0], cols[0]), at(rows[0], cols[1]));
                let (c, d) = (at(rows[1], cols[0]), at(rows[1], cols[1]));
                out.push(self.bin(BinOp::FMul, num, t, a, d, 1, false));
                out.push(self.bin(BinOp::FMul, num, u, b, c, 1, false));
                out.push(self.bin(BinOp::FSub, num, t, t, u, 1, false));
                t
            }
            _ => {
                let acc = self.alloc_cols(1);
                let prod = self.alloc_cols(1);
                for (i, &r) in rows.iter().enumerate() {
                    let sub: Vec<u32> = rows.iter().copied().filter(|&x| x != r).collect();
                    let minor = self.det(num, m, dim, &sub, &cols[1..], out);
                    let a = at(r, cols[0]);
                    if i == 0 {
                        out.push(self.bin(BinOp::FMul, num, acc, a, minor, 1, false));
                        continue;
                    }
                    out.push(self.bin(BinOp::FMul, num, prod, a, minor, 1, false));
                    let op = if i.is_multiple_of(2) {
                        BinOp::FAdd
                    } else {
                        BinOp::FSub
                    };
                    out.push(self.bin(op, num, acc, acc, prod, 1, false));
                }
                acc
            }
        }
    }

    /// GLSL.std.450 instructions not handled by the per-component tables of `ext_inst`
    /// (and Ldexp, whose exponent needs its own width); Ok(false) if `inst` is none of them.
    pub(super) fn ext_more(
        &mut self,
        inst: u32,
        rt: u32,
        d: Val,
        args: &[u32],
        out: &mut Vec<Op>,
    ) -> Result<bool, ExecError> {
        let arg = |i: usize| operand(args, i);
        match inst {
            g::Determinant | g::MatrixInverse => {
                let x = arg(0)?;
                let Ty::Matrix { col, n } = self.t.get(self.ty_of(x)?)?.clone() else {
                    return bad("Determinant/MatrixInverse of a non-matrix");
                };
                let (num, rows) = self.t.comps(col)?;
                if rows != n || !(2..=4).contains(&n) {
                    return bad(
                        "Determinant/MatrixInverse needs a square matrix of 2 to 4 columns",
                    );
                }
                let mut m = self.col(x)?;
                // Narrower floats are expanded in f32 (Vulkan lets 16-bit float operations
                // be computed at higher precision; the cofactor sums lose too much in f16).
                let wide = if num.bits() < 32 { Num::F32 } else { num };
                if wide != num {
                    let t = self.alloc_cols(n * n);
                    out.push(Op::Cvt(CvtArgs {
                        kind: CvtKind::FConv,
                        from: num,
                        to: wide,
                        d: t,
                        a: m,
                        n: n * n,
                    }));
                    m = t;
                }
                let all: Vec<u32> = (0..n).collect();
                let det = self.det(wide, m, n, &all, &all, out);
                if inst == g::Determinant {
                    out.push(Op::Cvt(CvtArgs {
                        kind: CvtKind::FConv,
                        from: wide,
                        to: num,
                        d: d.col,
                        a: det,
                        n: 1,
                    }));
                    return Ok(true);
                }
                let num_out = num;
                let num = wide;
                // inverse(row i, col j) = (-1)^(i+j) · minor(row j, col i) / det.
                let t = self.alloc_cols(n * n);
                for j in 0..n {
                    for i in 0..n {
                        let rows_: Vec<u32> = all.iter().copied().filter(|&r| r != j).collect();
                        let cols_: Vec<u32> = all.iter().copied().filter(|&c| c != i).collect();
                        let minor = self.det(num, m, n, &rows_, &cols_, out);
                        let dst = t + j * n + i;
                        let op = if (i + j).is_multiple_of(2) {
                            Op::Copy(CopyArgs {
                                d: Val {
                                    col: dst,
                                    mat: Mat(0),
                                    ncols: 1,
                                    nmats: 0,
                                },
                                a: Val {
                                    col: minor,
                                    mat: Mat(0),
                                    ncols: 1,
                                    nmats: 0,
                                },
                            })
                        } else {
                            Op::Un(UnArgs {
                                op: UnOp::FNeg,
                                num,
                                d: dst,
                                a: minor,
                                n: 1,
                            })
                        };
                        out.push(op);
                    }
                }
                out.push(self.bin(BinOp::FDiv, num, t, t, det, n * n, true));
                out.push(Op::Cvt(CvtArgs {
                    kind: CvtKind::FConv,
                    from: num,
                    to: num_out,
                    d: d.col,
                    a: t,
                    n: n * n,
                }));
                Ok(true)
            }
            g::Ldexp => {
                let (num, n) = self.t.comps(self.ty_of(arg(0)?)?)?;
                let (enum_, _) = self.t.comps(self.ty_of(arg(1)?)?)?;
                let mut e = self.col(arg(1)?)?;
                // The exponent is a signed integer of its own width: sign-extend narrow ones,
                // clamp 64-bit ones into the 32-bit range the op reads (any exponent beyond
                // it over- or underflows every float kind alike).
                match enum_.bits() {
                    32 => {}
                    64 => {
                        let t = self.alloc_cols(n);
                        let lo = self.konst(i32::MIN as i64 as u64);
                        let hi = self.konst(i32::MAX as u64);
                        out.push(Op::Tern(TernArgs {
                            op: TernOp::SClamp,
                            num: Num::Int(64),
                            d: t,
                            a: e,
                            b: lo,
                            c: hi,
                            n,
                            bs: true,
                            cs: true,
                        }));
                        e = t;
                    }
                    w => {
                        let t = self.alloc_cols(n);
                        out.push(Op::Cvt(CvtArgs {
                            kind: CvtKind::SConv,
                            from: Num::Int(w as u8),
                            to: Num::Int(32),
                            d: t,
                            a: e,
                            n,
                        }));
                        e = t;
                    }
                }
                out.push(self.bin(BinOp::Ldexp, num, d.col, self.col(arg(0)?)?, e, n, false));
                Ok(true)
            }
            g::Frexp | g::FrexpStruct | g::Modf | g::ModfStruct => {
                let x = arg(0)?;
                let (num, n) = self.t.comps(self.ty_of(x)?)?;
                let xc = self.col(x)?;
                let is_frexp = matches!(inst, g::Frexp | g::FrexpStruct);
                let (first, second) = if is_frexp {
                    (UnOp::FrexpMant, UnOp::FrexpExp)
                } else {
                    (UnOp::ModfFract, UnOp::Trunc)
                };
                // The second result: the struct's member 1, or a temporary to store.
                let second_ty = if matches!(inst, g::FrexpStruct | g::ModfStruct) {
                    match self.t.get(rt)? {
                        Ty::Struct(ms) if ms.len() == 2 => ms[1],
                        _ => return bad("FrexpStruct/ModfStruct result is not a 2-member struct"),
                    }
                } else {
                    let pty = self.ty_of(arg(1)?)?;
                    match self.t.get(pty)? {
                        Ty::Pointer { pointee, .. } => *pointee,
                        _ => return bad("Frexp/Modf operand 2 is not a pointer"),
                    }
                };
                let sc = if matches!(inst, g::FrexpStruct | g::ModfStruct) {
                    d.col + n
                } else {
                    self.alloc_cols(n)
                };
                out.push(Op::Un(UnArgs {
                    op: first,
                    num,
                    d: d.col,
                    a: xc,
                    n,
                }));
                out.push(Op::Un(UnArgs {
                    op: second,
                    num,
                    d: sc,
                    a: xc,
                    n,
                }));
                if is_frexp {
                    let (en, _) = self.t.comps(second_ty)?;
                    if en.bits() != 32 {
                        out.push(Op::Cvt(CvtArgs {
                            kind: CvtKind::SConv,
                            from: Num::Int(32),
                            to: en,
                            d: sc,
                            a: sc,
                            n,
                        }));
                    }
                }
                if matches!(inst, g::Frexp | g::Modf) {
                    let mut leaves = Vec::new();
                    self.leaves_through(arg(1)?, second_ty, &mut leaves)?;
                    out.push(Op::Store(StoreArgs {
                        ptr: self.col(arg(1)?)?,
                        v: Val {
                            col: sc,
                            mat: Mat(0),
                            ncols: n,
                            nmats: 0,
                        },
                        leaves: leaves.into(),
                    }));
                }
                Ok(true)
            }
            g::PackSnorm4x8 | g::PackUnorm4x8 | g::PackSnorm2x16 | g::PackUnorm2x16 => {
                // round(clamp(c, lo, 1) · scale), packed component 0 in the low bits.
                let snorm = matches!(inst, g::PackSnorm4x8 | g::PackSnorm2x16);
                let (k, w) = if matches!(inst, g::PackSnorm4x8 | g::PackUnorm4x8) {
                    (4u32, 8u8)
                } else {
                    (2, 16)
                };
                let scale = ((1u64 << (w - u8::from(snorm))) - 1) as f64;
                let lo = self.konst(floats::from_f64(Num::F32, if snorm { -1.0 } else { 0.0 }));
                let one = self.konst(floats::from_f64(Num::F32, 1.0));
                let sk = self.konst(floats::from_f64(Num::F32, scale));
                let t = self.alloc_cols(k);
                let xc = self.col(arg(0)?)?;
                out.push(Op::Tern(TernArgs {
                    op: TernOp::FClamp,
                    num: Num::F32,
                    d: t,
                    a: xc,
                    b: lo,
                    c: one,
                    n: k,
                    bs: true,
                    cs: true,
                }));
                out.push(self.bin(BinOp::FMul, Num::F32, t, t, sk, k, true));
                out.push(Op::Un(UnArgs {
                    op: UnOp::Round,
                    num: Num::F32,
                    d: t,
                    a: t,
                    n: k,
                }));
                let ti = self.alloc_cols(k);
                out.push(Op::Cvt(CvtArgs {
                    kind: if snorm { CvtKind::FToS } else { CvtKind::FToU },
                    from: Num::F32,
                    to: Num::Int(w),
                    d: ti,
                    a: t,
                    n: k,
                }));
                out.push(Op::Bitcast(BitcastArgs {
                    d: d.col,
                    a: ti,
                    from: Num::Int(w),
                    na: k,
                    to: Num::Int(32),
                    nd: 1,
                }));
                Ok(true)
            }
            g::UnpackSnorm4x8 | g::UnpackUnorm4x8 | g::UnpackSnorm2x16 | g::UnpackUnorm2x16 => {
                // Unorm: f / scale; Snorm: clamp(f / scale, -1, 1).
                let snorm = matches!(inst, g::UnpackSnorm4x8 | g::UnpackSnorm2x16);
                let (k, w) = if matches!(inst, g::UnpackSnorm4x8 | g::UnpackUnorm4x8) {
                    (4u32, 8u8)
                } else {
                    (2, 16)
                };
                let scale = ((1u64 << (w - u8::from(snorm))) - 1) as f64;
                let sk = self.konst(floats::from_f64(Num::F32, scale));
                let ti = self.alloc_cols(k);
                out.push(Op::Bitcast(BitcastArgs {
                    d: ti,
                    a: self.col(arg(0)?)?,
                    from: Num::Int(32),
                    na: 1,
                    to: Num::Int(w),
                    nd: k,
                }));
                out.push(Op::Cvt(CvtArgs {
                    kind: if snorm { CvtKind::SToF } else { CvtKind::UToF },
                    from: Num::Int(w),
                    to: Num::F32,
                    d: d.col,
                    a: ti,
                    n: k,
                }));
                out.push(self.bin(BinOp::FDiv, Num::F32, d.col, d.col, sk, k, true));
                if snorm {
                    let lo = self.konst(floats::from_f64(Num::F32, -1.0));
                    let one = self.konst(floats::from_f64(Num::F32, 1.0));
                    out.push(Op::Tern(TernArgs {
                        op: TernOp::FClamp,
                        num: Num::F32,
                        d: d.col,
                        a: d.col,
                        b: lo,
                        c: one,
                        n: k,
                        bs: true,
                        cs: true,
                    }));
                }
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

impl Cx<'_> {
    /// Gives a matrix phi's incoming value the phi's own slot where that is safe, so the back
    /// edge of a loop (`acc = MulAdd(a, b, acc)`) copies no tiles. The incoming value `v`
    /// (defined in the edge's source block `B`) qualifies when: it is a matrix-only value
    /// computed by an instruction, its one use is this phi operand; the phi is not read by any
    /// phi, is read in `B` only before `v` is defined (so never by `v`'s own instruction, and
    /// no op's result aliases an operand), and is read by no block reachable from `B` without
    /// passing through the phi's block (there the old value would be gone).
    pub(super) fn coalesce_phis(
        &mut self,
        fid: u32,
        du: &coopmat_spirv::module::DefUse,
    ) -> Result<(), ExecError> {
        use coopmat_spirv::grammar::op;
        let m = self.m;
        let Some(f) = m.function(fid) else {
            return Ok(());
        };
        let block_of = |i: usize| f.blocks.iter().position(|b| b.body.contains(&i));
        for hb in &f.blocks {
            for pi in hb.body.clone() {
                let phi = &m.instructions[pi];
                if phi.opcode != op::Phi {
                    continue;
                }
                let Some(pid) = phi.result_id else { continue };
                let Some(&pv) = self.vals.get(&pid) else {
                    continue;
                };
                if pv.ncols != 0 || pv.nmats != 1 {
                    continue;
                }
                let puses = du.uses(pid);
                if puses
                    .iter()
                    .any(|&(u, _)| m.instructions[u].opcode == op::Phi)
                {
                    continue;
                }
                let mut k = 2;
                while k + 1 < phi.operands.len() {
                    let (Some(src), Some(pred)) = (phi.word(k), phi.word(k + 1)) else {
                        break;
                    };
                    k += 2;
                    if self.const_ids.contains(&src) || du.uses(src).len() != 1 {
                        continue;
                    }
                    let Some(bi) = f.blocks.iter().position(|b| b.id == pred) else {
                        continue;
                    };
                    let b = &f.blocks[bi];
                    let Some(def) = b
                        .body
                        .clone()
                        .find(|&i| m.instructions[i].result_id == Some(src))
                    else {
                        continue;
                    };
                    if !matches!(self.vals.get(&src), Some(v) if v.ncols == 0 && v.nmats == 1) {
                        continue;
                    }
                    // Reads of the phi in B must come before the def.
                    if puses.iter().any(|&(u, _)| b.body.contains(&u) && u >= def) {
                        continue;
                    }
                    // Blocks reachable from B without passing the phi's block must not read it.
                    let mut seen = vec![false; f.blocks.len()];
                    let mut stack: Vec<usize> = super::block_succs(m, b)
                        .into_iter()
                        .filter_map(|id| f.blocks.iter().position(|x| x.id == id))
                        .collect();
                    let mut bad = false;
                    while let Some(x) = stack.pop() {
                        if f.blocks[x].id == hb.id || seen[x] {
                            continue;
                        }
                        seen[x] = true;
                        if puses.iter().any(|&(u, _)| block_of(u) == Some(x)) {
                            bad = true;
                            break;
                        }
                        stack.extend(
                            super::block_succs(m, &f.blocks[x])
                                .into_iter()
                                .filter_map(|id| f.blocks.iter().position(|y| y.id == id)),
                        );
                    }
                    if !bad {
                        self.vals.insert(src, pv);
                    }
                }
            }
        }
        Ok(())
    }
}

impl<'m> Cx<'m> {
    /// Compiles `opcode` if it is of this family (see [`Family`]).
    pub(super) fn glsl_inst(&mut self, inst: &Inst, out: &mut Vec<Op>) -> Compiled {
        if inst.opcode != op::ExtInst {
            return Ok(false);
        }
        self.ext_inst(inst.rt, inst.d, inst.a, out)?;
        Ok(true)
    }

    pub(super) fn ext_inst(
        &mut self,
        rt: u32,
        d: Val,
        a: &[u32],
        out: &mut Vec<Op>,
    ) -> Result<(), ExecError> {
        use grammar::glsl_std_450 as g;
        let set = a.first().copied().unwrap_or(0);
        let inst = a.get(1).copied().unwrap_or(0);
        let args = &a[2.min(a.len())..];
        if self.printf_set.contains(&set) {
            let fmt = self
                .strings
                .get(&args.first().copied().unwrap_or(0))
                .cloned()
                .unwrap_or_default();
            let mut pa = Vec::new();
            for &x in &args[1..] {
                let (num, n) = self.t.comps(self.ty_of(x)?)?;
                pa.push((self.col(x)?, num, n));
            }
            out.push(Op::Printf(PrintfArgs {
                fmt,
                args: pa.into(),
            }));
            return Ok(());
        }
        if self.other_sets.contains(&set) {
            return Ok(());
        }
        if !self.glsl_set.contains(&set) {
            return bad("unknown extended instruction set");
        }
        let arg_cols: Vec<Col> = args
            .iter()
            .map(|&id| self.col(id))
            .collect::<Result<_, _>>()?;
        let c = |i: usize| -> Result<Col, ExecError> {
            arg_cols
                .get(i)
                .copied()
                .ok_or_else(|| ExecError::invalid("missing operand"))
        };
        if self.ext_more(inst, rt, d, args, out)? {
            return Ok(());
        }
        let (num, n) = match args.first() {
            Some(&x) => self.t.comps(self.ty_of(x)?)?,
            None => return bad("GLSL.std.450 instruction without operands"),
        };
        let un = |u| {
            Op::Un(UnArgs {
                op: u,
                num,
                d: d.col,
                a: Col(0),
                n,
            })
        };
        let scalar = ScalarOpRow::for_glsl(inst).map(|r| r.op);
        if let Some(ScalarOp::Un(u)) = scalar {
            let mut o = un(u);
            if let Op::Un(UnArgs { a, .. }) = &mut o {
                *a = c(0)?;
            }
            out.push(o);
            return Ok(());
        }
        if let Some(ScalarOp::Bin(b)) = scalar {
            out.push(Op::Bin(BinArgs {
                op: b,
                num,
                d: d.col,
                a: c(0)?,
                b: c(1)?,
                n,
                bs: false,
                a_scalar: false,
            }));
            return Ok(());
        }
        if let Some(ScalarOp::Tern(t)) = scalar {
            out.push(Op::Tern(TernArgs {
                op: t,
                num,
                d: d.col,
                a: c(0)?,
                b: c(1)?,
                c: c(2)?,
                n,
                bs: false,
                cs: false,
            }));
            return Ok(());
        }
        match inst {
            g::Length | g::Normalize | g::Distance => {
                let x = if inst == g::Distance {
                    let t = self.alloc_cols(n);
                    out.push(Op::Bin(BinArgs {
                        op: BinOp::FSub,
                        num,
                        d: t,
                        a: c(0)?,
                        b: c(1)?,
                        n,
                        bs: false,
                        a_scalar: false,
                    }));
                    t
                } else {
                    c(0)?
                };
                let len = self.alloc_cols(1);
                self.dot(num, len, x, 1, x, 1, n, out);
                out.push(Op::Un(UnArgs {
                    op: UnOp::Sqrt,
                    num,
                    d: len,
                    a: len,
                    n: 1,
                }));
                if inst == g::Normalize {
                    let one = self.alloc_cols(1);
                    self.img[one.ix()] = floats::from_f64(num, 1.0);
                    self.const_len.push((one, self.img[one.ix()]));
                    out.push(Op::Bin(BinArgs {
                        op: BinOp::FDiv,
                        num,
                        d: len,
                        a: one,
                        b: len,
                        n: 1,
                        bs: false,
                        a_scalar: false,
                    }));
                    out.push(Op::Bin(BinArgs {
                        op: BinOp::FMul,
                        num,
                        d: d.col,
                        a: x,
                        b: len,
                        n,
                        bs: true,
                        a_scalar: false,
                    }));
                } else {
                    out.push(Op::Copy(CopyArgs {
                        d,
                        a: Val {
                            col: len,
                            mat: Mat(0),
                            ncols: 1,
                            nmats: 0,
                        },
                    }));
                }
            }
            g::Cross => {
                let (x, y) = (c(0)?, c(1)?);
                let t = self.alloc_cols(1);
                for i in 0..3u32 {
                    let (j, k) = ((i + 1) % 3, (i + 2) % 3);
                    out.push(Op::Bin(BinArgs {
                        op: BinOp::FMul,
                        num,
                        d: d.col + i,
                        a: x + j,
                        b: y + k,
                        n: 1,
                        bs: false,
                        a_scalar: false,
                    }));
                    out.push(Op::Bin(BinArgs {
                        op: BinOp::FMul,
                        num,
                        d: t,
                        a: x + k,
                        b: y + j,
                        n: 1,
                        bs: false,
                        a_scalar: false,
                    }));
                    out.push(Op::Bin(BinArgs {
                        op: BinOp::FSub,
                        num,
                        d: d.col + i,
                        a: d.col + i,
                        b: t,
                        n: 1,
                        bs: false,
                        a_scalar: false,
                    }));
                }
            }
            g::PackHalf2x16 => {
                let t = self.alloc_cols(2);
                out.push(Op::Cvt(CvtArgs {
                    kind: CvtKind::FConv,
                    from: Num::F32,
                    to: Num::F16,
                    d: t,
                    a: c(0)?,
                    n: 2,
                }));
                out.push(Op::Bitcast(BitcastArgs {
                    d: d.col,
                    a: t,
                    from: Num::F16,
                    na: 2,
                    to: Num::Int(32),
                    nd: 1,
                }));
            }
            g::UnpackHalf2x16 => {
                let t = self.alloc_cols(2);
                out.push(Op::Bitcast(BitcastArgs {
                    d: t,
                    a: c(0)?,
                    from: Num::Int(32),
                    na: 1,
                    to: Num::F16,
                    nd: 2,
                }));
                out.push(Op::Cvt(CvtArgs {
                    kind: CvtKind::FConv,
                    from: Num::F16,
                    to: Num::F32,
                    d: d.col,
                    a: t,
                    n: 2,
                }));
            }
            g::PackDouble2x32 => out.push(Op::Bitcast(BitcastArgs {
                d: d.col,
                a: c(0)?,
                from: Num::Int(32),
                na: 2,
                to: Num::F64,
                nd: 1,
            })),
            g::UnpackDouble2x32 => out.push(Op::Bitcast(BitcastArgs {
                d: d.col,
                a: c(0)?,
                from: Num::F64,
                na: 1,
                to: Num::Int(32),
                nd: 2,
            })),
            g::IMix => return unsupported("GLSL.std.450 IMix is not supported"),
            _ => {
                return unsupported(format!("GLSL.std.450 instruction {inst} is not supported"));
            }
        }
        Ok(())
    }
}
