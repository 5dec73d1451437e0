//! Divergence (uniformity) analysis of SPIR-V compute modules.
//!
//! For every SSA value, every Function/Private variable and every block the analysis computes a
//! [`Level`] on the lattice constant < uniform < workgroup < subgroup < divergent, and for each
//! level the [`Cause`] that raised it there, so that a finding can be explained as a chain of
//! values back to its source (a built-in such as `LocalInvocationId`, a memory read, an atomic,
//! a divergent branch). It is the SPIR-V form of LLVM's GenericUniformityAnalysis (data
//! dependence, control dependence, sync dependence at joins, temporal divergence at loop exits),
//! using SPIR-V's structured constructs (SPIR-V 2.11) instead of post-dominance frontiers. See the
//! crate README for the algorithm, its assumptions and a worked example.
//!
//! Entry point: [`Analysis::run`].

mod cfg;
mod memory;
mod vote;

use cfg::{B, FnCfg};
use coopmat_spirv::grammar::{self, OperandKind, built_in, group_operation, op, scope};
use coopmat_spirv::{Instruction, Module};
use memory::{Memory, Root};
use rustc_hash::{FxHashMap, FxHashSet};

/// Dominance between the blocks of one function, for clients outside the analysis (the engine
/// decides from it which values are dead once a branch is taken).
pub struct Dominators(FnCfg);

impl Dominators {
    /// The dominator tree of a function definition (None for a declaration).
    pub fn new(m: &Module, f: &coopmat_spirv::module::Function) -> Option<Dominators> {
        FnCfg::new(m, f).map(Dominators)
    }

    /// Whether the block labelled `a` dominates the block labelled `b`; false when either is
    /// unknown or unreachable from the entry.
    pub fn dominates(&self, a: u32, b: u32) -> bool {
        match (self.0.index.get(&a), self.0.index.get(&b)) {
            (Some(&x), Some(&y)) => self.0.dominates(x, y),
            _ => false,
        }
    }

    /// Whether the block labelled `b` is reachable from the entry.
    pub fn reachable(&self, b: u32) -> bool {
        self.0.index.get(&b).is_some_and(|&x| self.0.reachable(x))
    }
}

/// How uniform a value (or a block's control flow) is. Ordered: a larger level is less uniform.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// The same everywhere and known when the pipeline is created (constants, spec constants).
    #[default]
    Constant,
    /// The same for every invocation of the dispatch (push constants, uniform buffers).
    Uniform,
    /// The same within each workgroup (WorkgroupId, workgroup-shared memory).
    Workgroup,
    /// The same within each subgroup (SubgroupId, subgroup reductions and broadcasts).
    Subgroup,
    /// May differ between the invocations of a subgroup.
    Divergent,
}

impl Level {
    /// The level's name in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Constant => "constant",
            Level::Uniform => "uniform",
            Level::Workgroup => "workgroup-uniform",
            Level::Subgroup => "subgroup-uniform",
            Level::Divergent => "divergent",
        }
    }

    /// The most a value may vary and still be dynamically uniform within each instance of
    /// `scope` (a Scope enumerant): Workgroup scope needs workgroup-uniform, Subgroup scope
    /// subgroup-uniform; Device and wider need uniform; Invocation accepts anything.
    pub fn limit_for_scope(scope_value: u32) -> Level {
        match scope_value {
            scope::Workgroup => Level::Workgroup,
            scope::Subgroup => Level::Subgroup,
            scope::Invocation => Level::Divergent,
            _ => Level::Uniform,
        }
    }
}

/// What raised a value, variable or block to its level: one step of an explanation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// A source of non-uniformity at instruction `inst` (a built-in read, memory, an atomic, a
    /// subgroup scan, an element of a cooperative matrix).
    Source {
        /// The instruction.
        inst: usize,
        /// What kind of source.
        kind: SourceKind,
    },
    /// Operand `id` of the defining instruction.
    Operand {
        /// The operand's id.
        id: u32,
    },
    /// A load of Function/Private variable `var`.
    Variable {
        /// The variable's id.
        var: u32,
    },
    /// A store into the variable at instruction `inst`, of value `value` (or the store's control).
    Store {
        /// The store.
        inst: usize,
        /// The stored value (None: the store's control flow or address).
        value: Option<u32>,
        /// The block of the store (for control causes).
        block: u32,
    },
    /// The block runs only for the invocations that took one side of the branch at `inst`
    /// on condition `cond` (control dependence).
    Branch {
        /// The branch instruction.
        inst: usize,
        /// The condition or selector.
        cond: u32,
    },
    /// A phi or return merging values after the divergent branch at `inst` (sync dependence).
    Join {
        /// The branch instruction.
        inst: usize,
        /// The condition or selector.
        cond: u32,
    },
    /// `id` was defined in the loop headed by block `header`, whose exit diverges on the branch
    /// at `inst`, and is used after it (temporal divergence).
    LoopExit {
        /// The value.
        id: u32,
        /// The loop header's label.
        header: u32,
        /// The exiting branch.
        inst: usize,
        /// Its condition.
        cond: u32,
    },
    /// A parameter's argument `arg` at the call `inst`.
    Argument {
        /// The call.
        inst: usize,
        /// The argument id.
        arg: u32,
    },
    /// The value returned by function `func` (its return at instruction `inst`).
    Return {
        /// The callee.
        func: u32,
    },
    /// A function's entry control: the call at `inst` in block `block`.
    Call {
        /// The call.
        inst: usize,
        /// The caller's block.
        block: u32,
    },
    /// A callback (DecodeFunc, CombineFunc, PerElementOp Func) run by the implementation per
    /// element, named at instruction `inst`.
    Callback {
        /// The instruction naming the function.
        inst: usize,
    },
}

/// The kinds of sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// A built-in input variable (the BuiltIn value).
    BuiltIn(u32),
    /// A non-built-in Input variable.
    Input,
    /// Memory another invocation may write (workgroup-shared, or a writable storage buffer):
    /// the same for all invocations of a workgroup in a race-free program, no more.
    SharedMemory,
    /// Memory read through a pointer whose object is unknown.
    UnknownMemory,
    /// An atomic operation's result.
    Atomic,
    /// A subgroup or group operation whose result varies by invocation or by instance.
    Group,
    /// A component of a cooperative matrix (the element-to-invocation mapping is unknown).
    MatrixElement,
    /// An instruction the analysis does not model, taken as divergent.
    Unmodeled,
    /// A comparison every invocation of a workgroup evaluates alike: a subgroup vote combined
    /// through workgroup memory (crate README, "The workgroup vote").
    WorkgroupVote,
}

/// The analysis against an observed execution ([`Analysis::check_observed`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedCheck {
    /// Values observed.
    pub values: usize,
    /// Values the analysis calls subgroup-uniform (or better) that differed: soundness faults.
    pub violations: Vec<u32>,
    /// Values that never differed.
    pub observed_uniform: usize,
    /// Of those, the ones the analysis calls divergent (its imprecision).
    pub called_divergent: usize,
}

/// A step of an explanation chain: the instruction where it happens and its cause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Instruction index in the module.
    pub inst: usize,
    /// The level at this step.
    pub level: Level,
    /// What the step is.
    pub note: String,
}

