//! SIMT execution: one workgroup is one batch of lanes under an active mask.
//!
//! Control flow: every function call keeps a pending mask per block (blocks are in structured
//! order, see `compile::Cx::function`). The lowest block with pending lanes runs next with all
//! of them; branches add lanes to their targets' pending masks. Lanes that split at a header
//! therefore meet again at its merge block, loops iterate until every lane has left, and
//! lanes that returned wait until the call is over.

use crate::eval::{self, ColumnOp, MW, Mask, bin1, cvt1, each_lane, un1};
use crate::floats::{self, sext, trunc};
use crate::kernels::{self, AddressSummary};
use crate::memory::{self, Mem, MemErr, ObjInfo};
use crate::program::*;
use crate::{BoundResources, BufferView, DispatchStats, ErrorKind, ExecError, Resources, fail};
use coopmat_spirv::grammar::{built_in, cooperative_matrix_operands as cmo};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::time::Instant;

mod coop;
mod coop2;
mod coopvec;
mod profile;
mod subgroup;
mod tensor_values;
mod tiles;

/// The Fx hash of `v` (the engine's own keys: small integers, handles and addresses, no
/// adversary), for tables that store a hash instead of the key.
fn fx_hash<T: std::hash::Hash + ?Sized>(v: &T) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(v)
}

/// The raw bits of an element of type `num` held as `v` in the f32 arena (what
/// [`Batch::mat_get`] reads).
#[inline(always)]
fn arena_bits(num: Num, v: f32) -> u64 {
    match num {
        Num::F32 => v.to_bits() as u64,
        // f32 -> f64 is exact, so one rounding either way (`floats` tests).
        Num::F16 if !v.is_nan() => floats::f32_to_f16(v) as u64,
        _ => floats::from_f64(num, v as f64),
    }
}

/// A scalar's register value from the `num.bytes()` bytes memory holds for it: a Bool is 0 or 1.
fn leaf_value(num: Num, raw: u64) -> u64 {
    if num == Num::Bool {
        (raw != 0) as u64
    } else {
        raw
    }
}

/// The f32 an f32-arena tile of `num` elements holds for the element bits `raw`
/// ([`Batch::mat_set`]).
fn arena_value(num: Num, raw: u64) -> f32 {
    match num {
        Num::F32 => arena_f32(raw),
        // Not a NaN: the table's value is the exact one the f64 path gives.
        Num::F16 if !floats::f16_is_nan(raw as u16) => floats::f16_to_f32(raw as u16),
        _ => floats::to_f64(num, raw) as f32,
    }
}

/// How f32 bits `raw` are kept in the f32 arena: as they are, but a NaN through f64 (which
/// quiets a signaling one, as every other kind's f64 round trip does).
fn arena_f32(raw: u64) -> f32 {
    let v = f32::from_bits(raw as u32);
    if v.is_nan() {
        floats::to_f64(Num::F32, raw) as f32
    } else {
        v
    }
}

/// A failure inside one op: what, and the lane if it is lane-specific.
struct Fault {
    kind: ErrorKind,
    what: String,
    lane: Option<usize>,
}

impl From<MemErr> for Fault {
    fn from(e: MemErr) -> Fault {
        Fault {
            kind: e.kind,
            what: e.to_string(),
            lane: None,
        }
    }
}

fn fault<T>(kind: ErrorKind, what: impl Into<String>) -> Result<T, Fault> {
    Err(Fault {
        kind,
        what: what.into(),
        lane: None,
    })
}

// ---------------------------------------------------------------------------------------------
// Batches.

/// A worker's end: done (its counters added to the dispatch's), or the first error with its
/// workgroup index.
type ChunkResult = Result<(), (u64, ExecError)>;

/// Scope instances with an active lane: (instance, first active lane), found lazily (no
/// per-call array to fill: this runs once per MulAdd and cooperative load/store).
struct Insts<'m> {
    mask: &'m Mask,
    scope: usize,
    lanes: usize,
    i: usize,
    n: usize,
}

impl Iterator for Insts<'_> {
    type Item = (usize, usize);
    fn next(&mut self) -> Option<(usize, usize)> {
        while self.i < self.n {
            let i = self.i;
            self.i += 1;
            let lo = i * self.scope;
            let hi = ((i + 1) * self.scope).min(self.lanes);
            if let Some(l) = (lo..hi).find(|&l| self.mask[l / 64] >> (l % 64) & 1 != 0) {
                return Some((i, l));
            }
        }
        None
    }
}

/// Everything shared by the batches of one dispatch.
struct Shared<'a> {
    objs: Vec<ObjInfo>,
    /// Objects reachable by device address only (index FIRST_ADDRESSABLE_OBJECT + i).
    addressable: Vec<ObjInfo>,
    words: Vec<&'a [AtomicU32]>,
    binding_obj: std::collections::HashMap<(u32, u32), u32>,
    push_obj: u32,
    local_base: u32,
    groups: [u32; 3],
    /// Buffers bound to each descriptor array.
    array_len: std::collections::HashMap<(u32, u32), u32>,
    /// The dispatch's decoded tiles, where decode results may be reused.
    tiles: Option<std::sync::Arc<tiles::TileCache>>,
}

/// One workgroup's worth of state; reused for the workgroups a worker runs.
struct Batch<'p, 'a> {
    p: &'p Program,
    lanes: usize,
    full: Mask,
    /// The lanes that may run in this batch: its workgroups' invocations (fewer than `full`
    /// when a batch packs fewer workgroups than it has room for) or an engine call's elements.
    live: Mask,
    exited: Mask,
    cols: Vec<u64>,
    mf: crate::program::F32Arena,
    mw: Vec<u64>,
    /// Arena offset of each matrix slot's storage (initially the program's; see `slot`).
    mat_off: Vec<usize>,
    mem: Mem<'a>,
    pending: Vec<Vec<Mask>>,
    /// The workgroups of the current batch (more than one when the program packs them).
    pack_wgs: Vec<[u32; 3]>,
    groups: [u32; 3],
    lane_instr: u64,
    /// `lane_instr` when the current workgroup started (the budget is per workgroup).
    group_start: u64,
    instr: u64,
    flops: u64,
    /// Lanes that took the first lane's result of an [`Op::Once`] instead of computing it.
    uniform_copies: u64,
    /// MulAdds run as the first half of a chain (`DispatchStats::chained_muladds`).
    chained: u64,
    /// Tiles MulAdds read in place (`DispatchStats::tiles_in_place`).
    in_place: u64,
    /// Result rows copied from the row above (`DispatchStats::repeated_rows`).
    repeated_rows: u64,
    /// Matrix slots that took their source's storage instead of a copy
    /// (`DispatchStats::matrix_moves`).
    moved: u64,
    /// Batches built on spare storage (`DispatchStats::batches_reused`): this one's and its
    /// sub-batch's.
    reused: u64,
    printf: String,
    /// Batch that runs functions the engine calls itself (decode functions), made on first use.
    sub: Option<Box<Batch<'p, 'a>>>,
    /// Time in decode calls and MulAdds (coop2 statistics).
    t_decode: std::time::Duration,
    /// Op times, with `EngineOptions::profile_ops`.
    profile: Option<Box<profile::OpProfile>>,
    t_muladd: std::time::Duration,
    /// Tensor-load element sources by offset-free layout (coop2).
    src_cache: coop2::SourceCache,
    /// Cooperative-vector matrices decoded for products (fixed for a dispatch).
    cv_cache: coopvec::MatrixCache,
    /// Buffers bound to each descriptor array.
    array_len: std::collections::HashMap<(u32, u32), u32>,
    /// The dispatch's decoded tiles (see `tiles`).
    tiles: Option<std::sync::Arc<tiles::TileCache>>,
    /// While a sub-batch runs a decode whose results may be kept: the objects its loads read.
    reads: Option<Vec<u64>>,
    /// The description of the instruction that faulted, when not the op's own (the load of an
    /// [`Op::LoadStore`]).
    fault_desc: Option<u32>,
    /// The Workgroup words the last decoded tile kept, per local object (shared with the next
    /// tile when they have not changed).
    tile_words: Vec<(usize, std::sync::Arc<[u32]>)>,
    /// Scratch values of whole-tile element ops (reused between ops).
    scratch_f32: Vec<f32>,
    /// Scratch columns of element folds (reused between ops).
    scratch_cols: Vec<u64>,
    /// Argument columns of per-element calls (reused between ops).
    element_args: Vec<Vec<u64>>,
    /// The tensor layout and view values the registers' handles name (`tensor_values`).
    layouts: tensor_values::Interned,
    views: tensor_values::Interned,
    /// The tables are the caller's, lent for an engine call: nothing may be collected.
    values_lent: bool,
    /// Whether the built-ins that do not depend on the workgroup (local ids, subgroup values,
    /// sizes, `NumWorkgroups`) are in this batch's Input objects for every lane: written by the
    /// first `run_group`, kept by the later ones (nothing else writes Input memory).
    lane_builtins_set: bool,
    /// [`Op::Once`] runs its op in every lane: a caller of [`Pipeline::call_function`] passed
    /// differing values for a parameter the function was compiled to take as one per call.
    once_off: bool,
    /// Per staging copy ([`LoadStoreArgs::slot`]): the lane shape it found the last time it
    /// ran (`copy_words`).
    copy_shapes: Vec<CopyShape>,
    /// Per instance of each slot lazy loads write ([`Program::lazy_base`]): where the last
    /// lazy load left its f16 tile in Workgroup memory (the object an index into `Mem::local`),
    /// or None when it widened the tile into the slot as any load does.
    lazy_tiles: Vec<Option<kernels::HalfTile>>,
}

impl Drop for Batch<'_, '_> {
    /// The batch's big buffers go back to its program for the next dispatch.
    fn drop(&mut self) {
        // The storage goes back with its constants marked set: check that none was written
        // (in the crate's own tests and debug builds; it reads every constant column).
        if cfg!(any(debug_assertions, test)) {
            assert!(self.p.const_cols.iter().all(|&(c, v)| {
                let lanes = self.lanes;
                self.cols.len() < (c.ix() + 1) * lanes
                    || self.cols[c.ix() * lanes..(c.ix() + 1) * lanes]
                        .iter()
                        .all(|&x| x == v)
            }));
        }
        self.p.spare.put(crate::program::BatchStorage {
            lanes: self.lanes,
            cols: std::mem::take(&mut self.cols),
            mf: std::mem::take(&mut self.mf),
            mw: std::mem::take(&mut self.mw),
            local: std::mem::take(&mut self.mem.local),
            consts_set: true,
        });
    }
}

impl<'p, 'a> Batch<'p, 'a> {
    /// Adds this batch's counters to `stats` and zeroes them (a worker's share of a
    /// dispatch's [`DispatchStats`]).
    fn add_counters(&mut self, stats: &mut DispatchStats) {
        use std::mem::take;
        stats.lane_instructions += take(&mut self.lane_instr);
        stats.instructions += take(&mut self.instr);
        stats.muladd_flops += take(&mut self.flops);
        stats.uniform_copies += take(&mut self.uniform_copies);
        stats.chained_muladds += take(&mut self.chained);
        stats.tiles_in_place += take(&mut self.in_place);
        stats.repeated_rows += take(&mut self.repeated_rows);
        stats.matrix_moves += take(&mut self.moved);
        stats.batches_reused += take(&mut self.reused);
        stats.decode_time += take(&mut self.t_decode);
        stats.muladd_time += take(&mut self.t_muladd);
        if let Some(prof) = &mut self.profile {
            prof.drain_into(self.p, &mut stats.op_times);
        }
    }

    fn new(p: &'p Program, sh: &Shared<'a>, lanes: usize) -> Batch<'p, 'a> {
        let mut full = [0u64; MW];
        for l in 0..lanes {
            full[l / 64] |= 1 << (l % 64);
        }
        // An earlier dispatch's storage as it was left: every register and matrix slot is
        // written before it is read in a workgroup (a batch runs workgroup after workgroup
        // on the same storage), except constants (set below on fresh storage; nothing writes
        // them), globals' pointers (set below) and local memory, which `run_group` clears.
        // Storage of this program's batches of `lanes` lanes has the sizes a fresh one would
        // (none is resized).
        let spare = p.spare.take(lanes);
        let reused = spare.is_some() as u64;
        let local_bytes = |l: &LocalDef| {
            let per = l.bytes.next_multiple_of(8) as usize;
            if l.per_lane { per * lanes } else { per }
        };
        let (mut cols, mf, mw, local, consts_set) = match spare {
            Some(s) => (s.cols, s.mf, s.mw, s.local, s.consts_set),
            None => (
                vec![0u64; p.ncols * lanes],
                crate::program::F32Arena::zeroed(p.mf_len),
                vec![0; p.mw_len],
                p.locals
                    .iter()
                    .map(|l| memory::zeroed(local_bytes(l)))
                    .collect(),
                false,
            ),
        };
        debug_assert!(
            cols.len() == p.ncols * lanes
                && mf.len() == p.mf_len
                && mw.len() == p.mw_len
                && local
                    .iter()
                    .zip(&p.locals)
                    .all(|(w, l)| w.len() == local_bytes(l).div_ceil(4))
        );
        // A sub-batch of 1024 lanes spent 34 µs here for every dispatch of flash attention
        // (1.35 % of it) when the constants were filled again on reused storage.
        if !consts_set {
            for &(c, v) in &p.const_cols {
                kernels::fill_column(&mut cols[c.ix() * lanes..(c.ix() + 1) * lanes], v);
            }
        }
        for &(c, a) in &p.var_cols {
            let obj = match a {
                VarAddr::Binding(s, b) => sh.binding_obj.get(&(s, b)).copied().unwrap_or(0),
                VarAddr::Push => sh.push_obj,
                VarAddr::Local(i) => sh.local_base + i,
            };
            let col = &mut cols[c.ix() * lanes..(c.ix() + 1) * lanes];
            col.fill(memory::object_base(obj));
            // A Workgroup variable of a batch that packs workgroups: workgroup k's lanes
            // (after the first workgroup's) address its own copy.
            if let VarAddr::Local(i) = a
                && let Some(&(_, first)) = p.workgroup_copies.iter().find(|&&(v, _)| v == i)
            {
                let gl = p.group_lanes as usize;
                for (k, lanes_k) in col.chunks_mut(gl).enumerate().skip(1) {
                    let copy = sh.local_base + first + k as u32 - 1;
                    lanes_k.fill(memory::object_base(copy));
                }
            }
        }
        let mut b = Batch {
            p,
            lanes,
            full,
            live: full,
            exited: [0; MW],
            cols,
            mf,
            mw,
            mat_off: p.mats.iter().map(|s| s.off).collect(),
            mem: Mem {
                objs: sh.objs.clone(),
                addressable: sh.addressable.clone(),
                shared: sh.words.clone(),
                local,
            },
            pending: p
                .funcs
                .iter()
                .map(|f| vec![[0u64; MW]; f.blocks.len()])
                .collect(),
            pack_wgs: Vec::new(),
            groups: sh.groups,
            lane_instr: 0,
            group_start: 0,
            instr: 0,
            flops: 0,
            uniform_copies: 0,
            chained: 0,
            in_place: 0,
            repeated_rows: 0,
            moved: 0,
            reused,
            printf: String::new(),
            sub: None,
            t_decode: std::time::Duration::ZERO,
            profile: p.options.profile_ops.then(Box::default),
            t_muladd: std::time::Duration::ZERO,
            src_cache: Default::default(),
            cv_cache: Default::default(),
            array_len: sh.array_len.clone(),
            tiles: sh.tiles.clone(),
            reads: None,
            fault_desc: None,
            tile_words: Vec::new(),
            scratch_f32: Vec::new(),
            scratch_cols: Vec::new(),
            element_args: Vec::new(),
            layouts: tensor_values::Interned::new(tensor_values::Tensor::Layout.words()),
            views: tensor_values::Interned::new(tensor_values::Tensor::View.words()),
            values_lent: false,
            lane_builtins_set: false,
            once_off: false,
            copy_shapes: (0..p.copy_slots).map(|_| CopyShape::default()).collect(),
            lazy_tiles: vec![None; p.lazy_records as usize],
        };
        for &(m, v) in &p.const_mats {
            b.fill_mat(m, v);
        }
        b
    }

    /// Where matrix slot `m` lives now: its type from the program, its storage from
    /// `mat_off` (slots trade storage on edges that move dead values into phis).
    #[inline(always)]
    fn slot(&self, m: Mat) -> MatSlot {
        MatSlot {
            off: self.mat_off[m.ix()],
            ..self.p.mats[m.ix()]
        }
    }

