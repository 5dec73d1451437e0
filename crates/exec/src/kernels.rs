//! Native kernels for whole cooperative-matrix tiles: MulAdd and f16 row conversion.
//!
//! The f32 kernel is register-blocked: with AVX-512, blocks of 6 rows × 64 columns while that
//! many columns are left, then 12 × 32 (24 zmm accumulators; 16 × 16 for a 16-wide panel),
//! with AVX2+FMA 6 × 16 (12 ymm; 12 × 8), for any tile shape (the right edge is masked, the
//! bottom rows take blocks of 4 and 1); the best level the CPU supports is picked at run time,
//! and a portable loop is the baseline. MulAdds that share A and have 16-column tiles run as a
//! group with AVX-512 (`matmul_f32_shared_a`): a 16-wide tile alone needs as many loads as
//! FMAs, and loads, not FMAs, bound these loops. The
//! AVX-512 and AVX2 block functions share their shape but not their intrinsics (a generic form
//! would call intrinsics from code compiled without the target features, and not inline).
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
            if std::is_x86_feature_detected!("avx2")
                && std::is_x86_feature_detected!("fma")
                && std::is_x86_feature_detected!("f16c")
            {
                return Level::Avx2;
            }
        }
        Level::Base
    })
}

/// Which instruction set the interpreter's column loops run with (`eval::Columns::run`): the
/// baseline's SSE2, or copies compiled with AVX2 (x86-64-v3) or AVX-512.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ColumnLevel {
    Base,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// Every [`ColumnLevel`] this CPU has, the baseline first (the tests run each).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn column_levels() -> Vec<ColumnLevel> {
    let best = column_level();
    let mut v = vec![ColumnLevel::Base];
    #[cfg(target_arch = "x86_64")]
    {
        if best != ColumnLevel::Base {
            v.push(ColumnLevel::Avx2);
        }
        if best == ColumnLevel::Avx512 {
            v.push(ColumnLevel::Avx512);
        }
    }
    v
}

/// The widest [`ColumnLevel`] this CPU has, detected once.
pub(crate) fn column_level() -> ColumnLevel {
    static L: std::sync::OnceLock<ColumnLevel> = std::sync::OnceLock::new();
    *L.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            use std::is_x86_feature_detected as has;
            let v3 = has!("avx2")
                && has!("fma")
                && has!("f16c")
                && has!("bmi1")
                && has!("bmi2")
                && has!("lzcnt")
                && has!("popcnt");
            if v3 && has!("avx512f") && has!("avx512bw") && has!("avx512dq") && has!("avx512vl") {
                return ColumnLevel::Avx512;
            }
            if v3 {
                return ColumnLevel::Avx2;
            }
        }
        ColumnLevel::Base
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

/// One register block of `d = a·b + c` with AVX-512: rows `i0..i0 + R`, columns `j0..` in `W`
/// zmm vectors of 16 (`masks` selects the columns of each vector that exist, so a block at the
/// right edge of any `n` is the same code). The R·W accumulators stay in registers for the
/// whole k loop; each step loads W vectors of B and broadcasts R elements of A. Every output
/// element is `c` followed by one fused multiply-add per k in order, as in [`mm_body`].
///
/// # Safety
/// The CPU must support AVX-512F; rows `i0..i0 + R` must exist (`a`: m×k, `b`: k×n, `c` and
/// `d`: m×n, row-major, checked by [`matmul_f32`]) and the columns `masks` selects must lie
/// below n. Masked-out elements are neither read nor written (AVX-512 masked loads and
/// stores do not touch them).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
unsafe fn block_avx512<const R: usize, const W: usize, const KC: usize>(
    (i0, j0): (usize, usize),
    (n, k): (usize, usize),
    masks: [u16; W],
    a: &[f32],
    b: &[f32],
    c: &[f32],
    d: &mut [f32],
) {
    use std::arch::x86_64::*;
    let k = known_depth::<KC>(k);
    // SAFETY: by the caller's contract every unmasked element addressed below is inside its
    // slice; masked-out lanes are not accessed.
    unsafe {
        let mut acc = [[_mm512_setzero_ps(); W]; R];
        for (r, row) in acc.iter_mut().enumerate() {
            for (w, x) in row.iter_mut().enumerate() {
                let at = (i0 + r) * n + j0 + 16 * w;
                *x = _mm512_maskz_loadu_ps(masks[w], c.as_ptr().add(at));
            }
        }
        for kk in 0..k {
            let mut bv = [_mm512_setzero_ps(); W];
            for (w, x) in bv.iter_mut().enumerate() {
                *x = _mm512_maskz_loadu_ps(masks[w], b.as_ptr().add(kk * n + j0 + 16 * w));
            }
            for (r, row) in acc.iter_mut().enumerate() {
                let av = _mm512_set1_ps(*a.get_unchecked((i0 + r) * k + kk));
                for (w, x) in row.iter_mut().enumerate() {
                    *x = _mm512_fmadd_ps(av, bv[w], *x);
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            for (w, x) in row.iter().enumerate() {
                let at = (i0 + r) * n + j0 + 16 * w;
                _mm512_mask_storeu_ps(d.as_mut_ptr().add(at), masks[w], *x);
            }
        }
    }
}

/// The AVX2 form of [`block_avx512`]: `W` ymm vectors of 8 columns, `masks[w]` the number of
/// columns of vector w that exist (1..=8). A block whose vectors are all full uses plain loads
/// and stores; one with a narrower vector vmaskmov for all of them, which does not touch the
/// masked-out elements (AMD's cores run a vmaskmov store as a long microcoded sequence, so a
/// full block must not pay it).
///
/// # Safety
/// As for [`block_avx512`], with AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn block_avx2<const R: usize, const W: usize, const KC: usize>(
    at: (usize, usize),
    nk: (usize, usize),
    masks: [u16; W],
    a: &[f32],
    b: &[f32],
    c: &[f32],
    d: &mut [f32],
) {
    // SAFETY: the caller's contract, passed on.
    unsafe {
        match masks.iter().all(|&m| m == 8) {
            true => block_avx2_body::<R, W, KC, true>(at, nk, masks, a, b, c, d),
            false => block_avx2_body::<R, W, KC, false>(at, nk, masks, a, b, c, d),
        }
    }
}

/// [`block_avx2`] with every vector full (`FULL`: plain loads and stores) or not (vmaskmov).
///
/// # Safety
/// As for [`block_avx2`]; with `FULL` every mask is 8.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn block_avx2_body<const R: usize, const W: usize, const KC: usize, const FULL: bool>(
    (i0, j0): (usize, usize),
    (n, k): (usize, usize),
    masks: [u16; W],
    a: &[f32],
    b: &[f32],
    c: &[f32],
    d: &mut [f32],
) {
    use std::arch::x86_64::*;
    let k = known_depth::<KC>(k);
    // SAFETY: by the caller's contract every unmasked element addressed below is inside its
    // slice; vmaskmov does not access masked-out elements, and with FULL there are none.
    unsafe {
        let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let mut mv = [_mm256_setzero_si256(); W];
        for (w, x) in mv.iter_mut().enumerate() {
            *x = _mm256_cmpgt_epi32(_mm256_set1_epi32(masks[w] as i32), lanes);
        }
        let load = |p: *const f32, m: __m256i| match FULL {
            true => _mm256_loadu_ps(p),
            false => _mm256_maskload_ps(p, m),
        };
        let mut acc = [[_mm256_setzero_ps(); W]; R];
        for (r, row) in acc.iter_mut().enumerate() {
            for (w, x) in row.iter_mut().enumerate() {
                *x = load(c.as_ptr().add((i0 + r) * n + j0 + 8 * w), mv[w]);
            }
        }
        for kk in 0..k {
            let mut bv = [_mm256_setzero_ps(); W];
            for (w, x) in bv.iter_mut().enumerate() {
                *x = load(b.as_ptr().add(kk * n + j0 + 8 * w), mv[w]);
            }
            for (r, row) in acc.iter_mut().enumerate() {
                let av = _mm256_broadcast_ss(a.get_unchecked((i0 + r) * k + kk));
                for (w, x) in row.iter_mut().enumerate() {
                    *x = _mm256_fmadd_ps(av, bv[w], *x);
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            for (w, x) in row.iter().enumerate() {
                let at = d.as_mut_ptr().add((i0 + r) * n + j0 + 8 * w);
                match FULL {
                    true => _mm256_storeu_ps(at, *x),
                    false => _mm256_maskstore_ps(at, mv[w], *x),
                }
            }
        }
    }
}

/// Walks the output in register blocks: column panels of four full vectors while that many
/// columns are left (when `r4` > 0), then of two vectors (the last one narrower, masked; a
/// panel of one vector when that is all that is left), and in each panel rows in blocks of
/// `r4`, `r2` or `r1` (narrower panels have room for more rows), then 4, then 1. `block` runs
/// one block.
macro_rules! walk_blocks {
    ($block:ident, $kc:ident, $vec:expr, $full:expr, $tail:expr, ($r4:expr, $r2:expr, $r1:expr),
     $m:expr, $n:expr, $k:expr, $a:expr, $b:expr, $c:expr, $d:expr) => {{
        let (m, n, k) = ($m, $n, $k);
        // Rows of one panel: blocks of R, then 4, then 1. One R-block fewer when that leaves
        // whole 4-row blocks instead of single rows (128 = 20·6 + 2·4, not 21·6 + 2·1: a
        // one-row block loads more than it multiplies). Every element's sum is the same
        // whatever block computes it.
        macro_rules! rows {
            ($w:literal, $r:expr, $masks:expr, $j0:expr) => {{
                let mut i = 0;
                let mut blocks = m / $r;
                if blocks > 0 && (m - blocks * $r) % 4 != 0 && (m - (blocks - 1) * $r) % 4 == 0 {
                    blocks -= 1;
                }
                // SAFETY (every call): matmul_f32 asserted a: m×k, b: k×n, c and d: m×n; the
                // row ranges stay below m and the masks select columns below n.
                while i + $r <= blocks * $r {
                    unsafe { $block::<$r, $w, $kc>((i, $j0), (n, k), $masks, $a, $b, $c, $d) };
                    i += $r;
                }
                while i + 4 <= m {
                    unsafe { $block::<4, $w, $kc>((i, $j0), (n, k), $masks, $a, $b, $c, $d) };
                    i += 4;
                }
                while i < m {
                    unsafe { $block::<1, $w, $kc>((i, $j0), (n, k), $masks, $a, $b, $c, $d) };
                    i += 1;
                }
            }};
        }
        let mut j0 = 0;
        while j0 < n {
            if $r4 > 0 && n - j0 >= 4 * $vec {
                rows!(4, $r4, [$full; 4], j0);
                j0 += 4 * $vec;
                continue;
            }
            let width = (n - j0).min(2 * $vec);
            if width > $vec {
                rows!(2, $r2, [$full, $tail(width - $vec)], j0);
            } else {
                rows!(1, $r1, [$tail(width)], j0);
            }
            j0 += width;
        }
    }};
}

/// The depth `k` a block runs with: `KC` when the caller specialized it (non-zero), else the
/// run-time `k`. With a constant depth every A element of one k step is at a constant offset
/// from one base (the run-time form chains one address add per row through the k loop).
#[inline(always)]
fn known_depth<const KC: usize>(k: usize) -> usize {
    if KC == 0 { k } else { KC }
}

/// Calls `$f::<K>(args)` with depth `$k` as the constant K for the depths cooperative-matrix
/// tiles use (8, 16, 32, 64), with K = 0 (run-time depth) otherwise.
macro_rules! by_depth {
    ($k:expr, $f:ident($($arg:expr),*)) => {
        match $k {
            8 => $f::<8>($($arg),*),
            16 => $f::<16>($($arg),*),
            32 => $f::<32>($($arg),*),
            64 => $f::<64>($($arg),*),
            _ => $f::<0>($($arg),*),
        }
    };
}

/// AVX-512 `d = a·b + c`: 6×64 register blocks (24 zmm accumulators, 4 for B, 1 broadcast)
/// while 64 columns are left, then 12×32 (24 accumulators, 2 for B), 16×16 in a one-vector
/// panel. Wide panels first because loads, not FMAs, bound these blocks on current cores (about
/// one broadcast or vector load a cycle against two FMAs): a 6×64 step loads 10 values for 24
/// FMAs, a 12×32 step 14, a 16×16 step 17 for 16.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn mm_avx512(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &[f32], d: &mut [f32]) {
    by_depth!(k, mm_avx512_depth(m, n, k, a, b, c, d))
}

/// [`mm_avx512`] at depth `KC` (0: run-time depth).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn mm_avx512_depth<const KC: usize>(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
    c: &[f32],
    d: &mut [f32],
) {
    let tail = |w: usize| ((1u32 << w) - 1) as u16;
    walk_blocks!(
        block_avx512,
        KC,
        16,
        0xffff_u16,
        tail,
        (6, 12, 16),
        m,
        n,
        k,
        a,
        b,
        c,
        d
    )
}

/// AVX2 `d = a·b + c`: 6×16 register blocks (12 ymm accumulators, 2 for B, 1 broadcast), 12×8
/// in a one-vector panel.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn mm_avx2_blocked(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &[f32], d: &mut [f32]) {
    by_depth!(k, mm_avx2_depth(m, n, k, a, b, c, d))
}

/// [`mm_avx2_blocked`] at depth `KC` (0: run-time depth).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn mm_avx2_depth<const KC: usize>(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
    c: &[f32],
    d: &mut [f32],
) {
    let tail = |w: usize| w as u16;
    walk_blocks!(
        block_avx2,
        KC,
        8,
        8_u16,
        tail,
        (0, 6, 12),
        m,
        n,
        k,
        a,
        b,
        c,
        d
    )
}

/// A vector of f32 lanes that the shared-A kernels are written over: a zmm of 16 (AVX-512F) or
/// a ymm of 8 (AVX2, FMA and F16C). Every method is always inlined into a function that
/// enables its level's features, where each compiles to one instruction (a generic kernel over
/// the two instead of two copies of it: the intrinsics inline because the methods do).
#[cfg(target_arch = "x86_64")]
trait F32Lanes: Copy {
    /// f32 lanes a vector.
    const LANES: usize;
    /// All lanes zero.
    ///
    /// # Safety
    /// The CPU has the level's features.
    unsafe fn zero() -> Self;
    /// `LANES` f32s from `p`.
    ///
    /// # Safety
    /// The level's features; `LANES` f32s are readable at `p`.
    unsafe fn load(p: *const f32) -> Self;
    /// The lanes to `p`.
    ///
    /// # Safety
    /// The level's features; `LANES` f32s are writable at `p`.
    unsafe fn store(self, p: *mut f32);
    /// The f32 at `p` in every lane.
    ///
    /// # Safety
    /// The level's features; `p` is readable.
    unsafe fn splat(p: *const f32) -> Self;
    /// `self · b + c`, each lane rounded once (a fused multiply-add).
    ///
    /// # Safety
    /// The level's features.
    unsafe fn mul_add(self, b: Self, c: Self) -> Self;
    /// `LANES` f16 values, two a word (the lower half first) from `p`, widened exactly
    /// (`vcvtph2ps`: a signaling NaN comes out quieted, which the MulAdd's FMAs do anyway).
    ///
    /// # Safety
    /// The level's features; `LANES / 2` words are readable at `p` and nothing writes them
    /// during the call.
    unsafe fn widen_halves(p: *const u32) -> Self;
}

/// 16 f32 lanes in a zmm register (AVX-512F).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Zmm(std::arch::x86_64::__m512);

/// 8 f32 lanes in a ymm register (AVX2, FMA and F16C).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Ymm(std::arch::x86_64::__m256);

// SAFETY (every method of both impls): the trait's contracts; each is one intrinsic of the
// level whose features the caller enables.
#[cfg(target_arch = "x86_64")]
impl F32Lanes for Zmm {
    const LANES: usize = 16;
    #[inline(always)]
    unsafe fn zero() -> Self {
        Zmm(unsafe { std::arch::x86_64::_mm512_setzero_ps() })
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        Zmm(unsafe { std::arch::x86_64::_mm512_loadu_ps(p) })
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        unsafe { std::arch::x86_64::_mm512_storeu_ps(p, self.0) }
    }
    #[inline(always)]
    unsafe fn splat(p: *const f32) -> Self {
        Zmm(unsafe { std::arch::x86_64::_mm512_set1_ps(*p) })
    }
    #[inline(always)]
    unsafe fn mul_add(self, b: Self, c: Self) -> Self {
        Zmm(unsafe { std::arch::x86_64::_mm512_fmadd_ps(self.0, b.0, c.0) })
    }
    #[inline(always)]
    unsafe fn widen_halves(p: *const u32) -> Self {
        use std::arch::x86_64::*;
        Zmm(unsafe { _mm512_cvtph_ps(_mm256_loadu_si256(p.cast())) })
    }
}

#[cfg(target_arch = "x86_64")]
impl F32Lanes for Ymm {
    const LANES: usize = 8;
    #[inline(always)]
    unsafe fn zero() -> Self {
        Ymm(unsafe { std::arch::x86_64::_mm256_setzero_ps() })
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        Ymm(unsafe { std::arch::x86_64::_mm256_loadu_ps(p) })
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        unsafe { std::arch::x86_64::_mm256_storeu_ps(p, self.0) }
    }
    #[inline(always)]
    unsafe fn splat(p: *const f32) -> Self {
        Ymm(unsafe { std::arch::x86_64::_mm256_broadcast_ss(&*p) })
    }
    #[inline(always)]
    unsafe fn mul_add(self, b: Self, c: Self) -> Self {
        Ymm(unsafe { std::arch::x86_64::_mm256_fmadd_ps(self.0, b.0, c.0) })
    }
    #[inline(always)]
    unsafe fn widen_halves(p: *const u32) -> Self {
        use std::arch::x86_64::*;
        Ymm(unsafe { _mm256_cvtph_ps(_mm_loadu_si128(p.cast())) })
    }
}

/// Where the shared-A kernel reads B's rows (16 columns, `16 / V::LANES` vectors each): f32
/// rows one after the other in the arena, or a lazily loaded tile's f16 rows in Workgroup
/// memory ([`F16Rows`]).
#[cfg(target_arch = "x86_64")]
trait BRows<V: F32Lanes>: Copy {
    /// Vector `v` of row `kk` (columns `v·LANES..`) widened to f32.
    ///
    /// # Safety
    /// The level's features; row `kk` lies inside the tile the value points to.
    unsafe fn row(self, kk: usize, v: usize) -> V;
    /// The same tile `f32s` f32 slots further on in the arena (a repetition's instance).
    ///
    /// # Safety
    /// The moved tile lies inside the arena (f32 rows), or `f32s` is 0.
    unsafe fn moved(self, f32s: usize) -> Self;
}

#[cfg(target_arch = "x86_64")]
impl<V: F32Lanes> BRows<V> for *const f32 {
    #[inline(always)]
    unsafe fn row(self, kk: usize, v: usize) -> V {
        // SAFETY: the caller's contract (row kk of 16 f32s inside the tile).
        unsafe { V::load(self.add(kk * 16 + v * V::LANES)) }
    }
    #[inline(always)]
    unsafe fn moved(self, f32s: usize) -> Self {
        // SAFETY: the caller's contract.
        unsafe { self.add(f32s) }
    }
}

/// A 16-column f16 tile ([`HalfTile`]) in words this thread holds exclusively: its first
/// row's word and the words from one row to the next.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct F16Rows {
    first: *const u32,
    stride: usize,
}

#[cfg(target_arch = "x86_64")]
impl<V: F32Lanes> BRows<V> for F16Rows {
    #[inline(always)]
    unsafe fn row(self, kk: usize, v: usize) -> V {
        // SAFETY: the caller's contract (row kk's 8 words inside the tile); the words are
        // borrowed exclusively, so plain loads (no other access can race them). The widening
        // is exact: the f32s a tile load gives.
        unsafe { V::widen_halves(self.first.add(kk * self.stride + v * V::LANES / 2)) }
    }
    #[inline(always)]
    unsafe fn moved(self, f32s: usize) -> Self {
        debug_assert_eq!(f32s, 0, "f16 tiles run one instance a call");
        self
    }
}

/// One register block of a group of MulAdds that share their A tile (16-column tiles, `VR`
/// vectors of `V` a row): rows `i0..i0 + R` of `W` products `d[w] = a·b[w] + c[w]` at once.
/// Each k step loads W·VR vectors of B and broadcasts R elements of A, which feed R·W·VR FMAs:
/// with AVX-512 a 16×16 tile alone gets 16 FMAs for 17 loads, four of them 24 for 10 (see
/// [`mm_avx512`] for why loads are what counts). Every output element is `c` followed by one
/// fused multiply-add per k in order, as in [`matmul_f32`]. With `S` = 2 segments the block
/// is a chain of two such groups, `d[w] = a[1]·b[1][w] + (a[0]·b[0][w] + c[w])`: the first
/// result stays in the accumulators (the same FMAs in the same order, so the same bits as two
/// calls), and the rows of C and D are loaded and stored once for both.
///
/// Always inlined into [`shared_a_avx512`] or [`shared_a_avx2`], which enable their level's
/// features for it (the intrinsics compile with their caller's features).
///
/// # Safety
/// The CPU has `V`'s level; `VR · V::LANES` is 16. Each `a[s]` points to m×k f32s, each
/// `b[s][w]` to k×16, each `c[w]` and `d[w]` to m×16, with rows `i0..i0 + R` below m; no `d[w]`
/// overlaps an `a`, a `b`, another `d` or a `c` other than its own (`d[w] == c[w]` is allowed:
/// a block reads its rows of C before it writes the same rows of D). [`matmul_f32_shared_a`]
/// checks all of this.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn block_shared_a<
    V: F32Lanes,
    const VR: usize,
    const R: usize,
    const W: usize,
    const KC: usize,
    const S: usize,
    B: BRows<V>,
