//! The instruction set: the pre-decoded program the compiler produces and the executor runs.
//!
//! This module depends on nothing else in the crate (the scalar operation table comes from
//! `coopmat_spirv::scalar_ops`): compiler, evaluator and executor all build on it.

mod coop2;
mod coopvec;

pub use coop2::*;
pub use coopmat_spirv::scalar_ops::{BinOp, CvtKind, TernOp, UnOp};
pub use coopvec::*;
use std::collections::HashMap;

/// Most lanes (invocations) in one batch.
pub const MAX_LANES: usize = 1024;

/// A scalar kind as the engine stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Num {
    /// Boolean (0 or 1).
    Bool,
    /// Integer of 8, 16, 32 or 64 bits (signedness is the instruction's business).
    Int(u8),
    /// IEEE binary16.
    F16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// bfloat16 (SPV_KHR_bfloat16).
    BF16,
    /// OFP8 E4M3 (SPV_EXT_float8): bias 7, no infinities, NaN = S.1111.111.
    E4M3,
    /// OFP8 E5M2 (SPV_EXT_float8): bias 15, IEEE-like infinities and NaNs.
    E5M2,
}

impl Num {
    /// Size in bytes in memory.
    pub fn bytes(self) -> u32 {
        match self {
            Num::Bool => 4,
            Num::Int(w) => w as u32 / 8,
            Num::F16 | Num::BF16 => 2,
            Num::F32 => 4,
            Num::F64 => 8,
            Num::E4M3 | Num::E5M2 => 1,
        }
    }

    /// Bit width of the value.
    pub fn bits(self) -> u32 {
        match self {
            Num::Bool => 1,
            _ => self.bytes() * 8,
        }
    }

    /// Whether it is a floating-point kind.
    pub fn is_float(self) -> bool {
        !matches!(self, Num::Bool | Num::Int(_))
    }
}

/// A cooperative matrix type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CmType {
    /// Component kind.
    pub num: Num,
    /// The component OpTypeInt's signedness (NV MulAdd uses it).
    pub signed: bool,
    /// Scope (Subgroup or Workgroup).
    pub scope: u32,
    /// Rows.
    pub rows: u32,
    /// Columns.
    pub cols: u32,
    /// Use (KHR), 2 (accumulator) for NV.
    pub use_: u32,
    /// Declared with OpTypeCooperativeMatrixNV.
    pub nv: bool,
}

impl CmType {
    /// Elements of one tile.
    pub fn elems(&self) -> usize {
        self.rows as usize * self.cols as usize
    }
    /// Whether the tile is kept as f32 (every float kind up to 32 bits) rather than raw bits.
    pub fn is_f32_arena(&self) -> bool {
        self.num.is_float() && self.num != Num::F64
    }
}

/// One scalar or matrix piece of a value in memory.
#[derive(Clone, Copy, Debug)]
pub enum MemLeaf {
    /// A scalar at byte offset `off` going to lane column `col` (relative).
    Scalar { off: u32, num: Num, col: u32 },
    /// A cooperative matrix stored as each lane's share (component i of lane l at `off + i·size`).
    Mat { off: u32, mat: u32, cm: CmType },
}

/// Engine options.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// Invocations per subgroup: a power of two in 8..=128 (default 32).
    pub subgroup_size: u32,
    /// Rayon threads for independent workgroups; 0 = all cores.
    pub threads: usize,
    /// Vulkan robustBufferAccess results (loads of 0, dropped stores) instead of errors.
    pub robust: bool,
    /// Lane-instructions a single workgroup may execute before the run is stopped (0 = no limit).
    pub instruction_budget: u64,
    /// Print `NonSemantic.DebugPrintf` output to stdout.
    pub printf: bool,
    /// Which of DecodeFunc / DecodeVectorFunc tensor loads call (SPV_NV_cooperative_matrix_decode_vector).
    pub decode_policy: DecodePolicy,
    /// Run both decode forms for every V-group and fail on the first disagreement.
    pub check_decode: bool,
    /// Record, per SSA value, whether the active invocations of a subgroup ever saw different
    /// values ([`Pipeline::observed_uniformity`]): the ground truth a divergence analysis is
    /// checked against. Slower; off by default.
    pub observe_uniformity: bool,
    /// Bytes a dispatch may allocate for the variables of the workgroups it runs at once
    /// (Private and Function per invocation, Workgroup per workgroup); a dispatch that would
    /// need more fails with [`crate::ErrorKind::ResourceLimit`] before allocating. 0: half the
    /// memory the system reports available (16 GiB where it reports none).
    pub max_memory: u64,
    /// Run several small workgroups (fewer than 128 invocations) as one batch when nothing
    /// can tell them apart from separate runs: no operation of Workgroup scope but
    /// OpControlBarrier, whole subgroups. Each workgroup of a batch has its own copy of every
    /// Workgroup variable, and a barrier is checked for each workgroup on its own. Each op's
    /// fixed cost is then shared by more lanes (ggml's matrix-vector shaders and flash
    /// attention's split-K reduction run 32-invocation workgroups). Results are those of
    /// running the workgroups one after another. On by default.
    pub pack_workgroups: bool,
    /// Bytes of decoded tiles a dispatch may keep for reuse: a tensor load whose decode
    /// function would be called with the same arguments over the same memory takes the
    /// results an earlier workgroup computed (DESIGN.md, "Decoded tiles reused"); so does a
    /// load without one that gathers its tile through a transposing view, while that pays.
    /// 0 turns reuse off. Default 128 MiB; never more than a quarter of
    /// [`EngineOptions::memory_limit`].
    pub decoded_tile_cache: u64,
    /// Compute once the rows of a row-local tile op (a MulAdd, a row reduction, a per-element
    /// function the engine folds) whose operand rows repeat the row above them bit for bit,
    /// and copy the result row into the rest (DESIGN.md, "Repeated rows computed once"): the
    /// padded rows of flash attention's tiles. The results are the same bits either way. On
    /// by default.
    pub repeated_rows_once: bool,
    /// Time every op the batches run and return the sums by function and op kind in
    /// [`crate::DispatchStats::op_times`]: where a shader spends its time on the engine. Each op
    /// then costs two clock reads more (tens of nanoseconds), which the times of the smallest
    /// ops include; the call counts are exact. Off by default.
    pub profile_ops: bool,
}

impl EngineOptions {
    /// The memory limit in effect: [`EngineOptions::max_memory`], or its default.
    pub fn memory_limit(&self) -> u64 {
        if self.max_memory != 0 {
            return self.max_memory;
        }
        available_memory().map_or(16 << 30, |avail| avail / 2)
    }
}

/// MemAvailable from /proc/meminfo, in bytes (None where there is no such file): the basis of
/// the default memory limit, and of the command line's input-size limit.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            subgroup_size: 32,
            threads: 0,
            robust: false,
            instruction_budget: 0,
            printf: true,
            decode_policy: DecodePolicy::Vector,
            check_decode: false,
            observe_uniformity: false,
            max_memory: 0,
            pack_workgroups: true,
            decoded_tile_cache: 128 << 20,
            repeated_rows_once: true,
            profile_ops: false,
        }
    }
}

/// Specialization constant values by SpecId: raw bits, zero-extended.
pub type SpecConstants = HashMap<u32, u64>;

/// What kind of descriptor a binding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    /// A storage buffer (StorageBuffer class, or Uniform class with BufferBlock).
    StorageBuffer,
    /// A uniform buffer.
    Uniform,
}

