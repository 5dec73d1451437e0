//! The SPV_NV_cooperative_vector part of the instruction set. A cooperative vector is a
//! per-invocation value of `n` components in `n` lane columns, like any vector; only its loads,
//! stores, matrix-vector products and training accumulations are ops of their own.

use super::{Col, Num};
pub use coopmat_spirv::coopvec::{COMPONENT_TYPES, ComponentType, MatrixLayout};

/// A cooperative-vector op.
#[derive(Clone, Debug)]
pub enum Cv {
    /// OpCooperativeVectorLoadNV.
    Load(CvMemArgs),
    /// OpCooperativeVectorStoreNV.
    Store(CvMemArgs),
    /// OpCooperativeVectorMatrixMulNV / MatrixMulAddNV.
    MatMul(CvMatMulArgs),
    /// OpCooperativeVectorOuterProductAccumulateNV.
    OuterProduct(CvOuterArgs),
    /// OpCooperativeVectorReduceSumAccumulateNV.
    ReduceSum(CvMemArgs),
}

impl Cv {
    /// The op's name in profiles ([`super::Op::kind`]).
    pub fn kind(&self) -> &'static str {
        match self {
            Cv::Load(_) => "CvLoad",
            Cv::Store(_) => "CvStore",
            Cv::MatMul(_) => "CvMatMul",
            Cv::OuterProduct(_) => "CvOuterProductAccumulate",
            Cv::ReduceSum(_) => "CvReduceSumAccumulate",
        }
    }
}

/// A vector at `ptr + off` bytes: `n` components of kind `num` in columns `v..v + n`.
#[derive(Clone, Copy, Debug)]
pub struct CvMemArgs {
    /// The vector's columns (result of a load, operand of a store or accumulation).
    pub v: Col,
    /// Components.
    pub n: u32,
    /// Component kind.
    pub num: Num,
    /// The pointer.
    pub ptr: Col,
    /// The 32-bit byte offset (unsigned).
    pub off: Col,
}

/// A matrix operand in memory: pointer, 32-bit byte offset, interpretation.
#[derive(Clone, Copy, Debug)]
pub struct CvMemOperand {
    /// The pointer.
    pub ptr: Col,
    /// The 32-bit byte offset (unsigned).
    pub off: Col,
    /// The interpretation of the stored elements.
    pub ty: ComponentType,
}

/// `d = M·input (+ bias)` per invocation.
#[derive(Clone, Copy, Debug)]
pub struct CvMatMulArgs {
    /// Result columns (`m` of them).
    pub d: Col,
    /// Result component kind.
    pub d_num: Num,
    /// Whether integer results are signed (MatrixResultSignedComponents).
    pub d_signed: bool,
    /// Output size M.
    pub m: u32,
    /// Logical input size K.
    pub k: u32,
    /// Input columns.
    pub input: Col,
    /// Input component kind.
    pub input_num: Num,
    /// Whether integer inputs are signed (MatrixBSignedComponents).
    pub input_signed: bool,
    /// InputInterpretation.
    pub input_ty: ComponentType,
    /// The matrix.
    pub matrix: CvMemOperand,
    /// Its layout.
    pub layout: MatrixLayout,
    /// Transpose (a K×M stored matrix, optimal layouts only).
    pub transpose: bool,
    /// MatrixStride (row- and column-major layouts).
    pub stride: Option<Col>,
    /// The bias (MulAdd): M consecutive elements.
    pub bias: Option<CvMemOperand>,
}

/// `matrix += a ⊗ b`, atomically per element.
#[derive(Clone, Copy, Debug)]
pub struct CvOuterArgs {
    /// Vector A (M components, the rows).
    pub a: Col,
    /// Vector B (N components, the columns).
    pub b: Col,
    /// M.
    pub m: u32,
    /// N.
    pub n: u32,
    /// Component kind of A and B.
    pub num: Num,
    /// The matrix: pointer, offset and the accumulation type (MatrixInterpretation).
    pub matrix: CvMemOperand,
    /// Its layout.
    pub layout: MatrixLayout,
    /// MatrixStride (row- and column-major layouts).
    pub stride: Option<Col>,
}

impl Cv {
    /// The lane columns it writes: first column and count.
    pub fn result_cols(&self) -> Option<(Col, u32)> {
        match self {
            Cv::Load(a) => Some((a.v, a.n)),
            Cv::MatMul(a) => Some((a.d, a.m)),
            Cv::Store(_) | Cv::OuterProduct(_) | Cv::ReduceSum(_) => None,
        }
    }
}

// The engine's side of the cooperative-vector facts (`coopmat_spirv::coopvec` has the shared ones).

/// Rows of one optimal-layout tile.
pub const TILE_ROWS: u64 = 16;
/// Bytes of one optimal-layout tile row.
pub const TILE_BYTES: u64 = 32;

