//! The coordinate pipeline of `OpCooperativeMatrixLoadTensorNV` / `StoreTensorNV`
//! (SPV_NV_cooperative_matrix2, "Tensor Layout and View": `matrixCoordToTensorElement` and
//! `matrixCoordToTensorElementWithView`).
//!
//! Steps for element (row, col) of an M x N matrix:
//! 1. with a view: clip (64-bit sums), then `(row-clipRow) * min(N, clipColSpan) + (col-clipCol)`;
//!    without: `row * N + col`;
//! 2. with a view: split into view coordinates in permuted order (view dimensions, or the layout
//!    span without HasDimensions), recombine with the view strides;
//! 3. split into span coordinates (innermost = last dimension; the outermost wraps too, as the
//!    pseudo-code takes `% span[0]`);
//! 4. add the (signed) offset; out-of-range coordinates go through the clamp mode; a store
//!    treats every mode except Undefined as Constant, i.e. discard;
//! 5. `blockCoord = c / blockSize`, `coordInBlock = c % blockSize`;
//! 6. `index = sum(blockCoord * stride)`.
//!
//! All arithmetic is 64-bit (NOTES.md §2.5 points 5-7): the spec's uint32 pseudo-code only
//! differs when a 32-bit intermediate would overflow, which Vulkan leaves to 64-bit indexing.

use crate::TensorError;
use crate::layout::{ClampMode, Coord, MAX_DIM, TensorLayout, TensorView};

/// Whether the pipeline runs for a load or a store (stores never clamp, they discard).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// OpCooperativeMatrixLoadTensorNV.
    Load,
    /// OpCooperativeMatrixStoreTensorNV.
    Store,
}

/// An element that maps to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TensorElement {
    /// `matrixCoordToTensorElement`: `sum(blockCoord * stride)`. For a plain load or store the
    /// element is at `Pointer + index * sizeof(component)`; with DecodeFunc the decode pointer
    /// is `Pointer + index * sizeof(pointee of DecodeFunc's first parameter)`.
    pub index: u64,
    /// The block coordinate (DecodeFunc's second argument), `LDim` entries used.
    pub block_coord: Coord,
    /// The coordinate within the block (DecodeFunc's third argument), `LDim` entries used.
    pub coord_in_block: Coord,
    /// The tensor coordinate after offset and clamping (`block_coord * blockSize +
    /// coord_in_block`), always inside `layoutDimension`.
    pub tensor_coord: Coord,
    /// `LDim`.
    pub dims: u8,
    /// True when at least one coordinate was out of range and moved by ClampToEdge, Repeat or
    /// RepeatMirrored.
    pub clamped: bool,
}

impl TensorElement {
    /// Byte offset from `Pointer`: `index * elem_size` (component size for plain accesses,
    /// pointee size for decode calls).
    pub fn byte_offset(&self, elem_size: u64) -> Result<u64, TensorError> {
        self.index
            .checked_mul(elem_size)
            .ok_or(TensorError::Overflow("byte offset"))
    }
    /// `blockCoord[0..LDim]`.
    pub fn block_coord(&self) -> &[u32] {
        &self.block_coord[..self.dims as usize]
    }
    /// `coordInBlock[0..LDim]`.
    pub fn coord_in_block(&self) -> &[u32] {
        &self.coord_in_block[..self.dims as usize]
    }
}

/// Where one matrix element of a tensor load or store comes from or goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementSource {
    /// In range (possibly after clamping): read or write memory / call DecodeFunc.
    Memory(TensorElement),
    /// Load, Constant clamp mode, out of range: the element is the layout's raw 32-bit clamp
    /// value, truncated to the component width (see [`constant_bits`]). DecodeFunc is not called.
    Constant(u32),
    /// Outside the view's clip region: a load keeps `Object`'s element; a store skips it.
    Clipped,
    /// Store, out of range, clamp mode other than Undefined: nothing is written.
    Discarded,
    /// Out of range with clamp mode Undefined: undefined behaviour (load value and store
    /// target are both unspecified; an engine should report it).
    Undefined,
}

impl ElementSource {
    /// The memory element, if any.
    pub fn memory(&self) -> Option<&TensorElement> {
        match self {
            Self::Memory(e) => Some(e),
            _ => None,
        }
    }
}

