//! SPV_NV_cooperative_matrix2 / SPV_NV_tensor_addressing support shared by the compiler
//! (`compile/coop2.rs`) and the executor (`exec/coop2.rs`).
//!
//! Tensor layouts and views are immutable values kept in ordinary lane columns (one copy per
//! lane, like any SSA value), so they can live in Function/Private variables and flow through
//! phis: the compiler gives `OpTypeTensorLayoutNV` the shape of a `uint[LAYOUT_COLS]` array
//! and `OpTypeTensorViewNV` that of a `uint[VIEW_COLS]` array. The encoding stores every
//! field, static ones (dimension count, clamp mode, permutation) included, so an op needs only
//! the value. The semantics themselves come from `coopmat_tensor`.

use crate::ExecError;
use coopmat_tensor::{ClampMode, MAX_DIM, TensorLayout, TensorView};

/// Columns of a tensor layout value: dims, clamp mode, blockSize[5], layoutDimension[5],
/// stride[5], offset[5], span[5], clampValue.
pub(crate) const LAYOUT_COLS: u32 = 28;
/// Columns of a tensor view value: dims, hasDimensions, permutation[5], viewDimension[5],
/// viewStride[5], clip (rowOffset, rowSpan, colOffset, colSpan).
pub(crate) const VIEW_COLS: u32 = 21;
/// A type id no module uses (ids are < bound ≤ 2^22 in practice): the `uint` element of the
/// arrays that stand for layout and view values.
pub(crate) const FAKE_U32_TYPE: u32 = u32::MAX - 7;

/// How the engine calls DecodeFunc / DecodeVectorFunc when a load names both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DecodePolicy {
    /// DecodeFunc for every element (the default).
    #[default]
    Scalar,
    /// DecodeVectorFunc wherever the spec allows it (memory elements grouped in V-groups),
    /// DecodeFunc elsewhere.
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

/// Cooperative-matrix2 ops; column and matrix-slot operands as in [`crate::ops::Op`].
#[derive(Clone, Debug)]
pub(crate) enum C2 {
    /// OpCreateTensorLayoutNV: write a fresh layout into columns `d..d+LAYOUT_COLS`.
    CreateLayout { d: u32, dims: u32, mode: u32 },
    /// OpTensorLayoutSet*NV / SliceNV: `d = src` with a field set from the argument columns.
    SetLayout {
        kind: LayoutSet,
        d: u32,
        src: u32,
        args: Box<[u32]>,
    },
    /// OpCreateTensorViewNV.
    CreateView {
        d: u32,
        dims: u32,
        has_dim: bool,
        perm: [u32; MAX_DIM],
    },
    /// OpTensorViewSet*NV.
    SetView {
        kind: ViewSet,
        d: u32,
        src: u32,
        args: Box<[u32]>,
    },
    /// OpCooperativeMatrixLoadTensorNV.
    Load {
        d: u32,
        ptr: u32,
        obj: u32,
        layout: u32,
        view: Option<u32>,
        decode: Option<Decode>,
        /// Op index for the random policy's salt.
        salt: u32,
    },
    /// OpCooperativeMatrixReduceNV/EXT with its CombineFunc.
    Reduce {
        d: u32,
        m: u32,
        mode: coopmat_tensor::ops::ReduceMode,
        func: u32,
    },
    /// OpCooperativeMatrixPerElementOpNV/EXT: Func(row, col, element, extras...).
    /// Extras: (value, true when a matrix of the same shape contributing its element).
    PerElement {
        d: u32,
        m: u32,
        func: u32,
        extras: Box<[(crate::ops::Val, bool)]>,
    },
    /// OpBitCastArrayQCOM: per lane, `slen` elements of `sbits` to `dlen` of `dbits`.
    QBitcast {
        d: u32,
        a: u32,
        sbits: u32,
        slen: u32,
        dbits: u32,
        dlen: u32,
    },
    /// OpExtractSubArrayQCOM: `d[i] = a[start + i]`, `start` a signed 32-bit column.
    QSubArray {
        d: u32,
        a: u32,
        slen: u32,
        dlen: u32,
        start: u32,
    },
    /// OpCompositeConstructCoopMatQCOM: lane i's array (packed uint32 words when
    /// `packed` holds the component width) becomes row/column i.
    QConstruct {
        d: u32,
        a: u32,
        alen: u32,
        packed: Option<u32>,
    },
    /// OpCompositeExtractCoopMatQCOM: the inverse.
    QExtract {
        d: u32,
        m: u32,
        dlen: u32,
        packed: Option<u32>,
    },
    /// OpCooperativeMatrixGetCoordinateEXT: (row, column) of component `idx` of each lane.
    GetCoord { d: u32, m: u32, idx: u32 },
    /// OpCooperativeMatrixTransposeNV.
    Transpose { d: u32, m: u32 },
    /// OpCooperativeMatrixStoreTensorNV.
    Store {
        ptr: u32,
        m: u32,
        layout: u32,
        view: Option<u32>,
    },
}