/// How the engine stores one value of component type `t` (a packed type: one 8-bit value).
pub fn component_num(t: ComponentType) -> Num {
    match t {
        ComponentType::F16 => Num::F16,
        ComponentType::F32 => Num::F32,
        ComponentType::F64 => Num::F64,
        ComponentType::S8 | ComponentType::U8 => Num::Int(8),
        ComponentType::S8Packed | ComponentType::U8Packed => Num::Int(8),
        ComponentType::S16 | ComponentType::U16 => Num::Int(16),
        ComponentType::S32 | ComponentType::U32 => Num::Int(32),
        ComponentType::S64 | ComponentType::U64 => Num::Int(64),
        ComponentType::E4M3 => Num::E4M3,
        ComponentType::E5M2 => Num::E5M2,
    }
}

/// The component type of a SPIR-V scalar of kind `num` and signedness `signed`, if it has one.
pub fn component_of_scalar(num: Num, signed: bool) -> Option<ComponentType> {
    Some(match (num, signed) {
        (Num::F16, _) => ComponentType::F16,
        (Num::F32, _) => ComponentType::F32,
        (Num::F64, _) => ComponentType::F64,
        (Num::E4M3, _) => ComponentType::E4M3,
        (Num::E5M2, _) => ComponentType::E5M2,
        (Num::Int(8), true) => ComponentType::S8,
        (Num::Int(16), true) => ComponentType::S16,
        (Num::Int(32), true) => ComponentType::S32,
        (Num::Int(64), true) => ComponentType::S64,
        (Num::Int(8), false) => ComponentType::U8,
        (Num::Int(16), false) => ComponentType::U16,
        (Num::Int(32), false) => ComponentType::U32,
        (Num::Int(64), false) => ComponentType::U64,
        _ => return None,
    })
}

/// The shape of a matrix in memory: `rows × cols` elements of `elem_bytes` bytes in `layout`,
/// with `stride` bytes between rows (row-major) or columns (column-major; ignored for the
/// optimal layouts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatrixShape {
    /// Rows.
    pub rows: u32,
    /// Columns.
    pub cols: u32,
    /// Bytes of one element.
    pub elem_bytes: u32,
    /// The layout.
    pub layout: MatrixLayout,
    /// Row or column stride in bytes (row- and column-major layouts).
    pub stride: u64,
}

impl MatrixShape {
    /// Elements per optimal-layout tile row.
    fn tile_cols(&self) -> u64 {
        (TILE_BYTES / self.elem_bytes.max(1) as u64).max(1)
    }

    /// Byte offset of element (`r`, `c`) from the matrix start.
    pub fn offset(&self, r: u32, c: u32) -> u64 {
        let (r, c, e) = (r as u64, c as u64, self.elem_bytes as u64);
        match self.layout {
            MatrixLayout::RowMajor => r * self.stride + c * e,
            MatrixLayout::ColumnMajor => c * self.stride + r * e,
            MatrixLayout::InferencingOptimal | MatrixLayout::TrainingOptimal => {
                let tc = self.tile_cols();
                let (tr_n, tc_n) = (
                    (self.rows as u64).div_ceil(TILE_ROWS),
                    (self.cols as u64).div_ceil(tc),
                );
                let (tile_r, tile_c, in_r, in_c) = (r / TILE_ROWS, c / tc, r % TILE_ROWS, c % tc);
                let tile_bytes = TILE_ROWS * TILE_BYTES;
                if self.layout == MatrixLayout::InferencingOptimal {
                    (tile_r * tc_n + tile_c) * tile_bytes + in_r * TILE_BYTES + in_c * e
                } else {
                    (tile_c * tr_n + tile_r) * tile_bytes + in_c * TILE_ROWS * e + in_r * e
                }
            }
        }
    }

    /// Bytes from the matrix start to the end of its last element (row- and column-major), or
    /// the whole padded tile grid (optimal layouts): what a converter writes and an access
    /// must find in bounds.
    pub fn size(&self) -> u64 {
        if self.rows == 0 || self.cols == 0 {
            return 0;
        }
        let e = self.elem_bytes as u64;
        // Saturating: a hostile shape must not overflow; no buffer is u64::MAX bytes long.
        let (rows, cols) = (self.rows as u64, self.cols as u64);
        match self.layout {
            MatrixLayout::RowMajor => (rows - 1)
                .saturating_mul(self.stride)
                .saturating_add(cols * e),
            MatrixLayout::ColumnMajor => (cols - 1)
                .saturating_mul(self.stride)
                .saturating_add(rows * e),
            MatrixLayout::InferencingOptimal | MatrixLayout::TrainingOptimal => rows
                .div_ceil(TILE_ROWS)
                .saturating_mul(cols.div_ceil(self.tile_cols()))
                .saturating_mul(TILE_ROWS * TILE_BYTES),
        }
    }
}
