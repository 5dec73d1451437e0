//! Atomic instructions.

use super::*;

impl<'m> Cx<'m> {
    /// Compiles `opcode` if it is of this family (see [`Family`]).
    pub(super) fn atomic_inst(&mut self, inst: &Inst, out: &mut Vec<Op>) -> Compiled {
        let (opcode, d, a) = (inst.opcode, inst.d, inst.a);
        let arg = |i: usize| operand(a, i);
        match opcode {
            op::AtomicLoad
            | op::AtomicStore
            | op::AtomicExchange
            | op::AtomicCompareExchange
            | op::AtomicCompareExchangeWeak
            | op::AtomicIIncrement
            | op::AtomicIDecrement
            | op::AtomicIAdd
            | op::AtomicISub
            | op::AtomicSMin
            | op::AtomicUMin
            | op::AtomicSMax
            | op::AtomicUMax
            | op::AtomicAnd
            | op::AtomicOr
            | op::AtomicXor
            | op::AtomicFAddEXT
            | op::AtomicFMinEXT
            | op::AtomicFMaxEXT => {
                let kind = match opcode {
                    op::AtomicLoad => AtomicOp::Load,
                    op::AtomicStore => AtomicOp::Store,
                    op::AtomicExchange => AtomicOp::Exchange,
                    op::AtomicCompareExchange | op::AtomicCompareExchangeWeak => AtomicOp::CmpXchg,
                    op::AtomicIIncrement => AtomicOp::IInc,
                    op::AtomicIDecrement => AtomicOp::IDec,
                    op::AtomicIAdd => AtomicOp::IAdd,
                    op::AtomicISub => AtomicOp::ISub,
                    op::AtomicSMin => AtomicOp::SMin,
                    op::AtomicUMin => AtomicOp::UMin,
                    op::AtomicSMax => AtomicOp::SMax,
                    op::AtomicUMax => AtomicOp::UMax,
                    op::AtomicAnd => AtomicOp::And,
                    op::AtomicOr => AtomicOp::Or,
                    op::AtomicXor => AtomicOp::Xor,
                    op::AtomicFAddEXT => AtomicOp::FAdd,
                    op::AtomicFMinEXT => AtomicOp::FMin,
                    _ => AtomicOp::FMax,
                };
                let ptr = arg(0)?;
                let pty = self.ty_of(ptr)?;
                let Ty::Pointer { pointee, .. } = self.t.get(pty)?.clone() else {
                    return bad("atomic on non-pointer");
                };
                let num = self.t.num(pointee)?;
                let (v, cmp) = match kind {
                    AtomicOp::Store => (self.col(arg(3)?)?, Col(0)),
                    AtomicOp::Load | AtomicOp::IInc | AtomicOp::IDec => (Col(0), Col(0)),
                    AtomicOp::CmpXchg => (self.col(arg(4)?)?, self.col(arg(5)?)?),
                    _ => (self.col(arg(3)?)?, Col(0)),
                };
                out.push(Op::Atomic(AtomicArgs {
                    op: kind,
                    num,
                    d: d.col,
                    ptr: self.col(ptr)?,
                    v,
                    cmp,
                }));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