    /// Lane `l`'s component index of an element access to a matrix of slot `s`: a dynamic
    /// index must be below the matrix's Length (`ceil(M·N / scope)`), as an access chain into
    /// the Function variable holding it would have to stay inside the variable.
    /// `length`: the matrix's per-invocation Length ([`mat_length`]), computed once per op.
    fn elem_index(&self, idx: ElemIndex, l: usize, length: u64) -> Result<usize, Fault> {
        match idx {
            ElemIndex::Literal(i) => Ok(i as usize),
            ElemIndex::Dynamic(c) => {
                let i = self.cols[c.ix() * self.lanes + l];
                if i < length {
                    Ok(i as usize)
                } else {
                    Err(Fault {
                        kind: ErrorKind::OutOfBounds,
                        what: format!(
                            "element {i} of a cooperative matrix of Length {length} (an access chain past the end of the Function variable holding it)"
                        ),
                        lane: Some(l),
                    })
                }
            }
        }
    }

    fn fill_mat(&mut self, m: Mat, raw: u64) {
        let s = self.slot(m);
        let len = s.inst as usize * s.cm.elems();
        if s.cm.is_f32_arena() {
            let v = floats::to_f64(s.cm.num, raw) as f32;
            self.mf[s.off..s.off + len].fill(v);
        } else {
            self.mw[s.off..s.off + len].fill(raw);
        }
    }

    /// Runs workgroups `wgs` (one to `Program::pack` of them) as one batch: workgroup k takes
    /// lanes `k·group_lanes..`.
    fn run_group(&mut self, wgs: impl IntoIterator<Item = [u32; 3]>) -> Result<(), ExecError> {
        let p = self.p;
        self.pack_wgs.clear();
        self.pack_wgs.extend(wgs);
        let gl = p.group_lanes as usize;
        let live = (self.pack_wgs.len() * gl).min(self.lanes);
        let mut entry = [0u64; MW];
        for l in 0..live {
            entry[l / 64] |= 1 << (l % 64);
        }
        self.live = entry;
        self.exited = [0; MW];
        self.group_start = self.lane_instr;
        // Fresh Workgroup and per-lane memory (and the registers of promoted Function
        // variables), built-ins.
        for v in &p.promoted {
            self.cols[v.col.ix() * self.lanes..(v.col.ix() + v.ncols as usize) * self.lanes]
                .fill(0);
            for k in 0..v.nmats {
                self.fill_mat(v.mat + k, 0);
            }
        }
        // No register or memory word holds a handle of the last workgroup's values now.
        self.layouts.clear();
        self.views.clear();
        // The batch owns its local objects here: plain stores, which vectorize (one atomic
        // store per word was a visible share of small dispatches).
        for (i, words) in self.mem.local.iter_mut().take(p.locals.len()).enumerate() {
            if p.builtin_locals.contains(&(i as u32)) {
                continue;
            }
            for w in words.iter_mut() {
                *w.get_mut() = 0;
            }
        }
        let ls = p.local_size;
        let sg = p.sg as usize;
        let first = !self.lane_builtins_set;
        for bf in &p.builtins {
            // The workgroup's own built-ins for its live lanes; the others once, for every lane
            // the batch may ever run (a later batch may fill more of them).
            let per_workgroup = matches!(
                bf.builtin,
                built_in::GlobalInvocationId | built_in::WorkgroupId
            );
            let lanes = match (per_workgroup, first) {
                (true, _) => live,
                (false, true) => self.lanes,
                (false, false) => continue,
            };
            let per = p.locals[bf.local as usize].bytes.next_multiple_of(8) as usize;
            let words = &self.mem.local[bf.local as usize];
            for lane in 0..lanes {
                // The lane's workgroup (read only by the per-workgroup built-ins, which only
                // live lanes take) and its index within it.
                let wg = self.pack_wgs.get(lane / gl).copied().unwrap_or_default();
                let l = lane % gl;
                let lid = [
                    l as u32 % ls[0],
                    (l as u32 / ls[0]) % ls[1],
                    l as u32 / (ls[0] * ls[1]),
                ];
                let v3 = |f: &dyn Fn(usize) -> u32| [f(0), f(1), f(2), 0];
                let nsg = gl.div_ceil(sg) as u32;
                let li = (l % sg) as u32;
                let mask_of = |pred: &dyn Fn(u32) -> bool| {
                    let mut m = [0u32; 4];
                    for k in 0..sg as u32 {
                        if pred(k) {
                            m[(k / 32) as usize] |= 1 << (k % 32);
                        }
                    }
                    m
                };
                let vals: [u32; 4] = match bf.builtin {
                    built_in::GlobalInvocationId => v3(&|k| wg[k] * ls[k] + lid[k]),
                    built_in::LocalInvocationId => v3(&|k| lid[k]),
                    built_in::WorkgroupId => v3(&|k| wg[k]),
                    built_in::NumWorkgroups => v3(&|k| self.groups[k]),
                    built_in::WorkgroupSize | built_in::EnqueuedWorkgroupSize => v3(&|k| ls[k]),
                    built_in::LocalInvocationIndex => [l as u32, 0, 0, 0],
                    built_in::SubgroupId => [(l / sg) as u32, 0, 0, 0],
                    built_in::SubgroupLocalInvocationId => [li, 0, 0, 0],
                    built_in::SubgroupSize | built_in::SubgroupMaxSize => [sg as u32, 0, 0, 0],
                    built_in::NumSubgroups => [nsg, 0, 0, 0],
                    built_in::SubgroupEqMask => mask_of(&|k| k == li),
                    built_in::SubgroupGeMask => mask_of(&|k| k >= li),
                    built_in::SubgroupGtMask => mask_of(&|k| k > li),
                    built_in::SubgroupLeMask => mask_of(&|k| k <= li),
                    built_in::SubgroupLtMask => mask_of(&|k| k < li),
                    _ => [0; 4],
                };
                for (k, &v) in vals.iter().enumerate() {
                    let off = per * lane + bf.off as usize + k * bf.comp_bytes as usize;
                    if off + bf.comp_bytes as usize <= per * (lane + 1) {
                        memory::write_bytes(words, off, bf.comp_bytes, v as u64, false);
                    }
                }
            }
        }
        self.lane_builtins_set = true;
        let dense = entry == self.full;
        for (o, d) in &p.private_init {
            self.op(o, &entry, dense)
                .map_err(|f| self.place(f, *d, 0))?;
        }
        self.call(p.entry as usize, entry)?;
        if !self.printf.is_empty() {
            print!("{}", self.printf);
            self.printf.clear();
        }
        Ok(())
    }

    fn place(&self, f: Fault, desc: u32, func: usize) -> ExecError {
        let p = self.p;
        let gl = p.group_lanes as usize;
        // The failing lane's workgroup; without a lane, the batch's first (all of them are
        // named if packed).
        let wg = f
            .lane
            .and_then(|l| self.pack_wgs.get(l / gl))
            .or(self.pack_wgs.first())
            .copied()
            .unwrap_or_default();
        let mut place = format!(
            "{} in function {}, workgroup ({}, {}, {})",
            p.descs
                .get(desc as usize)
                .map(String::as_str)
                .unwrap_or("?"),
            p.funcs.get(func).map(|f| f.name.as_str()).unwrap_or("?"),
            wg[0],
            wg[1],
            wg[2]
        );
        if f.lane.is_none() && self.pack_wgs.len() > 1 {
            place += &format!(
                " (run together with the next {} workgroups)",
                self.pack_wgs.len() - 1
            );
        }
        if let Some(l) = f.lane.map(|l| l % gl) {
            let ls = p.local_size;
            place += &format!(
                ", local invocation ({}, {}, {})",
                l as u32 % ls[0],
                (l as u32 / ls[0]) % ls[1],
                l as u32 / (ls[0] * ls[1])
            );
        }
        ExecError {
            kind: f.kind,
            what: f.what,
            place,
        }
    }

    fn call(&mut self, fi: usize, mask: Mask) -> Result<(), ExecError> {
        let p = self.p;
        let f = &p.funcs[fi];
        let nb = f.blocks.len();
        for m in self.pending[fi].iter_mut() {
            *m = [0; MW];
        }
        if nb == 0 {
            return Ok(());
        }
        self.pending[fi][0] = mask;
        let budget = p.options.instruction_budget;
        let nw = self.mask_words();
        let mut cur = 0usize;
        loop {
            while cur < nb && self.pending[fi][cur][..nw].iter().all(|&w| w == 0) {
                cur += 1;
            }
            if cur >= nb {
                break;
            }
            let mut active = std::mem::replace(&mut self.pending[fi][cur], [0; MW]);
            for (a, e) in active[..nw].iter_mut().zip(&self.exited) {
                *a &= !e;
            }
            let count: u32 = active[..nw].iter().map(|w| w.count_ones()).sum();
            if count == 0 {
                continue;
            }
            let dense = active[..nw] == self.full[..nw];
            let block = &f.blocks[cur];
            self.instr += block.ops.len() as u64 + 1;
            self.lane_instr += (block.ops.len() as u64 + 1) * count as u64;
            // The budget is per workgroup: a packed batch has that of each of its workgroups.
            let batch_budget = budget.saturating_mul(self.pack_wgs.len().max(1) as u64);
            if budget != 0 && self.lane_instr - self.group_start > batch_budget {
                return Err(self.place(
                    Fault {
                        kind: ErrorKind::Budget,
                        what: format!("instruction budget of {budget} lane-instructions exceeded"),
                        lane: None,
                    },
                    block.term.1,
                    fi,
                ));
            }
            // MulAdd time is taken per run of consecutive MulAdds: a clock read per tile costs
            // about 7 % of a GEMM.
            let mut mm_start: Option<Instant> = None;
            for (o, d) in &block.ops {
                let is_mm = match o {
                    Op::CmMulAdd(CmMulAddArgs { .. }) | Op::CmMulAddSharedA(_) => true,
                    Op::CoopVec(c) => matches!(**c, Cv::MatMul(_)),
                    _ => false,
                };
                if is_mm && mm_start.is_none() {
                    mm_start = Some(Instant::now());
                } else if !is_mm && let Some(t0) = mm_start.take() {
                    self.t_muladd += t0.elapsed();
                }
                let t0 = self.profile.as_mut().map(|prof| prof.enter());
                let done = self.op(o, &active, dense);
                if let (Some(t0), Some(prof)) = (t0, &mut self.profile) {
                    prof.exit(t0, fi, o.kind(), *d);
                }
                if let Err(e) = done {
                    let desc = self.fault_desc.take().unwrap_or(*d);
                    return Err(self.place(e, desc, fi));
                }
                if self.p.options.observe_uniformity {
                    self.observe(o, *d, &active);
                }
                if let Op::Call(CallArgs { .. }) = o {
                    // A callee may have terminated lanes.
                    for (a, e) in active.iter_mut().zip(&self.exited) {
                        *a &= !e;
                    }
                }
            }
            if let Some(t0) = mm_start {
                self.t_muladd += t0.elapsed();
            }
            let mut next = cur;
            let mut go = |b: &mut Self, e: &Edge, m: &Mask| {
                if m[..nw].iter().all(|&w| w == 0) {
                    return;
                }
                let dense = m[..nw] == b.full[..nw];
                // Every lane that may still run takes the edge: no lane can read the phi's
                // old tiles or the incoming value's after it, so the tiles may move.
                let everyone = b.all_that_run(m, dense);
                if e.parallel {
                    b.copy_parallel(&e.phis, m, dense);
                } else {
                    for (&(dst, src), &movable) in e.phis.iter().zip(&e.movable) {
                        if movable && everyone && dst.nmats == src.nmats && src.nmats > 0 {
                            // Every lane leaves the incoming value behind: its tiles become
                            // the phi's without a copy.
                            b.copy_val(Val { nmats: 0, ..dst }, Val { nmats: 0, ..src }, m, dense);
                            for k in 0..dst.nmats {
                                b.mat_off.swap((dst.mat + k).ix(), (src.mat + k).ix());
                            }
                        } else {
                            b.copy_val(dst, src, m, dense);
                        }
                    }
                }
                let t = &mut b.pending[fi][e.target as usize];
                for k in 0..nw {
                    t[k] |= m[k];
                }
                next = next.min(e.target as usize);
            };
            match &block.term.0 {
                Term::Branch(e) => go(self, e, &active),
                Term::Cond { c, t, f: fe } => {
                    let base = c.ix() * self.lanes;
                    let mt = nonzero_lanes(&self.cols[base..base + self.lanes], &active);
                    let mf: Mask = std::array::from_fn(|k| active[k] & !mt[k]);
                    // Phis read values before any of the edges writes (parallel copies).
                    go(self, t, &mt);
                    go(self, fe, &mf);
                }
                Term::Switch {
                    sel,
                    bits,
                    default,
                    cases,
                } => {
                    if cases.is_empty() {
                        // OpSwitch with only a default (glslang emits them for `do {} while
                        // (false)` blocks): every active lane takes it.
                        go(self, default, &active);
                        cur = next;
                        continue;
                    }
                    let base = sel.ix() * self.lanes;
                    let bits = *bits as u32;
                    let case_of = |v: u64| {
                        cases
                            .iter()
                            .position(|(lit, _)| trunc(*lit, bits) == v)
                            .unwrap_or(cases.len())
                    };
                    let mut masks = vec![[0u64; MW]; cases.len() + 1];
                    // A selector every active lane shares (llama.cpp's generic quant decode
                    // switches on the type, in sub-batches of 1024 lanes): one case search for
                    // all of them, the differences of the lanes OR-ed in one pass.
                    let first =
                        eval::first_active(&active).map(|l| trunc(self.cols[base + l], bits));
                    let shared = first.filter(|&v0| {
                        let mut diff = 0u64;
                        each_lane!(active, self.lanes, dense, |l| {
                            diff |= self.cols[base + l] ^ v0;
                        });
                        trunc(diff, bits) == 0
                    });
                    if let Some(v0) = shared {
                        masks[case_of(v0)] = active;
                    } else {
                        each_lane!(active, self.lanes, false, |l| {
                            let k = case_of(trunc(self.cols[base + l], bits));
                            masks[k][l / 64] |= 1 << (l % 64);
                        });
                    }
                    for (k, (_, e)) in cases.iter().enumerate() {
                        go(self, e, &masks[k]);
                    }
                    go(self, default, &masks[cases.len()]);
                }
                Term::Return(v) => {
                    if let (Some(v), Some(r)) = (v, f.ret) {
                        self.copy_val(r, *v, &active, dense);
                    }
                }
                Term::Kill => {
                    for (e, a) in self.exited.iter_mut().zip(&active) {
                        *e |= a;
                    }
                }
                Term::Unreachable => {
                    return Err(self.place(
                        Fault {
                            kind: ErrorKind::UndefinedBehavior,
                            what: "OpUnreachable was reached".into(),
                            lane: None,
                        },
                        block.term.1,
                        fi,
                    ));
                }
            }
            cur = next;
        }
        Ok(())
    }

    /// [`Op::Once`]: `inner` for the first active lane, its result copied to the other active
    /// lanes (the divergence analysis proved they would compute the same).
    fn once(&mut self, inner: &Op, mask: &Mask, dense: bool) -> Result<(), Fault> {
        if self.once_off {
            return self.op(inner, mask, dense);
        }
        let Some(l0) = crate::eval::first_active(mask) else {
            return Ok(());
        };
        // Only the words that can hold the batch's lanes (the baseline build's `count_ones` is a
        // bit-count of its own, and sixteen of them were a third of a scalar `Once`).
        self.uniform_copies += mask[..self.mask_words()]
            .iter()
            .map(|w| w.count_ones() as u64)
            .sum::<u64>()
            - 1;
        let lanes = self.lanes;
        // A layout or view set (flash attention slices its layouts every KV step): the memo
        // or the set for the one lane, without the mask scans of the general path.
        if let Op::Coop2(c) = inner
            && let Some((op, d, src, args)) = c.set_op()
        {
            let h = self.set_value_at(op, src, args, l0)?;
            self.fill_cols(d, &[h], mask);
            return Ok(());
        }
        // One-component lane ops straight from the lane's operands, with the per-lane
        // functions the column kernels are defined by (`bin1`, `un1`, `cvt1`): through the
        // column machinery a single lane cost about 85 cycles, and flash attention runs 32
        // such ops per KV step.
        let at = |x: Col| self.cols[x.ix() * lanes + l0];
        let scalar = match inner {
            Op::Bin(x) if x.n == 1 => Some((x.d, crate::eval::bin1(x.op, x.num, at(x.a), at(x.b)))),
            Op::Un(x) if x.n == 1 => Some((x.d, crate::eval::un1(x.op, x.num, at(x.a)))),
            Op::Cvt(x) if x.n == 1 => Some((x.d, crate::eval::cvt1(x.kind, x.from, x.to, at(x.a)))),
            Op::AccessChain(x) => Some((
                x.d,
                crate::eval::lane_address(&self.cols, l0, lanes, x.base.ix() * lanes, &x.steps),
            )),
            // One scalar read, unless the batch logs what it reads (a decode whose tiles may
            // be kept); a failing read takes the general path, which reports it.
            Op::Load(LoadArgs { d, ptr, leaves })
                if self.reads.is_none() && d.nmats == 0 && d.ncols == 1 =>
            {
                match leaves[..] {
                    [MemLeaf::Scalar { off, num, col: 0 }] => self
                        .read_leaf(at(*ptr), off, num, l0)
                        .ok()
                        .map(|v| (d.col, v)),
                    _ => None,
                }
            }
            _ => None,
        };
        let (c, n) = if let Some((d, v)) = scalar {
            self.cols[d.ix() * lanes + l0] = v;
            (d, 1)
        } else {
            let mut one = [0u64; MW];
            one[l0 / 64] = 1 << (l0 % 64);
            self.op(inner, &one, false)?;
            let Some(cols) = inner.result_cols() else {
                return Ok(());
            };
            cols
        };
        for k in 0..n {
            self.fill_from_lane(c.at(k), l0, mask, dense);
        }
        Ok(())
    }

