//! Scalar number kinds and exact conversions between their raw bits and f64.
//!
//! Every value lives in a register as raw bits, zero-extended to 64 bits. Floating-point
//! arithmetic on f16, bf16, fp8 and f32 is done in f64 and rounded once to the result type:
//! for +, −, ×, ÷ and sqrt this equals the correctly rounded result, because f64 has more
//! than twice the significand bits of each of these formats plus two.

pub use crate::program::Num;
use half::{bf16, f16};
use std::sync::OnceLock;

/// Sign-extends the low `bits` bits of `v`.
#[inline(always)]
pub fn sext(v: u64, bits: u32) -> i64 {
    let s = 64 - bits;
    ((v << s) as i64) >> s
}

/// Keeps the low `bits` bits.
#[inline(always)]
pub fn trunc(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

fn f16_table() -> &'static [f32] {
    static T: OnceLock<Vec<f32>> = OnceLock::new();
    T.get_or_init(|| (0..=u16::MAX).map(|b| f16::from_bits(b).to_f32()).collect())
}

/// Whether f16 bits `h` are a NaN (all-ones exponent, nonzero fraction).
#[inline(always)]
pub fn f16_is_nan(h: u16) -> bool {
    h & 0x7c00 == 0x7c00 && h & 0x3ff != 0
}

/// f16 bits to f32 (exact), through a 64 K-entry table built once.
#[inline(always)]
pub fn f16_to_f32(b: u16) -> f32 {
    f16_table()[b as usize]
}

/// The f16 table, for loops that want to hoist the lookup of the static.
pub fn f16_lut() -> &'static [f32] {
    f16_table()
}

/// f32 to f16 bits, round to nearest even.
#[inline(always)]
pub fn f32_to_f16(x: f32) -> u16 {
    f16::from_f32(x).to_bits()
}

/// Raw bits of kind `n` to f64 (exact for every float kind; integers as unsigned).
#[inline(always)]
pub fn to_f64(n: Num, b: u64) -> f64 {
    match n {
        Num::F32 => f32::from_bits(b as u32) as f64,
        Num::F64 => f64::from_bits(b),
        Num::F16 => f16_to_f32(b as u16) as f64,
        Num::BF16 => bf16::from_bits(b as u16).to_f64(),
        Num::E4M3 => fp8_to_f64(b as u8, 3, 7, false),
        Num::E5M2 => fp8_to_f64(b as u8, 2, 15, true),
        Num::Bool | Num::Int(_) => b as f64,
    }
}

/// e^x in f64, the engine's GLSL.std.450 Exp for every float kind (its result rounded once to
/// the result type): x = k·ln 2 + r (Cody–Waite with a two-part ln 2, the products inside
/// fused multiply-adds), e^r by its Taylor polynomial of degree 13 (truncation below 10^-17
/// relative for |r| ≤ ln 2 / 2), scaled by 2^k. Error under one f64 ulp, so f32 and f16 results
/// are the correctly rounded ones except when e^x lies within about 2^-52 (relative) of a
/// rounding boundary (Vulkan allows 3 + 2·|x| ulp). The same operations at every instruction
/// set level (`mul_add` is exact everywhere), so the same bits on every machine, and written
/// without branches per value so that column loops vectorize. Outside |x| < 700 (where 2^k
/// would leave the normal range) and for NaNs: the platform's `exp`.
#[inline(always)]
pub fn exp(x: f64) -> f64 {
    if in_exp_range(x) {
        exp_in_range(x)
    } else {
        x.exp()
    }
}

/// Whether [`exp_in_range`] computes e^x (|x| < 700; false for NaNs).
#[inline(always)]
pub fn in_exp_range(x: f64) -> bool {
    x.abs() < 700.0
}

