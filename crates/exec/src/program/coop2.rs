//! The cooperative_matrix2 / tensor-addressing part of the instruction set.

use super::{Col, Mat, Val};
use coopmat_tensor::MAX_DIM;

/// How the engine calls DecodeFunc / DecodeVectorFunc when a load names both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DecodePolicy {
    /// DecodeFunc for every element.
    Scalar,
    /// DecodeVectorFunc wherever the spec allows it (memory elements grouped in V-groups),
    /// DecodeFunc elsewhere (the default: what a decode-vector device is free to do, and one
    /// call per V elements instead of V calls; `check_decode` compares it with DecodeFunc).
    #[default]
    Vector,
    /// Alternate: even groups vector, odd groups scalar.
    Mixed,
    /// Vector or scalar per group, from a seeded generator.
    Random(u64),
}

impl std::str::FromStr for DecodePolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "scalar" => DecodePolicy::Scalar,
            "vector" => DecodePolicy::Vector,
            "mixed" => DecodePolicy::Mixed,
            "random" => DecodePolicy::Random(0),
            _ => match s.strip_prefix("random:") {
                Some(n) => DecodePolicy::Random(
                    n.parse()
                        .map_err(|_| format!("bad seed in decode policy {s:?}"))?,
                ),
                None => {
                    return Err(format!(
                        "unknown decode policy {s:?} (scalar, vector, mixed, random[:SEED])"
                    ));
                }
            },
        })
    }
}

impl DecodePolicy {
    /// Whether group number `g` of a load uses the vector form.
    pub(crate) fn vector_for(self, g: usize, salt: u64) -> bool {
        match self {
            DecodePolicy::Scalar => false,
            DecodePolicy::Vector => true,
            DecodePolicy::Mixed => g.is_multiple_of(2),
            DecodePolicy::Random(seed) => {
                // splitmix64 of (seed, salt, group)
                let mut z = seed
                    .wrapping_add(salt.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                    .wrapping_add((g as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9));
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                (z ^ (z >> 31)) & 1 == 1
            }
        }
    }
}

impl C2 {
    /// The op's name in profiles ([`super::Op::kind`]).
    pub fn kind(&self) -> &'static str {
        match self {
            C2::CreateLayout { .. } => "CreateTensorLayout",
            C2::SetLayout { .. } => "TensorLayoutSet",
            C2::CreateView { .. } => "CreateTensorView",
            C2::SetView { .. } => "TensorViewSet",
            C2::Load { .. } => "CmLoadTensor",
            C2::Reduce { .. } => "CmReduce",
            C2::PerElement { .. } => "CmPerElementOp",
            C2::QcomArray(_) => "QcomArray",
            C2::QcomMatrix(_) => "QcomMatrix",
            C2::GetCoord { .. } => "CmGetCoord",
            C2::Transpose { .. } => "CmTranspose",
            C2::Store { .. } => "CmStoreTensor",
        }
    }

    /// The column of a layout or view set's result (its handle), for [`super::Op::result_cols`]
    /// (and so for running a uniform one once, `Op::Once`). None for the other ops, whose
    /// results (if any) are not one column computed from the lane's own registers.
    pub fn value_result(&self) -> Option<Col> {
        match self {
            C2::SetLayout { d, .. } | C2::SetView { d, .. } => Some(*d),
            C2::CreateLayout { .. }
            | C2::CreateView { .. }
            | C2::Load { .. }
            | C2::Reduce { .. }
            | C2::PerElement { .. }
            | C2::QcomArray(_)
            | C2::QcomMatrix(_)
            | C2::GetCoord { .. }
            | C2::Transpose { .. }
            | C2::Store { .. } => None,
        }
    }
}

/// Which layout field an `OpTensorLayout*NV` instruction sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LayoutSet {
    Dimension,
    Stride,
    BlockSize,
    Slice,
    ClampValue,
}

/// Which view field an `OpTensorView*NV` instruction sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ViewSet {
    Dimension,
    Stride,
    Clip,
}