/// One descriptor the entry point uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingInfo {
    /// Descriptor set.
    pub set: u32,
    /// Binding number.
    pub binding: u32,
    /// Storage or uniform buffer.
    pub kind: BindingKind,
    /// Bytes the static layout needs (a trailing runtime array counted with 0 elements); of
    /// each element for a descriptor array.
    pub min_size: usize,
    /// Descriptors in the binding: 1 for a single buffer, N for an array of N, 0 for a
    /// runtime-sized array (as many as are bound).
    pub count: u32,
    /// The variable's (or its block type's) OpName.
    pub name: Option<String>,
}

/// Where a variable's pointer points.
#[derive(Clone, Copy, Debug)]
pub(crate) enum VarAddr {
    /// A descriptor binding (set, binding).
    Binding(u32, u32),
    /// The push-constant block.
    Push,
    /// An engine-owned object (index into `locals`).
    Local(u32),
}

/// An engine-owned memory object.
#[derive(Clone, Debug)]
pub(crate) struct LocalDef {
    /// The OpVariable's result id (for messages).
    pub var: u32,
    /// Bytes (per lane when `per_lane`).
    pub bytes: u64,
    /// One copy per lane (Function, Private, Input) or per batch (Workgroup).
    pub per_lane: bool,
    /// A Private variable (the functions the engine calls see the calling invocation's).
    pub private: bool,
}

/// A built-in input to fill at the start of each workgroup.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BuiltinFill {
    /// The local object.
    pub local: u32,
    /// Byte offset in it.
    pub off: u32,
    /// Which built-in.
    pub builtin: u32,
    /// Bytes per component (4 or 8).
    pub comp_bytes: u32,
}

/// The compiled program.
pub(crate) struct Program {
    pub funcs: Vec<Func>,
    pub entry: u32,
    pub ncols: usize,
    pub mats: Vec<MatSlot>,
    pub mf_len: usize,
    pub mw_len: usize,
    pub const_cols: Vec<(Col, u64)>,
    pub const_mats: Vec<(Mat, u64)>,
    pub var_cols: Vec<(Col, VarAddr)>,
    pub locals: Vec<LocalDef>,
    /// When a batch packs workgroups: each Workgroup variable's local and the first of its
    /// `pack - 1` consecutive copies in `locals`, one for each workgroup after the first (a
    /// variable's address in a lane of workgroup `k` of the batch names copy `k`).
    pub workgroup_copies: Vec<(u32, u32)>,
    pub builtins: Vec<BuiltinFill>,
    /// The locals `builtins` fill (each once): not zeroed between workgroups, not writable.
    pub builtin_locals: Vec<u32>,
    pub private_init: Vec<(Op, u32)>,
    /// Registers (lane columns and matrix slots) of Function variables kept in registers:
    /// zeroed when a workgroup starts, as their memory would be.
    pub promoted: Vec<Val>,
    pub descs: Vec<String>,
    /// Result id of the instruction of each description (0: none).
    pub desc_ids: Vec<u32>,
    /// With `observe_uniformity`: per description index, whether a subgroup's active
    /// invocations saw different values.
    pub observed: std::sync::Mutex<HashMap<u32, bool>>,
    pub bindings: Vec<BindingInfo>,
    pub push_size: usize,
    /// The bindings the module can write, or None when it may write memory no binding
    /// names (`compile::reuse::written_bindings`).
    pub written_bindings: Option<Vec<(u32, u32)>>,
    pub local_size: [u32; 3],
    pub sg: u32,
    /// Lanes of a batch: `pack` workgroups of `group_lanes` invocations.
    pub lanes: u32,
    /// Invocations of one workgroup.
    pub group_lanes: u32,
    /// Workgroups run together in one batch (1 unless [`Program::lanes`] says otherwise: see
    /// `EngineOptions::pack_workgroups`).
    pub pack: u32,
    /// Whether the module loads tensors (OpCooperativeMatrixLoadTensorNV), whose tiles the
    /// dispatch may keep for other workgroups: workers then run chunks of workgroups far apart
    /// in the grid (`far_apart_order`), so that two of them seldom produce the same tile at once.
    pub tensor_loads: bool,
    /// Staging copies ([`Op::LoadStore`]) in the program: each has a slot below this for the
    /// lane shape it last found (`LoadStoreArgs::slot`).
    pub copy_slots: u32,
    /// Per matrix slot that a lazy load ([`CmLoadArgs::lazy`]) writes: where its instances'
    /// records start in a batch's `lazy_tiles` (`u32::MAX` for other slots).
    pub lazy_base: Vec<u32>,
    /// Records of lazy loads in a batch: the instances of every slot lazy loads write.
    pub lazy_records: u32,
    pub options: EngineOptions,
    /// Storage of the batches of finished dispatches, for the next dispatch's batches.
    pub spare: BatchPool,
    /// What earlier dispatches learned about keeping the tiles of loads without a decode
    /// function (`exec::tiles::TileCache::keeps_plain`).
    pub plain_verdicts: std::sync::Arc<PlainVerdicts>,
}

/// The big buffers of a batch (registers, matrix arenas, local memory) kept when it ends, so
/// that the next dispatch of the same program builds its batches without allocating them
/// again: a flash-attention dispatch spent 5 % of its time zeroing a fresh 12 MiB sub-batch
/// (freed chunks come back from the allocator's heap, which has to clear them).
pub(crate) struct BatchStorage {
    /// The batch's lanes: storage only serves a batch of as many.
    pub lanes: usize,
    pub cols: Vec<u64>,
    pub mf: F32Arena,
    pub mw: Vec<u64>,
    pub local: Vec<Vec<std::sync::atomic::AtomicU32>>,
    /// Whether `cols` holds the program's constant columns: no op writes them (every result
    /// has a column of its own), so a batch built on this storage need not fill them again.
    pub consts_set: bool,
}

/// Per slot of load salts (see `exec::tiles`): the verdict of the last dispatch that judged
/// whether that load's tiles are worth keeping, under a key of its workgroup counts. A dispatch
/// with the same counts starts from that verdict instead of keeping tiles on trial: which tiles
/// stay is policy, never a result.
pub(crate) struct PlainVerdicts([std::sync::atomic::AtomicU64; PLAIN_VERDICT_SLOTS]);

/// Slots of [`PlainVerdicts`] (the tile cache's per-load counters have as many).
pub(crate) const PLAIN_VERDICT_SLOTS: usize = 64;

impl Default for PlainVerdicts {
    fn default() -> Self {
        PlainVerdicts(std::array::from_fn(|_| {
            std::sync::atomic::AtomicU64::new(0)
        }))
    }
}

impl PlainVerdicts {
    /// A slot's word: the key with its low two bits cleared, and in them the verdict.
    const KEEP: u64 = 1;
    const SKIP: u64 = 2;

    /// Slot `slot`'s verdict (keep or not) when one was left under `key`.
    pub fn get(&self, slot: usize, key: u64) -> Option<bool> {
        let w = self.0[slot % PLAIN_VERDICT_SLOTS].load(std::sync::atomic::Ordering::Relaxed);
        (w & !3 == key & !3 && w & 3 != 0).then_some(w & 3 == Self::KEEP)
    }