>(
    i0: usize,
    k: usize,
    a: [*const f32; S],
    b: [[B; W]; S],
    c: [*const f32; W],
    d: [*mut f32; W],
) {
    debug_assert_eq!(VR * V::LANES, 16);
    let k = known_depth::<KC>(k);
    // SAFETY: by the caller's contract every address below is inside its tile and no store
    // reaches memory a later load of this block or of a later block reads.
    unsafe {
        let mut acc = [[[V::zero(); VR]; W]; R];
        for (r, row) in acc.iter_mut().enumerate() {
            for (w, x) in row.iter_mut().enumerate() {
                for (v, y) in x.iter_mut().enumerate() {
                    *y = V::load(c[w].add((i0 + r) * 16 + v * V::LANES));
                }
            }
        }
        for (a, b) in a.iter().zip(&b) {
            for kk in 0..k {
                let mut bv = [[V::zero(); VR]; W];
                for (w, x) in bv.iter_mut().enumerate() {
                    for (v, y) in x.iter_mut().enumerate() {
                        *y = b[w].row(kk, v);
                    }
                }
                for (r, row) in acc.iter_mut().enumerate() {
                    let av = V::splat(a.add((i0 + r) * k + kk));
                    for (w, x) in row.iter_mut().enumerate() {
                        for (v, y) in x.iter_mut().enumerate() {
                            *y = av.mul_add(bv[w][v], *y);
                        }
                    }
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            for (w, x) in row.iter().enumerate() {
                for (v, y) in x.iter().enumerate() {
                    y.store(d[w].add((i0 + r) * 16 + v * V::LANES));
                }
            }
        }
    }
}

/// Every row below `m` of the `W` products of [`block_shared_a`]: blocks of `R` rows, then 4,
/// then 1.
///
/// # Safety
/// As for [`block_shared_a`], for every row below `m`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn rows_shared_a<
    V: F32Lanes,
    const VR: usize,
    const R: usize,
    const W: usize,
    const KC: usize,
    const S: usize,
    B: BRows<V>,
>(
    (m, k): (usize, usize),
    a: [*const f32; S],
    b: [[B; W]; S],
    c: [*const f32; W],
    d: [*mut f32; W],
) {
    let mut i = 0;
    // SAFETY (every call): the caller's contract covers rows below m.
    while i + R <= m {
        unsafe { block_shared_a::<V, VR, R, W, KC, S, B>(i, k, a, b, c, d) };
        i += R;
    }
    while i + 4 <= m {
        unsafe { block_shared_a::<V, VR, 4, W, KC, S, B>(i, k, a, b, c, d) };
        i += 4;
    }
    while i < m {
        unsafe { block_shared_a::<V, VR, 1, W, KC, S, B>(i, k, a, b, c, d) };
        i += 1;
    }
}

/// Every pointer of a group moved `at` f32s on (repetition `at / step`'s instance).
///
/// # Safety
/// The moved pointers stay inside the tiles' slots (the caller's contract for every
/// repetition).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::type_complexity)]
unsafe fn moved_group<V: F32Lanes, const W: usize, const S: usize, B: BRows<V>>(
    at: usize,
    (mut a, mut b, mut c, mut d): ([*const f32; S], [[B; W]; S], [*const f32; W], [*mut f32; W]),
) -> ([*const f32; S], [[B; W]; S], [*const f32; W], [*mut f32; W]) {
    // Plain loops, not `array::map`: its closures were calls of their own per repetition.
    // SAFETY (every offset): the caller's contract.
    unsafe {
        for p in &mut a {
            *p = p.add(at);
        }
        for p in b.iter_mut().flatten() {
            *p = p.moved(at);
        }
        for p in &mut c {
            *p = p.add(at);
        }
        for p in &mut d {
            *p = p.add(at);
        }
    }
    (a, b, c, d)
}

/// All rows of `W` products sharing A (in `S` chained segments), zmm by zmm: blocks of `R`
/// rows, then 4, then 1; `repeat` times, every pointer moved `step` f32s further each time
/// (see [`matmul_f32_shared_a`]).
///
/// # Safety
/// As for [`block_shared_a`], for every row below `m` of every repetition.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn shared_a_avx512<
    const R: usize,
    const W: usize,
    const KC: usize,
    const S: usize,
    B: BRows<Zmm>,
>(
    (m, k): (usize, usize),
    a: [*const f32; S],
    b: [[B; W]; S],
    c: [*const f32; W],
    d: [*mut f32; W],
    (repeat, step): (usize, usize),
) {
    for rep in 0..repeat {
        // SAFETY (every offset and call): the caller's contract covers rows below m of every
        // repetition.
        let (a, b, c, d) = unsafe { moved_group(rep * step, (a, b, c, d)) };
        unsafe { rows_shared_a::<Zmm, 1, R, W, KC, S, B>((m, k), a, b, c, d) };
    }
}

/// Up to four products sharing A at depth `KC` (0: run-time depth), in one segment or two
/// chained ones (`a.len()`): 6 rows of four, 8 rows of three, 12 of two, 16 of one (24 or 16
/// zmm accumulators), `repeat` times.
///
/// # Safety
/// As for [`block_shared_a`], for every row below `m` of every part and repetition; `b` has
/// one row of `c.len()` pointers per segment.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn shared_a_depth<const KC: usize>(
    (m, k): (usize, usize),
    a: &[*const f32],
    b: &[[impl BRows<Zmm>; 4]],
    c: &[*const f32],
    d: &[*mut f32],
    rep: (usize, usize),
) {
    macro_rules! go {
        ($r:literal, $w:literal) => {
            match a.len() {
                // SAFETY: the caller's contract, for the parts and segments passed.
                1 => unsafe {
                    shared_a_avx512::<$r, $w, KC, 1, _>(
                        (m, k),
                        [a[0]],
                        [arr(&b[0])],
                        arr(c),
                        arr(d),
                        rep,
                    )
                },
                2 => unsafe {
                    shared_a_avx512::<$r, $w, KC, 2, _>(
                        (m, k),
                        [a[0], a[1]],
                        [arr(&b[0]), arr(&b[1])],
                        arr(c),
                        arr(d),
                        rep,
                    )
                },
                _ => {}
            }
        };
    }
    match c.len() {
        4 => go!(6, 4),
        3 => go!(8, 3),
        2 => go!(12, 2),
        1 => go!(16, 1),
        _ => {}
    }
}

/// The AVX2 form of [`shared_a_avx512`] for the first `parts` products: part by part within a
/// repetition (each D is apart from everything the others read, so the order cannot change a
/// bit), in blocks of 6 rows (12 ymm accumulators, two B vectors and a broadcast: sixteen
/// registers leave no room for a second part), then 4, then 1.
///
/// # Safety
/// As for [`block_shared_a`], for every row below `m` of the first `parts` parts of every
/// repetition.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
#[allow(clippy::too_many_arguments)]
unsafe fn shared_a_avx2<const KC: usize, const S: usize, B: BRows<Ymm>>(
    (m, k): (usize, usize),
    a: [*const f32; S],
    b: [[B; 4]; S],
    c: [*const f32; 4],
    d: [*mut f32; 4],
    parts: usize,
    (repeat, step): (usize, usize),
) {
    for rep in 0..repeat {
        for w in 0..parts.min(4) {
            // Only part w's pointers move: the entries past `parts` are null placeholders,
            // which no offset may be added to.
            let part = (a, std::array::from_fn(|s| [b[s][w]]), [c[w]], [d[w]]);
            // SAFETY (the offsets and the call): the caller's contract covers rows below m of
            // the first `parts` parts of every repetition.
            let (a, bw, cw, dw) = unsafe { moved_group(rep * step, part) };
            unsafe { rows_shared_a::<Ymm, 2, 6, 1, KC, S, B>((m, k), a, bw, cw, dw) };
        }
    }
}

/// [`shared_a_depth`] with AVX2: up to four products sharing A at depth `KC`, in one segment
/// or two chained ones (`a.len()`), `repeat` times.
///
/// # Safety
/// As for [`shared_a_depth`], with AVX2, FMA and F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn shared_a_depth_avx2<const KC: usize>(
    (m, k): (usize, usize),
    a: &[*const f32],
    b: &[[impl BRows<Ymm>; 4]],
    c: &[*const f32],
    d: &[*mut f32],
    rep: (usize, usize),
) {
    let parts = c.len().min(d.len()).min(4);
    let (mut c4, mut d4) = ([std::ptr::null(); 4], [std::ptr::null_mut(); 4]);
    c4[..parts].copy_from_slice(&c[..parts]);
    d4[..parts].copy_from_slice(&d[..parts]);
    match a.len() {
        // SAFETY: the caller's contract, for the parts and segments passed.
        1 => unsafe { shared_a_avx2::<KC, 1, _>((m, k), [a[0]], [b[0]], c4, d4, parts, rep) },
        2 => unsafe {
            shared_a_avx2::<KC, 2, _>((m, k), [a[0], a[1]], [b[0], b[1]], c4, d4, parts, rep)
        },
        _ => {}
    }
}

/// The first `N` elements of `v` as an array (`v` has at least `N`).
#[cfg(target_arch = "x86_64")]
fn arr<T: Copy, const N: usize>(v: &[T]) -> [T; N] {
    std::array::from_fn(|i| v[i])
}

/// One MulAdd of a group sharing A: offsets in the arena of its B (k×n), C and D (m×n) tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedAPart {
    /// Offset of B.
    pub b: usize,
    /// Offset of C.
    pub c: usize,
    /// Offset of D.
    pub d: usize,
}

/// `d = a·b + c` for every part, as [`matmul_f32`] would compute them one after the other,
/// with all tiles in one f32 arena (`a` at offset `a`, m×k; each part's B k×n, C and D m×n),
/// `repeat` times: repetition `r` runs the same group with every offset moved by `r·step`
/// (the scope instances of one fused op, whose tiles lie `step` apart in every slot; the
/// overlap check below then holds for all of them at once). Runs the parts four at a time
/// through a kernel that loads each k step's A elements once for all four (with AVX-512; with
/// AVX2 part by part, each in registers for the whole k loop), when the CPU has AVX-512 or
/// AVX2, the tiles are 16 columns wide, and no D overlaps A, a B, another D or a C other than
/// its own (so the order cannot matter); returns false otherwise, computing nothing, and the
/// caller runs the parts one by one.
///
/// With `first` = (`a_first`, `b_first`) the group is the second of a chain of two:
/// `d = a·b + (a_first·b_first[p] + c)` for every part `p`, as the first group then the second
/// would compute it with its result in D, without storing and loading that result between
/// them (the same bits); `a_first` and every `b_first` (one per part) join what no D may
/// overlap.
pub fn matmul_f32_shared_a(
    (m, n, k): (usize, usize, usize),
    arena: &mut [f32],
    (first, a): (Option<(usize, &[usize])>, usize),
    parts: &[SharedAPart],
    (repeat, step): (usize, usize),
) -> bool {
    shared_a_at(level(), (m, n, k), arena, (first, a), parts, (repeat, step))
}

/// [`matmul_f32_shared_a`] at a chosen level (the tests run every level the CPU has).
fn shared_a_at(
    level: Level,
    (m, n, k): (usize, usize, usize),
    arena: &mut [f32],
    (first, a): (Option<(usize, &[usize])>, usize),
    parts: &[SharedAPart],
    (repeat, step): (usize, usize),
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if level != Level::Base && n == 16 && repeat > 0 {
        let (mn, kn) = (m * n, k * n);
        // The last repetition's tiles are the furthest: checking them covers every one.
        let Some(last) = step.checked_mul(repeat - 1) else {
            return false;
        };
        let inside = |o: usize, len: usize| {
            o.checked_add(last)
                .and_then(|o| o.checked_add(len))
                .is_some_and(|e| e <= arena.len())
        };
        let apart = |x: usize, xl: usize, y: usize, yl: usize| x + xl <= y || y + yl <= x;
        // Every tile read as A: the group's own, then the first segment's.
        let a_tiles = [Some(a), first.map(|f| f.0)];
        let a_tiles = a_tiles.iter().flatten();
        let b_first = first.map_or(&[][..], |f| f.1);
        let ok = b_first.len() == if first.is_some() { parts.len() } else { 0 }
            && a_tiles.clone().all(|&x| inside(x, m * k))
            && b_first.iter().all(|&x| inside(x, kn))
            && parts.iter().enumerate().all(|(i, p)| {
                inside(p.b, kn)
                    && inside(p.c, mn)
                    && inside(p.d, mn)
                    && a_tiles.clone().all(|&x| apart(p.d, mn, x, m * k))
                    && b_first.iter().all(|&x| apart(p.d, mn, x, kn))
                    && parts.iter().enumerate().all(|(j, q)| {
                        apart(p.d, mn, q.b, kn)
                            && (i == j || (apart(p.d, mn, q.c, mn) && apart(p.d, mn, q.d, mn)))
                    })
                    && (p.d == p.c || apart(p.d, mn, p.c, mn))
            });
        if !ok {
            return false;
        }
        let base = arena.as_mut_ptr();
        // One chunk of parts: its repetitions in one call. More: repetition by repetition,
        // chunk by chunk (the order of the parts one by one).
        let (calls, per_call) = if parts.len() <= 4 {
            (1, repeat)
        } else {
            (repeat, 1)
        };
        for r in 0..calls {
            let at = r * step;
            for (ci, chunk) in parts.chunks(4).enumerate() {
                // SAFETY (every `add` here): every offset plus `last` plus its tile's length
                // was checked to lie inside `arena`, so the pointers stay inside it.
                let ptr = |o: usize| unsafe { base.add(o + at) };
                let mut b = [[std::ptr::null::<f32>(); 4]; 2];
                let (mut c, mut d) = ([std::ptr::null::<f32>(); 4], [std::ptr::null_mut(); 4]);
                let mut segs = [std::ptr::null::<f32>(); 2];
                let mut nseg = 0;
                if let Some((af, bf)) = first {
                    segs[0] = ptr(af);
                    for (w, &x) in bf[4 * ci..].iter().take(chunk.len()).enumerate() {
                        b[0][w] = ptr(x);
                    }
                    nseg = 1;
                }
                segs[nseg] = ptr(a);
                for (w, p) in chunk.iter().enumerate() {
                    (b[nseg][w], c[w], d[w]) = (ptr(p.b), ptr(p.c), ptr(p.d));
                }
                let w = chunk.len();
                let (segs, b, c, d) = (&segs[..=nseg], &b[..=nseg], &c[..w], &d[..w]);
                let rep = (per_call, step);
                // SAFETY: `level` is Avx512 only when the CPU has AVX-512F, Avx2 only when it
                // has AVX2, FMA and F16C; the tiles of every repetition are inside the arena
                // and no D overlaps what another tile of its repetition reads (checked above:
                // moving every offset by the same amount keeps that).
                unsafe {
                    match level == Level::Avx512 {
                        true => by_depth!(k, shared_a_depth((m, k), segs, b, c, d, rep)),
                        false => by_depth!(k, shared_a_depth_avx2((m, k), segs, b, c, d, rep)),
                    }
                }
            }
        }
        return true;
    }
    let _ = (level, m, n, k, arena, a, first, parts, repeat, step);
    false
}

/// A 16×16 f16 tile in one of [`matmul_shared_a_f16b`]'s objects, two halves a word (the
/// lower half first), rows starting at whole words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HalfTile {
    /// The object (an index into the call's objects).
    pub object: usize,
    /// The word of element (0, 0).
    pub first: usize,
    /// Words from one row to the next.
    pub stride: usize,
}

/// The scope instances one [`matmul_shared_a_f16b`] call takes at most.
pub const MAX_INSTANCES: usize = 8;

/// One tile of a scope instance of [`matmul_shared_a_f16b`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A of segment `s` (with two, a chain: the first MulAdd's A, then the second's).
    A(usize),
    /// B of segment `s`, part `p`.
    B(usize, usize),
}

/// [`matmul_f32_shared_a`] with 16×16×16 tiles whose As and Bs are f16 tiles still in
/// `objects` (Workgroup memory a lazy tile load left them in, `CmLoadArgs::lazy`; borrowed
/// exclusively, so read with plain vector loads), for `nseg` segments of `parts` parts and
/// `count` scope instances: `tile(r, operand)` names instance r's tiles, and instance r runs
/// with `cd[p]` (part p's C and D arena offsets) moved `r·step` f32s on. Each row is widened
/// as the kernel reads it (exact; a signaling NaN comes out quieted, which the FMAs do to it
/// anyway), so the result has the bits of the tiles loaded and then multiplied. Returns
/// false, computing nothing, without AVX-512 or AVX2, with more than four parts, two segments or
/// [`MAX_INSTANCES`] instances, a tile that `tile` does not name or that lies outside its
/// object, or a D outside the arena or overlapping another part's C or D (its own C may be
/// it).
pub fn matmul_shared_a_f16b(
    arena: &mut [f32],
    objects: &mut [Vec<std::sync::atomic::AtomicU32>],
    (nseg, parts, count): (usize, usize, usize),
    tile: impl Fn(usize, Operand) -> Option<HalfTile>,
    cd: &[(usize, usize)],
    step: usize,
) -> bool {
    shared_a_f16b_at(
        level(),
        arena,
        objects,
        (nseg, parts, count),
        tile,
        cd,
        step,
    )
}

/// Whether MulAdd groups read f16 tiles where lazy loads left them
/// ([`matmul_shared_a_f16b`]): with AVX-512 or AVX2. (With AVX2 each B row is widened again
/// by each of a part's three row blocks; measured against loads that widen every tile into
/// its slot, alternating dispatch by dispatch in one process, the KHR GEMM was 8-10 % faster
/// with the tiles read in place, and slower when the B tiles were widened onto the stack
/// first, even with the copies shared by the instances that read the same tile.)
pub fn f16_tiles_read_in_place() -> bool {
    level() != Level::Base
}

/// [`matmul_shared_a_f16b`] at a chosen level (the tests run every level the CPU has).
fn shared_a_f16b_at(
    level: Level,
    arena: &mut [f32],
    objects: &mut [Vec<std::sync::atomic::AtomicU32>],
    (nseg, n, count): (usize, usize, usize),
    tile: impl Fn(usize, Operand) -> Option<HalfTile>,
    cd: &[(usize, usize)],
    step: usize,
) -> bool {
    const TILE: usize = 256;
    #[cfg(target_arch = "x86_64")]
    if level != Level::Base
        && (1..=2).contains(&nseg)
        && (1..=4).contains(&n)
        && cd.len() == n
        && count > 0
    {
        // The last instance's C and D are the furthest: checking them covers every one.
        let Some(last) = step.checked_mul(count - 1) else {
            return false;
        };
        let in_arena = |o: usize| {
            o.checked_add(last)
                .and_then(|e| e.checked_add(TILE))
                .is_some_and(|e| e <= arena.len())
        };
        let apart = |x: usize, y: usize| x + TILE <= y || y + TILE <= x;
        let cd_ok = cd.iter().enumerate().all(|(i, &(c, d))| {
            in_arena(c)
                && in_arena(d)
                && (c == d || apart(c, d))
                && cd
                    .iter()
                    .enumerate()
                    .all(|(j, &(c2, d2))| i == j || (apart(d, c2) && apart(d, d2)))
        });
        if !cd_ok || count > MAX_INSTANCES {
            return false;
        }
        // Every tile's rows, checked inside its object (row 15's 8 words end inside it) before
        // anything is computed; slot `r·10 + k` holds instance r's A of segment k (k < 2) or
        // B of segment (k - 2) / 4, part (k - 2) % 4. The objects' words are read as plain
        // u32s: the exclusive borrow keeps every other access out for the whole call
        // (AtomicU32 has u32's size and alignment).
        let mut rows = [const { std::mem::MaybeUninit::<F16Rows>::uninit() }; 10 * MAX_INSTANCES];
        let slot = |o: Operand| match o {
            Operand::A(s) => s,
            Operand::B(s, p) => 2 + 4 * s + p,
        };
        for r in 0..count {
            for s in 0..nseg {
                for o in std::iter::once(Operand::A(s)).chain((0..n).map(|p| Operand::B(s, p))) {
                    let Some(t) = tile(r, o) else {
                        return false;
                    };
                    let end = t
                        .stride
                        .saturating_mul(15)
                        .saturating_add(t.first)
                        .saturating_add(8);
                    let Some(w) = objects.get(t.object).filter(|w| end <= w.len()) else {
                        return false;
                    };
                    // SAFETY: `first` is inside the object (`end <= len`).
                    rows[r * 10 + slot(o)].write(F16Rows {
                        first: unsafe { w.as_ptr().cast::<u32>().add(t.first) },
                        stride: t.stride,
                    });
                }
            }
        }
        // SAFETY: written above for every instance below `count` and every operand used.
        let rows = |r: usize, o: Operand| unsafe { rows[r * 10 + slot(o)].assume_init() };
        let base = arena.as_mut_ptr();
        // A tiles widened onto the stack (each is read 16 times a row block); not zeroed
        // first: a GEMM's K step runs this sixteen times. An instance whose A tile is the one
        // before's (subgroups of a GEMM share them) reuses it.
        let mut widened = [std::mem::MaybeUninit::<[f32; TILE]>::uninit(); 2];
        let mut held: [Option<(*const u32, usize)>; 2] = [None; 2];
        for r in 0..count {
            let mut segs = [std::ptr::null::<f32>(); 2];
            let none = F16Rows {
                first: std::ptr::null(),
                stride: 0,
            };
            let mut b = [[none; 4]; 2];
            for s in 0..nseg {
                let a = rows(r, Operand::A(s));
                let key = (a.first, a.stride);
                if held[s] != Some(key) {
                    let out = widened[s].as_mut_ptr().cast();
                    // SAFETY: the level's features (`level`); the tile's rows are inside its
                    // object (checked); every f32 of the buffer is written.
                    unsafe {
                        match level == Level::Avx512 {
                            true => widen_half_tile_avx512(a, out),
                            false => widen_half_tile_avx2(a, out),
                        }
                    }
                    held[s] = Some(key);
                }
                segs[s] = widened[s].as_ptr().cast();
                for (p, x) in b[s][..n].iter_mut().enumerate() {
                    *x = rows(r, Operand::B(s, p));
                }
            }
            let (mut c, mut d) = ([std::ptr::null::<f32>(); 4], [std::ptr::null_mut(); 4]);
            for (w, &(co, dof)) in cd.iter().enumerate() {
                // SAFETY: both offsets plus `last` plus a tile are inside the arena (checked).
                (c[w], d[w]) = unsafe {
                    (
                        base.add(co + r * step).cast_const(),
                        base.add(dof + r * step),
                    )
                };
            }
            let (segs, b, c, d) = (&segs[..nseg], &b[..nseg], &c[..n], &d[..n]);
            // SAFETY: `level` is Avx512 only when the CPU has AVX-512F, Avx2 only when it has
            // AVX2, FMA and F16C. A is on the stack (not the arena), every B row inside its
            // object (checked), every C and D inside the arena and no D overlapping another
            // part's C or D (checked for the first instance; moving all by `r·step` keeps
            // that); the words are only read.
            unsafe {
                match level == Level::Avx512 {
                    true => shared_a_depth::<16>((16, 16), segs, b, c, d, (1, 0)),
                    false => shared_a_depth_avx2::<16>((16, 16), segs, b, c, d, (1, 0)),
                }
            };
        }
        return true;
    }
    let _ = (level, arena, objects, nseg, n, count, tile, cd, step, TILE);
    false
}