    /// A barrier's condition for groups of `size` consecutive lanes (subgroups, or the
    /// workgroups of a batch): each has none or all of its running invocations (live, not
    /// terminated) in `mask`. None when it holds, else an invocation at the barrier of the first
    /// group that is split.
    fn split_group(&self, mask: &Mask, size: usize) -> Option<usize> {
        split_group_of(mask, (&self.live, &self.exited), self.lanes, size)
    }

    /// Copies lane `l0`'s value of column `c` into every lane of `mask`.
    fn fill_from_lane(&mut self, c: Col, l0: usize, mask: &Mask, dense: bool) {
        let lanes = self.lanes;
        let col = &mut self.cols[c.ix() * lanes..][..lanes];
        let v = col[l0];
        if dense {
            kernels::fill_column(col, v);
            return;
        }
        for (w, &bits) in mask.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                col[w * 64 + b.trailing_zeros() as usize] = v;
                b &= b - 1;
            }
        }
    }

    /// The phi copies of an edge whose incoming values overlap its phis: all read first.
    fn copy_parallel(&mut self, phis: &[(Val, Val)], mask: &Mask, dense: bool) {
        /// One incoming value: its lane columns, and per matrix slot its f32 or raw storage.
        type Saved = (Vec<u64>, Vec<(Vec<f32>, Vec<u64>)>);
        let lanes = self.lanes;
        let saved: Vec<Saved> = phis
            .iter()
            .map(|&(_, src)| {
                let cols = self.cols
                    [src.col.ix() * lanes..(src.col.ix() + src.ncols as usize) * lanes]
                    .to_vec();
                let mats = (0..src.nmats)
                    .map(|k| {
                        let s = self.slot(src.mat + k);
                        let len = s.inst as usize * s.cm.elems();
                        if s.cm.is_f32_arena() {
                            (self.mf[s.off..s.off + len].to_vec(), Vec::new())
                        } else {
                            (Vec::new(), self.mw[s.off..s.off + len].to_vec())
                        }
                    })
                    .collect();
                (cols, mats)
            })
            .collect();
        for (&(dst, _), (cols, mats)) in phis.iter().zip(&saved) {
            for k in 0..dst.ncols as usize {
                let (dc, sc) = ((dst.col.ix() + k) * lanes, k * lanes);
                if dense {
                    self.cols[dc..dc + lanes].copy_from_slice(&cols[sc..sc + lanes]);
                } else {
                    for l in coop2::mask_lanes(mask) {
                        self.cols[dc + l] = cols[sc + l];
                    }
                }
            }
            for (k, (f, w)) in mats.iter().enumerate() {
                let s = self.slot(dst.mat + k as u32);
                let n = s.cm.elems();
                for (i, _) in self.instances(dst.mat + k as u32, mask) {
                    let r = i * n..(i + 1) * n;
                    if s.cm.is_f32_arena() {
                        self.mf[s.off + r.start..s.off + r.end].copy_from_slice(&f[r]);
                    } else {
                        self.mw[s.off + r.start..s.off + r.end].copy_from_slice(&w[r]);
                    }
                }
            }
        }
    }

    fn copy_val(&mut self, d: Val, a: Val, mask: &Mask, dense: bool) {
        let columns = CopyArgs {
            d: Val { nmats: 0, ..d },
            a: Val { nmats: 0, ..a },
        };
        eval::Columns {
            c: &mut self.cols,
            lanes: self.lanes,
            mask,
            dense,
        }
        .copy(&columns);
        for k in 0..a.nmats {
            self.mat_copy(d.mat + k, a.mat + k, mask);
        }
    }

    /// [`Op::IndexChain`]: each lane's offset into the promoted value, `PAST` when an index
    /// is at or past its array's length.
    fn index_chain(&mut self, x: &IndexChainArgs, mask: &Mask, dense: bool) {
        let lanes = self.lanes;
        let col = |c: Col| c.ix() * lanes;
        let offset = |cols: &[u64], l: usize| {
            let mut at = x.off as u64;
            for s in x.steps.iter() {
                let i = trunc(cols[col(s.idx) + l], s.bits);
                if i >= s.count as u64 {
                    return IndexChainArgs::PAST;
                }
                at += i * s.stride as u64;
            }
            at
        };
        // Indices the same in every lane (loop counters): one offset for the column.
        let uniform = |s: &IndexStep| {
            let column = &self.cols[col(s.idx)..col(s.idx) + lanes];
            column
                .first()
                .is_some_and(|&i| kernels::column_is(column, i))
        };
        if dense && lanes > 0 && x.steps.iter().all(uniform) {
            let at = offset(&self.cols, 0);
            self.cols[col(x.d)..col(x.d) + lanes].fill(at);
            return;
        }
        each_lane!(mask, lanes, dense, |l| {
            let at = offset(&self.cols, l);
            self.cols[col(x.d) + l] = at;
        });
    }

    /// [`Op::IndexedGet`] (`set` false) and [`Op::IndexedSet`]: each lane's part of a promoted
    /// value at its offset. An offset past the value (an index past its array) is the
    /// out-of-bounds access the chain would make into per-lane memory (SPIR-V 2.16.1 forbids
    /// it); robust access reads 0 and drops the store, as for memory. When every lane has the
    /// same offset (indices that are loop counters) the part is whole columns: a copy each.
    fn indexed(
        &mut self,
        x: &IndexedArgs,
        mask: &Mask,
        dense: bool,
        set: bool,
    ) -> Result<(), Fault> {
        let lanes = self.lanes;
        let IndexedArgs {
            v,
            n,
            base,
            len,
            at,
        } = *x;
        let col = |c: Col, k: u64| (c.ix() as u64 + k) as usize * lanes;
        let inside = |at: u64| {
            at.checked_add(n as u64)
                .is_some_and(|end| end <= len as u64)
        };
        let offsets = &self.cols[col(at, 0)..col(at, 1)];
        if dense
            && let Some(&first) = offsets.first()
            && inside(first)
            && kernels::column_is(offsets, first)
        {
            for k in 0..n as u64 {
                let (src, dst) = if set {
                    (col(v, k), col(base, first + k))
                } else {
                    (col(base, first + k), col(v, k))
                };
                self.cols.copy_within(src..src + lanes, dst);
            }
            return Ok(());
        }
        let robust = self.p.options.robust;
        let mut fault = None;
        each_lane!(mask, lanes, dense, |l| {
            let o = self.cols[col(at, 0) + l];
            if inside(o) {
                for k in 0..n as u64 {
                    if set {
                        self.cols[col(base, o + k) + l] = self.cols[col(v, k) + l];
                    } else {
                        self.cols[col(v, k) + l] = self.cols[col(base, o + k) + l];
                    }
                }
            } else if robust {
                if !set {
                    for k in 0..n as u64 {
                        self.cols[col(v, k) + l] = 0;
                    }
                }
            } else if fault.is_none() {
                fault = Some(Fault {
                    kind: ErrorKind::OutOfBounds,
                    what: "an access chain index past the end of its array in a Function variable (out-of-bounds access)".into(),
                    lane: Some(l),
                });
            }
        });
        fault.map_or(Ok(()), Err)
    }

    /// The mask words that can hold this batch's lanes: every mask is a subset of `full`, so
    /// the words past them are zero (a batch of 128 lanes has 2 of 16).
    fn mask_words(&self) -> usize {
        self.lanes.div_ceil(64).min(MW)
    }

    /// Whether `mask` (`dense`: the whole batch) holds every lane that may still run: live and
    /// not exited. The others read no register or slot again.
    fn all_that_run(&self, mask: &Mask, dense: bool) -> bool {
        dense || (0..self.mask_words()).all(|k| mask[k] == self.live[k] & !self.exited[k])
    }

    /// [`Op::Move`]: when every lane that may still run is active, each matrix slot of `d`
    /// takes the storage of its slot of `a` (which holds `d`'s old storage after, as `a` is
    /// dead); else, or where the two slots differ in type, a copy. Columns are copied. (Lanes
    /// that are not live or have exited read no slot again, as on a phi's edge.)
    fn move_val(&mut self, d: Val, a: Val, mask: &Mask, dense: bool) {
        if !self.all_that_run(mask, dense) || d.nmats != a.nmats {
            return self.copy_val(d, a, mask, dense);
        }
        self.copy_val(Val { nmats: 0, ..d }, Val { nmats: 0, ..a }, mask, dense);
        for k in 0..a.nmats {
            let (dm, am) = (d.mat + k, a.mat + k);
            let (sd, sa) = (&self.p.mats[dm.ix()], &self.p.mats[am.ix()]);
            if dm != am && sd.cm == sa.cm && sd.inst == sa.inst {
                self.mat_off.swap(dm.ix(), am.ix());
                self.moved += 1;
            } else {
                self.mat_copy(dm, am, mask);
            }
        }
    }

    /// Scope instances of a matrix slot with at least one active lane.
    fn instances<'m>(&self, m: Mat, mask: &'m Mask) -> Insts<'m> {
        let s = self.slot(m);
        Insts {
            mask,
            scope: s.scope as usize,
            lanes: self.lanes,
            i: 0,
            n: s.inst as usize,
        }
    }

    fn mat_copy(&mut self, d: Mat, a: Mat, mask: &Mask) {
        let (sd, sa) = (self.slot(d), self.slot(a));
        let n = sd.cm.elems();
        for (i, _) in self.instances(d, mask) {
            if sd.cm.is_f32_arena() {
                self.mf
                    .copy_within(sa.off + i * n..sa.off + (i + 1) * n, sd.off + i * n);
            } else {
                self.mw
                    .copy_within(sa.off + i * n..sa.off + (i + 1) * n, sd.off + i * n);
            }
        }
    }

    /// Every element of instance `i` of matrix slot `m` as [`Batch::mat_get`] gives it, into
    /// `out`: f32 tiles by a plain loop, f16 tiles (exact f16 values in the f32 arena) narrowed
    /// in one vector pass unless one is a NaN, the rest element by element.
    fn tile_bits(&self, m: Mat, i: usize, out: &mut Vec<u64>) {
        let s = self.slot(m);
        let n = s.cm.elems();
        out.clear();
        if s.cm.is_f32_arena() {
            let tile = &self.mf[s.off + i * n..][..n];
            match s.cm.num {
                Num::F32 => {
                    out.extend(tile.iter().map(|v| v.to_bits() as u64));
                    return;
                }
                Num::F16 if n.is_multiple_of(2) => {
                    let mut words = vec![0u32; n / 2];
                    if !kernels::f32_to_f16_pairs(tile, &mut words) {
                        out.extend(
                            words
                                .iter()
                                .flat_map(|&w| [(w & 0xffff) as u64, (w >> 16) as u64]),
                        );
                        return;
                    }
                }
                _ => {}
            }
        }
        out.extend((0..n).map(|e| self.mat_get(m, i, e)));
    }

    /// Sets every element of instance `i` of matrix slot `m` from raw bits as
    /// [`Batch::mat_set`] does: f32 and f16 tiles without a NaN in one pass.
    fn set_tile_bits(&mut self, m: Mat, i: usize, bits: &[u64]) {
        let s = self.slot(m);
        let n = s.cm.elems();
        if s.cm.is_f32_arena() && bits.len() == n {
            let tile = &mut self.mf[s.off + i * n..][..n];
            match s.cm.num {
                Num::F32
                    if !bits
                        .iter()
                        .fold(false, |nan, &b| nan | f32::from_bits(b as u32).is_nan()) =>
                {
                    for (t, &b) in tile.iter_mut().zip(bits) {
                        *t = f32::from_bits(b as u32);
                    }
                    return;
                }
                Num::F16
                    if !bits
                        .iter()
                        .fold(false, |nan, &b| nan | floats::f16_is_nan(b as u16)) =>
                {
                    kernels::f16_cols_to_f32(bits, tile);
                    return;
                }
                _ => {}
            }
        }
        for (e, &x) in bits.iter().enumerate() {
            self.mat_set(m, i, e, x);
        }
    }

    /// Element `e` of instance `i` of matrix slot `m` as raw bits of its component kind.
    fn mat_get(&self, m: Mat, i: usize, e: usize) -> u64 {
        let s = self.slot(m);
        let k = s.off + i * s.cm.elems() + e;
        if s.cm.is_f32_arena() {
            arena_bits(s.cm.num, self.mf[k])
        } else {
            self.mw[k]
        }
    }

    /// OpCompositeExtract (or a load through an access chain) of component `idx` of every
    /// lane's part of the matrix in slot `s` into column `d`, all lanes active, when the index
    /// is the same for every lane: each scope instance's lanes then read consecutive elements
    /// (lane j, component i is element j + i·scope), a slice of the tile instead of a slot
    /// lookup, an index check and a conversion call per lane (flash attention reads `mvmax[0]`
    /// every KV block). False, nothing done, when the index differs between lanes or is out of range
    /// (the per-lane path reports it).
    fn extract_uniform(&mut self, d: Col, s: MatSlot, idx: ElemIndex, length: u64) -> bool {
        let lanes = self.lanes;
        let i = match idx {
            ElemIndex::Literal(i) => i as u64,
            ElemIndex::Dynamic(c) => {
                let column = &self.cols[c.ix() * lanes..(c.ix() + 1) * lanes];
                match column.first() {
                    Some(&i) if kernels::column_is(column, i) => i,
                    _ => return false,
                }
            }
        };
        if i >= length {
            return false;
        }
        let (n, scope) = (s.cm.elems(), (s.scope as usize).max(1));
        let first = i as usize * scope;
        let out = &mut self.cols[d.ix() * lanes..(d.ix() + 1) * lanes];
        for (inst, part) in out.chunks_mut(scope).enumerate() {
            // Lane j of the instance reads element first + j, zero past the tile's end.
            let tile = s.off + inst * n;
            let avail = n.saturating_sub(first).min(part.len());
            let (inside, past) = part.split_at_mut(avail);
            if s.cm.is_f32_arena() {
                let src = &self.mf[tile + first..tile + first + avail];
                // f16 values narrowed at the vector width (flash attention extracts from an
                // f16 tile every KV step: 900 cycles element by element), unless one is a NaN.
                let mut vector = false;
                if s.cm.num == Num::F16 && avail.is_multiple_of(2) && avail <= MAX_LANES {
                    let mut words = [0u32; MAX_LANES / 2];
                    vector = !kernels::f32_to_f16_pairs(src, &mut words[..avail / 2]);
                    if vector {
                        for (k, x) in inside.iter_mut().enumerate() {
                            *x = (words[k / 2] >> (16 * (k % 2)) & 0xffff) as u64;
                        }
                    }
                }
                if !vector {
                    for (x, &v) in inside.iter_mut().zip(src) {
                        *x = arena_bits(s.cm.num, v);
                    }
                }
            } else {
                inside.copy_from_slice(&self.mw[tile + first..tile + first + avail]);
            }
            past.fill(0);
        }
        true
    }

    /// Elements `elems` of instance `i` of slot `m` set to what [`Batch::mat_set`] gives each
    /// for `raw`: one conversion and one fill (a splat, a tensor load's clamped stretch).
    fn fill_elements(&mut self, m: Mat, i: usize, elems: std::ops::Range<usize>, raw: u64) {
        let s = self.slot(m);
        let base = s.off + i * s.cm.elems();
        let range = base + elems.start..base + elems.end;
        if s.cm.is_f32_arena() {
            self.mf[range].fill(arena_value(s.cm.num, raw));
        } else {
            self.mw[range].fill(trunc(raw, s.cm.num.bits()));
        }
    }

    fn mat_set(&mut self, m: Mat, i: usize, e: usize, raw: u64) {
        let s = self.slot(m);
        let k = s.off + i * s.cm.elems() + e;
        if s.cm.is_f32_arena() {
            self.mf[k] = arena_value(s.cm.num, raw);
        } else {
            self.mw[k] = trunc(raw, s.cm.num.bits());
        }
    }

    /// `observe_uniformity`: whether the active lanes of any subgroup hold different values in
    /// the op's result columns; a difference is recorded once per description.
    fn observe(&mut self, o: &Op, desc: u32, mask: &Mask) {
        let Some((c, n)) = o.result_cols() else {
            return;
        };
        if self.p.desc_ids.get(desc as usize).is_none_or(|&id| id == 0) {
            return;
        }
        let (lanes, sg) = (self.lanes, self.p.sg as usize);
        let active = |l: usize| mask[l / 64] >> (l % 64) & 1 != 0;
        let mut differs = false;
        'cols: for k in 0..n {
            let base = c.at(k).ix() * lanes;
            for s0 in (0..lanes).step_by(sg.max(1)) {
                let mut first = None;
                for l in s0..(s0 + sg).min(lanes) {
                    if !active(l) {
                        continue;
                    }
                    let v = self.cols[base + l];
                    match first {
                        None => first = Some(v),
                        Some(f) if f != v => {
                            differs = true;
                            break 'cols;
                        }
                        Some(_) => {}
                    }
                }
            }
        }
        let mut seen = self.p.observed.lock().unwrap_or_else(|e| e.into_inner());
        let e = seen.entry(desc).or_insert(false);
        *e |= differs;
    }

    /// The fast path of [`Op::LoadStore`] (every lane active, 32-bit words): every lane reads
    /// `n` aligned words of one object (not a per-lane one), the furthest in bounds, and the
    /// lanes write consecutive words of one writable object. All lanes' words are read into
    /// scratch before any is written, so this is the load then the store even where the two
    /// overlap. False: nothing done (the caller runs the load and the store, which report
    /// the faulting lane).
    fn copy_words(&mut self, x: &LoadStoreArgs, mask: &Mask, dense: bool) -> bool {
        let lanes = self.lanes;
        let n = word_run(&x.load.leaves);
        if !dense || lanes == 0 || n == 0 || word_run(&x.store.leaves) != n {
            return false;
        }
        let (pc, dc) = (x.load.ptr.ix() * lanes, x.store.ptr.ix() * lanes);
        // The last run's shape when these columns have it (the read log, kept for a decode
        // whose results may be reused, takes the full path).
        let Some(shape) = self.copy_shapes.get_mut(x.slot as usize) else {
            return false;
        };
        let mut shape = std::mem::take(shape);
        let (src, dst) = (&self.cols[pc..pc + lanes], &self.cols[dc..dc + lanes]);
        let reuse = if self.reads.is_none() {
            shape.matches(&self.mem, src, dst)
        } else {
            None
        };
        let (sh, si, from) = match reuse {
            Some(at) => at,
            None => {
                let step = 4 * n as u64;
                let sum = crate::kernels::address_summary(src, memory::OBJ_SHIFT, step);
                let dsum = crate::kernels::address_summary(dst, memory::OBJ_SHIFT, step);
                let (Some(o), Some(dst_words)) = (
                    one_object_words(&self.mem, src[0], &sum, n),
                    contiguous(&self.mem, dst, &dsum, n, true),
                ) else {
                    // Not this fast path: the shape (and its count of misses) stays.
                    self.copy_shapes[x.slot as usize] = shape;
                    return false;
                };
                if let Some(reads) = &mut self.reads {
                    note_objects(reads, src, mask, Some(&sum));
                }
                shape.learn(src, dst, n, dst_words);
                (o.shared, o.idx, shape.first_word(src[0]))
            }
        };
        let (dsh, didx, range) = shape.dst_words.clone();
        let runs = &shape.runs;
        let done = if !dsh && let Some((words, dst)) = self.mem.words_and_local(sh, si, didx) {
            // From another object into batch-owned (Workgroup) memory: no overlap, so
            // straight from the source words into the destination's, with plain stores.
            words
                .get(from..)
                .is_some_and(|w| gather_runs(w, runs, &mut dst[range], sh))
        } else {
            let mut tmp = std::mem::take(&mut self.src_cache.words);
            tmp.clear();
            tmp.resize(lanes * n, 0);
            let done = self
                .mem
                .words(sh, si)
                .get(from..)
                .is_some_and(|w| gather_runs(w, runs, &mut tmp, sh));
            if done && dsh {
                for (d, &v) in self.mem.words(dsh, didx)[range].iter().zip(&tmp) {
                    d.store(v, Relaxed);
                }
            } else if done {
                for (d, &v) in self.mem.local[didx as usize][range].iter_mut().zip(&tmp) {
                    *d.get_mut() = v;
                }
            }
            self.src_cache.words = tmp;
            done
        };
        self.copy_shapes[x.slot as usize] = shape;
        done
    }

    /// The register value of a scalar leaf `off` bytes past lane `l`'s pointer `addr`, read
    /// with its own bounds check (a Bool is 0 or 1 in registers, whatever its memory holds).
    fn read_leaf(&self, addr: u64, off: u32, num: Num, l: usize) -> Result<u64, memory::MemErr> {
        let v = self
            .mem
            .read(addr.wrapping_add(off as u64), l, num.bytes())?;
        Ok(leaf_value(num, v))
    }

    /// OpLoad of a value into its registers.
    fn load(&mut self, a: &LoadArgs, mask: &Mask, dense: bool) -> Result<(), Fault> {
        let LoadArgs { d, ptr, leaves } = a;
        let lanes = self.lanes;
        let col = |x: Col| x.ix() * lanes;
        let robust = self.p.options.robust;
        let pc = col(*ptr);
        let nw = word_run(leaves);
        // Every lane's pointer summarized once (all lanes active): the read log and the
        // fast paths below share it.
        let sum = (dense && lanes > 0).then(|| {
            crate::kernels::address_summary(
                &self.cols[pc..pc + lanes],
                memory::OBJ_SHIFT,
                4 * nw as u64,
            )
        });
        if let Some(reads) = &mut self.reads {
            note_objects(reads, &self.cols[pc..pc + lanes], mask, sum.as_ref());
        }
        if nw > 0
            && load_words_fast(
                &self.mem,
                &mut self.cols,
                lanes,
                pc,
                d.col.ix(),
                nw,
                mask,
                sum.as_ref(),
            )
        {
            return Ok(());
        }
        if let [MemLeaf::Scalar { off, num, col: 0 }] = leaves[..]
            && matches!(num, Num::Int(8) | Num::Int(16) | Num::F16 | Num::BF16)
            && load_narrow_fast(
                &self.mem,
                &mut self.cols,
                lanes,
                pc,
                d.col.ix(),
                off,
                num,
                sum.as_ref(),
            )
        {
            return Ok(());
        }
        let mut has_mat = false;
        let extent = leaf_extent(leaves);
        let mut cache = memory::ResolveCache::default();
        each_lane!(mask, lanes, dense, |l| {
            let addr = self.cols[pc + l];
            // One bounds check for the whole value, then plain word reads.
            if let Some((sh, idx, b)) = self.mem.resolve_cached(&mut cache, addr, l, extent, false)
            {
                let words = self.mem.words(sh, idx);
                if nw > 0 && b % 4 == 0 {
                    let w0 = b / 4;
                    for k in 0..nw {
                        self.cols[col(d.col + k as u32) + l] = words[w0 + k].load(Relaxed) as u64;
                    }
                    continue;
                }
                for leaf in leaves.iter() {
                    match *leaf {
                        MemLeaf::Scalar { off, num, col: c } => {
                            let v = memory::read_bytes(words, b + off as usize, num.bytes());
                            self.cols[col(d.col + c) + l] = leaf_value(num, v);
                        }
                        MemLeaf::Mat { .. } => has_mat = true,
                    }
                }
                continue;
            }
            for leaf in leaves.iter() {
                match *leaf {
                    MemLeaf::Scalar { off, num, col: c } => {
                        let v = match self.read_leaf(addr, off, num, l) {
                            Ok(v) => v,
                            Err(_) if robust => 0,
                            Err(e) => {
                                return Err(Fault {
                                    kind: e.kind,
                                    what: e.to_string(),
                                    lane: Some(l),
                                });
                            }
                        };
                        self.cols[col(d.col + c) + l] = v;
                    }
                    MemLeaf::Mat { .. } => has_mat = true,
                }
            }
        });
        if has_mat {
            for leaf in leaves.iter() {
                if let MemLeaf::Mat { off, mat, cm } = *leaf {
                    self.mat_from_lanes(d.mat + mat, *ptr, off, cm.num, mask, robust)?;
                }
            }
        }
        Ok(())
    }

    /// OpStore of a value from its registers.
    fn store(&mut self, a: &StoreArgs, mask: &Mask, dense: bool) -> Result<(), Fault> {
        let StoreArgs { ptr, v, leaves } = a;
        let lanes = self.lanes;
        let col = |x: Col| x.ix() * lanes;
        let robust = self.p.options.robust;
        let pc = col(*ptr);
        let nw = word_run(leaves);
        if nw > 0
            && store_words_fast(
                &mut self.mem,
                &self.cols,
                lanes,
                pc,
                v.col.ix(),
                nw,
                mask,
                dense,
            )
        {
            return Ok(());
        }
        let extent = leaf_extent(leaves);
        let scalar_only = leaves.iter().all(|x| matches!(x, MemLeaf::Scalar { .. }));
        // Narrow leaves (a vector of bytes) written a word at a time: every byte of a word is
        // this lane's, so the word holds what the byte writes would leave.
        let packed = if nw == 0 && scalar_only {
            packed_words(leaves)
        } else {
            None
        };
        let mut cache = memory::ResolveCache::default();
        each_lane!(mask, lanes, dense, |l| {
            let addr = self.cols[pc + l];
            if scalar_only
                && let Some((sh, idx, b)) =
                    self.mem.resolve_cached(&mut cache, addr, l, extent, true)
            {
                let words = self.mem.words(sh, idx);
                if nw > 0 && b % 4 == 0 {
                    let w0 = b / 4;
                    for k in 0..nw {
                        words[w0 + k].store(self.cols[col(v.col + k as u32) + l] as u32, Relaxed);
                    }
                    continue;
                }
                if let Some(packed) = packed.as_ref().filter(|_| b % 4 == 0) {
                    for (k, w) in words[b / 4..].iter().take(packed.words).enumerate() {
                        let word = packed.of(k).iter().fold(0, |acc, &(c, shift, m)| {
                            acc | (self.cols[col(v.col + c) + l] as u32 & m) << shift
                        });
                        w.store(word, Relaxed);
                    }
                    continue;
                }
                for leaf in leaves.iter() {
                    if let MemLeaf::Scalar { off, num, col: c } = *leaf {
                        let x = self.cols[col(v.col + c) + l];
                        memory::write_bytes(words, b + off as usize, num.bytes(), x, sh);
                    }
                }
                continue;
            }
            for leaf in leaves.iter() {
                match *leaf {
                    MemLeaf::Scalar { off, num, col: c } => {
                        let x = self.cols[col(v.col + c) + l];
                        match self
                            .mem
                            .write(addr.wrapping_add(off as u64), l, num.bytes(), x)
                        {
                            Ok(()) => {}
                            Err(_) if robust => {}
                            Err(e) => {
                                return Err(Fault {
                                    kind: e.kind,
                                    what: e.to_string(),
                                    lane: Some(l),
                                });
                            }
                        }
                    }
                    MemLeaf::Mat { off, mat, cm } => {
                        let s = self.slot(v.mat + mat);
                        let scope = s.scope as usize;
                        let (i, li) = (l / scope, l % scope);
                        let len = cm.elems().div_ceil(scope);
                        let b = cm.num.bytes();
                        for k in 0..len {
                            let e = li + k * scope;
                            let x = if e < cm.elems() {
                                self.mat_get(v.mat + mat, i, e)
                            } else {
                                0
                            };
                            let a2 = addr.wrapping_add(off as u64 + (k as u64) * b as u64);
                            if let Err(e) = self.mem.write(a2, l, b, x)
                                && !robust
                            {
                                return Err(Fault {
                                    kind: e.kind,
                                    what: e.to_string(),
                                    lane: Some(l),
                                });
                            }
                        }
                    }
                }
            }
        });
        Ok(())
    }

    fn op(&mut self, o: &Op, mask: &Mask, dense: bool) -> Result<(), Fault> {
        let lanes = self.lanes;
        let col = |x: Col| x.ix() * lanes;
        let mut cols = eval::Columns {
            c: &mut self.cols,
            lanes,
            mask,
            dense,
        };
        match o {
            // Column loops compiled for the CPU's widest vectors (`Columns::run`).
            Op::Un(x) => cols.run(ColumnOp::Un(x)),
            Op::Bin(x) => cols.run(ColumnOp::Bin(x)),
            Op::IntChain(x) => cols.run(ColumnOp::IntChain(x)),
            Op::Tern(x) => cols.run(ColumnOp::Tern(x)),
            Op::Dot(x) => cols.run(ColumnOp::Dot(x)),
            Op::BfInsert(x) => cols.run(ColumnOp::BfInsert(x)),
            Op::Cvt(x) => cols.run(ColumnOp::Cvt(x)),
            Op::Bitcast(x) => cols.run(ColumnOp::Bitcast(x)),
            Op::Trunc(x) => cols.run(ColumnOp::Trunc(x)),
            Op::ExtractDyn(x) => cols.run(ColumnOp::ExtractDyn(x)),
            Op::InsertDyn(x) => cols.run(ColumnOp::InsertDyn(x)),
            Op::Copy(CopyArgs { d, a }) => self.copy_val(*d, *a, mask, dense),
            Op::IndexChain(x) => self.index_chain(x, mask, dense),
            Op::IndexedGet(x) => return self.indexed(x, mask, dense, false),
            Op::IndexedSet(x) => return self.indexed(x, mask, dense, true),
            Op::Move(CopyArgs { d, a }) => self.move_val(*d, *a, mask, dense),
            Op::Select(
                sel @ SelectArgs {
                    c,
                    nmats,
                    dm,
                    am,
                    bm,
                    ..
                },
            ) => {
                cols.run(ColumnOp::Select(sel));
                for k in 0..*nmats {
                    for (i, l) in self.instances(dm + k, mask) {
                        let src = if self.cols[col(*c) + l] != 0 {
                            am + k
                        } else {
                            bm + k
                        };
                        let mut one = [0u64; MW];
                        let scope = self.slot(dm + k).scope as usize;
                        for x in i * scope..((i + 1) * scope).min(lanes) {
                            one[x / 64] |= 1 << (x % 64);
                        }
                        self.mat_copy(dm + k, src, &one);
                    }
                }
            }
            Op::Load(x) => self.load(x, mask, dense)?,
            Op::Store(x) => self.store(x, mask, dense)?,
            Op::LoadStore(x) => {
                if !self.copy_words(x, mask, dense) {
                    if let Err(f) = self.load(&x.load, mask, dense) {
                        self.fault_desc = Some(x.load_desc);
                        return Err(f);
                    }
                    self.store(&x.store, mask, dense)?;
                }
            }
            Op::CopyMem(CopyMemArgs { dst, src, bytes }) => {
                let (dc, sc) = (col(*dst), col(*src));
                each_lane!(mask, lanes, dense, |l| {
                    let (da, sa) = (self.cols[dc + l], self.cols[sc + l]);
                    for k in 0..*bytes as u64 {
                        let v = self.mem.read(sa + k, l, 1).map_err(|e| Fault {
                            kind: e.kind,
                            what: e.to_string(),
                            lane: Some(l),
                        })?;
                        self.mem.write(da + k, l, 1, v).map_err(|e| Fault {
                            kind: e.kind,
                            what: e.to_string(),
                            lane: Some(l),
                        })?;
                    }
                });
            }
            Op::AccessChain(x) => cols.run(ColumnOp::AccessChain(x)),
            Op::ArrayLength(ArrayLengthArgs {
                d,
                ptr,
                off,
                stride,
            }) => {
                let (dc, pc) = (col(*d), col(*ptr));
                each_lane!(mask, lanes, dense, |l| {
                    let rest = self.mem.bytes_from(self.cols[pc + l]).unwrap_or(0);
                    self.cols[dc + l] = rest.saturating_sub(*off as u64) / (*stride).max(1) as u64;
                });
            }
            Op::Atomic(AtomicArgs {
                op,
                num,
                d,
                ptr,
                v,
                cmp,
            }) => {
                let (dc, pc, vc, cc) = (col(*d), col(*ptr), col(*v), col(*cmp));
                each_lane!(mask, lanes, dense, |l| {
                    let addr = self.cols[pc + l];
                    let (x, y) = (self.cols[vc + l], self.cols[cc + l]);
                    let r = self.atomic(*op, *num, addr, l, x, y).map_err(|e| Fault {
                        kind: e.kind,
                        what: e.what,
                        lane: Some(l),
                    })?;
                    if *op != AtomicOp::Store {
                        self.cols[dc + l] = r;
                    }
                });
            }
            Op::Barrier { subgroup } => {
                if *subgroup {
                    // Lanes run in lockstep, so only divergence inside a subgroup is an error:
                    // a subgroup is wholly at the barrier or wholly elsewhere.
                    if self.split_group(mask, self.p.sg as usize).is_some() {
                        return fault(
                            ErrorKind::DivergentBarrier,
                            "OpControlBarrier with Subgroup execution scope reached in divergent control flow (not every invocation of the subgroup is at it)",
                        );
                    }
                } else if let Some(l) = self.split_group(mask, self.p.group_lanes as usize) {
                    // Checked for each packed workgroup on its own: they may be at different
                    // barriers, or one may have finished.
                    return Err(Fault {
                        kind: ErrorKind::DivergentBarrier,
                        what: "OpControlBarrier reached in divergent control flow (not every invocation of the workgroup is at it)".into(),
                        lane: Some(l),
                    });
                }
            }
            Op::Call(CallArgs { f, args, ret }) => {
                for (p, a) in args.iter() {
                    self.copy_val(*p, *a, mask, dense);
                }
                self.call(*f as usize, *mask).map_err(|e| Fault {
                    kind: e.kind,
                    what: format!("{} (in {})", e.what, e.place),
                    lane: None,
                })?;
                if let Some((d, _)) = ret
                    && let Some(r) = self.p.funcs[*f as usize].ret
                {
                    self.copy_val(*d, r, mask, dense);
                }
            }
            Op::Sg(x) => self.subgroup(x, mask)?,
            Op::CmLoad(x) if x.lazy => self.load_lazy(x, mask)?,
            Op::CmLoad(CmLoadArgs {
                d,
                ptr,
                stride,
                col_major,
                pbytes,
                lazy: _,
            }) => self.cm_mem(*d, *ptr, *stride, *col_major, *pbytes, false, mask)?,
            Op::CmStore(CmStoreArgs {
                ptr,
                m,
                stride,
                col_major,
                pbytes,
            }) => self.cm_mem(*m, *ptr, *stride, *col_major, *pbytes, true, mask)?,
            Op::CmMulAdd(CmMulAddArgs {
                d,
                a,
                b,
                c,
                flags,
                lazy,
                ..
            }) => {
                for (&is_lazy, &m) in lazy.iter().zip([a, b]) {
                    if is_lazy {
                        self.widen_lazy(m, mask)?;
                    }
                }
                self.muladd(*d, *a, *b, *c, *flags, mask)?;
            }
            Op::CmMulAddSharedA(g) => self.muladd_shared_a(g, mask)?,
            Op::CmExtract(CmExtractArgs { d, m, idx }) => {
                let s = self.slot(*m);
                let (length, at) = (mat_length(s), ScopeLane::of(s));
                if dense && self.extract_uniform(*d, s, *idx, length) {
                    return Ok(());
                }
                // `mat_get` with the slot looked up once.
                let n = s.cm.elems();
                each_lane!(mask, lanes, dense, |l| {
                    let (inst, j) = at.split(l);
                    let e = j + self.elem_index(*idx, l, length)? * at.scope;
                    let k = s.off + inst * n + e;
                    self.cols[col(*d) + l] = match (e < n, s.cm.is_f32_arena()) {
                        (false, _) => 0,
                        (true, true) => arena_bits(s.cm.num, self.mf[k]),
                        (true, false) => self.mw[k],
                    };
                });
            }
            Op::CmInsert(CmInsertArgs { d, m, v, idx }) => {
                if d != m {
                    self.mat_copy(*d, *m, mask);
                }
                let s = self.slot(*d);
                let (length, at) = (mat_length(s), ScopeLane::of(s));
                each_lane!(mask, lanes, dense, |l| {
                    let (inst, j) = at.split(l);
                    let e = j + self.elem_index(*idx, l, length)? * at.scope;
                    if e < s.cm.elems() {
                        let x = self.cols[col(*v) + l];
                        self.mat_set(*d, inst, e, x);
                    }
                });
            }
            Op::CmSplat(CmSplatArgs { d, v }) => {
                // Every element is the instance's first lane's value.
                let n = self.slot(*d).cm.elems();
                for (i, l) in self.instances(*d, mask) {
                    let x = self.cols[col(*v) + l];
                    self.fill_elements(*d, i, 0..n, x);
                }
            }
            Op::CmUn(x) => self.cm_un(x, mask)?,
            Op::CmBin(x) => self.cm_bin(x, mask)?,
            Op::CmScale(x) => self.cm_scale(x, mask)?,
            Op::CmCvt(x) => self.cm_cvt(x, mask)?,
            Op::Printf(PrintfArgs { fmt, args }) => {
                each_lane!(mask, lanes, dense, |l| {
                    let vals: Vec<(Num, Vec<u64>)> = args
                        .iter()
                        .map(|&(c, num, n)| {
                            (num, (0..n).map(|k| self.cols[col(c + k) + l]).collect())
                        })
                        .collect();
                    if self.p.options.printf {
                        self.printf += &format_printf(fmt, &vals);
                        self.printf.push('\n');
                    }
                });
            }
            Op::Coop2(c) => self.coop2(c, mask)?,
            Op::CoopVec(c) => self.coopvec(c, mask, dense)?,
            Op::Descriptor(DescriptorArgs {
                d,
                base,
                idx,
                bits,
                set,
                binding,
            }) => {
                let len = self.array_len.get(&(*set, *binding)).copied().unwrap_or(0);
                each_lane!(mask, lanes, dense, |l| {
                    let i = sext(self.cols[col(*idx) + l], *bits as u32);
                    if i < 0 || i >= len as i64 {
                        // Not robustBufferAccess's business: an index outside the array is
                        // undefined behaviour in Vulkan, reported here.
                        return Err(Fault {
                            kind: ErrorKind::OutOfBounds,
                            what: format!(
                                "descriptor index {i} is outside the {len} buffers bound at set {set}, binding {binding}"
                            ),
                            lane: Some(l),
                        });
                    }
                    self.cols[col(*d) + l] =
                        self.cols[col(*base) + l] + ((i as u64) << memory::OBJ_SHIFT);
                });
            }
            Op::Unsupported(e) => return fault(e.kind, e.what.clone()),
            Op::Once(inner) => self.once(inner, mask, dense)?,
        }
        Ok(())
    }

    /// Loads a matrix kept as lanes' shares in per-lane memory (e.g. a Function variable).
    fn mat_from_lanes(
        &mut self,
        m: Mat,
        ptr: Col,
        off: u32,
        num: Num,
        mask: &Mask,
        robust: bool,
    ) -> Result<(), Fault> {
        let s = self.slot(m);
        let scope = s.scope as usize;
        let len = s.cm.elems().div_ceil(scope);
        let b = num.bytes();
        for (i, _) in self.instances(m, mask) {
            for li in 0..scope {
                let l = i * scope + li;
                if l >= self.lanes {
                    break;
                }
                let addr = self.cols[ptr.ix() * self.lanes + l];
                for k in 0..len {
                    let e = li + k * scope;
                    if e >= s.cm.elems() {
                        break;
                    }
                    let x = match self.mem.read(
                        addr.wrapping_add(off as u64 + (k * b as usize) as u64),
                        l,
                        b,
                    ) {
                        Ok(x) => x,
                        Err(_) if robust => 0,
                        Err(e) => {
                            return Err(Fault {
                                kind: e.kind,
                                what: e.to_string(),
                                lane: Some(l),
                            });
                        }
                    };
                    self.mat_set(m, i, e, x);
                }
            }
        }
        Ok(())
    }

    fn atomic(
        &mut self,
        op: AtomicOp,
        num: Num,
        addr: u64,
        l: usize,
        x: u64,
        y: u64,
    ) -> Result<u64, Fault> {
        let n = num.bytes();
        let (sh, idx, b) = self.mem.resolve(addr, l, n as u64, op != AtomicOp::Load)?;
        let words = self.mem.words(sh, idx);
        if b % n as usize != 0 {
            return fault(
                ErrorKind::UndefinedBehavior,
                format!("misaligned atomic at {addr:#x}"),
            );
        }
        let bits = num.bits();
        let f = |old: u64| -> u64 {
            match op {
                AtomicOp::Load => old,
                AtomicOp::Store | AtomicOp::Exchange => x,
                AtomicOp::CmpXchg => {
                    if old == trunc(y, bits) {
                        x
                    } else {
                        old
                    }
                }
                AtomicOp::IInc => old.wrapping_add(1),
                AtomicOp::IDec => old.wrapping_sub(1),
                AtomicOp::IAdd => old.wrapping_add(x),
                AtomicOp::ISub => old.wrapping_sub(x),
                AtomicOp::SMin => bin1(BinOp::SMin, num, old, x),
                AtomicOp::UMin => bin1(BinOp::UMin, num, old, x),
                AtomicOp::SMax => bin1(BinOp::SMax, num, old, x),
                AtomicOp::UMax => bin1(BinOp::UMax, num, old, x),
                AtomicOp::And => old & x,
                AtomicOp::Or => old | x,
                AtomicOp::Xor => old ^ x,
                AtomicOp::FAdd => bin1(BinOp::FAdd, num, old, x),
                AtomicOp::FMin => bin1(BinOp::FMin, num, old, x),
                AtomicOp::FMax => bin1(BinOp::FMax, num, old, x),
            }
        };
        if n == 4 {
            let w = &words[b / 4];
            let mut cur = w.load(Relaxed);
            if op == AtomicOp::Load {
                return Ok(cur as u64);
            }
            loop {
                let new = trunc(f(cur as u64), 32) as u32;
                match w.compare_exchange_weak(cur, new, Relaxed, Relaxed) {
                    Ok(_) => return Ok(cur as u64),
                    Err(c) => cur = c,
                }
            }
        }
        // 64-bit (and narrower) atomics: serialized by a striped lock (SPIR-V atomics on the
        // same address are totally ordered; plain accesses racing with them are a data race).
        static LOCKS: [std::sync::Mutex<()>; 64] = [const { std::sync::Mutex::new(()) }; 64];
        let _g = LOCKS[((addr >> 3) % 64) as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let old = memory::read_bytes(words, b, n);
        if op != AtomicOp::Load {
            memory::write_bytes(words, b, n, trunc(f(old), bits), sh);
        }
        Ok(old)
    }
}

