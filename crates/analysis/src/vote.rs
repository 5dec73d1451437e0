//! The workgroup vote: a comparison that data flow calls divergent but that every invocation of
//! a workgroup evaluates to the same result, by arithmetic (crate README, "The workgroup vote").
//!
//! ```glsl
//! bool all_less = subgroupAll(v <= T);                                  // the vote
//! barrier();
//! if (gl_SubgroupInvocationID == 0) slot[gl_SubgroupID] = all_less ? A : B;  // A <= T < B
//! barrier();
//! for (uint s = 0; s < gl_NumSubgroups; ++s) v = max(v, slot[s]);
//! if (v <= T) ...                                                        // workgroup-uniform
//! ```
//!
//! After the loop each invocation holds `x = max(v, slot[0], ..., slot[n-1])`. If some subgroup
//! had an invocation with `v <= T` false, its slot holds B and every invocation's `x >= B`, so
//! the comparison is false everywhere; otherwise every slot holds A, every `v <= T` holds, and
//! `x`, one of `v` and A, satisfies it everywhere. The proof needs `P(x) = x < T` or `x <= T`
//! (true on a down-set, false for NaN) in both places with the same constant T, and FMax
//! returning one of its operands (GLSL.std.450 leaves a NaN operand's result undefined; an
//! invocation with a NaN `v` fails the vote, so its subgroup's slot is B, and a NaN or `>= B`
//! result compares false alike).
//!
//! The recognizer proves each step on the module, or gives up (the comparison then keeps the
//! level data flow gives it): the slot array is written in the barrier interval before the
//! reads by that one store only, indexed by SubgroupId, by every subgroup (unguarded, or guarded
//! by `SubgroupLocalInvocationId == 0` or OpGroupNonUniformElect); nothing writes it between the
//! barrier and the next one; the loop reads `slot[s]` for s = 0, 1, ... while `s <
//! NumSubgroups`, exits nowhere else and max-combines every iteration; the value voted on is the
//! value the loop starts from. What it cannot prove from the module alone, the control flow of
//! the vote, the slot write, the barrier, the loop and the comparison being uniform in the
//! workgroup, is returned as a list of blocks whose control level the analysis checks as it goes.
//!
//! Function variables that are only loaded and stored (unoptimized glslang output) are read
//! through their reaching stores; SSA phis (optimized output) directly.

use crate::cfg::{B, FnCfg};
use crate::memory::{self, Memory, Root};
use coopmat_spirv::Module;
use coopmat_spirv::grammar::{built_in, glsl_std_450, memory_semantics, op, scope, storage_class};
use coopmat_spirv::types::Type;
use rustc_hash::{FxHashMap, FxHashSet};

/// The comparisons proven to be workgroup votes: per comparison instruction, its function and
/// the blocks whose control must be workgroup-uniform for the proof to hold.
pub(crate) type Votes = FxHashMap<usize, (usize, Vec<B>)>;

/// Finds the workgroup votes of a module.
pub(crate) fn find(
    m: &Module,
    fns: &[FnCfg],
    inst_block: &FxHashMap<usize, (usize, B)>,
    mem: &Memory,
) -> Votes {
    let mut out = Votes::default();
    // Cheap gate: no subgroup vote, no workgroup vote.
    if !m
        .instructions
        .iter()
        .any(|i| i.opcode == op::GroupNonUniformAll)
    {
        return out;
    }
    let mut finder = Finder::new(m, fns, inst_block, mem);
    for (i, inst) in m.instructions.iter().enumerate() {
        if threshold_opcode(inst.opcode)
            && let Some(&(fi, b)) = inst_block.get(&i)
            && let Some(blocks) = finder.recognize(fi, b, i)
        {
            out.insert(i, (fi, blocks));
        }
    }
    out
}

/// A value as the recognizer names it: an SSA id, or the value a loop-carried quantity (a
/// promoted Function variable or a header phi) has at a loop header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Sym {
    Id(u32),
    Header(B, u32),
}

/// `x < T` or `x <= T`: a predicate true on a down-set of x and false for NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rel {
    Lt,
    Le,
}

