//! GroupNonUniform operations: a subgroup is a range of `subgroup_size` lanes of the batch and
//! its active invocations are the active lanes of that range.

use super::*;

impl Batch<'_, '_> {
    pub(super) fn subgroup(
        &mut self,
        &SgArgs {
            op,
            num,
            d,
            a,
            b,
            n,
            scan,
            cluster,
            workgroup,
            id_n,
        }: &SgArgs,
        mask: &Mask,
    ) -> Result<(), Fault> {
        let lanes = self.lanes;
        // A workgroup-scope OpGroup* is one group of the whole batch, which every live
        // invocation must reach (SPIR-V: OpGroup* in uniform control flow of its scope).
        let sg = if workgroup { lanes } else { self.p.sg as usize };
        if workgroup {
            let live = (0..MW).any(|w| self.full[w] & !self.exited[w] & !mask[w] != 0);
            if live {
                return fault(
                    ErrorKind::UndefinedBehavior,
                    "a Workgroup-scope group operation is reached by only some invocations of the workgroup",
                );
            }
        }
        let ls = self.p.local_size;
        let col = |x: Col| x.ix() * lanes;
        let is_on = |l: usize| mask[l / 64] >> (l % 64) & 1 != 0;
        for s0 in (0..lanes).step_by(sg) {
            let s1 = (s0 + sg).min(lanes);
            let act: Vec<usize> = (s0..s1).filter(|&l| is_on(l)).collect();
            if act.is_empty() {
                continue;
            }
            // Inputs are read before any output is written (d never aliases a).
            let src = |s: &Self, k: u32, l: usize| s.cols[col(a + k) + l];
            let mut outv: Vec<(usize, u32, u64)> = Vec::new();
            match op {
                SgOp::Elect => {
                    for &l in &act {
                        outv.push((l, 0, (l == act[0]) as u64));
                    }
                }
                SgOp::All | SgOp::Any => {
                    let vals = act.iter().map(|&l| src(self, 0, l) != 0);
                    let r = if op == SgOp::All {
                        vals.clone().all(|x| x)
                    } else {
                        vals.clone().any(|x| x)
                    };
                    for &l in &act {
                        outv.push((l, 0, r as u64));
                    }
                }
                SgOp::AllEqual => {
                    let eq = act.iter().all(|&l| {
                        (0..n).all(|k| {
                            let (x, y) = (src(self, k, l), src(self, k, act[0]));
                            if num.is_float() {
                                floats::to_f64(num, x) == floats::to_f64(num, y)
                            } else {
                                x == y
                            }
                        })
                    });
                    for &l in &act {
                        outv.push((l, 0, eq as u64));
                    }
                }
                SgOp::Ballot => {
                    let mut bits = [0u32; 4];
                    for &l in &act {
                        if src(self, 0, l) != 0 {
                            let li = l - s0;
                            bits[li / 32] |= 1 << (li % 32);
                        }
                    }
                    for &l in &act {
                        for (k, &w) in bits.iter().enumerate() {
                            outv.push((l, k as u32, w as u64));
                        }
                    }
                }
                SgOp::InverseBallot | SgOp::BallotBitExtract => {
                    for &l in &act {
                        let idx = if op == SgOp::InverseBallot {
                            l - s0
                        } else {
                            self.cols[col(b) + l] as usize
                        };
                        let w = if idx < 128 {
                            src(self, (idx / 32) as u32, l)
                        } else {
                            0
                        };
                        outv.push((l, 0, (w >> (idx % 32)) & 1));
                    }
                }
                SgOp::BallotBitCount | SgOp::BallotFindLsb | SgOp::BallotFindMsb => {
                    for &l in &act {
                        let mut v: u128 = 0;
                        for k in 0..4 {
                            v |= (trunc(src(self, k, l), 32) as u128) << (32 * k);
                        }
                        if sg < 128 {
                            v &= (1u128 << sg) - 1;
                        }
                        let li = l - s0;
                        let r = if op == SgOp::BallotFindLsb {
                            if v == 0 {
                                u32::MAX as u64
                            } else {
                                v.trailing_zeros() as u64
                            }
                        } else if op == SgOp::BallotFindMsb {
                            if v == 0 {
                                u32::MAX as u64
                            } else {
                                127 - v.leading_zeros() as u64
                            }
                        } else {
                            // BallotBitCount: Reduce, InclusiveScan (1) or ExclusiveScan (2).
                            let m = match scan {
                                1 => {
                                    if li >= 127 {
                                        u128::MAX
                                    } else {
                                        (1u128 << (li + 1)) - 1
                                    }
                                }
                                2 => (1u128 << li) - 1,
                                _ => u128::MAX,
                            };
                            (v & m).count_ones() as u64
                        };
                        outv.push((l, 0, r));
                    }
                }
                SgOp::Broadcast
                | SgOp::BroadcastFirst
                | SgOp::Shuffle
                | SgOp::ShuffleXor
                | SgOp::ShuffleUp
                | SgOp::ShuffleDown
                | SgOp::QuadBroadcast
                | SgOp::QuadSwap
                | SgOp::Rotate => {
                    for &l in &act {
                        let li = l - s0;
                        let bv = if b != Col(0)
                            || matches!(
                                op,
                                SgOp::Broadcast
                                    | SgOp::Shuffle
                                    | SgOp::ShuffleXor
                                    | SgOp::ShuffleUp
                                    | SgOp::ShuffleDown
                                    | SgOp::QuadBroadcast
                                    | SgOp::Rotate
                            ) {
                            if id_n > 1 {
                                // (x, y[, z]) of the workgroup, linearized like the lanes.
                                let c = |k: u32| self.cols[col(b + k) + l] as usize;
                                let z = if id_n > 2 { c(2) } else { 0 };
                                c(0) + ls[0] as usize * (c(1) + ls[1] as usize * z)
                            } else {
                                self.cols[col(b) + l] as usize
                            }
                        } else {
                            0
                        };
                        let rotate = |li: usize| {
                            let c = if cluster == 0 { sg } else { cluster as usize };
                            Some((li & !(c - 1)) + ((li % c + bv) % c))
                        };
                        let from: Option<usize> = match op {
                            SgOp::BroadcastFirst => Some(act[0] - s0),
                            SgOp::Broadcast | SgOp::Shuffle => Some(bv),
                            SgOp::ShuffleXor => Some(li ^ bv),
                            SgOp::ShuffleUp => li.checked_sub(bv),
                            SgOp::ShuffleDown => Some(li + bv),
                            SgOp::QuadBroadcast => Some((li & !3) + bv),
                            SgOp::QuadSwap => Some(li ^ (cluster as usize + 1)),
                            SgOp::Rotate => rotate(li),
                            // Not data movement (this arm is reached for the ops above only).
                            SgOp::Elect
                            | SgOp::All
                            | SgOp::Any
                            | SgOp::AllEqual
                            | SgOp::Ballot
                            | SgOp::InverseBallot
                            | SgOp::BallotBitExtract
                            | SgOp::BallotBitCount
                            | SgOp::BallotFindLsb
                            | SgOp::BallotFindMsb
                            | SgOp::Reduce(_) => None,
                        };
                        let from = from
                            .filter(|&f| f < sg)
                            .map(|f| f + s0)
                            .filter(|&f| f < s1 && is_on(f));
                        for k in 0..n {
                            outv.push((l, k, from.map(|f| src(self, k, f)).unwrap_or(0)));
                        }
                    }
                }
                SgOp::Reduce(bop) => {
                    let c = if cluster == 0 { sg } else { cluster as usize };
                    for k in 0..n {
                        for cl in (s0..s1).step_by(c) {
                            let members: Vec<usize> = act
                                .iter()
                                .copied()
                                .filter(|&l| l >= cl && l < cl + c)
                                .collect();
                            let mut acc = eval::reduction_identity(bop, num);
                            if scan == 0 {
                                for &l in &members {
                                    acc = bin1(bop, num, acc, src(self, k, l));
                                }
                                for &l in &members {
                                    outv.push((l, k, acc));
                                }
                            } else {
                                for &l in &members {
                                    let x = src(self, k, l);
                                    let inc = bin1(bop, num, acc, x);
                                    outv.push((l, k, if scan == 1 { inc } else { acc }));
                                    acc = inc;
                                }
                            }
                        }
                    }
                }
            }
            for (l, k, v) in outv {
                self.cols[col(d + k) + l] = v;
            }
        }
        Ok(())
    }
}