/// A 16×16 f16 tile's rows into `out`, `VR` vectors of `V` a row (`vcvtph2ps`: a signaling
/// NaN comes out quieted, which the MulAdd's FMAs do to it anyway).
///
/// # Safety
/// `V`'s level; `VR · V::LANES` is 16; the tile's 16 rows of 8 words are readable and nothing
/// else accesses them during the call; `out` is writable for 256 f32s.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn widen_half_tile<V: F32Lanes, const VR: usize>(t: F16Rows, out: *mut f32) {
    for r in 0..16 {
        for v in 0..VR {
            // SAFETY: the caller's contract.
            unsafe { BRows::<V>::row(t, r, v).store(out.add(16 * r + v * V::LANES)) };
        }
    }
}

/// [`widen_half_tile`] with AVX-512F.
///
/// # Safety
/// As for [`widen_half_tile`], with AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn widen_half_tile_avx512(t: F16Rows, out: *mut f32) {
    // SAFETY: the caller's contract.
    unsafe { widen_half_tile::<Zmm, 1>(t, out) }
}

/// [`widen_half_tile`] with AVX2 and F16C.
///
/// # Safety
/// As for [`widen_half_tile`], with AVX2 and F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn widen_half_tile_avx2(t: F16Rows, out: *mut f32) {
    // SAFETY: the caller's contract.
    unsafe { widen_half_tile::<Ymm, 2>(t, out) }
}

/// `d = a·b + c` for row-major f32 tiles (a: m×k, b: k×n, c and d: m×n).
pub fn matmul_f32(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &[f32], d: &mut [f32]) {
    matmul_f32_at(level(), m, n, k, a, b, c, d)
}

/// [`matmul_f32`] at a chosen level (the tests run every level the CPU has).
#[allow(clippy::too_many_arguments)]
fn matmul_f32_at(
    level: Level,
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
    c: &[f32],
    d: &mut [f32],
) {
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n && d.len() >= m * n);
    match level {
        Level::Base => mm_body::<false>(m, n, k, a, b, c, d),
        // SAFETY: level() verified at run time that the CPU supports AVX2 and FMA.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { mm_avx2_blocked(m, n, k, a, b, c, d) },
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
    let mut nan: __mmask16 = 0;
    for i in 0..full {
        // SAFETY: i·8 + 8 <= src.len() and 2·(i·8 + 8) <= dst.len() (asserted by the caller);
        // unaligned load and store.
        unsafe {
            let h = _mm256_loadu_si256(src.as_ptr().add(i * 8) as *const __m256i);
            let v = _mm512_cvtph_ps(h);
            _mm512_storeu_ps(dst.as_mut_ptr().add(i * 16), v);
            nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
        }
    }
    // vcvtph2ps quiets signaling NaNs; `h2f` keeps their bits, as the other levels do. One
    // test for the whole slice: a branch a vector made this loop 2.1-2.5 times slower on
    // Zen 5 (a q4_k B tile taken from the cache: 11 → 8.4 thousand cycles).
    if nan != 0 {
        h2f_words_body(&src[..full * 8], &mut dst[..full * 16]);
    }
    h2f_words_body(&src[full * 8..], &mut dst[full * 16..]);
}

/// Converts packed f16 pairs (low half first) to f32: `dst.len() >= 2·src.len()`.
pub fn f16_words_to_f32(src: &[u32], dst: &mut [f32]) {
    f16_words_to_f32_with(level(), src, dst)
}

fn f16_words_to_f32_with(level: Level, src: &[u32], dst: &mut [f32]) {
    assert!(dst.len() >= 2 * src.len());
    match level {
        Level::Base => h2f_words_body(src, dst),
        // SAFETY: level() is Avx2 only when AVX2 is present; F16C ships with every AVX2 CPU.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { h2f_words_avx2(src, dst) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { h2f_words_avx512(src, dst) },
    }
}

/// Rows of f16 pairs (low half first) read as if by one relaxed atomic load per word and
/// widened exactly into `dst`, row after row: `rows` rows of `nw` words, the first at word
/// `w0` of `src`, each `stride` words after the one before (a cooperative-matrix tile in
/// memory), one vector load and conversion per 8 words (AVX-512) or 4 (AVX2) instead of a
/// gather then a conversion. False, nothing written, when a row is outside `src` or `dst` is
/// shorter than `rows·2·nw`.
pub(crate) fn f16_rows_to_f32(
    src: &[std::sync::atomic::AtomicU32],
    (w0, stride, rows, nw): (usize, usize, usize, usize),
    dst: &mut [f32],
) -> bool {
    f16_rows_to_f32_at(level(), src, (w0, stride, rows, nw), dst)
}

/// Whether `rows` rows of `width` elements, the first at `first` and each `stride` after the
/// one before, all end within `len` elements (no arithmetic overflows; no rows always fit).
fn rows_fit(len: usize, (first, stride, rows, width): (usize, usize, usize, usize)) -> bool {
    rows == 0
        || (rows - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(first))
            .and_then(|x| x.checked_add(width))
            .is_some_and(|end| end <= len)
}

/// [`f16_rows_to_f32`] at a chosen level (the tests run every level the CPU has).
fn f16_rows_to_f32_at(
    level: Level,
    src: &[std::sync::atomic::AtomicU32],
    (w0, stride, rows, nw): (usize, usize, usize, usize),
    dst: &mut [f32],
) -> bool {
    let fits = rows_fit(src.len(), (w0, stride, rows, nw));
    if !fits || rows.checked_mul(2 * nw).is_none_or(|n| n > dst.len()) {
        return false;
    }
    match level {
        // SAFETY: the level's features are present; every row and `dst` were checked above.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { f16_rows_avx512(src, (w0, stride, rows, nw), dst) },
        // SAFETY: as above (F16C ships with every AVX2 CPU; `levels` checks it).
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { f16_rows_avx2(src, (w0, stride, rows, nw), dst) },
        Level::Base => f16_rows_body(src, (w0, stride, rows, nw), dst, |_, _| 0),
    }
    true
}

/// The row loop of [`f16_rows_to_f32`], `vector` converting each row's whole vectors (it
/// returns how many words it did) and the words after those here. Inlined into each level's
/// function, so that a tile costs one call, not one per row.
#[inline(always)]
fn f16_rows_body(
    src: &[std::sync::atomic::AtomicU32],
    (w0, stride, rows, nw): (usize, usize, usize, usize),
    dst: &mut [f32],
    vector: impl Fn(&[std::sync::atomic::AtomicU32], &mut [f32]) -> usize,
) {
    for r in 0..rows {
        let row = &src[w0 + r * stride..w0 + r * stride + nw];
        let out = &mut dst[2 * nw * r..2 * nw * (r + 1)];
        let done = vector(row, out);
        let mut tail = [0u32; 1];
        for (k, w) in row.iter().enumerate().skip(done) {
            tail[0] = w.load(std::sync::atomic::Ordering::Relaxed);
            h2f_words_body(&tail, &mut out[2 * k..2 * k + 2]);
        }
    }
}

/// [`f16_rows_to_f32`] with AVX-512F.
///
/// # Safety
/// AVX-512F; every row is inside `src` and `dst` holds `rows·2·nw` f32s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn f16_rows_avx512(
    src: &[std::sync::atomic::AtomicU32],
    shape: (usize, usize, usize, usize),
    dst: &mut [f32],
) {
    use std::arch::x86_64::*;
    let (w0, stride, rows, nw) = shape;
    if nw.is_multiple_of(8) {
        // Rows of whole vectors (a 16-wide f16 tile row is one): pointer steps without a
        // slice per row, and one NaN test for the whole tile, which goes again through the
        // row path below when it holds one (vcvtph2ps quiets signaling NaNs).
        let mut nan = 0u16;
        for r in 0..rows {
            // SAFETY: the caller checked that row r's nw words (from w0 + r·stride) are in
            // `src` and that `dst` holds rows·2·nw f32s.
            unsafe {
                let row = src.as_ptr().add(w0 + r * stride);
                let out = dst.as_mut_ptr().add(2 * nw * r);
                for k in (0..nw).step_by(8) {
                    let v = _mm512_cvtph_ps(atomic_words8(row.add(k)));
                    _mm512_storeu_ps(out.add(2 * k), v);
                    nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
                }
            }
        }
        if nan == 0 {
            return;
        }
    }
    // SAFETY: AVX-512F is enabled here; `out` is the row's 2·nw f32s.
    f16_rows_body(src, shape, dst, |row, out| unsafe {
        f16_row_avx512(row, out)
    })
}

/// [`f16_rows_to_f32`] with AVX2 and F16C.
///
/// # Safety
/// AVX2 and F16C; every row is inside `src` and `dst` holds `rows·2·nw` f32s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn f16_rows_avx2(
    src: &[std::sync::atomic::AtomicU32],
    shape: (usize, usize, usize, usize),
    dst: &mut [f32],
) {
    use std::arch::x86_64::*;
    let (w0, stride, rows, nw) = shape;
    if nw.is_multiple_of(4) {
        // As in `f16_rows_avx512`: rows of whole vectors by pointer steps and one NaN test
        // for the whole tile (a branch per vector made the loop about twice as slow).
        let mut nan = _mm256_setzero_ps();
        for r in 0..rows {
            // SAFETY: the caller checked that row r's nw words (from w0 + r·stride) are in
            // `src` and that `dst` holds rows·2·nw f32s.
            unsafe {
                let row = src.as_ptr().add(w0 + r * stride);
                let out = dst.as_mut_ptr().add(2 * nw * r);
                for k in (0..nw).step_by(4) {
                    let v = _mm256_cvtph_ps(atomic_words4(row.add(k)));
                    _mm256_storeu_ps(out.add(2 * k), v);
                    nan = _mm256_or_ps(nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(v, v));
                }
            }
        }
        if _mm256_movemask_ps(nan) == 0 {
            return;
        }
    }
    // SAFETY: AVX2 and F16C are enabled here; `out` is the row's 2·nw f32s.
    f16_rows_body(src, shape, dst, |row, out| unsafe {
        f16_row_avx2(row, out)
    })
}

/// Whole groups of 8 words of one row of [`f16_rows_to_f32`]; returns how many words it
/// converted.
///
/// # Safety
/// AVX-512F; `out` holds at least `2·row.len()` f32s.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn f16_row_avx512(row: &[std::sync::atomic::AtomicU32], out: &mut [f32]) -> usize {
    use std::arch::x86_64::*;
    let mut k = 0;
    while k + 8 <= row.len() {
        // SAFETY: words k..k + 8 are in `row`, f32s 2k..2k + 16 in `out`.
        unsafe {
            let h = atomic_words8(row.as_ptr().add(k));
            let v = _mm512_cvtph_ps(h);
            _mm512_storeu_ps(out.as_mut_ptr().add(2 * k), v);
            // vcvtph2ps quiets signaling NaNs; `h2f` keeps their bits, as the other levels do
            // (from the words loaded, not loaded again).
            if _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v) != 0 {
                let mut w = [0u32; 8];
                _mm256_storeu_si256(w.as_mut_ptr().cast(), h);
                h2f_words_body(&w, &mut out[2 * k..2 * k + 16]);
            }
        }
        k += 8;
    }
    k
}

/// Whole groups of 4 words of one row of [`f16_rows_to_f32`] with F16C; returns how many
/// words it converted.
///
/// # Safety
/// AVX2 and F16C; `out` holds at least `2·row.len()` f32s.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2,f16c")]
unsafe fn f16_row_avx2(row: &[std::sync::atomic::AtomicU32], out: &mut [f32]) -> usize {
    use std::arch::x86_64::*;
    let mut k = 0;
    while k + 4 <= row.len() {
        // SAFETY: as in `f16_row_avx512`, four words.
        unsafe {
            let h = atomic_words4(row.as_ptr().add(k));
            let v = _mm256_cvtph_ps(h);
            _mm256_storeu_ps(out.as_mut_ptr().add(2 * k), v);
            if _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(v, v)) != 0 {
                let mut w = [0u32; 4];
                _mm_storeu_si128(w.as_mut_ptr().cast(), h);
                h2f_words_body(&w, &mut out[2 * k..2 * k + 8]);
            }
        }
        k += 4;
    }
    k
}

/// What a column of addresses (object index above `obj_shift`, byte offset below) says about
/// the lanes at once: the lowest and highest object, the furthest offset, the OR of the low
/// two bits (misalignment), and whether lane `l` holds `addrs[0] + step·l` (one run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressSummary {
    /// The smallest object index.
    pub obj_lo: u64,
    /// The largest object index.
    pub obj_hi: u64,
    /// The largest byte offset.
    pub off_max: u64,
    /// The OR of every address's two low bits (0: all 4-byte aligned).
    pub low_bits: u64,
    /// Every lane at the first lane's address plus `step` per lane (wrapping).
    pub sequential: bool,
}

/// [`AddressSummary`] of `addrs` (not empty), one pass at the CPU's vector width: the loads of
/// a decode call check their whole pointer column with it instead of lane by lane.
pub fn address_summary(addrs: &[u64], obj_shift: u32, step: u64) -> AddressSummary {
    address_summary_with(level(), addrs, obj_shift, step)
}

fn address_summary_with(level: Level, addrs: &[u64], obj_shift: u32, step: u64) -> AddressSummary {
    match level {
        Level::Base => address_summary_body(addrs, obj_shift, step),
        // SAFETY: level() is Avx2 only when AVX2 is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { address_summary_avx2(addrs, obj_shift, step) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { address_summary_avx512(addrs, obj_shift, step) },
    }
}