    /// Leaves slot `slot`'s verdict under `key`.
    pub fn set(&self, slot: usize, key: u64, keep: bool) {
        let verdict = if keep { Self::KEEP } else { Self::SKIP };
        self.0[slot % PLAIN_VERDICT_SLOTS]
            .store(key & !3 | verdict, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The f32 matrix arena: `len` zeroed f32s that start on a 64-byte boundary. Slots start a
/// multiple of 16 f32s from the start (see where slots are placed), so each 16-wide tile row
/// is one cache line and a kernel's 64-byte vector load or store of it touches one line, not
/// two (the allocator's large blocks start 16 bytes past a page).
#[derive(Default)]
pub(crate) struct F32Arena {
    buf: Vec<f32>,
    start: usize,
    len: usize,
}

impl F32Arena {
    /// Elements that may come before the first aligned one.
    const SLACK: usize = 15;

    /// `len` zeroed f32s.
    pub fn zeroed(len: usize) -> Self {
        let buf = vec![0.0; len + Self::SLACK];
        // A 4-byte aligned pointer is at most 15 f32s before the next 64-byte boundary;
        // `align_offset` may also decline to answer (usize::MAX): then no shift.
        let start = match buf.as_ptr().align_offset(64) {
            s if s <= Self::SLACK => s,
            _ => 0,
        };
        F32Arena { buf, start, len }
    }
}

impl std::ops::Deref for F32Arena {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        &self.buf[self.start..self.start + self.len]
    }
}

impl std::ops::DerefMut for F32Arena {
    fn deref_mut(&mut self) -> &mut [f32] {
        &mut self.buf[self.start..self.start + self.len]
    }
}

impl BatchStorage {
    fn bytes(&self) -> usize {
        self.cols.len() * 8
            + self.mf.len() * 4
            + self.mw.len() * 8
            + self.local.iter().map(|l| l.len() * 4).sum::<usize>()
    }
}

/// A program's spare [`BatchStorage`], at most [`BatchPool::MAX_SPARE`] of them and, over
/// all programs, [`BatchPool::MAX_BYTES`] (a driver keeps hundreds of pipelines alive).
#[derive(Default)]
pub(crate) struct BatchPool {
    spare: std::sync::Mutex<Vec<BatchStorage>>,
}

/// Bytes held by every [`BatchPool`] together.
static POOLED_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl BatchPool {
    /// Batches of one program alive at once: a main batch and a sub-batch per worker.
    const MAX_SPARE: usize = 16;
    /// Spare storage of all programs together.
    const MAX_BYTES: usize = 256 << 20;

    /// Spare storage for a batch of `lanes` lanes, if any.
    pub fn take(&self, lanes: usize) -> Option<BatchStorage> {
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        let i = spare.iter().position(|s| s.lanes == lanes)?;
        let s = spare.swap_remove(i);
        POOLED_BYTES.fetch_sub(s.bytes(), std::sync::atomic::Ordering::Relaxed);
        Some(s)
    }

    /// Keeps `s` for a later batch, unless the pool is full (then it is freed).
    pub fn put(&self, s: BatchStorage) {
        use std::sync::atomic::Ordering::Relaxed;
        let bytes = s.bytes();
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        if spare.len() >= Self::MAX_SPARE {
            return;
        }
        if POOLED_BYTES.fetch_add(bytes, Relaxed) + bytes > Self::MAX_BYTES {
            POOLED_BYTES.fetch_sub(bytes, Relaxed);
            return;
        }
        spare.push(s);
    }
}

impl Drop for BatchPool {
    fn drop(&mut self) {
        let spare = self.spare.get_mut().unwrap_or_else(|e| e.into_inner());
        let bytes: usize = spare.iter().map(BatchStorage::bytes).sum();
        POOLED_BYTES.fetch_sub(bytes, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A compiled, immutable pipeline: one entry point of one module with its specialization.
pub struct Pipeline {
    pub(crate) p: Program,
    /// Word vectors of earlier dispatches, reused for the buffers of the next ones: a fresh
    /// allocation per dispatch costs a page fault per 4 KiB (0.15–0.3 s for 64 MiB).
    pub(crate) scratch: std::sync::Mutex<Vec<Vec<std::sync::atomic::AtomicU32>>>,
}

// The pre-decoded program: ops with operand slot indices, blocks in structured order.

/// A lane column: one 64-bit word per lane in a batch's register file. Ops name their scalar
/// operands and results by column; a vector of `n` components is `n` consecutive columns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Col(pub u32);

impl Col {
    /// The column's index in the register file.
    #[inline(always)]
    pub fn ix(self) -> usize {
        self.0 as usize
    }
    /// The `k`-th column after this one (component `k` of a vector).
    #[inline(always)]
    pub fn at(self, k: u32) -> Col {
        Col(self.0 + k)
    }
}

impl std::ops::AddAssign<u32> for Col {
    #[inline(always)]
    fn add_assign(&mut self, k: u32) {
        self.0 += k;
    }
}

impl std::ops::Add<u32> for &Col {
    type Output = Col;
    #[inline(always)]
    fn add(self, k: u32) -> Col {
        self.at(k)
    }
}

impl std::ops::Add<u32> for Col {
    type Output = Col;
    #[inline(always)]
    fn add(self, k: u32) -> Col {
        self.at(k)
    }
}

/// A matrix slot: one cooperative-matrix tile per scope instance of a batch. Ops name their
/// cooperative-matrix operands and results by slot; a composite of `n` matrices is `n`
/// consecutive slots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mat(pub u32);

impl Mat {
    /// The slot's index in [`Program`]'s matrix table.
    #[inline(always)]
    pub fn ix(self) -> usize {
        self.0 as usize
    }
    /// The `k`-th slot after this one.
    #[inline(always)]
    pub fn at(self, k: u32) -> Mat {
        Mat(self.0 + k)
    }
}

impl std::ops::AddAssign<u32> for Mat {
    #[inline(always)]
    fn add_assign(&mut self, k: u32) {
        self.0 += k;
    }
}

impl std::ops::Add<u32> for &Mat {
    type Output = Mat;
    #[inline(always)]
    fn add(self, k: u32) -> Mat {
        self.at(k)
    }
}

impl std::ops::Add<u32> for Mat {
    type Output = Mat;
    #[inline(always)]
    fn add(self, k: u32) -> Mat {
        self.at(k)
    }
}

/// A register value: its first lane column and first matrix slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Val {
    /// First lane column.
    pub col: Col,
    /// First matrix slot.
    pub mat: Mat,
    /// Number of lane columns.
    pub ncols: u32,
    /// Number of matrix slots.
    pub nmats: u32,
}

impl Val {
    /// Its lane columns.
    pub fn cols(self) -> impl Iterator<Item = Col> {
        (0..self.ncols).map(move |k| self.col.at(k))
    }
    /// Its matrix slots.
    pub fn mats(self) -> impl Iterator<Item = Mat> {
        (0..self.nmats).map(move |k| self.mat.at(k))
    }
    /// Its lane columns as indices into the register file.
    pub fn col_range(self) -> std::ops::Range<usize> {
        self.col.ix()..self.col.ix() + self.ncols as usize
    }
}

/// Atomic operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum AtomicOp {
    Load,
    Store,
    Exchange,
    CmpXchg,
    IInc,
    IDec,
    IAdd,
    ISub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    FAdd,
    FMin,
    FMax,
}

/// Subgroup (GroupNonUniform) operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum SgOp {
    Elect,
    All,
    Any,
    AllEqual,
    Broadcast,
    BroadcastFirst,
    Ballot,
    InverseBallot,
    BallotBitExtract,
    BallotBitCount,
    BallotFindLsb,
    BallotFindMsb,
    Shuffle,
    ShuffleXor,
    ShuffleUp,
    ShuffleDown,
    QuadBroadcast,
    QuadSwap,
    Rotate,
    Reduce(BinOp),
}

/// An access-chain step.
#[derive(Clone, Copy, Debug)]
pub enum Step {
    /// Add a constant byte offset.
    Const(i64),
    /// Add `index × stride` with the index read from a column (`bits` wide, signed).
    Dyn { idx: Col, bits: u8, stride: i64 },
}

/// An edge to a block, with the phi copies it performs (SPIR-V 2.2.5: phis read their
/// operands as of the end of the predecessor, so the copies are parallel).
#[derive(Clone, Debug, Default)]
pub struct Edge {
    /// Target block index.
    pub target: u32,
    /// (phi value, incoming value).
    pub phis: Vec<(Val, Val)>,
    /// Some phi's incoming value is (or overlaps) another phi of the same target, as in a swap
    /// `a, b = b, a`: every incoming value must be read before any phi is written (SPIR-V
    /// 2.2.5: phis take the values of the end of the predecessor, a parallel copy).
    pub parallel: bool,
    /// Per phi: the incoming value is dead once this edge is taken (the block defining it does
    /// not dominate the target, so no later use can see it without redefining it first), and it
    /// is no constant: when every lane takes the edge its matrix slots may trade storage with
    /// the phi's instead of being copied (a loop's accumulator tiles).
    pub movable: Vec<bool>,
}

/// Block terminators.
#[derive(Clone, Debug)]
pub enum Term {
    /// OpBranch.
    Branch(Edge),
    /// OpBranchConditional.
    Cond { c: Col, t: Edge, f: Edge },
    /// OpSwitch.
    Switch {
        sel: Col,
        bits: u8,
        default: Edge,
        cases: Vec<(u64, Edge)>,
    },
    /// OpReturn / OpReturnValue.
    Return(Option<Val>),
    /// OpKill / OpTerminateInvocation.
    Kill,
    /// OpUnreachable.
    Unreachable,
}

/// One pre-decoded instruction. Operands name lane columns ([`Col`]) and matrix slots ([`Mat`]).
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub enum Op {
    Un(UnArgs),
    Bin(BinArgs),
    /// Consecutive 32-bit integer [`Op::Bin`]s, each reading the result of the one before and
    /// nothing else reading those results (an address computation, fused at compile time by
    /// `Cx::fuse_int_chain`): one pass over the lanes instead of one per op, the intermediate
    /// values never written to registers.
    IntChain(Box<IntChainArgs>),
    Tern(TernArgs),
    /// OpDot (and each component of the matrix products): the products summed in component
    /// order, each multiply and add rounded as the separate float ops would be.
    Dot(DotArgs),
    BfInsert(BfInsertArgs),
    Cvt(CvtArgs),
    /// Reinterpret `na` components of `from` as `nd` components of `to` (same total bits).
    Bitcast(BitcastArgs),
    Select(SelectArgs),
    /// Copy a whole value (columns and matrix slots).
    Copy(CopyArgs),
    /// A [`Op::Copy`] after which the source's matrix slots are dead until written again (the
    /// compiler proved it: a stored value's only use, or a variable stored before it is read
    /// again). Where every lane runs it, each matrix slot trades storage with its source
    /// instead of being copied, as a loop's phis do on their edges (`Edge::movable`).
    Move(CopyArgs),
    /// OpVectorExtractDynamic over `n` components (index `w` bits wide).
    ExtractDyn(ExtractDynArgs),
    InsertDyn(InsertDynArgs),
    /// An access chain with computed indices into a promoted Function variable
    /// (`Cx::promotable`): each lane's offset, in registers, of the part it selects, or
    /// [`IndexChainArgs::PAST`] when an index is past its array (only a load or store through
    /// it faults, as with memory).
    IndexChain(Box<IndexChainArgs>),
    /// An OpLoad through such a chain: each lane's `n` registers from its own offset.
    IndexedGet(IndexedArgs),
    /// The OpStore through such a chain: each active lane's value into its own registers.
    IndexedSet(IndexedArgs),
    Load(LoadArgs),
    Store(StoreArgs),
    /// An OpLoad whose value only a later OpStore uses, with only pure lane ops between them
    /// (a staging copy, `shared[i] = global[j]`), fused at compile time
    /// (`Cx::fuse_staging_copy`): the words move from memory to memory without the value's
    /// registers; the same as the load then the store.
    LoadStore(Box<LoadStoreArgs>),
    CopyMem(CopyMemArgs),
    AccessChain(AccessChainArgs),
    /// OpArrayLength: `(bytes of the object from the pointer on − off) / stride`.
    ArrayLength(ArrayLengthArgs),
    /// Truncate a pointer/integer column to `bits` (OpConvertPtrToU).
    Trunc(TruncArgs),
    Atomic(AtomicArgs),
    /// OpControlBarrier: every invocation of the workgroup, or with `subgroup` (Subgroup
    /// execution scope) of each subgroup that reaches it, must be at it.
    Barrier {
        subgroup: bool,
    },
    Call(CallArgs),
    Sg(SgArgs),
    /// Cooperative-matrix load.
    CmLoad(CmLoadArgs),
    CmStore(CmStoreArgs),
    CmMulAdd(CmMulAddArgs),
    /// Consecutive MulAdds that share their A operand (fused at compile time,
    /// `Cx::fuse_muladds`): the same results as the parts one after the other.
    CmMulAddSharedA(Box<CmMulAddSharedAArgs>),
    CmExtract(CmExtractArgs),
    CmInsert(CmInsertArgs),
    CmSplat(CmSplatArgs),
    CmUn(CmUnArgs),
    CmBin(CmBinArgs),
    CmScale(CmScaleArgs),
    CmCvt(CmCvtArgs),
    Printf(PrintfArgs),
    /// SPV_NV_cooperative_matrix2 / tensor addressing (`coop2`).
    Coop2(Box<C2>),
    /// SPV_NV_cooperative_vector (`coopvec`).
    CoopVec(Box<Cv>),
    /// The pointer to buffer `idx` of a descriptor array (the first index of an access chain
    /// on an array of blocks).
    Descriptor(DescriptorArgs),
    /// An instruction the engine could not compile: its error, raised if it is reached.
    Unsupported(Box<crate::error::ExecError>),
    /// An op whose result the divergence analysis (`coopmat_analysis`) proves the same in
    /// every lane that runs it together (uniform in the batch's workgroup, in the dispatch
    /// when a batch packs several workgroups, or within one call of a function the engine
    /// calls): run for the first active lane only, its result columns then copied to the other
    /// active lanes (`Batch::once`; chosen by `Cx::run_once`). Only pure lane ops and loads of
    /// columns: what one lane computes from its own registers and memory.
    Once(Box<Op>),
}

impl Op {
    /// The op's name in [`crate::OpTime`] profiles (`EngineOptions::profile_ops`): the variant
    /// (a fused op such as [`Op::IntChain`] or [`Op::CmMulAddSharedA`] stands for several
    /// SPIR-V instructions; [`Op::Once`] for the op it runs on one lane).
    pub fn kind(&self) -> &'static str {
        match self {
            Op::Un(_) => "Un",
            Op::Bin(_) => "Bin",
            Op::IntChain(_) => "IntChain",
            Op::Tern(_) => "Tern",
            Op::Dot(_) => "Dot",
            Op::BfInsert(_) => "BfInsert",
            Op::Cvt(_) => "Cvt",
            Op::Bitcast(_) => "Bitcast",
            Op::Select(_) => "Select",
            Op::Copy(_) => "Copy",
            Op::Move(_) => "Move",
            Op::ExtractDyn(_) => "ExtractDyn",
            Op::InsertDyn(_) => "InsertDyn",
            Op::IndexChain(_) => "IndexChain",
            Op::IndexedGet(_) => "IndexedGet",
            Op::IndexedSet(_) => "IndexedSet",
            Op::Load(_) => "Load",
            Op::Store(_) => "Store",
            Op::LoadStore(_) => "LoadStore",
            Op::CopyMem(_) => "CopyMem",
            Op::AccessChain(_) => "AccessChain",
            Op::ArrayLength(_) => "ArrayLength",
            Op::Trunc(_) => "Trunc",
            Op::Atomic(_) => "Atomic",
            Op::Barrier { .. } => "Barrier",
            Op::Call(_) => "Call",
            Op::Sg(_) => "Sg",
            Op::CmLoad(_) => "CmLoad",
            Op::CmStore(_) => "CmStore",
            Op::CmMulAdd(_) => "CmMulAdd",
            Op::CmMulAddSharedA(_) => "CmMulAddSharedA",
            Op::CmExtract(_) => "CmExtract",
            Op::CmInsert(_) => "CmInsert",
            Op::CmSplat(_) => "CmSplat",
            Op::CmUn(_) => "CmUn",
            Op::CmBin(_) => "CmBin",
            Op::CmScale(_) => "CmScale",
            Op::CmCvt(_) => "CmCvt",
            Op::Printf(_) => "Printf",
            Op::Coop2(c) => c.kind(),
            Op::CoopVec(c) => c.kind(),
            Op::Descriptor(_) => "Descriptor",
            Op::Unsupported(_) => "Unsupported",
            Op::Once(_) => "Once",
        }
    }
}

impl Op {
    /// Whether the op only computes lane columns from lane columns: no memory, matrix, control
    /// or fault (a load may move past it).
    pub fn is_pure_lane_op(&self) -> bool {
        match self {
            Op::Un(_)
            | Op::Bin(_)
            | Op::IntChain(_)
            | Op::Tern(_)
            | Op::Dot(_)
            | Op::BfInsert(_)
            | Op::Cvt(_)
            | Op::Bitcast(_)
            | Op::ExtractDyn(_)
            | Op::InsertDyn(_)
            | Op::AccessChain(_)
            | Op::Trunc(_) => true,
            Op::Select(x) => x.nmats == 0,
            Op::Copy(x) | Op::Move(x) => x.d.nmats == 0 && x.a.nmats == 0,
            Op::Once(x) => x.is_pure_lane_op(),
            Op::IndexChain(_) => true,
            // They fault on an index past the array, as the memory access would.
            Op::IndexedGet(_)
            | Op::IndexedSet(_)
            | Op::Load(_)
            | Op::Store(_)
            | Op::LoadStore(_)
            | Op::CopyMem(_)
            | Op::ArrayLength(_)
            | Op::Atomic(_)
            | Op::Barrier { .. }
            | Op::Call(_)
            | Op::Sg(_)
            | Op::CmLoad(_)
            | Op::CmStore(_)
            | Op::CmMulAdd(_)
            | Op::CmMulAddSharedA(_)
            | Op::CmExtract(_)
            | Op::CmInsert(_)
            | Op::CmSplat(_)
            | Op::CmUn(_)
            | Op::CmBin(_)
            | Op::CmScale(_)
            | Op::CmCvt(_)
            | Op::Printf(_)
            | Op::Coop2(_)
            | Op::CoopVec(_)
            | Op::Descriptor(_)
            | Op::Unsupported(_) => false,
        }
    }