/// The results of the analysis of one module.
pub struct Analysis<'m> {
    m: &'m Module,
    /// The facts every context run shares.
    sh: std::rc::Rc<Shared>,
    /// Call summaries by context, shared by every context run of this analysis.
    memo: std::rc::Rc<std::cell::RefCell<FxHashMap<Context, Option<Summary>>>>,
    /// Set when this state analyses one function in one call context.
    ctx: Option<CtxRun>,
    values: FxHashMap<u32, (Level, Cause)>,
    vars: FxHashMap<u32, (Level, Cause)>,
    /// Block control per (function, block).
    control: Vec<Vec<(Level, Option<Cause>)>>,
    /// Phis of a block: the join level of the divergent branches that meet there.
    sync: Vec<Vec<(Level, Option<Cause>)>>,
    /// Per loop header (function, block): the level of its exits.
    loop_exit: FxHashMap<(usize, B), (Level, Cause)>,
    /// Per function: entry control, return value, parameter levels.
    entry: Vec<(Level, Option<Cause>)>,
    ret: Vec<(Level, Option<Cause>)>,
    params: Vec<Vec<(Level, Option<Cause>)>>,
    /// Component levels of values loaded from built-in vectors.
    components: FxHashMap<u32, [Level; 3]>,
    /// Cooperative matrices (SSA ids and variables) whose elements may differ from each other;
    /// the others are splats (every element equal: a constant or constructed splat, a Row|Column
    /// reduction), whose elements are as uniform as the matrix. Rises only, from "all equal".
    mixed: FxHashSet<u32>,
    changed: bool,
}

/// The levels of one function's values within one call ([`Analysis::in_call`]).
pub struct CallLevels {
    values: FxHashMap<u32, (Level, Cause)>,
}

impl CallLevels {
    /// The level of a value of the function among the lanes of the call (ids the function does
    /// not define are constants or module-level values: constant).
    pub fn value(&self, id: u32) -> Level {
        self.values.get(&id).map_or(Level::Constant, |v| v.0)
    }
}

/// The facts of a module that do not depend on a call context.
struct Shared {
    fns: Vec<FnCfg>,
    fn_index: FxHashMap<u32, usize>,
    /// Defining (function, block) of each id defined in a function body.
    def_block: FxHashMap<u32, (usize, B)>,
    /// Instruction index -> (function, block).
    inst_block: FxHashMap<usize, (usize, B)>,
    mem: Memory,
    /// Cooperative matrix type ids.
    matrix_types: FxHashSet<u32>,
    /// Comparisons proven to be workgroup votes ([`vote`]), with the blocks whose control the
    /// proof needs workgroup-uniform.
    votes: vote::Votes,
}

/// A call context: a function with the levels of its arguments, of the private memory its
/// pointer arguments point to, and of the control it is called in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Context {
    fi: usize,
    args: Vec<Level>,
    /// None: the argument may point to other than private variables of the caller.
    pointees: Vec<Option<Level>>,
    entry: Level,
}

/// What a call returns in a context: the result's level and, per pointer parameter, the level
/// of what the function stores through it.
#[derive(Clone, Debug)]
struct Summary {
    ret: Level,
    out: Vec<Level>,
}

/// The state of a context run: the function's parameter ids and the levels of the memory its
/// pointer parameters point to (raised by the function's own stores through them).
struct CtxRun {
    params: Vec<u32>,
    pointees: Vec<Option<Level>>,
    out: Vec<Level>,
}

fn raise<K: std::hash::Hash + Eq>(
    map: &mut FxHashMap<K, (Level, Cause)>,
    key: K,
    level: Level,
    cause: Cause,
    changed: &mut bool,
) {
    match map.get_mut(&key) {
        Some(cur) if cur.0 >= level => {}
        Some(cur) => {
            *cur = (level, cause);
            *changed = true;
        }
        None => {
            map.insert(key, (level, cause));
            *changed = true;
        }
    }
}

fn raise_slot(slot: &mut (Level, Option<Cause>), level: Level, cause: Cause, changed: &mut bool) {
    if level > slot.0 {
        *slot = (level, Some(cause));
        *changed = true;
    }
}

/// The running maximum of an instruction's contributions with the cause of the first maximum.
#[derive(Clone, Copy)]
struct Acc {
    level: Level,
    cause: Option<Cause>,
}

impl Acc {
    fn new() -> Acc {
        Acc {
            level: Level::Constant,
            cause: None,
        }
    }
    fn add(&mut self, level: Level, cause: Cause) {
        if level > self.level || self.cause.is_none() && level == self.level {
            self.level = level;
            self.cause = Some(cause);
        }
    }
}