/// The clamp value's bit pattern for a component of `width_bits` bits: the low bits of the
/// 32-bit value (GLSL: "the bit pattern in the LSBs of value"); zero-extended for 64-bit
/// components.
pub fn constant_bits(clamp_value: u32, width_bits: u32) -> u64 {
    if width_bits >= 32 {
        clamp_value as u64
    } else {
        clamp_value as u64 & ((1u64 << width_bits) - 1)
    }
}

/// `OpSMod` with a positive divisor: the result is in `0..d`.
fn smod(c: i64, d: i64) -> i64 {
    c.rem_euclid(d)
}

/// Applies the clamp mode to an out-of-range coordinate `c` of dimension `dim` with extent
/// `d = layoutDimension[dim]`; `None` when the pipeline stops (Constant / discard / Undefined
/// are handled by the caller).
fn clamp_coord(mode: ClampMode, c: i64, d: u32, dim: usize) -> Result<i64, TensorError> {
    let d = d as i64;
    let zero = || TensorError::ZeroDivisor {
        step: "spanCoordToTensorCoord",
        what: "layoutDimension",
        dim,
    };
    match mode {
        ClampMode::ClampToEdge => {
            if d == 0 {
                return Err(zero());
            }
            Ok(c.clamp(0, d - 1))
        }
        ClampMode::Repeat => {
            if d == 0 {
                return Err(zero());
            }
            Ok(smod(c, d))
        }
        ClampMode::RepeatMirrored => {
            if d == 0 {
                return Err(zero());
            }
            // Period 2D-2 is 0 for D == 1; the spec leaves it open and the only in-range
            // coordinate is 0, which is what the mirror converges to.
            if d == 1 {
                return Ok(0);
            }
            let p = 2 * d - 2;
            let m = smod(c, p);
            Ok(if m >= d { p - m } else { m })
        }
        ClampMode::Undefined | ClampMode::Constant => unreachable!("handled by the caller"),
    }
}