    /// The lane columns the op writes its (non-matrix) result to: first column and count.
    /// None for ops without a per-lane result (stores, barriers, calls, matrix results).
    pub fn result_cols(&self) -> Option<(Col, u32)> {
        match self {
            Op::Un(UnArgs { d, n, .. })
            | Op::Bin(BinArgs { d, n, .. })
            | Op::Tern(TernArgs { d, n, .. })
            | Op::BfInsert(BfInsertArgs { d, n, .. })
            | Op::Cvt(CvtArgs { d, n, .. })
            | Op::InsertDyn(InsertDynArgs { d, n, .. }) => Some((*d, *n)),
            Op::Sg(a) => Some((a.d, a.result_components())),
            Op::Select(SelectArgs { d, n, nmats, .. }) => (*nmats == 0).then_some((*d, *n)),
            Op::Bitcast(BitcastArgs { d, nd, .. }) => Some((*d, *nd)),
            Op::Copy(CopyArgs { d, .. })
            | Op::Move(CopyArgs { d, .. })
            | Op::Load(LoadArgs { d, .. }) => {
                (d.nmats == 0 && d.ncols > 0).then_some((d.col, d.ncols))
            }
            Op::ExtractDyn(ExtractDynArgs { d, .. })
            | Op::Dot(DotArgs { d, .. })
            | Op::AccessChain(AccessChainArgs { d, .. })
            | Op::ArrayLength(ArrayLengthArgs { d, .. })
            | Op::Trunc(TruncArgs { d, .. })
            | Op::Atomic(AtomicArgs { d, .. })
            | Op::CmExtract(CmExtractArgs { d, .. }) => Some((*d, 1)),
            Op::CoopVec(c) => c.result_cols(),
            Op::Descriptor(DescriptorArgs { d, .. }) => Some((*d, 1)),
            Op::IntChain(x) => Some((x.d, 1)),
            Op::Once(x) => x.result_cols(),
            Op::Coop2(c) => c.value_result().map(|d| (d, 1)),
            Op::IndexedGet(x) => Some((x.v, x.n)),
            Op::IndexChain(x) => Some((x.d, 1)),
            Op::IndexedSet(_)
            | Op::Store(_)
            | Op::LoadStore(_)
            | Op::CopyMem(_)
            | Op::Barrier { .. }
            | Op::Call(_)
            | Op::CmLoad(_)
            | Op::CmStore(_)
            | Op::CmMulAdd(_)
            | Op::CmMulAddSharedA(_)
            | Op::CmInsert(_)
            | Op::CmSplat(_)
            | Op::CmUn(_)
            | Op::CmBin(_)
            | Op::CmScale(_)
            | Op::CmCvt(_)
            | Op::Printf(_)
            | Op::Unsupported(_) => None,
        }
    }
}

/// A block in structured order.
#[derive(Clone, Debug)]
pub struct Block {
    /// Its ops and, per op, the index of its source description.
    pub ops: Vec<(Op, u32)>,
    /// The terminator and its description index.
    pub term: (Term, u32),
}

/// A compiled function.
#[derive(Clone, Debug)]
pub struct Func {
    /// Result id.
    pub id: u32,
    /// Name for messages.
    pub name: String,
    /// Blocks; index 0 is the entry, the order is the reconvergence priority.
    pub blocks: Vec<Block>,
    /// Where ReturnValue puts its value.
    pub ret: Option<Val>,
    /// Parameter registers.
    pub params: Vec<Val>,
    /// Whether it names a Private variable, itself or through a call: only then does a call
    /// the engine makes itself (decode, combine, per-element functions) need the caller's.
    pub touches_private: bool,
    /// Whether its results depend only on its arguments and the memory it reads, and it writes
    /// no memory but its own Function variables (`compile::reuse::pure_readers`): a decode
    /// function's results may then be reused for the same arguments over the same memory.
    pub pure_reader: bool,
    /// Per parameter: whether the function is compiled to take it as one value per call
    /// (a per-element function's non-matrix extra operands), which its [`Op::Once`] results
    /// may depend on.
    pub uniform_params: Vec<bool>,
}

/// A function that only combines its two scalar parameters: what [`Func::as_fold`] finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    /// `return op(p0, p1)` (`swapped`: `op(p1, p0)`).
    Bin {
        /// The operation.
        op: BinOp,
        /// Its number kind.
        num: Num,
        /// The operands are (p1, p0).
        swapped: bool,
    },
    /// `return p0` (`false`) or `return p1` (`true`).
    Param(bool),
}

