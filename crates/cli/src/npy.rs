//! `.npy` input (numpy's array files) for the buffers of `coopmat run`, `gpu run` and `diff`:
//! a header parsed with its size and nesting bounded first, the data checked against it.

use anyhow::{Result, anyhow, bail, ensure};

/// Largest `.npy` header accepted. numpy writes a few hundred bytes; the header is a Python
/// literal that the crate's parser handles recursively, so both its size and its nesting are
/// bounded before the crate sees it.
const NPY_MAX_HEADER: usize = 64 << 10;
/// Deepest bracket nesting accepted in a `.npy` header (a plain array needs 2: `{…(…)…}`).
const NPY_MAX_NESTING: usize = 8;

/// The dimensions of the header's `'shape'` tuple, when it is one of plain integers (anything
/// else is left for npyz to accept or refuse).
fn shape_in_header(header: &[u8]) -> Option<Vec<u64>> {
    let text = std::str::from_utf8(header).ok()?;
    let after = &text[text.find("shape")? + "shape".len()..];
    let after = after.trim_start_matches(['\'', '"', ' ', ':']);
    let tuple = after.strip_prefix('(')?;
    let tuple = &tuple[..tuple.find(')')?];
    tuple
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().ok())
        .collect()
}

/// The array of a `.npy` file as bytes in C (row-major) order, little-endian. The header is
/// checked first (magic, size, nesting), then the data against it: a plain dtype, exactly
/// shape × item size bytes; Fortran-ordered arrays are transposed to C order.
pub fn to_c_order(bytes: &[u8]) -> Result<Vec<u8>> {
    ensure!(bytes.starts_with(b"\x93NUMPY"), "no .npy magic");
    let (len_bytes, prefix) = match bytes.get(6) {
        Some(1) => (2, 10),
        Some(2 | 3) => (4, 12),
        Some(v) => bail!("unknown .npy version {v}"),
        None => bail!("truncated header"),
    };
    let header_len = bytes
        .get(8..8 + len_bytes)
        .map(|b| b.iter().rev().fold(0usize, |a, &x| (a << 8) | x as usize))
        .ok_or_else(|| anyhow!("truncated header"))?;
    ensure!(
        header_len <= NPY_MAX_HEADER,
        "header of {header_len} bytes (at most {NPY_MAX_HEADER})"
    );
    let header = bytes
        .get(prefix..prefix + header_len)
        .ok_or_else(|| anyhow!("header runs past the end of the file"))?;
    let mut depth = 0usize;
    for &c in header {
        match c {
            b'(' | b'[' | b'{' => {
                depth += 1;
                ensure!(
                    depth <= NPY_MAX_NESTING,
                    "header nested deeper than {NPY_MAX_NESTING}"
                );
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    // npyz multiplies the shape's dimensions unchecked (a panic in a debug build, a wrapped
    // count in a release one): a shape whose element count overflows is refused first.
    if let Some(dims) = shape_in_header(header) {
        ensure!(
            dims.iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .is_some(),
            "shape {dims:?} overflows"
        );
    }
    let mut cur = std::io::Cursor::new(bytes);
    let header = npyz::NpyHeader::from_reader(&mut cur)?;
    let data = &bytes[cur.position() as usize..];
    let npyz::DType::Plain(ts) = header.dtype() else {
        bail!("record and sub-array dtypes are not supported (only plain numbers)");
    };
    let item = ts
        .num_bytes()
        .filter(|&n| n > 0)
        .ok_or_else(|| anyhow!("dtype {ts} has no fixed size"))?;
    let shape = header.shape();
    let count = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| anyhow!("shape {shape:?} overflows"))?;
    let expected = count
        .checked_mul(item as u64)
        .ok_or_else(|| anyhow!("shape {shape:?} overflows"))?;
    ensure!(
        data.len() as u64 == expected,
        "shape {shape:?} of {ts} needs {expected} bytes of data, the file has {}",
        data.len()
    );
    let mut out = data.to_vec();
    if ts.endianness() == npyz::Endianness::Big && item > 1 {
        for c in out.chunks_mut(item) {
            c.reverse();
        }
    }
    if header.order() == npyz::Order::Fortran && shape.iter().filter(|&&d| d > 1).count() > 1 {
        out = fortran_to_c(&out, shape, item);
    }
    Ok(out)
}

/// Reorders the items of an array stored first-index-fastest into last-index-fastest order.
fn fortran_to_c(data: &[u8], shape: &[u64], item: usize) -> Vec<u8> {
    let mut out = vec![0u8; data.len()];
    let mut index = vec![0u64; shape.len()];
    for c_item in 0..data.len() / item {
        // Fortran offset of the multi-index: the first index varies fastest.
        let mut f_item = 0u64;
        for (&i, &d) in index.iter().zip(shape).rev() {
            f_item = f_item * d + i;
        }
        let f = f_item as usize * item;
        out[c_item * item..(c_item + 1) * item].copy_from_slice(&data[f..f + item]);
        // Advance the C-order multi-index: the last index varies fastest.
        for (i, &d) in index.iter_mut().zip(shape).rev() {
            *i += 1;
            if *i < d {
                break;
            }
            *i = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::to_c_order;

    /// A version-1 `.npy` file with `header` (padded as numpy pads it) and `data`.
    fn npy(header: &str, data: &[u8]) -> Vec<u8> {
        let mut h = header.to_string();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((h.len() as u16).to_le_bytes());
        out.extend(h.as_bytes());
        out.extend(data);
        out
    }

    #[test]
    fn c_order_arrays_are_read_as_they_are() {
        let data: Vec<u8> = (1..=6u8).collect();
        let f = npy(
            "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }",
            &data,
        );
        assert_eq!(to_c_order(&f).unwrap(), data);
    }

    #[test]
    fn fortran_order_arrays_are_transposed_to_c_order() {
        // [[1, 2, 3], [4, 5, 6]] stored column by column.
        let f = npy(
            "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }",
            &[1, 4, 2, 5, 3, 6],
        );
        assert_eq!(to_c_order(&f).unwrap(), [1, 2, 3, 4, 5, 6]);
        // Big-endian 16-bit items, 3-D: item size and byte order both respected.
        let values: Vec<u16> = (0..24).collect();
        let mut fortran = Vec::new();
        for k in 0..4 {
            for j in 0..3 {
                for i in 0..2 {
                    fortran.extend(values[i * 12 + j * 4 + k].to_be_bytes());
                }
            }
        }
        let f = npy(
            "{'descr': '>u2', 'fortran_order': True, 'shape': (2, 3, 4), }",
            &fortran,
        );
        let want: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(to_c_order(&f).unwrap(), want);
    }

    #[test]
    fn data_that_does_not_match_the_shape_is_refused() {
        let f = npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
            &[0; 12],
        );
        let e = format!("{:#}", to_c_order(&f).unwrap_err());
        assert!(e.contains("needs 16 bytes of data, the file has 12"), "{e}");
        let f = npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }",
            &[],
        );
        assert!(to_c_order(&f).is_err());
    }

    #[test]
    fn hostile_headers_are_refused_quickly() {
        let deep = format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': {}1{}, }}",
            "(".repeat(40),
            ")".repeat(40)
        );
        let e = format!("{:#}", to_c_order(&npy(&deep, &[])).unwrap_err());
        assert!(e.contains("nested deeper"), "{e}");
        let record = npy(
            "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,), }",
            &[0; 8],
        );
        let e = format!("{:#}", to_c_order(&record).unwrap_err());
        assert!(e.contains("record"), "{e}");
        let mut long = b"\x93NUMPY\x02\x00".to_vec();
        long.extend(u32::MAX.to_le_bytes());
        let e = format!("{:#}", to_c_order(&long).unwrap_err());
        assert!(e.contains("at most"), "{e}");
        assert!(to_c_order(b"\x93NUMPY").is_err());
        assert!(to_c_order(b"PK\x03\x04").is_err());
    }
}