/// One element's source or target; `rows x cols` is the matrix shape (M x N).
pub fn element_source(
    layout: &TensorLayout,
    view: Option<&TensorView>,
    access: Access,
    rows: u32,
    cols: u32,
    row: u32,
    col: u32,
) -> Result<ElementSource, TensorError> {
    if row >= rows || col >= cols {
        return Err(TensorError::CoordOutOfMatrix {
            row,
            col,
            rows,
            cols,
        });
    }
    let ldims = layout.dims();
    let span = layout.span();

    // Step 1-2: matrix coordinate -> linear index in the span.
    let index: u64 = match view {
        None => row as u64 * cols as u64 + col as u64,
        Some(v) => {
            let (ro, rs, co, cs) = v.clip();
            let (row, col) = (row as u64, col as u64);
            if row < ro as u64
                || row >= ro as u64 + rs as u64
                || col < co as u64
                || col >= co as u64 + cs as u64
            {
                return Ok(ElementSource::Clipped);
            }
            let (row, col) = (row - ro as u64, col - co as u64);
            let width = (cols as u64).min(cs as u64);
            let mut index = row * width + col;

            // linearToViewCoord
            let vdims = v.dims();
            if !v.has_dimensions() && vdims != ldims {
                return Err(TensorError::ViewLayoutMismatch {
                    view: vdims,
                    layout: ldims,
                });
            }
            let dimensions: &[u32] = if v.has_dimensions() {
                v.view_dimension()
            } else {
                span
            };
            let perm = v.permutation();
            let mut view_coord = [0u64; MAX_DIM];
            for dim in (0..vdims).rev() {
                let i = perm[dim] as usize;
                let d = dimensions[i] as u64;
                if d == 0 {
                    return Err(TensorError::ZeroDivisor {
                        step: "linearToViewCoord",
                        what: if v.has_dimensions() {
                            "viewDimension"
                        } else {
                            "span"
                        },
                        dim: i,
                    });
                }
                view_coord[i] = index % d;
                index /= d;
            }

            // viewCoordToLinear
            let mut stride = [0u64; MAX_DIM];
            if v.has_dimensions() {
                for (s, &vs) in stride.iter_mut().zip(v.view_stride()) {
                    *s = vs as u64;
                }
            } else {
                stride[vdims - 1] = 1;
                for dim in (0..vdims - 1).rev() {
                    stride[dim] = stride[dim + 1]
                        .checked_mul(span[dim + 1] as u64)
                        .ok_or(TensorError::Overflow("viewCoordToLinear"))?;
                }
            }
            let mut out = 0u64;
            for dim in 0..vdims {
                out = view_coord[dim]
                    .checked_mul(stride[dim])
                    .and_then(|p| p.checked_add(out))
                    .ok_or(TensorError::Overflow("viewCoordToLinear"))?;
            }
            out
        }
    };

    // Step 3: linearToSpanCoord.
    let mut index = index;
    let mut span_coord = [0u64; MAX_DIM];
    for dim in (0..ldims).rev() {
        let s = span[dim] as u64;
        if s == 0 {
            return Err(TensorError::ZeroDivisor {
                step: "linearToSpanCoord",
                what: "span",
                dim,
            });
        }
        span_coord[dim] = index % s;
        index /= s;
    }

    // Step 4-5: spanCoordToTensorCoord.
    let mode = match (access, layout.clamp_mode()) {
        (Access::Store, ClampMode::Undefined) => ClampMode::Undefined,
        (Access::Store, _) => ClampMode::Constant,
        (Access::Load, m) => m,
    };
    let mut elem = TensorElement {
        index: 0,
        block_coord: [0; MAX_DIM],
        coord_in_block: [0; MAX_DIM],
        tensor_coord: [0; MAX_DIM],
        dims: ldims as u8,
        clamped: false,
    };
    for (dim, &sc) in span_coord.iter().enumerate().take(ldims) {
        let d = layout.layout_dimension()[dim];
        let mut c = sc as i64 + layout.offset()[dim] as i64;
        if c < 0 || c >= d as i64 {
            match mode {
                ClampMode::Undefined => return Ok(ElementSource::Undefined),
                ClampMode::Constant => {
                    return Ok(match access {
                        Access::Load => ElementSource::Constant(layout.clamp_value()),
                        Access::Store => ElementSource::Discarded,
                    });
                }
                m => {
                    c = clamp_coord(m, c, d, dim)?;
                    elem.clamped = true;
                }
            }
        }
        let bs = layout.block_size()[dim];
        if bs == 0 {
            return Err(TensorError::ZeroDivisor {
                step: "spanCoordToTensorCoord",
                what: "blockSize",
                dim,
            });
        }
        // 0 <= c < layoutDimension <= u32::MAX here.
        let c = c as u32;
        elem.tensor_coord[dim] = c;
        elem.coord_in_block[dim] = c % bs;
        elem.block_coord[dim] = c / bs;
    }

    // Step 6: tensorCoordToLinear.
    let mut idx = 0u64;
    for dim in 0..ldims {
        idx = (elem.block_coord[dim] as u64)
            .checked_mul(layout.stride()[dim] as u64)
            .and_then(|p| p.checked_add(idx))
            .ok_or(TensorError::Overflow("tensorCoordToLinear"))?;
    }
    elem.index = idx;
    Ok(ElementSource::Memory(elem))
}

fn all_sources(
    layout: &TensorLayout,
    view: Option<&TensorView>,
    access: Access,
    rows: u32,
    cols: u32,
) -> Result<Vec<ElementSource>, TensorError> {
    let mut out = Vec::with_capacity(rows as usize * cols as usize);
    for r in 0..rows {
        for c in 0..cols {
            out.push(element_source(layout, view, access, rows, cols, r, c)?);
        }
    }
    Ok(out)
}

/// Sources of every element of an M x N tensor load, in row-major matrix order
/// (`result[row * cols + col]`).
pub fn load_sources(
    layout: &TensorLayout,
    view: Option<&TensorView>,
    rows: u32,
    cols: u32,
) -> Result<Vec<ElementSource>, TensorError> {
    all_sources(layout, view, Access::Load, rows, cols)
}

/// Targets of every element of an M x N tensor store, row-major. Only [`ElementSource::Memory`]
/// entries are written; they always lie inside the tensor (`tensor_coord < layoutDimension`
/// and `index <= layout.max_block_index()`), except that Undefined mode reports
/// [`ElementSource::Undefined`] for out-of-range elements instead of an address.
pub fn store_sources(
    layout: &TensorLayout,
    view: Option<&TensorView>,
    rows: u32,
    cols: u32,
) -> Result<Vec<ElementSource>, TensorError> {
    all_sources(layout, view, Access::Store, rows, cols)
}