/// A per-element function that is one column op on its scalar parameters: what
/// [`Func::as_element_fold`] finds (ggml's flash attention: `max(a, b)`, `exp(x)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementFold {
    /// `return op(params[a])`.
    Un {
        /// The operation.
        op: UnOp,
        /// Its number kind.
        num: Num,
        /// The operand's parameter index.
        a: usize,
    },
    /// `return op(params[a], params[b])`.
    Bin {
        /// The operation.
        op: BinOp,
        /// Its number kind.
        num: Num,
        /// The first operand's parameter index.
        a: usize,
        /// The second operand's parameter index.
        b: usize,
    },
}

impl ElementFold {
    /// Whether the op reads parameter `p`.
    pub fn reads_param(&self, p: usize) -> bool {
        match *self {
            ElementFold::Un { a, .. } => a == p,
            ElementFold::Bin { a, b, .. } => a == p || b == p,
        }
    }
}

impl Func {
    /// The function as an [`ElementFold`]: one block holding one scalar unary or binary op on
    /// scalar parameters, whose result it returns. The engine then runs that op's column kernel
    /// over a tile's elements (what the call would run, without the call).
    pub fn as_element_fold(&self) -> Option<ElementFold> {
        let [block] = self.blocks.as_slice() else {
            return None;
        };
        let Term::Return(Some(r)) = &block.term.0 else {
            return None;
        };
        if !(r.ncols == 1 && r.nmats == 0) {
            return None;
        }
        let param = |c: Col| {
            self.params
                .iter()
                .position(|p| p.ncols == 1 && p.nmats == 0 && p.col == c)
        };
        match block.ops.as_slice() {
            [(Op::Un(u), _)] if u.n == 1 && u.d == r.col => Some(ElementFold::Un {
                op: u.op,
                num: u.num,
                a: param(u.a)?,
            }),
            [(Op::Bin(b), _)] if b.n == 1 && b.d == r.col => Some(ElementFold::Bin {
                op: b.op,
                num: b.num,
                a: param(b.a)?,
                b: param(b.b)?,
            }),
            _ => None,
        }
    }

