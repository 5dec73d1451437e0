//! Compiling a module into a [`Pipeline`]: ids to register slots, types to layouts, constants
//! materialized (spec constants included, OpSpecConstantOp evaluated by running the op on a
//! one-lane register image), blocks in structured order.

use crate::error::fail;
use crate::eval;
use crate::floats;
use crate::program::*;
use crate::types::{Ty, Types};
use crate::{ErrorKind, ExecError, err};
use coopmat_spirv::Module;
use coopmat_spirv::grammar::{self, built_in, decoration, execution_mode, op, storage_class};
use coopmat_spirv::scalar_ops::{ScalarOp, ScalarOpRow};
use coopmat_spirv::types::Type as SpirvType;
use std::collections::{HashMap, HashSet};

mod arith;
mod atomic;
mod composite;
mod control;
mod coop2;
mod coopmat;
mod coopvec;
mod glsl;
mod licm;
mod memory;
mod reuse;
mod subgroup;

/// f32s left unused after every slot of the f32 matrix arena (one cache line; see where
/// slots are placed).
const SLOT_PAD_F32: usize = 16;

/// A family's compiler: compiles `opcode` into `out` and answers true, or answers false when
/// the instruction is not of its family.
type Family<'m> = fn(&mut Cx<'m>, &Inst, &mut Vec<Op>) -> Compiled;

/// What a family compiler answers: whether the instruction was of its family.
type Compiled = Result<bool, ExecError>;

/// One instruction as the family compilers see it.
#[derive(Clone, Copy)]
struct Inst<'a> {
    /// Its opcode.
    opcode: u16,
    /// Result type id (0 when none).
    rt: u32,
    /// Result id (0 when none).
    rid: u32,
    /// The result's registers.
    d: Val,
    /// Operand words after the result type and result id.
    a: &'a [u32],
}

/// The source of a matrix copy that is dead after it (`Cx::dead_copy_source`).
enum DeadSource {
    /// A value whose one use is the store copying it into a promoted variable.
    StoredValue(u32),
    /// A promoted variable that a load copies into this result, stored before read again.
    LoadedVariable(u32),
}

/// Slot-sharing classes (see the value pre-pass in `compile`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PoolKey {
    Cols(u32),
    Mat(CmType),
}

/// Operand word `i` of an instruction's operands after result type and id, or an error naming it.
pub(super) fn operand(a: &[u32], i: usize) -> Result<u32, ExecError> {
    a.get(i)
        .copied()
        .ok_or_else(|| ExecError::invalid(format!("missing operand {i}")))
}

/// The largest push-constant block a module may declare (Vulkan requires at least 128 bytes of
/// devices; the coopmat driver reports 256).
pub const MAX_PUSH_CONSTANT_BYTES: usize = 64 << 10;

impl Pipeline {
    /// Compiles `entry_point` ("" = the first GLCompute entry point) of `module`.
    pub fn compile(
        module: &Module,
        entry_point: &str,
        spec: &SpecConstants,
        options: &EngineOptions,
    ) -> Result<Pipeline, ExecError> {
        let sg = options.subgroup_size;
        if !(8..=128).contains(&sg) || !sg.is_power_of_two() {
            return err(format!(
                "subgroup size {sg} is not a power of two in 8..=128"
            ));
        }
        let p = Cx::new(module, spec, options)?.compile(entry_point)?;
        if std::env::var_os("COOPMAT_EXEC_DEBUG").is_some() {
            eprintln!(
                "coopmat-exec: {} lane columns x {} lanes ({} KiB), matrix arenas {} f32 + {} u64 ({} KiB), {} functions, {} ops",
                p.ncols,
                p.lanes,
                p.ncols * p.lanes as usize * 8 / 1024,
                p.mf_len,
                p.mw_len,
                (p.mf_len * 4 + p.mw_len * 8) / 1024,
                p.funcs.len(),
                p.funcs
                    .iter()
                    .flat_map(|f| &f.blocks)
                    .map(|b| b.ops.len())
                    .sum::<usize>()
            );
            if std::env::var_os("COOPMAT_EXEC_DEBUG").is_some_and(|v| v == "ops") {
                for f in &p.funcs {
                    for (bi, b) in f.blocks.iter().enumerate() {
                        eprintln!("{} block {bi}:", f.name);
                        for (o, _) in &b.ops {
                            eprintln!("  {o:?}");
                        }
                        eprintln!("  -> {:?}", b.term.0);
                    }
                }
            }
        }
        Ok(Pipeline {
            p,
            scratch: Default::default(),
        })
    }

    /// The workgroup size.
    pub fn local_size(&self) -> [u32; 3] {
        self.p.local_size
    }

    /// Workgroups run together in one batch (see `EngineOptions::pack_workgroups`).
    pub fn workgroups_per_batch(&self) -> u32 {
        self.p.pack
    }

    /// Every descriptor the entry point uses.
    pub fn bindings(&self) -> &[BindingInfo] {
        &self.p.bindings
    }

    /// Bytes of push constants the entry point reads.
    pub fn push_constant_size(&self) -> usize {
        self.p.push_size
    }
}

/// What [`Cx::edge`] needs to know of a function's values beyond their registers: its dominator
/// tree, the block defining each result, each block's successors and where each value is used,
/// built on the first question (only matrix phis ask).
struct EdgeFacts<'a> {
    m: &'a Module,
    f: &'a coopmat_spirv::module::Function,
    built: std::cell::OnceCell<Built>,
}

/// [`EdgeFacts`] once built.
struct Built {
    doms: Option<coopmat_analysis::Dominators>,
    def_block: HashMap<u32, u32>,
    succs: HashMap<u32, Vec<u32>>,
    /// Per value, where it is read.
    uses: HashMap<u32, Reads>,
}

/// Where a value is read: the blocks whose non-phi instructions read it, and the predecessors
/// from which a phi reads it (a phi operand is read at the end of its predecessor, SPIR-V
/// 2.2.5).
#[derive(Default)]
struct Reads {
    blocks: Vec<u32>,
    phi_preds: Vec<u32>,
}

impl<'a> EdgeFacts<'a> {
    fn new(m: &'a Module, f: &'a coopmat_spirv::module::Function) -> Self {
        EdgeFacts {
            m,
            f,
            built: std::cell::OnceCell::new(),
        }
    }

    fn built(&self) -> &Built {
        self.built.get_or_init(|| {
            let (m, f) = (self.m, self.f);
            let mut uses: HashMap<u32, Reads> = HashMap::new();
            for b in &f.blocks {
                for i in b.body.clone() {
                    let inst = &m.instructions[i];
                    if inst.opcode == op::Phi {
                        let mut k = 2;
                        while let (Some(v), Some(pred)) = (inst.word(k), inst.word(k + 1)) {
                            uses.entry(v).or_default().phi_preds.push(pred);
                            k += 2;
                        }
                    } else {
                        for id in inst.id_refs() {
                            uses.entry(id).or_default().blocks.push(b.id);
                        }
                    }
                }
            }
            Built {
                doms: coopmat_analysis::Dominators::new(m, f),
                def_block: def_blocks(m, f),
                succs: f.blocks.iter().map(|b| (b.id, block_succs(m, b))).collect(),
                uses,
            }
        })
    }

    /// Whether value `id` is dead once a branch to block `to` is taken: it is defined in a block
    /// of this function (not a constant, parameter or global) and no path from `to` reaches a
    /// read of it without running its definition again (passing through its block, where a
    /// phi is redefined on entry and any other result before its reads). When its block does
    /// not dominate `to` that holds without a search: every use is dominated by that block, and
    /// a path from `to` to a use that avoided it would make the use reachable from the entry
    /// without it. Otherwise (a loop header's phi read on a branch inside the loop, say) the
    /// blocks reachable from `to` short of the definition are searched for a read.
    fn dead_after(&self, id: u32, to: u32) -> bool {
        let b = self.built();
        let (Some(doms), Some(&def)) = (&b.doms, b.def_block.get(&id)) else {
            return false;
        };
        if !(doms.reachable(def) && doms.reachable(to)) {
            return false;
        }
        if !doms.dominates(def, to) {
            return true;
        }
        let none = Reads::default();
        let reads = b.uses.get(&id).unwrap_or(&none);
        let mut seen: HashSet<u32> = HashSet::new();
        let mut stack = vec![to];
        while let Some(x) = stack.pop() {
            if x == def || !seen.insert(x) {
                continue;
            }
            if reads.blocks.contains(&x) || reads.phi_preds.contains(&x) {
                return false;
            }
            stack.extend(b.succs.get(&x).into_iter().flatten().copied());
        }
        true
    }
}

/// The block defining each result id of function `f`.
fn def_blocks(m: &Module, f: &coopmat_spirv::module::Function) -> HashMap<u32, u32> {
    f.blocks
        .iter()
        .flat_map(|b| {
            b.body
                .clone()
                .filter_map(move |i| m.instructions[i].result_id.map(|r| (r, b.id)))
        })
        .collect()
}

struct Cx<'m> {
    m: &'m Module,
    spec: &'m SpecConstants,
    options: EngineOptions,
    t: Types,
    vals: HashMap<u32, Val>,
    ncols: u32,
    mats: Vec<CmType>,
    img: Vec<u64>,
    const_ids: HashSet<u32>,
    const_mats: Vec<(Mat, u64)>,
    var_cols: Vec<(Col, VarAddr)>,
    locals: Vec<LocalDef>,
    builtins: Vec<BuiltinFill>,
    private_init: Vec<(Op, u32)>,
    descs: Vec<String>,
    desc_ids: Vec<u32>,
    /// The disassembler's friendly names, for the descriptions (built on first use).
    friendly: Option<coopmat_spirv::dis::FriendlyNames>,
    glsl_set: HashSet<u32>,
    printf_set: HashSet<u32>,
    other_sets: HashSet<u32>,
    strings: HashMap<u32, String>,
    func_index: HashMap<u32, u32>,
    /// Constant columns that belong to no id (lengths, literals of expansions).
    const_len: Vec<(Col, u64)>,
    /// Staging copies made so far ([`Program::copy_slots`]).
    copy_slots: u32,
    /// Matrix layouts that pointers carry from the struct member they were reached through.
    ptr_lay: HashMap<u32, glsl::PtrLay>,
    /// The local object all Block-decorated Workgroup variables share (they alias from
    /// offset 0, SPV_KHR_workgroup_memory_explicit_layout).
    wg_block: Option<u32>,
    /// [`Program::workgroup_copies`].
    workgroup_copies: Vec<(u32, u32)>,
    /// Function variables kept in registers (see [`Cx::promotable`]): variable id -> its value.
    promoted: HashMap<u32, Val>,
    /// Constant-index access chains into promoted variables: chain id -> the registers of the
    /// part it selects (loads and stores through it copy those).
    promoted_parts: HashMap<u32, Val>,
    /// Access chains with one (computed) index into a promoted cooperative-matrix variable:
    /// chain id -> (the matrix slot, the index id); loads and stores through it are element
    /// accesses of the lane's share.
    promoted_elems: HashMap<u32, (Mat, u32)>,
    /// Access chains with computed indices into promoted variables (or constant parts of
    /// them): chain id -> the registers of the value it indexes. The chain computes each
    /// lane's offset ([`Op::IndexChain`]); loads and stores through it read and write there.
    promoted_indexed: HashMap<u32, Val>,
    /// Function variables that are never read (only stored to, directly or through access
    /// chains with constant indices), and those access chains: their stores compile to nothing.
    write_only: HashSet<u32>,
    /// OpLoad results whose only use is as the Object of an OpStore (`Cx::fuse_staging_copy`).
    stored_once: HashSet<u32>,
    /// Values with exactly one use, and the index of the instruction using them
    /// (`Cx::fuse_int_chain`).
    single_use: HashMap<u32, usize>,
    /// MulAdd results whose only use is as the C of a later MulAdd of the same block, whose
    /// operands were kept alive until that one (`chained_muladd`).
    chain_heads: HashSet<u32>,
    /// Cooperative-matrix loads that may stay in memory until their MulAdds read them
    /// (`lazy_tile_load`): [`CmLoadArgs::lazy`].
    lazy_loads: HashSet<u32>,
    /// Copies whose value is their source's registers (`Cx::copy_view`): they compile to
    /// nothing.
    aliased: HashSet<u32>,
    /// Stores to promoted variables that a later store of the same block overwrites before any
    /// read (`Cx::promoted_store`), by instruction index: they compile to nothing.
    dead_stores: HashSet<usize>,
    /// Values whose one use is a store to a promoted matrix variable, which may take their
    /// matrix storage (`Op::Move`, `Cx::dead_copy_source`).
    moving_stores: HashSet<u32>,
    /// Loads of a promoted matrix variable that is stored before it is read again, whose
    /// result may take the variable's matrix storage (`Op::Move`).
    moving_loads: HashSet<u32>,
    /// Splats of a scalar whose every use is an operand of a per-component op
    /// (`Cx::splat_operand`): splat id -> scalar id. They compile to nothing; the ops read
    /// the scalar for every component.
    splats: HashMap<u32, u32>,
    /// Variables that are arrays of buffer descriptors: id -> (set, binding).
    descriptor_arrays: HashMap<u32, (u32, u32)>,
    /// Pointer types declared ahead by OpTypeForwardPointer.
    forward_pointers: HashSet<u32>,
    /// Loop-invariant instructions moved to preheaders, per function id (`licm`).
    hoisted: HashMap<u32, licm::Hoisted>,
    /// The divergence analysis of the module, with the level up to which a value of the entry
    /// point is the same in every lane of a batch (workgroup, or uniform when a batch packs
    /// several workgroups): such results run once (`Cx::run_once`). None while observing
    /// uniformity, whose observations would otherwise see copies.
    uniform: Option<(coopmat_analysis::Analysis<'m>, coopmat_analysis::Level)>,
    /// The entry point's function id.
    entry_fn: u32,
    /// Functions only the engine calls (per-element, decode, combine functions), with their
    /// values' levels within one engine call: those at most uniform run once (`Cx::run_once`).
    callbacks: HashMap<u32, Callback>,
}

/// A function only the engine calls: its values' levels within one call, and which
/// parameters that assumes the same in every lane of a call.
struct Callback {
    levels: coopmat_analysis::CallLevels,
    uniform_params: Vec<bool>,
}

fn unsupported<T>(what: impl Into<String>) -> Result<T, ExecError> {
    crate::fail(crate::ErrorKind::Unsupported, what)
}

fn bad<T>(what: impl Into<String>) -> Result<T, ExecError> {
    err(what)
}