impl<'m> Analysis<'m> {
    /// Analyses every function of `m` to a fixed point.
    pub fn run(m: &'m Module) -> Analysis<'m> {
        let fns: Vec<FnCfg> = m
            .functions()
            .iter()
            .filter_map(|f| FnCfg::new(m, f))
            .collect();
        let fn_index = fns.iter().enumerate().map(|(i, f)| (f.id, i)).collect();
        let mut def_block = FxHashMap::default();
        let mut inst_block = FxHashMap::default();
        for (fi, f) in fns.iter().enumerate() {
            for b in 0..f.labels.len() {
                for i in f.body[b].clone() {
                    inst_block.insert(i, (fi, b));
                    if let Some(id) = m.instructions[i].result_id {
                        def_block.insert(id, (fi, b));
                    }
                }
            }
        }
        let (control, sync) = (per_block(&fns), per_block(&fns));
        let params = fns
            .iter()
            .map(|f| vec![(Level::Constant, None); f.params.len()])
            .collect();
        let n = fns.len();
        let mem = Memory::new(m);
        let votes = vote::find(m, &fns, &inst_block, &mem);
        let mut a = Analysis {
            m,
            sh: std::rc::Rc::new(Shared {
                fns,
                fn_index,
                def_block,
                inst_block,
                mem,
                matrix_types: m
                    .instructions
                    .iter()
                    .filter(|i| {
                        matches!(
                            i.opcode,
                            op::TypeCooperativeMatrixKHR | op::TypeCooperativeMatrixNV
                        )
                    })
                    .filter_map(|i| i.result_id)
                    .collect(),
                votes,
            }),
            memo: Default::default(),
            ctx: None,
            values: FxHashMap::default(),
            vars: FxHashMap::default(),
            control,
            sync,
            loop_exit: FxHashMap::default(),
            entry: vec![(Level::Constant, None); n],
            ret: vec![(Level::Constant, None); n],
            params,
            components: FxHashMap::default(),
            mixed: FxHashSet::default(),
            changed: false,
        };
        a.seed_callbacks();
        a.seed_variables();
        // Monotone over a finite lattice: terminates; a pass per level raised at most.
        loop {
            a.changed = false;
            // Summaries read whole-module levels (Private variables, matrices) that may have
            // risen since: recompute them every pass, so the last pass uses the final levels.
            a.memo.borrow_mut().clear();
            for fi in 0..a.sh.fns.len() {
                a.pass(fi);
            }
            if !a.changed {
                break;
            }
        }
        a
    }

    /// Functions the implementation calls per element (DecodeFunc, CombineFunc, PerElementOp
    /// Func) run in non-uniform control with divergent parameters.
    fn seed_callbacks(&mut self) {
        let m = self.m;
        for (i, inst) in m.instructions.iter().enumerate() {
            if !calls_named_functions(inst.opcode) {
                continue;
            }
            for id in arg_ids(inst) {
                if let Some(&fi) = self.sh.fn_index.get(&id) {
                    let cause = Cause::Callback { inst: i };
                    let mut ch = false;
                    raise_slot(&mut self.entry[fi], Level::Divergent, cause, &mut ch);
                    for p in &mut self.params[fi] {
                        raise_slot(p, Level::Divergent, cause, &mut ch);
                    }
                }
            }
        }
    }

    /// Initializers of variables.
    fn seed_variables(&mut self) {
        let m = self.m;
        for (i, inst) in m.instructions.iter().enumerate() {
            if inst.opcode == op::Variable
                && let (Some(id), Some(init)) = (inst.result_id, inst.word(3))
            {
                let l = self.value(init);
                let mut ch = false;
                raise(
                    &mut self.vars,
                    id,
                    l,
                    Cause::Store {
                        inst: i,
                        value: Some(init),
                        block: 0,
                    },
                    &mut ch,
                );
            }
        }
    }

    /// Compares the analysis with what an execution observed: `observed` holds (result id,
    /// whether the active invocations of some subgroup held different values), as
    /// `coopmat_exec::Pipeline::observed_uniformity` reports it.
    pub fn check_observed(&self, observed: &[(u32, bool)]) -> ObservedCheck {
        ObservedCheck {
            values: observed.len(),
            violations: observed
                .iter()
                .filter(|&&(id, differs)| differs && self.value(id) <= Level::Subgroup)
                .map(|&(id, _)| id)
                .collect(),
            observed_uniform: observed.iter().filter(|&&(_, d)| !d).count(),
            called_divergent: observed
                .iter()
                .filter(|&&(id, d)| !d && self.value(id) == Level::Divergent)
                .count(),
        }
    }

    /// The workgroup size per dimension where the module states it with plain constants.
    pub fn workgroup_size(&self) -> [Option<u64>; 3] {
        self.sh.mem.local_size
    }

    /// The level of a value anywhere (temporal divergence not included).
    pub fn value(&self, id: u32) -> Level {
        self.values.get(&id).map_or(Level::Constant, |v| v.0)
    }

    /// The levels of `function`'s values within one call that every lane enters together
    /// (uniform control at entry), its parameters at the levels `args` gives (divergent past
    /// its end): what a value may differ by among the lanes of that one call. For the functions
    /// an implementation calls itself, whose lanes are elements (SPV_NV_cooperative_matrix2's
    /// per-element functions get one value of each non-matrix extra operand per call). None:
    /// no function of that id has a body.
    pub fn in_call(&self, function: u32, args: &[Level]) -> Option<CallLevels> {
        let &fi = self.sh.fn_index.get(&function)?;
        let nparams = self.params[fi].len();
        let mut args = args.to_vec();
        args.resize(nparams, Level::Divergent);
        let context = Context {
            fi,
            args,
            pointees: vec![None; nparams],
            entry: Level::Constant,
        };
        Some(CallLevels {
            values: self.context_run(&context).values,
        })
    }

    /// The level of `id` as used in block `block` (a label id): includes temporal divergence
    /// when `id` is defined inside a loop with divergent exits and `block` is outside it.
    pub fn value_at(&self, id: u32, block: u32) -> Level {
        self.value_at_cause(id, block).0
    }

    fn value_at_cause(&self, id: u32, block: u32) -> (Level, Option<Cause>) {
        let own = self.values.get(&id).copied();
        let mut best = own.map_or((Level::Constant, None), |(l, c)| (l, Some(c)));
        if let Some(&(fi, d)) = self.sh.def_block.get(&id)
            && let Some(&ub) = self.sh.fns[fi].index.get(&block)
        {
            let f = &self.sh.fns[fi];
            for &h in &f.loops[d] {
                if f.in_construct(h, ub) {
                    break;
                }
                if let Some(&(l, c)) = self.loop_exit.get(&(fi, h))
                    && l > best.0
                {
                    let Cause::Branch { inst, cond } = c else {
                        continue;
                    };
                    best = (
                        l,
                        Some(Cause::LoopExit {
                            id,
                            header: f.labels[h],
                            inst,
                            cond,
                        }),
                    );
                }
            }
        }
        best
    }

    /// The control level of a block (label id): how uniform the set of invocations executing it
    /// is. Constant or uniform: every invocation that entered the function.
    pub fn control(&self, block: u32) -> Level {
        self.block_pos(block)
            .map_or(Level::Constant, |(fi, b)| self.control[fi][b].0)
    }

    /// The level of a Function or Private variable's contents.
    pub fn variable(&self, var: u32) -> Level {
        self.vars.get(&var).map_or(Level::Constant, |v| v.0)
    }

    /// Whether the cooperative matrix `id` (an SSA value or a variable holding matrices) may
    /// have elements that differ from each other; false for splats (a constant or constructed
    /// splat, a reduction over rows and columns), whose every element is the same.
    pub fn may_hold_different_elements(&self, id: u32) -> bool {
        self.mixed.contains(&id)
    }

    /// The block (label id) holding instruction `inst`.
    pub fn block_of(&self, inst: usize) -> Option<u32> {
        self.sh
            .inst_block
            .get(&inst)
            .map(|&(fi, b)| self.sh.fns[fi].labels[b])
    }

    /// The function holding instruction `inst`.
    pub fn function_of(&self, inst: usize) -> Option<u32> {
        self.sh
            .inst_block
            .get(&inst)
            .map(|&(fi, _)| self.sh.fns[fi].id)
    }

    fn block_pos(&self, label: u32) -> Option<(usize, B)> {
        let i = self.m.def_index(label)?;
        // The label's first body instruction (every block has at least its terminator).
        let &(fi, _) = self.sh.inst_block.get(&(i + 1))?;
        Some((fi, *self.sh.fns[fi].index.get(&label)?))
    }

    /// One pass over a function: control from its branches, then every instruction.
    fn pass(&mut self, fi: usize) {
        let nb = self.sh.fns[fi].labels.len();
        let entry = self.entry[fi];
        for b in 0..nb {
            if let Some(c) = entry.1 {
                let mut ch = false;
                raise_slot(&mut self.control[fi][b], entry.0, c, &mut ch);
                self.changed |= ch;
            }
        }
        // Parameters precede the first block: their levels come from the call sites.
        let sh = self.sh.clone();
        for (k, &id) in sh.fns[fi].params.iter().enumerate() {
            if self.is_matrix_type(self.m.type_of(id)) {
                self.mark_mixed(id);
            }
            if let Some((l, Some(c))) = self.params[fi].get(k).copied() {
                let mut ch = false;
                raise(&mut self.values, id, l, c, &mut ch);
                self.changed |= ch;
            }
        }
        for h in 0..nb {
            self.branch_effects(fi, h);
        }
        for b in 0..nb {
            if !self.sh.fns[fi].reachable(b) {
                continue;
            }
            for i in self.sh.fns[fi].body[b].clone() {
                self.transfer(fi, b, i);
            }
        }
    }

    /// Control and sync dependence of the conditional branch ending block `h`.
    fn branch_effects(&mut self, fi: usize, h: B) {
        let m = self.m;
        let term_i = self.sh.fns[fi].term[h];
        let term = &m.instructions[term_i];
        let cond = match term.opcode {
            op::BranchConditional => term.word(0),
            op::Switch => term.word(0),
            _ => None,
        };
        let Some(cond) = cond else { return };
        if self.sh.fns[fi].succ[h].len() < 2 {
            return;
        }
        let (c, _) = self.value_at_cause(cond, self.sh.fns[fi].labels[h]);
        if c <= Level::Uniform {
            return;
        }
        let cause = Cause::Branch { inst: term_i, cond };
        let join = Cause::Join { inst: term_i, cond };
        let f = &self.sh.fns[fi];
        let nb = f.labels.len();
        let mut ctrl: Vec<B> = Vec::new();
        let mut sync: Vec<B> = Vec::new();
        let mut exits: Vec<B> = Vec::new();
        let mut loop_exits: Vec<B> = Vec::new();
        let mut returns = false;
        match f.header[h] {
            Some(hd) => {
                let construct: Vec<B> = (0..nb).filter(|&b| f.in_construct(h, b)).collect();
                for &b in &construct {
                    if b != h || hd.is_loop {
                        ctrl.push(b);
                    }
                    if b != h && f.pred[b].len() >= 2 {
                        sync.push(b);
                    }
                    let t = &m.instructions[f.term[b]];
                    if matches!(
                        t.opcode,
                        op::Return | op::ReturnValue | op::Kill | op::TerminateInvocation
                    ) {
                        returns = true;
                    }
                    for &s in &f.succ[b] {
                        if Some(s) != hd.merge && !construct.contains(&s) {
                            exits.push(s);
                        }
                    }
                }
                if let Some(mb) = hd.merge {
                    sync.push(mb);
                    // A loop header's own branch to its merge: invocations leave the loop in
                    // different iterations.
                    if hd.is_loop && f.succ[h].contains(&mb) {
                        loop_exits.push(h);
                    }
                }
            }
            None => {
                // A branch without a merge instruction: a break or continue of an enclosing
                // loop, or a branch to an enclosing selection's merge. A back edge to an
                // enclosing loop's header is no exit: the invocations that take it are all in
                // the next iteration together.
                for &s in &f.succ[h] {
                    if !f.loops[h].contains(&s) {
                        exits.push(s);
                    }
                }
            }
        }
        // Exits to an enclosing loop's merge or continue target: the loop runs on for some of
        // the invocations only, and its merge block joins values of different iterations.
        for s in exits {
            sync.push(s);
            let enclosing = f.loops[h].iter().copied().find(|&l| !f.in_construct(l, s));
            match enclosing {
                Some(l) => {
                    ctrl.extend((0..nb).filter(|&b| f.in_construct(l, b)));
                    if f.header[l].and_then(|x| x.merge) == Some(s) {
                        loop_exits.push(l);
                    }
                }
                None => {
                    if let Some(l) = f.loops[h].first().copied() {
                        // A continue: the rest of the loop body runs for fewer invocations.
                        ctrl.extend((0..nb).filter(|&b| f.in_construct(l, b)));
                    }
                }
            }
        }
        if returns {
            ctrl.extend(f.reachable_from(h));
        }
        let mut ch = false;
        for b in ctrl {
            raise_slot(&mut self.control[fi][b], c, cause, &mut ch);
        }
        for b in sync {
            raise_slot(&mut self.sync[fi][b], c, join, &mut ch);
        }
        for l in loop_exits {
            raise(&mut self.loop_exit, (fi, l), c, cause, &mut ch);
        }
        if returns {
            raise_slot(&mut self.ret[fi], c, join, &mut ch);
        }
        self.changed |= ch;
    }

    fn set(&mut self, id: u32, acc: Acc) {
        if let Some(c) = acc.cause {
            let mut ch = false;
            raise(&mut self.values, id, acc.level, c, &mut ch);
            self.changed |= ch;
        }
    }

    fn operand(&self, acc: &mut Acc, id: u32, block: u32) {
        acc.add(self.value_at(id, block), Cause::Operand { id });
    }

    /// The transfer function of instruction `i` in block `b` of function `fi`.
    fn transfer(&mut self, fi: usize, b: B, i: usize) {
        let m = self.m;
        let inst = &m.instructions[i];
        let label = self.sh.fns[fi].labels[b];
        let (rt, rid) = (inst.result_type, inst.result_id);
        let a = inst.first_arg();
        let w = |k: usize| inst.word(a + k);
        let mut acc = Acc::new();
        match inst.opcode {
            _ if self.vote_holds(i) => acc.add(
                Level::Workgroup,
                Cause::Source {
                    inst: i,
                    kind: SourceKind::WorkgroupVote,
                },
            ),
            op::Phi => {
                let mut k = 0;
                while let (Some(v), Some(p)) = (w(k), w(k + 1)) {
                    let (l, _) = self.value_at_cause(v, p);
                    acc.add(l, Cause::Operand { id: v });
                    k += 2;
                }
                // A cooperative matrix is one object per scope instance: the versions that meet
                // here are versions of that object (element writes may happen in non-uniform
                // control flow, SPV_KHR_cooperative_matrix issue 11), not per-invocation values.
                let s = self.sync[fi][b];
                if let Some(c) = s.1
                    && !self.is_matrix_type(rt)
                {
                    acc.add(s.0, c);
                }
            }
            op::CompositeInsert if self.is_matrix_type(rt) => {
                // Writing one element leaves the object as uniform as it was.
                if let Some(comp) = w(1) {
                    self.operand(&mut acc, comp, label);
                }
            }
            op::FunctionCall => {
                let callee = w(0).unwrap_or(0);
                if let Some(&ci) = self.sh.fn_index.get(&callee) {
                    let ctl = self.control[fi][b].0;
                    let mut ch = false;
                    raise_slot(
                        &mut self.entry[ci],
                        ctl,
                        Cause::Call {
                            inst: i,
                            block: label,
                        },
                        &mut ch,
                    );
                    let mut k = 1;
                    while let Some(arg) = w(k) {
                        let (l, _) = self.value_at_cause(arg, label);
                        if let Some(slot) = self.params[ci].get_mut(k - 1) {
                            raise_slot(slot, l, Cause::Argument { inst: i, arg }, &mut ch);
                        }
                        k += 1;
                    }
                    self.changed |= ch;
                    // The result in this call's context (a summary per distinct context), not
                    // the join over every caller.
                    let args: Vec<u32> = (1..).map_while(&w).collect();
                    let context = Context {
                        fi: ci,
                        args: args.iter().map(|&x| self.value_at(x, label)).collect(),
                        pointees: args.iter().map(|&x| self.pointee_level(x)).collect(),
                        entry: ctl,
                    };
                    let summary = self.summary(context);
                    acc.add(summary.ret, Cause::Return { func: callee });
                    // What the callee stores through pointer arguments.
                    for (k, &arg) in args.iter().enumerate() {
                        let l = summary.out.get(k).copied().unwrap_or(Level::Constant);
                        if l > Level::Constant {
                            let mut s = Acc::new();
                            s.add(l, Cause::Return { func: callee });
                            self.store(arg, s);
                        }
                    }
                } else {
                    acc.add(
                        Level::Divergent,
                        Cause::Source {
                            inst: i,
                            kind: SourceKind::Unmodeled,
                        },
                    );
                }
            }
            op::ReturnValue => {
                if let Some(v) = w(0) {
                    let (l, _) = self.value_at_cause(v, label);
                    let mut ch = false;
                    raise_slot(&mut self.ret[fi], l, Cause::Operand { id: v }, &mut ch);
                    // A function whose only return is uniform still returns "something".
                    if self.ret[fi].1.is_none() {
                        self.ret[fi].1 = Some(Cause::Operand { id: v });
                        ch = true;
                    }
                    self.changed |= ch;
                }
                return;
            }
            op::Load | op::AtomicLoad => {
                let ptr = w(0).unwrap_or(0);
                self.operand(&mut acc, ptr, label);
                if self.points_into_matrix(ptr) && self.pointee_mixed(ptr) {
                    // An element of a cooperative matrix held in a variable: which element an
                    // invocation holds is the implementation's mapping.
                    acc.add(
                        Level::Divergent,
                        Cause::Source {
                            inst: i,
                            kind: SourceKind::MatrixElement,
                        },
                    );
                } else if self.points_into_matrix(ptr) {
                    // Every element equal: the element is as uniform as the matrix.
                    self.load(&mut acc, i, ptr, 0);
                } else if inst.opcode == op::AtomicLoad {
                    acc.add(
                        Level::Divergent,
                        Cause::Source {
                            inst: i,
                            kind: SourceKind::Atomic,
                        },
                    );
                } else {
                    self.load(&mut acc, i, ptr, rid.unwrap_or(0));
                }
            }
            op::Store => {
                let (ptr, v) = (w(0).unwrap_or(0), w(1).unwrap_or(0));
                if self.points_into_matrix(ptr) {
                    // An element of a cooperative matrix: see OpPhi. The other elements keep
                    // their values: the matrix is no longer a splat.
                    self.mark_pointee_mixed(ptr);
                    return;
                }
                let whole_matrix = self.is_matrix_type(m.type_of(v));
                if whole_matrix && self.mixed.contains(&v) {
                    self.mark_pointee_mixed(ptr);
                }
                let mut s = Acc::new();
                s.add(
                    self.value_at(v, label),
                    Cause::Store {
                        inst: i,
                        value: Some(v),
                        block: label,
                    },
                );
                let ctl = self.control[fi][b];
                let store = Cause::Store {
                    inst: i,
                    value: None,
                    block: label,
                };
                if !whole_matrix {
                    s.add(ctl.0, store);
                    let (pl, _) = self.value_at_cause(ptr, label);
                    s.add(pl, store);
                }
                self.store(ptr, s);
                return;
            }
            op::CopyMemory | op::CopyMemorySized => {
                let (dst, src) = (w(0).unwrap_or(0), w(1).unwrap_or(0));
                let mut s = Acc::new();
                self.load(&mut s, i, src, 0);
                self.add_store_control(&mut s, fi, b, i);
                self.store(dst, s);
                return;
            }
            op::Variable | op::Undef | op::Label => return,
            op::ExtInst if self.sh.mem.non_semantic(inst) => return,
            op::CompositeExtract => {
                let comp = w(0).unwrap_or(0);
                let matrix = m
                    .type_of(comp)
                    .is_some_and(|t| m.type_view(t).coop_matrix().is_some());
                if matrix {
                    self.lane_share(&mut acc, i, comp, label);
                } else if let (Some(cl), Some(k)) = (self.components.get(&comp), w(1)) {
                    let l = cl.get(k as usize).copied().unwrap_or(Level::Divergent);
                    acc.add(l, Cause::Operand { id: comp });
                } else {
                    self.operand(&mut acc, comp, label);
                }
            }
            // A lane's share of a matrix as an array (SPV_QCOM_cooperative_matrix_conversion):
            // as a component of it, the same in every lane only when the elements are.
            op::CompositeExtractCoopMatQCOM => {
                self.lane_share(&mut acc, i, w(0).unwrap_or(0), label)
            }
            // The coordinates of a lane's component follow the element-to-invocation mapping:
            // they differ from lane to lane whatever the operands
            // (SPV_EXT_cooperative_matrix_maintenance1).
            op::CooperativeMatrixGetCoordinateEXT => acc.add(
                Level::Divergent,
                Cause::Source {
                    inst: i,
                    kind: SourceKind::MatrixElement,
                },
            ),
            o if is_atomic(o) => {
                acc.add(
                    Level::Divergent,
                    Cause::Source {
                        inst: i,
                        kind: SourceKind::Atomic,
                    },
                );
                // An atomic on a private variable changes it per invocation.
                if let Some(ptr) = w(0) {
                    let mut s = Acc::new();
                    s.add(
                        Level::Divergent,
                        Cause::Source {
                            inst: i,
                            kind: SourceKind::Atomic,
                        },
                    );
                    self.store(ptr, s);
                }
            }
            o if group_class(o) => self.group(&mut acc, i, label),
            _ => {
                for id in arg_ids(inst) {
                    self.operand(&mut acc, id, label);
                }
                // Instructions that write through pointer operands (GLSL modf/frexp, the
                // cooperative stores) make the pointee as varying as their inputs.
                if self.sh.mem.writes(inst) {
                    let mut s = acc;
                    self.add_store_control(&mut s, fi, b, i);
                    for ptr in memory::written_pointers(m, inst) {
                        self.store(ptr, s);
                    }
                }
            }
        }
        if let Some(id) = rid
            && self.is_matrix_type(rt)
            && self.result_mixed(inst, label)
        {
            self.mark_mixed(id);
        }
        if let Some(id) = rid {
            if acc.cause.is_none() {
                acc.cause = Some(Cause::Operand { id });
                acc.level = Level::Constant;
            }
            self.set(id, acc);
        }
    }

    /// Whether instruction `i` is a workgroup vote whose blocks all run in workgroup-uniform
    /// control (so far: control levels only rise, and the comparison with them).
    fn vote_holds(&self, i: usize) -> bool {
        self.sh.votes.get(&i).is_some_and(|(fi, blocks)| {
            blocks
                .iter()
                .all(|&b| self.control[*fi][b].0 <= Level::Workgroup)
        })
    }

    /// Adds a store's control level: a variable written in non-uniform control flow holds
    /// different values afterwards.
    fn add_store_control(&self, s: &mut Acc, fi: usize, b: B, i: usize) {
        let block = self.sh.fns[fi].labels[b];
        s.add(
            self.control[fi][b].0,
            Cause::Store {
                inst: i,
                value: None,
                block,
            },
        );
    }

    /// In a context run: the index of the pointer parameter `ptr` is derived from, when all the
    /// memory it may point to is that of private variables (the context knows its level).
    fn ctx_param_index(&self, ptr: u32) -> Option<usize> {
        let c = self.ctx.as_ref()?;
        let mut p = ptr;
        for _ in 0..64 {
            let d = self.m.def(p)?;
            match d.opcode {
                op::AccessChain | op::InBoundsAccessChain | op::CopyObject => {
                    p = d.word(d.first_arg())?;
                }
                op::FunctionParameter => {
                    let k = c.params.iter().position(|&x| x == p)?;
                    return c.pointees[k].is_some().then_some(k);
                }
                _ => return None,
            }
        }
        None
    }

    /// The level of the private memory a pointer argument points to, for a call context; None
    /// when it may point to anything else (or is no pointer).
    fn pointee_level(&self, arg: u32) -> Option<Level> {
        if let Some(k) = self.ctx_param_index(arg) {
            return self.ctx.as_ref().and_then(|c| c.pointees[k]);
        }
        let is_pointer = self.m.type_of(arg).is_some_and(|t| {
            matches!(
                self.m.type_view(t),
                coopmat_spirv::types::Type::Pointer { .. }
            )
        });
        if !is_pointer {
            return None;
        }
        let mem = &self.sh.mem;
        match mem.roots(self.m, arg) {
            Root::Vars(vars)
                if !vars.is_empty()
                    && vars
                        .iter()
                        .all(|&v| memory::is_private(mem.class(v)) && mem.builtin(v).is_none()) =>
            {
                vars.iter().map(|&v| self.variable(v)).max()
            }
            _ => None,
        }
    }

    /// The summary of a call context: the function analysed alone with its parameters at the
    /// context's levels, memoized. A context still being analysed (recursion, which Vulkan
    /// forbids) gets the pessimistic answer.
    fn summary(&self, context: Context) -> Summary {
        let nparams = self.params.get(context.fi).map_or(0, Vec::len);
        let pessimistic = Summary {
            ret: Level::Divergent,
            out: vec![Level::Divergent; nparams],
        };
        match self.memo.borrow().get(&context) {
            Some(Some(s)) => return s.clone(),
            Some(None) => return pessimistic,
            None => {}
        }
        if self.memo.borrow().len() > MAX_CONTEXTS {
            return pessimistic;
        }
        self.memo.borrow_mut().insert(context.clone(), None);
        let fi = context.fi;
        let sub = self.context_run(&context);
        let summary = Summary {
            ret: sub.ret[fi].0,
            out: sub.ctx.map_or_else(Vec::new, |c| c.out),
        };
        self.memo
            .borrow_mut()
            .insert(context, Some(summary.clone()));
        summary
    }

    /// The function of `context` analysed alone with its parameters at the context's levels
    /// (not memoized; the calls it makes are).
    fn context_run(&self, context: &Context) -> Analysis<'m> {
        let nparams = self.params.get(context.fi).map_or(0, Vec::len);
        let m = self.m;
        let fi = context.fi;
        let param_ids = self.sh.fns[fi].params.clone();
        let n = self.sh.fns.len();
        let callback = Cause::Callback { inst: 0 };
        let mut params: Vec<Vec<(Level, Option<Cause>)>> = self
            .params
            .iter()
            .map(|p| vec![(Level::Constant, None); p.len()])
            .collect();
        params[fi] = context.args.iter().map(|&l| (l, Some(callback))).collect();
        params[fi].resize(nparams, (Level::Divergent, Some(callback)));
        let mut entry = vec![(Level::Constant, None); n];
        entry[fi] = (context.entry, Some(callback));
        // Other variables keep their whole-module levels (Private ones, and the callers' that
        // unknown pointers reach); the function's own Function variables start over.
        let vars = self
            .vars
            .iter()
            .filter(|&(v, _)| self.sh.def_block.get(v).is_none_or(|&(fj, _)| fj != fi))
            .map(|(&v, &x)| (v, x))
            .collect();
        let mut pointees = context.pointees.clone();
        pointees.resize(nparams, None);
        let mut sub = Analysis {
            m,
            sh: self.sh.clone(),
            memo: self.memo.clone(),
            ctx: Some(CtxRun {
                params: param_ids,
                pointees,
                out: vec![Level::Constant; nparams],
            }),
            values: FxHashMap::default(),
            vars,
            control: per_block(&self.sh.fns),
            sync: per_block(&self.sh.fns),
            loop_exit: FxHashMap::default(),
            entry,
            ret: vec![(Level::Constant, None); n],
            params,
            components: FxHashMap::default(),
            mixed: self.mixed.clone(),
            changed: false,
        };
        loop {
            sub.changed = false;
            sub.pass(fi);
            if !sub.changed {
                break;
            }
        }
        sub
    }