/// Adds the objects the active lanes of pointer column `ptrs` address to `reads` (each once):
/// what a decode call read, for [`tiles::TileCache`]. `sum`: the column's summary when every
/// lane is active.
#[allow(clippy::needless_range_loop)] // each_lane! visits indices, dense or by mask bits
fn note_objects(reads: &mut Vec<u64>, ptrs: &[u64], mask: &Mask, sum: Option<&AddressSummary>) {
    let dense = sum.is_some();
    if let Some(sum) = sum {
        // Usually all lanes address one object.
        if sum.obj_lo == sum.obj_hi {
            if !reads.contains(&sum.obj_lo) {
                reads.push(sum.obj_lo);
            }
            return;
        }
    }
    let mut last = u64::MAX;
    each_lane!(mask, ptrs.len(), dense, |l| {
        let oi = ptrs[l] >> memory::OBJ_SHIFT;
        if oi != last {
            last = oi;
            if !reads.contains(&oi) {
                reads.push(oi);
            }
        }
    });
}

/// Load of `n` consecutive 32-bit words per lane into columns `dcol..dcol + n`, for values whose
/// leaves are such words; false (caller falls back to the general path, which redoes every
/// lane) when a lane's address is not a valid aligned in-bounds one. `sum`: the pointer column's
/// summary with step `4·n` when every lane is active.
#[allow(clippy::too_many_arguments)]
fn load_words_fast(
    mem: &Mem,
    cols: &mut [u64],
    lanes: usize,
    pc: usize,
    dcol: usize,
    n: usize,
    mask: &Mask,
    sum: Option<&AddressSummary>,
) -> bool {
    let dense = sum.is_some();
    if let Some(sum) = sum
        && let Some((sh, idx, range)) = contiguous(mem, &cols[pc..pc + lanes], sum, n, false)
    {
        let ws = &mem.words(sh, idx)[range];
        for (l, lw) in ws.chunks_exact(n).enumerate() {
            for (k, w) in lw.iter().enumerate() {
                cols[(dcol + k) * lanes + l] = w.load(Relaxed) as u64;
            }
        }
        return true;
    }
    if let Some(sum) = sum
        && gather_words(mem, cols, lanes, pc, dcol, n, sum)
    {
        return true;
    }
    // Scattered rows of a shared buffer miss the cache: prefetch every lane's words of the
    // first lane's object first, so that the misses overlap instead of queueing one by one.
    if dense
        && let Some(&a0) = cols.get(pc)
        && let Some(o) = mem.obj(a0 >> memory::OBJ_SHIFT)
        && o.shared
        && o.per_lane == 0
    {
        let words = mem.words(o.shared, o.idx);
        for &a in &cols[pc..pc + lanes] {
            if (a ^ a0) >> memory::OBJ_SHIFT == 0
                && let Some(w) = words.get(((a & ((1u64 << memory::OBJ_SHIFT) - 1)) / 4) as usize)
            {
                crate::kernels::prefetch(w);
            }
        }
    }
    let (mut cur, mut words, mut size, mut per_lane): (u64, &[AtomicU32], u64, u64) =
        (u64::MAX, &[], 0, 0);
    if dense {
        // Runs of lanes with consecutive addresses (rows of a buffer read by 4 or 16 lanes in
        // the GEMM staging): one object lookup and bounds check per run.
        let step = 4 * n as u64;
        let mut l = 0;
        while l < lanes {
            let addr = cols[pc + l];
            let oi = addr >> memory::OBJ_SHIFT;
            if oi != cur {
                let Some(o) = mem.obj(oi) else {
                    return false;
                };
                words = mem.words(o.shared, o.idx);
                (size, per_lane, cur) = (o.size, o.per_lane, oi);
            }
            let mut r = 1;
            if per_lane == 0 {
                while l + r < lanes && cols[pc + l + r] == addr.wrapping_add(step * r as u64) {
                    r += 1;
                }
            }
            let off = addr & ((1u64 << memory::OBJ_SHIFT) - 1);
            if !off.is_multiple_of(4) || off + step * r as u64 > size {
                return false;
            }
            let w0 = ((per_lane * l as u64 + off) / 4) as usize;
            // Index loops, not `chunks_exact(n)`: its chunk count is a division per run.
            let run = &words[w0..w0 + n * r];
            for j in 0..r {
                for k in 0..n {
                    cols[(dcol + k) * lanes + l + j] = run[j * n + k].load(Relaxed) as u64;
                }
            }
            l += r;
        }
        return true;
    }
    each_lane!(mask, lanes, dense, |l| {
        let addr = cols[pc + l];
        let oi = addr >> memory::OBJ_SHIFT;
        if oi != cur {
            let Some(o) = mem.obj(oi) else {
                return false;
            };
            words = mem.words(o.shared, o.idx);
            (size, per_lane, cur) = (o.size, o.per_lane, oi);
        }
        let off = addr & ((1u64 << memory::OBJ_SHIFT) - 1);
        if !off.is_multiple_of(4) || off + 4 * n as u64 > size {
            return false;
        }
        let w0 = ((per_lane * l as u64 + off) / 4) as usize;
        for (k, w) in words[w0..w0 + n].iter().enumerate() {
            cols[(dcol + k) * lanes + l] = w.load(Relaxed) as u64;
        }
    });
    true
}