/// A decode function operand of a tensor load.
#[derive(Clone, Debug)]
pub(crate) struct Decode {
    /// DecodeFunc's result id.
    pub func: u32,
    /// DecodeVectorFunc's result id and vector size, if present.
    pub vector: Option<(u32, u32)>,
    /// sizeof(pointee of the decode functions' first parameter): the block size in bytes.
    pub block_bytes: u64,
}

/// Cooperative-matrix2 ops; column and matrix-slot operands as in [`super::Op`].
#[derive(Clone, Debug)]
pub(crate) enum C2 {
    /// OpCreateTensorLayoutNV: a fresh layout's handle into column `d`.
    CreateLayout { d: Col, dims: u32, mode: u32 },
    /// OpTensorLayoutSet*NV / SliceNV: `d = src` with a field set from the argument columns.
    SetLayout {
        kind: LayoutSet,
        d: Col,
        src: Col,
        args: Box<[Col]>,
    },
    /// OpCreateTensorViewNV.
    CreateView {
        d: Col,
        dims: u32,
        has_dim: bool,
        perm: [u32; MAX_DIM],
    },
    /// OpTensorViewSet*NV.
    SetView {
        kind: ViewSet,
        d: Col,
        src: Col,
        args: Box<[Col]>,
    },
    /// OpCooperativeMatrixLoadTensorNV.
    Load {
        d: Mat,
        ptr: Col,
        obj: Mat,
        layout: Col,
        view: Option<Col>,
        decode: Option<Decode>,
        /// Op index for the random policy's salt.
        salt: u32,
    },
    /// OpCooperativeMatrixReduceNV/EXT with its CombineFunc.
    Reduce {
        d: Mat,
        m: Mat,
        mode: coopmat_tensor::ops::ReduceMode,
        func: u32,
    },
    /// OpCooperativeMatrixPerElementOpNV/EXT: Func(row, col, element, extras...).
    /// Extras: (value, true when a matrix of the same shape contributing its element).
    PerElement {
        d: Mat,
        m: Mat,
        func: u32,
        extras: Box<[(Val, bool)]>,
    },
    /// SPV_QCOM_cooperative_matrix_conversion per-lane array ops.
    QcomArray(QcomArray),
    /// SPV_QCOM_cooperative_matrix_conversion between lanes' arrays and a matrix.
    QcomMatrix(QcomMatrix),
    /// OpCooperativeMatrixGetCoordinateEXT: (row, column) of component `idx` of each lane.
    GetCoord { d: Col, m: Mat, idx: Col },
    /// OpCooperativeMatrixTransposeNV.
    Transpose { d: Mat, m: Mat },
    /// OpCooperativeMatrixStoreTensorNV.
    Store {
        ptr: Col,
        m: Mat,
        layout: Col,
        view: Option<Col>,
    },
}

/// Per-lane array operations of SPV_QCOM_cooperative_matrix_conversion.
#[derive(Clone, Debug)]
pub(crate) enum QcomArray {
    /// OpBitCastArrayQCOM: per lane, `slen` elements of `sbits` to `dlen` of `dbits`.
    Bitcast {
        d: Col,
        a: Col,
        sbits: u32,
        slen: u32,
        dbits: u32,
        dlen: u32,
    },
    /// OpExtractSubArrayQCOM: `d[i] = a[start + i]`, `start` a signed 32-bit column.
    SubArray {
        d: Col,
        a: Col,
        slen: u32,
        dlen: u32,
        start: Col,
    },
}

/// Conversions between each lane's array and a cooperative matrix
/// (SPV_QCOM_cooperative_matrix_conversion).
#[derive(Clone, Debug)]
pub(crate) enum QcomMatrix {
    /// OpCompositeConstructCoopMatQCOM: lane i's array (packed uint32 words when
    /// `packed` holds the component width) becomes row/column i.
    Construct {
        d: Mat,
        a: Col,
        alen: u32,
        packed: Option<u32>,
    },
    /// OpCompositeExtractCoopMatQCOM: the inverse.
    Extract {
        d: Col,
        m: Mat,
        dlen: u32,
        packed: Option<u32>,
    },
}