    fn mark_mixed(&mut self, id: u32) {
        if self.mixed.insert(id) {
            self.changed = true;
        }
    }

    /// Marks every matrix variable `ptr` may point into as mixed.
    fn mark_pointee_mixed(&mut self, ptr: u32) {
        match self.sh.mem.roots(self.m, ptr) {
            Root::Vars(vars) => {
                for v in vars {
                    self.mark_mixed(v);
                }
            }
            Root::Unknown(class) => {
                for v in self.sh.mem.private_vars(class) {
                    self.mark_mixed(v);
                }
            }
        }
    }

    /// Whether a variable `ptr` points into may hold a mixed matrix.
    fn pointee_mixed(&self, ptr: u32) -> bool {
        match self.sh.mem.roots(self.m, ptr) {
            Root::Vars(vars) => vars.iter().any(|v| self.mixed.contains(v)),
            Root::Unknown(_) => true,
        }
    }

    /// What instruction `i` reads of matrix `mat` by the element-to-invocation mapping (a
    /// component, or a lane's whole share): divergent when the elements may differ, else the
    /// matrix's own level.
    fn lane_share(&self, acc: &mut Acc, i: usize, mat: u32, label: u32) {
        if self.mixed.contains(&mat) {
            acc.add(
                Level::Divergent,
                Cause::Source {
                    inst: i,
                    kind: SourceKind::MatrixElement,
                },
            );
        } else {
            self.operand(acc, mat, label);
        }
    }