/// The runs of lanes whose `n` words follow each other in memory (a staged row: 4 or 16 lanes
/// in the GEMM), in lane order, as [`crate::kernels::copy_runs`] takes them: (first word in
/// the lanes' `n`-word slots, words, first word in the object).
fn lane_runs(ptrs: &[u64], n: usize, runs: &mut Vec<(usize, usize, usize)>) {
    runs.clear();
    let mut starts = [0u64; MAX_LANES / 64];
    crate::kernels::run_starts(ptrs, 4 * n as u64, &mut starts);
    let word = |l: usize| ((ptrs[l] & memory::OFF_MASK) / 4) as usize;
    let mut start = 0;
    for (i, &bits) in starts.iter().enumerate().take(ptrs.len().div_ceil(64)) {
        let mut b = bits;
        while b != 0 {
            let l = i * 64 + b.trailing_zeros() as usize;
            b &= b - 1;
            if l > 0 {
                runs.push((start * n, (l - start) * n, word(start)));
                start = l;
            }
        }
    }
    if start < ptrs.len() {
        runs.push((start * n, (ptrs.len() - start) * n, word(start)));
    }
}

/// What a staging copy ([`Batch::copy_words`]) found of its lanes the last time it ran: the
/// source lanes' offsets from the first lane's address, the destination column, and the runs
/// and destination words they gave. A later run whose columns have the same offsets and the
/// same destination gets the same runs, moved with the first lane's address: only that
/// address's object and bounds are checked again (a GEMM's staging copies move by a K step
/// a time, with the same shape).
#[derive(Default)]
struct CopyShape {
    /// Source lane `l`'s address minus lane 0's (wrapping).
    deltas: Vec<u64>,
    /// The destination column.
    dst: Vec<u64>,
    /// The source object's index.
    obj: u64,
    /// The bytes the lanes read, from lane 0's address: the smallest offset and the end of
    /// the furthest lane's words.
    lo: i64,
    hi: i64,
    /// [`lane_runs`]'s runs, their source words counted from the lowest lane's first word.
    runs: Vec<(usize, usize, usize)>,
    /// The destination's (shared?, index) and words (`contiguous`).
    dst_words: (bool, u32, std::ops::Range<usize>),
    /// Runs since the shape last matched: past a few, the columns change from run to run and
    /// the shape is no longer kept (its comparison and copies would cost every time).
    misses: u32,
}

