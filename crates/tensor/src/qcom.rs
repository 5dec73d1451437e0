//! SPV_QCOM_cooperative_matrix_conversion: which matrix elements each invocation's array holds,
//! source-array lengths, and the packing of small elements into 32-bit words.
//!
//! Packing (the spec only calls it a bitcast): **little-endian element order**, as Vulkan lays
//! out vectors and arrays in memory and as OpBitcast of a vector to a wider scalar does.
//! Element `j` of width `w` bits occupies bits `(j*w) % 32 ..` of word `(j*w) / 32`; so for f16
//! element 0 is the low half of word 0, for i8 element 0 is byte 0 (bits 0..8).

use crate::TensorError;
use crate::ops::MatrixUse;

/// The matrix elements (row, col) held by the array of the invocation with
/// `SubgroupLocalInvocationId == invocation` (OpCompositeConstructCoopMatQCOM and
/// OpCompositeExtractCoopMatQCOM): row `invocation` (all columns, in column order) for Use A and
/// Accumulator, column `invocation` (all rows, in row order) for Use B. `None` for invocations
/// at or beyond the row (A/Acc) or column (B) count: their source is ignored on construct and
/// their result is OpUndef on extract.
pub fn invocation_elements(
    use_: MatrixUse,
    rows: u32,
    cols: u32,
    invocation: u32,
) -> Option<Vec<(u32, u32)>> {
    match use_ {
        MatrixUse::A | MatrixUse::Accumulator => {
            (invocation < rows).then(|| (0..cols).map(|c| (invocation, c)).collect())
        }
        MatrixUse::B => (invocation < cols).then(|| (0..rows).map(|r| (r, invocation)).collect()),
    }
}

/// Array length per invocation: the number of components (rows for B, columns otherwise),
/// or when packed into uint32 words, `components * elem_bits / 32` (8 for the 256-bit A/B rows,
/// `Cols/2` for f16 accumulators, `Cols` for 32-bit ones). Errors when the packed size is not a
/// whole number of words.
pub fn source_len(
    use_: MatrixUse,
    rows: u32,
    cols: u32,
    elem_bits: u32,
    packed_u32: bool,
) -> Result<u32, TensorError> {
    let n = match use_ {
        MatrixUse::B => rows,
        _ => cols,
    };
    if !packed_u32 {
        return Ok(n);
    }
    let bits = n as u64 * elem_bits as u64;
    if !bits.is_multiple_of(32) {
        return Err(TensorError::Shape {
            op: "OpCompositeConstructCoopMatQCOM",
            msg: format!("{n} elements of {elem_bits} bits do not fill whole uint32 words"),
        });
    }
    Ok((bits / 32) as u32)
}

fn check_bits(op: &'static str, bits: u32) -> Result<(), TensorError> {
    if matches!(bits, 8 | 16 | 32) {
        Ok(())
    } else {
        Err(TensorError::Shape {
            op,
            msg: format!("element width {bits} is not 8, 16 or 32"),
        })
    }
}

fn mask(bits: u32) -> u32 {
    if bits == 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}

/// Packs elements of `elem_bits` (8, 16 or 32) bits, given as raw bit patterns in the low bits,
/// into 32-bit words, little-endian element order. The count must fill whole words.
pub fn pack_words(elem_bits: u32, elems: &[u32]) -> Result<Vec<u32>, TensorError> {
    check_bits("pack", elem_bits)?;
    let per = (32 / elem_bits) as usize;
    if !elems.len().is_multiple_of(per) {
        return Err(TensorError::Shape {
            op: "pack",
            msg: format!(
                "{} elements of {elem_bits} bits do not fill whole words",
                elems.len()
            ),
        });
    }
    let m = mask(elem_bits);
    Ok(elems
        .chunks(per)
        .map(|ch| {
            ch.iter()
                .enumerate()
                .fold(0u32, |w, (j, &e)| w | ((e & m) << (j as u32 * elem_bits)))
        })
        .collect())
}

/// Inverse of [`pack_words`].
pub fn unpack_words(elem_bits: u32, words: &[u32]) -> Result<Vec<u32>, TensorError> {
    check_bits("unpack", elem_bits)?;
    let per = 32 / elem_bits;
    let m = mask(elem_bits);
    Ok(words
        .iter()
        .flat_map(|&w| (0..per).map(move |j| (w >> (j * elem_bits)) & m))
        .collect())
}

