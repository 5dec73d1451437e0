//! IEEE binary16 conversions (round to nearest even, denormals kept), as the cm2 shaders use
//! them (`RoundingModeRTE 16`, `DenormPreserve 16`, GGML-FACTS §1).

/// f16 bits to f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // Denormal: m * 2^-24, exact in f32.
            let v = m as f32 * f32::from_bits(0x3380_0000); // 2^-24
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, m) => sign | 0x7fc0_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// f64 to f16 bits, round to nearest even (overflow to infinity, NaN kept as a quiet NaN).
pub fn f64_to_f16(x: f64) -> u16 {
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x.is_nan() {
        return 0x7e00;
    }
    let a = x.abs();
    if a == 0.0 {
        return sign;
    }
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    // Quantum of the f16 binade containing `a` (denormal quantum 2^-24 below 2^-14).
    let e = a.log2().floor() as i32;
    let e = if 2f64.powi(e) > a {
        e - 1
    } else if 2f64.powi(e + 1) <= a {
        e + 1
    } else {
        e
    };
    let q = 2f64.powi(e.max(-14) - 10);
    let n = a / q; // exact: scaling by a power of two
    let r = round_half_even(n) * q;
    if r > 65504.0 {
        return sign | 0x7c00;
    }
    // r is representable: encode.
    let bits = if r < 2f64.powi(-14) {
        (r / 2f64.powi(-24)) as u16
    } else {
        let e = r.log2().floor() as i32;
        let e = if 2f64.powi(e) > r {
            e - 1
        } else if 2f64.powi(e + 1) <= r {
            e + 1
        } else {
            e
        };
        let m = (r / 2f64.powi(e) - 1.0) * 1024.0;
        (((e + 15) as u16) << 10) | m as u16
    };
    sign | bits
}

/// f32 to f16 bits, round to nearest even.
pub fn f32_to_f16(x: f32) -> u16 {
    f64_to_f16(x as f64)
}

/// Rounds f32 to the nearest f16 value and back (what the shaders' f16 A tile holds).
pub fn round_f16(x: f32) -> f32 {
    f16_to_f32(f32_to_f16(x))
}

fn round_half_even(n: f64) -> f64 {
    let f = n.floor();
    let d = n - f;
    if d > 0.5 || (d == 0.5 && f % 2.0 != 0.0) {
        f + 1.0
    } else {
        f
    }
}