impl CopyShape {
    /// Runs whose shape differed in a row before the op stops keeping one.
    const GIVE_UP: u32 = 4;

    /// When `src` and `dst` have this shape and every source lane's words lie in the object
    /// the first lane's address names: that object's (shared?, index) and the word the runs
    /// count from.
    fn matches(&mut self, mem: &Mem, src: &[u64], dst: &[u64]) -> Option<(bool, u32, usize)> {
        let a0 = *src.first()?;
        if self.deltas.len() != src.len()
            || a0 >> memory::OBJ_SHIFT != self.obj
            || !crate::kernels::same_shape(src, &self.deltas, dst, &self.dst)
        {
            self.misses = self.misses.saturating_add(1);
            return None;
        }
        self.misses = 0;
        let o = mem.obj(self.obj).filter(|o| o.per_lane == 0)?;
        let off = (a0 & memory::OFF_MASK) as i64;
        let (lo, hi) = (off + self.lo, off + self.hi);
        (off % 4 == 0 && lo >= 0 && hi as u64 <= o.size).then_some((
            o.shared,
            o.idx,
            lo as usize / 4,
        ))
    }

    /// Takes the shape of `src` and `dst` (`n` words a lane, every lane's checked in one
    /// aligned object, `dst_words` the destination's) and its runs.
    fn learn(
        &mut self,
        src: &[u64],
        dst: &[u64],
        n: usize,
        dst_words: (bool, u32, std::ops::Range<usize>),
    ) {
        let a0 = src[0];
        let keep = self.misses <= Self::GIVE_UP;
        self.deltas.clear();
        self.dst.clear();
        if keep {
            self.deltas.extend(src.iter().map(|&a| a.wrapping_sub(a0)));
            self.dst.extend_from_slice(dst);
        }
        // Offsets inside one object (checked by the caller): below 2^40 apart.
        let (lo, hi) = src.iter().fold((i64::MAX, i64::MIN), |(lo, hi), &a| {
            let d = a.wrapping_sub(a0) as i64;
            (lo.min(d), hi.max(d))
        });
        self.obj = a0 >> memory::OBJ_SHIFT;
        self.lo = lo;
        self.hi = hi + 4 * n as i64;
        lane_runs(src, n, &mut self.runs);
        let from = self.first_word(a0);
        for run in &mut self.runs {
            run.2 -= from;
        }
        self.dst_words = dst_words;
    }

    /// The word the runs count from, for a first lane at `a0`.
    fn first_word(&self, a0: u64) -> usize {
        (((a0 & memory::OFF_MASK) as i64 + self.lo) / 4) as usize
    }
}

/// [`Batch::split_group`] over explicit masks: for groups of `size` consecutive lanes of
/// `lanes`, the first lane in `mask` of the first group whose lanes in `mask` are not all of
/// its running ones (in `live`, not in `exited`). Word by word, the lanes counted with popcount
/// (a lane at a time was 800 TSC cycles a barrier of 128 lanes).
fn split_group_of(
    mask: &Mask,
    (live, exited): (&Mask, &Mask),
    lanes: usize,
    size: usize,
) -> Option<usize> {
    let size = size.max(1);
    (0..lanes).step_by(size).find_map(|g0| {
        let g1 = (g0 + size).min(lanes);
        let (mut here, mut running, mut first) = (0, 0, None);
        for w in g0 / 64..g1.div_ceil(64) {
            let (lo, hi) = (g0.max(64 * w) - 64 * w, g1.min(64 * w + 64) - 64 * w);
            let span = (u64::MAX >> (64 - (hi - lo))) << lo;
            let at = mask[w] & span;
            if first.is_none() && at != 0 {
                first = Some(64 * w + at.trailing_zeros() as usize);
            }
            here += at.count_ones();
            running += (live[w] & !exited[w] & span).count_ones();
        }
        first.filter(|_| here != running)
    })
}

/// Each lane's `n` words at its address in `words` into its slot of `dst`, each run of
/// [`lane_runs`] one straight copy; false when a run is outside either (the caller checked
/// the addresses, so it never is). With `prefetch`, every source line of every run is asked
/// for before the first copy (rows of a buffer, often not in the cache: their misses overlap
/// instead of each stalling the copy in turn).
fn gather_runs<D>(
    words: &[AtomicU32],
    runs: &[(usize, usize, usize)],
    dst: &mut [D],
    prefetch: bool,
) -> bool
where
    [D]: crate::kernels::WordSink,
{
    if prefetch {
        for &(_, len, w) in runs {
            for line in w / 16..=(w + len - 1) / 16 {
                if let Some(x) = words.get(line * 16) {
                    crate::kernels::prefetch(x);
                }
            }
        }
    }
    crate::kernels::copy_runs(words, runs, dst)
}

/// The object every lane of a pointer column points into (not a per-lane one), from its first
/// address `a0` and its summary `sum`: the largest offset of them and whether every offset is a
/// multiple of 4; None when the lanes span objects.
fn one_object<'m>(
    mem: &'m Mem,
    a0: u64,
    sum: &AddressSummary,
) -> Option<(&'m memory::ObjInfo, u64, bool)> {
    let o = mem
        .obj(a0 >> memory::OBJ_SHIFT)
        .filter(|o| o.per_lane == 0)?;
    (sum.obj_lo == sum.obj_hi).then_some((o, sum.off_max, sum.low_bits == 0))
}

/// [`one_object`] when every lane's `n` words lie in it, aligned and in bounds: one check for
/// the whole column (the furthest lane's words end inside the object).
fn one_object_words<'m>(
    mem: &'m Mem,
    a0: u64,
    sum: &AddressSummary,
    n: usize,
) -> Option<&'m memory::ObjInfo> {
    let (o, last, aligned) = one_object(mem, a0, sum)?;
    (n > 0 && aligned && last + 4 * n as u64 <= o.size).then_some(o)
}

/// Touches the word at byte `off` past every lane's address, so that the cache misses of
/// scattered lanes overlap instead of queueing one by one.
fn prefetch_lanes(words: &[AtomicU32], ptrs: &[u64], off: u64) {
    for &a in ptrs {
        if let Some(w) = words.get((((a & memory::OFF_MASK) + off) / 4) as usize) {
            crate::kernels::prefetch(w);
        }
    }
}

/// Every lane's `n` words at its own address when all lanes point into one object (not a
/// per-lane one) at aligned offsets, the furthest in bounds: one check for the whole column
/// (branch-free reductions), then a gather loop without per-lane tests (the decode functions'
/// scale and weight reads, scattered over a block or a table). False: nothing written.
fn gather_words(
    mem: &Mem,
    cols: &mut [u64],
    lanes: usize,
    pc: usize,
    dcol: usize,
    n: usize,
    sum: &AddressSummary,
) -> bool {
    let Some(o) = cols
        .get(pc)
        .and_then(|&a0| one_object_words(mem, a0, sum, n))
    else {
        return false;
    };
    // The destination columns and the pointer column are distinct registers (no op's result
    // aliases an operand); split them without copying.
    let (d0, d1) = (dcol * lanes, (dcol + n) * lanes);
    if d1 > cols.len() || (pc < d1 && d0 < pc + lanes) {
        return false;
    }
    let words = mem.words(o.shared, o.idx);
    if o.shared {
        // Scattered rows of a shared buffer miss the cache.
        prefetch_lanes(words, &cols[pc..pc + lanes], 0);
    }
    let (dst, ptrs) = if pc < d0 {
        let (lo, hi) = cols.split_at_mut(d0);
        (&mut hi[..d1 - d0], &lo[pc..pc + lanes])
    } else {
        let (lo, hi) = cols.split_at_mut(pc);
        (&mut lo[d0..d1], &hi[..lanes])
    };
    fn gather<const N: usize>(words: &[AtomicU32], ptrs: &[u64], dst: &mut [u64]) {
        let lanes = ptrs.len();
        let (d, _) = dst.split_at_mut(N * lanes);
        for (l, &a) in ptrs.iter().enumerate() {
            let w = ((a & memory::OFF_MASK) / 4) as usize;
            let src = &words[w..w + N];
            for k in 0..N {
                d[k * lanes + l] = src[k].load(Relaxed) as u64;
            }
        }
    }
    match n {
        1 => gather::<1>(words, ptrs, dst),
        2 => gather::<2>(words, ptrs, dst),
        3 => gather::<3>(words, ptrs, dst),
        4 => gather::<4>(words, ptrs, dst),
        _ => {
            for (l, &a) in ptrs.iter().enumerate() {
                let w = ((a & memory::OFF_MASK) / 4) as usize;
                for (k, x) in words[w..w + n].iter().enumerate() {
                    dst[k * lanes + l] = x.load(Relaxed) as u64;
                }
            }
        }
    }
    true
}

/// When every lane is active and lane `l` addresses `n` words at `addr0 + 4·n·l` of one
/// shared-copy object (the staging pattern `shared[base + lid] = global[base2 + lid]`), where
/// the words of all lanes lie in lane order: the object's (shared?, index) and word range,
/// checked once for bounds and alignment (`sum`: the column's summary with step `4·n`).
fn contiguous(
    mem: &Mem,
    addrs: &[u64],
    sum: &AddressSummary,
    n: usize,
    write: bool,
) -> Option<(bool, u32, std::ops::Range<usize>)> {
    let a0 = *addrs.first()?;
    let step = 4 * n as u64;
    let same = sum.sequential;
    let oi = a0 >> memory::OBJ_SHIFT;
    let o = mem.obj(oi)?;
    let off = a0 & ((1u64 << memory::OBJ_SHIFT) - 1);
    let end = off.checked_add(step * addrs.len() as u64)?;
    if !same || oi == 0 || o.per_lane != 0 || (write && !o.writable) || !off.is_multiple_of(4) {
        return None;
    }
    // `end` is in the same object: the last lane's address is `a0 + step·(lanes − 1)` exactly.
    if end > o.size || (end - step) >> memory::OBJ_SHIFT != 0 {
        return None;
    }
    let range = (off / 4) as usize..(end / 4) as usize;
    (range.end <= mem.words(o.shared, o.idx).len()).then_some((o.shared, o.idx, range))
}

/// Writes lane `l`'s `N` words (the low halves of `src[k][l]`) to `dst[N·l..N·l + N]`: plain
/// stores into batch-owned memory, which the compiler turns into vector shuffles.
fn interleave_words<const N: usize>(dst: &mut [AtomicU32], src: [&[u64]; N]) {
    for (l, d) in dst.chunks_exact_mut(N).enumerate() {
        for (k, w) in d.iter_mut().enumerate() {
            *w.get_mut() = src[k][l] as u32;
        }
    }
}

/// Store counterpart of [`load_words_fast`].
#[allow(clippy::too_many_arguments)]
fn store_words_fast(
    mem: &mut Mem,
    cols: &[u64],
    lanes: usize,
    pc: usize,
    vcol: usize,
    n: usize,
    mask: &Mask,
    dense: bool,
) -> bool {
    let ptrs = &cols[pc..pc + lanes];
    let Some(src) = cols.get(vcol * lanes..(vcol + n) * lanes) else {
        return false;
    };
    if dense
        && let Some((sh, idx, range)) = contiguous(
            mem,
            ptrs,
            &crate::kernels::address_summary(ptrs, memory::OBJ_SHIFT, 4 * n as u64),
            n,
            true,
        )
    {
        if !sh {
            // Batch-owned (Workgroup) memory: nobody else can see it, so plain stores.
            let ws = &mut mem.local[idx as usize][range];
            let c = |k: usize| &src[k * lanes..(k + 1) * lanes];
            match n {
                1 => interleave_words::<1>(ws, [c(0)]),
                2 => interleave_words::<2>(ws, [c(0), c(1)]),
                3 => interleave_words::<3>(ws, [c(0), c(1), c(2)]),
                4 => interleave_words::<4>(ws, [c(0), c(1), c(2), c(3)]),
                _ => {
                    for (l, lw) in ws.chunks_exact_mut(n).enumerate() {
                        for (k, w) in lw.iter_mut().enumerate() {
                            *w.get_mut() = src[k * lanes + l] as u32;
                        }
                    }
                }
            }
            return true;
        }
        let ws = &mem.words(sh, idx)[range];
        for (l, lw) in ws.chunks_exact(n).enumerate() {
            for (k, w) in lw.iter().enumerate() {
                w.store(src[k * lanes + l] as u32, Relaxed);
            }
        }
        return true;
    }
    let (mut cur, mut words, mut size, mut per_lane): (u64, &[AtomicU32], u64, u64) =
        (u64::MAX, &[], 0, 0);
    each_lane!(mask, lanes, dense, |l| {
        let addr = cols[pc + l];
        let oi = addr >> memory::OBJ_SHIFT;
        if oi != cur {
            let Some(o) = mem.obj(oi).filter(|o| o.writable) else {
                return false;
            };
            words = mem.words(o.shared, o.idx);
            (size, per_lane, cur) = (o.size, o.per_lane, oi);
        }
        let off = addr & ((1u64 << memory::OBJ_SHIFT) - 1);
        if !off.is_multiple_of(4) || off + 4 * n as u64 > size {
            return false;
        }
        let w0 = ((per_lane * l as u64 + off) / 4) as usize;
        for (k, w) in words[w0..w0 + n].iter().enumerate() {
            w.store(cols[(vcol + k) * lanes + l] as u32, Relaxed);
        }
    });
    true
}

/// A load of one 8- or 16-bit scalar for every active lane (the decode functions' weights and
/// scales), when all lanes point into one shared or Workgroup object and the furthest one is in
/// bounds: one check for the whole column, every lane's word prefetched first so that the cache
/// misses of scattered blocks overlap, then plain reads. False: take the per-lane path (which
/// reports the faulting lane).
#[allow(clippy::too_many_arguments)]
fn load_narrow_fast(
    mem: &Mem,
    cols: &mut [u64],
    lanes: usize,
    pc: usize,
    dcol: usize,
    off: u32,
    num: Num,
    sum: Option<&AddressSummary>,
) -> bool {
    let Some(sum) = sum else {
        return false;
    };
    let Some((o, last, _)) = cols.get(pc).and_then(|&a0| one_object(mem, a0, sum)) else {
        return false;
    };
    let n = num.bytes();
    if last + off as u64 + n as u64 > o.size {
        return false;
    }
    let words = mem.words(o.shared, o.idx);
    let byte = |a: u64| ((a & memory::OFF_MASK) + off as u64) as usize;
    prefetch_lanes(words, &cols[pc..pc + lanes], off as u64);
    let Some((dst, ptrs)) = eval::cols2(cols, dcol * lanes, pc, lanes) else {
        return false;
    };
    for (d, &a) in dst.iter_mut().zip(ptrs) {
        *d = memory::read_bytes(words, byte(a), n);
    }
    true
}

/// If the leaves are 32-bit scalars at offsets 0, 4, 8, … going to columns 0, 1, 2, …, their
/// count (such values load and store as plain words), else 0.
fn word_run(leaves: &[MemLeaf]) -> usize {
    let ok = leaves.iter().enumerate().all(|(k, x)| {
        matches!(*x, MemLeaf::Scalar { off, num, col } if off == 4 * k as u32 && col == k as u32 && matches!(num, Num::Int(32) | Num::F32))
    });
    if ok { leaves.len() } else { 0 }
}

/// Narrow scalar leaves that cover whole words, each byte once and each leaf inside one word
/// (a vector of bytes): per word, its leaves as (column, shift, mask), so that a lane's value
/// is stored a word at a time. None otherwise, or past 16 words. On the stack: this is worked
/// out for every narrow store an op makes.
fn packed_words(leaves: &[MemLeaf]) -> Option<PackedWords> {
    let extent = usize::try_from(leaf_extent(leaves)).ok()?;
    if extent == 0 || !extent.is_multiple_of(4) || extent > 4 * PACKED_WORDS {
        return None;
    }
    let mut covered = 0u64;
    let mut out = PackedWords {
        words: extent / 4,
        parts: [[(0, 0, 0); 4]; PACKED_WORDS],
        count: [0; PACKED_WORDS],
    };
    for leaf in leaves {
        let MemLeaf::Scalar { off, num, col } = *leaf else {
            return None;
        };
        let (off, bytes) = (off as usize, num.bytes() as usize);
        if !matches!(bytes, 1 | 2 | 4) || off % 4 + bytes > 4 {
            return None;
        }
        let these = ((1u64 << bytes) - 1) << off;
        if covered & these != 0 {
            return None;
        }
        covered |= these;
        let mask = if bytes == 4 {
            u32::MAX
        } else {
            (1 << (8 * bytes)) - 1
        };
        let w = off / 4;
        out.parts[w][out.count[w] as usize] = (col, 8 * (off % 4) as u32, mask);
        out.count[w] += 1;
    }
    (covered == u64::MAX >> (64 - extent)).then_some(out)
}

/// Words [`packed_words`] handles at most (64 bytes).
const PACKED_WORDS: usize = 16;