/// OpBitCastArrayQCOM from `src_bits`-wide elements to a `dst_len`-long array of
/// `dst_bits`-wide elements (each 16 or 32 per the spec; 8 accepted too), raw bit patterns in
/// and out. Total sizes must be equal.
pub fn bitcast_array(
    src_bits: u32,
    src: &[u32],
    dst_bits: u32,
    dst_len: usize,
) -> Result<Vec<u32>, TensorError> {
    check_bits("OpBitCastArrayQCOM", src_bits)?;
    check_bits("OpBitCastArrayQCOM", dst_bits)?;
    if src.len() as u64 * src_bits as u64 != dst_len as u64 * dst_bits as u64 {
        return Err(TensorError::Shape {
            op: "OpBitCastArrayQCOM",
            msg: format!(
                "source {}x{src_bits} bits and result {dst_len}x{dst_bits} bits differ in size",
                src.len()
            ),
        });
    }
    let words = pack_words(src_bits, src)?;
    unpack_words(dst_bits, &words)
}

/// OpExtractSubArrayQCOM: `dst[i] = src[start + i]` for `i < len`. Undefined behaviour (an
/// error here) when `start < 0` or `start + len > src.len()`.
pub fn extract_sub_array<T: Copy>(
    src: &[T],
    start: i32,
    len: usize,
) -> Result<Vec<T>, TensorError> {
    let ok = start >= 0
        && (start as usize)
            .checked_add(len)
            .is_some_and(|e| e <= src.len());
    if !ok {
        return Err(TensorError::Shape {
            op: "OpExtractSubArrayQCOM",
            msg: format!(
                "start {start} + length {len} exceeds source length {} (undefined behaviour)",
                src.len()
            ),
        });
    }
    Ok(src[start as usize..start as usize + len].to_vec())
}

/// OpCompositeConstructCoopMatQCOM on unpacked per-invocation arrays: `arrays[i]` is the
/// array of invocation i. Returns the dense row-major matrix. Arrays of invocations beyond the
/// row/column count are ignored.
pub fn construct<T: Copy + Default>(
    use_: MatrixUse,
    rows: u32,
    cols: u32,
    arrays: &[Vec<T>],
) -> Result<Vec<T>, TensorError> {
    let mut out = vec![T::default(); rows as usize * cols as usize];
    let owners = if use_ == MatrixUse::B { cols } else { rows };
    if (arrays.len() as u64) < owners as u64 {
        return Err(TensorError::Shape {
            op: "OpCompositeConstructCoopMatQCOM",
            msg: format!("{owners} invocations needed, {} arrays given", arrays.len()),
        });
    }
    for inv in 0..owners {
        let elems = invocation_elements(use_, rows, cols, inv).unwrap_or_default();
        let arr = &arrays[inv as usize];
        if arr.len() != elems.len() {
            return Err(TensorError::Shape {
                op: "OpCompositeConstructCoopMatQCOM",
                msg: format!(
                    "invocation {inv}: array length {} != {}",
                    arr.len(),
                    elems.len()
                ),
            });
        }
        for (&(r, c), &v) in elems.iter().zip(arr) {
            out[r as usize * cols as usize + c as usize] = v;
        }
    }
    Ok(out)
}

/// OpCompositeExtractCoopMatQCOM: the array of invocation `invocation`, or `None` (OpUndef) for
/// invocations beyond the row/column count. `matrix` is dense row-major.
pub fn extract<T: Copy>(
    use_: MatrixUse,
    rows: u32,
    cols: u32,
    matrix: &[T],
    invocation: u32,
) -> Result<Option<Vec<T>>, TensorError> {
    if matrix.len() as u64 != rows as u64 * cols as u64 {
        return Err(TensorError::Shape {
            op: "OpCompositeExtractCoopMatQCOM",
            msg: format!("matrix has {} elements, not {rows}x{cols}", matrix.len()),
        });
    }
    Ok(
        invocation_elements(use_, rows, cols, invocation).map(|els| {
            els.iter()
                .map(|&(r, c)| matrix[r as usize * cols as usize + c as usize])
                .collect()
        }),
    )
}