/// [`exp`] for |x| < 700 (anything else gives a meaningless value): no branch, so that loops
/// over columns vectorize; their callers redo the values outside the range with [`exp`].
#[inline(always)]
pub fn exp_in_range(x: f64) -> f64 {
    const LN2_HI: f64 = std::f64::consts::LN_2;
    // ln 2 − LN2_HI.
    const LN2_LO: f64 = 2.319_046_813_846_299_6e-17;
    const INV_FACT: [f64; 14] = [
        1.0,
        1.0,
        1.0 / 2.0,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5040.0,
        1.0 / 40320.0,
        1.0 / 362_880.0,
        1.0 / 3_628_800.0,
        1.0 / 39_916_800.0,
        1.0 / 479_001_600.0,
        1.0 / 6_227_020_800.0,
    ];
    let k = (x * std::f64::consts::LOG2_E).round_ties_even();
    let r = (-k).mul_add(LN2_LO, (-k).mul_add(LN2_HI, x));
    let mut p = INV_FACT[13];
    for &c in INV_FACT[..13].iter().rev() {
        p = p.mul_add(r, c);
    }
    // 2^k from k's bits: adding 1.5·2^52 leaves k (|k| < 2^51) in the low bits of the sum's
    // encoding, and `<< 52` keeps the low 12 bits of k + 1023, the biased exponent. The same
    // as `(k as i64 + 1023) << 52`, whose saturating cast compiles to a scalar conversion per
    // lane (a third of a vectorized column's time).
    let k_bits = (k + 6_755_399_441_055_744.0).to_bits();
    p * f64::from_bits(k_bits.wrapping_add(1023) << 52)
}

/// f64 to raw bits of float kind `n`, round to nearest even (fp8 E4M3 overflows to NaN unless
/// `saturate`, E5M2 to infinity).
#[inline(always)]
pub fn from_f64(n: Num, x: f64) -> u64 {
    match n {
        Num::F32 => (x as f32).to_bits() as u64,
        Num::F64 => x.to_bits(),
        Num::F16 => f16::from_f64(x).to_bits() as u64,
        Num::BF16 => bf16::from_f64(x).to_bits() as u64,
        Num::E4M3 => f64_to_fp8(x, 3, 7, false, false) as u64,
        Num::E5M2 => f64_to_fp8(x, 2, 15, true, false) as u64,
        Num::Bool | Num::Int(_) => x as u64,
    }
}

/// Like [`from_f64`] but fp8 results saturate to the largest finite value
/// (SaturatedToLargestFloat8NormalConversionEXT).
pub fn from_f64_sat(n: Num, x: f64) -> u64 {
    match n {
        Num::E4M3 => f64_to_fp8(x, 3, 7, false, true) as u64,
        Num::E5M2 => f64_to_fp8(x, 2, 15, true, true) as u64,
        _ => from_f64(n, x),
    }
}

/// Decodes an 8-bit float with `m` mantissa bits and exponent bias `bias`.
pub fn fp8_to_f64(b: u8, m: u32, bias: i32, ieee: bool) -> f64 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let e_bits = 7 - m;
    let e = ((b as u32 & 0x7f) >> m) as i32;
    let man = (b as u32) & ((1 << m) - 1);
    let emax = (1 << e_bits) - 1;
    if ieee && e == emax {
        return if man == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if !ieee && e == emax && man == (1 << m) - 1 {
        return f64::NAN;
    }
    if e == 0 {
        sign * man as f64 * 2f64.powi(1 - bias - m as i32)
    } else {
        sign * (1.0 + man as f64 / (1u32 << m) as f64) * 2f64.powi(e - bias)
    }
}

