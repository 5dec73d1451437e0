//! CPU execution engine for SPIR-V compute shaders, cooperative matrices included.
//!
//! A module plus its specialization constants is compiled once into a [`Pipeline`]: ids are
//! resolved to register slots, types to layouts, constants are materialized and blocks are put
//! in structured order. [`Pipeline::dispatch`] then runs every workgroup as one SIMT batch of
//! lanes (all its invocations) under a per-lane active mask; independent workgroups run in
//! parallel on rayon threads. See `DESIGN.md` in this crate for the full design.

mod compile;
pub mod coopvec;
mod error;
mod eval;
mod exec;
mod floats;
mod kernels;
mod memory;
mod program;
mod types;

use std::collections::BTreeMap;
use std::time::Duration;

pub use error::{ErrorKind, ExecError};
pub(crate) use error::{err, fail};
pub use program::{
    BindingInfo, BindingKind, DecodePolicy, EngineOptions, Pipeline, SpecConstants,
    available_memory,
};

/// The buffers and push constants a dispatch reads and writes.
#[derive(Clone, Debug, Default)]
pub struct Resources {
    /// Buffer contents by (set, binding).
    pub buffers: BTreeMap<(u32, u32), Vec<u8>>,
    /// Arrays of buffer descriptors by (set, binding): element `i` is the buffer bound at array
    /// index `i` (a binding declared as an array of blocks).
    pub buffer_arrays: BTreeMap<(u32, u32), Vec<Vec<u8>>>,
    /// Push constant bytes.
    pub push_constants: Vec<u8>,
}

impl Resources {
    /// The PhysicalStorageBuffer address the engine gives the start of buffer (set, binding):
    /// `(i + 1) << 40` for the i-th buffer in (set, binding) order. Stable for a given binding set.
    pub fn device_address(&self, set: u32, binding: u32) -> Option<u64> {
        self.buffers
            .keys()
            .position(|&k| k == (set, binding))
            .map(|i| memory::object_base(i as u32 + memory::FIRST_BUFFER_OBJECT))
    }
}

/// A buffer the caller owns, as the engine sees it: 32-bit words, of which the first `bytes`
/// bytes belong to the buffer (the rest of the last word is never written).
#[derive(Clone, Copy, Debug)]
pub struct BufferView<'a> {
    /// The buffer's memory.
    pub words: &'a [std::sync::atomic::AtomicU32],
    /// The buffer's size in bytes: accesses past it are out of bounds.
    pub bytes: u64,
}

/// The buffers and push constants of [`Pipeline::dispatch_bound`], borrowed from the caller.
/// Device addresses follow [`Resources::device_address`]'s rule over `buffers`' order.
#[derive(Clone, Debug, Default)]
pub struct BoundResources<'a> {
    /// Buffers by (set, binding).
    pub buffers: BTreeMap<(u32, u32), BufferView<'a>>,
    /// Arrays of buffer descriptors by (set, binding).
    pub buffer_arrays: BTreeMap<(u32, u32), Vec<BufferView<'a>>>,
    /// Push constant bytes.
    pub push_constants: &'a [u8],
    /// Memory reachable through device addresses only (PhysicalStorageBuffer pointers a shader
    /// reads from push constants or buffers), by slot: slot `s` starts at device address
    /// [`addressable_base`]`(s)`. A Vulkan driver gives each allocation a slot and hands these
    /// addresses out from vkGetBufferDeviceAddress. Keep slots small (reuse freed ones): the
    /// dispatch's object table has an entry for every slot up to the largest.
    pub addressable: BTreeMap<u64, BufferView<'a>>,
}

/// The largest slot [`BoundResources::addressable`] accepts.
pub const MAX_ADDRESSABLE_SLOT: u64 = 1 << 22;

/// The device address of byte 0 of slot `slot` of [`BoundResources::addressable`].
pub fn addressable_base(slot: u64) -> u64 {
    (memory::FIRST_ADDRESSABLE_OBJECT + slot) << memory::OBJ_SHIFT
}

/// Counters of one dispatch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DispatchStats {
    /// Workgroups run.
    pub workgroups: u64,
    /// Invocations run (workgroups × local size).
    pub invocations: u64,
    /// Sum over batch instructions of their active lanes.
    pub lane_instructions: u64,
    /// Batch instructions issued.
    pub instructions: u64,
    /// Wall time of the dispatch.
    pub elapsed: Duration,
    /// Floating-point or integer operations done by cooperative-matrix MulAdds (2·M·N·K each).
    pub muladd_flops: u64,
    /// Lane-instructions not computed because the divergence analysis proved the result the
    /// same in every lane of the batch: the first active lane computed it and the others took
    /// a copy (counted in `lane_instructions` too).
    pub uniform_copies: u64,
    /// Cooperative-matrix MulAdds run chained into the next one, which reads their result as
    /// its C and nothing else does (in one kernel call with it where the CPU has AVX-512 and
    /// the tiles are 16 wide, the result then kept in registers instead of stored; per scope
    /// instance).
    pub chained_muladds: u64,
    /// Matrix tiles that MulAdds read where a load left them (f16 tiles in Workgroup memory,
    /// widened as the kernel reads them) instead of from the load's result: the tiles of
    /// loads whose result only MulAdds read, with nothing that may write memory between
    /// (per operand and scope instance of a MulAdd group).
    pub tiles_in_place: u64,
    /// Time spent in DecodeFunc/DecodeVectorFunc calls of tensor loads (summed over threads).
    pub decode_time: Duration,
    /// Time spent in cooperative-matrix MulAdds (summed over threads).
    pub muladd_time: Duration,
    /// Tiles of tensor loads kept for reuse (decoded, or read through a transposing view),
    /// and tiles taken from them instead of calling the decode function or gathering the
    /// tile again (`EngineOptions::decoded_tile_cache`).
    pub tiles_stored: u64,
    /// See `tiles_stored`.
    pub tiles_reused: u64,
    /// Batches (and sub-batches of engine calls) built on the storage an earlier dispatch of
    /// the same pipeline left (registers, matrix arenas, local memory), without allocating it.
    pub batches_reused: u64,
    /// Result rows of row-local tile ops copied from the row above instead of computed, their
    /// operand rows the same bits (`EngineOptions::repeated_rows_once`; per scope instance).
    pub repeated_rows: u64,
    /// Matrix copies done by trading storage with a source that is dead after them (a
    /// promoted matrix variable's loads and stores in a loop), per matrix slot (`Op::Move`).
    pub matrix_moves: u64,
    /// With `EngineOptions::profile_ops`, the time each op took in each function, by the
    /// instruction it was compiled from ([`OpTime::by_kind`] sums them by kind; summed over
    /// threads; each op's own time, without the ops it ran inside it), longest first; empty
    /// otherwise.
    pub op_times: Vec<OpTime>,
}