/// A layout from its encoding (fields are replayed through the `coopmat_tensor` setters so
/// every invariant of the type holds).
pub(crate) fn layout_from(c: &[u64]) -> Result<TensorLayout, ExecError> {
    let te = |e: coopmat_tensor::TensorError| ExecError::new(e.to_string());
    let w = |i: usize| c[i] as u32;
    let dims = w(0) as usize;
    if !(1..=MAX_DIM).contains(&dims) {
        return Err(ExecError::new(format!(
            "tensor layout value has dimension count {dims} (uninitialized layout?)"
        )));
    }
    let f = |base: usize| -> Vec<u32> { (0..dims).map(|i| w(base + i)).collect() };
    let mut slice = Vec::with_capacity(2 * dims);
    for i in 0..dims {
        slice.push(w(17 + i));
        slice.push(w(22 + i));
    }
    let l = TensorLayout::create(dims as u32, ClampMode::from_raw(w(1)).map_err(te)?)
        .map_err(te)?
        .set_dimension(&f(7))
        .map_err(te)?
        .set_stride(&f(12))
        .map_err(te)?
        .set_block_size(&f(2))
        .map_err(te)?
        .slice(&slice)
        .map_err(te)?
        .set_clamp_value(w(27));
    Ok(l)
}

/// The encoding of a layout.
pub(crate) fn layout_to(l: &TensorLayout, c: &mut [u64]) {
    c.fill(0);
    c[0] = l.dims() as u64;
    c[1] = l.clamp_mode().raw() as u64;
    for i in 0..l.dims() {
        c[2 + i] = l.block_size()[i] as u64;
        c[7 + i] = l.layout_dimension()[i] as u64;
        c[12 + i] = l.stride()[i] as u64;
        c[17 + i] = l.offset()[i] as u32 as u64;
        c[22 + i] = l.span()[i] as u64;
    }
    c[27] = l.clamp_value() as u64;
}

/// A view from its encoding.
pub(crate) fn view_from(c: &[u64]) -> Result<TensorView, ExecError> {
    let te = |e: coopmat_tensor::TensorError| ExecError::new(e.to_string());
    let w = |i: usize| c[i] as u32;
    let dims = w(0) as usize;
    if !(1..=MAX_DIM).contains(&dims) {
        return Err(ExecError::new(format!(
            "tensor view value has dimension count {dims} (uninitialized view?)"
        )));
    }
    let f = |base: usize| -> Vec<u32> { (0..dims).map(|i| w(base + i)).collect() };
    // set_dimension also recomputes the strides; set_stride then restores the stored ones.
    Ok(TensorView::create(dims as u32, w(1) != 0, &f(2))
        .map_err(te)?
        .set_dimension(&f(7))
        .map_err(te)?
        .set_stride(&f(12))
        .map_err(te)?
        .set_clip(w(17), w(18), w(19), w(20)))
}

/// The encoding of a view.
pub(crate) fn view_to(v: &TensorView, c: &mut [u64]) {
    c.fill(0);
    c[0] = v.dims() as u64;
    c[1] = v.has_dimensions() as u64;
    for i in 0..v.dims() {
        c[2 + i] = v.permutation()[i] as u64;
        c[7 + i] = v.view_dimension()[i] as u64;
        c[12 + i] = v.view_stride()[i] as u64;
    }
    let (a, b, cc, d) = v.clip();
    c[17] = a as u64;
    c[18] = b as u64;
    c[19] = cc as u64;
    c[20] = d as u64;
}
