//! Pure semantics of the tensor-addressing family, for the CPU engine to call:
//!
//! * [`layout`]: immutable [`TensorLayout`] / [`TensorView`] values and every
//!   `OpTensorLayout*NV` / `OpTensorView*NV` instruction (SPV_NV_tensor_addressing).
//! * [`address`]: the SPV_NV_cooperative_matrix2 coordinate pipeline of
//!   `OpCooperativeMatrixLoadTensorNV` / `StoreTensorNV` (clip, view permutation, span,
//!   offset, clamp, block coordinate, stride), in 64-bit arithmetic.
//! * [`decode`]: SPV_NV_cooperative_matrix_decode_vector V-groups.
//! * [`qcom`]: SPV_QCOM_cooperative_matrix_conversion row/column ownership and word packing.
//! * [`ops`]: Reduce, PerElementOp, Transpose and ConvertUse on dense matrices.
//!
//! Nothing here knows about the engine: matrices are dense row-major slices, elements are
//! generic, and everything that the specs call undefined behaviour is reported, not guessed.

pub mod address;
pub mod decode;
pub mod layout;
pub mod ops;
pub mod qcom;

pub use address::{
    Access, ElementSource, TensorElement, element_source, load_sources, store_sources,
};
pub use decode::{
    DecodeVectorCalls, DecodeVectorGroup, VectorMember, decode_vector_calls, decode_vector_groups,
};
pub use layout::{ClampMode, Coord, LayoutFields, MAX_DIM, TensorLayout, TensorView};

/// Errors of the tensor semantics. Each names the instruction or pipeline step that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TensorError {
    /// A tensor layout or view dimension count outside 1..=5.
    #[error("{what}: dimension count {dims} is outside 1..=5")]
    BadDimensionCount {
        /// The instruction or type.
        what: &'static str,
        /// The offending count.
        dims: u32,
    },
    /// An instruction got the wrong number of per-dimension operands.
    #[error("{op}: expected {expected} operands, got {got}")]
    OperandCount {
        /// The instruction.
        op: &'static str,
        /// How many the object's dimension count requires.
        expected: usize,
        /// How many were given.
        got: usize,
    },
    /// A TensorClampMode value not in the grammar.
    #[error("unknown TensorClampMode {0}")]
    BadClampMode(u32),
    /// The view type's p operands are not a permutation of 0..VDim.
    #[error("OpTypeTensorViewNV: {0:?} is not a permutation of 0..{len}", len = .0.len())]
    BadPermutation(Vec<u32>),
    /// A division or modulo by zero in the pipeline (undefined in the spec).
    #[error("{step}: {what}[{dim}] is 0 (division by zero, undefined behaviour)")]
    ZeroDivisor {
        /// Pipeline step (spec function name).
        step: &'static str,
        /// Which field.
        what: &'static str,
        /// Which dimension.
        dim: usize,
    },
    /// A view without dimensions on a layout of a different dimension count.
    #[error(
        "linearToViewCoord: view has no dimensions, so it uses the layout span, but VDim {view} != LDim {layout}"
    )]
    ViewLayoutMismatch {
        /// VDim.
        view: usize,
        /// LDim.
        layout: usize,
    },
    /// A matrix coordinate outside the matrix.
    #[error("matrix coordinate ({row}, {col}) outside a {rows}x{cols} matrix")]
    CoordOutOfMatrix {
        /// Row.
        row: u32,
        /// Column.
        col: u32,
        /// Matrix rows.
        rows: u32,
        /// Matrix columns.
        cols: u32,
    },
    /// A 64-bit overflow in an address calculation.
    #[error("{0}: 64-bit overflow in the address calculation")]
    Overflow(&'static str),
    /// DecodeVectorFunc with blockSize[LDim-1] not a multiple of V (UB per the spec).
    #[error(
        "DecodeVectorFunc: blockSize[LDim-1] = {block_size} is not a multiple of the vector size {v} (undefined behaviour)"
    )]
    DecodeVectorBlockSize {
        /// blockSize[LDim-1].
        block_size: u32,
        /// Vector component count.
        v: u32,
    },
    /// A decode vector size other than 2, 4 or 8.
    #[error("DecodeVectorFunc: vector size {0} is not 2, 4 or 8")]
    BadVectorSize(u32),
    /// A shape rule of an operation was broken.
    #[error("{op}: {msg}")]
    Shape {
        /// The operation.
        op: &'static str,
        /// What was wrong.
        msg: String,
    },
}