/// What one op took in one function over a dispatch (`EngineOptions::profile_ops`), by the
/// SPIR-V instruction it was compiled from; [`OpTime::by_kind`] sums the instructions of a kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpTime {
    /// The function (its debug name, or `%id`).
    pub function: String,
    /// The engine op's kind (one name per op of the engine's instruction set): one per SPIR-V
    /// instruction, or a fused op standing for several (`IntChain`, `CmMulAddSharedA`, `Once`).
    pub op: &'static str,
    /// The instruction it was compiled from, as the engine's messages name it (`%name = OpX`,
    /// or the opcode of an instruction without a result; a fused op counts under the one it
    /// was compiled at); empty in a summary by kind.
    pub instruction: String,
    /// How many times a batch ran it (once per batch, whatever its active lanes).
    pub calls: u64,
    /// Its own time, without the ops that ran inside it (a callee's, a decode function's).
    pub time: Duration,
}

impl OpTime {
    /// Adds `more` to `into`, one entry per function, op and instruction, and sorts it longest
    /// first (the times of several dispatches, or of a dispatch's workers, as one profile).
    pub fn merge(into: &mut Vec<OpTime>, more: impl IntoIterator<Item = OpTime>) {
        let mut at: rustc_hash::FxHashMap<(String, &'static str, String), usize> = into
            .iter()
            .enumerate()
            .map(|(i, t)| ((t.function.clone(), t.op, t.instruction.clone()), i))
            .collect();
        for m in more {
            let key = (m.function.clone(), m.op, m.instruction.clone());
            match at.get(&key) {
                Some(&i) => {
                    into[i].calls += m.calls;
                    into[i].time += m.time;
                }
                None => {
                    at.insert(key, into.len());
                    into.push(m);
                }
            }
        }
        into.sort_by(|a, b| {
            b.time
                .cmp(&a.time)
                .then(a.op.cmp(b.op))
                .then(a.instruction.cmp(&b.instruction))
        });
    }

    /// `times` summed by function and op kind, the instructions dropped, longest first.
    pub fn by_kind(times: &[OpTime]) -> Vec<OpTime> {
        let mut out = Vec::new();
        OpTime::merge(
            &mut out,
            times.iter().map(|t| OpTime {
                instruction: String::new(),
                ..t.clone()
            }),
        );
        out
    }

    /// `times` as a table, a line each (a header first): share of all op time, own time, calls
    /// and time a call, function, op and instruction (when named). Rows under 0.05 % of the
    /// time are summed in one line.
    pub fn table(times: &[OpTime]) -> String {
        use std::fmt::Write;
        let total: f64 = times.iter().map(|t| t.time.as_secs_f64()).sum();
        let share = |secs: f64| 100.0 * secs / total.max(f64::MIN_POSITIVE);
        let mut out = format!(
            "  {:>6}  {:>10}  {:>10}  {:>10}  function: op",
            "share", "ms", "calls", "ns/call"
        );
        let (shown, rest): (Vec<&OpTime>, Vec<&OpTime>) = times
            .iter()
            .partition(|t| share(t.time.as_secs_f64()) >= 0.05);
        for t in shown {
            let secs = t.time.as_secs_f64();
            let _ = write!(
                out,
                "\n  {:>5.1}%  {:>10.3}  {:>10}  {:>10.0}  {}: {}",
                share(secs),
                secs * 1e3,
                t.calls,
                secs * 1e9 / t.calls.max(1) as f64,
                t.function,
                t.op
            );
            if !t.instruction.is_empty() {
                let _ = write!(out, "  ({})", t.instruction);
            }
        }
        if !rest.is_empty() {
            let secs: f64 = rest.iter().map(|t| t.time.as_secs_f64()).sum();
            let calls: u64 = rest.iter().map(|t| t.calls).sum();
            let _ = write!(
                out,
                "\n  {:>5.1}%  {:>10.3}  {calls:>10}  {:>10}  ({} more rows)",
                share(secs),
                secs * 1e3,
                "",
                rest.len()
            );
        }
        out
    }
}
