//! Native kernels for whole cooperative-matrix tiles: MulAdd and f16 row conversion.
//!
//! The f32 kernel keeps one output row (N = 8 or 16 elements, compile-time) in registers and
//! streams rows of B, so the compiler vectorizes the inner loop over N; it is compiled three
//! times (baseline, AVX2+FMA, AVX-512) and the best one the CPU supports is picked at run time.
//! Float MulAdd precision (the Vulkan spec leaves it to the implementation): f16, bf16, fp8
//! and f32 operands are multiplied and accumulated in f32 (f16·f16, bf16·bf16 and fp8·fp8
//! products are exact in f32; with FMA available each step is one fused multiply-add), the
//! result rounded once to the result component type; f64 in f64.

/// Which instruction-set level the kernels run at.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Level {
    Base,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

fn level() -> Level {
    static L: std::sync::OnceLock<Level> = std::sync::OnceLock::new();
    *L.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("fma") {
                return Level::Avx512;
            }
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                return Level::Avx2;
            }
        }
        Level::Base
    })
}

/// The name of the kernel level in use (for reports).
pub fn level_name() -> &'static str {
    match level() {
        Level::Base => "baseline",
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => "avx2+fma",
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => "avx512f+fma",
    }
}

/// R rows of the output at a time: R·N/lanes independent accumulator registers hide the FMA
/// latency (one accumulator chain per row would be latency-bound).
#[inline(always)]
fn mm_block<const N: usize, const R: usize, const FUSED: bool>(
    i0: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
    c: &[f32],
    d: &mut [f32],
) {
    let mut acc = [[0f32; N]; R];
    for (r, row) in acc.iter_mut().enumerate() {
        row.copy_from_slice(&c[(i0 + r) * N..(i0 + r) * N + N]);
    }
    for kk in 0..k {
        let brow: &[f32; N] = b[kk * N..kk * N + N].try_into().unwrap();
        for (r, row) in acc.iter_mut().enumerate() {
            let av = a[(i0 + r) * k + kk];
            for j in 0..N {
                row[j] = if FUSED {
                    av.mul_add(brow[j], row[j])
                } else {
                    row[j] + av * brow[j]
                };
            }
        }
    }
    for (r, row) in acc.iter().enumerate() {
        d[(i0 + r) * N..(i0 + r) * N + N].copy_from_slice(row);
    }
}

#[inline(always)]
fn mm_rows<const N: usize, const FUSED: bool>(
    m: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
    c: &[f32],
    d: &mut [f32],
) {
    let mut i = 0;
    while i + 8 <= m && N <= 16 {
        mm_block::<N, 8, FUSED>(i, k, a, b, c, d);
        i += 8;
    }
    while i + 4 <= m {
        mm_block::<N, 4, FUSED>(i, k, a, b, c, d);
        i += 4;
    }
    while i < m {
        mm_block::<N, 1, FUSED>(i, k, a, b, c, d);
        i += 1;
    }
}

