//! CPU execution engine for SPIR-V compute shaders, cooperative matrices included.
//!
//! A module plus its specialization constants is compiled once into a [`Pipeline`]: ids are
//! resolved to register slots, types to layouts, constants are materialized and blocks are put
//! in structured order. [`Pipeline::dispatch`] then runs every workgroup as one SIMT batch of
//! lanes (all its invocations) under a per-lane active mask; independent workgroups run in
//! parallel on rayon threads. See `DESIGN.md` in this crate for the full design.

mod compile;
mod coop2;
mod exec;
mod floats;
mod kernels;
mod memory;
mod ops;
mod types;

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

pub use compile::Pipeline;
pub use coop2::DecodePolicy;

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
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            subgroup_size: 32,
            threads: 0,
            robust: false,
            instruction_budget: 0,
            printf: true,
            decode_policy: DecodePolicy::Scalar,
            check_decode: false,
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
    /// Bytes the static layout needs (a trailing runtime array counted with 0 elements).
    pub min_size: usize,
    /// The variable's (or its block type's) OpName.
    pub name: Option<String>,
}

/// The buffers and push constants a dispatch reads and writes.
#[derive(Clone, Debug, Default)]
pub struct Resources {
    /// Buffer contents by (set, binding).
    pub buffers: BTreeMap<(u32, u32), Vec<u8>>,
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
    /// Time spent in DecodeFunc/DecodeVectorFunc calls of tensor loads (summed over threads).
    pub decode_time: Duration,
    /// Time spent in cooperative-matrix MulAdds (summed over threads).
    pub muladd_time: Duration,
}

/// An execution or compilation error: what went wrong and where.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{what}{}", if .place.is_empty() { String::new() } else { format!(" (at {})", .place) })]
pub struct ExecError {
    /// What went wrong.
    pub what: String,
    /// Where: instruction, function, workgroup and local invocation, address.
    pub place: String,
}

impl ExecError {
    pub(crate) fn new(what: impl Into<String>) -> ExecError {
        ExecError {
            what: what.into(),
            place: String::new(),
        }
    }
}

pub(crate) fn err<T>(what: impl Into<String>) -> Result<T, ExecError> {
    Err(ExecError::new(what))
}