impl<'m> Cx<'m> {
    fn new(
        m: &'m Module,
        spec: &'m SpecConstants,
        options: &EngineOptions,
    ) -> Result<Self, ExecError> {
        Ok(Cx {
            m,
            spec,
            options: options.clone(),
            t: Types::new(m),
            vals: HashMap::new(),
            ncols: 0,
            mats: Vec::new(),
            img: Vec::new(),
            const_ids: HashSet::new(),
            const_mats: Vec::new(),
            var_cols: Vec::new(),
            locals: Vec::new(),
            builtins: Vec::new(),
            private_init: Vec::new(),
            descs: Vec::new(),
            desc_ids: Vec::new(),
            friendly: None,
            glsl_set: HashSet::new(),
            printf_set: HashSet::new(),
            other_sets: HashSet::new(),
            strings: HashMap::new(),
            func_index: HashMap::new(),
            const_len: Vec::new(),
            copy_slots: 0,
            ptr_lay: HashMap::new(),
            wg_block: None,
            workgroup_copies: Vec::new(),
            promoted: HashMap::new(),
            promoted_parts: HashMap::new(),
            promoted_elems: HashMap::new(),
            promoted_indexed: HashMap::new(),
            write_only: HashSet::new(),
            stored_once: HashSet::new(),
            single_use: HashMap::new(),
            chain_heads: HashSet::new(),
            lazy_loads: HashSet::new(),
            aliased: HashSet::new(),
            splats: HashMap::new(),
            dead_stores: HashSet::new(),
            moving_stores: HashSet::new(),
            moving_loads: HashSet::new(),
            descriptor_arrays: HashMap::new(),
            forward_pointers: HashSet::new(),
            hoisted: HashMap::new(),
            uniform: None,
            entry_fn: 0,
            callbacks: HashMap::new(),
        })
    }

    fn alloc_cols(&mut self, n: u32) -> Col {
        let c = Col(self.ncols);
        self.ncols += n;
        self.img.resize(self.ncols as usize, 0);
        c
    }

    fn alloc(&mut self, ty: u32) -> Result<Val, ExecError> {
        let (nc, nm) = self.t.shape(ty)?;
        let col = self.alloc_cols(nc);
        let mat = Mat(self.mats.len() as u32);
        let mut leaves = Vec::new();
        self.t.mat_leaves(ty, &mut leaves)?;
        self.mats.extend(leaves);
        Ok(Val {
            col,
            mat,
            ncols: nc,
            nmats: nm,
        })
    }

    /// The slot-sharing class of a type: plain columns by count, or one matrix by type.
    fn pool_key(&self, ty: u32) -> Result<Option<PoolKey>, ExecError> {
        let (nc, nm) = self.t.shape(ty)?;
        Ok(match (nc, nm, self.t.coopmat(ty)) {
            (n, 0, _) if n > 0 => Some(PoolKey::Cols(n)),
            (0, 1, Some(cm)) => Some(PoolKey::Mat(cm)),
            _ => None,
        })
    }

    fn val(&self, id: u32) -> Result<Val, ExecError> {
        self.vals.get(&id).copied().ok_or_else(|| {
            ExecError::invalid(format!("%{id} has no value (undefined or unsupported)"))
        })
    }

    /// The first column of value `id`, which must have one (a value of no columns, such as a
    /// void call's result or a type named where a value belongs, would point past the file).
    fn col(&self, id: u32) -> Result<Col, ExecError> {
        let v = self.val(id)?;
        if v.ncols == 0 {
            return bad(format!(
                "%{id} is used as a value but has no scalar components"
            ));
        }
        Ok(v.col)
    }

    fn ty_of(&self, id: u32) -> Result<u32, ExecError> {
        self.m
            .type_of(id)
            .ok_or_else(|| ExecError::invalid(format!("%{id} has no type")))
    }

    /// The value of a constant scalar as compiled so far.
    fn const_u64(&self, id: u32) -> Result<u64, ExecError> {
        if !self.const_ids.contains(&id) {
            return bad(format!("%{id} is not a constant"));
        }
        Ok(self.img[self.col(id)?.ix()])
    }

    /// Records how messages name an instruction: `%name = OpX` with the name `spirv-dis` gives
    /// the result id, or `OpX`.
    fn desc(&mut self, opcode: u16, rid: u32) -> u32 {
        let name = grammar::instruction(opcode)
            .map(|d| d.name)
            .unwrap_or("Op?");
        let s = if rid != 0 {
            let m = self.m;
            let names = self.friendly.get_or_insert_with(|| {
                coopmat_spirv::dis::FriendlyNames::from_instructions(
                    m.header.bound,
                    &m.instructions,
                )
            });
            format!("%{} = {name}", names.name(rid))
        } else {
            name.to_string()
        };
        self.descs.push(s);
        self.desc_ids.push(rid);
        self.descs.len() as u32 - 1
    }

    fn compile(mut self, entry_name: &str) -> Result<Program, ExecError> {
        let m = self.m;
        let ep = m
            .entry_points()
            .find(|e| {
                e.word(0) == Some(grammar::execution_model::GLCompute)
                    && (entry_name.is_empty() || e.string(2).as_deref() == Some(entry_name))
            })
            .ok_or_else(|| {
                ExecError::new(
                    crate::ErrorKind::InvalidArgument,
                    format!("no GLCompute entry point named {entry_name:?}"),
                )
            })?;
        let entry_fn = ep.word(1).unwrap_or(0);
        // LocalSize literals first (LocalSizeId / WorkgroupSize constants are read later).
        let mut local_size = [1u32, 1, 1];
        let mut local_size_id = None;
        for e in &m.instructions {
            if (e.opcode == op::ExecutionMode || e.opcode == op::ExecutionModeId)
                && e.word(0) == Some(entry_fn)
            {
                let w = |i| e.word(i).unwrap_or(1);
                match e.word(1) {
                    Some(execution_mode::LocalSize) => local_size = [w(2), w(3), w(4)],
                    Some(execution_mode::LocalSizeId) => local_size_id = Some([w(2), w(3), w(4)]),
                    _ => {}
                }
            }
        }
        self.t.sg_size = self.options.subgroup_size;
        // Saturating: a hostile size must not overflow; it is refused below.
        self.t.wg_size = local_size.iter().fold(1u32, |a, &b| a.saturating_mul(b));
        let mut wg_builtin = None;
        // Globals in order.
        for (i, inst) in m.instructions.iter().enumerate() {
            if m.section(i) == coopmat_spirv::module::Section::Function {
                break;
            }
            self.global(inst, &mut wg_builtin)?;
        }
        if let Some(ids) = local_size_id {
            for k in 0..3 {
                local_size[k] = self.const_u64(ids[k])? as u32;
            }
        }
        if let Some(id) = wg_builtin {
            let v = self.val(id)?;
            for (k, ls) in local_size.iter_mut().enumerate() {
                *ls = self.img[v.col.at(k as u32).ix()] as u32;
            }
        }
        let lanes: u32 = local_size.iter().fold(1u32, |a, &b| a.saturating_mul(b));
        if lanes == 0 || lanes > MAX_LANES as u32 {
            return bad(format!(
                "workgroup size {local_size:?} is not in 1..={} invocations",
                MAX_LANES
            ));
        }
        self.t.wg_size = lanes;
        let group_lanes = lanes;
        // Bindings used by functions.
        let mut used = HashSet::new();
        for (i, inst) in m.instructions.iter().enumerate() {
            if m.section(i) == coopmat_spirv::module::Section::Function {
                used.extend(inst.id_refs());
            }
        }
        let mut bindings = Vec::new();
        let mut push_size = 0usize;
        for inst in &m.instructions {
            if inst.opcode != op::Variable {
                continue;
            }
            let (Some(pty), Some(id)) = (inst.result_type, inst.result_id) else {
                continue;
            };
            if !used.contains(&id) {
                continue;
            }
            let Ok(Ty::Pointer { sc, pointee }) = self.t.get(pty).cloned() else {
                continue;
            };
            match sc {
                storage_class::StorageBuffer | storage_class::Uniform => {
                    let set = m
                        .decoration_param(id, decoration::DescriptorSet)
                        .flatten()
                        .unwrap_or(0);
                    let binding = m
                        .decoration_param(id, decoration::Binding)
                        .flatten()
                        .unwrap_or(0);
                    let kind = if sc == storage_class::Uniform
                        && !m.has_decoration(pointee, decoration::BufferBlock)
                    {
                        BindingKind::Uniform
                    } else {
                        BindingKind::StorageBuffer
                    };
                    // An array of blocks: one descriptor per element.
                    let (block, count) = match self.t.get(pointee)? {
                        Ty::Array { elem, len } if self.is_block(*elem) => (*elem, *len),
                        Ty::RuntimeArray { elem } if self.is_block(*elem) => (*elem, 0),
                        _ => (pointee, 1),
                    };
                    let kind = if sc == storage_class::Uniform
                        && !m.has_decoration(block, decoration::BufferBlock)
                    {
                        BindingKind::Uniform
                    } else {
                        kind
                    };
                    let min_size = self.t.size_align(block)?.0 as usize;
                    let name = m
                        .name(id)
                        .filter(|s| !s.is_empty())
                        .or_else(|| m.name(block));
                    bindings.push(BindingInfo {
                        set,
                        binding,
                        kind,
                        min_size,
                        count,
                        name,
                    });
                }
                storage_class::PushConstant => {
                    push_size = push_size.max(self.t.size_align(pointee)?.0 as usize)
                }
                _ => {}
            }
        }
        // Vulkan bounds push constants by maxPushConstantsSize (128 to a few KiB on real devices);
        // the engine pads what a dispatch gives to the block's size, so a block must be small.
        if push_size > MAX_PUSH_CONSTANT_BYTES {
            return fail(
                ErrorKind::ResourceLimit,
                format!(
                    "the push-constant block is {push_size} bytes: more than the engine's {MAX_PUSH_CONSTANT_BYTES}"
                ),
            );
        }
        bindings.sort_by_key(|b| (b.set, b.binding));
        bindings.dedup_by_key(|b| (b.set, b.binding));
        // Functions reachable from the entry point.
        let mut order = vec![entry_fn];
        let mut seen: HashSet<u32> = order.iter().copied().collect();
        let mut k = 0;
        while k < order.len() {
            let f = m
                .function(order[k])
                .ok_or_else(|| ExecError::invalid(format!("function %{} not defined", order[k])))?;
            for b in &f.blocks {
                for i in b.body.clone() {
                    let inst = &m.instructions[i];
                    if inst.opcode == op::FunctionCall
                        && let Some(callee) = inst.word(2)
                        && seen.insert(callee)
                    {
                        order.push(callee);
                    }
                }
            }
            k += 1;
        }
        // Functions the engine may call itself (call_function) are compiled too.
        for f in m.functions() {
            if !f.blocks.is_empty() && seen.insert(f.id) {
                order.push(f.id);
            }
        }
        for (i, &f) in order.iter().enumerate() {
            self.func_index.insert(f, i as u32);
        }
        // Values of every function first (calls and phis refer forward).
        let du = m.def_use();
        let mut rets = Vec::new();
        let mut params = Vec::new();
        for &fid in &order {
            let f = m.function(fid).unwrap();
            let fdef = &m.instructions[f.def];
            let rty = fdef.result_type.unwrap_or(0);
            let ret = if matches!(self.t.get(rty), Ok(Ty::Void)) {
                None
            } else {
                Some(self.alloc(rty)?)
            };
            rets.push(ret);
            let mut ps = Vec::new();
            for &pi in &f.params {
                let p = &m.instructions[pi];
                let v = self.alloc(p.result_type.unwrap_or(0))?;
                self.vals.insert(p.result_id.unwrap_or(0), v);
                ps.push(v);
            }
            params.push(ps);
            // Values used only later in their own block share slots (a per-function pool):
            // they are dead when the block ends, and a result never takes the slot of a value
            // that dies at its own instruction, so no op's result aliases its operands.
            let mut pool: HashMap<PoolKey, Vec<Val>> = HashMap::new();
            let hoisted = self.loop_invariants(f, &du);
            // Values of this function with registers of their own: never reused (`fresh`),
            // or taken from the pool while they live (`pooled`); loads that take a promoted
            // variable's registers, which no store changes after them (`final_loads`).
            let (mut fresh, mut pooled, mut final_loads) =
                (HashSet::new(), HashSet::new(), HashSet::new());
            for (bi, b) in f.blocks.iter().enumerate() {
                // Pooled values still alive: their last use, slot class, registers and id.
                let mut dying: Vec<(usize, PoolKey, Val, u32)> = Vec::new();
                // The last whole store of this block to each promoted variable: the stored
                // value, the store, and whether anything read the variable's registers since
                // (`Cx::promoted_stores`).
                let mut stored: HashMap<u32, (u32, usize, bool)> = HashMap::new();
                for i in b.body.clone() {
                    let inst = &m.instructions[i];
                    if inst.opcode == op::Store
                        && let Some(var) = self.promoted_store(&du, inst, i, &mut stored)
                        && let Some(&(value, _, _)) = stored.get(&var)
                    {
                        // A pooled stored value lives until the last use of the loads of the
                        // variable that follow in the block before its next store (the loads
                        // that may take its registers): only loads used later in this block.
                        let mut last = 0;
                        for u in b.body.clone().filter(|&u| u > i) {
                            let ui = &m.instructions[u];
                            if ui.opcode == op::Store && ui.word(0) == Some(var) {
                                break;
                            }
                            if ui.opcode == op::Load
                                && ui.word(2) == Some(var)
                                && let Some(lid) = ui.result_id
                                && du.uses(lid).iter().all(|&(w, _)| {
                                    w > u
                                        && b.body.contains(&w)
                                        && m.instructions[w].opcode != op::Phi
                                })
                            {
                                last = du
                                    .uses(lid)
                                    .iter()
                                    .map(|&(w, _)| w)
                                    .fold(last.max(u), usize::max);
                            }
                        }
                        for e in dying.iter_mut().filter(|e| e.3 == value) {
                            e.0 = e.0.max(last);
                        }
                    }
                    if let (Some(rt), Some(rid)) = (inst.result_type, inst.result_id) {
                        if store_of_copy(m, &du, i).is_some() {
                            self.stored_once.insert(rid);
                        }
                        if let [(user, _)] = du.uses(rid)[..] {
                            self.single_use.insert(rid, user);
                        }
                        if chained_muladd(m, &du, i).is_some_and(|s| b.body.contains(&s)) {
                            self.chain_heads.insert(rid);
                        }
                        if lazy_tile_load(m, &du, i, &b.body) {
                            self.lazy_loads.insert(rid);
                        }
                        let final_value = (inst.opcode == op::Load)
                            .then(|| inst.word(2))
                            .flatten()
                            .and_then(|ptr| self.promoted_registers(ptr))
                            .filter(|&(var, v)| {
                                v.nmats == 0 && self.load_reads_final_value(&du, f, bi, i, var)
                            });
                        if let Some((var, v)) = final_value {
                            // The load's value is the variable's registers (never pooled).
                            self.vals.insert(rid, v);
                            final_loads.insert(rid);
                            if let Some(s) = stored.get_mut(&var) {
                                s.2 = true;
                            }
                        } else if inst.opcode == op::Variable && self.never_read(&du, inst) {
                            self.drop_variable(&du, rid);
                        } else if inst.opcode == op::Variable && self.promotable(&du, inst) {
                            self.promote(inst)?;
                        } else if inst.opcode == op::Variable {
                            self.variable(inst)?;
                        } else if self.t.contains(rt) {
                            let uses = du.uses(rid);
                            // A value moved to a preheader lives through the loop.
                            let local = inst.opcode != op::Phi
                                && !hoisted.moved.contains(&i)
                                && uses.iter().all(|&(u, _)| {
                                    u > i
                                        && b.body.contains(&u)
                                        && m.instructions[u].opcode != op::Phi
                                });
                            // A pointer a staging copy loads through lives until the store
                            // (`Cx::fuse_staging_copy` loads there), and the operands of a
                            // MulAdd that feeds the next until that one (`Cx::fuse_muladds`
                            // computes the pair there).
                            let last = uses
                                .iter()
                                .map(|&(u, _)| {
                                    store_of_copy(m, &du, u)
                                        .or_else(|| chained_muladd(m, &du, u))
                                        .filter(|&s| s > u && b.body.contains(&s))
                                        .unwrap_or(u)
                                })
                                .max()
                                .unwrap_or(i);
                            // A value whose registers hold `src`'s for as long as this one
                            // lives (see `Cx::copy_view`): a pooled `src` is kept that long.
                            let settled = |src: u32| {
                                f.params
                                    .iter()
                                    .any(|&pi| m.instructions[pi].result_id == Some(src))
                                    || self.const_ids.contains(&src)
                                    || fresh.contains(&src)
                                    || final_loads.contains(&src)
                                    || local
                                        && pooled.contains(&src)
                                        && dying.iter().any(|e| e.3 == src)
                            };
                            let no_phi_use = !uses
                                .iter()
                                .any(|&(u, _)| m.instructions[u].opcode == op::Phi);
                            // A load of a promoted variable used whole that this block stored
                            // (`stored` holds only those, and they are loaded through nothing
                            // but themselves): the stored value's registers
                            // (`Cx::promoted_store`); else the load reads the variable.
                            let stored_var = (inst.opcode == op::Load)
                                .then(|| inst.word(2))
                                .flatten()
                                .filter(|var| stored.contains_key(var));
                            let forwarded = stored_var
                                .and_then(|var| {
                                    let (src, _, _) = stored[&var];
                                    let v = *self.vals.get(&src)?;
                                    let shape = self.promoted.get(&var).map(|w| (w.ncols, w.nmats));
                                    (shape == Some((v.ncols, 0))).then_some((src, v))
                                })
                                .filter(|&(src, _)| no_phi_use && settled(src));
                            if forwarded.is_none()
                                && let Some(s) = stored_var.and_then(|var| stored.get_mut(&var))
                            {
                                s.2 = true;
                            }
                            // A copy that reads its source's registers instead, or a splat only
                            // ever an operand of per-component ops, which read the scalar's
                            // register for every component (`Cx::splat_operand`).
                            let view = self
                                .copy_view(inst)
                                .filter(|&(src, _)| no_phi_use && settled(src))
                                .or(forwarded);
                            let splat = self
                                .splat_operand(inst, uses)
                                .filter(|&src| local && settled(src));
                            if let Some(src) = view.map(|v| v.0).or(splat) {
                                for e in dying.iter_mut().filter(|e| e.3 == src) {
                                    e.0 = e.0.max(last);
                                }
                            }
                            if let Some(src) = splat {
                                self.splats.insert(rid, src);
                            }
                            if let Some((_, v)) = view {
                                self.aliased.insert(rid);
                                self.vals.insert(rid, v);
                            } else {
                                let key = self.pool_key(rt)?;
                                let v = match (local, key) {
                                    (true, Some(k)) => {
                                        let v = match pool.get_mut(&k).and_then(Vec::pop) {
                                            Some(v) => v,
                                            None => self.alloc(rt)?,
                                        };
                                        dying.push((last, k, v, rid));
                                        pooled.insert(rid);
                                        v
                                    }
                                    _ => {
                                        fresh.insert(rid);
                                        self.alloc(rt)?
                                    }
                                };
                                self.vals.insert(rid, v);
                            }
                        }
                    }
                    // Matrix copies that may trade storage instead (`Op::Move`).
                    let owned = |id: u32| {
                        (fresh.contains(&id) || pooled.contains(&id))
                            && !final_loads.contains(&id)
                            && !self.aliased.contains(&id)
                            && !self.const_ids.contains(&id)
                            && du
                                .uses(id)
                                .iter()
                                .all(|&(u, _)| m.instructions[u].opcode != op::Phi)
                    };
                    match self.dead_copy_source(&du, b, i, &hoisted) {
                        Some(DeadSource::StoredValue(v)) if owned(v) => {
                            self.moving_stores.insert(v);
                        }
                        Some(DeadSource::LoadedVariable(x)) if owned(x) => {
                            self.moving_loads.insert(x);
                        }
                        _ => {}
                    }
                    // Values whose last use is this instruction are free from the next one on.
                    dying.retain(|&(last, k, v, _)| {
                        if last <= i {
                            pool.entry(k).or_default().push(v);
                            false
                        } else {
                            true
                        }
                    });
                }
            }
            self.hoisted.insert(fid, hoisted);
        }
        for &fid in &order {
            self.coalesce_phis(fid, &du)?;
        }
        // Workgroups per batch, decided now that the variables are known.
        let pack = self.workgroups_per_batch(group_lanes);
        self.workgroup_copies = self.copy_workgroup_locals(pack);
        self.entry_fn = entry_fn;
        if !self.options.observe_uniformity {
            use coopmat_analysis::{Analysis, Level};
            let limit = if pack == 1 {
                Level::Workgroup
            } else {
                Level::Uniform
            };
            self.uniform = Some((Analysis::run(m), limit));
        }
        let private_users = private_users(m, &du, &order);
        if let Some((analysis, _)) = &self.uniform {
            self.callbacks = self.callback_levels(analysis, &private_users);
        }
        let pure_readers = reuse::pure_readers(m, &order, &private_users);
        let mut funcs = Vec::new();
        for (fi, &fid) in order.iter().enumerate() {
            let blocks = self.function(fid)?;
            funcs.push(Func {
                id: fid,
                name: m.name(fid).unwrap_or_else(|| format!("%{fid}")),
                blocks,
                ret: rets[fi],
                params: params[fi].clone(),
                touches_private: private_users.contains(&fid),
                pure_reader: pure_readers.contains(&fid),
                uniform_params: self
                    .callbacks
                    .get(&fid)
                    .map(|c| c.uniform_params.clone())
                    .unwrap_or_default(),
            });
        }
        let lanes = group_lanes * pack;
        // Matrix slot placement.
        let inst_sg = lanes.div_ceil(self.options.subgroup_size);
        let (mut mf_len, mut mw_len) = (0usize, 0usize);
        let mut mats = Vec::new();
        for cm in &self.mats {
            let (inst, scope) = if cm.scope == grammar::scope::Workgroup {
                (1, lanes)
            } else {
                (inst_sg, self.options.subgroup_size)
            };
            let len = inst as usize * cm.elems();
            let off = if cm.is_f32_arena() {
                // Every slot starts a cache line into the (line-aligned) arena, with a line
                // between slots: tiles a multiple of 4 KiB long would otherwise start at the
                // same offset within a page, so a MulAdd group's B rows, C rows and D stores
                // share L1 sets and falsely depend on each other (4K aliasing; the shared-A
                // kernel ran 11 % slower so).
                let at = mf_len;
                mf_len += len.next_multiple_of(16) + SLOT_PAD_F32;
                at
            } else {
                mw_len += len;
                mw_len - len
            };
            mats.push(MatSlot {
                cm: *cm,
                off,
                inst,
                scope,
            });
        }
        let const_cols = self.const_ids.iter().flat_map(|&id| {
            let v = self.vals[&id];
            v.cols().map(|c| (c, self.img[c.ix()])).collect::<Vec<_>>()
        });
        let mut const_cols: Vec<(Col, u64)> = const_cols.collect();
        const_cols.extend(self.const_len.iter().copied());
        const_cols.sort_unstable();
        const_cols.dedup();
        let tensor_loads = funcs
            .iter()
            .flat_map(|f| &f.blocks)
            .flat_map(|b| &b.ops)
            .any(|(o, _)| matches!(o, Op::Coop2(c) if matches!(**c, C2::Load { .. })));
        let mut lazy_base = vec![u32::MAX; mats.len()];
        let mut lazy_records = 0;
        for (o, _) in funcs.iter().flat_map(|f| &f.blocks).flat_map(|b| &b.ops) {
            if let Op::CmLoad(x) = o
                && x.lazy
                && lazy_base[x.d.ix()] == u32::MAX
            {
                lazy_base[x.d.ix()] = lazy_records;
                lazy_records += mats[x.d.ix()].inst;
            }
        }
        Ok(Program {
            tensor_loads,
            copy_slots: self.copy_slots,
            lazy_base,
            lazy_records,
            funcs,
            entry: 0,
            ncols: self.ncols as usize,
            mats,
            mf_len,
            mw_len,
            const_cols,
            const_mats: self.const_mats,
            var_cols: self.var_cols,
            locals: self.locals,
            workgroup_copies: self.workgroup_copies,
            builtin_locals: {
                let mut v: Vec<u32> = self.builtins.iter().map(|b| b.local).collect();
                v.sort_unstable();
                v.dedup();
                v
            },
            builtins: self.builtins,
            private_init: self.private_init,
            promoted: self.promoted.values().copied().collect(),
            descs: self.descs,
            desc_ids: self.desc_ids,
            observed: Default::default(),
            bindings,
            push_size,
            written_bindings: reuse::written_bindings(m),
            local_size,
            sg: self.options.subgroup_size,
            lanes,
            group_lanes,
            pack,
            options: self.options,
            spare: Default::default(),
            plain_verdicts: Default::default(),
        })
    }

