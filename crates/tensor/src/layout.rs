//! Tensor layout and view objects (SPV_NV_tensor_addressing, "Tensor Layout and View" logical
//! state). Every instruction copies the input object, changes the named fields and returns
//! the copy, so the types here are immutable values whose methods return new values.

use crate::TensorError;
use coopmat_spirv::grammar::tensor_clamp_mode as tcm;

/// Largest tensor dimension count (the spec's `MAX_DIM`).
pub const MAX_DIM: usize = 5;

/// A per-dimension coordinate; entries at index >= the object's dimension count are 0.
pub type Coord = [u32; MAX_DIM];

/// `TensorClampMode`: what out-of-bounds coordinates do (SPV_NV_tensor_addressing §3.X).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClampMode {
    /// Out-of-bounds accesses are undefined behaviour.
    Undefined,
    /// Out-of-bounds loads return the layout's clamp value; stores are discarded.
    Constant,
    /// Out-of-bounds load coordinates clamp to the nearest edge; stores are discarded.
    ClampToEdge,
    /// `c = c smod dim`; stores are discarded.
    Repeat,
    /// Mirrored repeat with period `2*dim-2`; stores are discarded.
    RepeatMirrored,
}

impl ClampMode {
    /// Decodes the operand value of `OpTypeTensorLayoutNV`.
    pub fn from_raw(v: u32) -> Result<Self, TensorError> {
        Ok(match v {
            tcm::Undefined => Self::Undefined,
            tcm::Constant => Self::Constant,
            tcm::ClampToEdge => Self::ClampToEdge,
            tcm::Repeat => Self::Repeat,
            tcm::RepeatMirrored => Self::RepeatMirrored,
            other => return Err(TensorError::BadClampMode(other)),
        })
    }

    /// The grammar value.
    pub fn raw(self) -> u32 {
        match self {
            Self::Undefined => tcm::Undefined,
            Self::Constant => tcm::Constant,
            Self::ClampToEdge => tcm::ClampToEdge,
            Self::Repeat => tcm::Repeat,
            Self::RepeatMirrored => tcm::RepeatMirrored,
        }
    }

    /// All modes, for tests and tables.
    pub const ALL: [ClampMode; 5] = [
        Self::Undefined,
        Self::Constant,
        Self::ClampToEdge,
        Self::Repeat,
        Self::RepeatMirrored,
    ];
}

fn check_dims(what: &'static str, dims: u32) -> Result<usize, TensorError> {
    if (1..=MAX_DIM as u32).contains(&dims) {
        Ok(dims as usize)
    } else {
        Err(TensorError::BadDimensionCount { what, dims })
    }
}

fn check_count(op: &'static str, expected: usize, got: usize) -> Result<(), TensorError> {
    if expected == got {
        Ok(())
    } else {
        Err(TensorError::OperandCount { op, expected, got })
    }
}

/// The per-dimension state of a layout, for [`TensorLayout::from_fields`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LayoutFields {
    /// `blockSize[i]`.
    pub block_size: Coord,
    /// `layoutDimension[i]`.
    pub layout_dimension: Coord,
    /// `stride[i]`.
    pub stride: Coord,
    /// `offset[i]` (signed).
    pub offset: [i32; MAX_DIM],
    /// `span[i]`.
    pub span: Coord,
    /// The raw clamp value.
    pub clamp_value: u32,
}

/// `tensorLayoutNV<LDim, clampMode>` state.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorLayout {
    dims: usize,
    clamp_mode: ClampMode,
    block_size: Coord,
    layout_dimension: Coord,
    stride: Coord,
    offset: [i32; MAX_DIM],
    span: Coord,
    clamp_value: u32,
}