/// What [`packed_words`] works out: per word (`words` of them), its leaves.
struct PackedWords {
    words: usize,
    parts: [[(u32, u32, u32); 4]; PACKED_WORDS],
    count: [u8; PACKED_WORDS],
}

impl PackedWords {
    /// Word `w`'s leaves: (column, shift, mask).
    fn of(&self, w: usize) -> &[(u32, u32, u32)] {
        &self.parts[w][..self.count[w] as usize]
    }
}

/// Bytes from the start of a value to the end of its last leaf.
fn leaf_extent(leaves: &[MemLeaf]) -> u64 {
    leaves
        .iter()
        .map(|x| match *x {
            MemLeaf::Scalar { off, num, .. } => off as u64 + num.bytes() as u64,
            MemLeaf::Mat { off, .. } => off as u64,
        })
        .max()
        .unwrap_or(0)
}

/// The largest precision a DebugPrintf conversion prints with: Rust's float formatting takes at
/// most 65535 digits, and `%e` prints one more than its precision.
const MAX_PRINTF_PRECISION: usize = u16::MAX as usize - 1;

/// Formats one DebugPrintf line (printf-style %d %i %u %x %X %f %e %g %c %s %% with an
/// optional `v<N>` vector prefix).
pub(crate) fn format_printf(fmt: &str, args: &[(Num, Vec<u64>)]) -> String {
    let mut out = String::new();
    let mut it = fmt.chars().peekable();
    let mut ai = 0;
    while let Some(ch) = it.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        let mut spec = String::new();
        while let Some(&c) = it.peek() {
            if c.is_ascii_digit()
                || c == '.'
                || c == '-'
                || c == '+'
                || c == ' '
                || c == '#'
                || c == 'l'
                || c == 'v'
            {
                spec.push(c);
                it.next();
            } else {
                break;
            }
        }
        let Some(conv) = it.next() else { break };
        if conv == '%' {
            out.push('%');
            continue;
        }
        // Larger precisions print as MAX_PRINTF_PRECISION: every further digit of a double is
        // 0, and the output stays bounded.
        // A '.' without digits is precision 0, as in C.
        let prec: Option<usize> = spec.split('.').nth(1).map(|p| {
            let digits: String = p
                .trim_start_matches('v')
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            match digits.parse::<usize>() {
                Ok(p) => p.min(MAX_PRINTF_PRECISION),
                Err(_) if digits.is_empty() => 0,
                Err(_) => MAX_PRINTF_PRECISION,
            }
        });
        let Some((num, vals)) = args.get(ai) else {
            out.push_str("<missing>");
            continue;
        };
        ai += 1;
        let items: Vec<String> = vals
            .iter()
            .map(|&v| match conv {
                'd' | 'i' => sext(v, num.bits().max(1)).to_string(),
                'u' => trunc(v, num.bits().max(1)).to_string(),
                'x' => format!("{:x}", trunc(v, num.bits().max(1))),
                'X' => format!("{:X}", trunc(v, num.bits().max(1))),
                'c' => char::from_u32(v as u32).unwrap_or('?').to_string(),
                'e' | 'E' => format!("{:.*e}", prec.unwrap_or(6), floats::to_f64(*num, v)),
                'a' | 'A' | 'g' | 'G' => format!("{}", floats::to_f64(*num, v)),
                _ => format!("{:.*}", prec.unwrap_or(6), floats::to_f64(*num, v)),
            })
            .collect();
        out.push_str(&items.join(", "));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Dispatch.

/// The object table of a dispatch: null, the buffers in (set, binding) order, the elements of
/// descriptor arrays, push constants, then the program's own objects.
/// Fails before anything is allocated when the variables of `at_once` concurrently running
/// workgroups would need more than the memory limit (a Private array of 2^24 words in a
/// workgroup of 1024 invocations is 64 GiB: an error, not an abort).
fn check_memory(p: &Program, at_once: u64) -> Result<(), ExecError> {
    let lanes = p.lanes as u128;
    let need = |l: &LocalDef| -> u128 {
        let per = l.bytes.next_multiple_of(8) as u128;
        if l.per_lane { per * lanes } else { per }
    };
    let per_workgroup: u128 = p.locals.iter().map(need).sum();
    let total = per_workgroup * at_once as u128;
    let limit = p.options.memory_limit();
    if total <= limit as u128 {
        return Ok(());
    }
    let largest = p.locals.iter().max_by_key(|l| need(l));
    let detail = largest.map_or(String::new(), |l| {
        format!(
            "; the largest is %{} with {} bytes{}",
            l.var,
            l.bytes,
            if l.per_lane { " per invocation" } else { "" }
        )
    });
    fail(
        ErrorKind::ResourceLimit,
        format!(
            "the dispatch needs {total} bytes for the variables of {at_once} batch(es) of {} \
             workgroup(s) running at once ({per_workgroup} bytes each{detail}), more than the \
             memory limit of {limit} bytes (EngineOptions::max_memory, --max-memory; fewer \
             threads need less)",
            p.pack
        ),
    )
}

fn shared<'a>(
    p: &Program,
    views: &BoundResources<'a>,
    push: &'a [AtomicU32],
    groups: [u32; 3],
) -> Shared<'a> {
    let mut objs = vec![ObjInfo {
        idx: 0,
        shared: true,
        per_lane: 0,
        size: 0,
        writable: false,
    }];
    let mut words: Vec<&[AtomicU32]> = Vec::new();
    let mut binding_obj = std::collections::HashMap::new();
    // A buffer's object: shared by every lane, writable, its words at `idx` of `words`.
    let buffer_object = |idx: usize, v: &BufferView<'a>| ObjInfo {
        idx: idx as u32,
        shared: true,
        per_lane: 0,
        size: v.bytes,
        writable: true,
    };
    let mut add = |objs: &mut Vec<ObjInfo>, v: &BufferView<'a>| {
        objs.push(buffer_object(words.len(), v));
        words.push(v.words);
    };
    for (k, v) in &views.buffers {
        binding_obj.insert(*k, objs.len() as u32);
        add(&mut objs, v);
    }
    let mut array_len = std::collections::HashMap::new();
    for (k, elems) in &views.buffer_arrays {
        binding_obj.insert(*k, objs.len() as u32);
        array_len.insert(*k, elems.len() as u32);
        for v in elems {
            add(&mut objs, v);
        }
    }
    let push_obj = objs.len() as u32;
    add(
        &mut objs,
        &BufferView {
            words: push,
            bytes: views.push_constants.len() as u64,
        },
    );
    objs[push_obj as usize].writable = false;
    // Slots nobody fills are objects of size 0: every access through them is out of bounds.
    let slots = views
        .addressable
        .keys()
        .next_back()
        .map_or(0, |&s| s as usize + 1);
    let mut addressable = vec![
        ObjInfo {
            idx: 0,
            shared: true,
            per_lane: 0,
            size: 0,
            writable: false,
        };
        slots
    ];
    for (&slot, v) in &views.addressable {
        addressable[slot as usize] = buffer_object(words.len(), v);
        words.push(v.words);
    }
    let local_base = objs.len() as u32;
    for (i, l) in p.locals.iter().enumerate() {
        let per = l.bytes.next_multiple_of(8);
        objs.push(ObjInfo {
            idx: i as u32,
            shared: false,
            per_lane: if l.per_lane { per } else { 0 },
            size: l.bytes,
            // Built-in inputs are the engine's to write (SPIR-V forbids stores to Input), and
            // a batch keeps their workgroup-independent values from one workgroup to the next.
            writable: !p.builtin_locals.contains(&(i as u32)),
        });
    }
    Shared {
        objs,
        addressable,
        words,
        binding_obj,
        push_obj,
        local_base,
        groups,
        array_len,
        tiles: None,
    }
}

/// Views of `resources`' buffers over their word copies `bufs` (in the order
/// [`Pipeline::take_words`] made them).
fn views_of<'a>(resources: &'a Resources, bufs: &'a [Vec<AtomicU32>]) -> BoundResources<'a> {
    let mut it = bufs.iter();
    let mut view = |data: &Vec<u8>| BufferView {
        words: it.next().map(Vec::as_slice).unwrap_or(&[]),
        bytes: data.len() as u64,
    };
    let buffers = resources
        .buffers
        .iter()
        .map(|(k, v)| (*k, view(v)))
        .collect();
    let buffer_arrays = resources
        .buffer_arrays
        .iter()
        .map(|(k, v)| (*k, v.iter().map(&mut view).collect()))
        .collect();
    BoundResources {
        buffers,
        buffer_arrays,
        push_constants: &resources.push_constants,
        addressable: Default::default(),
    }
}

impl Pipeline {
    /// Word copies of the bound buffers, in reused allocations where earlier dispatches left
    /// some (see [`Pipeline::give_words`]).
    fn take_words(&self, resources: &Resources) -> Vec<Vec<AtomicU32>> {
        let mut pool = std::mem::take(&mut *self.scratch.lock().unwrap_or_else(|e| e.into_inner()));
        resources
            .buffers
            .values()
            .chain(resources.buffer_arrays.values().flatten())
            .map(|data| {
                // The smallest kept vector that holds the buffer without growing, else any.
                let need = data.len().div_ceil(4);
                let pick = pool
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| v.capacity() >= need)
                    .min_by_key(|(_, v)| v.capacity())
                    .map(|(i, _)| i);
                let mut v = match pick {
                    Some(i) => pool.swap_remove(i),
                    None => pool.pop().unwrap_or_default(),
                };
                memory::fill_from_bytes(&mut v, data);
                v
            })
            .collect()
    }

    /// Keeps the word vectors of a finished dispatch for the next one (at most 16 of them).
    fn give_words(&self, mut bufs: Vec<Vec<AtomicU32>>) {
        bufs.truncate(16);
        *self.scratch.lock().unwrap_or_else(|e| e.into_inner()) = bufs;
    }

    /// Calls a function of the module with one lane per element — the path the engine uses
    /// for functions it invokes itself (decode and per-element functions of
    /// cooperative_matrix2): `lanes` invocations run as batches of up to 1024 lanes in
    /// lockstep, grouped into subgroups as usual.
    ///
    /// `function` is the function's result id. `args[i]` holds parameter `i` column-major:
    /// component `c` (of its flattened scalar components) of lane `l` at `c·lanes + l`, as raw
    /// bits zero-extended to 64; pointer parameters are addresses (see
    /// [`Resources::device_address`]). Returns the result the same way (empty for void).
    /// Buffers in `resources` are read and written; Workgroup and Private memory start zeroed
    /// for each batch; built-in inputs read as zero. Cooperative-matrix values inside the
    /// called function are not supported on this path; a tensor layout or view value is a
    /// handle into the batch's own table (`exec/tensor_values.rs`), so one passed in or returned
    /// names nothing outside the call (a parameter reads as an uninitialized layout).
    pub fn call_function(
        &self,
        function: u32,
        args: &[&[u64]],
        lanes: usize,
        resources: &mut Resources,
    ) -> Result<Vec<u64>, ExecError> {
        let p = &self.p;
        let Some(fi) = p.funcs.iter().position(|f| f.id == function) else {
            return fail(
                ErrorKind::InvalidArgument,
                format!("function %{function} is not part of the compiled pipeline"),
            );
        };
        let f = &p.funcs[fi];
        if args.len() != f.params.len() {
            return fail(
                ErrorKind::InvalidArgument,
                format!(
                    "function %{function} takes {} parameters, {} given",
                    f.params.len(),
                    args.len()
                ),
            );
        }
        for (i, (a, v)) in args.iter().zip(&f.params).enumerate() {
            if a.len() != v.ncols as usize * lanes || v.nmats != 0 {
                return fail(
                    ErrorKind::InvalidArgument,
                    format!(
                        "argument {i}: expected {} values ({} components × {lanes} lanes)",
                        v.ncols as usize * lanes,
                        v.ncols
                    ),
                );
            }
        }
        let bufs: Vec<Vec<AtomicU32>> = resources
            .buffers
            .values()
            .map(|v| memory::from_bytes(v))
            .collect();
        let push = memory::from_bytes(&resources.push_constants);
        let sh = shared(p, &views_of(resources, &bufs), &push, [1, 1, 1]);
        let ret = f.ret.unwrap_or_default();
        let mut out = vec![0u64; ret.ncols as usize * lanes];
        // The engine passes one value per call for some parameters (`Func::uniform_params`); a
        // caller passing differing ones runs every lane of `Op::Once` instead.
        let differs = |(a, v): (&&[u64], &Val)| {
            (0..v.ncols as usize).any(|c| {
                a[c * lanes..(c + 1) * lanes]
                    .windows(2)
                    .any(|w| w[0] != w[1])
            })
        };
        let once_off = args
            .iter()
            .zip(&f.params)
            .zip(&f.uniform_params)
            .any(|(x, &u)| u && differs(x));
        let mut start = 0;
        while start < lanes {
            let n = (lanes - start).min(MAX_LANES);
            let mut b = Batch::new(p, &sh, n);
            b.once_off = once_off;
            for (a, v) in args.iter().zip(&f.params) {
                for c in 0..v.ncols as usize {
                    let dst = (v.col.ix() + c) * n;
                    b.cols[dst..dst + n]
                        .copy_from_slice(&a[c * lanes + start..c * lanes + start + n]);
                }
            }
            let full = b.full;
            b.call(fi, full)?;
            for c in 0..ret.ncols as usize {
                let src = (ret.col.ix() + c) * n;
                out[c * lanes + start..c * lanes + start + n]
                    .copy_from_slice(&b.cols[src..src + n]);
            }
            start += n;
        }
        let all = resources
            .buffers
            .values_mut()
            .chain(resources.buffer_arrays.values_mut().flatten());
        for (v, w) in all.zip(&bufs) {
            memory::to_bytes(w, v);
        }
        Ok(out)
    }

    /// With [`EngineOptions::observe_uniformity`]: every SSA value the dispatches computed per
    /// lane, as (result id, whether the active invocations of some subgroup held different
    /// values at some execution), sorted by id. Phis (edge copies) and matrix results are not
    /// observed.
    pub fn observed_uniformity(&self) -> Vec<(u32, bool)> {
        let seen = self.p.observed.lock().unwrap_or_else(|e| e.into_inner());
        let mut by_id: std::collections::BTreeMap<u32, bool> = Default::default();
        for (&desc, &differs) in seen.iter() {
            if let Some(&id) = self.p.desc_ids.get(desc as usize) {
                *by_id.entry(id).or_insert(false) |= differs;
            }
        }
        by_id.into_iter().collect()
    }

    /// Runs `groups` workgroups over `resources`; buffers are updated in place.
    pub fn dispatch(
        &self,
        resources: &mut Resources,
        groups: [u32; 3],
    ) -> Result<crate::DispatchStats, ExecError> {
        let bufs = self.take_words(resources);
        let stats = self.dispatch_bound(&views_of(resources, &bufs), groups, [0; 3]);
        if stats.is_ok() {
            let all = resources
                .buffers
                .values_mut()
                .chain(resources.buffer_arrays.values_mut().flatten());
            for (v, w) in all.zip(&bufs) {
                memory::to_bytes(w, v);
            }
        }
        self.give_words(bufs);
        stats
    }

    /// Runs workgroups `base .. base + groups` over buffers the caller owns (a Vulkan driver's
    /// memory, say): loads and stores go straight to `resources`' words, so bindings that
    /// alias one another see each other's writes as on a GPU. `NumWorkgroups` reads `groups`,
    /// `WorkgroupId` starts at `base` (vkCmdDispatchBase).
    pub fn dispatch_bound(
        &self,
        resources: &BoundResources<'_>,
        groups: [u32; 3],
        base: [u32; 3],
    ) -> Result<crate::DispatchStats, ExecError> {
        if let Some(&slot) = resources
            .addressable
            .keys()
            .find(|&&s| s > crate::MAX_ADDRESSABLE_SLOT)
        {
            return fail(
                ErrorKind::InvalidArgument,
                format!(
                    "addressable memory slot {slot} is above {}",
                    crate::MAX_ADDRESSABLE_SLOT
                ),
            );
        }
        if let Some(k) = (0..3).find(|&k| base[k] as u64 + groups[k] as u64 > 1 << 32) {
            return fail(
                ErrorKind::InvalidArgument,
                format!(
                    "workgroup ids {} + {} in dimension {k} pass 2^32",
                    base[k], groups[k]
                ),
            );
        }
        if let Some((&(set, binding), v)) = resources
            .buffers
            .iter()
            .chain(
                resources
                    .buffer_arrays
                    .iter()
                    .flat_map(|(k, v)| v.iter().map(move |b| (k, b))),
            )
            .find(|(_, v)| (v.words.len() as u64) * 4 < v.bytes)
        {
            return fail(
                ErrorKind::InvalidArgument,
                format!(
                    "buffer (set {set}, binding {binding}) claims {} bytes but has {} words",
                    v.bytes,
                    v.words.len()
                ),
            );
        }
        let p = &self.p;
        let start = Instant::now();
        if let Some((&(set, binding), buf)) = resources
            .buffers
            .iter()
            .chain(
                resources
                    .buffer_arrays
                    .iter()
                    .flat_map(|(k, v)| v.iter().map(move |b| (k, b))),
            )
            .find(|(_, b)| b.bytes >= memory::MAX_OBJECT_BYTES)
        {
            return fail(
                ErrorKind::InvalidArgument,
                format!(
                    "buffer (set {set}, binding {binding}) has {} bytes; the engine's limit is {}",
                    buf.bytes,
                    memory::MAX_OBJECT_BYTES - 1
                ),
            );
        }
        for b in p.bindings.iter().filter(|b| b.count != 1) {
            // Buffers shorter than the block's static layout are valid Vulkan: accesses past
            // their end are out of bounds (an error, or the robust result), checked per access.
            if !resources.buffer_arrays.contains_key(&(b.set, b.binding)) {
                return fail(
                    ErrorKind::MissingBinding,
                    format!(
                        "binding (set {}, binding {}){} is an array of buffers the shader uses, but no array is bound",
                        b.set,
                        b.binding,
                        b.name.as_ref().map(|n| format!(" {n}")).unwrap_or_default()
                    ),
                );
            }
        }
        for b in p.bindings.iter().filter(|b| b.count == 1) {
            if !resources.buffers.contains_key(&(b.set, b.binding)) {
                return fail(
                    ErrorKind::MissingBinding,
                    format!(
                        "binding (set {}, binding {}){} is used by the shader but not bound",
                        b.set,
                        b.binding,
                        b.name.as_ref().map(|n| format!(" {n}")).unwrap_or_default()
                    ),
                );
            }
        }
        // Push-constant bytes the application did not set are undefined in Vulkan; the engine
        // reads them as 0 (the block is padded to the size the shader declares).
        let padded;
        let push_bytes: &[u8] = if resources.push_constants.len() < p.push_size {
            padded = {
                let mut v = resources.push_constants.to_vec();
                v.resize(p.push_size, 0);
                v
            };
            &padded
        } else {
            resources.push_constants
        };
        let push = memory::from_bytes(push_bytes);
        let mut sh = shared(p, resources, &push, groups);
        sh.tiles = tile_cache(p, resources, groups);
        let total = groups.iter().map(|&g| g as u64).product::<u64>();
        // Batches of `pack` consecutive workgroups (one unless the program packs them).
        let pack = p.pack.max(1) as u64;
        let batches = total.div_ceil(pack);
        let gid = |i: u64| {
            [
                base[0] + (i % groups[0] as u64) as u32,
                base[1] + ((i / groups[0] as u64) % groups[1] as u64) as u32,
                base[2] + (i / (groups[0] as u64 * groups[1] as u64)) as u32,
            ]
        };
        let threads = if p.options.threads == 0 {
            rayon::current_num_threads()
        } else {
            p.options.threads
        };
        let batch_ids = |i: u64| (i * pack..((i + 1) * pack).min(total)).map(gid);
        let at_once = if threads <= 1 || batches <= 1 {
            1
        } else {
            (threads as u64).min(batches)
        };
        check_memory(p, at_once)?;
        let mut stats = DispatchStats::default();
        if threads <= 1 || batches <= 1 {
            let mut b = Batch::new(p, &sh, p.lanes as usize);
            for i in 0..batches {
                b.run_group(batch_ids(i))?;
            }
            b.add_counters(&mut stats);
        } else {
            let pool = worker_pool(threads)?;
            let stop = AtomicBool::new(false);
            let chunk = batches.div_ceil(threads as u64 * 8).max(1);
            let nchunks = batches.div_ceil(chunk);
            // With tensor loads, chunks are taken in the order of `far_apart_order`: as many
            // runs through the grid as there are workers, one chunk from each in turn. Without,
            // in grid order: neighbours share the rows they read in the L3 (the KHR GEMM at
            // 4096³ is about 5 % slower far apart).
            let runs = if p.tensor_loads {
                (threads as u64).min(nchunks)
            } else {
                1
            };
            let per_run = nchunks.div_ceil(runs);
            let next = std::sync::atomic::AtomicU64::new(0);
            let shared_stats = std::sync::Mutex::new(DispatchStats::default());
            // One batch per worker thread for the whole dispatch, taking chunks of workgroups
            // from a shared counter: its register file, arenas, sub-batch and tile-source cache
            // are built once (a fresh batch costs megabytes of page faults, rebuilds every
            // tile's sources and its first engine call builds a sub-batch). Which worker runs a
            // workgroup does not change any result.
            // In grid order, `next` counts workgroup batches and a worker takes at most a
            // chunk, fewer as the grid runs out (half an equal share of what is left, at least
            // one): with 64 workgroups on two workers, whole chunks of four left one worker
            // idle for up to four workgroups at the end. Far apart, `next` counts chunks.
            let take = || -> Option<std::ops::Range<u64>> {
                if runs > 1 {
                    loop {
                        let taken = next.fetch_add(1, Relaxed);
                        if taken >= runs * per_run {
                            return None;
                        }
                        let c = far_apart_order(taken, runs, per_run);
                        if c < nchunks {
                            return Some(c * chunk..((c + 1) * chunk).min(batches));
                        }
                    }
                }
                let mut cur = next.load(Relaxed);
                loop {
                    if cur >= batches {
                        return None;
                    }
                    let size = ((batches - cur) / (2 * threads as u64)).clamp(1, chunk);
                    match next.compare_exchange_weak(cur, cur + size, Relaxed, Relaxed) {
                        Ok(_) => return Some(cur..cur + size),
                        Err(now) => cur = now,
                    }
                }
            };
            let res: Vec<ChunkResult> = pool.broadcast(|_| {
                let mut b = Batch::new(p, &sh, p.lanes as usize);
                loop {
                    if stop.load(Relaxed) {
                        break;
                    }
                    let Some(range) = take() else {
                        break;
                    };
                    for i in range {
                        if let Err(e) = b.run_group(batch_ids(i)) {
                            stop.store(true, Relaxed);
                            return Err((i, e));
                        }
                    }
                }
                b.add_counters(&mut shared_stats.lock().unwrap_or_else(|e| e.into_inner()));
                Ok(())
            });
            stats = shared_stats.into_inner().unwrap_or_else(|e| e.into_inner());
            let mut first: Option<(u64, ExecError)> = None;
            for (i, e) in res.into_iter().filter_map(Result::err) {
                if first.as_ref().is_none_or(|(j, _)| i < *j) {
                    first = Some((i, e));
                }
            }
            if let Some((_, e)) = first {
                return Err(e);
            }
        }
        if let Some(t) = &sh.tiles {
            stats.tiles_reused = t.hits.load(Relaxed);
            stats.tiles_stored = t.stored.load(Relaxed);
        }
        stats.workgroups = total;
        stats.invocations = total * p.group_lanes as u64;
        stats.elapsed = start.elapsed();
        Ok(stats)
    }
}

