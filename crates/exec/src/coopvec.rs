//! SPV_NV_cooperative_vector facts the engine and its host-side converter share: component
//! types and their interpretation, matrix layouts (the engine's own definition of the two
//! optimal layouts, which Vulkan leaves opaque) and the matrix converter that
//! `vkConvertCooperativeVectorMatrixNV` is.
//!
//! # The engine's optimal layouts
//!
//! A matrix of `rows × cols` elements of `e` bytes in an optimal layout is cut into tiles of
//! [`TILE_ROWS`] rows × `TILE_BYTES / e` columns (so a tile is always [`TILE_ROWS`] ×
//! [`TILE_BYTES`] = 512 bytes, a multiple of the 64-byte alignment the Vulkan environment asks of
//! matrix offsets). Edge tiles are padded with zero bytes.
//!
//! * **InferencingOptimal**: tiles in row-major order over the tile grid, elements row-major
//!   inside a tile.
//! * **TrainingOptimal**: tiles in column-major order over the tile grid, elements
//!   column-major inside a tile.
//!
//! The two differ from each other and from the row- and column-major layouts on purpose: a
//! program that writes one layout and names another gets wrong answers here, as it may on a
//! GPU, instead of passing by luck. Like Vulkan's, both keep "all bytes zero" equal to "all
//! elements zero" (`vkConvertCooperativeVectorMatrixNV`, chapter "Cooperative Vectors").

use crate::floats;
use crate::program::component_num;
pub use crate::program::{
    COMPONENT_TYPES, ComponentType, MatrixLayout, MatrixShape, TILE_BYTES, TILE_ROWS,
    component_of_scalar,
};

/// Values of a component type as the engine computes with them.
pub trait ComponentValue: Copy {
    /// The value of raw bits `raw` of this type as f64 (integers by their signedness).
    fn value_of(self, raw: u64) -> f64;
    /// `x` as raw bits of this type: floats round to nearest even (8-bit floats saturate to
    /// their largest finite value), integers round to nearest even and saturate (NaN gives 0).
    /// These are SPV_NV_cooperative_vector's rules for the input conversion of a matrix-vector
    /// product, which the converter follows too.
    fn bits_of(self, x: f64) -> u64;
    /// Integer `v` converted to this (integer) type with saturation: clamped to its range.
    fn saturate_int(self, v: i128) -> u64;
}

impl ComponentValue for ComponentType {
    fn value_of(self, raw: u64) -> f64 {
        if self.is_float() {
            floats::to_f64(component_num(self), raw)
        } else if self.signed() {
            floats::sext(raw, component_num(self).bits()) as f64
        } else {
            floats::trunc(raw, component_num(self).bits()) as f64
        }
    }

    fn bits_of(self, x: f64) -> u64 {
        if self.is_float() {
            return floats::from_f64_sat(component_num(self), x);
        }
        let bits = component_num(self).bits();
        if x.is_nan() {
            return 0;
        }
        let r = x.round_ties_even();
        if self.signed() {
            let lo = -(2f64.powi(bits as i32 - 1));
            let hi = 2f64.powi(bits as i32 - 1) - 1.0;
            floats::trunc(r.clamp(lo, hi) as i64 as u64, bits)
        } else {
            let hi = 2f64.powi(bits as i32) - 1.0;
            floats::trunc(r.clamp(0.0, hi) as u64, bits)
        }
    }

    fn saturate_int(self, v: i128) -> u64 {
        let bits = component_num(self).bits();
        let (lo, hi) = if self.signed() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        floats::trunc(v.clamp(lo, hi) as u64, bits)
    }
}