    /// How many workgroups of `group_lanes` invocations one batch runs (see
    /// `EngineOptions::pack_workgroups`): 1 unless the module has no operation of Workgroup
    /// scope other than OpControlBarrier (atomics and memory barriers name a memory scope: they
    /// stay allowed; a workgroup-scope cooperative matrix spans its workgroup's lanes), and the
    /// workgroup is whole subgroups. Then the workgroups of a batch cannot observe each other
    /// except through memory, as separately run ones could: each has its own copy of every
    /// Workgroup variable (`Program::workgroup_copies`) and its own barrier check.
    fn workgroups_per_batch(&self, group_lanes: u32) -> u32 {
        const TARGET_LANES: u32 = 256;
        let sg = self.options.subgroup_size;
        if !self.options.pack_workgroups
            || group_lanes >= TARGET_LANES / 2
            || sg == 0
            || !group_lanes.is_multiple_of(sg)
        {
            return 1;
        }
        let m = self.m;
        let workgroup_scoped = m.instructions.iter().any(|inst| {
            use coopmat_spirv::grammar::OperandKind;
            let desc = grammar::instruction(inst.opcode);
            // Scopes that name only memory: atomics', memory barriers', and those of memory
            // operands (MakePointerAvailable/Visible, the Vulkan memory model's loads and
            // stores), which are an instruction's only scopes where its grammar has memory
            // operands and no scope of its own.
            let memory_scope_only = inst.opcode == op::ControlBarrier
                || desc.is_some_and(|d| {
                    d.name.starts_with("OpAtomic")
                        || d.name == "OpMemoryBarrier"
                        || (d
                            .operands
                            .iter()
                            .any(|o| o.kind == OperandKind::MemoryAccess)
                            && !d.operands.iter().any(|o| o.kind == OperandKind::IdScope))
                });
            !memory_scope_only
                && inst.operands.iter().enumerate().any(|(k, o)| {
                    o.kind == Some(OperandKind::IdScope)
                        && inst.word(k).is_none_or(|id| {
                            self.const_u64(id)
                                .map_or(true, |v| v == grammar::scope::Workgroup as u64)
                        })
                })
        });
        // Functions the engine calls (decode, per-element and reduce functions) run in a
        // sub-batch whose lanes are elements, not the caller's workgroups: a Workgroup
        // variable they read would name the wrong workgroup's copy.
        let has = |opcode: u16| m.instructions.iter().any(|inst| inst.opcode == opcode);
        let engine_calls = has(op::CooperativeMatrixLoadTensorNV)
            || has(op::CooperativeMatrixPerElementOpEXT)
            || has(op::CooperativeMatrixReduceEXT);
        let workgroup_memory = m.instructions.iter().any(|inst| {
            inst.opcode == op::Variable && inst.word(2) == Some(storage_class::Workgroup)
        });
        if workgroup_scoped || (engine_calls && workgroup_memory) {
            return 1;
        }
        // Per-invocation variables grow with the batch, Workgroup ones with its workgroups:
        // keep a packed batch's under 16 MiB.
        let bytes = |per_lane: bool| -> u64 {
            self.locals
                .iter()
                .filter(|l| l.per_lane == per_lane)
                .map(|l| l.bytes.next_multiple_of(8))
                .sum()
        };
        let per_group = bytes(true) * group_lanes as u64 + bytes(false);
        let by_memory = ((16u64 << 20) / per_group.max(1)).max(1) as u32;
        (TARGET_LANES / group_lanes)
            .min(MAX_LANES as u32 / group_lanes)
            .min(by_memory)
            .max(1)
    }

    /// With `pack` workgroups a batch, a copy of each Workgroup variable for every workgroup
    /// but the first: (the variable's local, its first copy), the copies consecutive.
    fn copy_workgroup_locals(&mut self, pack: u32) -> Vec<(u32, u32)> {
        if pack <= 1 {
            return Vec::new();
        }
        let shared: Vec<u32> = (0..self.locals.len() as u32)
            .filter(|&li| !self.locals[li as usize].per_lane)
            .collect();
        shared
            .into_iter()
            .map(|li| {
                let first = self.locals.len() as u32;
                for _ in 1..pack {
                    self.locals.push(self.locals[li as usize].clone());
                }
                (li, first)
            })
            .collect()
    }

    /// The divergence analysis's level of entry-point value `id`, where a pointer into
    /// Workgroup memory counts as workgroup-uniform when a batch packs workgroups (each has
    /// its own copy of the variable: the analysis sees one variable, whose address it calls
    /// constant).
    fn entry_level(
        &self,
        analysis: &coopmat_analysis::Analysis<'_>,
        id: u32,
    ) -> coopmat_analysis::Level {
        let level = analysis.value(id);
        let per_workgroup = !self.workgroup_copies.is_empty()
            && self.m.type_of(id).is_some_and(|t| {
                matches!(
                    self.t.get(t),
                    Ok(Ty::Pointer { sc, .. }) if *sc == storage_class::Workgroup
                )
            });
        if per_workgroup {
            level.max(coopmat_analysis::Level::Workgroup)
        } else {
            level
        }
    }

    fn set_const(
        &mut self,
        id: u32,
        ty: u32,
        cols: &[u64],
        mat_splat: &[u64],
    ) -> Result<(), ExecError> {
        let v = self.alloc(ty)?;
        for (k, &c) in cols.iter().enumerate().take(v.ncols as usize) {
            self.img[v.col.at(k as u32).ix()] = c;
        }
        for (k, &s) in mat_splat.iter().enumerate().take(v.nmats as usize) {
            self.const_mats.push((v.mat.at(k as u32), s));
        }
        self.vals.insert(id, v);
        self.const_ids.insert(id);
        Ok(())
    }

    fn const_parts(&self, id: u32) -> Result<(Vec<u64>, Vec<u64>), ExecError> {
        let v = self.val(id)?;
        let cols = self.img[v.col_range()].to_vec();
        let mats = v
            .mats()
            .map(|mi| {
                self.const_mats
                    .iter()
                    .rev()
                    .find(|(m, _)| *m == mi)
                    .map(|x| x.1)
                    .unwrap_or(0)
            })
            .collect();
        Ok((cols, mats))
    }