#[inline(always)]
fn address_summary_body(addrs: &[u64], obj_shift: u32, step: u64) -> AddressSummary {
    let a0 = addrs.first().copied().unwrap_or(0);
    let off_mask = (1u64 << obj_shift) - 1;
    let (mut lo, mut hi, mut off, mut low, mut apart) = (u64::MAX, 0u64, 0u64, 0u64, 0u64);
    // Index arithmetic rather than a running "next" address: no loop-carried dependency, so
    // the loop vectorizes.
    for (l, &a) in addrs.iter().enumerate() {
        let oi = a >> obj_shift;
        lo = lo.min(oi);
        hi = hi.max(oi);
        off = off.max(a & off_mask);
        low |= a & 3;
        apart |= a ^ a0.wrapping_add(step.wrapping_mul(l as u64));
    }
    AddressSummary {
        obj_lo: lo,
        obj_hi: hi,
        off_max: off,
        low_bits: low,
        sequential: apart == 0,
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn address_summary_avx2(addrs: &[u64], obj_shift: u32, step: u64) -> AddressSummary {
    address_summary_body(addrs, obj_shift, step)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn address_summary_avx512(addrs: &[u64], obj_shift: u32, step: u64) -> AddressSummary {
    address_summary_body(addrs, obj_shift, step)
}

/// Whether `src` is `deltas` moved by its first word (`src[l] - src[0] == deltas[l]`,
/// wrapping) and `dst` equals `dst_was`, at the CPU's vector width (a staging copy's columns
/// against the shape it last had).
pub fn same_shape(src: &[u64], deltas: &[u64], dst: &[u64], dst_was: &[u64]) -> bool {
    same_shape_at(level(), src, deltas, dst, dst_was)
}

/// [`same_shape`] at a chosen level (the tests run every level the CPU has).
fn same_shape_at(level: Level, src: &[u64], deltas: &[u64], dst: &[u64], dst_was: &[u64]) -> bool {
    match level {
        Level::Base => same_shape_body(src, deltas, dst, dst_was),
        // SAFETY: level() is Avx2 only when AVX2 is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { same_shape_avx2(src, deltas, dst, dst_was) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { same_shape_avx512(src, deltas, dst, dst_was) },
    }
}

#[inline(always)]
fn same_shape_body(src: &[u64], deltas: &[u64], dst: &[u64], dst_was: &[u64]) -> bool {
    let Some(&a0) = src.first() else {
        return deltas.is_empty() && dst.len() == dst_was.len();
    };
    src.len() == deltas.len()
        && dst.len() == dst_was.len()
        && src
            .iter()
            .zip(deltas)
            .fold(0, |acc, (&a, &d)| acc | (a.wrapping_sub(a0) ^ d))
            | dst
                .iter()
                .zip(dst_was)
                .fold(0, |acc, (&a, &b)| acc | (a ^ b))
            == 0
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn same_shape_avx2(src: &[u64], deltas: &[u64], dst: &[u64], dst_was: &[u64]) -> bool {
    same_shape_body(src, deltas, dst, dst_was)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn same_shape_avx512(src: &[u64], deltas: &[u64], dst: &[u64], dst_was: &[u64]) -> bool {
    same_shape_body(src, deltas, dst, dst_was)
}

/// Whether every word of `col` is `v` (a layout or view input column: uniform nearly always,
/// so the whole column is compared without an early exit, at the CPU's vector width).
pub fn column_is(col: &[u64], v: u64) -> bool {
    match level() {
        Level::Base => column_is_body(col, v),
        // SAFETY: level() is Avx2 only when AVX2 is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { column_is_avx2(col, v) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { column_is_avx512(col, v) },
    }
}

#[inline(always)]
fn column_is_body(col: &[u64], v: u64) -> bool {
    col.iter().fold(0, |acc, &x| acc | (x ^ v)) == 0
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn column_is_avx2(col: &[u64], v: u64) -> bool {
    column_is_body(col, v)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn column_is_avx512(col: &[u64], v: u64) -> bool {
    column_is_body(col, v)
}

/// The first of the rows that end `tile` (row-major, `cols` wide) and equal its last row bit
/// for bit: the last row's index when the two last rows differ, 0 when every row is the last
/// (0 for an empty tile). Rows are compared whole, from the bottom up, so a tile without such
/// a run costs one row.
pub fn repeated_tail(tile: &[f32], cols: usize) -> usize {
    repeated_tail_with(level(), tile, cols)
}

fn repeated_tail_with(level: Level, tile: &[f32], cols: usize) -> usize {
    match level {
        Level::Base => repeated_tail_body(tile, cols),
        // SAFETY: level() is Avx2 only when AVX2 is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { repeated_tail_avx2(tile, cols) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { repeated_tail_avx512(tile, cols) },
    }
}

#[inline(always)]
fn repeated_tail_body(tile: &[f32], cols: usize) -> usize {
    let rows = tile.len().checked_div(cols).unwrap_or(0);
    let Some(last) = rows.checked_sub(1) else {
        return 0;
    };
    let bottom = &tile[last * cols..rows * cols];
    let mut first = last;
    // Bits, not values: -0 and +0, or two NaNs, are different rows.
    while first > 0
        && tile[(first - 1) * cols..first * cols]
            .iter()
            .zip(bottom)
            .fold(0, |acc, (x, y)| acc | (x.to_bits() ^ y.to_bits()))
            == 0
    {
        first -= 1;
    }
    first
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn repeated_tail_avx2(tile: &[f32], cols: usize) -> usize {
    repeated_tail_body(tile, cols)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn repeated_tail_avx512(tile: &[f32], cols: usize) -> usize {
    use std::arch::x86_64::*;
    // Rows of whole vectors (flash attention's 32- and 128-wide tiles): one compare mask a
    // vector and an early exit, where the generic fold reduced every row horizontally (about
    // 200 cycles for a 32x32 tile with four distinct rows, twelve tiles a KV step).
    if cols == 0 || !cols.is_multiple_of(16) {
        return repeated_tail_body(tile, cols);
    }
    let rows = tile.len() / cols;
    let Some(last) = rows.checked_sub(1) else {
        return 0;
    };
    let bottom = &tile[last * cols..rows * cols];
    let mut first = last;
    while first > 0 {
        let row = &tile[(first - 1) * cols..first * cols];
        let mut differ = 0u16;
        for (a, b) in row.chunks_exact(16).zip(bottom.chunks_exact(16)) {
            // SAFETY: AVX-512F is enabled here; each chunk is 16 f32s. Compared as integers:
            // bits, not values.
            differ |= unsafe {
                _mm512_cmpneq_epi32_mask(
                    _mm512_castps_si512(_mm512_loadu_ps(a.as_ptr())),
                    _mm512_castps_si512(_mm512_loadu_ps(b.as_ptr())),
                )
            };
        }
        if differ != 0 {
            break;
        }
        first -= 1;
    }
    first
}

/// An f32 arithmetic op of element-wise tile work ([`f32_arith`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum F32Arith {
    /// `x + y`.
    Add,
    /// `x − y`.
    Sub,
    /// `x · y`.
    Mul,
    /// `x / y`.
    Div,
    /// GLSL.std.450 FMax without NaNs: `y` if `x < y`, else `x` (equal operands, ±0 included,
    /// give `x`). A NaN operand is reported, not handled.
    Max,
    /// FMin without NaNs: `y` if `y < x`, else `x`. A NaN operand is reported.
    Min,
}

/// `out[i] = xs[i] op ys[i]` in f32 (IEEE, round to nearest even) over the common length, at
/// the CPU's vector width; true when some result is a NaN (whose bits the caller decides: the
/// vector op's are not the engine's), or for Max and Min when some operand is one.
pub fn f32_arith(op: F32Arith, xs: &[f32], ys: &[f32], out: &mut [f32]) -> bool {
    f32_arith_with(level(), op, xs, ys, out)
}

fn f32_arith_with(level: Level, op: F32Arith, xs: &[f32], ys: &[f32], out: &mut [f32]) -> bool {
    match level {
        Level::Base => f32_arith_body(op, xs, ys, out),
        // SAFETY: level() is Avx2 only when AVX2 is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { f32_arith_avx2(op, xs, ys, out) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { f32_arith_avx512(op, xs, ys, out) },
    }
}

#[inline(always)]
fn f32_arith_body(op: F32Arith, xs: &[f32], ys: &[f32], out: &mut [f32]) -> bool {
    // One loop per op, so that each vectorizes with its NaN test.
    #[inline(always)]
    fn each(xs: &[f32], ys: &[f32], out: &mut [f32], f: impl Fn(f32, f32) -> f32) -> bool {
        let mut nan = false;
        for ((o, &x), &y) in out.iter_mut().zip(xs).zip(ys) {
            let r = f(x, y);
            nan |= r.is_nan();
            *o = r;
        }
        nan
    }
    // A compare-select (one vmaxps-like blend a vector): its NaN test is on the operands, since
    // a NaN second operand would not show in the result.
    #[inline(always)]
    fn pick(
        xs: &[f32],
        ys: &[f32],
        out: &mut [f32],
        second_wins: impl Fn(f32, f32) -> bool,
    ) -> bool {
        let mut nan = false;
        for ((o, &x), &y) in out.iter_mut().zip(xs).zip(ys) {
            nan |= x.is_nan() | y.is_nan();
            *o = if second_wins(x, y) { y } else { x };
        }
        nan
    }
    match op {
        F32Arith::Add => each(xs, ys, out, |x, y| x + y),
        F32Arith::Sub => each(xs, ys, out, |x, y| x - y),
        F32Arith::Mul => each(xs, ys, out, |x, y| x * y),
        F32Arith::Div => each(xs, ys, out, |x, y| x / y),
        F32Arith::Max => pick(xs, ys, out, |x, y| x < y),
        F32Arith::Min => pick(xs, ys, out, |x, y| y < x),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn f32_arith_avx2(op: F32Arith, xs: &[f32], ys: &[f32], out: &mut [f32]) -> bool {
    f32_arith_body(op, xs, ys, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn f32_arith_avx512(op: F32Arith, xs: &[f32], ys: &[f32], out: &mut [f32]) -> bool {
    f32_arith_body(op, xs, ys, out)
}

/// `out[i] = e^xs[i]` as the engine computes it for f32 (`floats::exp_in_range` in f64,
/// rounded to f32) over the common length, at the CPU's vector width: true when some input lies
/// outside that function's range or is a NaN, whose results the caller must redo with `un1`
/// (flash attention's `exp` of every KV block, straight from and to f32 tiles).
pub fn exp_f32(xs: &[f32], out: &mut [f32]) -> bool {
    exp_f32_with(level(), xs, out)
}

fn exp_f32_with(level: Level, xs: &[f32], out: &mut [f32]) -> bool {
    match level {
        Level::Base => exp_f32_body(xs, out),
        // SAFETY: level() is Avx2 only when AVX2 and FMA are present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { exp_f32_avx2(xs, out) },
        // SAFETY: level() is Avx512 only when AVX-512F and FMA are present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { exp_f32_avx512(xs, out) },
    }
}

#[inline(always)]
fn exp_f32_body(xs: &[f32], out: &mut [f32]) -> bool {
    let mut outside = false;
    for (o, &x) in out.iter_mut().zip(xs) {
        let w = x as f64;
        outside |= !crate::floats::in_exp_range(w);
        *o = crate::floats::exp_in_range(w) as f32;
    }
    outside
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn exp_f32_avx2(xs: &[f32], out: &mut [f32]) -> bool {
    exp_f32_body(xs, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn exp_f32_avx512(xs: &[f32], out: &mut [f32]) -> bool {
    exp_f32_body(xs, out)
}

/// `out[i] = xs[i] · s` in f32 over the common length; true when some result is a NaN.
pub fn f32_scale(xs: &[f32], s: f32, out: &mut [f32]) -> bool {
    f32_scale_with(level(), xs, s, out)
}

fn f32_scale_with(level: Level, xs: &[f32], s: f32, out: &mut [f32]) -> bool {
    match level {
        Level::Base => f32_scale_body(xs, s, out),
        // SAFETY: level() is Avx2 only when AVX2 is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { f32_scale_avx2(xs, s, out) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { f32_scale_avx512(xs, s, out) },
    }
}

#[inline(always)]
fn f32_scale_body(xs: &[f32], s: f32, out: &mut [f32]) -> bool {
    let mut nan = false;
    for (o, &x) in out.iter_mut().zip(xs) {
        let r = x * s;
        nan |= r.is_nan();
        *o = r;
    }
    nan
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn f32_scale_avx2(xs: &[f32], s: f32, out: &mut [f32]) -> bool {
    f32_scale_body(xs, s, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn f32_scale_avx512(xs: &[f32], s: f32, out: &mut [f32]) -> bool {
    f32_scale_body(xs, s, out)
}

/// The largest (`max`) or smallest value of `xs`, which holds no NaN and at least one value,
/// up to the sign of a zero result (the caller settles which zero); `first` is where the
/// partial extremes start (`xs[0]` will do). Sixteen partial extremes, one compare-select a
/// vector at the CPU's width: a reduction's fold over a 32x32 tile took a thousand cycles with
/// the baseline build's `f32::max`.
pub fn extreme_f32(xs: &[f32], max: bool, first: f32) -> f32 {
    extreme_f32_with(level(), xs, max, first)
}

fn extreme_f32_with(level: Level, xs: &[f32], max: bool, first: f32) -> f32 {
    match level {
        Level::Base => extreme_f32_body(xs, max, first),
        // SAFETY: level() is Avx2 only when AVX2 is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { extreme_f32_avx2(xs, max, first) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { extreme_f32_avx512(xs, max, first) },
    }
}

#[inline(always)]
fn extreme_f32_body(xs: &[f32], max: bool, first: f32) -> f32 {
    // Without NaNs a compare-select is the IEEE maximum or minimum but for a zero's sign.
    let pick = |a: f32, b: f32| {
        if max {
            if b > a { b } else { a }
        } else if b < a {
            b
        } else {
            a
        }
    };
    let mut part = [first; 16];
    let chunks = xs.chunks_exact(16);
    for &x in chunks.remainder() {
        part[0] = pick(part[0], x);
    }
    for c in chunks {
        for (p, &x) in part.iter_mut().zip(c) {
            *p = pick(*p, x);
        }
    }
    part.iter().fold(first, |a, &b| pick(a, b))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn extreme_f32_avx2(xs: &[f32], max: bool, first: f32) -> f32 {
    extreme_f32_body(xs, max, first)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn extreme_f32_avx512(xs: &[f32], max: bool, first: f32) -> f32 {
    extreme_f32_body(xs, max, first)
}

/// Whether some value of `xs` is a NaN, at the CPU's vector width.
pub fn any_nan(xs: &[f32]) -> bool {
    any_nan_with(level(), xs)
}

fn any_nan_with(level: Level, xs: &[f32]) -> bool {
    match level {
        Level::Base => any_nan_body(xs),
        // SAFETY: level() is Avx2 only when AVX2 is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { any_nan_avx2(xs) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { any_nan_avx512(xs) },
    }
}

#[inline(always)]
fn any_nan_body(xs: &[f32]) -> bool {
    xs.iter().fold(false, |nan, x| nan | x.is_nan())
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn any_nan_avx2(xs: &[f32]) -> bool {
    any_nan_body(xs)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn any_nan_avx512(xs: &[f32]) -> bool {
    any_nan_body(xs)
}

/// Bit `i` set where `chunk[i]` is not zero (`chunk.len() <= 64`): a branch condition's lanes,
/// one vector compare per 8 words instead of a shift and an or per word.
pub fn nonzero_bits(chunk: &[u64]) -> u64 {
    nonzero_bits_with(level(), chunk)
}

fn nonzero_bits_with(level: Level, chunk: &[u64]) -> u64 {
    assert!(chunk.len() <= 64);
    match level {
        Level::Base => nonzero_bits_body(chunk),
        // SAFETY: level() is Avx2 only when AVX2 is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { nonzero_bits_avx2(chunk) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { nonzero_bits_avx512(chunk) },
    }
}

#[inline(always)]
fn nonzero_bits_body(chunk: &[u64]) -> u64 {
    chunk
        .iter()
        .enumerate()
        .fold(0, |bits, (i, &v)| bits | ((v != 0) as u64) << i)
}

/// Four words a compare (`vpcmpeqq`, sign bits gathered by `vmovmskpd`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn nonzero_bits_avx2(chunk: &[u64]) -> u64 {
    use std::arch::x86_64::*;
    let full = chunk.len() / 4;
    let mut zero = 0u64;
    for i in 0..full {
        // SAFETY: 4·i + 4 <= chunk.len(); unaligned load.
        let m = unsafe {
            let v = _mm256_loadu_si256(chunk.as_ptr().add(4 * i) as *const __m256i);
            _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(
                v,
                _mm256_setzero_si256(),
            )))
        };
        zero |= (m as u64) << (4 * i);
    }
    if full == 16 {
        return !zero;
    }
    (!zero & ((1u64 << (4 * full)) - 1)) | nonzero_bits_body(&chunk[4 * full..]) << (4 * full)
}

/// Eight words a test (`vptestmq`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn nonzero_bits_avx512(chunk: &[u64]) -> u64 {
    use std::arch::x86_64::*;
    let full = chunk.len() / 8;
    let mut bits = 0u64;
    for i in 0..full {
        // SAFETY: 8·i + 8 <= chunk.len(); unaligned load.
        let m = unsafe {
            let v = _mm512_loadu_si512(chunk.as_ptr().add(8 * i) as *const __m512i);
            _mm512_test_epi64_mask(v, v)
        };
        bits |= (m as u64) << (8 * i);
    }
    if 8 * full < chunk.len() {
        bits |= nonzero_bits_body(&chunk[8 * full..]) << (8 * full);
    }
    bits
}

/// Sets every word of `col` to `v`, at the CPU's vector width.
pub fn fill_column(col: &mut [u64], v: u64) {
    match level() {
        Level::Base => col.fill(v),
        // SAFETY: level() is Avx2 only when AVX2 is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { fill_column_avx2(col, v) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { fill_column_avx512(col, v) },
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fill_column_avx2(col: &mut [u64], v: u64) {
    col.fill(v)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn fill_column_avx512(col: &mut [u64], v: u64) {
    col.fill(v)
}

/// f16 values held in the low 16 bits of 64-bit column words (the upper bits ignored) to f32,
/// exactly: `dst[i] = f32(src[i] as u16)` for `i < src.len() <= dst.len()`.
pub fn f16_cols_to_f32(src: &[u64], dst: &mut [f32]) {
    f16_cols_to_f32_with(level(), src, dst)
}

fn f16_cols_to_f32_with(level: Level, src: &[u64], dst: &mut [f32]) {
    assert!(dst.len() >= src.len());
    match level {
        Level::Base => f16_cols_to_f32_body(src, dst),
        // SAFETY: level() is Avx2 only when AVX2 is present; F16C ships with every AVX2 CPU.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { f16_cols_to_f32_avx2(src, dst) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { f16_cols_to_f32_avx512(src, dst) },
    }
}

#[inline(always)]
fn f16_cols_to_f32_body(src: &[u64], dst: &mut [f32]) {
    for (d, &x) in dst.iter_mut().zip(src) {
        *d = h2f(x as u16);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
fn f16_cols_to_f32_avx2(src: &[u64], dst: &mut [f32]) {
    f16_cols_to_f32_body(src, dst)
}

/// Sixteen lanes a step: vpmovqw of two vectors of words, vcvtph2ps.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn f16_cols_to_f32_avx512(src: &[u64], dst: &mut [f32]) {
    use std::arch::x86_64::*;
    let full = src.len() / 16;
    let mut nan: __mmask16 = 0;
    for i in 0..full {
        // SAFETY: 16·i + 16 <= src.len() <= dst.len(); unaligned loads and stores.
        unsafe {
            let p = src.as_ptr().add(16 * i) as *const __m512i;
            let a = _mm512_cvtepi64_epi16(_mm512_loadu_si512(p));
            let b = _mm512_cvtepi64_epi16(_mm512_loadu_si512(p.add(1)));
            let h = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(a), b);
            let v = _mm512_cvtph_ps(h);
            _mm512_storeu_ps(dst.as_mut_ptr().add(16 * i), v);
            nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
        }
    }
    // vcvtph2ps quiets signaling NaNs; `h2f` keeps their bits, as the other levels do. One
    // test for the whole slice, as in `h2f_words_avx512` (here about 10 % faster: the 64-bit
    // columns' loads dominate).
    if nan != 0 {
        f16_cols_to_f32_body(&src[..full * 16], &mut dst[..full * 16]);
    }
    f16_cols_to_f32_body(&src[full * 16..], &mut dst[full * 16..]);
}

/// Rounds f32 values held in the low 32 bits of 64-bit column words to f16 (to nearest, ties to
/// even: IEEE 754 `convertFormat`, what `half::f16::from_f32` and F16C's `vcvtps2ph` do), each
/// result zero-extended: `dst[i] = f16(src[i])` for `i < src.len() <= dst.len()`. A NaN's result
/// is left to the caller, which fixes its bits; returns whether there was one.
pub fn f32_cols_to_f16(src: &[u64], dst: &mut [u64]) -> bool {
    f32_cols_to_f16_with(level(), src, dst)
}

fn f32_cols_to_f16_with(level: Level, src: &[u64], dst: &mut [u64]) -> bool {
    assert!(dst.len() >= src.len());
    match level {
        Level::Base => f32_cols_to_f16_body(src, dst),
        // SAFETY: level() is Avx2 only when AVX2 is present; F16C ships with every AVX2 CPU.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { f32_cols_to_f16_avx2(src, dst) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { f32_cols_to_f16_avx512(src, dst) },
    }
}

#[inline(always)]
fn f32_cols_to_f16_body(src: &[u64], dst: &mut [u64]) -> bool {
    let mut nan = false;
    for (d, &x) in dst.iter_mut().zip(src) {
        let f = f32::from_bits(x as u32);
        nan |= f.is_nan();
        *d = half::f16::from_f32(f).to_bits() as u64;
    }
    nan
}

/// Four lanes a step: the low words packed, vcvtps2ph, zero-extended back.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
fn f32_cols_to_f16_avx2(src: &[u64], dst: &mut [u64]) -> bool {
    use std::arch::x86_64::*;
    let full = src.len() / 4;
    let mut nan = _mm_setzero_si128();
    let (abs, inf) = (_mm_set1_epi32(0x7fff_ffff), _mm_set1_epi32(0x7f80_0000));
    for i in 0..full {
        // SAFETY: 4·i + 4 <= src.len() <= dst.len(); unaligned loads and stores.
        unsafe {
            let v = _mm256_loadu_si256(src.as_ptr().add(4 * i) as *const __m256i);
            let lo = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                v,
                _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6),
            ));
            nan = _mm_or_si128(nan, _mm_cmpgt_epi32(_mm_and_si128(lo, abs), inf));
            let h = _mm_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm_castsi128_ps(lo));
            let w = _mm256_cvtepu16_epi64(h);
            _mm256_storeu_si256(dst.as_mut_ptr().add(4 * i) as *mut __m256i, w);
        }
    }
    let tail = f32_cols_to_f16_body(&src[full * 4..], &mut dst[full * 4..]);
    tail | (_mm_movemask_epi8(nan) != 0)
}

/// Sixteen lanes a step, as the AVX2 form on zmm registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn f32_cols_to_f16_avx512(src: &[u64], dst: &mut [u64]) -> bool {
    use std::arch::x86_64::*;
    let full = src.len() / 16;
    let mut nan: __mmask16 = 0;
    let (abs, inf) = (
        _mm512_set1_epi32(0x7fff_ffff),
        _mm512_set1_epi32(0x7f80_0000),
    );
    for i in 0..full {
        // SAFETY: 16·i + 16 <= src.len() <= dst.len(); unaligned loads and stores.
        unsafe {
            let p = src.as_ptr().add(16 * i) as *const __m512i;
            let a = _mm512_cvtepi64_epi32(_mm512_loadu_si512(p));
            let b = _mm512_cvtepi64_epi32(_mm512_loadu_si512(p.add(1)));
            let f = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(a), b);
            nan |= _mm512_cmpgt_epi32_mask(_mm512_and_si512(f, abs), inf);
            let h = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
                _mm512_castsi512_ps(f),
            );
            let q = dst.as_mut_ptr().add(16 * i) as *mut __m512i;
            _mm512_storeu_si512(q, _mm512_cvtepu16_epi64(_mm256_castsi256_si128(h)));
            _mm512_storeu_si512(
                q.add(1),
                _mm512_cvtepu16_epi64(_mm256_extracti128_si256::<1>(h)),
            );
        }
    }
    let tail = f32_cols_to_f16_body(&src[full * 16..], &mut dst[full * 16..]);
    tail | (nan != 0)
}

/// Each f32 of `src` rounded to the nearest f16 (ties to even, as `half::f16::from_f32`) and
/// widened back into `dst` (the same length): what an f16 matrix holds in the engine's f32
/// arena. False, with `dst` partly written, when some value is a NaN (the vector narrowing
/// quiets signaling NaNs; the caller's element path keeps their bits). One pass: each
/// vector is narrowed and widened in registers (a pass of 64 values through two kernel
/// calls cost a flash-attention step 6 % of its time in f16 results).
pub fn round_through_f16(src: &[f32], dst: &mut [f32]) -> bool {
    round_through_f16_with(level(), src, dst)
}

fn round_through_f16_with(level: Level, src: &[f32], dst: &mut [f32]) -> bool {
    assert_eq!(src.len(), dst.len());
    let done = match level {
        Level::Base => 0,
        // SAFETY: level() is Avx2 only when AVX2 is present; F16C ships with every AVX2 CPU.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => match unsafe { round_through_f16_avx2(src, dst) } {
            Some(n) => n,
            None => return false,
        },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => match unsafe { round_through_f16_avx512(src, dst) } {
            Some(n) => n,
            None => return false,
        },
    };
    for (x, y) in src[done..].iter().zip(&mut dst[done..]) {
        if x.is_nan() {
            return false;
        }
        *y = half::f16::from_f32(*x).to_f32();
    }
    true
}

/// Whole vectors of eight of [`round_through_f16`]: how many values it did, None on a NaN.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
fn round_through_f16_avx2(src: &[f32], dst: &mut [f32]) -> Option<usize> {
    use std::arch::x86_64::*;
    let full = src.len().min(dst.len()) / 8;
    let mut nan = _mm256_setzero_ps();
    for i in 0..full {
        // SAFETY: 8·i + 8 <= both lengths; unaligned loads and stores.
        unsafe {
            let f = _mm256_loadu_ps(src.as_ptr().add(8 * i));
            nan = _mm256_or_ps(nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(f, f));
            let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(f);
            _mm256_storeu_ps(dst.as_mut_ptr().add(8 * i), _mm256_cvtph_ps(h));
        }
    }
    (_mm256_movemask_ps(nan) == 0).then_some(8 * full)
}

/// Whole vectors of sixteen of [`round_through_f16`]: how many values it did, None on a NaN.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn round_through_f16_avx512(src: &[f32], dst: &mut [f32]) -> Option<usize> {
    use std::arch::x86_64::*;
    let full = src.len().min(dst.len()) / 16;
    let mut nan: __mmask16 = 0;
    for i in 0..full {
        // SAFETY: 16·i + 16 <= both lengths; unaligned loads and stores.
        unsafe {
            let f = _mm512_loadu_ps(src.as_ptr().add(16 * i));
            nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(f, f);
            let h = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(f);
            _mm512_storeu_ps(dst.as_mut_ptr().add(16 * i), _mm512_cvtph_ps(h));
        }
    }
    (nan == 0).then_some(16 * full)
}

/// f32 values rounded to f16 (round to nearest even, as `half::f16::from_f32`), packed two to a
/// word (the first in the low half): `dst[i] = f16(src[2i]) | f16(src[2i+1]) << 16` for
/// `i < dst.len()`, `src.len() == 2·dst.len()`. True when some value is a NaN (the caller decides
/// what its bits should be).
pub fn f32_to_f16_pairs(src: &[f32], dst: &mut [u32]) -> bool {
    f32_to_f16_pairs_with(level(), src, dst)
}

fn f32_to_f16_pairs_with(level: Level, src: &[f32], dst: &mut [u32]) -> bool {
    assert_eq!(src.len(), 2 * dst.len());
    match level {
        Level::Base => f32_to_f16_pairs_body(src, dst),
        // SAFETY: level() is Avx2 only when AVX2 is present; F16C ships with every AVX2 CPU.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { f32_to_f16_pairs_avx2(src, dst) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { f32_to_f16_pairs_avx512(src, dst) },
    }
}

#[inline(always)]
fn f32_to_f16_pairs_body(src: &[f32], dst: &mut [u32]) -> bool {
    let mut nan = false;
    for (d, p) in dst.iter_mut().zip(src.chunks_exact(2)) {
        nan |= p[0].is_nan() | p[1].is_nan();
        *d = half::f16::from_f32(p[0]).to_bits() as u32
            | (half::f16::from_f32(p[1]).to_bits() as u32) << 16;
    }
    nan
}

/// Eight values a step through vcvtps2ph (its f16 lanes are the packed pairs).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
fn f32_to_f16_pairs_avx2(src: &[f32], dst: &mut [u32]) -> bool {
    use std::arch::x86_64::*;
    let full = src.len() / 8;
    let mut nan = _mm256_setzero_ps();
    for i in 0..full {
        // SAFETY: 8·i + 8 <= src.len() and 4·i + 4 <= dst.len(); unaligned loads and stores.
        unsafe {
            let f = _mm256_loadu_ps(src.as_ptr().add(8 * i));
            nan = _mm256_or_ps(nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(f, f));
            let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(f);
            _mm_storeu_si128(dst.as_mut_ptr().add(4 * i) as *mut __m128i, h);
        }
    }
    let tail = f32_to_f16_pairs_body(&src[full * 8..], &mut dst[full * 4..]);
    tail | (_mm256_movemask_ps(nan) != 0)
}

/// Sixteen values a step, as the AVX2 form on zmm registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn f32_to_f16_pairs_avx512(src: &[f32], dst: &mut [u32]) -> bool {
    use std::arch::x86_64::*;
    let full = src.len() / 16;
    let mut nan: __mmask16 = 0;
    for i in 0..full {
        // SAFETY: 16·i + 16 <= src.len() and 8·i + 8 <= dst.len(); unaligned loads and stores.
        unsafe {
            let f = _mm512_loadu_ps(src.as_ptr().add(16 * i));
            nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(f, f);
            let h = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(f);
            _mm256_storeu_si256(dst.as_mut_ptr().add(8 * i) as *mut __m256i, h);
        }
    }
    let tail = f32_to_f16_pairs_body(&src[full * 16..], &mut dst[full * 8..]);
    tail | (nan != 0)
}

/// Sixteen runs of f16 pairs in memory, `nw` words each, `stride` words apart from word `w0`
/// of `src` (a tensor's rows read through a transposing view: flash attention's K tile), as
/// the sixteen columns of a block of `dst`: `dst[k·dst_stride + j]` = element k of run j,
/// widened to f32. Converted and transposed in registers, 16×16 at a time with AVX-512, 8×8
/// with AVX2, without the scratch copy of [`runs_to_columns`]. False where it does not apply
/// (neither level, `nw` not a multiple of 8 with AVX-512 or of 4 with AVX2, a run outside
/// `src` or `dst` too short: nothing written) or when a run holds
/// a NaN (vcvtph2ps quiets signaling ones; the block is then partly written, and the caller
/// writes all of it again the other way).
pub(crate) fn f16_runs_to_columns16(
    src: &[std::sync::atomic::AtomicU32],
    shape: (usize, usize, usize),
    dst: &mut [f32],
    dst_stride: usize,
) -> bool {
    f16_runs_to_columns16_at(level(), src, shape, dst, dst_stride)
}

/// [`f16_runs_to_columns16`] at a chosen level (the tests run every level the CPU has).
fn f16_runs_to_columns16_at(
    level: Level,
    src: &[std::sync::atomic::AtomicU32],
    (w0, stride, nw): (usize, usize, usize),
    dst: &mut [f32],
    dst_stride: usize,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // Sixteen runs of nw words in `src`; 2·nw rows of sixteen f32s in `dst`. AVX-512
        // widens eight words a run a step, AVX2 four.
        let step = if level == Level::Avx512 { 8 } else { 4 };
        if level != Level::Base
            && nw > 0
            && nw.is_multiple_of(step)
            && rows_fit(src.len(), (w0, stride, 16, nw))
            && rows_fit(dst.len(), (0, dst_stride, 2 * nw, 16))
        {
            let shape = (w0, stride, nw);
            // SAFETY: the level's features are present; every run and the block were checked
            // above.
            return unsafe {
                match level == Level::Avx512 {
                    true => f16_runs_to_columns16_avx512(src, shape, dst, dst_stride),
                    false => f16_runs_to_columns16_avx2(src, shape, dst, dst_stride),
                }
            };
        }
    }
    let _ = (level, src, w0, stride, nw, dst, dst_stride);
    false
}

/// [`f16_runs_to_columns16`] with AVX2 and F16C: each step widens four words of every run
/// and places them by two 8×8 transposes (runs 0-7, then 8-15); false if some element is a
/// NaN.
///
/// # Safety
/// AVX2 and F16C; words `w0 + j·stride .. + nw` of `src` exist for j < 16, and `dst` holds
/// `(2·nw − 1)·dst_stride + 16` f32s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn f16_runs_to_columns16_avx2(
    src: &[std::sync::atomic::AtomicU32],
    (w0, stride, nw): (usize, usize, usize),
    dst: &mut [f32],
    dst_stride: usize,
) -> bool {
    use std::arch::x86_64::*;
    let mut nan = _mm256_setzero_ps();
    for k0 in (0..nw).step_by(4) {
        for h in 0..2 {
            let rows: [__m256; 8] = std::array::from_fn(|j| {
                // SAFETY: words k0..k0 + 4 of run 8h + j are inside `src` (the caller's
                // contract).
                let w = unsafe { atomic_words4(src.as_ptr().add(w0 + (8 * h + j) * stride + k0)) };
                _mm256_cvtph_ps(w)
            });
            for v in &rows {
                nan = _mm256_or_ps(nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(*v, *v));
            }
            for (k, c) in transpose8(rows).iter().enumerate() {
                // SAFETY: row 2·k0 + k < 2·nw of the block, so its columns 8h..8h + 8 end
                // inside `dst`.
                let at = (2 * k0 + k) * dst_stride + 8 * h;
                unsafe { _mm256_storeu_ps(dst.as_mut_ptr().add(at), *c) };
            }
        }
    }
    _mm256_movemask_ps(nan) == 0
}

/// [`f16_runs_to_columns16`] with AVX-512F; false if some element is a NaN.
///
/// # Safety
/// AVX-512F; words `w0 + j·stride .. + nw` of `src` exist for j < 16, and `dst` holds
/// `(2·nw − 1)·dst_stride + 16` f32s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn f16_runs_to_columns16_avx512(
    src: &[std::sync::atomic::AtomicU32],
    (w0, stride, nw): (usize, usize, usize),
    dst: &mut [f32],
    dst_stride: usize,
) -> bool {
    use std::arch::x86_64::*;
    let mut nan = 0u16;
    for k0 in (0..nw).step_by(8) {
        let rows: [__m512; 16] = std::array::from_fn(|j| {
            // SAFETY: words k0..k0 + 8 of run j are inside `src` (the caller's contract).
            _mm512_cvtph_ps(unsafe { atomic_words8(src.as_ptr().add(w0 + j * stride + k0)) })
        });
        for v in &rows {
            nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(*v, *v);
        }
        for (k, c) in transpose16(rows).iter().enumerate() {
            // SAFETY: row 2·k0 + k < 2·nw of the block, so its 16 f32s end inside `dst`.
            unsafe { _mm512_storeu_ps(dst.as_mut_ptr().add((2 * k0 + k) * dst_stride), *c) };
        }
    }
    nan == 0
}

/// Writes `group` runs of `len` values each (`runs`, one run after the other) as the columns
/// of a block of `dst`: `dst[k·stride + j] = runs[j·len + k]` (a tile loaded through a
/// transposing view, whose runs lie along its columns). With 16 runs, transposed in registers
/// (AVX-512: 16×16 blocks, the last `len % 16` rows by gathers; AVX2: 8×8 blocks, the last
/// `len % 8` rows element by element); otherwise element by element.
pub fn runs_to_columns(runs: &[f32], len: usize, group: usize, dst: &mut [f32], stride: usize) {
    runs_to_columns_at(level(), runs, len, group, dst, stride)
}

/// [`runs_to_columns`] at a chosen level (the tests run every level the CPU has).
fn runs_to_columns_at(
    level: Level,
    runs: &[f32],
    len: usize,
    group: usize,
    dst: &mut [f32],
    stride: usize,
) {
    assert!(runs.len() >= group * len);
    assert!(len == 0 || dst.len() >= (len - 1) * stride + group);
    #[cfg(target_arch = "x86_64")]
    if group == 16 && level == Level::Avx512 && (16 * len) < i32::MAX as usize {
        // SAFETY: level() is Avx512 only when AVX-512F is present; bounds asserted above.
        unsafe { runs_to_columns16_avx512(runs, len, dst, stride) };
        return;
    }
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if group == 16 && level == Level::Avx2 {
        // SAFETY: level() is Avx2 only when AVX2 is present; bounds asserted above.
        done = unsafe { runs_to_columns16_avx2(runs, len, dst, stride) };
    }
    for k in done..len {
        let row = &mut dst[k * stride..][..group];
        for (x, run) in row.iter_mut().zip(runs.chunks_exact(len)) {
            *x = run[k];
        }
    }
}

/// The whole blocks of eight elements of [`runs_to_columns`] for sixteen runs with AVX2, by
/// two 8×8 transposes in registers each (runs 0-7, then 8-15); returns how many rows it
/// placed (the caller places the rest).
///
/// # Safety
/// AVX2; `runs` holds 16 runs of `len` and `dst` `(len − 1)·stride + 16` f32s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn runs_to_columns16_avx2(
    runs: &[f32],
    len: usize,
    dst: &mut [f32],
    stride: usize,
) -> usize {
    use std::arch::x86_64::*;
    let mut k0 = 0;
    while k0 + 8 <= len {
        for h in 0..2 {
            // SAFETY: run 8h + j's elements k0..k0 + 8 lie below 16·len <= runs.len().
            let rows: [__m256; 8] = std::array::from_fn(|j| unsafe {
                _mm256_loadu_ps(runs.as_ptr().add((8 * h + j) * len + k0))
            });
            for (k, c) in transpose8(rows).iter().enumerate() {
                // SAFETY: (k0 + k)·stride + 8h + 8 <= (len − 1)·stride + 16 <= dst.len().
                unsafe { _mm256_storeu_ps(dst.as_mut_ptr().add((k0 + k) * stride + 8 * h), *c) };
            }
        }
        k0 += 8;
    }
    k0
}

/// The 8×8 transpose of `r` (row j, element k → result k, element j): pairs interleaved,
/// then quads within 128-bit lanes, then the lanes exchanged.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn transpose8(r: [std::arch::x86_64::__m256; 8]) -> [std::arch::x86_64::__m256; 8] {
    use std::arch::x86_64::*;
    // t[2i] / t[2i+1]: rows 2i and 2i+1 interleaved, elements 0,1 / 2,3 of each lane.
    let t: [__m256; 8] = std::array::from_fn(|x| {
        let (a, b) = (r[x & !1], r[x | 1]);
        if x % 2 == 0 {
            _mm256_unpacklo_ps(a, b)
        } else {
            _mm256_unpackhi_ps(a, b)
        }
    });
    // u[4q + e]: rows 4q..4q + 4, element e of each 128-bit lane.
    let u: [__m256; 8] = std::array::from_fn(|x| {
        let (q, e) = (x / 4, x % 4);
        let (a, b) = (t[4 * q + e / 2], t[4 * q + 2 + e / 2]);
        if e % 2 == 0 {
            _mm256_shuffle_ps::<0x44>(a, b)
        } else {
            _mm256_shuffle_ps::<0xEE>(a, b)
        }
    });
    // Column e (lane 0) and e + 4 (lane 1) of rows 0-3 in u[e], of rows 4-7 in u[4 + e].
    std::array::from_fn(|k| {
        let e = k % 4;
        if k < 4 {
            _mm256_permute2f128_ps::<0x20>(u[e], u[4 + e])
        } else {
            _mm256_permute2f128_ps::<0x31>(u[e], u[4 + e])
        }
    })
}

/// Sixteen runs into sixteen columns: blocks of 16 elements of every run transposed in
/// registers (a gather per destination row read one element a cycle: a flash attention's K
/// tile spent as long transposing as reading), the last `len % 16` rows by gathers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn runs_to_columns16_avx512(runs: &[f32], len: usize, dst: &mut [f32], stride: usize) {
    use std::arch::x86_64::*;
    let mut k0 = 0;
    while k0 + 16 <= len {
        // SAFETY: run j's elements k0..k0 + 16 lie below j·len + len <= 16·len <= runs.len();
        // unaligned loads.
        let rows: [__m512; 16] =
            std::array::from_fn(|j| unsafe { _mm512_loadu_ps(runs.as_ptr().add(j * len + k0)) });
        let cols = transpose16(rows);
        for (k, c) in cols.iter().enumerate() {
            // SAFETY: (k0 + k)·stride + 16 <= (len − 1)·stride + 16 <= dst.len() (asserted by
            // the caller); unaligned store.
            unsafe { _mm512_storeu_ps(dst.as_mut_ptr().add((k0 + k) * stride), *c) };
        }
        k0 += 16;
    }
    let l = len as i32;
    let first = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32(l),
    );
    for k in k0..len {
        // SAFETY: the indices j·len + k (j < 16, k < len) are below 16·len <= runs.len(), and
        // k·stride + 16 <= dst.len() (asserted by the caller); unaligned store.
        unsafe {
            let idx = _mm512_add_epi32(first, _mm512_set1_epi32(k as i32));
            let v = _mm512_i32gather_ps::<4>(idx, runs.as_ptr());
            _mm512_storeu_ps(dst.as_mut_ptr().add(k * stride), v);
        }
    }
}

/// The 16×16 transpose of `r` (row j, element k → result k, element j): pairs, then quads
/// interleaved within 128-bit lanes, then the lanes gathered in two rounds of shuffles.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn transpose16(r: [std::arch::x86_64::__m512; 16]) -> [std::arch::x86_64::__m512; 16] {
    use std::arch::x86_64::*;
    // t[2i] / t[2i+1]: rows 2i and 2i+1 interleaved, elements 0,1 / 2,3 of each lane.
    let t: [__m512; 16] = std::array::from_fn(|x| {
        let (a, b) = (r[x & !1], r[x | 1]);
        if x % 2 == 0 {
            _mm512_unpacklo_ps(a, b)
        } else {
            _mm512_unpackhi_ps(a, b)
        }
    });
    // u[4q + e]: rows 4q..4q+4, element e of each 128-bit lane (e = 0..4).
    let u: [__m512; 16] = std::array::from_fn(|x| {
        let (q, e) = (x / 4, x % 4);
        let (a, b) = (
            _mm512_castps_pd(t[4 * q + e / 2]),
            _mm512_castps_pd(t[4 * q + 2 + e / 2]),
        );
        _mm512_castpd_ps(if e % 2 == 0 {
            _mm512_unpacklo_pd(a, b)
        } else {
            _mm512_unpackhi_pd(a, b)
        })
    });
    let mut out = [_mm512_setzero_ps(); 16];
    for e in 0..4 {
        // u[e], u[4 + e], u[8 + e], u[12 + e] hold rows 0-3, 4-7, 8-11, 12-15 of columns
        // e, e + 4, e + 8, e + 12 (one per 128-bit lane).
        let v0 = _mm512_shuffle_f32x4::<0x88>(u[e], u[4 + e]);
        let v1 = _mm512_shuffle_f32x4::<0xDD>(u[e], u[4 + e]);
        let v2 = _mm512_shuffle_f32x4::<0x88>(u[8 + e], u[12 + e]);
        let v3 = _mm512_shuffle_f32x4::<0xDD>(u[8 + e], u[12 + e]);
        out[e] = _mm512_shuffle_f32x4::<0x88>(v0, v2);
        out[e + 8] = _mm512_shuffle_f32x4::<0xDD>(v0, v2);
        out[e + 4] = _mm512_shuffle_f32x4::<0x88>(v1, v3);
        out[e + 12] = _mm512_shuffle_f32x4::<0xDD>(v1, v3);
    }
    out
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

/// Four f16 columns (each value in the low 16 bits of a word, the rest ignored) interleaved
/// into f16 pairs: `out[2j] = c0[j] | c1[j] << 16`, `out[2j + 1] = c2[j] | c3[j] << 16` (the
/// halves in the order c0[0], c1[0], c2[0], c3[0], c0[1], ...). All columns as long, `out`
/// twice as long.
pub(crate) fn interleave4_halves(c: [&[u64]; 4], out: &mut [u32]) {
    interleave4_halves_at(level(), c, out)
}

fn interleave4_halves_at(level: Level, c: [&[u64]; 4], out: &mut [u32]) {
    let n = c[0].len();
    assert!(c.iter().all(|x| x.len() == n) && out.len() == 2 * n);
    match level {
        Level::Base => interleave4_body(c, out),
        // SAFETY: level() is Avx2 only when AVX2 is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { interleave4_avx2(c, out) },
        // SAFETY: level() is Avx512 only when AVX-512F is present.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { interleave4_avx512(c, out) },
    }
}

#[inline(always)]
fn interleave4_body([c0, c1, c2, c3]: [&[u64]; 4], out: &mut [u32]) {
    let half = |x: u64| x as u32 & 0xffff;
    for ((((pair, &a), &b), &c), &d) in out.chunks_exact_mut(2).zip(c0).zip(c1).zip(c2).zip(c3) {
        pair[0] = half(a) | half(b) << 16;
        pair[1] = half(c) | half(d) << 16;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn interleave4_avx2(c: [&[u64]; 4], out: &mut [u32]) {
    interleave4_body(c, out)
}

/// Eight calls a step: vpmovqw of each column's eight words, then 16- and 32-bit unpacks.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn interleave4_avx512(c: [&[u64]; 4], out: &mut [u32]) {
    use std::arch::x86_64::*;
    let full = c[0].len() / 8;
    for i in 0..full {
        // SAFETY: 8·i + 8 <= every column's length and 16·i + 16 <= out.len() (asserted by the
        // caller); unaligned loads and stores.
        unsafe {
            let ld = |k: usize| {
                _mm512_cvtepi64_epi16(_mm512_loadu_si512(
                    c[k].as_ptr().add(8 * i) as *const __m512i
                ))
            };
            let (a, b, cc, d) = (ld(0), ld(1), ld(2), ld(3));
            let (ab_lo, ab_hi) = (_mm_unpacklo_epi16(a, b), _mm_unpackhi_epi16(a, b));
            let (cd_lo, cd_hi) = (_mm_unpacklo_epi16(cc, d), _mm_unpackhi_epi16(cc, d));
            let p = out.as_mut_ptr().add(16 * i) as *mut __m128i;
            _mm_storeu_si128(p, _mm_unpacklo_epi32(ab_lo, cd_lo));
            _mm_storeu_si128(p.add(1), _mm_unpackhi_epi32(ab_lo, cd_lo));
            _mm_storeu_si128(p.add(2), _mm_unpacklo_epi32(ab_hi, cd_hi));
            _mm_storeu_si128(p.add(3), _mm_unpackhi_epi32(ab_hi, cd_hi));
        }
    }
    let r = 8 * full;
    interleave4_body(
        [&c[0][r..], &c[1][r..], &c[2][r..], &c[3][r..]],
        &mut out[2 * r..],
    );
}

/// A destination of [`load_words_at`] and [`copy_runs`]: plain words, or atomic words held exclusively.
pub(crate) trait WordSink {
    /// The first word's address and the number of words.
    fn sink(&mut self) -> (*mut u32, usize);
}

impl WordSink for [u32] {
    fn sink(&mut self) -> (*mut u32, usize) {
        (self.as_mut_ptr(), self.len())
    }
}

impl WordSink for [std::sync::atomic::AtomicU32] {
    fn sink(&mut self) -> (*mut u32, usize) {
        // `AtomicU32::as_ptr` of the first word: the words are contiguous u32s (same size and
        // alignment), and the exclusive borrow keeps every other access out.
        (
            self.first().map_or(std::ptr::null_mut(), |w| w.as_ptr()),
            self.len(),
        )
    }
}

/// Copies `src` into `dst` (the shorter length) as if by one relaxed atomic load per word,
/// at `level`: 16 or 8 words a vector load with AVX-512 or AVX2 (the compiler does not
/// vectorize atomic loads, and a staged row is copied a word a cycle without this). The
/// staging copies reach it through [`copy_runs`]; the tests run every level the CPU has.
fn load_words_at<D: WordSink + ?Sized>(
    level: Level,
    src: &[std::sync::atomic::AtomicU32],
    dst: &mut D,
) {
    let (d, n) = dst.sink();
    let n = n.min(src.len());
    let done = match level {
        // SAFETY: the CPU has the level's features; `d` is valid for `n` word writes that
        // nothing else sees (an exclusive borrow) and `src` holds at least `n` words.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { load_words_avx512(src.as_ptr(), d, n) },
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { load_words_avx2(src.as_ptr(), d, n) },
        Level::Base => 0,
    };
    for (k, w) in src.iter().enumerate().take(n).skip(done) {
        // SAFETY: `k < n`, inside the destination (as above).
        unsafe { d.add(k).write(w.load(std::sync::atomic::Ordering::Relaxed)) };
    }
}

/// Marks in `starts` (bit `l % 64` of word `l / 64`, the words cleared first) every lane `l`
/// that begins a run: lane 0, and each lane whose pointer is not the one before's plus `step`
/// (wrapping). Eight lanes a compare with AVX-512. `starts` holds at least `ptrs.len()` bits.
pub(crate) fn run_starts(ptrs: &[u64], step: u64, starts: &mut [u64]) {
    run_starts_at(level(), ptrs, step, starts)
}

/// [`run_starts`] at a chosen level (the tests run every level the CPU has).
fn run_starts_at(level: Level, ptrs: &[u64], step: u64, starts: &mut [u64]) {
    let words = ptrs.len().div_ceil(64);
    starts[..words].fill(0);
    let done = match level {
        // SAFETY: the CPU has AVX-512F; `starts` holds `words` words (sliced above).
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { run_starts_avx512(ptrs, step, &mut starts[..words]) },
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => 0,
        Level::Base => 0,
    };
    for l in done.max(1)..ptrs.len() {
        if ptrs[l] != ptrs[l - 1].wrapping_add(step) {
            starts[l / 64] |= 1 << (l % 64);
        }
    }
    if !ptrs.is_empty() {
        starts[0] |= 1;
    }
}

/// Whole groups of eight lanes of [`run_starts`]; returns how many lanes it did.
///
/// # Safety
/// AVX-512F; `starts` holds at least `ptrs.len()` bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn run_starts_avx512(ptrs: &[u64], step: u64, starts: &mut [u64]) -> usize {
    use std::arch::x86_64::*;
    let vstep = _mm512_set1_epi64(step as i64);
    let mut prev = _mm512_setzero_si512();
    let mut l = 0;
    // Sixty-four lanes' bits gathered in a register, then stored once (an OR into memory
    // every eight lanes waits for the one before it).
    let mut bits = 0u64;
    while l + 8 <= ptrs.len() {
        // SAFETY: lanes l..l + 8 are in `ptrs`.
        let cur = unsafe { _mm512_loadu_si512(ptrs.as_ptr().add(l).cast()) };
        // The lane before each: the last of the previous group, then this group's first seven
        // (lane 0's is a placeholder; the caller marks lane 0).
        let before = _mm512_alignr_epi64::<7>(cur, prev);
        let m = _mm512_cmpneq_epi64_mask(cur, _mm512_add_epi64(before, vstep));
        bits |= (m as u64) << (l % 64);
        prev = cur;
        l += 8;
        if l % 64 == 0 {
            starts[l / 64 - 1] = bits;
            bits = 0;
        }
    }
    if l % 64 != 0 {
        starts[l / 64] = bits;
    }
    l
}

/// Copies runs of words, `(dst word, words, src word)` each, from `src` into `dst` (a staging
/// copy's runs of lanes), in one call: whole vectors of sixteen words and a masked tail with
/// AVX-512, of eight, four and one with AVX2, else [`load_words_at`] a run. False, nothing
/// copied, when a run lies outside either.
pub(crate) fn copy_runs<D: WordSink + ?Sized>(
    src: &[std::sync::atomic::AtomicU32],
    runs: &[(usize, usize, usize)],
    dst: &mut D,
) -> bool {
    copy_runs_at(level(), src, runs, dst)
}

/// [`copy_runs`] at a chosen level (the tests run every level the CPU has).
fn copy_runs_at<D: WordSink + ?Sized>(
    level: Level,
    src: &[std::sync::atomic::AtomicU32],
    runs: &[(usize, usize, usize)],
    dst: &mut D,
) -> bool {
    let (d, dn) = dst.sink();
    let inside = |o: usize, n: usize, len: usize| o.checked_add(n).is_some_and(|e| e <= len);
    if !runs
        .iter()
        .all(|&(dw, n, sw)| inside(dw, n, dn) && inside(sw, n, src.len()))
    {
        return false;
    }
    match level {
        // SAFETY: the CPU has AVX-512F; every run is inside both (checked above), and `d` is
        // valid for `dn` word writes nothing else sees (an exclusive borrow).
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { copy_runs_avx512(src.as_ptr(), runs, d) },
        // SAFETY: as above, with AVX2.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { copy_runs_avx2(src.as_ptr(), runs, d) },
        Level::Base => {
            for &(dw, n, sw) in runs {
                // SAFETY: as above: `dw + n <= dn`.
                let out = unsafe { std::slice::from_raw_parts_mut(d.add(dw), n) };
                load_words_at(level, &src[sw..sw + n], out);
            }
        }
    }
    true
}

/// [`copy_runs`] with AVX2: every run in this one function (a call a run cost more than a
/// short run's copy), eight words a vector, then four, then one.
///
/// # Safety
/// AVX2; every run inside `src` and `dst`, `dst` seen by nothing else.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn copy_runs_avx2(
    src: *const std::sync::atomic::AtomicU32,
    runs: &[(usize, usize, usize)],
    dst: *mut u32,
) {
    use std::arch::x86_64::*;
    for &(dw, n, sw) in runs {
        // SAFETY: the run's n words are inside both (the caller's contract); the vector
        // loads are per-word atomic (`atomic_words8`).
        unsafe {
            let (s, d) = (src.add(sw), dst.add(dw));
            let mut k = load_words_avx2(s, d, n);
            if k + 4 <= n {
                _mm_storeu_si128(d.add(k).cast(), atomic_words4(s.add(k)));
                k += 4;
            }
            for j in k..n {
                d.add(j)
                    .write((*s.add(j)).load(std::sync::atomic::Ordering::Relaxed));
            }
        }
    }
}

/// [`copy_runs`] with AVX-512F.
///
/// # Safety
/// AVX-512F; every run inside `src` and `dst`, `dst` seen by nothing else.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn copy_runs_avx512(
    src: *const std::sync::atomic::AtomicU32,
    runs: &[(usize, usize, usize)],
    dst: *mut u32,
) {
    use std::arch::x86_64::*;
    for &(dw, n, sw) in runs {
        // SAFETY: the run's n words are inside both (the caller's contract).
        unsafe {
            let done = load_words_avx512(src.add(sw), dst.add(dw), n);
            if done < n {
                let k: __mmask16 = (1u32 << (n - done)).wrapping_sub(1) as u16;
                let v: __m512i;
                // A masked load reads only the words its mask selects (no fault, no access
                // beyond the run), each in one access, like `load_words_avx512`'s.
                std::arch::asm!(
                    "vmovdqu32 {v}{{{k}}}{{z}}, [{p}]",
                    v = out(zmm_reg) v,
                    k = in(kreg) k,
                    p = in(reg) src.add(sw + done),
                    options(readonly, nostack, preserves_flags),
                );
                _mm512_mask_storeu_epi32(dst.add(dw + done).cast(), k, v);
            }
        }
    }
}

/// `src`'s f32 bits into the words of `dst`, as relaxed atomic stores (a cooperative-matrix
/// row stored to a buffer or Workgroup memory), sixteen (AVX-512) or eight (AVX2) a vector
/// store instead of one a store. Copies `min(src.len(), dst.len())` words.
pub(crate) fn store_f32_words(dst: &[std::sync::atomic::AtomicU32], src: &[f32]) {
    store_f32_words_at(level(), dst, src)
}

/// [`store_f32_words`] at a chosen level (the tests run every level the CPU has).
fn store_f32_words_at(level: Level, dst: &[std::sync::atomic::AtomicU32], src: &[f32]) {
    let n = src.len().min(dst.len());
    let done = match level {
        // SAFETY: the CPU has the level's features; both hold at least `n` words.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { store_words_avx512(dst.as_ptr(), src.as_ptr(), n) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { store_words_avx2(dst.as_ptr(), src.as_ptr(), n) },
        Level::Base => 0,
    };
    for (w, v) in dst[done..n].iter().zip(&src[done..n]) {
        w.store(v.to_bits(), std::sync::atomic::Ordering::Relaxed);
    }
}

/// Whole vectors of 16 words of [`store_f32_words`]; returns how many it stored.
///
/// # Safety
/// AVX-512F; `dst` and `src` valid for `n` words.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn store_words_avx512(
    dst: *const std::sync::atomic::AtomicU32,
    src: *const f32,
    n: usize,
) -> usize {
    use std::arch::x86_64::*;
    let mut k = 0;
    while k + 16 <= n {
        // SAFETY: `k + 16 <= n` words lie inside both. The store is in assembly for the reason
        // `load_words_avx512` gives for its load: an x86 vector store writes each aligned
        // 4-byte element in one access, so it is sixteen relaxed atomic stores.
        unsafe {
            let v = _mm512_loadu_ps(src.add(k));
            std::arch::asm!(
                "vmovups [{p}], {v}",
                v = in(zmm_reg) v,
                p = in(reg) dst.add(k),
                options(nostack, preserves_flags),
            );
        }
        k += 16;
    }
    k
}

/// Whole vectors of 8 words of [`store_f32_words`]; returns how many it stored.
///
/// # Safety
/// AVX2; `dst` and `src` valid for `n` words.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn store_words_avx2(
    dst: *const std::sync::atomic::AtomicU32,
    src: *const f32,
    n: usize,
) -> usize {
    use std::arch::x86_64::*;
    let mut k = 0;
    while k + 8 <= n {
        // SAFETY: as in `store_words_avx512`, eight words.
        unsafe {
            let v = _mm256_loadu_ps(src.add(k));
            std::arch::asm!(
                "vmovups [{p}], {v}",
                v = in(ymm_reg) v,
                p = in(reg) dst.add(k),
                options(nostack, preserves_flags),
            );
        }
        k += 8;
    }
    k
}
/// Whole vectors of 16 words of [`load_words_at`]; returns how many words it copied.
///
/// # Safety
/// AVX-512F; `src` readable and `dst` writable for `n` words, `dst` seen by nothing else.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn load_words_avx512(
    src: *const std::sync::atomic::AtomicU32,
    dst: *mut u32,
    n: usize,
) -> usize {
    use std::arch::x86_64::*;
    let mut k = 0;
    while k + 16 <= n {
        let v: __m512i;
        // SAFETY: `k + 16 <= n` words lie inside both. The load is in assembly because a
        // vector load in Rust would be a non-atomic read of words other threads may store to
        // atomically (a data race); an x86 vector load reads each aligned 4-byte element in
        // one access, so it is sixteen relaxed atomic loads, in some order. The store goes
        // to memory only this thread sees.
        unsafe {
            std::arch::asm!(
                "vmovdqu32 {v}, [{p}]",
                v = out(zmm_reg) v,
                p = in(reg) src.add(k),
                options(readonly, nostack, preserves_flags),
            );
            _mm512_storeu_si512(dst.add(k).cast(), v);
        }
        k += 16;
    }
    k
}