impl TensorLayout {
    /// `OpCreateTensorLayoutNV` for type `OpTypeTensorLayoutNV dims clamp_mode`: block size 1,
    /// every other field 0.
    pub fn create(dims: u32, clamp_mode: ClampMode) -> Result<Self, TensorError> {
        let dims = check_dims("OpTypeTensorLayoutNV", dims)?;
        let mut block_size = [0; MAX_DIM];
        block_size[..dims].fill(1);
        Ok(Self {
            dims,
            clamp_mode,
            block_size,
            layout_dimension: [0; MAX_DIM],
            stride: [0; MAX_DIM],
            offset: [0; MAX_DIM],
            span: [0; MAX_DIM],
            clamp_value: 0,
        })
    }

    /// A layout with every field given (entries at index >= `dims` are ignored and kept 0):
    /// what `create` followed by `set_block_size`, `set_stride`, a slice and
    /// `set_clamp_value` would build, without replaying them. None of those can fail once the
    /// dimension count is valid, so that is the only check (an engine rebuilds a layout from
    /// its stored fields for every tensor op; the replay cost four divisions and six copies).
    pub fn from_fields(
        dims: u32,
        clamp_mode: ClampMode,
        fields: &LayoutFields,
    ) -> Result<Self, TensorError> {
        let dims = check_dims("OpTypeTensorLayoutNV", dims)?;
        let keep =
            |v: &Coord| -> Coord { std::array::from_fn(|i| if i < dims { v[i] } else { 0 }) };
        let offset = std::array::from_fn(|i| if i < dims { fields.offset[i] } else { 0 });
        Ok(Self {
            dims,
            clamp_mode,
            block_size: keep(&fields.block_size),
            layout_dimension: keep(&fields.layout_dimension),
            stride: keep(&fields.stride),
            offset,
            span: keep(&fields.span),
            clamp_value: fields.clamp_value,
        })
    }

    /// LDim.
    pub fn dims(&self) -> usize {
        self.dims
    }
    /// The type's clamp mode.
    pub fn clamp_mode(&self) -> ClampMode {
        self.clamp_mode
    }
    /// `blockSize[0..LDim]`.
    pub fn block_size(&self) -> &[u32] {
        &self.block_size[..self.dims]
    }
    /// `layoutDimension[0..LDim]`.
    pub fn layout_dimension(&self) -> &[u32] {
        &self.layout_dimension[..self.dims]
    }
    /// `stride[0..LDim]` (in blocks when the block size is not 1).
    pub fn stride(&self) -> &[u32] {
        &self.stride[..self.dims]
    }
    /// `offset[0..LDim]` (signed).
    pub fn offset(&self) -> &[i32] {
        &self.offset[..self.dims]
    }
    /// `span[0..LDim]`.
    pub fn span(&self) -> &[u32] {
        &self.span[..self.dims]
    }
    /// The raw 32-bit clamp value.
    pub fn clamp_value(&self) -> u32 {
        self.clamp_value
    }

    /// `OpTensorLayoutSetDimensionNV`: `layoutDimension = span = d`, offsets 0, and packed
    /// strides `stride[i] = stride[i+1] * ceil(d[i+1] / blockSize[i+1])`, innermost 1.
    /// The stride product wraps at 32 bits like the spec's uint32 state.
    pub fn set_dimension(&self, d: &[u32]) -> Result<Self, TensorError> {
        check_count("OpTensorLayoutSetDimensionNV", self.dims, d.len())?;
        let mut out = self.clone();
        out.layout_dimension[..self.dims].copy_from_slice(d);
        out.span[..self.dims].copy_from_slice(d);
        out.offset = [0; MAX_DIM];
        out.stride[self.dims - 1] = 1;
        for i in (0..self.dims - 1).rev() {
            let bs = self.block_size[i + 1];
            if bs == 0 {
                return Err(TensorError::ZeroDivisor {
                    step: "OpTensorLayoutSetDimensionNV",
                    what: "blockSize",
                    dim: i + 1,
                });
            }
            // SPV_NV_tensor_addressing, OpTensorLayoutSetDimensionNV: "ceiling(Dim<i+1> /
            // blockSize[i+1])". NVIDIA 580 rounds down here (CONFORMANCE.md); the spec rules.
            out.stride[i] = out.stride[i + 1].wrapping_mul(d[i + 1].div_ceil(bs));
        }
        Ok(out)
    }