    /// Whether a matrix result may have elements that differ from each other.
    fn result_mixed(&self, inst: &Instruction, label: u32) -> bool {
        let a = inst.first_arg();
        match inst.opcode {
            // A splat.
            op::CompositeConstruct | op::CompositeConstructReplicateEXT => false,
            // Reduced over rows and columns: every element is the reduction of the whole matrix.
            op::CooperativeMatrixReduceNV => {
                use grammar::cooperative_matrix_reduce as r;
                let mode = inst.word(a + 1).unwrap_or(0);
                mode & (r::Row | r::Column) != (r::Row | r::Column)
            }
            op::Load => {
                let ptr = inst.word(a).unwrap_or(0);
                self.pointee_mixed(ptr)
            }
            op::Phi | op::CopyObject => arg_ids(inst).any(|id| self.mixed.contains(&id)),
            op::Select => {
                let cond = inst.word(a).unwrap_or(0);
                self.value_at(cond, label) > Level::Workgroup
                    || arg_ids(inst).skip(1).any(|id| self.mixed.contains(&id))
            }
            o if is_elementwise(o) => arg_ids(inst).any(|id| self.mixed.contains(&id)),
            _ => true,
        }
    }

    /// Whether a type id is a cooperative matrix type.
    fn is_matrix_type(&self, ty: Option<u32>) -> bool {
        ty.is_some_and(|t| self.sh.matrix_types.contains(&t))
    }