/// Eight words from `p` as one vector, loaded in assembly for the reason given in
/// [`load_words_avx512`] (eight relaxed atomic loads, where a vector load in Rust would be a
/// data race). Inlined into the AVX2 and AVX-512 kernels that read shared words.
///
/// # Safety
/// AVX; eight words readable from `p`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx")]
unsafe fn atomic_words8(p: *const std::sync::atomic::AtomicU32) -> std::arch::x86_64::__m256i {
    let h;
    // SAFETY: the caller's contract; the load only reads.
    unsafe {
        std::arch::asm!(
            "vmovdqu {h}, [{p}]",
            h = out(ymm_reg) h,
            p = in(reg) p,
            options(readonly, nostack, preserves_flags),
        );
    }
    h
}

/// [`atomic_words8`] for four words (an xmm register).
///
/// # Safety
/// As for [`atomic_words8`], four words; the CPU has AVX.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn atomic_words4(p: *const std::sync::atomic::AtomicU32) -> std::arch::x86_64::__m128i {
    let h;
    // SAFETY: the caller's contract; the load only reads.
    unsafe {
        std::arch::asm!(
            "vmovdqu {h}, [{p}]",
            h = out(xmm_reg) h,
            p = in(reg) p,
            options(readonly, nostack, preserves_flags),
        );
    }
    h
}

