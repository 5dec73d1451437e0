//! A slow, obviously-correct model of the tensor addressing pipeline, written from the spec's
//! prose rather than its pseudo-code where possible: coordinates are produced by stepping
//! odometers (so no div/mod chain), clamping by repeated reflection/translation, all in i128.

#![allow(clippy::needless_range_loop)] // the model indexes like the spec text

use coopmat_tensor::{ClampMode, TensorLayout, TensorView};

/// What the model says about one element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelResult {
    Memory {
        index: u128,
        block_coord: Vec<u32>,
        coord_in_block: Vec<u32>,
    },
    Constant(u32),
    Clipped,
    Discarded,
    Undefined,
    /// Division by zero somewhere (the model refuses, like the real pipeline).
    Error,
}

/// Advances `coord` by one step in an odometer whose digit order (fastest first) is `order`
/// and whose digit `i` counts modulo `extent[i]`. Every digit wraps, the last one included.
fn odometer_step(coord: &mut [u128], extent: &[u128], order: &[usize]) {
    for &i in order {
        coord[i] += 1;
        if coord[i] < extent[i] {
            return;
        }
        coord[i] = 0;
    }
}

/// The `steps`-th coordinate (0-based) of an odometer, by stepping. Steps are taken modulo the
/// odometer's period to keep it cheap; the period is the product of the extents.
fn odometer_nth(extent: &[u128], order: &[usize], steps: u128) -> Vec<u128> {
    let period: u128 = extent.iter().product();
    let mut c = vec![0u128; extent.len()];
    for _ in 0..(steps % period) {
        odometer_step(&mut c, extent, order);
    }
    c
}

/// Out-of-range handling for a load, by the mode's description.
fn clamp_model(mode: ClampMode, mut c: i128, d: i128) -> Option<i128> {
    match mode {
        ClampMode::ClampToEdge => Some(if c < 0 {
            0
        } else if c >= d {
            d - 1
        } else {
            c
        }),
        ClampMode::Repeat => {
            while c < 0 {
                c += d;
            }
            while c >= d {
                c -= d;
            }
            Some(c)
        }
        ClampMode::RepeatMirrored => {
            if d == 1 {
                return Some(0);
            }
            // Reflect at -0.0 and at d-1 (edges not repeated) until inside.
            while c < 0 || c >= d {
                if c < 0 {
                    c = -c;
                }
                if c >= d {
                    c = 2 * (d - 1) - c;
                }
            }
            Some(c)
        }
        _ => None,
    }
}

/// The model of one element (row, col) of a rows x cols load (`store == false`) or store.
pub fn model(
    layout: &TensorLayout,
    view: Option<&TensorView>,
    store: bool,
    _rows: u32,
    cols: u32,
    row: u32,
    col: u32,
) -> ModelResult {
    let ld = layout.dims();
    let span: Vec<u128> = layout.span().iter().map(|&x| x as u128).collect();
    let linear: u128 = match view {
        None => row as u128 * cols as u128 + col as u128,
        Some(v) => {
            let (ro, rs, co, cs) = v.clip();
            let inside_rows = (ro as u128..ro as u128 + rs as u128).contains(&(row as u128));
            let inside_cols = (co as u128..co as u128 + cs as u128).contains(&(col as u128));
            if !inside_rows || !inside_cols {
                return ModelResult::Clipped;
            }
            let width = (cols as u128).min(cs as u128);
            let idx = (row - ro) as u128 * width + (col - co) as u128;
            let vd = v.dims();
            let dims: Vec<u128> = if v.has_dimensions() {
                v.view_dimension().iter().map(|&x| x as u128).collect()
            } else {
                if vd != ld {
                    return ModelResult::Error;
                }
                span.clone()
            };
            if dims.contains(&0) {
                return ModelResult::Error;
            }
            // The view's digits, fastest first: p[VDim-1], p[VDim-2], ..., p[0].
            let order: Vec<usize> = v.permutation().iter().rev().map(|&p| p as usize).collect();
            let vc = odometer_nth(&dims, &order, idx);
            // Strides: explicit, or packed over the span (last dimension fastest).
            let strides: Vec<u128> = if v.has_dimensions() {
                v.view_stride().iter().map(|&x| x as u128).collect()
            } else {
                (0..vd).map(|i| span[i + 1..].iter().product()).collect()
            };
            vc.iter().zip(&strides).map(|(a, b)| a * b).sum()
        }
    };
    if span.contains(&0) {
        return ModelResult::Error;
    }
    let order: Vec<usize> = (0..ld).rev().collect();
    let sc = odometer_nth(&span, &order, linear);
    let mut block_coord = vec![];
    let mut coord_in_block = vec![];
    let mut index = 0u128;
    for dim in 0..ld {
        let d = layout.layout_dimension()[dim] as i128;
        let mut c = sc[dim] as i128 + layout.offset()[dim] as i128;
        if c < 0 || c >= d {
            let mode = layout.clamp_mode();
            if mode == ClampMode::Undefined {
                return ModelResult::Undefined;
            }
            if store {
                return ModelResult::Discarded;
            }
            if mode == ClampMode::Constant {
                return ModelResult::Constant(layout.clamp_value());
            }
            if d == 0 {
                return ModelResult::Error;
            }
            c = clamp_model(mode, c, d).unwrap();
        }
        let bs = layout.block_size()[dim] as i128;
        if bs == 0 {
            return ModelResult::Error;
        }
        block_coord.push((c / bs) as u32);
        coord_in_block.push((c % bs) as u32);
        index += (c / bs) as u128 * layout.stride()[dim] as u128;
    }
    ModelResult::Memory {
        index,
        block_coord,
        coord_in_block,
    }
}
