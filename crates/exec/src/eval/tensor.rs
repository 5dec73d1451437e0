//! SPV_NV_cooperative_matrix2 / SPV_NV_tensor_addressing support shared by the compiler
//! (`compile/coop2.rs`) and the executor (`exec/coop2.rs`).
//!
//! Tensor layouts and views are immutable values. A register holds a handle to the batch's
//! interned encoding (`exec/tensor_values.rs`): the compiler gives `OpTypeTensorLayoutNV` and
//! `OpTypeTensorViewNV` the shape of a `uint`, so handles live in Function/Private variables
//! and flow through phis like any scalar. The encoding stores every field, static ones
//! (dimension count, clamp mode, permutation) included, so an op needs only the value. The
//! semantics themselves come from `coopmat_tensor`.

use crate::ExecError;
use coopmat_tensor::{ClampMode, LayoutFields, MAX_DIM, TensorLayout, TensorView};

/// Words of a layout's encoding: dims, clamp mode, `blockSize[5]`, `layoutDimension[5]`,
/// `stride[5]`, `offset[5]`, `span[5]`, clampValue.
pub(crate) const LAYOUT_WORDS: usize = 28;
/// Words of a view's encoding: dims, hasDimensions, `permutation[5]`, `viewDimension[5]`,
/// `viewStride[5]`, clip (rowOffset, rowSpan, colOffset, colSpan).
pub(crate) const VIEW_WORDS: usize = 21;

/// A layout from its encoding (every field as stored: an encoding is only ever made by
/// [`layout_to`] from a valid layout, or all zeros, which fails on its dimension count).
pub(crate) fn layout_from(c: &[u64]) -> Result<TensorLayout, ExecError> {
    let te = |e: coopmat_tensor::TensorError| ExecError::invalid(e.to_string());
    let w = |i: usize| c[i] as u32;
    let dims = w(0) as usize;
    if !(1..=MAX_DIM).contains(&dims) {
        return Err(ExecError::invalid(format!(
            "tensor layout value has dimension count {dims} (uninitialized layout?)"
        )));
    }
    // Fields on the stack: a layout is rebuilt for every tensor op that reads one.
    let f = |base: usize| -> [u32; MAX_DIM] { std::array::from_fn(|i| w(base + i)) };
    let fields = LayoutFields {
        block_size: f(2),
        layout_dimension: f(7),
        stride: f(12),
        offset: f(17).map(|o| o as i32),
        span: f(22),
        clamp_value: w(27),
    };
    TensorLayout::from_fields(dims as u32, ClampMode::from_raw(w(1)).map_err(te)?, &fields)
        .map_err(te)
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
    let te = |e: coopmat_tensor::TensorError| ExecError::invalid(e.to_string());
    let w = |i: usize| c[i] as u32;
    let dims = w(0) as usize;
    if !(1..=MAX_DIM).contains(&dims) {
        return Err(ExecError::invalid(format!(
            "tensor view value has dimension count {dims} (uninitialized view?)"
        )));
    }
    let f = |base: usize| -> [u32; MAX_DIM] { std::array::from_fn(|i| w(base + i)) };
    TensorView::from_fields(
        dims as u32,
        w(1) != 0,
        &f(2)[..dims],
        &f(7),
        &f(12),
        (w(17), w(18), w(19), w(20)),
    )
    .map_err(te)
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