/// Whole vectors of 8 words of [`load_words_at`]; returns how many words it copied.
///
/// # Safety
/// AVX2; `src` readable and `dst` writable for `n` words, `dst` seen by nothing else.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_words_avx2(
    src: *const std::sync::atomic::AtomicU32,
    dst: *mut u32,
    n: usize,
) -> usize {
    use std::arch::x86_64::*;
    let mut k = 0;
    while k + 8 <= n {
        // SAFETY: `k + 8 <= n` words lie inside both; the store goes to memory only this
        // thread sees.
        unsafe {
            _mm256_storeu_si256(dst.add(k).cast(), atomic_words8(src.add(k)));
        }
        k += 8;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The levels this CPU can run with FMA, the baseline first (the MulAdd kernels).
    fn fma_levels() -> Vec<Level> {
        let fma = {
            #[cfg(target_arch = "x86_64")]
            {
                std::is_x86_feature_detected!("fma")
            }
            #[cfg(not(target_arch = "x86_64"))]
            false
        };
        levels()
            .into_iter()
            .filter(|&l| l == Level::Base || fma)
            .collect()
    }

    /// The levels this CPU can run (the conversion kernels need F16C with AVX2).
    fn levels() -> Vec<Level> {
        let mut levels = vec![Level::Base];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("f16c") {
                levels.push(Level::Avx2);
            }
            if std::is_x86_feature_detected!("avx512f") {
                levels.push(Level::Avx512);
            }
        }
        levels
    }

    /// Rounding through f16 gives `half`'s value for every f16 value, the ties between
    /// neighbours and their neighbours, and values beyond the range, at odd and even lengths;
    /// a NaN anywhere (the odd tail included) is refused.
    #[test]
    fn round_through_f16_agrees_with_half_and_refuses_nans() {
        // Every f16 value, the midpoints between neighbours (ties), values just off them, and
        // values beyond the f16 range, in odd and even lengths.
        let mut src: Vec<f32> = Vec::new();
        for bits in 0..=u16::MAX {
            let h = half::f16::from_bits(bits);
            if h.is_nan() {
                continue;
            }
            let x = h.to_f32();
            src.push(x);
            let next = half::f16::from_bits(bits.wrapping_add(1)).to_f32();
            if next.is_finite() && x.is_finite() {
                let mid = x + (next - x) / 2.0;
                src.extend([
                    mid,
                    f32::from_bits(mid.to_bits() + 1),
                    f32::from_bits(mid.to_bits() - 1),
                ]);
            }
        }
        src.extend([1e6, -1e6, 65520.0, 65519.996, 1e-9, -3e-8]);
        for level in levels() {
            for len in [src.len(), src.len() - 1, 63, 17, 1, 0] {
                let s = &src[..len];
                let mut d = vec![0f32; len];
                assert!(round_through_f16_with(level, s, &mut d), "{level:?}");
                for (x, y) in s.iter().zip(&d) {
                    assert_eq!(
                        y.to_bits(),
                        half::f16::from_f32(*x).to_f32().to_bits(),
                        "{level:?} {x}"
                    );
                }
            }
            // A NaN (quiet or signaling) at every position of the vectors and the tail.
            for len in [3, 16, 35] {
                for at in 0..len {
                    for nan in [f32::NAN, f32::from_bits(0x7f80_0001)] {
                        let mut s = vec![1.5f32; len];
                        s[at] = nan;
                        let mut d = vec![0f32; len];
                        assert!(!round_through_f16_with(level, &s, &mut d), "{level:?} {at}");
                    }
                }
            }
        }
    }

    /// f16 +, −, ×, ÷ computed in f32 and rounded to f16 (what whole-tile f16 element ops do)
    /// give `bin1`'s bits, which round the exact f64 result once: the double rounding is
    /// innocuous for f32 over f16. Every pair of a sample that covers subnormals, ties,
    /// overflow and both signs.
    #[test]
    fn f16_arithmetic_through_f32_matches_bin1() {
        use crate::eval::bin1;
        use crate::program::{BinOp, Num};
        let mut sample: Vec<u16> = (0..=u16::MAX).step_by(97).collect();
        sample.extend([
            0, 1, 2, 0x3ff, 0x400, 0x3c00, 0x3c01, 0x7bff, 0x7c00, 0x8001, 0xfbff,
        ]);
        let mut wide = Vec::with_capacity(sample.len());
        let mut back = vec![0f32; sample.len()];
        for op in [BinOp::FAdd, BinOp::FSub, BinOp::FMul, BinOp::FDiv] {
            for &x in &sample {
                let xf = half::f16::from_bits(x).to_f32();
                wide.clear();
                wide.extend(sample.iter().map(|&y| {
                    let yf = half::f16::from_bits(y).to_f32();
                    match op {
                        BinOp::FAdd => xf + yf,
                        BinOp::FSub => xf - yf,
                        BinOp::FMul => xf * yf,
                        _ => xf / yf,
                    }
                }));
                if !round_through_f16(&wide, &mut back) {
                    // A NaN result: whole-tile ops leave such tiles to bin1.
                    continue;
                }
                for (&y, r) in sample.iter().zip(&back) {
                    let want = bin1(op, Num::F16, x as u64, y as u64) as u16;
                    let got = half::f16::from_f32(*r).to_bits();
                    assert_eq!(got, want, "{op:?} {x:#06x} {y:#06x}");
                }
            }
        }
    }

    /// The one-pass address summary equals a lane-by-lane scan at every level, over runs with
    /// and without a step, another object, a misaligned lane and a lane out of the run.
    #[test]
    fn address_summary_agrees_with_a_lane_by_lane_scan_at_every_level() {
        let shift = 40;
        let mut next = coopmat_testkit::xorshift64(0x9e37_79b9_7f4a_7c15);
        for case in 0..200 {
            let n = 1 + (next() % 70) as usize;
            let step = [0u64, 4, 8, 16][case % 4];
            let obj = 3 + next() % 3;
            let a0 = (obj << shift) | ((next() % 4096) & !3);
            let mut addrs: Vec<u64> = (0..n as u64).map(|l| a0 + step * l).collect();
            // Perturb some cases: another object, a misaligned lane, a lane out of the run.
            let l = (next() % n as u64) as usize;
            match case % 5 {
                1 => addrs[l] = ((obj + 1) << shift) | 8,
                2 => addrs[l] |= 2,
                3 => addrs[l] = addrs[l].wrapping_add(4),
                _ => {}
            }
            let want = AddressSummary {
                obj_lo: addrs.iter().map(|a| a >> shift).min().unwrap(),
                obj_hi: addrs.iter().map(|a| a >> shift).max().unwrap(),
                off_max: addrs.iter().map(|a| a & ((1 << shift) - 1)).max().unwrap(),
                low_bits: addrs.iter().fold(0, |x, a| x | (a & 3)),
                sequential: addrs
                    .iter()
                    .enumerate()
                    .all(|(l, &a)| a == addrs[0].wrapping_add(step * l as u64)),
            };
            for &level in &levels() {
                assert_eq!(
                    address_summary_with(level, &addrs, shift, step),
                    want,
                    "case {case}, level {level:?}"
                );
            }
        }
    }

    /// Runs placed as columns equal the element-by-element placement at every level, at 16
    /// runs (the transposes, with tails of every length below a block) and at other counts, for
    /// short and long runs.
    #[test]
    fn runs_to_columns_places_every_element() {
        for level in levels() {
            for (len, group, stride) in [
                (64, 16, 256),
                (40, 16, 33),
                (16, 16, 16),
                (23, 16, 17),
                (7, 16, 16),
                (1, 16, 20),
                (64, 5, 256),
                (3, 1, 4),
            ] {
                let runs: Vec<f32> = (0..len * group).map(|i| i as f32 * 0.5 - 3.0).collect();
                let mut dst = vec![-1.0f32; (len - 1) * stride + group + 3];
                runs_to_columns_at(level, &runs, len, group, &mut dst, stride);
                for (i, &x) in dst.iter().enumerate() {
                    let (k, j) = (i / stride, i % stride);
                    let want = if k < len && j < group {
                        runs[j * len + k]
                    } else {
                        -1.0
                    };
                    assert_eq!(
                        x.to_bits(),
                        want.to_bits(),
                        "{level:?}: len {len} group {group} at {i}"
                    );
                }
            }
        }
    }

    /// The fused f16 transpose places every element as widening then [`runs_to_columns`] does
    /// (finite halves of every exponent, runs far apart and adjacent, a destination stride
    /// wider than the block), writes nothing outside the block, and declines a NaN, a run
    /// past the source's end, a short destination and a length that is no multiple of the
    /// level's step (16 halves with AVX-512, 8 with AVX2), at every level.
    #[test]
    fn f16_runs_to_columns16_equals_widening_then_transposing() {
        use std::sync::atomic::AtomicU32;
        let mut next = coopmat_testkit::xorshift64(0x2545_f491_4f6c_dd1d);
        let words: Vec<u32> = (0..8192).map(|_| (next() as u32) & 0xfbff_fbff).collect();
        let src: Vec<AtomicU32> = words.iter().map(|&w| AtomicU32::new(w)).collect();
        let widen = |w: usize, k: usize| {
            half::f16::from_bits((words[w + k / 2] >> (16 * (k % 2))) as u16).to_f32()
        };
        let cases = [
            (0, 64, 64, 32),
            (3, 8, 8, 16),
            (5, 200, 16, 40),
            (1, 9, 12, 16),
        ];
        for (level, (w0, stride, nw, dst_stride)) in
            levels().into_iter().flat_map(|l| cases.map(|c| (l, c)))
        {
            let len = 2 * nw;
            let mut dst = vec![-1.0f32; (len - 1) * dst_stride + 16 + 5];
            // AVX-512 steps eight words a run, AVX2 four; the baseline has no fused form.
            let step = match level {
                Level::Base => {
                    let shape = (w0, stride, nw);
                    assert!(!f16_runs_to_columns16_at(
                        level, &src, shape, &mut dst, dst_stride
                    ));
                    continue;
                }
                #[cfg(target_arch = "x86_64")]
                Level::Avx2 => 4,
                #[cfg(target_arch = "x86_64")]
                Level::Avx512 => 8,
            };
            let shape = (w0, stride, nw);
            let done = f16_runs_to_columns16_at(level, &src, shape, &mut dst, dst_stride);
            assert_eq!(done, nw % step == 0, "{level:?} nw {nw}");
            if !done {
                continue;
            }
            for (i, &x) in dst.iter().enumerate() {
                let (k, j) = (i / dst_stride, i % dst_stride);
                let want = if k < len && j < 16 {
                    widen(w0 + j * stride, k)
                } else {
                    -1.0
                };
                assert_eq!(
                    x.to_bits(),
                    want.to_bits(),
                    "{level:?}: w0 {w0} stride {stride} at {i}"
                );
            }
        }
        for level in levels() {
            let f = |src: &[AtomicU32], shape, dst: &mut [f32]| {
                f16_runs_to_columns16_at(level, src, shape, dst, 32)
            };
            let mut dst = vec![0f32; 64 * 64];
            // A run past the end, a short destination, a length of 2 halves.
            assert!(!f(&src, (8192 - 64 * 15, 64, 64), &mut dst));
            assert!(!f(&src, (0, 64, 64), &mut dst[..127 * 32]));
            assert!(!f(&src, (0, 64, 1), &mut dst));
            let nan: Vec<AtomicU32> = words
                .iter()
                .enumerate()
                .map(|(i, &w)| {
                    AtomicU32::new(if i == 64 * 7 + 9 {
                        0x7c01_0000 | w & 0xffff
                    } else {
                        w
                    })
                })
                .collect();
            assert!(!f(&nan, (0, 64, 64), &mut dst), "{level:?}: a NaN");
        }
    }

    /// Every level packs f32 values into f16 pairs as `half::f16::from_f32` rounds them (every
    /// f16 value widened, values between them, NaNs reported), over lengths hitting each tail.
    #[test]
    fn f32_to_f16_pairs_round_like_half_at_every_level() {
        let mut vals: Vec<f32> = (0..=u16::MAX)
            .map(|h| half::f16::from_bits(h).to_f32())
            .filter(|x| !x.is_nan())
            .collect();
        vals.extend((0..4096u32).map(|i| f32::from_bits(0x3f80_0000 + i * 977)));
        vals.extend([1e-8, -65520.0, 65519.0, 7e4, f32::MIN_POSITIVE]);
        for level in levels() {
            for len in [0usize, 2, 6, 16, 30, 34, vals.len() & !1] {
                let src = &vals[..len];
                let mut got = vec![0u32; len / 2];
                assert!(
                    !f32_to_f16_pairs_with(level, src, &mut got),
                    "{level:?}: no NaN"
                );
                for (i, w) in got.iter().enumerate() {
                    for k in 0..2 {
                        let want = half::f16::from_f32(src[2 * i + k]).to_bits() as u32;
                        assert_eq!(
                            (w >> (16 * k)) & 0xffff,
                            want,
                            "{level:?} {}",
                            src[2 * i + k]
                        );
                    }
                }
            }
            let mut with_nan = vals[..40].to_vec();
            with_nan[33] = f32::NAN;
            let mut got = vec![0u32; 20];
            assert!(
                f32_to_f16_pairs_with(level, &with_nan, &mut got),
                "{level:?}: NaN seen"
            );
        }
    }

    /// Every level rounds f32 column values to f16 as `half::f16::from_f32` does (every f16
    /// value, the midpoints between neighbours, their neighbours, overflow, subnormals) and
    /// reports a NaN at any position, the tail after the last full vector included.
    #[test]
    fn f32_cols_to_f16_rounds_like_half_at_every_level() {
        let mut vals: Vec<u32> = Vec::new();
        for h in 0..=u16::MAX {
            let f = h2f(h);
            if f.is_nan() {
                continue;
            }
            let b = f.to_bits();
            vals.extend([
                b,
                b.wrapping_add(1),
                b.wrapping_sub(1),
                b.wrapping_add(0x1000),
            ]);
        }
        vals.extend([
            0x477f_f000,
            0x477f_efff,
            0x7f7f_ffff,
            0x3380_0000,
            0x3380_0001,
        ]);
        let src: Vec<u64> = vals
            .iter()
            .filter(|&&b| !f32::from_bits(b).is_nan())
            .map(|&b| b as u64 | 0xdead_0000_0000_0000)
            .collect();
        for level in levels() {
            let mut dst = vec![u64::MAX; src.len() + 1];
            assert!(!f32_cols_to_f16_with(level, &src, &mut dst));
            for (i, &x) in src.iter().enumerate() {
                let want = half::f16::from_f32(f32::from_bits(x as u32)).to_bits() as u64;
                assert_eq!(dst[i], want, "{level:?} {x:#x}");
            }
            assert_eq!(dst[src.len()], u64::MAX, "{level:?} wrote past the end");
            for len in [1, 5, 16, 17, 40] {
                for at in [0, len / 2, len - 1] {
                    let mut s = src[..len].to_vec();
                    s[at] = 0x7fc0_0001 | (1 << 40);
                    let mut d = vec![0; len];
                    assert!(
                        f32_cols_to_f16_with(level, &s, &mut d),
                        "{level:?} {len} {at}"
                    );
                }
            }
        }
    }

    /// Every level widens every f16 bit pattern (signaling NaNs included, upper bits of the
    /// word ignored) as `h2f` does, the tail after the last full vector included, from columns
    /// and from packed pairs.
    #[test]
    fn f16_cols_to_f32_is_exact_at_every_level() {
        let src: Vec<u64> = (0..=u16::MAX as u64)
            .chain(0..7)
            .map(|h| h | 0xabcd_0000_0000_0000)
            .collect();
        for level in levels() {
            let mut dst = vec![-1.0f32; src.len() + 1];
            f16_cols_to_f32_with(level, &src, &mut dst);
            for (i, &x) in src.iter().enumerate() {
                assert_eq!(
                    dst[i].to_bits(),
                    h2f(x as u16).to_bits(),
                    "{level:?} {x:#x}"
                );
            }
            assert_eq!(dst[src.len()], -1.0, "{level:?} wrote past the end");
            // The packed-pair form (tensor-load runs) too.
            let words: Vec<u32> = src
                .chunks(2)
                .map(|p| p[0] as u16 as u32 | (p.get(1).map_or(0, |&x| x as u16 as u32) << 16))
                .collect();
            let mut dst2 = vec![-1.0f32; 2 * words.len()];
            f16_words_to_f32_with(level, &words, &mut dst2);
            for (i, &x) in src.iter().enumerate() {
                assert_eq!(
                    dst2[i].to_bits(),
                    h2f(x as u16).to_bits(),
                    "words {level:?} {x:#x}"
                );
            }
        }
    }

    /// One signaling NaN among ordinary halves, at every position of a slice several vectors
    /// long: the vector paths test for NaNs once a slice or tile, so each position must still
    /// send it through the exact path (vcvtph2ps would quiet it).
    #[test]
    fn a_lone_nan_keeps_its_bits_at_every_position_and_level() {
        use std::sync::atomic::AtomicU32;
        let clean: Vec<u32> = (0..40u32)
            .map(|i| (0x3c00 + i) | (0xb800 + i) << 16)
            .collect();
        for level in levels() {
            for nan in [0x7c01u32, 0xfd55] {
                for half in 0..2 * clean.len() {
                    let mut words = clean.clone();
                    words[half / 2] =
                        words[half / 2] & !(0xffff << (16 * (half % 2))) | nan << (16 * (half % 2));
                    let halves = |w: &[u32]| -> Vec<u32> {
                        w.iter()
                            .flat_map(|&x| {
                                [h2f(x as u16).to_bits(), h2f((x >> 16) as u16).to_bits()]
                            })
                            .collect()
                    };
                    let want = halves(&words);
                    let mut out = vec![0f32; 2 * words.len()];
                    f16_words_to_f32_with(level, &words, &mut out);
                    let got: Vec<u32> = out.iter().map(|x| x.to_bits()).collect();
                    assert_eq!(got, want, "{level:?} words, NaN {nan:#x} at half {half}");
                    // The same words as a tile of 5 rows of 8 words.
                    let atoms: Vec<AtomicU32> = words.iter().map(|&w| AtomicU32::new(w)).collect();
                    let mut out = vec![0f32; 2 * words.len()];
                    assert!(f16_rows_to_f32_at(level, &atoms, (0, 8, 5, 8), &mut out));
                    let got: Vec<u32> = out.iter().map(|x| x.to_bits()).collect();
                    assert_eq!(got, want, "{level:?} rows, NaN {nan:#x} at half {half}");
                    // And as a column of halves, one a word.
                    let col: Vec<u64> = words
                        .iter()
                        .flat_map(|&w| [w as u16 as u64, (w >> 16) as u64 | 0xabcd << 48])
                        .collect();
                    let mut out = vec![0f32; col.len()];
                    f16_cols_to_f32_with(level, &col, &mut out);
                    let got: Vec<u32> = out.iter().map(|x| x.to_bits()).collect();
                    assert_eq!(got, want, "{level:?} columns, NaN {nan:#x} at half {half}");
                }
            }
        }
    }

    #[test]
    fn load_words_copies_every_word_at_every_level() {
        use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
        let src: Vec<AtomicU32> = (0..100u32)
            .map(|i| AtomicU32::new(i.wrapping_mul(0x9e37_79b9)))
            .collect();
        for level in levels() {
            // Every length and start up to past two vectors, into plain and atomic words.
            for start in 0..3 {
                for len in 0..40 {
                    let s = &src[start..start + len];
                    let want: Vec<u32> = s.iter().map(|w| w.load(Relaxed)).collect();
                    let mut plain = vec![7u32; len + 1];
                    load_words_at(level, s, &mut plain[..len]);
                    assert_eq!(&plain[..len], &want[..], "{level:?} {start} {len}");
                    assert_eq!(plain[len], 7, "{level:?}: wrote past the end");
                    let mut atomic: Vec<AtomicU32> = (0..len).map(|_| AtomicU32::new(7)).collect();
                    load_words_at(level, s, &mut atomic[..]);
                    let got: Vec<u32> = atomic.iter().map(|w| w.load(Relaxed)).collect();
                    assert_eq!(got, want, "{level:?} {start} {len} (atomic destination)");
                }
            }
            // A shorter source: only its words.
            let mut plain = [7u32; 20];
            load_words_at(level, &src[..17], &mut plain[..]);
            assert_eq!(plain[16], src[16].load(Relaxed));
            assert_eq!(plain[17..], [7, 7, 7]);
        }
    }

    /// Run starts found eight lanes a compare equal the lane-by-lane definition: runs of
    /// every length from 1 up (across groups of eight and of 64 lanes), a pointer that wraps,
    /// columns of every length up to past two words of bits.
    #[test]
    fn run_starts_equal_the_lane_by_lane_definition() {
        let step = 16u64;
        let mut ptrs = Vec::new();
        let (mut p, mut len, mut left) = (u64::MAX - 40, 1usize, 1usize);
        for l in 0..300usize {
            ptrs.push(p);
            left -= 1;
            if left == 0 {
                len = len % 23 + 1;
                left = len;
                p = p.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(l as u64);
            } else {
                p = p.wrapping_add(step);
            }
        }
        for level in levels() {
            for n in 0..ptrs.len() {
                let mut got = [u64::MAX; 6];
                run_starts_at(level, &ptrs[..n], step, &mut got);
                let mut want = [u64::MAX; 6];
                want[..n.div_ceil(64)].fill(0);
                for l in 0..n {
                    if l == 0 || ptrs[l] != ptrs[l - 1].wrapping_add(step) {
                        want[l / 64] |= 1 << (l % 64);
                    }
                }
                assert_eq!(got, want, "{level:?} {n} lanes");
            }
        }
    }

    /// The f32 `exp` kernel gives `un1`'s bits for every input inside its range, at every
    /// level and length, and reports the inputs outside it (large magnitudes, infinities,
    /// NaNs) wherever they are.
    /// [`repeated_tail`] finds where the run of rows equal to the last starts, bit for bit
    /// (a zero's sign or a NaN's payload ends it), at every level, for row widths across the
    /// vector widths and for a tile of one row or none.
    #[test]
    fn repeated_tail_at_every_level() {
        for level in levels() {
            for cols in [1usize, 3, 16, 17, 32, 40, 48] {
                let row = |r: usize| (0..cols).map(move |c| (r * 100 + c) as f32 * 0.5);
                for rows in [0usize, 1, 2, 5, 9, 33] {
                    for from in 0..rows.max(1) {
                        let tile: Vec<f32> = (0..rows).flat_map(|r| row(r.min(from))).collect();
                        let want = from.min(rows.saturating_sub(1));
                        let got = repeated_tail_with(level, &tile, cols);
                        assert_eq!(got, want, "{level:?} {rows}x{cols} from {from}");
                    }
                }
                // The run from row 2 of 6, broken in row 4 by one element's bits.
                for (x, y) in [(0.0f32, -0.0f32), (f32::NAN, f32::from_bits(0x7fc0_0001))] {
                    let mut tile: Vec<f32> = (0..6).flat_map(|r| row(r.min(2))).collect();
                    for r in 2..6 {
                        tile[r * cols + cols - 1] = x;
                    }
                    assert_eq!(repeated_tail_with(level, &tile, cols), 2, "{level:?} {x}");
                    tile[4 * cols + cols - 1] = y;
                    assert_eq!(repeated_tail_with(level, &tile, cols), 5, "{level:?} {y}");
                }
            }
        }
    }

    /// [`extreme_f32`] gives the largest or smallest value at every level and length (a
    /// remainder past the sixteen lanes included), zeros compared equal.
    #[test]
    fn extreme_f32_at_every_level() {
        for level in levels() {
            for len in [1usize, 5, 16, 17, 33, 1024] {
                let xs: Vec<f32> = (0..len)
                    .map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.25)
                    .collect();
                let (hi, lo) = xs
                    .iter()
                    .fold((f32::MIN, f32::MAX), |(h, l), &x| (h.max(x), l.min(x)));
                assert_eq!(
                    extreme_f32_with(level, &xs, true, xs[0]),
                    hi,
                    "{level:?} {len}"
                );
                assert_eq!(
                    extreme_f32_with(level, &xs, false, xs[0]),
                    lo,
                    "{level:?} {len}"
                );
                // The extreme in the remainder, and infinities.
                let mut ys = xs.clone();
                ys[len - 1] = f32::INFINITY;
                assert_eq!(extreme_f32_with(level, &ys, true, ys[0]), f32::INFINITY);
                ys[len - 1] = f32::NEG_INFINITY;
                assert_eq!(
                    extreme_f32_with(level, &ys, false, ys[0]),
                    f32::NEG_INFINITY
                );
            }
        }
    }

    #[test]
    fn exp_f32_matches_un1_at_every_level() {
        use crate::eval::un1;
        use crate::program::{Num, UnOp};
        let un = |x: f32| f32::from_bits(un1(UnOp::Exp, Num::F32, x.to_bits() as u64) as u32);
        let inside: Vec<f32> = (0..300)
            .map(|i| ((i as f32) - 150.0) * 0.61 + (i % 7) as f32 * 1e-3)
            .chain([0.0, -0.0, 1e-45, -1e-40, 88.7, -103.9, 699.0, -699.0])
            .collect();
        for level in levels() {
            for len in [0usize, 1, 7, 8, 15, 16, 17, 33, inside.len()] {
                let xs = &inside[..len];
                let mut out = vec![0f32; len];
                assert!(!exp_f32_with(level, xs, &mut out), "{level:?} {len}");
                for (i, (&x, &o)) in xs.iter().zip(&out).enumerate() {
                    assert_eq!(o.to_bits(), un(x).to_bits(), "{level:?} {i}: exp {x}");
                }
            }
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 700.5, -1e30] {
                for at in [0usize, 5, 16] {
                    let mut xs = inside[..17].to_vec();
                    xs[at] = bad;
                    let mut out = vec![0f32; xs.len()];
                    assert!(
                        exp_f32_with(level, &xs, &mut out),
                        "{level:?} {bad} at {at}"
                    );
                }
            }
        }
    }

    /// The element-wise f32 kernels give IEEE f32 results at every level and length (each
    /// vector tail), and report a NaN result wherever it is: 0·∞, ∞−∞, 0/0, a NaN operand.
    #[test]
    fn f32_tile_arithmetic_matches_scalar_f32_at_every_level() {
        let ops = [
            F32Arith::Add,
            F32Arith::Sub,
            F32Arith::Mul,
            F32Arith::Div,
            F32Arith::Max,
            F32Arith::Min,
        ];
        // GLSL.std.450's FMax and FMin without NaNs (equal operands give the first).
        let scalar = |op: F32Arith, x: f32, y: f32| match op {
            F32Arith::Add => x + y,
            F32Arith::Sub => x - y,
            F32Arith::Mul => x * y,
            F32Arith::Div => x / y,
            F32Arith::Max => {
                if x < y {
                    y
                } else {
                    x
                }
            }
            F32Arith::Min => {
                if y < x {
                    y
                } else {
                    x
                }
            }
        };
        for level in levels() {
            for len in [0usize, 1, 7, 8, 15, 16, 17, 33, 100] {
                let xs: Vec<f32> = (0..len).map(|i| (i as f32 - 7.5) * 1.37e-3).collect();
                let ys: Vec<f32> = (0..len).map(|i| 3.0 - (i as f32) * 0.71).collect();
                for op in ops {
                    let mut out = vec![0f32; len];
                    assert!(!f32_arith_with(level, op, &xs, &ys, &mut out));
                    for i in 0..len {
                        let want = scalar(op, xs[i], ys[i]);
                        assert_eq!(out[i].to_bits(), want.to_bits(), "{level:?} {op:?} {i}");
                    }
                }
                // ±0 in both orders: the first operand.
                let (zx, zy) = (vec![-0.0f32; len], vec![0.0f32; len]);
                for op in [F32Arith::Max, F32Arith::Min] {
                    let mut out = vec![1f32; len];
                    assert!(!f32_arith_with(level, op, &zx, &zy, &mut out));
                    assert!(
                        out.iter().all(|x| x.to_bits() == 0x8000_0000),
                        "{level:?} {op:?}"
                    );
                    assert!(!f32_arith_with(level, op, &zy, &zx, &mut out));
                    assert!(out.iter().all(|x| x.to_bits() == 0), "{level:?} {op:?}");
                }
                let mut out = vec![0f32; len];
                assert!(!f32_scale_with(level, &xs, -0.3, &mut out));
                assert!((0..len).all(|i| out[i].to_bits() == (xs[i] * -0.3).to_bits()));
                assert!(!any_nan_with(level, &xs));
                // A NaN result anywhere, from operands that are not NaN.
                for at in 0..len {
                    let (mut x2, mut y2) = (xs.clone(), ys.clone());
                    (x2[at], y2[at]) = (0.0, f32::INFINITY);
                    let mut out = vec![0f32; len];
                    assert!(f32_arith_with(level, F32Arith::Mul, &x2, &y2, &mut out));
                    (x2[at], y2[at]) = (f32::INFINITY, f32::INFINITY);
                    assert!(f32_arith_with(level, F32Arith::Sub, &x2, &y2, &mut out));
                    (x2[at], y2[at]) = (0.0, 0.0);
                    assert!(f32_arith_with(level, F32Arith::Div, &x2, &y2, &mut out));
                    x2[at] = f32::NAN;
                    assert!(any_nan_with(level, &x2));
                    assert!(f32_arith_with(level, F32Arith::Add, &x2, &ys, &mut out));
                    // Max and Min report a NaN operand on either side.
                    for op in [F32Arith::Max, F32Arith::Min] {
                        assert!(f32_arith_with(level, op, &x2, &ys, &mut out));
                        assert!(f32_arith_with(level, op, &ys, &x2, &mut out));
                    }
                    assert!(f32_scale_with(level, &x2, 2.0, &mut out));
                    x2[at] = f32::INFINITY;
                    assert!(f32_scale_with(level, &x2, 0.0, &mut out));
                }
            }
        }
    }

    /// A branch condition's lanes at every level and length (0..=64 words, so every vector
    /// tail): each non-zero word sets its bit and nothing else does, whatever its upper bits.
    #[test]
    fn nonzero_bits_marks_exactly_the_nonzero_words_at_every_level() {
        for level in levels() {
            for len in 0..=64usize {
                for seed in 0..8u64 {
                    let chunk: Vec<u64> = (0..len as u64)
                        .map(|i| match (i * 7 + seed * 13) % 5 {
                            0 | 1 => 0,
                            2 => 1,
                            3 => 1 << 63,
                            _ => 0x1234_5678_0000_0000 | i,
                        })
                        .collect();
                    let want = chunk
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| **v != 0)
                        .fold(0u64, |b, (i, _)| b | 1 << i);
                    assert_eq!(
                        nonzero_bits_with(level, &chunk),
                        want,
                        "{level:?}, {len} words, seed {seed}"
                    );
                }
            }
        }
    }

    /// A staging copy's columns match the shape they had where each source lane is the
    /// recorded offset from the first lane's address (wherever that is) and the destination is
    /// the one recorded, at every level and length: a change in any one lane of either is
    /// seen, also in a vector's tail.
    #[test]
    fn same_shape_sees_a_change_in_any_lane_at_every_level() {
        let mut next = coopmat_testkit::xorshift64(0x9e37_79b9_7f4a_7c15);
        let deltas: Vec<u64> = (0..70)
            .map(|l| if l == 0 { 0 } else { next() % 4096 })
            .collect();
        let dst: Vec<u64> = (0..70).map(|_| next()).collect();
        for level in levels() {
            for n in 1..deltas.len() {
                for a0 in [0u64, 0x1234_5678_9abc, u64::MAX - 100] {
                    let mut src: Vec<u64> =
                        deltas[..n].iter().map(|&d| a0.wrapping_add(d)).collect();
                    let mut dst_now = dst[..n].to_vec();
                    let same = |src: &[u64], d: &[u64]| {
                        same_shape_at(level, src, &deltas[..n], d, &dst[..n])
                    };
                    assert!(same(&src, &dst_now), "{level:?} {n} lanes from {a0:#x}");
                    for l in 0..n {
                        // The first lane alone moving is the same shape moved.
                        src[l] ^= 4 << (l % 40);
                        assert_eq!(
                            same(&src, &dst_now),
                            n == 1,
                            "{level:?} {n} lanes: source lane {l}"
                        );
                        src[l] ^= 4 << (l % 40);
                        dst_now[l] ^= 1 << (l % 64);
                        assert!(
                            !same(&src, &dst_now),
                            "{level:?} {n} lanes: destination lane {l}"
                        );
                        dst_now[l] ^= 1 << (l % 64);
                    }
                }
            }
        }
    }

    /// Runs copied in one call equal word-by-word copies: lengths that leave every tail of a
    /// vector, into plain and atomic words; a run outside either side copies nothing.
    #[test]
    fn copy_runs_copies_each_run_at_every_level() {
        use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
        let src: Vec<AtomicU32> = (0..400u32)
            .map(|i| AtomicU32::new(i.wrapping_mul(0x9e37_79b9)))
            .collect();
        let mut runs = Vec::new();
        let (mut dw, mut sw) = (0usize, 7usize);
        for len in 0..40 {
            runs.push((dw, len, sw));
            dw += len + len % 3;
            sw = (sw * 13 + len) % (400 - 40);
        }
        let mut want = vec![5u32; dw + 1];
        for &(d, n, s) in &runs {
            for k in 0..n {
                want[d + k] = src[s + k].load(Relaxed);
            }
        }
        for level in levels() {
            let mut plain = vec![5u32; dw + 1];
            assert!(copy_runs_at(level, &src, &runs, &mut plain[..dw]));
            assert_eq!(plain, want, "{level:?}");
            let mut atomic: Vec<AtomicU32> = (0..dw).map(|_| AtomicU32::new(5)).collect();
            assert!(copy_runs_at(level, &src, &runs, &mut atomic[..]));
            let got: Vec<u32> = atomic.iter().map(|w| w.load(Relaxed)).collect();
            assert_eq!(got, want[..dw], "{level:?} (atomic destination)");
            for bad in [
                (dw - 3, 4, 0),
                (0, 4, 397),
                (usize::MAX, 2, 0),
                (0, 1, usize::MAX),
            ] {
                let mut plain = vec![5u32; dw];
                let runs = [(0, 8, 0), bad];
                assert!(!copy_runs_at(level, &src, &runs, &mut plain[..]), "{bad:?}");
                assert!(plain.iter().all(|&w| w == 5), "{level:?}: {bad:?} copied");
            }
        }
    }

    /// f32 rows stored as words equal their bits, every length to past two vectors, into a
    /// destination longer or shorter than the row.
    #[test]
    fn store_f32_words_stores_every_word_at_every_level() {
        use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
        let src: Vec<f32> = (0..40u32)
            .map(|i| f32::from_bits(i.wrapping_mul(0x9e37_79b9)))
            .collect();
        for level in levels() {
            for len in 0..src.len() {
                for extra in [0, 3] {
                    let dst: Vec<AtomicU32> = (0..len + extra).map(|_| AtomicU32::new(9)).collect();
                    store_f32_words_at(level, &dst, &src[..len]);
                    for (k, w) in dst.iter().enumerate() {
                        let want = if k < len { src[k].to_bits() } else { 9 };
                        assert_eq!(w.load(Relaxed), want, "{level:?} {len}+{extra} word {k}");
                    }
                    let short: Vec<AtomicU32> = (0..len / 2).map(|_| AtomicU32::new(9)).collect();
                    store_f32_words_at(level, &short, &src[..len]);
                    for (k, w) in short.iter().enumerate() {
                        assert_eq!(w.load(Relaxed), src[k].to_bits(), "{level:?} short {k}");
                    }
                }
            }
        }
    }

    /// Tile rows widened through every level equal `h2f` of each half, signaling NaNs and
    /// subnormals included, at row lengths that leave tails, and out-of-range rows are refused.
    #[test]
    fn f16_rows_to_f32_is_exact_at_every_level() {
        use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
        let halves = [
            0x0000u16, 0x8000, 0x0001, 0x03ff, 0x3c00, 0xc000, 0x7bff, 0x7c00, 0xfc00, 0x7c01,
            0x7e00, 0xfd55, 0x3555, 0x0400, 0x1234, 0xabcd,
        ];
        let src: Vec<AtomicU32> = (0..300u32)
            .map(|i| {
                let lo = halves[(i as usize) % 16] as u32;
                let hi = halves[(i as usize * 7 + 3) % 16] as u32;
                AtomicU32::new(lo | hi << 16)
            })
            .collect();
        // Without NaNs too: rows of whole vectors then take the path without a per-row test.
        let clean: Vec<AtomicU32> = src
            .iter()
            .map(|w| {
                let w = w.load(Relaxed);
                let fix = |h: u32| {
                    if h & 0x7c00 == 0x7c00 && h & 0x3ff != 0 {
                        0x3c00
                    } else {
                        h
                    }
                };
                AtomicU32::new(fix(w & 0xffff) | fix(w >> 16) << 16)
            })
            .collect();
        for level in levels() {
            for ((w0, stride, rows, nw), src) in [
                (0, 8, 16, 8),
                (3, 21, 9, 13),
                (5, 4, 4, 4),
                (1, 40, 7, 17),
                (0, 0, 0, 5),
                (2, 24, 5, 16),
            ]
            .into_iter()
            .flat_map(|shape| [(shape, &src), (shape, &clean)])
            {
                let mut out = vec![f32::NAN; rows * 2 * nw + 1];
                assert!(f16_rows_to_f32_at(
                    level,
                    src,
                    (w0, stride, rows, nw),
                    &mut out
                ));
                for r in 0..rows {
                    for k in 0..nw {
                        let w = src[w0 + r * stride + k].load(Relaxed);
                        for (j, h) in [w as u16, (w >> 16) as u16].into_iter().enumerate() {
                            let got = out[2 * (r * nw + k) + j];
                            assert_eq!(
                                got.to_bits(),
                                h2f(h).to_bits(),
                                "{level:?} row {r} word {k} half {j}"
                            );
                        }
                    }
                }
                assert!(
                    out[rows * 2 * nw].is_nan(),
                    "{level:?}: wrote past the rows"
                );
            }
            let mut out = vec![0f32; 64];
            assert!(
                !f16_rows_to_f32_at(level, &src, (290, 8, 2, 8), &mut out),
                "row past the source"
            );
            assert!(
                !f16_rows_to_f32_at(level, &src, (0, 8, 5, 8), &mut out),
                "rows past the destination"
            );
            assert!(
                !f16_rows_to_f32_at(level, &src, (0, usize::MAX, 2, 8), &mut out),
                "overflowing stride"
            );
        }
    }

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

    /// MulAdds sharing A, run as a group, give the bits of running them one by one at the
    /// same level, for 1 to 6 parts (chunks of four and the remainders), depths with and
    /// without a constant kernel, in-place accumulators (D = C), and row counts that need
    /// every block height; a D overlapping another part's B is refused.
    #[test]
    fn shared_a_group_equals_one_by_one() {
        let n = 16;
        for level in fma_levels() {
            for (m, k) in [(16, 16), (16, 32), (13, 8), (7, 16), (29, 5)] {
                for parts_n in 1..=6usize {
                    for in_place in [false, true] {
                        let (mn, kn) = (m * n, k * n);
                        // A, then per part B, C, D.
                        let len = m * k + parts_n * (kn + 2 * mn);
                        let arena: Vec<f32> = (0..len)
                            .map(|i| ((i * 29) % 23) as f32 * 0.125 - 1.375)
                            .collect();
                        let parts: Vec<SharedAPart> = (0..parts_n)
                            .map(|p| {
                                let b = m * k + p * (kn + 2 * mn);
                                let c = b + kn;
                                SharedAPart {
                                    b,
                                    c,
                                    d: if in_place { c } else { c + mn },
                                }
                            })
                            .collect();
                        let mut want = arena.clone();
                        for p in &parts {
                            let (a, b, c) = (
                                want[..m * k].to_vec(),
                                want[p.b..p.b + kn].to_vec(),
                                want[p.c..p.c + mn].to_vec(),
                            );
                            matmul_f32_at(level, m, n, k, &a, &b, &c, &mut want[p.d..p.d + mn]);
                        }
                        let mut got = arena.clone();
                        if shared_a_at(level, (m, n, k), &mut got, (None, 0), &parts, (1, 0)) {
                            assert!(
                                got.iter()
                                    .zip(&want)
                                    .all(|(x, y)| x.to_bits() == y.to_bits()),
                                "{level:?} {m}x16x{k}, {parts_n} parts, in place {in_place}"
                            );
                        } else {
                            assert_eq!(got, arena, "a refused group wrote");
                            assert_eq!(level, Level::Base, "{level:?} refused a valid group");
                        }
                    }
                }
            }
            // Part 0's D is part 1's B: the order matters, so the group is refused.
            let (m, k) = (16, 16);
            let mut arena = vec![0.5f32; m * k + 4 * 256];
            let parts = [
                SharedAPart {
                    b: 256,
                    c: 512,
                    d: 768,
                },
                SharedAPart {
                    b: 768,
                    c: 1024,
                    d: 1024,
                },
            ];
            assert!(!shared_a_at(
                level,
                (m, n, k),
                &mut arena,
                (None, 0),
                &parts,
                (1, 0)
            ));
        }
    }

    /// A chain of two groups sharing A (`d = a·b + (a₁·b₁ + c)`) gives the bits of the first
    /// group into D then the second group on D, for 1 to 6 parts, depths 16 and 5, repeated
    /// over instances and in place; a D over the first segment's A or one of its Bs is refused
    /// without writing.
    #[test]
    fn shared_a_chain_equals_two_groups() {
        for level in fma_levels().into_iter().filter(|&l| l != Level::Base) {
            let (m, n) = (16, 16);
            for k in [16, 5] {
                for parts_n in 1..=6usize {
                    for (in_place, reps) in [(false, 1), (true, 1), (false, 3), (true, 2)] {
                        let (mn, kn, mk) = (m * n, k * n, m * k);
                        // Per instance tile `t` of slot `s` at (s·reps + t)·256: A₁, A, then per
                        // part B₁, B, C, D.
                        let tile = 256;
                        let slot = |s: usize| s * reps * tile;
                        let len = slot(2 + 4 * parts_n);
                        let arena: Vec<f32> = (0..len)
                            .map(|i| ((i * 37) % 29) as f32 * 0.0625 - 0.875)
                            .collect();
                        let b_first: Vec<usize> = (0..parts_n).map(|p| slot(2 + 4 * p)).collect();
                        let parts: Vec<SharedAPart> = (0..parts_n)
                            .map(|p| {
                                let c = slot(2 + 4 * p + 2);
                                SharedAPart {
                                    b: slot(2 + 4 * p + 1),
                                    c,
                                    d: if in_place { c } else { slot(2 + 4 * p + 3) },
                                }
                            })
                            .collect();
                        let mut want = arena.clone();
                        for r in 0..reps {
                            let at = r * tile;
                            for (p, &bf) in parts.iter().zip(&b_first) {
                                let a1 = want[at..at + mk].to_vec();
                                let b1 = want[bf + at..bf + at + kn].to_vec();
                                let c = want[p.c + at..p.c + at + mn].to_vec();
                                let mut d1 = vec![0f32; mn];
                                matmul_f32_at(level, m, n, k, &a1, &b1, &c, &mut d1);
                                let a = want[slot(1) + at..slot(1) + at + mk].to_vec();
                                let b = want[p.b + at..p.b + at + kn].to_vec();
                                matmul_f32_at(
                                    level,
                                    m,
                                    n,
                                    k,
                                    &a,
                                    &b,
                                    &d1,
                                    &mut want[p.d + at..p.d + at + mn],
                                );
                            }
                        }
                        let mut got = arena.clone();
                        assert!(shared_a_at(
                            level,
                            (m, n, k),
                            &mut got,
                            (Some((0, &b_first)), slot(1)),
                            &parts,
                            (reps, tile)
                        ));
                        assert!(
                            got.iter()
                                .zip(&want)
                                .all(|(x, y)| x.to_bits() == y.to_bits()),
                            "{level:?}: k {k}, {parts_n} parts, in place {in_place}, {reps} repetitions"
                        );
                        // A D over the first A, or over a first B: refused, nothing written.
                        for bad in [0, b_first[parts_n - 1]] {
                            let mut moved = parts.clone();
                            moved[0].d = bad;
                            let mut untouched = arena.clone();
                            assert!(!shared_a_at(
                                level,
                                (m, n, k),
                                &mut untouched,
                                (Some((0, &b_first)), slot(1)),
                                &moved,
                                (reps, tile)
                            ));
                            assert_eq!(untouched, arena);
                        }
                    }
                }
            }
        }
    }

    /// MulAdd groups whose f16 A and B tiles are still in memory (rows 40 words apart, the
    /// halves including signaling and quiet NaNs with payloads, infinities, subnormals and
    /// negative zero) give the bits of the same groups on the tiles widened exactly into the
    /// arena: one or two segments, one to four parts, three instances (the second sharing the
    /// first's A, as subgroups of a GEMM do), accumulators in place or apart. A tile whose
    /// last row passes its words, or a D over another part's C, is refused with nothing
    /// written.
    #[test]
    fn in_place_f16_tiles_equal_widened_tiles() {
        use std::sync::atomic::AtomicU32;
        let special = [
            0x7c01u16, 0x7e55, 0xfc00, 0x7c00, 0x0001, 0x83ff, 0x8000, 0x3c00,
        ];
        let stride = 40usize;
        // Tile t's rows start at word t·16·stride + 3.
        let tile_word = |t: usize| t * 16 * stride + 3;
        let ntiles = 30;
        let halves: Vec<u16> = (0..2 * tile_word(ntiles))
            .map(|i| {
                if i % 37 == 5 {
                    special[(i / 37) % special.len()]
                } else {
                    half::f16::from_f32(((i * 29) % 31) as f32 * 0.19 - 2.7).to_bits()
                }
            })
            .collect();
        let words: Vec<AtomicU32> = halves
            .chunks(2)
            .map(|h| AtomicU32::new(h[0] as u32 | (h[1] as u32) << 16))
            .collect();
        let len = words.len();
        // A second object before the tiles' own, so that the index is not always 0.
        let mut objects = vec![(0..8).map(|_| AtomicU32::new(0)).collect(), words];
        // Tile t widened exactly, as a load into a slot would.
        let widened = |t: usize| -> Vec<f32> {
            (0..256)
                .map(|e| {
                    let h = halves[2 * (tile_word(t) + (e / 16) * stride) + e % 16];
                    crate::floats::f16_to_f32(h)
                })
                .collect()
        };
        let half_tile = |t: usize| HalfTile {
            object: 1,
            first: tile_word(t),
            stride,
        };
        let tile = 256;
        for (level, nseg) in fma_levels().into_iter().flat_map(|l| [(l, 1), (l, 2)]) {
            for parts in 1..=4usize {
                for in_place in [false, true] {
                    let reps = 3;
                    // Instance r: A of segment s is tile (r.min(1)·2 + s) (instances 0 and 1
                    // share it), B of segment s, part p tile 4 + (r·2 + s)·4 + p.
                    let a_of = |r: usize, s: usize| (r.saturating_sub(1)) * 2 + s;
                    let b_of = |r: usize, s: usize, p: usize| 4 + (r * 2 + s) * 4 + p;
                    // Arena: per part C then D, each slot `reps` tiles.
                    let slot = |x: usize| x * reps * tile;
                    let cd: Vec<(usize, usize)> = (0..parts)
                        .map(|p| {
                            let c = slot(2 * p);
                            (c, if in_place { c } else { slot(2 * p + 1) })
                        })
                        .collect();
                    let arena: Vec<f32> = (0..slot(2 * parts))
                        .map(|i| ((i * 13) % 17) as f32 * 0.37 - 3.0)
                        .collect();
                    // Expected: the f32 kernel on the widened tiles, instance by instance.
                    let mut want = arena.clone();
                    let mut ok = true;
                    for r in 0..reps {
                        let mut scratch: Vec<f32> = Vec::new();
                        for s in 0..nseg {
                            scratch.extend(widened(a_of(r, s)));
                            for p in 0..parts {
                                scratch.extend(widened(b_of(r, s, p)));
                            }
                        }
                        let seg_len = tile * (1 + parts);
                        let base = scratch.len();
                        scratch.extend(&want[..]);
                        let b_at = |s: usize, p: usize| s * seg_len + tile * (1 + p);
                        let group: Vec<SharedAPart> = cd
                            .iter()
                            .enumerate()
                            .map(|(p, &(c, d))| SharedAPart {
                                b: b_at(nseg - 1, p),
                                c: base + c + r * tile,
                                d: base + d + r * tile,
                            })
                            .collect();
                        let b_first: Vec<usize> = (0..parts).map(|p| b_at(0, p)).collect();
                        let first = (nseg == 2).then_some((0, &b_first[..]));
                        ok &= shared_a_at(
                            level,
                            (16, 16, 16),
                            &mut scratch,
                            (first, (nseg - 1) * seg_len),
                            &group,
                            (1, 0),
                        );
                        want.copy_from_slice(&scratch[base..]);
                    }
                    // Each instance's A per segment and B per segment and part.
                    type Tiles = ([HalfTile; 2], [[HalfTile; 4]; 2]);
                    let insts: Vec<Tiles> = (0..reps)
                        .map(|r| {
                            let mut x = Tiles::default();
                            for s in 0..nseg {
                                x.0[s] = half_tile(a_of(r, s));
                                for p in 0..parts {
                                    x.1[s][p] = half_tile(b_of(r, s, p));
                                }
                            }
                            x
                        })
                        .collect();
                    let named = |x: &[Tiles]| {
                        let x = x.to_vec();
                        move |r: usize, o: Operand| -> Option<HalfTile> {
                            let t = x.get(r)?;
                            match o {
                                Operand::A(s) => t.0.get(s).copied(),
                                Operand::B(s, p) => t.1.get(s)?.get(p).copied(),
                            }
                        }
                    };
                    let shape = (nseg, parts, reps);
                    let mut got = arena.clone();
                    let objs = &mut objects;
                    let done =
                        shared_a_f16b_at(level, &mut got, objs, shape, named(&insts), &cd, tile);
                    assert_eq!(done, level != Level::Base && ok, "{level:?}");
                    if done {
                        assert!(
                            got.iter()
                                .zip(&want)
                                .all(|(x, y)| x.to_bits() == y.to_bits()),
                            "{level:?}: {nseg} segments, {parts} parts, in place {in_place}"
                        );
                    }
                    // Refused, nothing written: a B whose last row passes the words, an A in
                    // no object, a tile not named, a D over another part's C.
                    let mut short = insts.clone();
                    short[2].1[0][0].first = len - 8 * 15;
                    let mut wrong_object = insts.clone();
                    wrong_object[1].0[0].object = 2;
                    let mut untouched = arena.clone();
                    let objs = &mut objects;
                    let out = &mut untouched;
                    let f16b = shared_a_f16b_at;
                    assert!(!f16b(level, out, objs, shape, named(&short), &cd, tile));
                    assert!(!f16b(
                        level,
                        out,
                        objs,
                        shape,
                        named(&wrong_object),
                        &cd,
                        tile
                    ));
                    let unnamed = (nseg, parts, reps + 1);
                    assert!(!f16b(level, out, objs, unnamed, named(&insts), &cd, tile));
                    if parts > 1 {
                        let mut over = cd.clone();
                        over[1].1 = cd[0].0;
                        assert!(!f16b(level, out, objs, shape, named(&insts), &over, tile));
                    }
                    assert_eq!(untouched, arena);
                }
            }
        }
    }

    /// A group repeated over scope instances (every offset `step` further each time, as the
    /// slots of one fused op lie) gives the bits of one call per instance, for 1 to 6 parts
    /// (one chunk of four or more) and in-place accumulators, at every level with a group
    /// kernel; a repetition past the arena's end is refused without writing.
    #[test]
    fn shared_a_repetitions_equal_one_call_each() {
        let (m, n, k, reps) = (16, 16, 16, 3);
        let tile = 256;
        for level in fma_levels().into_iter().filter(|&l| l != Level::Base) {
            for parts_n in 1..=6usize {
                for in_place in [false, true] {
                    // Slot-major: A, then per part B, C, D; each slot `reps` tiles.
                    let slot = |s: usize| s * reps * tile;
                    let parts: Vec<SharedAPart> = (0..parts_n)
                        .map(|p| SharedAPart {
                            b: slot(1 + 3 * p),
                            c: slot(2 + 3 * p),
                            d: slot(if in_place { 2 } else { 3 } + 3 * p),
                        })
                        .collect();
                    let len = slot(1 + 3 * parts_n);
                    let arena: Vec<f32> = (0..len)
                        .map(|i| ((i * 31) % 29) as f32 * 0.25 - 3.5)
                        .collect();
                    let mut want = arena.clone();
                    for r in 0..reps {
                        let at = r * tile;
                        let moved: Vec<SharedAPart> = parts
                            .iter()
                            .map(|p| SharedAPart {
                                b: p.b + at,
                                c: p.c + at,
                                d: p.d + at,
                            })
                            .collect();
                        let one = (None, at);
                        assert!(shared_a_at(
                            level,
                            (m, n, k),
                            &mut want,
                            one,
                            &moved,
                            (1, 0)
                        ));
                    }
                    let mut got = arena.clone();
                    let run = (reps, tile);
                    assert!(shared_a_at(
                        level,
                        (m, n, k),
                        &mut got,
                        (None, 0),
                        &parts,
                        run
                    ));
                    assert!(
                        got.iter()
                            .zip(&want)
                            .all(|(x, y)| x.to_bits() == y.to_bits()),
                        "{level:?}: {parts_n} parts, in place {in_place}"
                    );
                    if in_place {
                        continue; // the last slot (an unused D) is not read
                    }
                    let mut short = arena[..len - 1].to_vec();
                    assert!(!shared_a_at(
                        level,
                        (m, n, k),
                        &mut short,
                        (None, 0),
                        &parts,
                        run
                    ));
                    assert_eq!(short, arena[..len - 1], "a refused repetition wrote");
                }
            }
        }
    }

    /// `interleave4_halves` gives the scalar interleave at every level, for every length up to
    /// 40 (the vector steps and their tails), with bits above the low 16 in the words.
    #[test]
    fn interleave4_halves_match_scalar_at_every_level() {
        let mut next = coopmat_testkit::xorshift64(0x1234_5678_9abc_def1);
        for n in 0..=40 {
            let cols: Vec<Vec<u64>> = (0..4).map(|_| (0..n).map(|_| next()).collect()).collect();
            for level in levels() {
                let mut out = vec![0u32; 2 * n];
                interleave4_halves_at(level, [&cols[0], &cols[1], &cols[2], &cols[3]], &mut out);
                for j in 0..n {
                    let h = |k: usize| (cols[k][j] & 0xffff) as u32;
                    assert_eq!(out[2 * j], h(0) | h(1) << 16, "{level:?} n {n} j {j}");
                    assert_eq!(out[2 * j + 1], h(2) | h(3) << 16, "{level:?} n {n} j {j}");
                }
            }
        }
    }

    /// Every level this CPU has against a scalar loop with the same rounding (one fused
    /// multiply-add per k in order for the FMA levels, multiply then add for the baseline),
    /// bit for bit, over shapes that hit every block size and every masked column tail.
    #[test]
    fn matmul_matches_naive_at_every_level() {
        let levels = fma_levels();
        let shapes = [
            (16, 16, 16),
            (8, 8, 8),
            (16, 8, 32),
            (3, 5, 7),
            (128, 256, 64),
            (13, 37, 9),
            (12, 32, 5),
            (1, 1, 1),
            (7, 17, 3),
            (25, 48, 16),
            (6, 24, 2),
            (30, 31, 4),
            (37, 16, 8),
            (20, 8, 3),
            (7, 70, 5),
            (13, 130, 16),
            (6, 64, 64),
            // One block of R rows fewer, for whole 4-row blocks (R = 6: AVX-512 at 64
            // columns, AVX2 at 16).
            (14, 64, 8),
            (8, 64, 3),
            (14, 16, 5),
            (26, 128, 4),
        ];
        for level in levels {
            for (m, n, k) in shapes {
                let a: Vec<f32> = (0..m * k)
                    .map(|i| ((i * 37) % 11) as f32 * 0.3 - 1.7)
                    .collect();
                let b: Vec<f32> = (0..k * n)
                    .map(|i| ((i * 13) % 7) as f32 * 0.11 + 0.01)
                    .collect();
                let c: Vec<f32> = (0..m * n).map(|i| i as f32 * 0.5).collect();
                // A guard element after d catches a write past the tile.
                let mut d = vec![f32::NAN; m * n + 1];
                matmul_f32_at(level, m, n, k, &a, &b, &c, &mut d);
                for i in 0..m {
                    for j in 0..n {
                        let mut s = c[i * n + j];
                        for kk in 0..k {
                            let (x, y) = (a[i * k + kk], b[kk * n + j]);
                            s = if level == Level::Base {
                                s + x * y
                            } else {
                                x.mul_add(y, s)
                            };
                        }
                        assert_eq!(
                            d[i * n + j].to_bits(),
                            s.to_bits(),
                            "{level:?} {m}x{n}x{k} at ({i}, {j})"
                        );
                    }
                }
                assert!(d[m * n].is_nan(), "{level:?} {m}x{n}x{k} wrote past d");
            }
        }
    }
}
