//! The suite's own numerics: encodings of every component type, IEEE round-to-nearest-even
//! narrowing to float16 and bfloat16 written out here (not the engine's conversions or the
//! `half` crate's), and the float comparison. Results the cases expect are computed with these.

use crate::Comp;

/// A little-endian element's bits.
pub fn bits(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(w)
}

/// `v` encoded as `t` (integers wrap to the width; floats round to nearest even).
pub fn encode(t: Comp, v: f64) -> u64 {
    match t {
        Comp::F32 => u64::from((v as f32).to_bits()),
        Comp::F16 => u64::from(f64_to_f16(v)),
        Comp::BF16 => u64::from(f32_to_bf16(v as f32)),
        Comp::S8 | Comp::U8 | Comp::S32 | Comp::U32 => {
            let mask = (1u64 << t.bits()) - 1;
            (v as i64 as u64) & mask
        }
    }
}

/// The value of `t`'s bits.
pub fn decode(t: Comp, b: u64) -> f64 {
    match t {
        Comp::F32 => f64::from(f32::from_bits(b as u32)),
        Comp::F16 => f16_to_f64(b as u16),
        Comp::BF16 => f64::from(f32::from_bits((b as u32) << 16)),
        Comp::S8 => f64::from(b as u8 as i8),
        Comp::U8 => f64::from(b as u8),
        Comp::S32 => f64::from(b as u32 as i32),
        Comp::U32 => f64::from(b as u32),
    }
}

/// Little-endian bytes of `bits` at `t`'s width.
pub fn bytes(t: Comp, bits: u64) -> Vec<u8> {
    bits.to_le_bytes()[..t.bytes() as usize].to_vec()
}

/// float16 bits of `v`, rounded to nearest even (IEEE 754 binary16): NaN stays NaN (quiet),
/// overflow gives infinity, tiny values round to subnormals or zero with their sign.
pub fn f64_to_f16(v: f64) -> u16 {
    let sign: u16 = if v.is_sign_negative() { 0x8000 } else { 0 };
    if v.is_nan() {
        return 0x7e00 | sign;
    }
    let a = v.abs();
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    // The value as a multiple of 2^-24 (the smallest subnormal), or with the exponent's own
    // quantum for normals, rounded to nearest even on the exact scaled value.
    if a < 2f64.powi(-14) {
        let q = round_even(a * 2f64.powi(24));
        return sign | q as u16; // q <= 1024 reaches the first normal exactly
    }
    let e = a.log2().floor() as i32;
    // Guard against log2 rounding at powers of two.
    let e = if 2f64.powi(e) > a {
        e - 1
    } else if 2f64.powi(e + 1) <= a {
        e + 1
    } else {
        e
    };
    let m = round_even(a / 2f64.powi(e - 10)); // 1024..=2048
    let (m, e) = if m >= 2048.0 { (1024.0, e + 1) } else { (m, e) };
    if e > 15 {
        return sign | 0x7c00;
    }
    sign | (((e + 15) as u16) << 10) | ((m as u16) - 1024)
}

/// The value of float16 bits.
pub fn f16_to_f64(h: u16) -> f64 {
    let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((h >> 10) & 0x1f);
    let m = f64::from(h & 0x3ff);
    match e {
        0 => s * m * 2f64.powi(-24),
        31 if m == 0.0 => s * f64::INFINITY,
        31 => f64::NAN,
        _ => s * (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

/// bfloat16 bits of `v`: the high half of the float32, rounded to nearest even.
pub fn f32_to_bf16(v: f32) -> u16 {
    let b = v.to_bits();
    if v.is_nan() {
        return ((b >> 16) as u16) | 0x40;
    }
    let low = b & 0xffff;
    let mut hi = b >> 16;
    if low > 0x8000 || (low == 0x8000 && hi & 1 == 1) {
        hi += 1;
    }
    hi as u16
}

fn round_even(x: f64) -> f64 {
    let f = x.floor();
    let d = x - f;
    if d > 0.5 || (d == 0.5 && f % 2.0 != 0.0) {
        f + 1.0
    } else {
        f
    }
}

/// Whether float bits `got` are within `ulps` of `want` (any NaN matches any NaN; zeros of both
/// signs match).
pub fn float_close(t: Comp, want: u64, got: u64, ulps: u32) -> bool {
    let (w, g) = (decode(t, want), decode(t, got));
    if w.is_nan() || g.is_nan() {
        return w.is_nan() && g.is_nan();
    }
    if w == g {
        return true;
    }
    // Distance in representable values: order the bit patterns as integers.
    let key = |b: u64| -> i64 {
        let bits = t.bits();
        let sign = 1u64 << (bits - 1);
        let mag = (b & (sign - 1)) as i64;
        if b & sign != 0 { -mag } else { mag }
    };
    (key(want) - key(got)).unsigned_abs() <= u64::from(ulps)
}

/// A value for messages.
pub fn show(t: Comp, b: u64) -> String {
    if t.is_float() {
        format!("{} ({:#x})", decode(t, b), b)
    } else {
        format!("{}", decode(t, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float16_rounding_matches_ieee() {
        assert_eq!(f64_to_f16(1.0), 0x3c00);
        assert_eq!(f64_to_f16(-2.0), 0xc000);
        assert_eq!(f64_to_f16(65504.0), 0x7bff);
        assert_eq!(
            f64_to_f16(65520.0),
            0x7c00,
            "halfway to 2^16 rounds up to infinity"
        );
        assert_eq!(f64_to_f16(2f64.powi(-24)), 0x0001);
        assert_eq!(f64_to_f16(2f64.powi(-25)), 0x0000, "halfway to 0: even");
        assert_eq!(f64_to_f16(3.0 * 2f64.powi(-25)), 0x0002, "1.5 ulps: even");
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: even (1.0); 1 + 3*2^-11 rounds up.
        assert_eq!(f64_to_f16(1.0 + 2f64.powi(-11)), 0x3c00);
        assert_eq!(f64_to_f16(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
        assert_eq!(f64_to_f16(-0.0), 0x8000);
        assert_eq!(f64_to_f16(2f64.powi(-14)), 0x0400, "the smallest normal");
        for h in [0x0001u16, 0x03ff, 0x0400, 0x3555, 0x7bff, 0xfbff] {
            assert_eq!(f64_to_f16(f16_to_f64(h)), h, "{h:#x} round trip");
        }
    }

    #[test]
    fn bfloat16_rounding() {
        assert_eq!(f32_to_bf16(1.0), 0x3f80);
        assert_eq!(
            f32_to_bf16(f32::from_bits(0x3f80_8000)),
            0x3f80,
            "halfway: even"
        );
        assert_eq!(
            f32_to_bf16(f32::from_bits(0x3f81_8000)),
            0x3f82,
            "halfway: even up"
        );
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8001)), 0x3f81);
    }
}