    /// The function as a [`Fold`], when it is one block of at most one scalar binary op on its
    /// two scalar parameters followed by the return of the result (or of a parameter): a
    /// combine function the engine then folds with [`crate::eval`]'s `bin1`, the per-lane
    /// definition the interpreter's column kernels are tested against, instead of calling it.
    pub fn as_fold(&self) -> Option<Fold> {
        let scalar = |v: &Val| v.ncols == 1 && v.nmats == 0;
        let [p0, p1] = self.params.as_slice() else {
            return None;
        };
        let [block] = self.blocks.as_slice() else {
            return None;
        };
        let Term::Return(Some(r)) = &block.term.0 else {
            return None;
        };
        if !(scalar(p0) && scalar(p1) && scalar(r)) {
            return None;
        }
        match block.ops.as_slice() {
            [] if r.col == p0.col => Some(Fold::Param(false)),
            [] if r.col == p1.col => Some(Fold::Param(true)),
            [(Op::Bin(b), _)] if b.n == 1 && b.d == r.col => {
                let swapped = match (b.a, b.b) {
                    (a, c) if a == p0.col && c == p1.col => false,
                    (a, c) if a == p1.col && c == p0.col => true,
                    _ => return None,
                };
                Some(Fold::Bin {
                    op: b.op,
                    num: b.num,
                    swapped,
                })
            }
            _ => None,
        }
    }
}

/// Where a matrix slot lives.
#[derive(Clone, Copy, Debug)]
pub struct MatSlot {
    /// Its type.
    pub cm: CmType,
    /// Offset in the f32 arena (f32-backed kinds) or the u64 arena (f64 as bits, integers).
    pub off: usize,
    /// Scope instances in a batch (subgroups or 1).
    pub inst: u32,
    /// Lanes per scope instance.
    pub scope: u32,
}

/// Operands of [`Op::Un`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct UnArgs {
    pub op: UnOp,
    pub num: Num,
    pub d: Col,
    pub a: Col,
    pub n: u32,
}

/// Operands of [`Op::Bin`]: `n` components, `d + k = a + k op b + k`; with `a_scalar`
/// (`bs`) every component reads `a` (`b`) itself, a scalar the module splat.
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct BinArgs {
    pub op: BinOp,
    pub num: Num,
    pub d: Col,
    pub a: Col,
    pub b: Col,
    pub n: u32,
    pub bs: bool,
    pub a_scalar: bool,
}

/// Operands of [`Op::IntChain`]: `acc = first`, then each step `acc = acc op other` (or
/// `other op acc`), all on 32-bit integers as [`Op::Bin`] computes them, and `d = acc`, or
/// with `address` the pointer an access chain indexed by `acc` gives.
#[derive(Clone, Debug)]
pub struct IntChainArgs {
    /// The result column.
    pub d: Col,
    /// The first op's left operand.
    pub first: Col,
    /// Whether `first` holds one value in every active lane (read once, from the first).
    pub first_uniform: bool,
    /// The ops in order (the first op's right operand is its step's `other`); at most
    /// [`MAX_CHAIN`].
    pub steps: Vec<ChainStep>,
    /// The access chain whose one index is the chain's value, fused into it.
    pub address: Option<ChainAddress>,
}

/// The [`Op::AccessChain`] that ends an [`Op::IntChain`] (`Cx::fuse_chain_address`): `d =
/// base + offset + sext32(acc) · stride`, or [`crate::memory::POISON`] where that leaves the
/// base's object, as the access chain computes it. Only where that wrapping sum is exact:
/// `|stride| < 2^24`, `|offset| < 2^40` (an index below 2^31 then cannot overflow it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainAddress {
    /// The access chain's base pointer.
    pub base: Col,
    /// Whether `base` holds one value in every active lane (read once, from the first).
    pub base_uniform: bool,
    /// Its constant steps' sum in bytes.
    pub offset: i64,
    /// Bytes per unit of the index.
    pub stride: i64,
}

/// The most steps an [`IntChainArgs`] holds (a longer run of ops is several chains).
pub const MAX_CHAIN: usize = 32;

/// One op of an [`IntChainArgs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainStep {
    /// The op.
    pub op: ChainOp,
    /// Its operand besides the running value.
    pub other: Col,
    /// Whether the running value is the left operand (it matters for ISub and the shifts).
    pub acc_left: bool,
    /// Whether `other` holds one value in every active lane (a constant, a value the
    /// divergence analysis proves uniform): read once, from the first active lane.
    pub uniform: bool,
}