    /// `OpTensorLayoutSetStrideNV`: `stride = s`.
    pub fn set_stride(&self, s: &[u32]) -> Result<Self, TensorError> {
        check_count("OpTensorLayoutSetStrideNV", self.dims, s.len())?;
        let mut out = self.clone();
        out.stride[..self.dims].copy_from_slice(s);
        Ok(out)
    }

    /// `OpTensorLayoutSetBlockSizeNV`: `blockSize = b` (set it before SetDimension).
    pub fn set_block_size(&self, b: &[u32]) -> Result<Self, TensorError> {
        check_count("OpTensorLayoutSetBlockSizeNV", self.dims, b.len())?;
        let mut out = self.clone();
        out.block_size[..self.dims].copy_from_slice(b);
        Ok(out)
    }

    /// `OpTensorLayoutSliceNV` with operands `off0 span0 off1 span1 ...` (interleaved, raw
    /// 32-bit words): `offset[i] += off_i` (cumulative, wrapping as int32), `span[i] = span_i`.
    pub fn slice(&self, operands: &[u32]) -> Result<Self, TensorError> {
        check_count("OpTensorLayoutSliceNV", 2 * self.dims, operands.len())?;
        let mut out = self.clone();
        for i in 0..self.dims {
            out.offset[i] = self.offset[i].wrapping_add(operands[2 * i] as i32);
            out.span[i] = operands[2 * i + 1];
        }
        Ok(out)
    }

    /// `OpTensorLayoutSetClampValueNV`: the raw bit pattern used by Constant clamping.
    pub fn set_clamp_value(&self, v: u32) -> Self {
        let mut out = self.clone();
        out.clamp_value = v;
        out
    }

    /// The spec's validity rule on strides (`stride[i] >= stride[i+1] *
    /// ceil(layoutDimension[i+1]/blockSize[i+1])`): returns the first dimension `i` that breaks
    /// it. The rule is a "must" on the shader, not something the addressing needs, so the
    /// pipeline does not enforce it; a linter can.
    pub fn stride_rule_violation(&self) -> Option<usize> {
        (0..self.dims.saturating_sub(1)).find(|&i| {
            let bs = self.block_size[i + 1].max(1) as u64;
            let need =
                self.stride[i + 1] as u64 * (self.layout_dimension[i + 1] as u64).div_ceil(bs);
            (self.stride[i] as u64) < need
        })
    }

    /// The largest block index that an in-bounds coordinate can produce (the last block of the
    /// tensor), or `None` for an empty tensor. Every store target is at or below it.
    pub fn max_block_index(&self) -> Option<u64> {
        let mut idx = 0u64;
        for i in 0..self.dims {
            let d = self.layout_dimension[i] as u64;
            let bs = self.block_size[i] as u64;
            if d == 0 || bs == 0 {
                return None;
            }
            idx += (d.div_ceil(bs) - 1) * self.stride[i] as u64;
        }
        Some(idx)
    }
}

/// `tensorViewNV<VDim, hasDimensions, p...>` state.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorView {
    dims: usize,
    has_dimensions: bool,
    permutation: Coord,
    view_dimension: Coord,
    view_stride: Coord,
    clip_row_offset: u32,
    clip_row_span: u32,
    clip_col_offset: u32,
    clip_col_span: u32,
}

impl TensorView {
    /// `OpCreateTensorViewNV` for type `OpTypeTensorViewNV dims has_dimensions p...`:
    /// dimensions and strides 0, clip offsets 0, clip spans 0xFFFFFFFF.
    pub fn create(
        dims: u32,
        has_dimensions: bool,
        permutation: &[u32],
    ) -> Result<Self, TensorError> {
        let dims = check_dims("OpTypeTensorViewNV", dims)?;
        check_count("OpTypeTensorViewNV", dims, permutation.len())?;
        let mut seen = [false; MAX_DIM];
        for &p in permutation {
            if p as usize >= dims || seen[p as usize] {
                return Err(TensorError::BadPermutation(permutation.to_vec()));
            }
            seen[p as usize] = true;
        }
        let mut perm = [0; MAX_DIM];
        perm[..dims].copy_from_slice(permutation);
        Ok(Self {
            dims,
            has_dimensions,
            permutation: perm,
            view_dimension: [0; MAX_DIM],
            view_stride: [0; MAX_DIM],
            clip_row_offset: 0,
            clip_row_span: u32::MAX,
            clip_col_offset: 0,
            clip_col_span: u32::MAX,
        })
    }