    fn global(
        &mut self,
        inst: &coopmat_spirv::Instruction,
        wg_builtin: &mut Option<u32>,
    ) -> Result<(), ExecError> {
        let m = self.m;
        let w = |i: usize| inst.word(i).unwrap_or(0);
        let rid = inst.result_id.unwrap_or(0);
        if inst.opcode == op::TypeForwardPointer {
            self.forward_pointers.insert(w(0));
            return Ok(());
        }
        let view = SpirvType::decode(inst);
        if view != SpirvType::None {
            return self.declare_type(inst, rid, view);
        }
        match inst.opcode {
            op::ExtInstImport => {
                let name = inst.string(1).unwrap_or_default();
                if name == "GLSL.std.450" {
                    self.glsl_set.insert(rid);
                } else if name.starts_with("NonSemantic.DebugPrintf") {
                    self.printf_set.insert(rid);
                } else {
                    self.other_sets.insert(rid);
                }
            }
            op::String => {
                self.strings.insert(rid, inst.string(1).unwrap_or_default());
            }
            op::Constant | op::SpecConstant => {
                let ty = w(0);
                let words = inst.operand_words(2);
                let mut v = words.iter().rev().fold(0u64, |a, &x| (a << 32) | x as u64);
                let num = self.t.num(ty)?;
                if inst.opcode == op::SpecConstant
                    && let Some(sid) = m.spec_id(rid)
                    && let Some(&s) = self.spec.get(&sid)
                {
                    // A value wider than the constant would be cut silently: only the
                    // constant's bits, or a negative number that sign-extends from them, fit.
                    let bits = num.bits();
                    let fits = bits >= 64
                        || s >> bits == 0
                        || ((s as i64) < 0 && (s as i64) >> (bits - 1) == -1);
                    if !fits {
                        return bad(format!(
                            "specialization constant SpecId {sid} (%{rid}) is {bits} bits wide; \
                             the value {s:#x} does not fit"
                        ));
                    }
                    v = s;
                }
                self.set_const(rid, ty, &[floats::trunc(v, num.bits())], &[])?;
            }
            op::ConstantTrue | op::ConstantFalse | op::SpecConstantTrue | op::SpecConstantFalse => {
                let mut v = matches!(inst.opcode, op::ConstantTrue | op::SpecConstantTrue) as u64;
                if matches!(inst.opcode, op::SpecConstantTrue | op::SpecConstantFalse)
                    && let Some(&s) = m.spec_id(rid).and_then(|sid| self.spec.get(&sid))
                {
                    v = (s != 0) as u64;
                }
                self.set_const(rid, w(0), &[v], &[])?;
            }
            op::ConstantNull | op::Undef => {
                let ty = w(0);
                if !self.t.contains(ty) {
                    return Ok(());
                }
                let (nc, nm) = self.t.shape(ty)?;
                self.set_const(rid, ty, &vec![0; nc as usize], &vec![0; nm as usize])?;
            }
            op::ConstantComposite
            | op::SpecConstantComposite
            | op::ConstantCompositeReplicateEXT
            | op::SpecConstantCompositeReplicateEXT => {
                let ty = w(0);
                let (mut cols, mut mats) = (Vec::new(), Vec::new());
                if let Some(cm) = self.t.coopmat(ty) {
                    let _ = cm;
                    let (c, _) = self.const_parts(w(2))?;
                    mats.push(c.first().copied().unwrap_or(0));
                } else if matches!(
                    inst.opcode,
                    op::ConstantCompositeReplicateEXT | op::SpecConstantCompositeReplicateEXT
                ) {
                    let n = match self.t.get(ty)? {
                        Ty::Vector { n, .. } | Ty::Array { len: n, .. } | Ty::Matrix { n, .. } => {
                            *n
                        }
                        _ => 1,
                    };
                    let (c, mm) = self.const_parts(w(2))?;
                    for _ in 0..n {
                        cols.extend(&c);
                        mats.extend(&mm);
                    }
                } else {
                    for k in 2..inst.operands.len() {
                        let (c, mm) = self.const_parts(w(k))?;
                        cols.extend(c);
                        mats.extend(mm);
                    }
                }
                self.set_const(rid, ty, &cols, &mats)?;
                if m.decoration_param(rid, decoration::BuiltIn)
                    == Some(Some(built_in::WorkgroupSize))
                {
                    *wg_builtin = Some(rid);
                    let v = self.val(rid)?;
                    // Vulkan: the WorkgroupSize built-in is a 3-component vector of 32-bit integers.
                    if v.ncols != 3 || v.nmats != 0 {
                        return bad(format!(
                            "%{rid} is decorated BuiltIn WorkgroupSize but has {} components, not 3",
                            v.ncols
                        ));
                    }
                    self.t.wg_size = (0..3)
                        .map(|k| self.img[v.col.at(k).ix()] as u32)
                        .fold(1u32, |a, b| a.saturating_mul(b));
                }
            }
            op::SpecConstantOp => {
                let ty = w(0);
                let opc = w(2) as u16;
                let args: Vec<u32> = inst.words[4..].to_vec();
                let v = self.alloc(ty)?;
                self.vals.insert(rid, v);
                let mut ops = Vec::new();
                self.inst(opc, ty, rid, &args, &mut ops)?;
                eval::eval_const(&ops, &mut self.img)?;
                self.const_ids.insert(rid);
            }
            op::Variable => self.variable(inst)?,
            _ => {}
        }
        Ok(())
    }

    /// Records type `rid` from the shared type view of its declaration, sizes resolved with the
    /// specialization constants applied.
    fn declare_type(
        &mut self,
        inst: &coopmat_spirv::Instruction,
        rid: u32,
        view: SpirvType,
    ) -> Result<(), ExecError> {
        // Composite types may only name types declared before them (SPIR-V 2.4, "Logical
        // Layout": forward references only through OpTypeForwardPointer): a type that
        // contains itself would send every size computation into endless recursion.
        let parts: Vec<u32> = match view {
            SpirvType::Vector { comp, .. } => vec![comp],
            SpirvType::Matrix { column, .. } => vec![column],
            SpirvType::Array { elem, .. } | SpirvType::RuntimeArray { elem } => vec![elem],
            SpirvType::Struct => (1..inst.operands.len())
                .filter_map(|k| inst.word(k))
                .collect(),
            _ => Vec::new(),
        };
        if let Some(p) = parts
            .iter()
            .find(|&&p| !self.t.contains(p) && !self.forward_pointers.contains(&p))
        {
            return bad(format!(
                "type %{rid} is made of %{p}, which is not a type declared before it"
            ));
        }
        let ty = match view {
            SpirvType::Void => Ty::Void,
            SpirvType::Bool => Ty::Bool,
            SpirvType::Int { width, signed } => Ty::Int {
                w: width as u8,
                signed,
            },
            SpirvType::Float { width, encoding } => match (width, encoding) {
                (16, Some(grammar::fp_encoding::BFloat16KHR)) => Ty::Float(Num::BF16),
                (8, Some(grammar::fp_encoding::Float8E4M3EXT)) => Ty::Float(Num::E4M3),
                (8, Some(grammar::fp_encoding::Float8E5M2EXT)) => Ty::Float(Num::E5M2),
                (16, None) => Ty::Float(Num::F16),
                (32, None) => Ty::Float(Num::F32),
                (64, None) => Ty::Float(Num::F64),
                _ => Ty::Other(inst.opcode),
            },
            SpirvType::Vector { comp, count } => Ty::Vector {
                elem: comp,
                n: count,
            },
            SpirvType::Matrix { column, count } => Ty::Matrix {
                col: column,
                n: count,
            },
            SpirvType::Array { elem, len } => Ty::Array {
                elem,
                len: self.const_u64(len)? as u32,
            },
            SpirvType::RuntimeArray { elem } => Ty::RuntimeArray { elem },
            SpirvType::Struct => Ty::Struct(
                (1..inst.operands.len())
                    .map(|k| inst.word(k).unwrap_or(0))
                    .collect(),
            ),
            SpirvType::Pointer { storage, pointee } => Ty::Pointer {
                sc: storage,
                pointee,
            },
            SpirvType::OpaquePointer { storage } => Ty::Pointer {
                sc: storage,
                pointee: 0,
            },
            SpirvType::Function { .. } => Ty::Function,
            SpirvType::CoopKhr { .. } | SpirvType::CoopNv { .. } => {
                let Some(ids) = view.coop_matrix() else {
                    return bad("cooperative matrix type without its operands");
                };
                let cm = CmType {
                    num: self.t.num(ids.comp)?,
                    signed: self.t.signed(ids.comp),
                    scope: self.const_u64(ids.scope)? as u32,
                    rows: self.const_u64(ids.rows)? as u32,
                    cols: self.const_u64(ids.cols)? as u32,
                    use_: match ids.usage {
                        Some(u) => self.const_u64(u)? as u32,
                        // NV matrices take part in MulAdd as any operand; 2 = accumulator.
                        None => 2,
                    },
                    nv: ids.usage.is_none(),
                };
                if cm.elems() == 0 || cm.elems() > 1 << 20 {
                    return bad(format!(
                        "cooperative matrix %{rid} has unsupported size {}x{}",
                        cm.rows, cm.cols
                    ));
                }
                Ty::CoopMat(cm)
            }
            SpirvType::Layout { .. } | SpirvType::View { .. } => {
                self.coop2_type(inst);
                return Ok(());
            }
            // A cooperative vector is a per-invocation vector of any length
            // (SPV_NV_cooperative_vector 2.2 "Cooperative Vector").
            SpirvType::CoopVec { comp, count } => {
                let n = self.const_u64(count)?;
                if n == 0 || n > 1 << 16 {
                    return bad(format!("cooperative vector %{rid} has {n} components"));
                }
                Ty::Vector {
                    elem: comp,
                    n: n as u32,
                }
            }
            SpirvType::Other | SpirvType::None => Ty::Other(inst.opcode),
        };
        self.t.insert(rid, ty);
        Ok(())
    }

    fn variable(&mut self, inst: &coopmat_spirv::Instruction) -> Result<(), ExecError> {
        let m = self.m;
        let (pty, id) = (inst.result_type.unwrap_or(0), inst.result_id.unwrap_or(0));
        let Ty::Pointer { sc, pointee } = self.t.get(pty)?.clone() else {
            return bad(format!("variable %{id} does not have a pointer type"));
        };
        let col = self.pointer_val(id);
        let addr = match sc {
            storage_class::StorageBuffer | storage_class::Uniform => {
                let set = m
                    .decoration_param(id, decoration::DescriptorSet)
                    .flatten()
                    .unwrap_or(0);
                let binding = m
                    .decoration_param(id, decoration::Binding)
                    .flatten()
                    .unwrap_or(0);
                if matches!(
                    self.t.get(pointee)?,
                    Ty::Array { elem, .. } | Ty::RuntimeArray { elem } if self.is_block(*elem)
                ) {
                    self.descriptor_arrays.insert(id, (set, binding));
                }
                VarAddr::Binding(set, binding)
            }
            storage_class::PushConstant => VarAddr::Push,
            storage_class::Workgroup
            | storage_class::Function
            | storage_class::Private
            | storage_class::Input
            | storage_class::Output => {
                let bytes = if matches!(self.t.get(pointee), Ok(Ty::Other(_))) {
                    0
                } else {
                    self.t.size_align(pointee)?.0 as u64
                };
                if sc == storage_class::Workgroup
                    && self.m.has_decoration(pointee, decoration::Block)
                    && let Some(li) = self.wg_block
                {
                    let l = &mut self.locals[li as usize];
                    l.bytes = l.bytes.max(bytes);
                    self.var_cols.push((col, VarAddr::Local(li)));
                    return Ok(());
                }
                if bytes >= crate::memory::MAX_OBJECT_BYTES {
                    return bad(format!(
                        "variable %{} needs {bytes} bytes: more than the engine's object limit",
                        inst.result_id.unwrap_or(0)
                    ));
                }
                let li = self.locals.len() as u32;
                self.locals.push(LocalDef {
                    var: inst.result_id.unwrap_or(0),
                    bytes,
                    per_lane: sc != storage_class::Workgroup,
                    private: sc == storage_class::Private,
                });
                if sc == storage_class::Workgroup
                    && self.m.has_decoration(pointee, decoration::Block)
                {
                    self.wg_block = Some(li);
                }
                if sc == storage_class::Input {
                    self.input_builtins(id, pointee, li)?;
                }
                // Function-class initializers are stores where the OpVariable stands.
                if let (Some(init), false) = (inst.word(3), sc == storage_class::Function) {
                    let mut leaves = Vec::new();
                    self.t.mem_leaves(pointee, &mut leaves)?;
                    let store = Op::Store(StoreArgs {
                        ptr: col,
                        v: self.val(init)?,
                        leaves: leaves.into(),
                    });
                    let d = self.desc(op::Variable, id);
                    self.private_init.push((store, d));
                }
                VarAddr::Local(li)
            }
            // Classes the engine has no memory for (images and samplers in UniformConstant,
            // ...) fail where a variable of theirs is used; a value no SPIR-V version defines
            // fails here.
            _ if coopmat_spirv::grammar::enumerant(
                coopmat_spirv::grammar::OperandKind::StorageClass,
                sc,
            )
            .is_none() =>
            {
                return bad(format!(
                    "variable %{id} has storage class {sc}, which SPIR-V does not define"
                ));
            }
            _ => return Ok(()),
        };
        self.var_cols.push((col, addr));
        Ok(())
    }

    fn input_builtins(&mut self, id: u32, pointee: u32, li: u32) -> Result<(), ExecError> {
        let m = self.m;
        let add = |cx: &mut Self, b: u32, off: u32, ty: u32| -> Result<(), ExecError> {
            let (num, _) = cx.t.comps(ty)?;
            cx.builtins.push(BuiltinFill {
                local: li,
                off,
                builtin: b,
                comp_bytes: num.bytes(),
            });
            Ok(())
        };
        if let Some(Some(b)) = m.decoration_param(id, decoration::BuiltIn) {
            add(self, b, 0, pointee)?;
        } else if let Ok(Ty::Struct(ms)) = self.t.get(pointee).cloned() {
            for (k, &mt) in ms.iter().enumerate() {
                if let Some(d) = m
                    .decorations(pointee)
                    .iter()
                    .find(|d| d.member == Some(k as u32) && d.decoration == decoration::BuiltIn)
                {
                    let b = m.instructions[d.inst].word(d.first_param).unwrap_or(0);
                    let (off, _) = self.t.mem_member(pointee, k as u32)?;
                    add(self, b, off, mt)?;
                }
            }
        }
        Ok(())
    }
}