/// What went wrong in a matrix conversion.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// A component type the converter cannot store a matrix in.
    #[error("{0} matrices cannot be converted (packed types are input interpretations only)")]
    Type(&'static str),
    /// A row- or column-major stride smaller than a row (column).
    #[error("{side} stride {stride} is smaller than one {what} ({need} bytes)")]
    Stride {
        /// "source" or "destination".
        side: &'static str,
        /// The stride given.
        stride: u64,
        /// "row" or "column".
        what: &'static str,
        /// Bytes of one row or column.
        need: u64,
    },
    /// The source holds fewer bytes than its shape needs.
    #[error("source has {have} bytes; its shape needs {need}")]
    SourceTooSmall {
        /// Bytes given.
        have: u64,
        /// Bytes needed.
        need: u64,
    },
    /// The converted matrix would not fit any address space.
    #[error("a {rows}x{cols} matrix in this layout exceeds 2^64 bytes")]
    TooLarge {
        /// Rows.
        rows: u32,
        /// Columns.
        cols: u32,
    },
    /// The destination holds fewer bytes than the converted matrix.
    #[error("destination has {have} bytes; the converted matrix needs {need}")]
    DestinationTooSmall {
        /// Bytes given.
        have: u64,
        /// Bytes needed.
        need: u64,
    },
}

/// One side (source or destination) of a conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixSide {
    /// Component type of the stored elements.
    pub ty: ComponentType,
    /// Layout.
    pub layout: MatrixLayout,
    /// Row/column stride in bytes (row- and column-major only; 0 = tightly packed).
    pub stride: u64,
}

impl MatrixSide {
    fn shape(&self, rows: u32, cols: u32, side: &'static str) -> Result<MatrixShape, ConvertError> {
        if self.ty.packed() {
            return Err(ConvertError::Type(self.ty.name()));
        }
        let e = self.ty.bytes() as u64;
        let (need, what) = match self.layout {
            MatrixLayout::RowMajor => (cols as u64 * e, "row"),
            MatrixLayout::ColumnMajor => (rows as u64 * e, "column"),
            _ => (0, ""),
        };
        let stride = if self.stride == 0 { need } else { self.stride };
        if stride < need {
            return Err(ConvertError::Stride {
                side,
                stride,
                what,
                need,
            });
        }
        Ok(MatrixShape {
            rows,
            cols,
            elem_bytes: e as u32,
            layout: self.layout,
            stride,
        })
    }
}

/// Bytes the converted matrix takes (the size query of `vkConvertCooperativeVectorMatrixNV`
/// with `dstData` NULL).
pub fn converted_size(rows: u32, cols: u32, dst: MatrixSide) -> Result<u64, ConvertError> {
    match dst.shape(rows, cols, "destination")?.size() {
        u64::MAX => Err(ConvertError::TooLarge { rows, cols }),
        n => Ok(n),
    }
}