/// The dispatch's decoded-tile cache: only where a decode function is a pure reader, the
/// module writes buffers only through bound variables and the option allows it.
fn tile_cache(
    p: &Program,
    resources: &BoundResources<'_>,
    groups: [u32; 3],
) -> Option<std::sync::Arc<tiles::TileCache>> {
    // Within a quarter of the memory limit the dispatch's variables are held to.
    let cap = p.options.decoded_tile_cache;
    let written = p.written_bindings.as_ref()?;
    let cap = if cap == 0 {
        0
    } else {
        cap.min(p.options.memory_limit() / 4)
    };
    // Also without a decode function: tiles gathered through a transposing view are kept.
    if cap == 0 {
        return None;
    }
    let mut ranges = Vec::new();
    for k in written {
        let views = resources
            .buffers
            .get(k)
            .into_iter()
            .chain(resources.buffer_arrays.get(k).into_iter().flatten());
        for v in views {
            let r = v.words.as_ptr_range();
            ranges.push((r.start as usize, r.end as usize));
        }
    }
    let learned = (p.plain_verdicts.clone(), groups);
    Some(std::sync::Arc::new(tiles::TileCache::new(
        cap,
        ranges,
        Some(learned),
    )))
}

/// The worker pool of `threads` threads, built on first use and kept: a Vulkan application
/// submits thousands of small dispatches, and starting threads for each cost more than many
/// of them run. A few sizes are kept; other sizes get a pool of their own.
fn worker_pool(threads: usize) -> Result<std::sync::Arc<rayon::ThreadPool>, ExecError> {
    use std::sync::{Arc, Mutex};
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
        return Ok(p.clone());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map(Arc::new)
        .map_err(|e| {
            ExecError::new(
                ErrorKind::InvalidArgument,
                format!("cannot start {threads} threads: {e}"),
            )
        })?;
    if pools.len() < 4 {
        pools.push((threads, pool.clone()));
    }
    Ok(pool)
}

#[allow(dead_code)]
pub(crate) fn kernel_level() -> &'static str {
    kernels::level_name()
}

/// A cooperative matrix's Length: the components each invocation of its scope holds (the
/// elements spread over the scope's lanes, the last ones padded).
fn mat_length(s: MatSlot) -> u64 {
    s.cm.elems().div_ceil(s.scope.max(1) as usize) as u64
}

/// Lane `l` as (scope instance, lane within it), by shifts when the scope is a power of two
/// (always, in practice: a subgroup or a workgroup of such a size): per-lane element ops
/// divided by it twice a lane.
#[derive(Clone, Copy)]
struct ScopeLane {
    scope: usize,
    /// log2(scope) when it is a power of two.
    shift: Option<u32>,
}

impl ScopeLane {
    fn of(s: MatSlot) -> Self {
        let scope = (s.scope as usize).max(1);
        ScopeLane {
            scope,
            shift: scope.is_power_of_two().then(|| scope.trailing_zeros()),
        }
    }

    #[inline(always)]
    fn split(self, l: usize) -> (usize, usize) {
        match self.shift {
            Some(k) => (l >> k, l & (self.scope - 1)),
            None => (l / self.scope, l % self.scope),
        }
    }
}

/// The chunk the `taken`-th request gets when the grid's chunks are cut into `runs` runs of
/// `per_run` and the requests go round the runs: chunks running at the same time lie a run
/// apart. Workgroups that share tiles sit close together in the dispatch order (GPU swizzles put
/// them there for the L2), and two workers running such a pair side by side both miss the tile
/// cache and decode the same tiles at once (q8_0's A tiles: 300 of 7168 reused with two workers
/// taking consecutive chunks); a run apart, a pair's second workgroup runs after its first.
fn far_apart_order(taken: u64, runs: u64, per_run: u64) -> u64 {
    (taken % runs) * per_run + taken / runs
}

/// The lanes of `active` whose value in `col` (one word a lane) is not zero. Branch-free: a
/// condition that differs from lane to lane (a per-element function's bounds test, say)
/// would mispredict a branch per lane (about 5 % of a flash-attention dispatch).
fn nonzero_lanes(col: &[u64], active: &Mask) -> Mask {
    std::array::from_fn(|k| {
        if active[k] == 0 {
            return 0;
        }
        let chunk = col.get(k * 64..).unwrap_or(&[]);
        kernels::nonzero_bits(&chunk[..chunk.len().min(64)]) & active[k]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-wise barrier check agrees with its lane-by-lane definition over random masks
    /// (live, exited and at-the-barrier lanes), lane counts that end mid-word, and group sizes
    /// below, at and above a word.
    #[test]
    fn split_group_of_equals_the_lane_by_lane_definition() {
        let bit = |m: &Mask, l: usize| m[l / 64] >> (l % 64) & 1 != 0;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..4000 {
            let lanes = [MAX_LANES, 128, 100, 64, 33, 1][round % 6].min(MAX_LANES);
            let size = [8, 32, 64, 96, 128, 256][(round / 6) % 6];
            let (mut live, mut exited, mut mask) = ([0u64; MW], [0u64; MW], [0u64; MW]);
            for w in 0..MW {
                // Mostly whole groups at the barrier, sometimes one lane off.
                live[w] = if rnd() % 4 == 0 { rnd() } else { u64::MAX };
                exited[w] = if rnd() % 3 == 0 { rnd() & rnd() } else { 0 };
                mask[w] = live[w] & !exited[w];
                match rnd() % 4 {
                    0 => mask[w] &= rnd(),
                    1 => mask[w] ^= 1 << (rnd() % 64),
                    _ => {}
                }
                mask[w] &= live[w] & !exited[w];
            }
            let running = |l: usize| bit(&live, l) && !bit(&exited, l);
            let want = (0..lanes).step_by(size).find_map(|g0| {
                let group = g0..(g0 + size).min(lanes);
                let mut here = group.clone().filter(|&l| bit(&mask, l));
                let first = here.next()?;
                let whole = 1 + here.count() == group.filter(|&l| running(l)).count();
                (!whole).then_some(first)
            });
            let got = split_group_of(&mask, (&live, &exited), lanes, size);
            assert_eq!(got, want, "lanes {lanes}, size {size}, round {round}");
        }
    }

    /// Every chunk is taken exactly once, and requests that follow each other go to chunks a
    /// run apart.
    #[test]
    fn far_apart_order_takes_every_chunk_once() {
        for (nchunks, runs) in [(16u64, 2u64), (17, 2), (7, 3), (5, 5), (1, 1), (9, 4)] {
            let per_run = nchunks.div_ceil(runs);
            let mut seen = vec![0u32; (runs * per_run) as usize];
            for taken in 0..runs * per_run {
                seen[far_apart_order(taken, runs, per_run) as usize] += 1;
            }
            assert!(
                seen.iter().all(|&n| n == 1),
                "{nchunks} chunks, {runs} runs"
            );
            let second = if runs > 1 { per_run } else { 1 };
            assert_eq!(far_apart_order(1, runs, per_run), second);
        }
    }

    /// The branch-free split of a condition column: inactive lanes and lanes past the column
    /// (a last word of the mask only partly used) are in neither side.
    #[test]
    fn nonzero_lanes_respects_the_mask_and_the_column_length() {
        let col: Vec<u64> = (0..100u64).map(|l| (l % 3 == 0) as u64 * (l + 1)).collect();
        let mut active = [0u64; MW];
        active[0] = !0 ^ 0b10; // lane 1 inactive
        active[1] = (1 << 36) - 1; // lanes 64..100
        let t = nonzero_lanes(&col, &active);
        for l in 0..MW * 64 {
            let on = |m: &Mask| m[l / 64] >> (l % 64) & 1 != 0;
            let want = on(&active) && l < 100 && l % 3 == 0;
            assert_eq!(on(&t), want, "lane {l}");
        }
    }

    #[test]
    fn pipeline_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Pipeline>();
    }

    #[test]
    fn printf_formats_scalars_and_vectors() {
        let f = |x: f32| x.to_bits() as u64;
        let s = format_printf(
            "i=%d u=%u x=%x f=%.2f v=%v3f %%",
            &[
                (Num::Int(32), vec![(-5i32) as u32 as u64]),
                (Num::Int(32), vec![7]),
                (Num::Int(32), vec![255]),
                (Num::F32, vec![f(1.5)]),
                (Num::F32, vec![f(1.0), f(2.5), f(-3.0)]),
            ],
        );
        assert_eq!(s, "i=-5 u=7 x=ff f=1.50 v=1.000000, 2.500000, -3.000000 %");
    }

    #[test]
    fn printf_precisions_are_bounded_and_a_bare_point_is_zero() {
        let one = [(Num::F32, vec![1.0f32.to_bits() as u64])];
        assert_eq!(format_printf("%.f", &one), "1");
        // Beyond Rust's limit (and past u64) the precision is 65534 digits, not a panic.
        for fmt in ["%.70000f", "%.99999999999999999999999e"] {
            let s = format_printf(fmt, &one);
            let digits = s.split('.').nth(1).unwrap();
            assert_eq!(digits.trim_end_matches("e0").len(), 65534, "{fmt}");
        }
    }

    #[test]
    fn integer_semantics_follow_the_spec() {
        // OpSMod takes the divisor's sign, OpSRem the dividend's (SPIR-V 3.52.13).
        assert_eq!(
            bin1(BinOp::SMod, Num::Int(32), (-7i32) as u32 as u64, 3) as u32 as i32,
            2
        );
        assert_eq!(
            bin1(BinOp::SRem, Num::Int(32), (-7i32) as u32 as u64, 3) as u32 as i32,
            -1
        );
        assert_eq!(bin1(BinOp::ShrA, Num::Int(8), 0x80, 3), 0xf0);
        assert_eq!(
            bin1(BinOp::UMulHi, Num::Int(32), 0xffff_ffff, 0xffff_ffff),
            0xffff_fffe
        );
        assert_eq!(
            cvt1(CvtKind::SConv, Num::Int(8), Num::Int(32), 0xff),
            0xffff_ffff
        );
        assert_eq!(
            cvt1(
                CvtKind::FToS,
                Num::F32,
                Num::Int(8),
                (-300f32).to_bits() as u64
            ),
            0x80
        );
        assert_eq!(
            un1(UnOp::FindSMsb, Num::Int(32), (-1i32) as u32 as u64),
            0xffff_ffff
        );
    }
}