/// Successors and merge targets of a block, for the structured order.
fn block_succs(m: &Module, b: &coopmat_spirv::module::Block) -> Vec<u32> {
    use coopmat_spirv::cfg;
    let body: Vec<usize> = b.body.clone().collect();
    let Some(&last) = body.last() else {
        return Vec::new();
    };
    // Merge block and continue target first: the depth-first order visits them before the
    // body, so the body comes before them once reversed.
    let mut out: Vec<u32> = body
        .len()
        .checked_sub(2)
        .and_then(|k| cfg::merge_info(&m.instructions[body[k]]))
        .map(|mi| {
            [Some(mi.merge), mi.continue_target]
                .into_iter()
                .flatten()
                .collect()
        })
        .unwrap_or_default();
    // Targets in reverse, so that the true side (and the first case) comes first in the order.
    out.extend(cfg::successors(&m.instructions[last]).into_iter().rev());
    out
}

impl<'m> Cx<'m> {
    /// Compiles a function's blocks in structured order: a depth-first search that visits a
    /// header's merge block (and continue target) before its body, reversed, so that every
    /// construct's blocks come before its merge block and a loop's body before its continue
    /// target. Executing the lowest pending block first then reconverges lanes at merges.
    fn function(&mut self, fid: u32) -> Result<Vec<Block>, ExecError> {
        let m = self.m;
        let f = m.function(fid).unwrap();
        let by_id: HashMap<u32, usize> = f
            .blocks
            .iter()
            .enumerate()
            .map(|(i, b)| (b.id, i))
            .collect();
        let mut post = Vec::new();
        let mut visited = vec![false; f.blocks.len()];
        let mut stack: Vec<(usize, Vec<u32>, usize)> = Vec::new();
        if !f.blocks.is_empty() {
            visited[0] = true;
            stack.push((0, block_succs(m, &f.blocks[0]), 0));
        }
        while let Some(top) = stack.last_mut() {
            if top.2 < top.1.len() {
                let s = top.1[top.2];
                top.2 += 1;
                if let Some(&si) = by_id.get(&s)
                    && !visited[si]
                {
                    visited[si] = true;
                    stack.push((si, block_succs(m, &f.blocks[si]), 0));
                }
            } else {
                post.push(top.0);
                stack.pop();
            }
        }
        let mut order: Vec<usize> = post.into_iter().rev().collect();
        for (i, v) in visited.iter().enumerate() {
            if !v {
                order.push(i);
            }
        }
        let pos: HashMap<u32, u32> = order
            .iter()
            .enumerate()
            .map(|(p, &bi)| (f.blocks[bi].id, p as u32))
            .collect();
        // Which values die on an edge (`Edge::movable`).
        let facts = EdgeFacts::new(m, f);
        let mut hoisted = self.hoisted.remove(&fid).unwrap_or_default();
        // Moved instructions that did not compile (and those using them) go back to their own
        // blocks, where their error is raised only if they are reached.
        let mut unmoved: HashSet<u32> = HashSet::new();
        let mut blocks = Vec::new();
        for &bi in &order {
            let b = &f.blocks[bi];
            let mut ops = Vec::new();
            let body: Vec<usize> = b.body.clone().collect();
            let (last, rest) = body.split_last().unwrap();
            let moved_here = hoisted.to.get(&b.id).map(Vec::as_slice).unwrap_or(&[]);
            // The value the last op of `ops` computes when that op is an integer chain or a
            // chainable Bin (`Cx::fuse_int_chain`).
            let mut chain_tail: Option<(u32, usize)> = None;
            for &i in rest.iter().chain(moved_here) {
                let inst = &m.instructions[i];
                if inst.opcode == op::Phi || (hoisted.moved.contains(&i) && b.body.contains(&i)) {
                    continue;
                }
                if self.dead_stores.contains(&i) {
                    chain_tail = None;
                    continue;
                }
                let rid = inst.result_id.unwrap_or(0);
                let moved_in = !b.body.contains(&i);
                if moved_in && inst.id_refs().any(|id| unmoved.contains(&id)) {
                    hoisted.moved.remove(&i);
                    unmoved.insert(rid);
                    continue;
                }
                let d = self.desc(inst.opcode, rid);
                let mut out = Vec::new();
                let args = &inst.words
                    [1 + inst.result_type.is_some() as usize + inst.result_id.is_some() as usize..];
                let r = if inst.opcode == op::Variable {
                    self.fn_variable(inst, &mut out)
                } else {
                    self.inst(
                        inst.opcode,
                        inst.result_type.unwrap_or(0),
                        rid,
                        args,
                        &mut out,
                    )
                };
                if let Err(e) = r {
                    if moved_in {
                        hoisted.moved.remove(&i);
                        unmoved.insert(rid);
                        continue;
                    }
                    out = vec![Op::Unsupported(Box::new(e))];
                } else if rid != 0 {
                    self.run_once(fid, rid, &mut out);
                }
                if inst.opcode == op::Store {
                    self.fuse_staging_copy(args, &mut ops, &mut out);
                }
                self.fuse_chain_address(fid, i, chain_tail, &mut ops, &mut out);
                chain_tail = self
                    .fuse_int_chain(fid, i, chain_tail, &mut ops, &mut out)
                    .map(|()| (rid, i));
                ops.extend(out.into_iter().map(|o| (o, d)));
            }
            self.fuse_muladds(&mut ops);
            let term_inst = &m.instructions[*last];
            let d = self.desc(term_inst.opcode, 0);
            let term = self.term(f, b.id, term_inst, &pos, &facts)?;
            blocks.push(Block {
                ops,
                term: (term, d),
            });
        }
        Ok(blocks)
    }

    /// Fuses the OpStore compiled into `out` with the OpLoad of its Object when nothing else
    /// reads that value (`Cx::stored_once`) and only pure lane ops ([`Op::is_pure_lane_op`],
    /// the store's address arithmetic) lie between them, none writing the load's pointer or
    /// value: one [`Op::LoadStore`] at the store's place (the GEMM staging copy `shared[i] =
    /// global[j]`, which otherwise moves every word through a register column and back). The
    /// load reads the same memory there, since nothing between writes memory. Not while
    /// observing uniformity (the load's value would go unobserved).
    fn fuse_staging_copy(&mut self, args: &[u32], ops: &mut Vec<(Op, u32)>, out: &mut Vec<Op>) {
        if self.options.observe_uniformity
            || !args.get(1).is_some_and(|o| self.stored_once.contains(o))
        {
            return;
        }
        let [Op::Store(store)] = &out[..] else {
            return;
        };
        let Some(at) = ops.iter().rposition(|(o, _)| !o.is_pure_lane_op()) else {
            return;
        };
        let Op::Load(load) = &ops[at].0 else {
            return;
        };
        let overlaps = |c: Col, n: u32, lo: Col, m: u32| c.0 < lo.0 + m && lo.0 < c.0 + n;
        let untouched = ops[at + 1..].iter().all(|(o, _)| {
            o.result_cols().is_some_and(|(c, n)| {
                !overlaps(c, n, load.ptr, 1) && !overlaps(c, n, load.d.col, load.d.ncols)
            })
        });
        if load.d != store.v || load.d.nmats != 0 || !untouched {
            return;
        }
        let fused = LoadStoreArgs {
            load: load.clone(),
            store: store.clone(),
            load_desc: ops[at].1,
            slot: self.copy_slots,
        };
        self.copy_slots += 1;
        ops.remove(at);
        *out = vec![Op::LoadStore(Box::new(fused))];
    }

    /// Fuses instruction `i` of function `fid`, compiled into `out`, into the op before it
    /// when both are 32-bit integer ops of [`ChainOp`] on single columns, the op before
    /// computes `tail` (its result and instruction), and `i` is the only use of `tail`: one
    /// [`Op::IntChain`] (an address computation `((x + k) >> 3) + y`, one pass over the lanes
    /// instead of three). `tail`'s registers are then never written, which nothing can tell:
    /// no other instruction reads it. Operands the divergence analysis proves uniform are read
    /// once ([`Cx::uniform_operand`]). Some when the last op now computes `i`'s result and can
    /// start or extend a chain. Not while observing uniformity (every value is observed there).
    fn fuse_int_chain(
        &self,
        fid: u32,
        i: usize,
        tail: Option<(u32, usize)>,
        ops: &mut [(Op, u32)],
        out: &mut Vec<Op>,
    ) -> Option<()> {
        let [Op::Bin(b)] = &out[..] else {
            return None;
        };
        let chain_op = ChainOp::of(b.op).filter(|_| b.n == 1 && b.num == Num::Int(32))?;
        if self.options.observe_uniformity {
            return None;
        }
        let prev = tail.filter(|(t, _)| self.single_use.get(t) == Some(&i));
        let last = ops.last_mut().map(|(o, _)| o);
        let (prev_d, prev_i, last) = match (prev, last) {
            (Some((_, pi)), Some(o @ (Op::Bin(_) | Op::IntChain(_)))) => {
                (o.result_cols().map(|(c, _)| c), pi, o)
            }
            _ => return Some(()),
        };
        let (other, acc_left) = match prev_d {
            Some(p) if b.a == p && b.b != p => (b.b, true),
            Some(p) if b.b == p && b.a != p => (b.a, false),
            _ => return Some(()),
        };
        let step = ChainStep {
            op: chain_op,
            other,
            acc_left,
            uniform: self.uniform_operand(fid, i, other),
        };
        match last {
            Op::Bin(first) => {
                let mut chain = self.chain_of_bin(fid, prev_i, first)?;
                chain.d = b.d;
                chain.steps.push(step);
                *last = Op::IntChain(Box::new(chain));
            }
            Op::IntChain(chain) if chain.address.is_none() && chain.steps.len() < MAX_CHAIN => {
                chain.d = b.d;
                chain.steps.push(step);
            }
            _ => return Some(()),
        }
        out.clear();
        Some(())
    }

    /// The one-step chain that Bin `b` (instruction `i` of function `fid`) is, when it is a
    /// 32-bit [`ChainOp`] on single columns: a chain's head.
    fn chain_of_bin(&self, fid: u32, i: usize, b: &BinArgs) -> Option<IntChainArgs> {
        let op = ChainOp::of(b.op).filter(|_| b.n == 1 && b.num == Num::Int(32))?;
        Some(IntChainArgs {
            d: b.d,
            first: b.a,
            first_uniform: self.uniform_operand(fid, i, b.a),
            steps: vec![ChainStep {
                op,
                other: b.b,
                acc_left: true,
                uniform: self.uniform_operand(fid, i, b.b),
            }],
            address: None,
        })
    }

    /// Whether column `c`, an operand of instruction `i` of function `fid`, holds one value in
    /// every active lane of a batch: a constant column of no id or of a module constant, or a
    /// value the divergence analysis proves the same in every lane (as for [`Op::Once`]) in the
    /// entry point (an engine call may pass differing values for a parameter compiled as one
    /// per call, `Batch::once_off`).
    fn uniform_operand(&self, fid: u32, i: usize, c: Col) -> bool {
        // A constant of the compiler's own (a shift for a division, say) fills every lane.
        if self.const_len.iter().any(|&(k, _)| k == c) {
            return true;
        }
        // So does a constant of the module, in every function (its registers are written once,
        // when a batch is made); in the entry point, a value the analysis proves uniform.
        let proven = |id: u32| {
            fid == self.entry_fn
                && self
                    .uniform
                    .as_ref()
                    .is_some_and(|(analysis, limit)| self.entry_level(analysis, id) <= *limit)
        };
        self.m.instructions[i]
            .id_refs()
            .filter(|&id| self.col(id).is_ok_and(|x| x == c))
            .any(|id| self.const_ids.contains(&id) || proven(id))
    }

    /// Fuses the access chain compiled into `out` (instruction `i`) into the integer op before
    /// it when that op computes `tail`, `i` is the only use of `tail`, and `tail` is the
    /// chain's one index, 32 bits wide: the op becomes an [`Op::IntChain`] ending in a
    /// [`ChainAddress`] (a staging copy's `a[(row * N + k) / 8 + col]`, one pass over the lanes
    /// instead of two, the index never written). Only where the access chain's wrapping sum is
    /// exact (see [`ChainAddress`]); not while observing uniformity.
    fn fuse_chain_address(
        &self,
        fid: u32,
        i: usize,
        tail: Option<(u32, usize)>,
        ops: &mut [(Op, u32)],
        out: &mut Vec<Op>,
    ) {
        let [Op::AccessChain(ac)] = &out[..] else {
            return;
        };
        if self.options.observe_uniformity
            || tail.is_none_or(|(t, _)| self.single_use.get(&t) != Some(&i))
            || ac.steps.len() > 64
        {
            return;
        }
        let mut offset = 0i64;
        let mut index = None;
        for s in ac.steps.iter() {
            match *s {
                Step::Const(x) if x.unsigned_abs() < 1 << 40 => offset += x,
                Step::Dyn {
                    idx,
                    bits: 32,
                    stride,
                } if index.is_none() && stride.unsigned_abs() < 1 << 24 => {
                    index = Some((idx, stride));
                }
                Step::Const(_) | Step::Dyn { .. } => return,
            }
        }
        let Some((idx, stride)) = index.filter(|_| offset.unsigned_abs() < 1 << 40) else {
            return;
        };
        let (Some((last, _)), Some((_, prev_i))) = (ops.last_mut(), tail) else {
            return;
        };
        let address = ChainAddress {
            base: ac.base,
            base_uniform: self.uniform_operand(fid, i, ac.base),
            offset,
            stride,
        };
        match last {
            Op::IntChain(chain) if chain.d == idx && chain.address.is_none() => {
                chain.d = ac.d;
                chain.address = Some(address);
            }
            Op::Bin(b) if b.d == idx => {
                let Some(mut chain) = self.chain_of_bin(fid, prev_i, b) else {
                    return;
                };
                chain.d = ac.d;
                chain.address = Some(address);
                *last = Op::IntChain(Box::new(chain));
            }
            _ => return,
        }
        out.clear();
    }

    /// The functions only the engine calls, none reading or writing Private variables (whose
    /// per-lane storage a call borrows), with their values' levels within one call: a
    /// per-element function's row, column and element parameters and matrix extra operands
    /// differ between its lanes, its other extra operands are one value per call (the
    /// instance's first active lane's, SPV_NV_cooperative_matrix2 "OpCooperativeMatrixPerElementOpNV");
    /// every parameter of a decode or combine function differs. A function that an
    /// OpFunctionCall also calls is left out (its lanes there are invocations).
    fn callback_levels(
        &self,
        analysis: &coopmat_analysis::Analysis<'m>,
        private_users: &HashSet<u32>,
    ) -> HashMap<u32, Callback> {
        use coopmat_analysis::Level;
        use grammar::operands::CooperativeMatrixPerElementOpNV as pe;
        let m = self.m;
        let mut called = HashSet::new();
        let mut uses: HashMap<u32, Vec<Level>> = HashMap::new();
        // Joins one engine call's parameter levels into the function's (missing: divergent).
        let mut join = |f: u32, levels: Vec<Level>| {
            let e = uses.entry(f).or_insert_with(|| levels.clone());
            let n = e.len().max(levels.len());
            e.resize(n, Level::Divergent);
            for (k, x) in e.iter_mut().enumerate() {
                *x = (*x).max(levels.get(k).copied().unwrap_or(Level::Divergent));
            }
        };
        for inst in &m.instructions {
            if inst.opcode == op::FunctionCall {
                called.extend(inst.word(2));
                continue;
            }
            // The uses the analysis seeds as callbacks, found by its own test.
            if !coopmat_analysis::calls_named_functions(inst.opcode) {
                continue;
            }
            let args = inst.words.get(1 + inst.first_arg()..).unwrap_or(&[]);
            if inst.opcode == op::CooperativeMatrixPerElementOpNV
                && let Some(&f) = args.get(pe::FUNC)
            {
                let mut levels = vec![Level::Divergent; 3];
                for &x in args.get(pe::OPERANDS..).unwrap_or(&[]) {
                    let is_mat = self.ty_of(x).is_ok_and(|t| self.t.coopmat(t).is_some());
                    levels.push(if is_mat {
                        Level::Divergent
                    } else {
                        Level::Uniform
                    });
                }
                join(f, levels);
            }
            for id in coopmat_analysis::arg_ids(inst) {
                if m.function(id).is_some_and(|f| !f.blocks.is_empty())
                    && !(inst.opcode == op::CooperativeMatrixPerElementOpNV
                        && args.get(pe::FUNC) == Some(&id))
                {
                    join(id, Vec::new());
                }
            }
        }
        uses.into_iter()
            .filter(|(f, _)| !called.contains(f) && !private_users.contains(f))
            .filter_map(|(f, args)| {
                let levels = analysis.in_call(f, &args)?;
                let nparams = m.function(f)?.params.len();
                let uniform_params = (0..nparams)
                    .map(|k| args.get(k).is_some_and(|&l| l <= Level::Uniform))
                    .collect();
                Some((
                    f,
                    Callback {
                        levels,
                        uniform_params,
                    },
                ))
            })
            .collect()
    }