    /// Whether a pointer selects an element inside a cooperative matrix.
    fn points_into_matrix(&self, ptr: u32) -> bool {
        let m = self.m;
        let mut p = ptr;
        for _ in 0..64 {
            let Some(d) = m.def(p) else { return false };
            if !matches!(d.opcode, op::AccessChain | op::InBoundsAccessChain) {
                return false;
            }
            let Some(base) = d.word(d.first_arg()) else {
                return false;
            };
            let pointee = m.type_of(base).and_then(|t| match m.type_view(t) {
                coopmat_spirv::types::Type::Pointer { pointee, .. } => Some(pointee),
                _ => None,
            });
            if self.is_matrix_type(pointee) {
                return true;
            }
            p = base;
        }
        false
    }

    /// Adds what a load through `ptr` reads to `acc`.
    fn load(&mut self, acc: &mut Acc, i: usize, ptr: u32, result: u32) {
        let m = self.m;
        if let Some(k) = self.ctx_param_index(ptr) {
            let l = self
                .ctx
                .as_ref()
                .and_then(|c| c.pointees[k])
                .unwrap_or(Level::Divergent);
            acc.add(l, Cause::Operand { id: ptr });
            return;
        }
        let roots = self.sh.mem.roots(m, ptr);
        match roots {
            Root::Vars(vars) => {
                for var in vars {
                    self.load_var(acc, i, var, ptr, result);
                }
            }
            Root::Unknown(class) => match memory::class_level(class, false) {
                Some((l, kind)) => acc.add(l, Cause::Source { inst: i, kind }),
                None => acc.add(
                    Level::Divergent,
                    Cause::Source {
                        inst: i,
                        kind: SourceKind::UnknownMemory,
                    },
                ),
            },
        }
    }

    fn load_var(&mut self, acc: &mut Acc, i: usize, var: u32, ptr: u32, result: u32) {
        let class = self.sh.mem.class(var);
        if let Some(builtin) = self.sh.mem.builtin(var) {
            let comps = self.builtin_components(builtin);
            let l = match self.sh.mem.component(self.m, ptr, var) {
                Some(k) => comps.get(k as usize).copied().unwrap_or(Level::Divergent),
                None => {
                    if result != 0 {
                        self.components.insert(result, comps);
                    }
                    comps.iter().copied().max().unwrap_or(Level::Divergent)
                }
            };
            acc.add(
                l,
                Cause::Source {
                    inst: i,
                    kind: SourceKind::BuiltIn(builtin),
                },
            );
            return;
        }
        if memory::is_private(class) {
            if let Some(&(l, _)) = self.vars.get(&var) {
                acc.add(l, Cause::Variable { var });
            }
            return;
        }
        let read_only = self.sh.mem.read_only(var);
        match memory::class_level(class, read_only) {
            Some((l, kind)) => acc.add(l, Cause::Source { inst: i, kind }),
            None => acc.add(
                Level::Divergent,
                Cause::Source {
                    inst: i,
                    kind: SourceKind::Input,
                },
            ),
        }
    }

