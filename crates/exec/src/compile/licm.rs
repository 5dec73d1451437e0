//! Loop-invariant code motion: pure per-lane instructions of a loop whose operands do not
//! change in it are compiled once, at the end of the loop's preheader, instead of once per
//! iteration (a GEMM's staging loop recomputes `tid / 4`, `tid % 4`, `sa[tid]`, ... every K
//! step; spirv-opt leaves them there).
//!
//! Why moving them keeps every result: the moved instructions have no side effects and never
//! fault (integer division by zero gives 0 in the engine; pointers are only checked when
//! dereferenced), so running them for lanes that would not have reached them is harmless. A
//! loop (SPIR-V 2.11, "structured control flow") is the set of blocks its header dominates and
//! its merge block does not; an instruction moves out of the outermost loop around it in which
//! no operand is defined, to that loop's preheader: the header's sole predecessor outside the
//! loop, ending in an unconditional branch to it. Every lane entering the loop ran the
//! preheader with the same operand values, and the preheader, dominating the header,
//! dominates every use.

use super::*;

/// Where each moved instruction goes: preheader block id -> instruction indices in module
/// order (operands before uses), and the set of moved indices.
#[derive(Default)]
pub(super) struct Hoisted {
    pub(super) to: HashMap<u32, Vec<usize>>,
    pub(super) moved: HashSet<usize>,
}

/// A loop: its header, merge block and preheader.
struct Loop {
    header: u32,
    merge: u32,
    preheader: u32,
}

impl Cx<'_> {
    /// The instructions of function `f` to move to preheaders.
    pub(super) fn loop_invariants(
        &self,
        f: &coopmat_spirv::module::Function,
        du: &coopmat_spirv::module::DefUse,
    ) -> Hoisted {
        let m = self.m;
        let mut out = Hoisted::default();
        let has_loop = f.blocks.iter().any(|b| {
            b.body
                .clone()
                .any(|i| m.instructions[i].opcode == op::LoopMerge)
        });
        if !has_loop || self.options.observe_uniformity {
            // Observed uniformity is a statement about the lanes that run an instruction
            // where the module puts it.
            return out;
        }
        let Some(doms) = coopmat_analysis::Dominators::new(m, f) else {
            return out;
        };
        let mut preds: HashMap<u32, Vec<(u32, u16)>> = HashMap::new();
        for b in &f.blocks {
            let Some(last) = b.body.clone().last() else {
                continue;
            };
            let term = &m.instructions[last];
            for s in block_succs(m, b) {
                preds.entry(s).or_default().push((b.id, term.opcode));
            }
        }
        let mut loops = Vec::new();
        for b in &f.blocks {
            let Some(lm) = b
                .body
                .clone()
                .find(|&i| m.instructions[i].opcode == op::LoopMerge)
            else {
                continue;
            };
            // The merge block, not the continue target: with the body in the continue
            // target (spirv-opt's usual shape) the latter would put the body outside the loop.
            let Some(coopmat_spirv::cfg::MergeInfo { merge, .. }) =
                coopmat_spirv::cfg::merge_info(&m.instructions[lm])
            else {
                continue;
            };
            let outside: Vec<&(u32, u16)> = preds
                .get(&b.id)
                .map(|v| {
                    v.iter()
                        .filter(|(p, _)| !doms.dominates(b.id, *p))
                        .collect()
                })
                .unwrap_or_default();
            if let [(p, op::Branch)] = outside[..]
                && doms.reachable(b.id)
            {
                loops.push(Loop {
                    header: b.id,
                    merge,
                    preheader: *p,
                });
            }
        }
        let in_loop = |l: &Loop, blk: u32| {
            doms.reachable(blk) && doms.dominates(l.header, blk) && !doms.dominates(l.merge, blk)
        };
        let mut def_block = def_blocks(m, f);
        for b in &f.blocks {
            // The loops around this block, outermost first: `loops` is in block order, and a
            // block comes before every block it dominates (SPIR-V 2.16.1), an outer header
            // before the inner ones. (Whichever enclosing loop is picked, its own test below
            // makes the move valid; the order only makes it go as far out as it can.)
            let around: Vec<&Loop> = loops.iter().filter(|l| in_loop(l, b.id)).collect();
            if around.is_empty() {
                continue;
            }
            for i in b.body.clone() {
                let inst = &m.instructions[i];
                let Some(rid) = inst.result_id else {
                    continue;
                };
                if !self.pure_per_lane(inst)
                    || du
                        .uses(rid)
                        .iter()
                        .any(|&(u, _)| m.instructions[u].opcode == op::Phi)
                {
                    continue;
                }
                // The outermost loop none of whose blocks defines an operand (operands moved
                // already count as defined in their preheader).
                let target = around.iter().find(|l| {
                    inst.id_refs()
                        .all(|id| def_block.get(&id).is_none_or(|&db| !in_loop(l, db)))
                });
                if let Some(l) = target {
                    def_block.insert(rid, l.preheader);
                    out.to.entry(l.preheader).or_default().push(i);
                    out.moved.insert(i);
                }
            }
        }
        out
    }

    /// Whether an instruction computes a per-lane value (no matrix) from its operands alone,
    /// without side effects or faults: the scalar-op table, selects, composites, bitcasts, and
    /// access chains into buffer and Workgroup memory.
    fn pure_per_lane(&self, inst: &coopmat_spirv::Instruction) -> bool {
        let Some(rt) = inst.result_type else {
            return false;
        };
        if !matches!(self.t.shape(rt), Ok((_, 0))) {
            return false;
        }
        let pointer = matches!(self.t.get(rt), Ok(Ty::Pointer { .. }));
        match inst.opcode {
            op::Select
            | op::CompositeExtract
            | op::CompositeConstruct
            | op::VectorShuffle
            | op::CopyObject
            | op::Bitcast => !pointer,
            op::AccessChain | op::InBoundsAccessChain => matches!(
                self.t.get(rt),
                Ok(Ty::Pointer { sc, .. }) if matches!(
                    *sc,
                    storage_class::StorageBuffer
                        | storage_class::Uniform
                        | storage_class::Workgroup
                        | storage_class::PushConstant
                )
            ),
            o => !pointer && ScalarOpRow::for_opcode(o).is_some(),
        }
    }
}
