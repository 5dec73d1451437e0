//! The ggml reference side of coopmat (GGML-FACTS.md):
//!
//! * [`quants`]: ggml block formats (f16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_k..q6_k, iq4_nl,
//!   mxfp4): exact dequantization and a deterministic quantizer.
//! * [`matmul`]: the f64 reference of ggml's MUL_MAT as the cm2 shaders compute it.
//! * [`dispatch`]: how ggml-vulkan dispatches the `matmul_*_cm2` shaders (bindings, push
//!   constants, specialization constants, workgroup counts) as plain data.
//! * [`flash_attn`]: the f64 reference of flash attention and the facts of the
//!   `flash_attn_*_cm2` interface.
//!
//! Nothing here depends on an engine crate.

pub mod dispatch;
pub mod f16;
pub mod flash_attn;
pub mod matmul;
pub mod quants;

pub use dispatch::{
    BindingRole, Dispatch, DispatchBinding, MatmulParams, Variant, cm2_matmul_dispatch,
};
pub use quants::{GgmlType, dequantize_block, dequantize_row, quantize_block, quantize_row};

/// Errors of the ggml side; each names what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GgmlError {
    /// A block of the wrong byte length.
    #[error("{ty:?}: block of {got} bytes (or a trailing partial block)")]
    BlockSize {
        /// Type.
        ty: GgmlType,
        /// Bytes given.
        got: usize,
    },
    /// A length that is not a multiple of the block's element count.
    #[error("{ty:?}: {n} elements is not a multiple of the block size {k}")]
    NotBlockMultiple {
        /// Type.
        ty: GgmlType,
        /// Elements given.
        n: usize,
        /// QUANT_K.
        k: usize,
    },
    /// A shader name this crate does not know.
    #[error("unknown cm2 shader {0:?}")]
    UnknownShader(String),
    /// Bad dispatch or reference parameters.
    #[error("{0}")]
    Params(String),
}