    /// Levels of the x, y, z components of a built-in.
    fn builtin_components(&self, builtin: u32) -> [Level; 3] {
        let size = self.sh.mem.local_size;
        let per = |k: usize, one: Level| {
            if size[k] == Some(1) {
                one
            } else {
                Level::Divergent
            }
        };
        match builtin {
            built_in::LocalInvocationId => [
                per(0, Level::Constant),
                per(1, Level::Constant),
                per(2, Level::Constant),
            ],
            built_in::GlobalInvocationId => [
                per(0, Level::Workgroup),
                per(1, Level::Workgroup),
                per(2, Level::Workgroup),
            ],
            built_in::WorkgroupId => [Level::Workgroup; 3],
            built_in::NumWorkgroups
            | built_in::WorkgroupSize
            | built_in::SubgroupSize
            | built_in::NumSubgroups => [Level::Uniform; 3],
            built_in::SubgroupId => [Level::Subgroup; 3],
            _ => [Level::Divergent; 3],
        }
    }

    /// Records a store of `s` through `ptr` into every private variable it may point to.
    fn store(&mut self, ptr: u32, s: Acc) {
        let Some(cause) = s.cause else { return };
        let m = self.m;
        if let Some(k) = self.ctx_param_index(ptr)
            && let Some(c) = self.ctx.as_mut()
        {
            if c.pointees[k].is_some_and(|p| s.level > p) {
                c.pointees[k] = Some(s.level);
                self.changed = true;
            }
            c.out[k] = c.out[k].max(s.level);
            return;
        }
        let targets: Vec<u32> = match self.sh.mem.roots(m, ptr) {
            Root::Vars(v) => v,
            Root::Unknown(class) if memory::is_private(class) => self.sh.mem.private_vars(class),
            Root::Unknown(_) => Vec::new(),
        };
        let mut ch = false;
        for var in targets {
            if memory::is_private(self.sh.mem.class(var)) {
                raise(&mut self.vars, var, s.level, cause, &mut ch);
            }
        }
        self.changed |= ch;
    }

    /// Group and subgroup operations.
    fn group(&self, acc: &mut Acc, i: usize, label: u32) {
        let m = self.m;
        let inst = &m.instructions[i];
        let name = grammar::instruction(inst.opcode).map_or("", |d| d.name);
        let a = inst.first_arg();
        let exec_scope = inst
            .word(a)
            .and_then(|s| m.constant_u64(s))
            .map_or(Level::Divergent, |s| Level::limit_for_scope(s as u32));
        let group_op = grammar::instruction(inst.opcode).and_then(|d| {
            d.operands
                .iter()
                .position(|o| o.kind == OperandKind::GroupOperation)
                .and_then(|k| inst.word(k))
        });
        let mut inputs = Acc::new();
        for id in arg_ids(inst).skip(1) {
            self.operand(&mut inputs, id, label);
        }
        let source = Cause::Source {
            inst: i,
            kind: SourceKind::Group,
        };
        let uniform_result = matches!(
            name,
            "OpGroupNonUniformBroadcast"
                | "OpGroupNonUniformBroadcastFirst"
                | "OpGroupNonUniformAll"
                | "OpGroupNonUniformAny"
                | "OpGroupNonUniformAllEqual"
                | "OpGroupBroadcast"
                | "OpGroupAll"
                | "OpGroupAny"
                | "OpSubgroupFirstInvocationKHR"
                | "OpSubgroupAllKHR"
                | "OpSubgroupAnyKHR"
                | "OpSubgroupAllEqualKHR"
        );
        let by_instance = matches!(
            name,
            "OpGroupNonUniformBallot" | "OpSubgroupBallotKHR" | "OpGroupNonUniformBallotBitCount"
        ) || group_op == Some(group_operation::Reduce);
        if uniform_result {
            // The value of one invocation (or a vote): no more varying than the input, and the
            // same for the whole scope instance.
            match inputs.cause {
                Some(c) if inputs.level <= exec_scope => acc.add(inputs.level, c),
                _ => acc.add(exec_scope, source),
            }
        } else if by_instance && matches!(group_op, None | Some(group_operation::Reduce)) {
            // A ballot, or a reduction over the whole scope instance. Scans (inclusive and
            // exclusive) and clustered or partitioned reductions differ per invocation below.
            acc.add(exec_scope, source);
        } else if name == "OpGroupNonUniformElect"
            || group_op.is_some()
            || name.starts_with("OpGroupNonUniformShuffle")
            || name.starts_with("OpGroupNonUniformQuad")
            || name == "OpGroupNonUniformRotateKHR"
            || name == "OpSubgroupReadInvocationKHR"
        {
            // Scans, elect, shuffles: per invocation. A shuffle of a uniform value is that value.
            let shuffle_of_uniform = (name.starts_with("OpGroupNonUniformShuffle")
                || name.starts_with("OpGroupNonUniformQuad")
                || name == "OpGroupNonUniformRotateKHR")
                && inputs.level <= Level::Workgroup
                && inputs.cause.is_some();
            if shuffle_of_uniform {
                acc.add(inputs.level, inputs.cause.unwrap_or(source));
            } else {
                acc.add(Level::Divergent, source);
            }
        } else {
            // Ballot bit tests, masks and the rest: as varying as their inputs.
            match inputs.cause {
                Some(c) => acc.add(inputs.level, c),
                None => acc.add(Level::Constant, source),
            }
            if name.starts_with("OpGroupNonUniformBallotBitExtract")
                || name.starts_with("OpGroupNonUniformInverseBallot")
                || name.starts_with("OpGroupNonUniformBallotFind")
            {
                if name.starts_with("OpGroupNonUniformBallotFind") {
                    acc.add(exec_scope, source);
                } else {
                    acc.add(Level::Divergent, source);
                }
            }
        }
    }

    /// The chain of causes that explains the level of value `id` used in block `block`,
    /// from the use back to the source.
    pub fn explain_value(&self, id: u32, block: u32) -> Vec<Step> {
        let mut out = Vec::new();
        let (_, first) = self.value_at_cause(id, block);
        self.walk(first.map(|c| (id, c)), &mut out);
        out
    }

    /// The chain that explains the control level of block `block`.
    pub fn explain_control(&self, block: u32) -> Vec<Step> {
        let mut out = Vec::new();
        if let Some((fi, b)) = self.block_pos(block)
            && let (_, Some(c)) = self.control[fi][b]
        {
            self.walk(Some((0, c)), &mut out);
        }
        out
    }

    fn def_inst(&self, id: u32) -> usize {
        self.m.def_index(id).unwrap_or(0)
    }