/// Converts a `rows × cols` matrix from `src` (layout and type) to `dst`, the way
/// `vkConvertCooperativeVectorMatrixNV` does: element values convert by
/// [`ComponentValue::bits_of`] (exact between equal types), padding bytes of the destination
/// are zero. Returns the bytes written.
pub fn convert_matrix(
    rows: u32,
    cols: u32,
    src: MatrixSide,
    src_data: &[u8],
    dst: MatrixSide,
    dst_data: &mut [u8],
) -> Result<u64, ConvertError> {
    let ss = src.shape(rows, cols, "source")?;
    let ds = dst.shape(rows, cols, "destination")?;
    let (need_src, need_dst) = (ss.size(), converted_size(rows, cols, dst)?);
    if (src_data.len() as u64) < need_src {
        return Err(ConvertError::SourceTooSmall {
            have: src_data.len() as u64,
            need: need_src,
        });
    }
    if (dst_data.len() as u64) < need_dst {
        return Err(ConvertError::DestinationTooSmall {
            have: dst_data.len() as u64,
            need: need_dst,
        });
    }
    if ds.layout.is_optimal() {
        dst_data[..need_dst as usize].fill(0);
    }
    let (se, de) = (ss.elem_bytes as usize, ds.elem_bytes as usize);
    for r in 0..rows {
        for c in 0..cols {
            let so = ss.offset(r, c) as usize;
            let mut raw = [0u8; 8];
            raw[..se].copy_from_slice(&src_data[so..so + se]);
            let v = u64::from_le_bytes(raw);
            let out = if src.ty == dst.ty {
                v
            } else if !src.ty.is_float() && !dst.ty.is_float() {
                let i = if src.ty.signed() {
                    floats::sext(v, se as u32 * 8) as i128
                } else {
                    v as i128
                };
                dst.ty.saturate_int(i)
            } else {
                dst.ty.bits_of(src.ty.value_of(v))
            };
            let o = ds.offset(r, c) as usize;
            dst_data[o..o + de].copy_from_slice(&out.to_le_bytes()[..de]);
        }
    }
    Ok(need_dst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_component_type_round_trips_its_raw_value_and_name() {
        for t in COMPONENT_TYPES {
            assert_eq!(ComponentType::from_raw(t.raw()), Some(t));
            assert_eq!(ComponentType::from_name(t.name()), Some(t));
        }
        assert_eq!(ComponentType::from_raw(11), None);
    }

    #[test]
    fn optimal_layouts_place_every_element_once_inside_the_size() {
        for (rows, cols, e) in [(1, 1, 2), (17, 33, 2), (32, 16, 1), (5, 70, 4), (40, 9, 1)] {
            for layout in [
                MatrixLayout::InferencingOptimal,
                MatrixLayout::TrainingOptimal,
                MatrixLayout::RowMajor,
                MatrixLayout::ColumnMajor,
            ] {
                let stride = match layout {
                    MatrixLayout::RowMajor => cols as u64 * e as u64,
                    _ => rows as u64 * e as u64,
                };
                let s = MatrixShape {
                    rows,
                    cols,
                    elem_bytes: e,
                    layout,
                    stride,
                };
                let mut seen = std::collections::HashSet::new();
                for r in 0..rows {
                    for c in 0..cols {
                        let o = s.offset(r, c);
                        assert!(
                            o + e as u64 <= s.size(),
                            "{layout:?} {rows}x{cols} ({r},{c})"
                        );
                        assert_eq!(o % e as u64, 0);
                        assert!(seen.insert(o), "{layout:?} overlaps at ({r},{c})");
                    }
                }
                if layout.is_optimal() {
                    assert_eq!(s.size() % 64, 0);
                }
            }
        }
    }

    #[test]
    fn conversion_round_trips_through_an_optimal_layout_and_converts_types() {
        let (rows, cols) = (19u32, 23u32);
        let vals: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.25 - 40.0).collect();
        let src: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        let rm = |ty: ComponentType| MatrixSide {
            ty,
            layout: MatrixLayout::RowMajor,
            stride: 0,
        };
        let opt = MatrixSide {
            ty: ComponentType::F16,
            layout: MatrixLayout::TrainingOptimal,
            stride: 0,
        };
        let n = converted_size(rows, cols, opt).unwrap();
        let mut mid = vec![0xffu8; n as usize];
        assert_eq!(
            convert_matrix(rows, cols, rm(ComponentType::F32), &src, opt, &mut mid),
            Ok(n)
        );
        let mut back = vec![0u8; src.len()];
        convert_matrix(rows, cols, opt, &mid, rm(ComponentType::F32), &mut back).unwrap();
        // Every value is a multiple of 0.25 below 2048: exact in f16.
        assert_eq!(back, src);
        let mut small = vec![0u8; n as usize - 1];
        assert!(matches!(
            convert_matrix(rows, cols, rm(ComponentType::F32), &src, opt, &mut small),
            Err(ConvertError::DestinationTooSmall { .. })
        ));
    }

    #[test]
    fn input_conversions_round_to_nearest_even_and_saturate() {
        assert_eq!(ComponentType::S8.bits_of(2.5), 2);
        assert_eq!(ComponentType::S8.bits_of(3.5), 4);
        assert_eq!(ComponentType::S8.bits_of(-300.0), 0x80);
        assert_eq!(ComponentType::U8.bits_of(-3.0), 0);
        assert_eq!(ComponentType::U8.bits_of(1e9), 0xff);
        assert_eq!(ComponentType::S8.saturate_int(200), 0x7f);
        assert_eq!(ComponentType::U8.saturate_int(-1), 0);
        // E4M3 has no infinity: 1000 saturates to 448 (0x7e).
        assert_eq!(ComponentType::E4M3.bits_of(1000.0), 0x7e);
    }
}