/// The 32-bit integer ops an [`Op::IntChain`] may hold: those that never fault and whose
/// per-lane definition (`eval::bin1`) is wrapping arithmetic, a shift or bit logic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ChainOp {
    IAdd,
    ISub,
    IMul,
    Shl,
    ShrL,
    ShrA,
    And,
    Or,
    Xor,
}

impl ChainOp {
    /// Every chain op with the [`BinOp`] it is.
    pub const ALL: [(ChainOp, BinOp); 9] = [
        (ChainOp::IAdd, BinOp::IAdd),
        (ChainOp::ISub, BinOp::ISub),
        (ChainOp::IMul, BinOp::IMul),
        (ChainOp::Shl, BinOp::Shl),
        (ChainOp::ShrL, BinOp::ShrL),
        (ChainOp::ShrA, BinOp::ShrA),
        (ChainOp::And, BinOp::And),
        (ChainOp::Or, BinOp::Or),
        (ChainOp::Xor, BinOp::Xor),
    ];

    /// The chain op that `op` is, if it is one.
    pub fn of(op: BinOp) -> Option<ChainOp> {
        Self::ALL.iter().find(|(_, b)| *b == op).map(|(c, _)| *c)
    }
}

/// Operands of [`Op::Tern`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct TernArgs {
    pub op: TernOp,
    pub num: Num,
    pub d: Col,
    pub a: Col,
    pub b: Col,
    pub c: Col,
    pub n: u32,
    pub bs: bool,
    pub cs: bool,
}

/// Operands of [`Op::BfInsert`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct BfInsertArgs {
    pub d: Col,
    pub base: Col,
    pub ins: Col,
    pub off: Col,
    pub cnt: Col,
    pub n: u32,
    pub bits: u8,
}

/// Operands of [`Op::Cvt`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CvtArgs {
    pub kind: CvtKind,
    pub from: Num,
    pub to: Num,
    pub d: Col,
    pub a: Col,
    pub n: u32,
}

/// Reinterpret `na` components of `from` as `nd` components of `to` (same total bits).
/// (Operands of [`Op::Bitcast`].)
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct BitcastArgs {
    pub d: Col,
    pub a: Col,
    pub from: Num,
    pub na: u32,
    pub to: Num,
    pub nd: u32,
}

/// Operands of [`Op::Select`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct SelectArgs {
    pub d: Col,
    pub c: Col,
    pub a: Col,
    pub b: Col,
    pub n: u32,
    pub cs: bool,
    pub nmats: u32,
    pub dm: Mat,
    pub am: Mat,
    pub bm: Mat,
}

/// Copy a whole value (columns and matrix slots).
/// (Operands of [`Op::Copy`] and [`Op::Move`].)
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CopyArgs {
    pub d: Val,
    pub a: Val,
}

/// OpVectorExtractDynamic over `n` components (index `w` bits wide).
/// (Operands of [`Op::ExtractDyn`].)
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct ExtractDynArgs {
    pub d: Col,
    pub a: Col,
    pub idx: Col,
    pub n: u32,
    pub w: u32,
}

/// One computed index of an access chain into a promoted variable ([`IndexedArgs`]).
#[derive(Clone, Copy, Debug)]
pub struct IndexStep {
    /// The lanes' index column.
    pub idx: Col,
    /// The index's bit width (SPIR-V indices are read as unsigned).
    pub bits: u32,
    /// Registers one element of the array takes.
    pub stride: u32,
    /// Elements in the array: an index at or past it is out of bounds.
    pub count: u32,
}

/// Operands of [`Op::IndexChain`]: the part selected lies `off + Σ index·stride` registers
/// past the indexed value's first.
#[derive(Clone, Debug)]
pub struct IndexChainArgs {
    /// The offsets' column.
    pub d: Col,
    /// Registers the chain's constant indices skip.
    pub off: u32,
    /// The chain's computed indices, outermost first.
    pub steps: Box<[IndexStep]>,
}

impl IndexChainArgs {
    /// The offset of a lane whose index is past its array.
    pub const PAST: u64 = u64::MAX;
}

/// Operands of [`Op::IndexedGet`] and [`Op::IndexedSet`].
#[derive(Clone, Copy, Debug)]
pub struct IndexedArgs {
    /// The value loaded (get) or stored (set).
    pub v: Col,
    /// Registers of the value.
    pub n: u32,
    /// The first register of the promoted value the chain indexes.
    pub base: Col,
    /// Registers of that value: an offset plus `n` past it is out of bounds.
    pub len: u32,
    /// The lanes' offsets ([`Op::IndexChain`]).
    pub at: Col,
}

/// Operands of [`Op::Dot`]: `d = Σ a[k·sa] · b[k·sb]` over `n` components, `k` ascending.
#[derive(Clone, Copy, Debug)]
pub struct DotArgs {
    /// The float kind.
    pub num: Num,
    /// The result column.
    pub d: Col,
    /// The first operand's first column, and the columns between its components.
    pub a: Col,
    /// See `a`.
    pub sa: u32,
    /// The second operand's first column, and the columns between its components.
    pub b: Col,
    /// See `b`.
    pub sb: u32,
    /// Components.
    pub n: u32,
}

/// Operands of [`Op::InsertDyn`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct InsertDynArgs {
    pub d: Col,
    pub a: Col,
    pub v: Col,
    pub idx: Col,
    pub n: u32,
    pub w: u32,
}

/// Operands of [`Op::Load`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct LoadArgs {
    pub d: Val,
    pub ptr: Col,
    pub leaves: Box<[MemLeaf]>,
}

/// Operands of [`Op::Store`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct StoreArgs {
    pub ptr: Col,
    pub v: Val,
    pub leaves: Box<[MemLeaf]>,
}

/// Operands of [`Op::LoadStore`]: the load, whose result only the store reads.
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct LoadStoreArgs {
    pub load: LoadArgs,
    pub store: StoreArgs,
    /// The load's description (its instruction, for a fault of the load).
    pub load_desc: u32,
    /// Its own slot of a batch's staging shapes (below [`Program::copy_slots`]).
    pub slot: u32,
}

/// Operands of [`Op::CopyMem`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CopyMemArgs {
    pub dst: Col,
    pub src: Col,
    pub bytes: u32,
}

/// Operands of [`Op::AccessChain`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct AccessChainArgs {
    pub d: Col,
    pub base: Col,
    pub steps: Box<[Step]>,
}

/// OpArrayLength: `(bytes of the object from the pointer on − off) / stride`.
/// (Operands of [`Op::ArrayLength`].)
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct ArrayLengthArgs {
    pub d: Col,
    pub ptr: Col,
    pub off: u32,
    pub stride: u32,
}

/// Truncate a pointer/integer column to `bits` (OpConvertPtrToU).
/// (Operands of [`Op::Trunc`].)
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct TruncArgs {
    pub d: Col,
    pub a: Col,
    pub bits: u8,
}

/// Operands of [`Op::Atomic`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct AtomicArgs {
    pub op: AtomicOp,
    pub num: Num,
    pub d: Col,
    pub ptr: Col,
    pub v: Col,
    pub cmp: Col,
}

/// Operands of [`Op::Call`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CallArgs {
    pub f: u32,
    pub args: Box<[(Val, Val)]>,
    pub ret: Option<(Val, Val)>,
}

/// Operands of [`Op::Sg`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct SgArgs {
    pub op: SgOp,
    pub num: Num,
    pub d: Col,
    pub a: Col,
    pub b: Col,
    pub n: u32,
    pub scan: u8,
    pub cluster: u32,
    /// Workgroup scope (OpGroup* only): the group is the whole batch.
    pub workgroup: bool,
    /// Components of a Broadcast's LocalId (2 or 3: a workgroup-scope (x, y[, z]) id).
    pub id_n: u32,
}

