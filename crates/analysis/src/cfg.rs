//! One function's control-flow facts for the divergence analysis: block order, predecessors and
//! successors, dominance (pre/post numbers of the dominator tree) and the structured constructs
//! of SPIR-V 2.11 ("the blocks dominated by the header, minus the blocks dominated by the merge
//! block").

use coopmat_spirv::grammar::op;
use coopmat_spirv::module::Function;
use coopmat_spirv::{Module, cfg};
use rustc_hash::FxHashMap;

/// A block index within its function (position in [`FnCfg::labels`]).
pub(crate) type B = usize;

/// A structured header: its merge block and whether it heads a loop.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub merge: Option<B>,
    pub is_loop: bool,
}

/// Control-flow facts of one function.
pub(crate) struct FnCfg {
    /// The function's id.
    pub id: u32,
    /// Its parameters' ids, in order.
    pub params: Vec<u32>,
    /// Label ids in module order; index 0 is the entry.
    pub labels: Vec<u32>,
    pub index: FxHashMap<u32, B>,
    /// Instruction index of each block's terminator.
    pub term: Vec<usize>,
    /// Instruction index range of each block's body (label excluded).
    pub body: Vec<std::ops::Range<usize>>,
    pub succ: Vec<Vec<B>>,
    pub pred: Vec<Vec<B>>,
    /// Structured headers (blocks with OpSelectionMerge or OpLoopMerge).
    pub header: Vec<Option<Header>>,
    /// Dominator-tree numbering; `u32::MAX` for unreachable blocks.
    pre: Vec<u32>,
    post: Vec<u32>,
    /// Enclosing loop headers of each block, innermost first (a loop header encloses itself).
    pub loops: Vec<Vec<B>>,
}

impl FnCfg {
    /// Builds the facts of a function definition (None for a declaration).
    pub fn new(m: &Module, f: &Function) -> Option<FnCfg> {
        if f.blocks.is_empty() {
            return None;
        }
        let n = f.blocks.len();
        let labels: Vec<u32> = f.blocks.iter().map(|b| b.id).collect();
        let index: FxHashMap<u32, B> = labels.iter().enumerate().map(|(i, &l)| (l, i)).collect();
        let mut succ = vec![Vec::new(); n];
        let mut pred = vec![Vec::new(); n];
        let mut term = vec![0; n];
        let mut body = Vec::with_capacity(n);
        let mut header = vec![None; n];
        for (i, b) in f.blocks.iter().enumerate() {
            body.push(b.body.clone());
            let Some(last) = b.body.clone().last() else {
                continue;
            };
            term[i] = last;
            for t in cfg::successors(&m.instructions[last]) {
                if let Some(&j) = index.get(&t)
                    && !succ[i].contains(&j)
                {
                    succ[i].push(j);
                    pred[j].push(i);
                }
            }
            if b.body.len() >= 2
                && let Some(mi) = cfg::merge_info(&m.instructions[last - 1])
            {
                header[i] = Some(Header {
                    merge: index.get(&mi.merge).copied(),
                    is_loop: m.instructions[last - 1].opcode == op::LoopMerge,
                });
            }
        }
        let (pre, post) = dominator_numbers(&succ, &pred);
        let mut g = FnCfg {
            id: f.id,
            params: f
                .params
                .iter()
                .map(|&p| m.instructions[p].result_id.unwrap_or(0))
                .collect(),
            labels,
            index,
            term,
            body,
            succ,
            pred,
            header,
            pre,
            post,
            loops: vec![Vec::new(); n],
        };
        let loop_headers: Vec<B> = (0..n)
            .filter(|&h| g.header[h].is_some_and(|h| h.is_loop))
            .collect();
        for b in 0..n {
            let mut ls: Vec<B> = loop_headers
                .iter()
                .copied()
                .filter(|&h| g.in_construct(h, b))
                .collect();
            // Innermost first: a deeper header has a larger pre-order number.
            ls.sort_by_key(|&h| std::cmp::Reverse(g.pre[h]));
            g.loops[b] = ls;
        }
        Some(g)
    }

    /// Whether the block is reachable from the entry.
    pub fn reachable(&self, b: B) -> bool {
        self.pre[b] != u32::MAX
    }

    /// Whether `a` dominates `b` (both reachable).
    pub fn dominates(&self, a: B, b: B) -> bool {
        self.reachable(a)
            && self.reachable(b)
            && self.pre[a] <= self.pre[b]
            && self.post[b] <= self.post[a]
    }

    /// Whether `b` is in the construct of header `h`: dominated by `h`, not by its merge block.
    pub fn in_construct(&self, h: B, b: B) -> bool {
        let Some(hd) = self.header[h] else {
            return false;
        };
        self.dominates(h, b) && !hd.merge.is_some_and(|m| self.dominates(m, b))
    }

    /// The blocks reachable from `from` (itself included).
    pub fn reachable_from(&self, from: B) -> Vec<B> {
        let mut seen = vec![false; self.labels.len()];
        let mut stack = vec![from];
        let mut out = Vec::new();
        while let Some(b) = stack.pop() {
            if std::mem::replace(&mut seen[b], true) {
                continue;
            }
            out.push(b);
            stack.extend(self.succ[b].iter().copied());
        }
        out
    }
}

/// Dominator tree (Cooper, Harvey and Kennedy's iterative algorithm over reverse post-order),
/// numbered by a depth-first walk of the tree so that `a` dominates `b` iff
/// `pre[a] <= pre[b] && post[b] <= post[a]`.
fn dominator_numbers(succ: &[Vec<B>], pred: &[Vec<B>]) -> (Vec<u32>, Vec<u32>) {
    let n = succ.len();
    // Reverse post-order from the entry, iteratively.
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack: Vec<(B, usize)> = vec![(0, 0)];
    seen[0] = true;
    while let Some(&mut (b, ref mut k)) = stack.last_mut() {
        if let Some(&s) = succ[b].get(*k) {
            *k += 1;
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            order.push(b);
            stack.pop();
        }
    }
    order.reverse();
    let mut rpo = vec![usize::MAX; n];
    for (i, &b) in order.iter().enumerate() {
        rpo[b] = i;
    }
    let mut idom = vec![usize::MAX; n];
    idom[0] = 0;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let mut new = usize::MAX;
            for &p in &pred[b] {
                if idom[p] == usize::MAX {
                    continue;
                }
                new = if new == usize::MAX {
                    p
                } else {
                    intersect(&idom, &rpo, p, new)
                };
            }
            if new != usize::MAX && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    let mut children = vec![Vec::new(); n];
    for &b in order.iter().skip(1) {
        if idom[b] != usize::MAX {
            children[idom[b]].push(b);
        }
    }
    let (mut pre, mut post) = (vec![u32::MAX; n], vec![u32::MAX; n]);
    let mut clock = 0u32;
    let mut stack: Vec<(B, usize)> = vec![(0, 0)];
    pre[0] = clock;
    clock += 1;
    while let Some(&mut (b, ref mut k)) = stack.last_mut() {
        if let Some(&c) = children[b].get(*k) {
            *k += 1;
            pre[c] = clock;
            clock += 1;
            stack.push((c, 0));
        } else {
            post[b] = clock;
            clock += 1;
            stack.pop();
        }
    }
    (pre, post)
}

fn intersect(idom: &[usize], rpo: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while rpo[a] > rpo[b] {
            a = idom[a];
        }
        while rpo[b] > rpo[a] {
            b = idom[b];
        }
    }
    a
}