    /// Makes the op computing `rid` (in function `fid`) an [`Op::Once`] when the divergence
    /// analysis proves `rid` the same in every lane of a batch (the entry point) or of one
    /// engine call (`Cx::callbacks`) and the op is a pure lane op or a load of columns
    /// (what a lane computes from its own registers and memory, so the first lane's result
    /// is every lane's).
    fn run_once(&self, fid: u32, rid: u32, out: &mut Vec<Op>) {
        use coopmat_analysis::Level;
        let Some((analysis, limit)) = &self.uniform else {
            return;
        };
        let one_value = if fid == self.entry_fn {
            self.entry_level(analysis, rid) <= *limit
        } else if let Some(c) = self.callbacks.get(&fid) {
            // One engine call's lanes share their workgroup, but what a call sees of workgroup
            // values is the engine's business: only dispatch-uniform ones.
            c.levels.value(rid) <= Level::Uniform
        } else {
            false
        };
        let eligible = match &out[..] {
            [Op::Load(x)] => x.d.nmats == 0 && x.d.ncols > 0,
            // A layout or view set with uniform operands: one evaluation (and one memo
            // lookup) instead of testing every operand column for uniformity at run time.
            [Op::Coop2(c)] => c.value_result().is_some(),
            [o] => o.is_pure_lane_op() && o.result_cols().is_some(),
            _ => false,
        };
        if eligible
            && one_value
            && let Some(o) = out.pop()
        {
            out.push(Op::Once(Box::new(o)));
        }
    }

    /// Fuses runs of consecutive float MulAdds that share their A operand into one
    /// [`Op::CmMulAddSharedA`] (a GEMM's inner step: each A tile times several B tiles), which
    /// the executor runs through a kernel that loads A once for all of them. A MulAdd joins
    /// the run only if it cannot see another's result and none can see its own: its D is not
    /// A, not its own B, not any operand or result of the other parts (its own C may be its
    /// D). Every operand is an f32-arena tile and D is f32, so the kernel's result needs no
    /// rounding and is bit for bit that of the parts one by one.
    ///
    /// First, a MulAdd whose result only a later one reads, as its C (`feeds_next`: a K loop
    /// unrolled in the shader), moves into that one as the first half of a chain
    /// ([`ChainFirst`]), when nothing between them writes its operands or result or reads its
    /// result (only matrix loads and other MulAdds may lie between): the kernel then keeps
    /// the intermediate sum in registers, with the same FMAs in the same order.
    fn fuse_muladds(&self, ops: &mut Vec<(Op, u32)>) {
        let fusable = |x: &CmMulAddArgs| {
            [x.d, x.a, x.b, x.c]
                .iter()
                .all(|m| self.mats[m.ix()].is_f32_arena())
                && self.mats[x.d.ix()].num == Num::F32
                && x.d != x.a
                && x.d != x.b
        };
        let same_shape = |x: Mat, y: Mat| self.mats[x.ix()] == self.mats[y.ix()];
        // Chains: the (A, B, C) of the first MulAdd and which of its A and B are lazy, at the
        // second's index; the firsts dropped.
        type Head = ((Mat, Mat, Mat), [bool; 2]);
        let mut chained: Vec<Option<Head>> = vec![None; ops.len()];
        let mut dropped = vec![false; ops.len()];
        for p1 in 0..ops.len() {
            let Op::CmMulAdd(x1) = &ops[p1].0 else {
                continue;
            };
            if !x1.feeds_next || !fusable(x1) || chained[p1].is_some() {
                continue;
            }
            let watched = [x1.a, x1.b, x1.c, x1.d];
            let mut second = None;
            for (p2, (o, _)) in ops.iter().enumerate().skip(p1 + 1) {
                match o {
                    Op::CmLoad(y) if !watched.contains(&y.d) => {}
                    Op::CmMulAdd(y) if y.c == x1.d => {
                        second = Some((p2, y));
                        break;
                    }
                    Op::CmMulAdd(y)
                        if !watched.contains(&y.d) && ![y.a, y.b, y.c].contains(&x1.d) => {}
                    _ => break,
                }
            }
            if let Some((p2, x2)) = second
                && fusable(x2)
                && x2.flags == x1.flags
                && ![x2.a, x2.b].contains(&x1.d)
                && ![x1.a, x1.b].contains(&x2.d)
                && same_shape(x1.a, x2.a)
                && same_shape(x1.b, x2.b)
            {
                chained[p2] = Some(((x1.a, x1.b, x1.c), x1.lazy));
                dropped[p1] = true;
            }
        }
        // A MulAdd to group: its operands (C the chain's first C), its chain's first A, B, and
        // which of those two are lazy.
        type Part = (CmMulAddArgs, Option<(Mat, Mat)>, u32, [bool; 2]);
        let mut out: Vec<(Op, u32)> = Vec::with_capacity(ops.len());
        let mut run: Vec<Part> = Vec::new();
        let flush = |run: &mut Vec<Part>, out: &mut Vec<(Op, u32)>| {
            if run.len() < 2 && run.first().is_none_or(|p| p.1.is_none()) {
                out.extend(run.drain(..).map(|(x, _, d, _)| (Op::CmMulAdd(x), d)));
                return;
            }
            let desc = run[0].2;
            let (a, flags) = (run[0].0.a, run[0].0.flags);
            let first = run[0].1.map(|(a1, _)| ChainFirst {
                a: a1,
                b: run.iter().filter_map(|p| p.1.map(|(_, b1)| b1)).collect(),
            });
            let lazy = LazyOperands {
                a: [run[0].0.lazy[0], run[0].3[0]],
                b: run.iter().map(|p| [p.0.lazy[1], p.3[1]]).collect(),
            };
            let parts = run.drain(..).map(|(x, _, _, _)| (x.d, x.b, x.c)).collect();
            out.push((
                Op::CmMulAddSharedA(Box::new(CmMulAddSharedAArgs {
                    a,
                    flags,
                    parts,
                    first,
                    lazy,
                })),
                desc,
            ));
        };
        for (p, (o, d)) in ops.drain(..).enumerate() {
            if dropped[p] {
                continue;
            }
            let Op::CmMulAdd(mut x) = o else {
                flush(&mut run, &mut out);
                out.push((o, d));
                continue;
            };
            let first_lazy = chained[p].map_or([false; 2], |(_, l)| l);
            let first = chained[p].map(|((a1, b1, c1), _)| {
                x.c = c1;
                (a1, b1)
            });
            // Everything a part reads besides A: its B, C and first B.
            let reads = |x: &CmMulAddArgs, f: &Option<(Mat, Mat)>| {
                [Some(x.b), Some(x.c), Some(x.d), f.map(|f| f.1)]
            };
            let joins = fusable(&x)
                && run.first().is_some_and(|(f, ff, _, _)| {
                    f.a == x.a
                        && f.flags == x.flags
                        && same_shape(f.b, x.b)
                        && ff.map(|f| f.0) == first.map(|f| f.0)
                })
                && run.iter().all(|(y, yf, _, _)| {
                    !reads(y, yf).contains(&Some(x.d))
                        && !reads(&x, &first).contains(&Some(y.d))
                        && yf.is_none_or(|f| f.0 != x.d)
                        && first.is_none_or(|f| f.0 != y.d)
                });
            if !joins {
                flush(&mut run, &mut out);
            }
            if fusable(&x) {
                run.push((x, first, d, first_lazy));
            } else {
                out.push((Op::CmMulAdd(x), d));
            }
        }
        flush(&mut run, &mut out);
        *ops = out;
    }

    /// Whether Function variable `inst` can live in registers: its only uses are whole loads
    /// through it and whole stores to it, or, for values without matrices, through access chains
    /// with constant indices (no dynamic index, call or copy sees its address), and its value is
    /// a modest number of scalars. Its loads and stores become register copies under
    /// the active mask, which is what they do to per-lane memory. glslang leaves every
    /// cooperative vector and many locals in such variables, and spirv-opt does not promote
    /// cooperative vectors.
    fn promotable(
        &self,
        du: &coopmat_spirv::module::DefUse,
        inst: &coopmat_spirv::Instruction,
    ) -> bool {
        let (Some(id), Some(pty)) = (inst.result_id, inst.result_type) else {
            return false;
        };
        let Ok(Ty::Pointer { sc, pointee }) = self.t.get(pty).cloned() else {
            return false;
        };
        // Cooperative matrices too: a whole-matrix load or store becomes a slot copy instead of
        // an element-by-element trip through per-lane memory.
        if sc != storage_class::Function
            || !matches!(self.t.shape(pointee), Ok((c, m)) if c <= 256 && m <= 16 && c + m > 0)
        {
            return false;
        }
        let no_matrices = matches!(self.t.shape(pointee), Ok((_, 0)));
        if self.t.coopmat(pointee).is_some() {
            return self.matrix_loaded_and_stored(du, id);
        }
        self.only_loaded_and_stored(du, id, pointee, no_matrices, 0)
    }

    /// Whether a cooperative-matrix Function variable `id` is used only by whole loads and
    /// stores and by access chains with one index (a component of the lane's share, computed or
    /// not) that are only loaded and stored through: flash attention's softcap loop indexes its
    /// score tile that way, and kept the whole tile in per-lane memory for every other access.
    fn matrix_loaded_and_stored(&self, du: &coopmat_spirv::module::DefUse, id: u32) -> bool {
        let loaded_or_stored = |u: usize, n: u16| match self.m.instructions[u].opcode {
            // Operand 2 of OpLoad is its pointer; operand 0 of OpStore is its pointer.
            op::Load => n == 2,
            op::Store => n == 0,
            op::Name | op::Decorate | op::DecorateId | op::DecorateString => true,
            _ => false,
        };
        du.uses(id).iter().all(|&(u, n)| {
            let user = &self.m.instructions[u];
            match user.opcode {
                // Operand 2 of an access chain is its base, operand 3 its one index.
                op::AccessChain | op::InBoundsAccessChain => {
                    n == 2
                        && user.operands.len() == 4
                        && user.result_id.is_some_and(|r| {
                            du.uses(r).iter().all(|&(u, n)| loaded_or_stored(u, n))
                        })
                }
                _ => loaded_or_stored(u, n),
            }
        })
    }

    /// Whether pointer `id` (to a value of type `ty`) is used only by whole loads and stores,
    /// and, with `chains`, by access chains in range whose results are used the same way:
    /// with constant indices (glslang keeps `f16vec4 v; ... v[0] ...` in such variables: the
    /// element becomes a register copy), or with computed indices into arrays, vectors and
    /// matrices whose results are only loaded and stored (llama.cpp's matrix-vector shaders
    /// keep their sums in `temp[j][n]`, both loop counters, the bounds specialization
    /// constants: each access a per-lane offset into the registers, [`Op::IndexChain`]);
    /// `depth` bounds the chains of chains.
    fn only_loaded_and_stored(
        &self,
        du: &coopmat_spirv::module::DefUse,
        id: u32,
        ty: u32,
        chains: bool,
        depth: u32,
    ) -> bool {
        depth < 8
            && du.uses(id).iter().all(|&(u, n)| {
                let user = &self.m.instructions[u];
                match user.opcode {
                    // Operand 2 of OpLoad is its pointer; operand 0 of OpStore is its pointer.
                    op::Load => n == 2,
                    op::Store => n == 0,
                    op::Name | op::Decorate | op::DecorateId | op::DecorateString => true,
                    // Operand 2 of an access chain is its base; the rest are indices.
                    op::AccessChain | op::InBoundsAccessChain if chains && n == 2 => {
                        let idx: Vec<u32> = (3..user.operands.len())
                            .filter_map(|k| user.word(k))
                            .collect();
                        let Some(r) = user.result_id else {
                            return false;
                        };
                        // Computed indices only into a value whose parts are loaded and stored.
                        self.access_path(ty, &idx).is_some_and(|path| {
                            let constant = path.steps.is_empty();
                            self.only_loaded_and_stored(du, r, path.part, constant, depth + 1)
                        })
                    }
                    _ => false,
                }
            })
    }

    /// The part of a `ty` value that indices `idx` select: the registers the constant ones
    /// skip, each computed one as (index id, registers an element takes, elements), and the
    /// part's type. None where a computed index selects a struct member, is not an integer
    /// scalar or steps into elements holding a matrix (those have their own element access), or
    /// a constant one is out of range.
    pub(super) fn access_path(&self, ty: u32, idx: &[u32]) -> Option<AccessPath> {
        let (mut cur, mut off, mut steps) = (ty, 0, Vec::new());
        for &i in idx {
            if self.const_ids.contains(&i) {
                let k = u32::try_from(self.m.constant_u64(i)?).ok()?;
                let (co, _, t) = self.t.member(cur, k).ok()?;
                off += co;
                cur = t;
                continue;
            }
            let (elem, count) = match self.t.get(cur).ok()? {
                Ty::Vector { elem, n }
                | Ty::Matrix { col: elem, n }
                | Ty::Array { elem, len: n } => (*elem, *n),
                _ => return None,
            };
            let it = self.m.def(i)?.result_type?;
            if !matches!(self.t.get(it).ok()?, Ty::Int { .. }) {
                return None;
            }
            let (stride, mats) = self.t.shape(elem).ok()?;
            if mats != 0 || stride == 0 {
                return None;
            }
            steps.push((i, stride, count));
            cur = elem;
        }
        Some(AccessPath {
            off,
            steps,
            part: cur,
        })
    }

    /// The first column and the type of the part of a `ty` value that constant indices `idx`
    /// select; None for an index that is not a constant or out of range.
    pub(super) fn constant_path(&self, ty: u32, idx: &[u32]) -> Option<(u32, u32)> {
        self.access_path(ty, idx)
            .filter(|path| path.steps.is_empty())
            .map(|path| (path.off, path.part))
    }

