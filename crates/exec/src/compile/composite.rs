//! Composite instructions: copies, extract/insert/construct, shuffles, dynamic component access, OpSelect.

use super::*;

impl<'m> Cx<'m> {
    /// Compiles `opcode` if it is of this family (see [`Family`]).
    pub(super) fn composite_inst(&mut self, inst: &Inst, out: &mut Vec<Op>) -> Compiled {
        let (opcode, rt, d, a) = (inst.opcode, inst.rt, inst.d, inst.a);
        let arg = |i: usize| operand(a, i);
        match opcode {
            op::CopyObject | op::CopyLogical => out.push(Op::Copy(CopyArgs {
                d,
                a: self.val(arg(0)?)?,
            })),
            op::CompositeExtract => {
                let src = self.val(arg(0)?)?;
                let mut cur = self.ty_of(arg(0)?)?;
                let (mut c, mut mm) = (src.col, src.mat);
                for &i in &a[1..] {
                    if self.t.coopmat(cur).is_some() {
                        out.push(Op::CmExtract(CmExtractArgs {
                            d: d.col,
                            m: mm,
                            idx: ElemIndex::Literal(i),
                        }));
                        return Ok(true);
                    }
                    let (co, mo, t) = self.t.member(cur, i)?;
                    c += co;
                    mm += mo;
                    cur = t;
                }
                let (nc, nm) = self.t.shape(cur)?;
                out.push(Op::Copy(CopyArgs {
                    d,
                    a: Val {
                        col: c,
                        mat: mm,
                        ncols: nc,
                        nmats: nm,
                    },
                }));
            }
            op::CompositeInsert => {
                let obj = self.val(arg(0)?)?;
                let src = self.val(arg(1)?)?;
                out.push(Op::Copy(CopyArgs { d, a: src }));
                let mut cur = self.ty_of(arg(1)?)?;
                let (mut c, mut mm) = (d.col, d.mat);
                for &i in &a[2..] {
                    if self.t.coopmat(cur).is_some() {
                        out.push(Op::CmInsert(CmInsertArgs {
                            d: mm,
                            m: mm,
                            v: obj.col,
                            idx: ElemIndex::Literal(i),
                        }));
                        return Ok(true);
                    }
                    let (co, mo, t) = self.t.member(cur, i)?;
                    c += co;
                    mm += mo;
                    cur = t;
                }
                out.push(Op::Copy(CopyArgs {
                    d: Val {
                        col: c,
                        mat: mm,
                        ..obj
                    },
                    a: obj,
                }));
            }
            op::CompositeConstruct | op::CompositeConstructReplicateEXT => {
                let (mut c, mut mm) = (d.col, d.mat);
                let parts: Vec<u32> = if opcode == op::CompositeConstructReplicateEXT {
                    let n = match self.t.get(rt)? {
                        Ty::Vector { n, .. } | Ty::Array { len: n, .. } | Ty::Matrix { n, .. } => {
                            *n
                        }
                        _ => 1,
                    };
                    vec![arg(0)?; n as usize]
                } else {
                    a.to_vec()
                };
                for p in parts {
                    let v = self.val(p)?;
                    out.push(Op::Copy(CopyArgs {
                        d: Val {
                            col: c,
                            mat: mm,
                            ..v
                        },
                        a: v,
                    }));
                    c += v.ncols;
                    mm += v.nmats;
                }
            }
            op::VectorShuffle => {
                let va = self.val(arg(0)?)?;
                let vb = self.val(arg(1)?)?;
                for (k, &s) in a[2..].iter().enumerate() {
                    if s == u32::MAX {
                        continue;
                    }
                    let src = if s < va.ncols {
                        va.col + s
                    } else {
                        vb.col + (s - va.ncols)
                    };
                    out.push(Op::Copy(CopyArgs {
                        d: Val {
                            col: d.col + k as u32,
                            mat: Mat(0),
                            ncols: 1,
                            nmats: 0,
                        },
                        a: Val {
                            col: src,
                            mat: Mat(0),
                            ncols: 1,
                            nmats: 0,
                        },
                    }));
                }
            }
            op::VectorExtractDynamic => {
                let v = self.val(arg(0)?)?;
                let (num, _) = self.comps_of(arg(1)?)?;
                out.push(Op::ExtractDyn(ExtractDynArgs {
                    d: d.col,
                    a: v.col,
                    idx: self.col(arg(1)?)?,
                    n: v.ncols,
                    w: num.bits(),
                }));
            }
            op::VectorInsertDynamic => {
                let v = self.val(arg(0)?)?;
                let (num, _) = self.comps_of(arg(2)?)?;
                out.push(Op::InsertDyn(InsertDynArgs {
                    d: d.col,
                    a: v.col,
                    v: self.col(arg(1)?)?,
                    idx: self.col(arg(2)?)?,
                    n: v.ncols,
                    w: num.bits(),
                }));
            }
            op::Select => {
                let c = arg(0)?;
                let (_, cn) = self.comps_of(c)?;
                let va = self.val(arg(1)?)?;
                let vb = self.val(arg(2)?)?;
                out.push(Op::Select(SelectArgs {
                    d: d.col,
                    c: self.col(c)?,
                    a: va.col,
                    b: vb.col,
                    n: d.ncols,
                    cs: cn == 1 && d.ncols > 1,
                    nmats: d.nmats,
                    dm: d.mat,
                    am: va.mat,
                    bm: vb.mat,
                }));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