#[inline(always)]
fn mm_body<const FUSED: bool>(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
    c: &[f32],
    d: &mut [f32],
) {
    match n {
        16 => mm_rows::<16, FUSED>(m, k, a, b, c, d),
        8 => mm_rows::<8, FUSED>(m, k, a, b, c, d),
        32 => mm_rows::<32, FUSED>(m, k, a, b, c, d),
        _ => {
            d[..m * n].copy_from_slice(&c[..m * n]);
            for i in 0..m {
                for kk in 0..k {
                    let av = a[i * k + kk];
                    for j in 0..n {
                        let x = &mut d[i * n + j];
                        *x = if FUSED {
                            av.mul_add(b[kk * n + j], *x)
                        } else {
                            *x + av * b[kk * n + j]
                        };
                    }
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn mm_avx2(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &[f32], d: &mut [f32]) {
    mm_body::<true>(m, n, k, a, b, c, d)
}

/// R rows of a 16-column tile with explicit AVX-512: one zmm accumulator per row, B's row
/// loaded once per k and reused by the R rows, A's element broadcast from memory.
///
/// # Safety
/// The CPU must support AVX-512F; `a`, `b`, `c`, `d` must hold rows `i0..i0 + R` (`a`: k
/// columns, the others 16) and `b` k rows of 16.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn block16_avx512<const R: usize>(
    i0: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
    c: &[f32],
    d: &mut [f32],
) {
    use std::arch::x86_64::*;
    debug_assert!(
        a.len() >= (i0 + R) * k
            && b.len() >= k * 16
            && c.len() >= (i0 + R) * 16
            && d.len() >= (i0 + R) * 16
    );
    // SAFETY: the caller guarantees the slice extents above, so every pointer stays in bounds;
    // unaligned loads/stores are used throughout.
    unsafe {
        let mut acc = [_mm512_setzero_ps(); R];
        for (r, x) in acc.iter_mut().enumerate() {
            *x = _mm512_loadu_ps(c.as_ptr().add((i0 + r) * 16));
        }
        for kk in 0..k {
            let bv = _mm512_loadu_ps(b.as_ptr().add(kk * 16));
            for (r, x) in acc.iter_mut().enumerate() {
                let av = _mm512_set1_ps(*a.get_unchecked((i0 + r) * k + kk));
                *x = _mm512_fmadd_ps(av, bv, *x);
            }
        }
        for (r, x) in acc.iter().enumerate() {
            _mm512_storeu_ps(d.as_mut_ptr().add((i0 + r) * 16), *x);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
fn mm_avx512(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &[f32], d: &mut [f32]) {
    if n == 16 {
        let mut i = 0;
        // SAFETY (all three): matmul_f32 asserted a: m×k, b: k×16, c and d: m×16, and we only
        // pass row ranges below m; AVX-512F is enabled on this function.
        while i + 16 <= m {
            unsafe { block16_avx512::<16>(i, k, a, b, c, d) };
            i += 16;
        }
        while i + 4 <= m {
            unsafe { block16_avx512::<4>(i, k, a, b, c, d) };
            i += 4;
        }
        while i < m {
            unsafe { block16_avx512::<1>(i, k, a, b, c, d) };
            i += 1;
        }
        return;
    }
    mm_body::<true>(m, n, k, a, b, c, d)
}

/// `d = a·b + c` for row-major f32 tiles (a: m×k, b: k×n, c and d: m×n).
pub fn matmul_f32(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &[f32], d: &mut [f32]) {
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n && d.len() >= m * n);
    match level() {
        Level::Base => mm_body::<false>(m, n, k, a, b, c, d),
        // SAFETY: level() verified at run time that the CPU supports AVX2 and FMA.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { mm_avx2(m, n, k, a, b, c, d) },
        // SAFETY: level() verified at run time that the CPU supports AVX-512F and FMA.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { mm_avx512(m, n, k, a, b, c, d) },
    }
}

/// `d = a·b + c` for f64 tiles.
pub fn matmul_f64(m: usize, n: usize, k: usize, a: &[f64], b: &[f64], c: &[f64], d: &mut [f64]) {
    d[..m * n].copy_from_slice(&c[..m * n]);
    for i in 0..m {
        for kk in 0..k {
            let av = a[i * k + kk];
            for j in 0..n {
                d[i * n + j] += av * b[kk * n + j];
            }
        }
    }
}

/// Exact integer A·B (each row of the result as i128 sums), for the integer MulAdd rules.
pub fn matmul_int(m: usize, n: usize, k: usize, a: &[i128], b: &[i128], out: &mut [i128]) {
    for i in 0..m {
        for j in 0..n {
            let mut s = 0i128;
            for kk in 0..k {
                s = s.wrapping_add(a[i * k + kk].wrapping_mul(b[kk * n + j]));
            }
            out[i * n + j] = s;
        }
    }
}

/// Branch-free f16 → f32 (exact), written so that loops over it vectorize.
#[inline(always)]
fn h2f(h: u16) -> f32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    let em = h & 0x7fff;
    let mut o = em << 13;
    let exp = o & (0x7c00 << 13);
    o += (127 - 15) << 23;
    if exp == 0x7c00 << 13 {
        o += (128 - 16) << 23;
    } else if exp == 0 {
        o = (f32::from_bits(o + (1 << 23)) - f32::from_bits(113 << 23)).to_bits();
    }
    f32::from_bits(o | sign)
}

#[inline(always)]
fn h2f_words_body(src: &[u32], dst: &mut [f32]) {
    for (i, &w) in src.iter().enumerate() {
        dst[2 * i] = h2f(w as u16);
        dst[2 * i + 1] = h2f((w >> 16) as u16);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
fn h2f_words_avx2(src: &[u32], dst: &mut [f32]) {
    h2f_words_body(src, dst)
}

/// f16 → f32 with vcvtph2ps on zmm registers (16 halves at a time).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn h2f_words_avx512(src: &[u32], dst: &mut [f32]) {
    use std::arch::x86_64::*;
    let full = src.len() / 8;
    for i in 0..full {
        // SAFETY: i·8 + 8 <= src.len() and 2·(i·8 + 8) <= dst.len() (asserted by the caller);
        // unaligned load and store.
        unsafe {
            let h = _mm256_loadu_si256(src.as_ptr().add(i * 8) as *const __m256i);
            _mm512_storeu_ps(dst.as_mut_ptr().add(i * 16), _mm512_cvtph_ps(h));
        }
    }
    h2f_words_body(&src[full * 8..], &mut dst[full * 16..]);
}

/// Converts packed f16 pairs (low half first) to f32: `dst.len() >= 2·src.len()`.
pub fn f16_words_to_f32(src: &[u32], dst: &mut [f32]) {
    assert!(dst.len() >= 2 * src.len());
    match level() {
        Level::Base => h2f_words_body(src, dst),
        // SAFETY: level() is Avx2 only when AVX2 is present; F16C ships with every AVX2 CPU.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { h2f_words_avx2(src, dst) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { h2f_words_avx512(src, dst) },
    }
}

/// Hint that `x` will be read soon (a software prefetch into all cache levels; a no-op off
/// x86-64). Per-lane loads from scattered buffer rows are latency bound: fetching a few lanes
/// ahead keeps several cache misses in flight.
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and has no architectural effect; the pointer comes from a
    // live reference. SSE (which provides it) is part of the x86-64 baseline.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h2f_is_exact() {
        for b in 0..=u16::MAX {
            let x = h2f(b);
            let y = half::f16::from_bits(b).to_f32();
            assert!(
                x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
                "{b:#x}"
            );
        }
    }

    #[test]
    fn matmul_matches_naive() {
        for (m, n, k) in [(16, 16, 16), (8, 8, 8), (16, 8, 32), (3, 5, 7)] {
            let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
            let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 * 0.5).collect();
            let c: Vec<f32> = (0..m * n).map(|i| i as f32).collect();
            let mut d = vec![0f32; m * n];
            matmul_f32(m, n, k, &a, &b, &c, &mut d);
            for i in 0..m {
                for j in 0..n {
                    let mut s = c[i * n + j];
                    for kk in 0..k {
                        s += a[i * k + kk] * b[kk * n + j];
                    }
                    assert_eq!(d[i * n + j], s);
                }
            }
        }
    }
}