impl Rel {
    fn holds(self, x: f64, t: f64) -> bool {
        match self {
            Rel::Lt => x < t,
            Rel::Le => x <= t,
        }
    }
}

fn threshold_opcode(opcode: u16) -> bool {
    matches!(
        opcode,
        op::FOrdLessThan | op::FOrdLessThanEqual | op::FOrdGreaterThan | op::FOrdGreaterThanEqual
    )
}

/// Recursion bound of the reaching-store walk (deeper chains give up).
const MAX_DEPTH: usize = 256;

struct Finder<'a> {
    m: &'a Module,
    fns: &'a [FnCfg],
    inst_block: &'a FxHashMap<usize, (usize, B)>,
    mem: &'a Memory,
    /// The GLSL.std.450 import, if any.
    glsl: Option<u32>,
    /// Function variables used only as the pointer of OpLoad and OpStore, without initializer.
    promotable: FxHashSet<u32>,
    /// Promotable variables stored once: the store.
    single_store: FxHashMap<u32, usize>,
    /// Per function index: may write workgroup memory or wait at a barrier (transitively).
    opaque_call: Vec<bool>,
    /// Reaching values at block ends: (function, block, variable).
    memo: FxHashMap<(usize, B, u32), Option<Sym>>,
}

impl<'a> Finder<'a> {
    fn new(
        m: &'a Module,
        fns: &'a [FnCfg],
        inst_block: &'a FxHashMap<usize, (usize, B)>,
        mem: &'a Memory,
    ) -> Finder<'a> {
        let glsl = m
            .instructions
            .iter()
            .find(|i| {
                i.opcode == op::ExtInstImport && i.string(1).as_deref() == Some("GLSL.std.450")
            })
            .and_then(|i| i.result_id);
        let mut promotable: FxHashSet<u32> = m
            .instructions
            .iter()
            .filter(|i| i.opcode == op::Variable && i.word(2) == Some(storage_class::Function))
            .filter_map(|i| i.result_id)
            .collect();
        let mut stores: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
        for (i, inst) in m.instructions.iter().enumerate() {
            // Names, decorations and debug information refer to variables without using them.
            if matches!(
                inst.opcode,
                op::Name | op::Decorate | op::DecorateId | op::DecorateString | op::EntryPoint
            ) || mem.non_semantic(inst)
            {
                continue;
            }
            if inst.opcode == op::Variable && inst.word(3).is_some() {
                promotable.remove(&inst.result_id.unwrap_or(0));
            }
            if inst.opcode == op::Store
                && let Some(p) = inst.word(0)
            {
                stores.entry(p).or_default().push(i);
            }
            let a = inst.first_arg();
            let pointer_use = match inst.opcode {
                op::Load | op::Store => Some(inst.word(a)),
                _ => None,
            };
            for (k, id) in inst.id_refs().enumerate() {
                // The result type is the first id_ref of an instruction that has one.
                let is_pointer_operand = pointer_use
                    .is_some_and(|p| p == Some(id) && k == inst.result_type.is_some() as usize);
                if !is_pointer_operand {
                    promotable.remove(&id);
                }
            }
        }
        let single_store = stores
            .into_iter()
            .filter(|(v, s)| s.len() == 1 && promotable.contains(v))
            .map(|(v, s)| (v, s[0]))
            .collect();
        let mut f = Finder {
            m,
            fns,
            inst_block,
            mem,
            glsl,
            promotable,
            single_store,
            opaque_call: vec![false; fns.len()],
            memo: FxHashMap::default(),
        };
        f.opaque_call = f.opaque_functions();
        f
    }

    /// Functions that write workgroup memory or contain a workgroup barrier, transitively.
    fn opaque_functions(&self) -> Vec<bool> {
        let index: FxHashMap<u32, usize> = self
            .fns
            .iter()
            .enumerate()
            .map(|(i, f)| (f.id, i))
            .collect();
        let mut opaque: Vec<bool> = self
            .fns
            .iter()
            .map(|f| {
                f.body.iter().flat_map(|r| r.clone()).any(|i| {
                    let inst = &self.m.instructions[i];
                    inst.opcode == op::ControlBarrier || self.writes_workgroup(i, None)
                })
            })
            .collect();
        loop {
            let mut changed = false;
            for (fi, f) in self.fns.iter().enumerate() {
                if opaque[fi] {
                    continue;
                }
                let calls_opaque = f.body.iter().flat_map(|r| r.clone()).any(|i| {
                    let inst = &self.m.instructions[i];
                    inst.opcode == op::FunctionCall
                        && inst
                            .word(inst.first_arg())
                            .and_then(|c| index.get(&c))
                            .is_none_or(|&c| opaque[c])
                });
                if calls_opaque {
                    opaque[fi] = true;
                    changed = true;
                }
            }
            if !changed {
                return opaque;
            }
        }
    }

    /// Whether instruction `i` may write workgroup variable `w` (any workgroup memory for None).
    fn writes_workgroup(&self, i: usize, w: Option<u32>) -> bool {
        let inst = &self.m.instructions[i];
        if !self.mem.writes(inst) {
            return false;
        }
        memory::written_pointers(self.m, inst).into_iter().any(|p| {
            match self.mem.roots(self.m, p) {
                Root::Vars(vars) => vars.iter().any(|&v| match w {
                    Some(w) => v == w,
                    None => self.mem.class(v) == storage_class::Workgroup,
                }),
                Root::Unknown(class) => {
                    matches!(class, storage_class::Workgroup | storage_class::Generic)
                }
            }
        })
    }

    /// Whether instruction `i` breaks a barrier interval's accounting of `w`: writes it, or
    /// calls a function that may write workgroup memory or wait at a barrier.
    fn touches(&self, i: usize, w: u32) -> bool {
        let inst = &self.m.instructions[i];
        if inst.opcode == op::FunctionCall {
            let callee = inst.word(inst.first_arg());
            return self
                .fns
                .iter()
                .position(|f| Some(f.id) == callee)
                .is_none_or(|c| self.opaque_call[c]);
        }
        self.writes_workgroup(i, Some(w))
    }

    /// A workgroup control barrier that orders workgroup memory.
    fn is_barrier(&self, i: usize) -> bool {
        let inst = &self.m.instructions[i];
        inst.opcode == op::ControlBarrier
            && inst.word(0).and_then(|s| self.m.constant_u64(s)) == Some(scope::Workgroup as u64)
            && inst
                .word(2)
                .and_then(|s| self.m.constant_u64(s))
                .is_some_and(|sem| sem & memory_semantics::WorkgroupMemory as u64 != 0)
    }

    fn def(&self, id: u32) -> Option<(usize, &'a coopmat_spirv::Instruction)> {
        let i = self.m.def_index(id)?;
        Some((i, &self.m.instructions[i]))
    }

    /// The argument `k` (after result type and id) of the instruction defining `id`.
    fn arg(&self, id: u32, k: usize) -> Option<u32> {
        let (_, d) = self.def(id)?;
        d.word(d.first_arg() + k)
    }

    fn def_block(&self, id: u32) -> Option<(usize, B)> {
        self.inst_block.get(&self.m.def_index(id)?).copied()
    }

    /// What `id` is, through promoted variables, copies and single-valued phis.
    fn resolve(&mut self, fi: usize, id: u32, depth: usize) -> Option<Sym> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (i, d) = self.def(id)?;
        let a = d.first_arg();
        match d.opcode {
            op::Load if d.word(a).is_some_and(|p| self.promotable.contains(&p)) => {
                let var = d.word(a)?;
                let &(f2, b) = self.inst_block.get(&i)?;
                if f2 != fi {
                    return None;
                }
                // A variable stored once with a constant expression, before every load: that
                // constant (the walk would stop at every loop header on the way).
                if let Some(&st) = self.single_store.get(&var)
                    && let Some(value) = self.m.instructions[st].word(1)
                    && self.constant_expr(value, 0)
                    && let Some(&(f3, sb)) = self.inst_block.get(&st)
                    && f3 == fi
                    && (sb == b && st < i || sb != b && self.fns[fi].dominates(sb, b))
                {
                    return Some(Sym::Id(value));
                }
                self.before(fi, b, i, var, depth + 1)
            }
            op::CopyObject => self.resolve(fi, d.word(a)?, depth + 1),
            op::Phi => {
                let incoming: Vec<u32> = (a..).step_by(2).map_while(|k| d.word(k)).collect();
                let (_, b) = self.def_block(id)?;
                if incoming.iter().all(|&v| v == incoming[0]) && incoming[0] != id {
                    self.resolve(fi, incoming[0], depth + 1)
                } else if self.fns[fi].header[b].is_some_and(|h| h.is_loop) {
                    Some(Sym::Header(b, id))
                } else {
                    Some(Sym::Id(id))
                }
            }
            _ => Some(Sym::Id(id)),
        }
    }

    /// Whether `id` is the same in every execution: a module-level constant, or an operation
    /// of such (glslang writes `uintBitsToFloat(0x...)` as an OpBitcast in the function).
    fn constant_expr(&self, id: u32, depth: usize) -> bool {
        let Some((i, d)) = self.def(id) else {
            return false;
        };
        if self.m.owner(i).is_none() {
            return matches!(
                d.opcode,
                op::Constant | op::ConstantNull | op::ConstantComposite
            );
        }
        depth < 8
            && matches!(d.opcode, op::Bitcast | op::FConvert | op::FNegate)
            && d.word(d.first_arg())
                .is_some_and(|x| self.constant_expr(x, depth + 1))
    }

    /// The value of promoted variable `var` just before body position `pos` of block `b`.
    fn before(&mut self, fi: usize, b: B, pos: usize, var: u32, depth: usize) -> Option<Sym> {
        if depth > MAX_DEPTH {
            return None;
        }
        let fns = self.fns;
        let f = &fns[fi];
        let start = f.body[b].start;
        for i in (start..pos.min(f.body[b].end)).rev() {
            let inst = &self.m.instructions[i];
            if inst.opcode == op::Store && inst.word(0) == Some(var) {
                return self.resolve(fi, inst.word(1)?, depth + 1);
            }
        }
        if f.header[b].is_some_and(|h| h.is_loop) {
            return Some(Sym::Header(b, var));
        }
        let preds: Vec<B> = f.pred[b]
            .iter()
            .copied()
            .filter(|&p| f.reachable(p))
            .collect();
        if preds.is_empty() {
            return None;
        }
        let mut out = None;
        for p in preds {
            let s = self.at_end(fi, p, var, depth + 1)?;
            if out.is_some_and(|o| o != s) {
                return None;
            }
            out = Some(s);
        }
        out
    }

    fn at_end(&mut self, fi: usize, b: B, var: u32, depth: usize) -> Option<Sym> {
        if let Some(&s) = self.memo.get(&(fi, b, var)) {
            return s;
        }
        // Provisional None breaks cycles (every cycle passes a loop header, where the walk
        // stops; this guards malformed input).
        self.memo.insert((fi, b, var), None);
        let end = self.fns[fi].body[b].end;
        let s = self.before(fi, b, end, var, depth);
        self.memo.insert((fi, b, var), s);
        s
    }

    /// The loop header's entry and back-edge predecessors (exactly one of each).
    fn loop_preds(&self, fi: usize, h: B) -> Option<(B, B)> {
        let f = &self.fns[fi];
        let preds: Vec<B> = f.pred[h]
            .iter()
            .copied()
            .filter(|&p| f.reachable(p))
            .collect();
        let [p, q] = preds[..] else { return None };
        match (f.dominates(h, p), f.dominates(h, q)) {
            (false, true) => Some((p, q)),
            (true, false) => Some((q, p)),
            _ => None,
        }
    }

    /// The values of a loop-carried quantity on entry and on the back edge.
    fn header_parts(&mut self, fi: usize, h: B, key: u32) -> Option<(Sym, Sym)> {
        let (pe, pb) = self.loop_preds(fi, h)?;
        if self.promotable.contains(&key) {
            let e = self.at_end(fi, pe, key, 0)?;
            let b = self.at_end(fi, pb, key, 0)?;
            return Some((e, b));
        }
        let (_, d) = self.def(key)?;
        if d.opcode != op::Phi {
            return None;
        }
        let (le, lb) = (self.fns[fi].labels[pe], self.fns[fi].labels[pb]);
        let a = d.first_arg();
        let (mut e, mut b) = (None, None);
        let mut k = a;
        while let (Some(v), Some(p)) = (d.word(k), d.word(k + 1)) {
            if p == le {
                e = Some(v);
            } else if p == lb {
                b = Some(v);
            }
            k += 2;
        }
        Some((self.resolve(fi, e?, 0)?, self.resolve(fi, b?, 0)?))
    }

    /// `x < T` / `x <= T` in any of the four spellings: (relation, x, T).
    fn threshold_compare(&self, id: u32) -> Option<(Rel, u32, u32)> {
        let (_, d) = self.def(id)?;
        let a = d.first_arg();
        let (l, r) = (d.word(a)?, d.word(a + 1)?);
        match d.opcode {
            op::FOrdLessThan => Some((Rel::Lt, l, r)),
            op::FOrdLessThanEqual => Some((Rel::Le, l, r)),
            op::FOrdGreaterThan => Some((Rel::Lt, r, l)),
            op::FOrdGreaterThanEqual => Some((Rel::Le, r, l)),
            _ => None,
        }
    }

    /// The value of a 32- or 64-bit float constant (also a 32-bit integer constant bitcast to
    /// float, as glslang writes `uintBitsToFloat`).
    fn float_value(&self, sym: Option<Sym>) -> Option<f64> {
        let Some(Sym::Id(id)) = sym else { return None };
        let (_, d) = self.def(id)?;
        let Type::Float {
            width,
            encoding: None,
        } = self.m.type_view(d.result_type?)
        else {
            return None;
        };
        match (d.opcode, width) {
            (op::Constant, 32) => Some(f32::from_bits(d.word(2)?) as f64),
            (op::Constant, 64) => {
                let w = d.operand_words(2);
                Some(f64::from_bits(
                    (*w.get(1)? as u64) << 32 | *w.first()? as u64,
                ))
            }
            (op::Bitcast, 32) => {
                let bits = self.m.constant_u64(d.word(2)?)?;
                Some(f32::from_bits(u32::try_from(bits).ok()?) as f64)
            }
            _ => None,
        }
    }

    /// Whether `sym` is a load of the built-in `builtin`.
    fn is_builtin_load(&self, sym: Option<Sym>, builtin: u32) -> bool {
        let Some(Sym::Id(id)) = sym else { return false };
        self.def(id).is_some_and(|(_, d)| {
            d.opcode == op::Load
                && d.word(d.first_arg())
                    .is_some_and(|p| self.mem.builtin(p) == Some(builtin))
        })
    }

    /// The workgroup variable and index of a single-index access chain into it.
    fn slot(&self, ptr: u32) -> Option<(u32, u32)> {
        let (_, d) = self.def(ptr)?;
        if !matches!(d.opcode, op::AccessChain | op::InBoundsAccessChain) {
            return None;
        }
        let a = d.first_arg();
        let (base, idx) = (d.word(a)?, d.word(a + 1)?);
        if d.word(a + 2).is_some() {
            return None;
        }
        let (_, v) = self.def(base)?;
        (v.opcode == op::Variable && v.word(2) == Some(storage_class::Workgroup))
            .then_some((base, idx))
    }

    fn is_int_constant(&self, sym: Option<Sym>, value: u64) -> bool {
        matches!(sym, Some(Sym::Id(id)) if self.def(id).is_some_and(|(_, d)| d.opcode == op::Constant)
            && self.m.constant_u64(id) == Some(value))
    }

    /// The blocks on a path from `from` to `to` that does not pass `from` again (`to`
    /// included, `from` not).
    fn between(&self, fi: usize, from: B, to: B) -> FxHashSet<B> {
        let f = &self.fns[fi];
        let mut fwd = FxHashSet::default();
        let mut stack: Vec<B> = f.succ[from].clone();
        while let Some(b) = stack.pop() {
            if b != from && fwd.insert(b) {
                stack.extend(f.succ[b].iter().copied());
            }
        }
        let mut both = FxHashSet::default();
        let mut stack = vec![to];
        while let Some(b) = stack.pop() {
            if b != from && fwd.contains(&b) && both.insert(b) {
                stack.extend(f.pred[b].iter().copied());
            }
        }
        both
    }

    /// Whether `sym`, named at the end of `from` and at the end of `to`, is the same dynamic
    /// value: what defines it does not run again between the two.
    fn same_between(&self, fi: usize, sym: Sym, from: B, to: B) -> bool {
        let def = match sym {
            Sym::Id(id) => match self.def_block(id) {
                Some((f2, b)) if f2 == fi => b,
                Some(_) => return false,
                // Constants and globals are defined once.
                None => return true,
            },
            Sym::Header(h, _) => h,
        };
        from == to || !self.between(fi, from, to).contains(&def)
    }

    /// Walks the barrier interval from body position `pos` of block `b` backward (or forward):
    /// the workgroup barriers that end it, the instructions in it that touch `w`, and whether
    /// it reaches the function's entry (backward) or the blocks it covers (forward).
    fn interval(&self, fi: usize, b: B, pos: usize, w: u32, forward: bool) -> Interval {
        let f = &self.fns[fi];
        let mut out = Interval::default();
        let mut stack = vec![(b, Some(pos))];
        let mut seen = FxHashSet::default();
        while let Some((b, pos)) = stack.pop() {
            let r = f.body[b].clone();
            let range: Vec<usize> = match (pos, forward) {
                (Some(p), true) => (p + 1..r.end).collect(),
                (Some(p), false) => (r.start..p).rev().collect(),
                (None, true) => r.collect(),
                (None, false) => r.rev().collect(),
            };
            if pos.is_none() {
                out.blocks.insert(b);
            }
            let mut stopped = false;
            for i in range {
                if self.is_barrier(i) {
                    out.barriers.push(i);
                    stopped = true;
                    break;
                }
                if self.touches(i, w) {
                    out.touching.push(i);
                }
            }
            if stopped {
                continue;
            }
            let next = if forward { &f.succ[b] } else { &f.pred[b] };
            if !forward && next.iter().all(|&p| !f.reachable(p)) {
                out.reaches_entry = true;
            }
            for &n in next {
                if f.reachable(n) && seen.insert(n) {
                    stack.push((n, None));
                }
            }
        }
        out.touching.sort_unstable();
        out.touching.dedup();
        out.barriers.sort_unstable();
        out.barriers.dedup();
        out
    }

    /// The proof for the comparison at instruction `ci` in block `qb` of function `fi`, or None.
    fn recognize(&mut self, fi: usize, qb: B, ci: usize) -> Option<Vec<B>> {
        let m = self.m;
        let (rel, x, t) = self.threshold_compare(m.instructions[ci].result_id?)?;
        let tsym = self.resolve(fi, t, 0);
        let tval = self.float_value(tsym)?;
        let Some(Sym::Header(h, key)) = self.resolve(fi, x, 0) else {
            return None;
        };
        let fns = self.fns;
        let f = &fns[fi];
        let merge = f.header[h].filter(|hd| hd.is_loop)?.merge?;
        if f.in_construct(h, qb) {
            return None;
        }
        let (entry, back) = self.header_parts(fi, h, key)?;

        // The back edge carries max(current, slot[s]).
        let Sym::Id(mx) = back else { return None };
        let (_, md) = self.def(mx)?;
        let ma = md.first_arg();
        if md.opcode != op::ExtInst
            || md.word(ma) != self.glsl
            || !matches!(md.word(ma + 1)?, glsl_std_450::FMax | glsl_std_450::NMax)
        {
            return None;
        }
        let (o1, o2) = (md.word(ma + 2)?, md.word(ma + 3)?);
        let current = Some(Sym::Header(h, key));
        let slot_load = if self.resolve(fi, o1, 0) == current {
            o2
        } else if self.resolve(fi, o2, 0) == current {
            o1
        } else {
            return None;
        };
        let (_, ld) = self.def(slot_load)?;
        if ld.opcode != op::Load {
            return None;
        }
        let (w, idx) = self.slot(ld.word(ld.first_arg())?)?;
        let Some(Sym::Header(h2, counter)) = self.resolve(fi, idx, 0) else {
            return None;
        };
        if h2 != h {
            return None;
        }

        // The counter runs 0, 1, 2, ...
        let (c0, c1) = self.header_parts(fi, h, counter)?;
        if !self.is_int_constant(Some(c0), 0) {
            return None;
        }
        let Sym::Id(inc) = c1 else { return None };
        let (_, incd) = self.def(inc)?;
        if incd.opcode != op::IAdd {
            return None;
        }
        let (i1, i2) = (self.arg(inc, 0)?, self.arg(inc, 1)?);
        let counter_sym = Some(Sym::Header(h, counter));
        let (r1, r2) = (self.resolve(fi, i1, 0), self.resolve(fi, i2, 0));
        let steps_by_one = (r1 == counter_sym && self.is_int_constant(r2, 1))
            || (r2 == counter_sym && self.is_int_constant(r1, 1));
        if !steps_by_one {
            return None;
        }

        // ... and the loop leaves only when the counter reaches NumSubgroups, at a test every
        // iteration passes.
        let construct: Vec<B> = (0..f.labels.len())
            .filter(|&b| f.in_construct(h, b))
            .collect();
        let mut exit = None;
        for &b in &construct {
            let term = &m.instructions[f.term[b]];
            if !matches!(term.opcode, op::Branch | op::BranchConditional | op::Switch) {
                return None;
            }
            for &s in &f.succ[b] {
                if !f.in_construct(h, s) && (s != merge || exit.replace(b).is_some()) {
                    return None;
                }
            }
            if f.body[b].clone().any(|i| self.is_barrier(i)) {
                return None;
            }
        }
        let eb = exit?;
        let term = &m.instructions[f.term[eb]];
        if term.opcode != op::BranchConditional || term.word(2) != Some(f.labels[merge]) {
            return None;
        }
        let cond = term.word(0)?;
        let (_, cd) = self.def(cond)?;
        if !matches!(cd.opcode, op::ULessThan | op::SLessThan) {
            return None;
        }
        let (lhs, n) = (self.arg(cond, 0)?, self.arg(cond, 1)?);
        if self.resolve(fi, lhs, 0) != counter_sym {
            return None;
        }
        let n_sym = self.resolve(fi, n, 0);
        if !self.is_builtin_load(n_sym, built_in::NumSubgroups) {
            return None;
        }
        let (pre, pb) = self.loop_preds(fi, h)?;
        if !self.fns[fi].dominates(eb, pb) {
            return None;
        }

        // The reads follow one barrier, and nothing writes the slots until the next one.
        let pre_end = self.fns[fi].body[pre].end;
        let before_loop = self.interval(fi, pre, pre_end, w, false);
        let [b2] = before_loop.barriers[..] else {
            return None;
        };
        if !before_loop.touching.is_empty() || before_loop.reaches_entry {
            return None;
        }
        let &(_, b2b) = self.inst_block.get(&b2)?;
        let after = self.interval(fi, b2b, b2, w, true);
        if !after.touching.is_empty() || !after.blocks.contains(&h) {
            return None;
        }
        // The interval before that barrier writes the slots with one store.
        let writes = self.interval(fi, b2b, b2, w, false);
        let [st] = writes.touching[..] else {
            return None;
        };
        if writes.reaches_entry && self.fns[fi].id != entry_function(m)? {
            return None;
        }
        let std_ = &m.instructions[st];
        if std_.opcode != op::Store {
            return None;
        }
        let (w2, sidx) = self.slot(std_.word(0)?)?;
        let sidx_sym = self.resolve(fi, sidx, 0);
        if w2 != w || !self.is_builtin_load(sidx_sym, built_in::SubgroupId) {
            return None;
        }
        let Some(Sym::Id(sel)) = self.resolve(fi, std_.word(1)?, 0) else {
            return None;
        };
        let (_, seld) = self.def(sel)?;
        if seld.opcode != op::Select {
            return None;
        }
        let (sc, sa, sb) = (self.arg(sel, 0)?, self.arg(sel, 1)?, self.arg(sel, 2)?);
        let (ra, rb) = (self.resolve(fi, sa, 0), self.resolve(fi, sb, 0));
        let (av, bv) = (self.float_value(ra)?, self.float_value(rb)?);
        if !rel.holds(av, tval) || rel.holds(bv, tval) {
            return None;
        }
        let Some(Sym::Id(all)) = self.resolve(fi, sc, 0) else {
            return None;
        };
        let (_, alld) = self.def(all)?;
        if alld.opcode != op::GroupNonUniformAll
            || self.arg(all, 0).and_then(|s| m.constant_u64(s)) != Some(scope::Subgroup as u64)
        {
            return None;
        }
        let Some(Sym::Id(predicate)) = self.resolve(fi, self.arg(all, 1)?, 0) else {
            return None;
        };
        let (prel, v, t2) = self.threshold_compare(predicate)?;
        let t2sym = self.resolve(fi, t2, 0);
        if prel != rel || self.float_value(t2sym)?.to_bits() != tval.to_bits() {
            return None;
        }

        // Who writes: every subgroup, once the vote is in.
        let &(_, stb) = self.inst_block.get(&st)?;
        let writer = self.subgroup_writer(fi, stb)?;
        let (_, vb) = self.def_block(all)?;
        // The value voted on is the value the loop starts from, and the vote is not taken again
        // between the write and the loop.
        let vsym = self.resolve(fi, v, 0)?;
        if vsym != entry || !self.same_between(fi, vsym, vb, pre) {
            return None;
        }
        if !(f.dominates(vb, writer) && f.dominates(writer, b2b) && f.dominates(b2b, h)) {
            return None;
        }
        if vb != writer && self.between(fi, writer, pre).contains(&vb) {
            return None;
        }
        let mut blocks = vec![vb, writer, b2b, h, eb, qb];
        blocks.sort_unstable();
        blocks.dedup();
        Some(blocks)
    }

    /// The block whose control must be workgroup-uniform for the store in `stb` to run in every
    /// subgroup: `stb` itself, or the header of `if (SubgroupLocalInvocationId == 0)` or
    /// `if (subgroupElect())` whose true side `stb` is.
    fn subgroup_writer(&mut self, fi: usize, stb: B) -> Option<B> {
        let fns = self.fns;
        let f = &fns[fi];
        let preds: Vec<B> = f.pred[stb]
            .iter()
            .copied()
            .filter(|&p| f.reachable(p))
            .collect();
        let [g] = preds[..] else { return Some(stb) };
        let term = &self.m.instructions[f.term[g]];
        if term.opcode != op::BranchConditional || term.word(1) != Some(f.labels[stb]) {
            return Some(stb);
        }
        let cond = term.word(0)?;
        let (_, cd) = self.def(cond)?;
        let guard = match cd.opcode {
            op::GroupNonUniformElect => {
                self.arg(cond, 0).and_then(|s| self.m.constant_u64(s))
                    == Some(scope::Subgroup as u64)
            }
            op::IEqual => {
                let (l, r) = (self.arg(cond, 0)?, self.arg(cond, 1)?);
                let (ls, rs) = (self.resolve(fi, l, 0), self.resolve(fi, r, 0));
                (self.is_builtin_load(ls, built_in::SubgroupLocalInvocationId)
                    && self.is_int_constant(rs, 0))
                    || (self.is_builtin_load(rs, built_in::SubgroupLocalInvocationId)
                        && self.is_int_constant(ls, 0))
            }
            _ => false,
        };
        // Another condition: the store may run in no invocation of some subgroup.
        guard.then_some(g)
    }
}

/// What a barrier-interval walk found.
#[derive(Default)]
struct Interval {
    barriers: Vec<usize>,
    touching: Vec<usize>,
    reaches_entry: bool,
    blocks: FxHashSet<B>,
}

/// The function of the module's only entry point (None with several: the walk would need to
/// know which one runs).
fn entry_function(m: &Module) -> Option<u32> {
    let mut eps = m.entry_points();
    let first = eps.next()?.word(1)?;
    eps.next().is_none().then_some(first)
}
