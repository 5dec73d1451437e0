//! Element-level semantics of the SPV_NV_cooperative_matrix2 matrix operations on dense
//! row-major matrices: OpCooperativeMatrixReduceNV, PerElementOpNV, TransposeNV and
//! ConvertNV (ConvertUseEXT).

use crate::TensorError;
use coopmat_spirv::grammar::{cooperative_matrix_reduce as red, cooperative_matrix_use as mu};

/// The `Use` of a cooperative matrix type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatrixUse {
    /// MatrixAKHR.
    A,
    /// MatrixBKHR.
    B,
    /// MatrixAccumulatorKHR.
    Accumulator,
}

impl MatrixUse {
    /// From the type's Use operand value.
    pub fn from_raw(v: u32) -> Option<Self> {
        match v {
            mu::MatrixAKHR => Some(Self::A),
            mu::MatrixBKHR => Some(Self::B),
            mu::MatrixAccumulatorKHR => Some(Self::Accumulator),
            _ => None,
        }
    }
}

/// The `CooperativeMatrixReduce` mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceMode {
    /// Row: every element of a result row combines the whole source row.
    Row,
    /// Column: every element of a result column combines the whole source column.
    Column,
    /// Row|Column: every element combines the whole matrix.
    RowColumn,
    /// 2x2: element (r,c) combines (2r,2c), (2r+1,2c), (2r,2c+1), (2r+1,2c+1).
    TwoByTwo,
}

impl ReduceMode {
    /// From the mask; 2x2 cannot be combined with Row or Column, and 0 is not a reduction.
    pub fn from_mask(mask: u32) -> Result<Self, TensorError> {
        let bad = || TensorError::Shape {
            op: "OpCooperativeMatrixReduceNV",
            msg: format!("invalid Reduce mask {mask:#x}"),
        };
        if mask == red::Row {
            Ok(Self::Row)
        } else if mask == red::Column {
            Ok(Self::Column)
        } else if mask == red::Row | red::Column {
            Ok(Self::RowColumn)
        } else if mask == red::_2x2 {
            Ok(Self::TwoByTwo)
        } else {
            Err(bad())
        }
    }
}

fn shape_err(op: &'static str, msg: String) -> TensorError {
    TensorError::Shape { op, msg }
}

fn check_len<T>(op: &'static str, m: &[T], rows: u32, cols: u32) -> Result<(), TensorError> {
    if m.len() as u64 != rows as u64 * cols as u64 {
        return Err(shape_err(
            op,
            format!("matrix has {} elements, not {rows}x{cols}", m.len()),
        ));
    }
    Ok(())
}

/// For a reduction of a `rows x cols` matrix to `out_rows x out_cols`, the source elements
/// (row, col) that combine into each result element, row-major over the result, in the order
/// [`reduce`] folds them (row-major over the source; the spec leaves the order open and asks
/// for a commutative, associative CombineFunc). Checks the shape rules.
pub fn reduce_sources(
    mode: ReduceMode,
    rows: u32,
    cols: u32,
    out_rows: u32,
    out_cols: u32,
) -> Result<Vec<Vec<(u32, u32)>>, TensorError> {
    let op = "OpCooperativeMatrixReduceNV";
    let ok = match mode {
        ReduceMode::Row => out_rows == rows,
        ReduceMode::Column => out_cols == cols,
        ReduceMode::RowColumn => true,
        ReduceMode::TwoByTwo => {
            rows.is_multiple_of(2)
                && cols.is_multiple_of(2)
                && out_rows * 2 == rows
                && out_cols * 2 == cols
        }
    };
    if !ok || rows == 0 || cols == 0 {
        return Err(shape_err(
            op,
            format!("{mode:?} cannot reduce {rows}x{cols} to {out_rows}x{out_cols}"),
        ));
    }
    let mut out = Vec::with_capacity(out_rows as usize * out_cols as usize);
    for r in 0..out_rows {
        for c in 0..out_cols {
            out.push(match mode {
                ReduceMode::Row => (0..cols).map(|j| (r, j)).collect(),
                ReduceMode::Column => (0..rows).map(|i| (i, c)).collect(),
                ReduceMode::RowColumn => (0..rows)
                    .flat_map(|i| (0..cols).map(move |j| (i, j)))
                    .collect(),
                ReduceMode::TwoByTwo => vec![
                    (2 * r, 2 * c),
                    (2 * r + 1, 2 * c),
                    (2 * r, 2 * c + 1),
                    (2 * r + 1, 2 * c + 1),
                ],
            });
        }
    }
    Ok(out)
}