    fn walk(&self, mut cur: Option<(u32, Cause)>, out: &mut Vec<Step>) {
        let names = |id: u32| format!("%{id}");
        let mut seen = rustc_hash::FxHashSet::default();
        while let Some((id, cause)) = cur.take() {
            if out.len() >= 64 || !seen.insert((id, cause)) {
                break;
            }
            let level = self.value(id);
            match cause {
                Cause::Source { inst, kind } => {
                    out.push(Step {
                        inst,
                        level: self.values.get(&id).map_or(Level::Divergent, |v| v.0),
                        note: source_note(self.m, kind),
                    });
                }
                Cause::Operand { id: op_id } => {
                    if op_id == id {
                        break;
                    }
                    let next = self.values.get(&op_id).copied();
                    if id != 0 {
                        out.push(Step {
                            inst: self.def_inst(id),
                            level,
                            note: format!(
                                "{} is {} because of {}",
                                names(id),
                                level.as_str(),
                                names(op_id)
                            ),
                        });
                    }
                    cur = next.map(|(_, c)| (op_id, c));
                    if cur.is_none() {
                        out.push(Step {
                            inst: self.def_inst(op_id),
                            level: self.value(op_id),
                            note: format!("{} is defined here", names(op_id)),
                        });
                    }
                }
                Cause::Variable { var } => {
                    out.push(Step {
                        inst: self.def_inst(id),
                        level,
                        note: format!("loaded from variable {}", names(var)),
                    });
                    cur = self.vars.get(&var).map(|&(_, c)| (0, c));
                }
                Cause::Store { inst, value, block } => match value {
                    Some(v) => {
                        out.push(Step {
                            inst,
                            level: self.value_at(v, block),
                            note: format!("the variable is assigned {}", names(v)),
                        });
                        cur = self.values.get(&v).map(|&(_, c)| (v, c));
                    }
                    None => {
                        out.push(Step {
                            inst,
                            level: self.control(block),
                            note: "the variable is assigned in non-uniform control flow or at a varying address".into(),
                        });
                        if let Some((fi, b)) = self.block_pos(block)
                            && let (_, Some(c)) = self.control[fi][b]
                        {
                            cur = Some((0, c));
                        }
                    }
                },
                Cause::Branch { inst, cond } => {
                    out.push(Step {
                        inst,
                        level: self.value(cond),
                        note: format!("control depends on the branch on {}", names(cond)),
                    });
                    cur = self.values.get(&cond).map(|&(_, c)| (cond, c));
                }
                Cause::Join { inst, cond } => {
                    if id != 0 {
                        out.push(Step {
                            inst: self.def_inst(id),
                            level,
                            note: format!("{} merges values after a divergent branch", names(id)),
                        });
                    }
                    out.push(Step {
                        inst,
                        level: self.value(cond),
                        note: format!("the branch on {} diverges", names(cond)),
                    });
                    cur = self.values.get(&cond).map(|&(_, c)| (cond, c));
                }
                Cause::LoopExit {
                    id: v,
                    header,
                    inst,
                    cond,
                } => {
                    out.push(Step {
                        inst: self.def_inst(v),
                        level: Level::Divergent,
                        note: format!(
                            "{} is defined in the loop %{header} and used after it; invocations leave the loop in different iterations",
                            names(v)
                        ),
                    });
                    out.push(Step {
                        inst,
                        level: self.value(cond),
                        note: format!("the loop exit depends on {}", names(cond)),
                    });
                    cur = self.values.get(&cond).map(|&(_, c)| (cond, c));
                }
                Cause::Argument { inst, arg } => {
                    out.push(Step {
                        inst,
                        level: self.value(arg),
                        note: format!("the parameter receives {} at this call", names(arg)),
                    });
                    cur = self.values.get(&arg).map(|&(_, c)| (arg, c));
                }
                Cause::Return { func } => {
                    let fi = self.sh.fn_index.get(&func).copied();
                    out.push(Step {
                        inst: self.def_inst(id),
                        level,
                        note: format!("returned by function {}", names(func)),
                    });
                    cur = fi.and_then(|fi| self.ret[fi].1).map(|c| (0, c));
                }
                Cause::Call { inst, block } => {
                    out.push(Step {
                        inst,
                        level: self.control(block),
                        note: "the function is called from non-uniform control flow".into(),
                    });
                    if let Some((fi, b)) = self.block_pos(block)
                        && let (_, Some(c)) = self.control[fi][b]
                    {
                        cur = Some((0, c));
                    }
                }
                Cause::Callback { inst } => {
                    out.push(Step {
                        inst,
                        level: Level::Divergent,
                        note: "the function is a callback the implementation runs per element"
                            .into(),
                    });
                }
            }
        }
    }
}

fn source_note(m: &Module, kind: SourceKind) -> String {
    let _ = m;
    match kind {
        SourceKind::BuiltIn(b) => {
            let name = grammar::enumerant(OperandKind::BuiltIn, b).map_or("?", |e| e.name);
            format!("source: the built-in {name}")
        }
        SourceKind::Input => "source: an Input variable".into(),
        SourceKind::SharedMemory => {
            "source: memory other invocations may write (uniform within a workgroup at most)".into()
        }
        SourceKind::UnknownMemory => "source: memory behind a pointer of unknown origin".into(),
        SourceKind::Atomic => "source: an atomic operation".into(),
        SourceKind::Group => "source: a group operation whose result varies".into(),
        SourceKind::MatrixElement => {
            "source: a component of a cooperative matrix (its invocation mapping is unknown)".into()
        }
        SourceKind::Unmodeled => "source: an instruction the analysis does not model".into(),
        SourceKind::WorkgroupVote => {
            "a workgroup vote: subgroupAll results combined through workgroup memory, \
             alike in every invocation of the workgroup"
                .into()
        }
    }
}

/// Whether the implementation may call the functions an instruction of this opcode names:
/// DecodeFunc (OpCooperativeMatrixLoadTensorNV), CombineFunc (OpCooperativeMatrixReduceNV),
/// Func (OpCooperativeMatrixPerElementOpNV); every cooperative-matrix instruction is taken to.
/// The analysis seeds such functions divergent; a user that relies on their levels in a call
/// context (`in_call`) must find their uses with this same test.
pub fn calls_named_functions(opcode: u16) -> bool {
    grammar::instruction(opcode).is_some_and(|d| d.name.starts_with("OpCooperativeMatrix"))
}

/// The id operands of an instruction after its result type and result id.
pub fn arg_ids(inst: &Instruction) -> impl Iterator<Item = u32> + '_ {
    inst.operands.iter().filter_map(|o| match o.kind {
        Some(OperandKind::IdRef | OperandKind::IdScope | OperandKind::IdMemorySemantics) => {
            Some(inst.words[o.offset as usize])
        }
        _ => None,
    })
}

/// Opcode classes the transfer function needs, looked up once per opcode (the grammar lookup is a
/// search; the analysis asks for every instruction on every pass).
/// A constant level for every block of every function.
fn per_block(fns: &[FnCfg]) -> Vec<Vec<(Level, Option<Cause>)>> {
    fns.iter()
        .map(|f| vec![(Level::Constant, None); f.labels.len()])
        .collect()
}

/// Call contexts analysed per module at most; beyond, calls take the pessimistic summary.
const MAX_CONTEXTS: usize = 4096;

/// Element-wise arithmetic and conversions: on matrices, a splat stays a splat.
fn is_elementwise(opcode: u16) -> bool {
    coopmat_spirv::scalar_ops::ScalarOpRow::for_opcode(opcode).is_some()
        || matches!(opcode, op::MatrixTimesScalar)
}

/// Bits: [`ATOMIC`], [`GROUP`], [`STORES`].
pub(crate) fn opcode_class(opcode: u16) -> u8 {
    static TABLE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        (0..=u16::MAX)
            .map(|o| {
                let Some(d) = grammar::instruction(o) else {
                    return 0;
                };
                let mut bits = 0;
                if d.class == "Atomic" {
                    bits |= ATOMIC;
                }
                if matches!(d.class, "Group" | "Non-Uniform")
                    || d.name.starts_with("OpSubgroup") && !d.name.contains("Block")
                {
                    bits |= GROUP;
                }
                // Writes through its first (pointer) operand: stores, cooperative stores and
                // accumulates, atomics but the load.
                if d.name.contains("Store")
                    || d.name.contains("Accumulate")
                    || (d.class == "Atomic" && o != op::AtomicLoad)
                    || matches!(o, op::CopyMemory | op::CopyMemorySized)
                {
                    bits |= STORES;
                }
                bits
            })
            .collect()
    });
    table[opcode as usize]
}

/// An atomic instruction.
pub(crate) const ATOMIC: u8 = 1;
/// A group or subgroup instruction.
pub(crate) const GROUP: u8 = 2;
/// Writes through its first operand.
pub(crate) const STORES: u8 = 4;

fn is_atomic(opcode: u16) -> bool {
    opcode_class(opcode) & ATOMIC != 0
}

fn group_class(opcode: u16) -> bool {
    opcode_class(opcode) & GROUP != 0
}

#[cfg(test)]
mod tests;