    /// Whether Function variable `inst` is never read: its uses are stores to it and access
    /// chains with constant indices whose uses are such stores (glslang's unoptimized output
    /// keeps a copy of many values in variables nothing loads). What it holds cannot be
    /// observed, so its stores are dead; constant indices are in bounds by validation, so
    /// dropping them hides no out-of-bounds error.
    fn never_read(
        &self,
        du: &coopmat_spirv::module::DefUse,
        inst: &coopmat_spirv::Instruction,
    ) -> bool {
        let (Some(id), Some(pty)) = (inst.result_id, inst.result_type) else {
            return false;
        };
        matches!(self.t.get(pty), Ok(Ty::Pointer { sc, .. }) if *sc == storage_class::Function)
            && self.only_stored(du, id, 0)
    }

    /// Whether the OpLoad at instruction `i` (block `bi` of `f`) of promoted variable `var` can
    /// take the variable's registers as its value instead of a copy of them: no store to the
    /// variable (through it or a chain into it) can run after the load, so the registers keep
    /// the loaded value for as long as it lives. ggml's cm2 matmuls build their tensor layouts
    /// in variables before the main loop and load them in every iteration: 28 columns a copy.
    fn load_reads_final_value(
        &self,
        du: &coopmat_spirv::module::DefUse,
        f: &coopmat_spirv::module::Function,
        bi: usize,
        i: usize,
        var: u32,
    ) -> bool {
        let m = self.m;
        let mut stores = Vec::new();
        let mut ptrs = vec![(var, 0u32)];
        while let Some((p, depth)) = ptrs.pop() {
            if depth >= 16 {
                return false;
            }
            for &(u, n) in du.uses(p) {
                let user = &m.instructions[u];
                match user.opcode {
                    // Operand 0 of OpStore is its pointer; operand 2 of a chain is its base.
                    op::Store if n == 0 => stores.push(u),
                    op::AccessChain | op::InBoundsAccessChain if n == 2 => {
                        if let Some(r) = user.result_id {
                            ptrs.push((r, depth + 1));
                        }
                    }
                    // Loads, names, decorations: `promotable` admitted nothing else.
                    _ => {}
                }
            }
        }
        let mut stored = vec![false; f.blocks.len()];
        for &s in &stores {
            match f.blocks.iter().position(|b| b.body.contains(&s)) {
                Some(sb) if sb == bi && s > i => return false,
                Some(sb) => stored[sb] = true,
                None => return false,
            }
        }
        // No block with a store is reachable from the load's block (itself included, through
        // a cycle).
        let index_of = |id: u32| f.blocks.iter().position(|b| b.id == id);
        let mut seen = vec![false; f.blocks.len()];
        let mut stack: Vec<usize> = block_succs(m, &f.blocks[bi])
            .into_iter()
            .filter_map(index_of)
            .collect();
        while let Some(b) = stack.pop() {
            if std::mem::replace(&mut seen[b], true) {
                continue;
            }
            if stored[b] {
                return false;
            }
            stack.extend(
                block_succs(m, &f.blocks[b])
                    .into_iter()
                    .filter_map(index_of),
            );
        }
        true
    }

    /// Whether pointer `id` is only stored through (see [`Cx::never_read`]); `depth` bounds the
    /// recursion through nested access chains.
    fn only_stored(&self, du: &coopmat_spirv::module::DefUse, id: u32, depth: u32) -> bool {
        depth < 16
            && du.uses(id).iter().all(|&(u, n)| {
                let user = &self.m.instructions[u];
                match user.opcode {
                    // Operand 0 of OpStore is its pointer (the stored object is a read of it).
                    op::Store => n == 0,
                    op::Name | op::Decorate | op::DecorateId | op::DecorateString => true,
                    // Operand 2 of an access chain is its base; the rest are indices.
                    op::AccessChain | op::InBoundsAccessChain => {
                        n == 2
                            && user.operands.len() > 3
                            && (3..user.operands.len())
                                .all(|k| user.word(k).is_some_and(|i| self.const_ids.contains(&i)))
                            && user
                                .result_id
                                .is_some_and(|r| self.only_stored(du, r, depth + 1))
                    }
                    _ => false,
                }
            })
    }

    /// Marks never-read variable `id` and the access chains through it (see [`Cx::never_read`]);
    /// each gets a null pointer column, since no op reads it.
    fn drop_variable(&mut self, du: &coopmat_spirv::module::DefUse, id: u32) {
        self.write_only.insert(id);
        self.pointer_val(id);
        for &(u, _) in du.uses(id) {
            let user = &self.m.instructions[u];
            if matches!(user.opcode, op::AccessChain | op::InBoundsAccessChain)
                && let Some(r) = user.result_id
            {
                self.drop_variable(du, r);
            }
        }
    }

    /// When `inst` only copies lane columns of one operand, bit for bit: that operand and the
    /// registers the result may share with it. OpCopyObject, an OpCompositeExtract that stops
    /// short of a cooperative matrix, and an OpBitcast between equal 64-bit types (a buffer
    /// reference from a decode function's pointer parameter, or back) qualify, with no matrix
    /// slot in the result and no pointer to memory the engine keeps in registers.
    ///
    /// Why sharing is sound (the caller checks the source's kind): a source register is
    /// written only by its defining instruction (or the edges into its phi's block); that
    /// definition dominates the copy, which dominates every use of the copy, so on any path
    /// the last write of the source before a use of the copy comes before the copy itself
    /// (one after it that reached the use without passing the copy again would make the use
    /// reachable from the entry without the copy). Parameters and constants are never written
    /// during the call; a pooled source is kept from the pool until the copy's last use. A
    /// copy read by a phi keeps its own registers (phi coalescing gives an incoming value the
    /// phi's). Lanes that did not run the copy may see the source's value there instead of a
    /// stale one: only a cross-lane read of such a lane sees it, and its value is undefined.
    fn copy_view(&self, inst: &coopmat_spirv::Instruction) -> Option<(u32, Val)> {
        if self.options.observe_uniformity {
            // Observations are made per instruction where the module runs it.
            return None;
        }
        let rt = inst.result_type?;
        let src = inst.word(2)?;
        let sv = *self.vals.get(&src)?;
        let view = match inst.opcode {
            op::CopyObject => sv,
            op::CompositeExtract => {
                let mut cur = self.ty_of(src).ok()?;
                let (mut c, mut mm) = (sv.col, sv.mat);
                for k in 3..inst.operands.len() {
                    let i = inst.word(k)?;
                    if self.t.coopmat(cur).is_some() {
                        return None;
                    }
                    let (co, mo, t) = self.t.member(cur, i).ok()?;
                    c += co;
                    mm += mo;
                    cur = t;
                }
                let (ncols, nmats) = self.t.shape(cur).ok()?;
                Val {
                    col: c,
                    mat: mm,
                    ncols,
                    nmats,
                }
            }
            op::Bitcast => {
                let num64 = |ty: u32| match self.t.get(ty) {
                    Ok(Ty::Pointer { sc, .. }) => {
                        (*sc == storage_class::PhysicalStorageBuffer).then_some((Num::Int(64), 1))
                    }
                    _ => self.t.comps(ty).ok(),
                };
                let from = num64(self.ty_of(src).ok()?)?;
                if from != num64(rt)? || from.0.bits() != 64 {
                    return None;
                }
                sv
            }
            _ => return None,
        };
        let pointer_kept = match self.t.get(rt) {
            Ok(Ty::Pointer { sc, .. }) => *sc != storage_class::PhysicalStorageBuffer,
            _ => false,
        };
        let same_shape = self.t.shape(rt).ok() == Some((view.ncols, view.nmats));
        (view.nmats == 0 && view.ncols > 0 && same_shape && !pointer_kept).then_some((src, view))
    }

    /// When `inst` builds a vector of one scalar repeated and every use of it is an operand
    /// of an op of the scalar-op table with two operands (a per-component [`Op::Bin`]): that
    /// scalar, which those ops read for every component (`a_scalar`, `bs`) instead.
    /// The ops compute the same values from the same bits; the splat is never built.
    fn splat_operand(
        &self,
        inst: &coopmat_spirv::Instruction,
        uses: &[(usize, u16)],
    ) -> Option<u32> {
        if self.options.observe_uniformity
            || !matches!(
                inst.opcode,
                op::CompositeConstruct | op::CompositeConstructReplicateEXT
            )
        {
            return None;
        }
        let Ok(Ty::Vector { n, .. }) = self.t.get(inst.result_type?) else {
            return None;
        };
        let src = inst.word(2)?;
        let parts = inst.operands.len() - 2;
        let repeated = if inst.opcode == op::CompositeConstructReplicateEXT {
            parts == 1
        } else {
            parts == *n as usize && (2..inst.operands.len()).all(|k| inst.word(k) == Some(src))
        };
        let scalar = self
            .vals
            .get(&src)
            .is_some_and(|v| v.ncols == 1 && v.nmats == 0);
        let operand = |&(u, k): &(usize, u16)| {
            let user = &self.m.instructions[u];
            (k == 2 || k == 3)
                && matches!(
                    ScalarOpRow::for_opcode(user.opcode).map(|r| r.op),
                    Some(ScalarOp::Bin(_))
                )
                && !matches!(user.opcode, op::PtrEqual | op::PtrNotEqual)
        };
        (repeated && scalar && !uses.is_empty() && uses.iter().all(operand)).then_some(src)
    }

    /// The promoted variable pointer `ptr` reaches and the registers of what it selects:
    /// the variable itself, or a part through one constant-index access chain (the
    /// registers `promoted_parts` will give the chain).
    fn promoted_registers(&self, ptr: u32) -> Option<(u32, Val)> {
        if let Some(&v) = self.promoted.get(&ptr) {
            return Some((ptr, v));
        }
        let chain = self.m.def(ptr)?;
        if !matches!(chain.opcode, op::AccessChain | op::InBoundsAccessChain) {
            return None;
        }
        let var = chain.word(2)?;
        let base = *self.promoted.get(&var)?;
        let Ok(Ty::Pointer { pointee, .. }) = self.t.get(self.ty_of(var).ok()?) else {
            return None;
        };
        let idx: Vec<u32> = (3..chain.operands.len())
            .map(|k| chain.word(k))
            .collect::<Option<_>>()?;
        let (off, t) = self.constant_path(*pointee, &idx)?;
        let (ncols, nmats) = self.t.shape(t).ok()?;
        Some((
            var,
            Val {
                col: base.col + off,
                mat: base.mat,
                ncols,
                nmats,
            },
        ))
    }

    /// Whether instruction `i` of block `b` copies a matrix value (OpLoad or OpStore of a
    /// promoted variable holding matrices, used whole) whose source is dead after it, so that
    /// the copy may move the source's matrix storage instead (`Op::Move`); the caller checks
    /// that the value named has registers of its own.
    /// - A stored value: its one use is this store, and it is computed earlier in the same
    ///   block (not hoisted out of a loop), so every run of the store follows a run of its
    ///   definition, which writes the storage again.
    /// - A loaded variable: the next instruction of the block after this load that names the
    ///   variable or a pointer into it stores the whole variable, so nothing reads its
    ///   registers before they are written again.
    fn dead_copy_source(
        &self,
        du: &coopmat_spirv::module::DefUse,
        b: &coopmat_spirv::module::Block,
        i: usize,
        hoisted: &licm::Hoisted,
    ) -> Option<DeadSource> {
        let m = self.m;
        let inst = &m.instructions[i];
        let holds_matrices = |var: u32| self.promoted.get(&var).is_some_and(|v| v.nmats > 0);
        match inst.opcode {
            op::Store => {
                let (var, value) = (inst.word(0)?, inst.word(1)?);
                let def = b
                    .body
                    .clone()
                    .take_while(|&j| j < i)
                    .find(|&j| m.instructions[j].result_id == Some(value))?;
                (holds_matrices(var)
                    && self.single_use.get(&value) == Some(&i)
                    && m.instructions[def].opcode != op::Phi
                    && !hoisted.moved.contains(&def))
                .then_some(DeadSource::StoredValue(value))
            }
            op::Load => {
                let (x, var) = (inst.result_id?, inst.word(2)?);
                if !holds_matrices(var) || hoisted.moved.contains(&i) {
                    return None;
                }
                // The variable and the access chains into it (transitively): a promoted
                // variable's pointers are used by nothing else (`Cx::promotable`), checked
                // again here; names and decorations lie outside every function.
                let mut pointers = vec![var];
                let mut k = 0;
                while let Some(&p) = pointers.get(k) {
                    for &(u, n) in du.uses(p) {
                        let ui = &m.instructions[u];
                        match (ui.opcode, n) {
                            (op::AccessChain | op::InBoundsAccessChain, 2) => {
                                pointers.push(ui.result_id?);
                            }
                            (op::Load, 2) | (op::Store, 0) => {}
                            _ if m.owner(u).is_none() => {}
                            _ => return None,
                        }
                    }
                    if pointers.len() > 64 {
                        return None;
                    }
                    k += 1;
                }
                // The next instruction of the block that names any of them stores the whole
                // variable.
                let next = b
                    .body
                    .clone()
                    .filter(|&u| u > i)
                    .find(|&u| m.instructions[u].id_refs().any(|id| pointers.contains(&id)))?;
                let ni = &m.instructions[next];
                (ni.opcode == op::Store && ni.word(0) == Some(var))
                    .then_some(DeadSource::LoadedVariable(x))
            }
            _ => None,
        }
    }

    /// Notes OpStore `inst` (instruction `i`) for store-to-load forwarding and dead stores
    /// within one block (`stored`: per promoted variable, the value of its last whole store,
    /// that store, and whether its registers were read since). A whole store to a variable
    /// whose previous whole store in the block nobody read makes that one dead
    /// (`Cx::dead_stores`: it compiles to nothing): the same lanes run both (one block), and
    /// the second overwrites every register before any read. A load of the variable after a
    /// whole store takes the stored value's registers instead of reading the variable (see the
    /// slot pre-pass), so it reads nothing. Only variables that are loaded and stored whole,
    /// never through an access chain, and hold no matrix: then every read of their registers
    /// is a load of the variable itself, which the pre-pass sees. Returns the variable when
    /// the store was noted.
    fn promoted_store(
        &mut self,
        du: &coopmat_spirv::module::DefUse,
        inst: &coopmat_spirv::Instruction,
        i: usize,
        stored: &mut HashMap<u32, (u32, usize, bool)>,
    ) -> Option<u32> {
        if self.options.observe_uniformity {
            return None;
        }
        let (Some(var), Some(value)) = (inst.word(0), inst.word(1)) else {
            return None;
        };
        // Names and decorations lie outside every function.
        let used_whole = du.uses(var).iter().all(|&(u, k)| {
            self.m.owner(u).is_none()
                || matches!(
                    (self.m.instructions[u].opcode, k),
                    (op::Load, 2) | (op::Store, 0)
                )
        });
        if self.promoted.get(&var).is_none_or(|v| v.nmats != 0) || !used_whole {
            return None;
        }
        if let Some(&(_, earlier, false)) = stored.get(&var) {
            self.dead_stores.insert(earlier);
        }
        stored.insert(var, (value, i, false));
        Some(var)
    }