/// Encodes an 8-bit float, round to nearest even.
pub fn f64_to_fp8(x: f64, m: u32, bias: i32, ieee: bool, saturate: bool) -> u8 {
    let e_bits = 7 - m;
    let emax = (1i32 << e_bits) - 1;
    // Both encodings use S.1111111 as their (quiet) NaN.
    let nan: u8 = 0x7f;
    if x.is_nan() {
        return nan;
    }
    let sign: u8 = if x.is_sign_negative() { 0x80 } else { 0 };
    let a = x.abs();
    // Largest finite: IEEE-like kinds lose the top exponent, E4M3 loses only the all-ones mantissa.
    let max = if ieee {
        (2.0 - 2f64.powi(-(m as i32))) * 2f64.powi(emax - 1 - bias)
    } else {
        (2.0 - 2f64.powi(1 - m as i32)) * 2f64.powi(emax - bias)
    };
    let overflow = |s: u8| -> u8 {
        if saturate {
            s | f64_to_fp8(max, m, bias, ieee, false)
        } else if ieee {
            s | ((emax as u8) << m)
        } else {
            s | nan
        }
    };
    if a.is_infinite() {
        return overflow(sign);
    }
    if a == 0.0 {
        return sign;
    }
    let min_exp = 1 - bias;
    let e = (a.log2().floor() as i32).max(min_exp);
    // log2 may be off by one near powers of two; fix it up exactly.
    let e = if 2f64.powi(e) > a && e > min_exp {
        e - 1
    } else if 2f64.powi(e + 1) <= a {
        e + 1
    } else {
        e
    };
    let q = 2f64.powi(e - m as i32);
    let r = (a / q).round_ties_even();
    let v = r * q;
    if v > max {
        return overflow(sign);
    }
    if v < 2f64.powi(min_exp) {
        return sign | (v / 2f64.powi(min_exp - m as i32)) as u8;
    }
    let e2 = v.log2().floor() as i32;
    let e2 = if 2f64.powi(e2) > v {
        e2 - 1
    } else if 2f64.powi(e2 + 1) <= v {
        e2 + 1
    } else {
        e2
    };
    let man = (v / 2f64.powi(e2 - m as i32)) as u32 - (1 << m);
    sign | (((e2 + bias) as u8) << m) | man as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine's exp against the platform's: within an f64 ulp everywhere sampled; every
    /// f16 and every sampled f32 input rounds to the same result (the range where e^x is a
    /// finite non-zero f32, and beyond it).
    #[test]
    fn exp_rounds_like_the_platform_exp() {
        let mut worst = 0f64;
        for bits in (0..=u32::MAX).step_by(4099) {
            let x = f32::from_bits(bits);
            if x.is_nan() {
                continue;
            }
            let (ours, theirs) = (exp(x as f64), (x as f64).exp());
            if theirs.is_finite() && theirs > f64::MIN_POSITIVE {
                let ulp = f64::from_bits(theirs.to_bits() + 1) - theirs;
                worst = worst.max((ours - theirs).abs() / ulp);
            }
            assert_eq!(
                (ours as f32).to_bits(),
                (theirs as f32).to_bits(),
                "exp({x:e})"
            );
        }
        assert!(worst <= 1.0, "{worst} f64 ulps");
        for h in 0..=u16::MAX {
            let x = f16_to_f32(h) as f64;
            if x.is_nan() {
                continue;
            }
            assert_eq!(
                from_f64(Num::F16, exp(x)),
                from_f64(Num::F16, x.exp()),
                "exp of f16 {h:#06x}"
            );
        }
    }

    /// `exp_in_range`'s 2^k from the bits of k + 1.5·2^52 is the cast's for every k its range
    /// gives (|x| < 700: |k| <= 1010).
    #[test]
    fn two_to_the_k_from_bits_is_the_casts() {
        for k in -1022i64..=1023 {
            let from_bits =
                ((k as f64 + 6_755_399_441_055_744.0).to_bits()).wrapping_add(1023) << 52;
            assert_eq!(from_bits, ((k + 1023) as u64) << 52, "k = {k}");
        }
    }

    #[test]
    fn fp8_round_trips_every_code() {
        for b in 0..=255u8 {
            for (m, bias, ieee) in [(3, 7, false), (2, 15, true)] {
                let v = fp8_to_f64(b, m, bias, ieee);
                if v.is_nan() {
                    continue;
                }
                assert_eq!(f64_to_fp8(v, m, bias, ieee, false), b, "code {b:#x} m={m}");
            }
        }
        assert_eq!(fp8_to_f64(0x7e, 3, 7, false), 448.0);
        assert_eq!(fp8_to_f64(0x7b, 2, 15, true), 57344.0);
        assert_eq!(f64_to_fp8(1000.0, 3, 7, false, true), 0x7e);
        // 1 + 1/16 is a tie between 1 and 1.125 in E4M3: even mantissa wins.
        assert_eq!(
            fp8_to_f64(f64_to_fp8(1.0625, 3, 7, false, false), 3, 7, false),
            1.0
        );
    }

    /// The shortcuts the engine's matrix element access takes for f16 tiles (kept as f32) are
    /// the general f64 paths for every input that is not a NaN.
    #[test]
    fn f16_element_shortcuts_equal_the_f64_paths() {
        for h in 0..=u16::MAX {
            if !f16_is_nan(h) {
                let via_f64 = to_f64(Num::F16, h as u64) as f32;
                assert_eq!(f16_to_f32(h).to_bits(), via_f64.to_bits(), "{h:#x}");
            }
        }
        let mut x = 0x2545_f491u32;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let v = f32::from_bits(x);
            if !v.is_nan() {
                assert_eq!(
                    f32_to_f16(v) as u64,
                    from_f64(Num::F16, v as f64),
                    "{v:e} ({x:#x})"
                );
            }
        }
    }
}
