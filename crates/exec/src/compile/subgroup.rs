//! GroupNonUniform instructions (and OpGroup* with Subgroup or Workgroup scope).

use super::*;

/// The GroupNonUniform opcode that runs a (uniform-control-flow) OpGroup* instruction: same
/// operands, and the same result when every invocation of the scope is active (the only case
/// OpGroup* allows). With Workgroup scope the group is the whole batch.
pub(crate) fn group_as_non_uniform(o: u16) -> Option<u16> {
    use coopmat_spirv::grammar::op;
    Some(match o {
        op::GroupAll => op::GroupNonUniformAll,
        op::GroupAny => op::GroupNonUniformAny,
        op::GroupBroadcast => op::GroupNonUniformBroadcast,
        op::GroupIAdd => op::GroupNonUniformIAdd,
        op::GroupFAdd => op::GroupNonUniformFAdd,
        op::GroupFMin => op::GroupNonUniformFMin,
        op::GroupUMin => op::GroupNonUniformUMin,
        op::GroupSMin => op::GroupNonUniformSMin,
        op::GroupFMax => op::GroupNonUniformFMax,
        op::GroupUMax => op::GroupNonUniformUMax,
        op::GroupSMax => op::GroupNonUniformSMax,
        _ => return None,
    })
}

impl<'m> Cx<'m> {
    /// Compiles `opcode` if it is of this family (see [`Family`]).
    pub(super) fn subgroup_inst(&mut self, inst: &Inst, out: &mut Vec<Op>) -> Compiled {
        let (opcode, rt, d, a) = (inst.opcode, inst.rt, inst.d, inst.a);
        match opcode {
            o if group_as_non_uniform(o).is_some() => {
                let nu = group_as_non_uniform(o).unwrap_or(o);
                self.subgroup(nu, rt, d, a, true, out)?;
            }
            o if (op::GroupNonUniformElect..=op::GroupNonUniformQuadSwap).contains(&o)
                || o == op::GroupNonUniformRotateKHR =>
            {
                self.subgroup(o, rt, d, a, false, out)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    pub(super) fn subgroup(
        &mut self,
        o: u16,
        rt: u32,
        d: Val,
        a: &[u32],
        group_op: bool,
        out: &mut Vec<Op>,
    ) -> Result<(), ExecError> {
        use grammar::group_operation as g;
        let arg = |i: usize| operand(a, i);
        let scope = self.const_u64(arg(0)?)? as u32;
        let workgroup = group_op && scope == grammar::scope::Workgroup;
        if scope != grammar::scope::Subgroup && !workgroup {
            return bad(
                "GroupNonUniform operations are supported with Subgroup scope only (OpGroup* with Subgroup or Workgroup)",
            );
        }
        let sgop = match o {
            op::GroupNonUniformElect => SgOp::Elect,
            op::GroupNonUniformAll => SgOp::All,
            op::GroupNonUniformAny => SgOp::Any,
            op::GroupNonUniformAllEqual => SgOp::AllEqual,
            op::GroupNonUniformBroadcast => SgOp::Broadcast,
            op::GroupNonUniformBroadcastFirst => SgOp::BroadcastFirst,
            op::GroupNonUniformBallot => SgOp::Ballot,
            op::GroupNonUniformInverseBallot => SgOp::InverseBallot,
            op::GroupNonUniformBallotBitExtract => SgOp::BallotBitExtract,
            op::GroupNonUniformBallotBitCount => SgOp::BallotBitCount,
            op::GroupNonUniformBallotFindLSB => SgOp::BallotFindLsb,
            op::GroupNonUniformBallotFindMSB => SgOp::BallotFindMsb,
            op::GroupNonUniformShuffle => SgOp::Shuffle,
            op::GroupNonUniformShuffleXor => SgOp::ShuffleXor,
            op::GroupNonUniformShuffleUp => SgOp::ShuffleUp,
            op::GroupNonUniformShuffleDown => SgOp::ShuffleDown,
            op::GroupNonUniformQuadBroadcast => SgOp::QuadBroadcast,
            op::GroupNonUniformQuadSwap => SgOp::QuadSwap,
            op::GroupNonUniformRotateKHR => SgOp::Rotate,
            op::GroupNonUniformIAdd => SgOp::Reduce(BinOp::IAdd),
            op::GroupNonUniformFAdd => SgOp::Reduce(BinOp::FAdd),
            op::GroupNonUniformIMul => SgOp::Reduce(BinOp::IMul),
            op::GroupNonUniformFMul => SgOp::Reduce(BinOp::FMul),
            op::GroupNonUniformSMin => SgOp::Reduce(BinOp::SMin),
            op::GroupNonUniformUMin => SgOp::Reduce(BinOp::UMin),
            op::GroupNonUniformFMin => SgOp::Reduce(BinOp::NMin),
            op::GroupNonUniformSMax => SgOp::Reduce(BinOp::SMax),
            op::GroupNonUniformUMax => SgOp::Reduce(BinOp::UMax),
            op::GroupNonUniformFMax => SgOp::Reduce(BinOp::NMax),
            op::GroupNonUniformBitwiseAnd => SgOp::Reduce(BinOp::And),
            op::GroupNonUniformBitwiseOr => SgOp::Reduce(BinOp::Or),
            op::GroupNonUniformBitwiseXor => SgOp::Reduce(BinOp::Xor),
            op::GroupNonUniformLogicalAnd => SgOp::Reduce(BinOp::LAnd),
            op::GroupNonUniformLogicalOr => SgOp::Reduce(BinOp::LOr),
            op::GroupNonUniformLogicalXor => SgOp::Reduce(BinOp::LNe),
            _ => return unsupported("unsupported GroupNonUniform operation"),
        };
        let (mut scan, mut cluster, vi) = (
            0u8,
            0u32,
            if matches!(sgop, SgOp::Reduce(_) | SgOp::BallotBitCount) {
                2
            } else {
                1
            },
        );
        if matches!(sgop, SgOp::Reduce(_) | SgOp::BallotBitCount) {
            match arg(1)? {
                g::Reduce => {}
                g::InclusiveScan => scan = 1,
                g::ExclusiveScan => scan = 2,
                g::ClusteredReduce => cluster = self.const_u64(arg(3)?)? as u32,
                x => return unsupported(format!("group operation {x} is not supported")),
            }
        }
        let (num, n) = if matches!(sgop, SgOp::Elect) {
            (Num::Bool, 1)
        } else {
            let v = arg(vi)?;
            self.t.comps(self.ty_of(v)?)?
        };
        let _ = rt;
        let av = if matches!(sgop, SgOp::Elect) {
            Col(0)
        } else {
            self.col(arg(vi)?)?
        };
        let b = match sgop {
            SgOp::Broadcast
            | SgOp::BallotBitExtract
            | SgOp::Shuffle
            | SgOp::ShuffleXor
            | SgOp::ShuffleUp
            | SgOp::ShuffleDown
            | SgOp::QuadBroadcast
            | SgOp::QuadSwap
            | SgOp::Rotate => self.col(arg(vi + 1)?)?,
            _ => Col(0),
        };
        if matches!(sgop, SgOp::QuadSwap) {
            // The direction is a constant: keep it in `cluster`.
            cluster = self.const_u64(arg(vi + 1)?)? as u32;
        }
        if sgop == SgOp::Rotate
            && let Some(&c) = a.get(vi + 2)
        {
            cluster = self.const_u64(c)? as u32;
        }
        // OpGroupBroadcast's LocalId may be a 2- or 3-component vector (Workgroup scope).
        let id_n = match sgop {
            SgOp::Broadcast => self.t.comps(self.ty_of(arg(vi + 1)?)?)?.1,
            _ => 1,
        };
        out.push(Op::Sg(SgArgs {
            op: sgop,
            num,
            d: d.col,
            a: av,
            b,
            n,
            scan,
            cluster,
            workgroup,
            id_n,
        }));
        Ok(())
    }
}