impl SgArgs {
    /// Components the op writes: a ballot is a uvec4, tests and ballot queries give one
    /// scalar, the rest give a value shaped like their operand (`n` components).
    pub fn result_components(&self) -> u32 {
        match self.op {
            SgOp::Ballot => 4,
            SgOp::Elect
            | SgOp::All
            | SgOp::Any
            | SgOp::AllEqual
            | SgOp::InverseBallot
            | SgOp::BallotBitExtract
            | SgOp::BallotBitCount
            | SgOp::BallotFindLsb
            | SgOp::BallotFindMsb => 1,
            SgOp::Broadcast
            | SgOp::BroadcastFirst
            | SgOp::Shuffle
            | SgOp::ShuffleXor
            | SgOp::ShuffleUp
            | SgOp::ShuffleDown
            | SgOp::QuadBroadcast
            | SgOp::QuadSwap
            | SgOp::Rotate
            | SgOp::Reduce(_) => self.n,
        }
    }
}

/// Operands of [`Op::Descriptor`].
#[derive(Clone, Debug)]
pub struct DescriptorArgs {
    /// The element's pointer.
    pub d: Col,
    /// The array variable's pointer (its element 0).
    pub base: Col,
    /// The index column.
    pub idx: Col,
    /// The index's width.
    pub bits: u8,
    /// The binding, for the bound count and messages.
    pub set: u32,
    /// The binding number.
    pub binding: u32,
}

/// Cooperative-matrix load.
/// (Operands of [`Op::CmLoad`].)
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CmLoadArgs {
    pub d: Mat,
    pub ptr: Col,
    /// The Stride operand's column, when present.
    pub stride: Option<Col>,
    pub col_major: bool,
    pub pbytes: u32,
    /// Only MulAdds of this block read the result, and nothing writes memory before they run
    /// (`compile::lazy_tile_load`): the executor may leave an f16 tile of Workgroup memory
    /// where it is, for the MulAdds to read there (`Batch::lazy_tiles`), instead of widening
    /// it into the matrix slot.
    pub lazy: bool,
}

/// Operands of [`Op::CmStore`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CmStoreArgs {
    pub ptr: Col,
    pub m: Mat,
    /// The Stride operand's column, when present.
    pub stride: Option<Col>,
    pub col_major: bool,
    pub pbytes: u32,
}

/// Operands of [`Op::CmMulAdd`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CmMulAddArgs {
    pub d: Mat,
    pub a: Mat,
    pub b: Mat,
    pub c: Mat,
    pub flags: u32,
    /// Its result's only use is as the C of a later MulAdd of the same block, and its operands
    /// live until that one (the compiler may chain the two; see [`ChainFirst`]).
    pub feeds_next: bool,
    /// A and B come from lazy loads ([`CmLoadArgs::lazy`]).
    pub lazy: [bool; 2],
}

/// Operands of [`Op::CmMulAddSharedA`]: `d = a·b + c` for each part, in order. The compiler
/// fuses only parts whose D is neither A nor any other part's operand or result, so the order
/// is unobservable and the executor may interleave them.
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CmMulAddSharedAArgs {
    pub a: Mat,
    pub flags: u32,
    /// (d, b, c) of each MulAdd.
    pub parts: Vec<(Mat, Mat, Mat)>,
    /// A chain: every part is the second of two MulAdds, the first sharing this A and B
    /// (`b[p]`, one per part) and taking the part's C: `d = a·b + (first.a·first.b[p] + c)`,
    /// the intermediate sum never stored (the compiler chains a MulAdd whose result only the
    /// next MulAdd reads, as its C: a K loop unrolled in the shader).
    pub first: Option<ChainFirst>,
    /// Operands that come from lazy loads ([`CmLoadArgs::lazy`]).
    pub lazy: LazyOperands,
}

/// Which operands of a [`CmMulAddSharedAArgs`] come from lazy loads ([`CmLoadArgs::lazy`]):
/// their tiles may still be in memory (`Batch::lazy_tiles`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LazyOperands {
    /// A; the chain's first A.
    pub a: [bool; 2],
    /// Each part's B; each part's first B.
    pub b: Vec<[bool; 2]>,
}

impl LazyOperands {
    /// Whether any operand is lazy.
    pub fn any(&self) -> bool {
        self.a.iter().chain(self.b.iter().flatten()).any(|&x| x)
    }
}

/// The first MulAdds of a chained [`CmMulAddSharedAArgs`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct ChainFirst {
    pub a: Mat,
    /// Each part's first B.
    pub b: Vec<Mat>,
}

/// Operands of [`Op::CmExtract`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CmExtractArgs {
    pub d: Col,
    pub m: Mat,
    /// The component index.
    pub idx: ElemIndex,
}

/// Which component of a lane's share of a cooperative matrix an element access names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemIndex {
    /// A literal (OpCompositeExtract/Insert), in range by validation.
    Literal(u32),
    /// A lane column: an access chain with a computed index into a matrix held in a promoted
    /// Function variable; an index past the matrix's Length is an out-of-bounds access.
    Dynamic(Col),
}

/// Operands of [`Op::CmInsert`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CmInsertArgs {
    pub d: Mat,
    pub m: Mat,
    pub v: Col,
    /// The component index.
    pub idx: ElemIndex,
}

/// Operands of [`Op::CmSplat`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CmSplatArgs {
    pub d: Mat,
    pub v: Col,
}

/// Operands of [`Op::CmUn`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CmUnArgs {
    pub op: UnOp,
    pub d: Mat,
    pub a: Mat,
}

/// Operands of [`Op::CmBin`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CmBinArgs {
    pub op: BinOp,
    pub d: Mat,
    pub a: Mat,
    pub b: Mat,
}

/// Operands of [`Op::CmScale`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CmScaleArgs {
    pub d: Mat,
    pub a: Mat,
    pub s: Col,
}

/// Operands of [`Op::CmCvt`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct CmCvtArgs {
    pub kind: CvtKind,
    pub d: Mat,
    pub a: Mat,
}

/// Operands of [`Op::Printf`].
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct PrintfArgs {
    pub fmt: String,
    pub args: Box<[(Col, Num, u32)]>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ops are stored by value in every block and read once per executed instruction: one
    /// fits a cache line (64 bytes today; the largest is `Call`). A variant that grows past it
    /// boxes its arguments instead.
    #[test]
    fn op_fits_a_cache_line() {
        let size = std::mem::size_of::<Op>();
        assert!(size <= 64, "Op is {size} bytes");
    }

    /// The f32 arena starts on a cache line whatever the allocator returns (small blocks from
    /// the heap, large ones mapped), holds `len` zeros, and writes stay inside it.
    #[test]
    fn f32_arena_is_aligned_and_zeroed() {
        for len in [0, 1, 15, 16, 17, 1000, 40_000, 300_000] {
            let mut a = F32Arena::zeroed(len);
            assert_eq!(a.len(), len);
            assert_eq!(a.as_ptr() as usize % 64, 0, "len {len}");
            assert!(a.iter().all(|&x| x == 0.0));
            if let Some(x) = a.last_mut() {
                *x = 1.0;
            }
            assert_eq!(a.iter().filter(|&&x| x == 1.0).count(), (len > 0) as usize);
        }
    }
}