    /// A view with every field given: what `create`, `set_stride` and `set_clip` would build
    /// (entries at index >= `dims` are ignored and kept 0). Checks what `create` checks (the
    /// dimension count and the permutation); nothing else can fail.
    pub fn from_fields(
        dims: u32,
        has_dimensions: bool,
        permutation: &[u32],
        view_dimension: &Coord,
        view_stride: &Coord,
        (row_offset, row_span, col_offset, col_span): (u32, u32, u32, u32),
    ) -> Result<Self, TensorError> {
        let v = Self::create(dims, has_dimensions, permutation)?;
        let keep =
            |c: &Coord| -> Coord { std::array::from_fn(|i| if i < v.dims { c[i] } else { 0 }) };
        Ok(Self {
            view_dimension: keep(view_dimension),
            view_stride: keep(view_stride),
            clip_row_offset: row_offset,
            clip_row_span: row_span,
            clip_col_offset: col_offset,
            clip_col_span: col_span,
            ..v
        })
    }

    /// VDim.
    pub fn dims(&self) -> usize {
        self.dims
    }
    /// The type's HasDimensions.
    pub fn has_dimensions(&self) -> bool {
        self.has_dimensions
    }
    /// The type's permutation `p0..p(VDim-1)`.
    pub fn permutation(&self) -> &[u32] {
        &self.permutation[..self.dims]
    }
    /// `viewDimension[0..VDim]`.
    pub fn view_dimension(&self) -> &[u32] {
        &self.view_dimension[..self.dims]
    }
    /// `viewStride[0..VDim]`.
    pub fn view_stride(&self) -> &[u32] {
        &self.view_stride[..self.dims]
    }
    /// `(clipRowOffset, clipRowSpan, clipColOffset, clipColSpan)`.
    pub fn clip(&self) -> (u32, u32, u32, u32) {
        (
            self.clip_row_offset,
            self.clip_row_span,
            self.clip_col_offset,
            self.clip_col_span,
        )
    }

    /// `OpTensorViewSetDimensionNV`: `viewDimension = d`, packed strides (innermost 1,
    /// `viewStride[i] = product of d[i+1..]`, wrapping at 32 bits like the spec's state).
    pub fn set_dimension(&self, d: &[u32]) -> Result<Self, TensorError> {
        check_count("OpTensorViewSetDimensionNV", self.dims, d.len())?;
        let mut out = self.clone();
        out.view_dimension[..self.dims].copy_from_slice(d);
        out.view_stride[self.dims - 1] = 1;
        for i in (0..self.dims - 1).rev() {
            out.view_stride[i] = out.view_stride[i + 1].wrapping_mul(d[i + 1]);
        }
        Ok(out)
    }

    /// `OpTensorViewSetStrideNV`: `viewStride = s`.
    pub fn set_stride(&self, s: &[u32]) -> Result<Self, TensorError> {
        check_count("OpTensorViewSetStrideNV", self.dims, s.len())?;
        let mut out = self.clone();
        out.view_stride[..self.dims].copy_from_slice(s);
        Ok(out)
    }

    /// `OpTensorViewSetClipNV`.
    pub fn set_clip(&self, row_offset: u32, row_span: u32, col_offset: u32, col_span: u32) -> Self {
        let mut out = self.clone();
        out.clip_row_offset = row_offset;
        out.clip_row_span = row_span;
        out.clip_col_offset = col_offset;
        out.clip_col_span = col_span;
        out
    }
}
