//! The f64 reference of ggml's MUL_MAT as the cm2 matmul shaders compute it (GGML-FACTS
//! §4.7): `dst = src1 · src0ᵀ`, i.e. `D[n][m] = Σ_k A[m][k] · B[n][k]` with A = src0 (M x K,
//! the weights, K contiguous), B = src1 (N x K, K contiguous) and D (N x M, M contiguous).

use crate::GgmlError;
use crate::f16::round_f16;
use crate::quants::{GgmlType, dequantize_row};

/// Batch shape of a MUL_MAT: A has `ne02 x ne03` matrices, B and D have `ne12 x ne13`;
/// A is broadcast (`ne12 % ne02 == 0`, `ne13 % ne03 == 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchShape {
    /// A batches in dim 2.
    pub ne02: u32,
    /// A batches in dim 3.
    pub ne03: u32,
    /// B/D batches in dim 2.
    pub ne12: u32,
    /// B/D batches in dim 3.
    pub ne13: u32,
}

impl Default for BatchShape {
    fn default() -> Self {
        Self {
            ne02: 1,
            ne03: 1,
            ne12: 1,
            ne13: 1,
        }
    }
}

impl BatchShape {
    /// Number of B/D batches (`ne12 * ne13`).
    pub fn batches(&self) -> u32 {
        self.ne12 * self.ne13
    }
    /// Number of A batches (`ne02 * ne03`).
    pub fn a_batches(&self) -> u32 {
        self.ne02 * self.ne03
    }
    /// Checks the broadcast rule.
    pub fn check(&self) -> Result<(), GgmlError> {
        let ok = self.ne02 > 0
            && self.ne03 > 0
            && self.ne12 > 0
            && self.ne13 > 0
            && self.ne12.is_multiple_of(self.ne02)
            && self.ne13.is_multiple_of(self.ne03);
        if ok {
            Ok(())
        } else {
            Err(GgmlError::Params(format!("invalid batch shape {self:?}")))
        }
    }
    /// The A batch used by B/D batch `b` (the shader's mapping, GGML-FACTS §3).
    pub fn a_batch(&self, b: u32) -> u32 {
        let (i13, i12) = (b / self.ne12, b % self.ne12);
        let (bc2, bc3) = (self.ne12 / self.ne02, self.ne13 / self.ne03);
        (i13 / bc3) * self.ne02 + i12 / bc2
    }
}

/// `D[b][n][m] = Σ_k A[a_batch(b)][m][k] · B[b][n][k]` in f64. `a` is `a_batches` packed
/// M x K matrices, `b` is `batches` packed N x K matrices; the result is `batches` packed N x M.
pub fn mul_mat(
    a: &[f64],
    b: &[f64],
    m: usize,
    n: usize,
    k: usize,
    batch: BatchShape,
) -> Result<Vec<f64>, GgmlError> {
    batch.check()?;
    let (ab, bb) = (batch.a_batches() as usize, batch.batches() as usize);
    if a.len() != ab * m * k || b.len() != bb * n * k {
        return Err(GgmlError::Params(format!(
            "mul_mat: A has {} values (want {}), B has {} (want {})",
            a.len(),
            ab * m * k,
            b.len(),
            bb * n * k
        )));
    }
    let mut d = vec![0f64; bb * n * m];
    for bi in 0..bb {
        let ai = batch.a_batch(bi as u32) as usize;
        for ni in 0..n {
            let brow = &b[(bi * n + ni) * k..][..k];
            for mi in 0..m {
                let arow = &a[(ai * m + mi) * k..][..k];
                d[(bi * n + ni) * m + mi] = arow.iter().zip(brow).map(|(x, y)| x * y).sum();
            }
        }
    }
    Ok(d)
}

/// Dequantizes A (`rows` rows of `k` elements, `stride_a` elements apart, a multiple of the
/// block size) to f32 as ggml does, optionally rounding every value to f16 as the shaders'
/// f16 A tile does.
pub fn dequantize_matrix(
    ty: GgmlType,
    bytes: &[u8],
    rows: usize,
    k: usize,
    stride_a: usize,
    to_f16: bool,
) -> Result<Vec<f32>, GgmlError> {
    let row_bytes = ty.row_bytes(k)?;
    let stride_bytes = ty.row_bytes(stride_a)?;
    let mut out = Vec::with_capacity(rows * k);
    for r in 0..rows {
        let start = r * stride_bytes;
        let row = bytes.get(start..start + row_bytes).ok_or_else(|| {
            GgmlError::Params(format!(
                "A row {r} is outside the {}-byte buffer",
                bytes.len()
            ))
        })?;
        let v = dequantize_row(ty, row)?;
        out.extend(v.into_iter().map(|x| if to_f16 { round_f16(x) } else { x }));
    }
    Ok(out)
}

/// Normalized mean squared error `Σ(ref-out)² / Σref²` (test-backend-ops' acceptance metric;
/// ggml accepts MUL_MAT at <= 5e-4).
pub fn nmse(reference: &[f64], out: &[f64]) -> f64 {
    let num: f64 = reference
        .iter()
        .zip(out)
        .map(|(r, o)| (r - o) * (r - o))
        .sum();
    let den: f64 = reference.iter().map(|r| r * r).sum();
    if den == 0.0 { num } else { num / den }
}