/// OpCooperativeMatrixReduceNV on a dense row-major `rows x cols` matrix, with CombineFunc as
/// a fallible callback. Each result element is a left fold over [`reduce_sources`]. Equal
/// source sets (a whole row, column or matrix) are combined once and reused.
pub fn reduce<T: Copy, E: From<TensorError>>(
    m: &[T],
    rows: u32,
    cols: u32,
    mode: ReduceMode,
    out_rows: u32,
    out_cols: u32,
    mut combine: impl FnMut(T, T) -> Result<T, E>,
) -> Result<Vec<T>, E> {
    check_len("OpCooperativeMatrixReduceNV", m, rows, cols)?;
    let sources = reduce_sources(mode, rows, cols, out_rows, out_cols)?;
    let mut cache: std::collections::HashMap<Vec<(u32, u32)>, T> = Default::default();
    let mut out = Vec::with_capacity(sources.len());
    for src in sources {
        if let Some(v) = cache.get(&src) {
            out.push(*v);
            continue;
        }
        let at = |(r, c): (u32, u32)| m[r as usize * cols as usize + c as usize];
        let mut acc = at(src[0]);
        for &p in &src[1..] {
            acc = combine(acc, at(p))?;
        }
        out.push(acc);
        cache.insert(src, acc);
    }
    Ok(out)
}

/// OpCooperativeMatrixPerElementOpNV: `f(row, col, element)` for every element (row and col
/// are the 32-bit int parameters 1 and 2). Extra operands are the caller's business: a
/// matrix operand contributes its element at the same (row, col).
pub fn per_element<T: Copy, E: From<TensorError>>(
    m: &[T],
    rows: u32,
    cols: u32,
    mut f: impl FnMut(u32, u32, T) -> Result<T, E>,
) -> Result<Vec<T>, E> {
    check_len("OpCooperativeMatrixPerElementOpNV", m, rows, cols)?;
    let mut out = Vec::with_capacity(m.len());
    for r in 0..rows {
        for c in 0..cols {
            out.push(f(r, c, m[r as usize * cols as usize + c as usize])?);
        }
    }
    Ok(out)
}

/// OpCooperativeMatrixTransposeNV: a `rows x cols` Accumulator becomes the `cols x rows` B
/// matrix with `out[c][r] = m[r][c]`.
pub fn transpose<T: Copy>(m: &[T], rows: u32, cols: u32) -> Result<Vec<T>, TensorError> {
    check_len("OpCooperativeMatrixTransposeNV", m, rows, cols)?;
    let mut out = Vec::with_capacity(m.len());
    for c in 0..cols {
        for r in 0..rows {
            out.push(m[r as usize * cols as usize + c as usize]);
        }
    }
    Ok(out)
}

/// Which Use changes a conversion may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvertRules {
    /// SPV_NV_cooperative_matrix2: Accumulator to A or B only.
    Nv,
    /// SPV_EXT_cooperative_matrix_maintenance1 (CooperativeMatrixConversionsEXT): also A or B
    /// to Accumulator; the Use must change.
    Ext,
}

/// Checks a Use change of OpCooperativeMatrixConvertNV / ConvertUseEXT (or a relaxed
/// Op*Convert). The elements themselves are unchanged: the dense matrix is the same values at
/// the same (row, col); only their distribution over invocations may differ.
pub fn check_convert_use(
    rules: ConvertRules,
    from: MatrixUse,
    to: MatrixUse,
) -> Result<(), TensorError> {
    use MatrixUse::*;
    let ok = matches!(
        (rules, from, to),
        (_, Accumulator, A | B) | (ConvertRules::Ext, A | B, Accumulator)
    );
    if ok {
        Ok(())
    } else {
        Err(shape_err(
            "OpCooperativeMatrixConvertNV",
            format!("Use {from:?} -> {to:?} is not allowed under {rules:?} rules"),
        ))
    }
}

/// ConvertUse: checks the Use rule and returns the same dense matrix; with the
/// `CooperativeMatrixTransposeEXT` decoration the result is the transpose (rows and cols
/// swapped), which requires Accumulator -> A/B.
pub fn convert_use<T: Copy>(
    rules: ConvertRules,
    from: MatrixUse,
    to: MatrixUse,
    m: &[T],
    rows: u32,
    cols: u32,
    transpose_decoration: bool,
) -> Result<Vec<T>, TensorError> {
    check_convert_use(rules, from, to)?;
    check_len("OpCooperativeMatrixConvertNV", m, rows, cols)?;
    if transpose_decoration {
        if from != MatrixUse::Accumulator {
            return Err(shape_err(
                "CooperativeMatrixTransposeEXT",
                "the transpose decoration requires an Accumulator operand".into(),
            ));
        }
        return transpose(m, rows, cols);
    }
    Ok(m.to_vec())
}