    /// The registers behind pointer `id` when it is a promoted variable or a constant-index
    /// chain into one.
    fn promoted_ptr(&self, id: u32) -> Option<Val> {
        self.promoted
            .get(&id)
            .or_else(|| self.promoted_parts.get(&id))
            .copied()
    }

    /// Gives Function variable `inst` registers of its pointee type (see [`Cx::promotable`]).
    fn promote(&mut self, inst: &coopmat_spirv::Instruction) -> Result<(), ExecError> {
        let (id, pty) = (inst.result_id.unwrap_or(0), inst.result_type.unwrap_or(0));
        let Ty::Pointer { pointee, .. } = self.t.get(pty)?.clone() else {
            return bad(format!("variable %{id} does not have a pointer type"));
        };
        let v = self.alloc(pointee)?;
        self.promoted.insert(id, v);
        // The pointer itself is never read (no use takes its address): a null column.
        self.pointer_val(id);
        Ok(())
    }

    /// Whether type `id` is a Block or BufferBlock struct (an interface block: one buffer).
    fn is_block(&self, id: u32) -> bool {
        self.m.has_decoration(id, decoration::Block)
            || self.m.has_decoration(id, decoration::BufferBlock)
    }

    /// A one-column register for pointer `id` (a variable's address).
    fn pointer_val(&mut self, id: u32) -> Col {
        let col = self.alloc_cols(1);
        self.vals.insert(
            id,
            Val {
                col,
                mat: Mat(0),
                ncols: 1,
                nmats: 0,
            },
        );
        col
    }

    fn fn_variable(
        &mut self,
        inst: &coopmat_spirv::Instruction,
        out: &mut Vec<Op>,
    ) -> Result<(), ExecError> {
        if inst
            .result_id
            .is_some_and(|id| self.write_only.contains(&id))
        {
            return Ok(());
        }
        if let Some(&d) = inst.result_id.and_then(|id| self.promoted.get(&id)) {
            if let Some(init) = inst.word(3) {
                out.push(Op::Copy(CopyArgs {
                    d,
                    a: self.val(init)?,
                }));
            }
            return Ok(());
        }
        if let Some(init) = inst.word(3) {
            let pty = inst.result_type.unwrap_or(0);
            let Ty::Pointer { pointee, .. } = self.t.get(pty)?.clone() else {
                return Ok(());
            };
            let mut leaves = Vec::new();
            self.t.mem_leaves(pointee, &mut leaves)?;
            out.push(Op::Store(StoreArgs {
                ptr: self.col(inst.result_id.unwrap_or(0))?,
                v: self.val(init)?,
                leaves: leaves.into(),
            }));
        }
        Ok(())
    }

    fn edge(
        &self,
        f: &coopmat_spirv::module::Function,
        from: u32,
        to: u32,
        pos: &HashMap<u32, u32>,
        facts: &EdgeFacts,
    ) -> Result<Edge, ExecError> {
        let m = self.m;
        let target = *pos
            .get(&to)
            .ok_or_else(|| ExecError::invalid(format!("branch to unknown block %{to}")))?;
        let mut phis = Vec::new();
        // The value id of each copy, and every value this edge passes (copied or not).
        let (mut srcs, mut passed) = (Vec::new(), Vec::new());
        if let Some(b) = f.blocks.iter().find(|b| b.id == to) {
            for i in b.body.clone() {
                let inst = &m.instructions[i];
                if inst.opcode != op::Phi {
                    continue;
                }
                let dst = self.val(inst.result_id.unwrap_or(0))?;
                let mut k = 2;
                while k + 1 < inst.operands.len() {
                    if inst.word(k + 1) == Some(from) {
                        let src = inst.word(k).unwrap_or(0);
                        passed.push(src);
                        // A value coalesced with the phi (`coalesce_phis`) needs no copy.
                        if let Ok(v) = self.val(src)
                            && v != dst
                        {
                            phis.push((dst, v));
                            srcs.push(src);
                        }
                    }
                    k += 2;
                }
            }
        }
        // Only matrix slots trade storage (`Edge::movable`), and only of a value this edge
        // passes to one phi (a second would read the storage the first traded away).
        let movable = phis
            .iter()
            .zip(&srcs)
            .map(|(&(_, v), &src)| {
                v.nmats > 0
                    && passed.iter().filter(|&&p| p == src).count() == 1
                    && facts.dead_after(src, to)
            })
            .collect();
        let overlaps = |x: Val, y: Val| {
            let cols = x.ncols > 0
                && y.ncols > 0
                && x.col.ix() < y.col.ix() + y.ncols as usize
                && y.col.ix() < x.col.ix() + x.ncols as usize;
            let mats = x.nmats > 0
                && y.nmats > 0
                && x.mat.ix() < y.mat.ix() + y.nmats as usize
                && y.mat.ix() < x.mat.ix() + x.nmats as usize;
            cols || mats
        };
        let parallel = phis.iter().enumerate().any(|(i, &(d, _))| {
            phis.iter()
                .enumerate()
                .any(|(j, &(_, s))| i != j && overlaps(d, s))
        });
        Ok(Edge {
            target,
            phis,
            parallel,
            movable,
        })
    }

    fn term(
        &mut self,
        f: &coopmat_spirv::module::Function,
        from: u32,
        t: &coopmat_spirv::Instruction,
        pos: &HashMap<u32, u32>,
        facts: &EdgeFacts,
    ) -> Result<Term, ExecError> {
        let w = |i: usize| t.word(i).unwrap_or(0);
        Ok(match t.opcode {
            op::Branch => Term::Branch(self.edge(f, from, w(0), pos, facts)?),
            op::BranchConditional => Term::Cond {
                c: self.col(w(0))?,
                t: self.edge(f, from, w(1), pos, facts)?,
                f: self.edge(f, from, w(2), pos, facts)?,
            },
            op::Switch => {
                let sel = w(0);
                let (num, _) = self.t.comps(self.ty_of(sel)?)?;
                let mut cases = Vec::new();
                let mut k = 2;
                while k + 1 < t.operands.len() {
                    let lit = t
                        .operand_words(k)
                        .iter()
                        .rev()
                        .fold(0u64, |a, &x| (a << 32) | x as u64);
                    cases.push((lit, self.edge(f, from, w(k + 1), pos, facts)?));
                    k += 2;
                }
                Term::Switch {
                    sel: self.col(sel)?,
                    bits: num.bits() as u8,
                    default: self.edge(f, from, w(1), pos, facts)?,
                    cases,
                }
            }
            op::Return => Term::Return(None),
            op::ReturnValue => Term::Return(Some(self.val(w(0))?)),
            op::Kill | op::TerminateInvocation => Term::Kill,
            _ => Term::Unreachable,
        })
    }

    /// Component kind and count of value `id`'s type.
    fn comps_of(&self, id: u32) -> Result<(Num, u32), ExecError> {
        self.t.comps(self.ty_of(id)?)
    }

    fn cm_of(&self, id: u32) -> Option<CmType> {
        self.t.coopmat(id)
    }

    /// Compiles one instruction (in a function or inside OpSpecConstantOp) into ops.
    /// `a` holds the operand words after the result type and result id.
    fn inst(
        &mut self,
        opcode: u16,
        rt: u32,
        rid: u32,
        a: &[u32],
        out: &mut Vec<Op>,
    ) -> Result<(), ExecError> {
        let name = || grammar::instruction(opcode).map(|d| d.name).unwrap_or("?");
        if rid != 0 && (self.aliased.contains(&rid) || self.splats.contains_key(&rid)) {
            return Ok(());
        }
        let d = if rid != 0 {
            self.vals.get(&rid).copied().unwrap_or_default()
        } else {
            Val::default()
        };
        // A result of a type with nothing in registers (a function or image type where a value
        // belongs: only a broken module has one) would be written past the register file.
        let void_ok = matches!(opcode, op::FunctionCall | op::ExtInst)
            && matches!(self.t.get(rt), Ok(Ty::Void));
        if rid != 0 && rt != 0 && d.ncols == 0 && d.nmats == 0 && !void_ok {
            return bad(format!(
                "the result type %{rt} of %{rid} ({}) holds no value the engine can keep",
                name()
            ));
        }
        // Each family compiles the instructions it knows and answers whether it did.
        let families: [Family<'m>; 11] = [
            Cx::matrix_elementwise_inst,
            Cx::scalar_op_inst,
            Cx::control_inst,
            Cx::composite_inst,
            Cx::memory_inst,
            Cx::arith_inst,
            Cx::glsl_inst,
            Cx::atomic_inst,
            Cx::subgroup_inst,
            Cx::coopmat_inst,
            Cx::coopvec_inst,
        ];
        let inst = Inst {
            opcode,
            rt,
            rid,
            d,
            a,
        };
        let before = out.len();
        for family in families {
            if family(self, &inst, out)? {
                // No op writes more columns than its result has (a malformed module could
                // otherwise make one write past the register file).
                for o in &out[before..] {
                    if let Some((c, n)) = o.result_cols()
                        && rid != 0
                        && c == d.col
                        && n > d.ncols
                    {
                        return bad(format!(
                            "%{rid} ({}) would write {n} components into a value of {}",
                            name(),
                            d.ncols
                        ));
                    }
                }
                return Ok(());
            }
        }
        if coop2::handles(opcode) {
            return self.coop2_inst(opcode, rt, d, a, out);
        }
        unsupported(format!("{} is not supported by the engine", name()))
    }
}

/// When instruction `i` is an OpLoad whose value only one OpStore uses, as its Object (a
/// staging copy, `Cx::fuse_staging_copy`): that store's instruction index.
fn store_of_copy(m: &Module, du: &coopmat_spirv::module::DefUse, i: usize) -> Option<usize> {
    let inst = &m.instructions[i];
    if inst.opcode != op::Load {
        return None;
    }
    // Operand 1 of OpStore is its Object.
    match du.uses(inst.result_id?) {
        [(u, 1)] if m.instructions[*u].opcode == op::Store => Some(*u),
        _ => None,
    }
}

/// The MulAdd that reads instruction `i`'s result as its C, when `i` is a cooperative-matrix
/// MulAdd of the same opcode whose result nothing else reads and that MulAdd comes later (the
/// caller checks that it is in the same block): the two may run as one chain
/// ([`ChainFirst`]).
fn chained_muladd(m: &Module, du: &coopmat_spirv::module::DefUse, i: usize) -> Option<usize> {
    let inst = &m.instructions[i];
    if !matches!(
        inst.opcode,
        op::CooperativeMatrixMulAddKHR | op::CooperativeMatrixMulAddNV
    ) {
        return None;
    }
    // Operand 4 (after the result type, the result id, A and B) is C, for both opcodes.
    match du.uses(inst.result_id?) {
        [(u, 4)] if *u > i && m.instructions[*u].opcode == inst.opcode => Some(*u),
        _ => None,
    }
}

/// Whether cooperative-matrix load `i` may be left in memory until its MulAdds run
/// ([`CmLoadArgs::lazy`]): every use of its result is as the A or B of a MulAdd later in
/// `body` (its block), and nothing from the load to the last of them (or the MulAdd a chained
/// one runs at, `chained_muladd`) can write memory or read the value any other way. The
/// MulAdds then see the bytes the load would have read.
fn lazy_tile_load(
    m: &Module,
    du: &coopmat_spirv::module::DefUse,
    i: usize,
    body: &std::ops::Range<usize>,
) -> bool {
    let inst = &m.instructions[i];
    if !matches!(
        inst.opcode,
        op::CooperativeMatrixLoadKHR | op::CooperativeMatrixLoadNV
    ) {
        return false;
    }
    let Some(rid) = inst.result_id else {
        return false;
    };
    let uses = du.uses(rid);
    let is_muladd = |u: usize| {
        matches!(
            m.instructions[u].opcode,
            op::CooperativeMatrixMulAddKHR | op::CooperativeMatrixMulAddNV
        )
    };
    // Operands 2 and 3 (after the result type and id) are A and B, for both opcodes.
    if uses.is_empty()
        || !uses
            .iter()
            .all(|&(u, k)| u > i && body.contains(&u) && is_muladd(u) && (k == 2 || k == 3))
    {
        return false;
    }
    let end = uses
        .iter()
        .map(|&(u, _)| {
            chained_muladd(m, du, u)
                .filter(|s| body.contains(s))
                .unwrap_or(u)
        })
        .max()
        .unwrap_or(i);
    // Instructions that write no memory: loads, address and integer arithmetic, matrix
    // loads and MulAdds (anything else, a store, an atomic, a barrier or a call, ends it).
    (i + 1..=end).all(|u| {
        matches!(
            m.instructions[u].opcode,
            op::CooperativeMatrixLoadKHR
                | op::CooperativeMatrixLoadNV
                | op::CooperativeMatrixMulAddKHR
                | op::CooperativeMatrixMulAddNV
                | op::CooperativeMatrixLengthKHR
                | op::Load
                | op::AccessChain
                | op::InBoundsAccessChain
                | op::PtrAccessChain
                | op::IAdd
                | op::ISub
                | op::IMul
                | op::UDiv
                | op::UMod
                | op::ShiftLeftLogical
                | op::ShiftRightLogical
                | op::BitwiseAnd
                | op::BitwiseOr
                | op::Bitcast
                | op::CompositeExtract
                | op::CompositeConstruct
        )
    })
}

/// The functions of `order` that name a Private variable, themselves or through the functions
/// they call. Every access to a Private variable starts from its OpVariable id in some function
/// (parameters of functions the engine calls are values, and Logical addressing cannot store a
/// pointer to Private memory), so the others never see Private memory.
fn private_users(m: &Module, du: &coopmat_spirv::module::DefUse, order: &[u32]) -> HashSet<u32> {
    let mut users: HashSet<u32> = HashSet::new();
    for v in m.find(op::Variable) {
        let inst = &m.instructions[v];
        if m.owner(v).is_none() && inst.word(2) == Some(storage_class::Private) {
            for &(u, _) in du.uses(inst.result_id.unwrap_or(0)) {
                users.extend(m.owner(u));
            }
        }
    }
    let callees = |f: u32| -> Vec<u32> {
        m.function(f)
            .map(|f| {
                f.blocks
                    .iter()
                    .flat_map(|b| b.body.clone())
                    .filter(|&i| m.instructions[i].opcode == op::FunctionCall)
                    .filter_map(|i| m.instructions[i].word(2))
                    .collect()
            })
            .unwrap_or_default()
    };
    let calls: Vec<(u32, Vec<u32>)> = order.iter().map(|&f| (f, callees(f))).collect();
    loop {
        let before = users.len();
        for (f, cs) in &calls {
            if cs.iter().any(|c| users.contains(c)) {
                users.insert(*f);
            }
        }
        if users.len() == before {
            return users;
        }
    }
}

/// Where an access chain leads inside a value ([`Cx::access_path`]).
pub(super) struct AccessPath {
    /// Registers the constant indices skip.
    pub(super) off: u32,
    /// Per computed index: its id, the registers an element takes, the elements (none for a
    /// chain of constants).
    pub(super) steps: Vec<(u32, u32, u32)>,
    /// The type of the part selected.
    pub(super) part: u32,
}
