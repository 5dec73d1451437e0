//! IEEE binary16 conversions (round to nearest even, denormals kept), as the cm2 shaders use
//! them (`RoundingModeRTE 16`, `DenormPreserve 16`, GGML-FACTS §1), on the `half` crate.

use half::f16;

/// f16 bits to f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    f16::from_bits(h).to_f32()
}

/// f64 to f16 bits, round to nearest even (overflow to infinity, every NaN the quiet NaN
/// 0x7e00).
pub fn f64_to_f16(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7e00;
    }
    f16::from_f64(x).to_bits()
}

/// f32 to f16 bits, round to nearest even.
pub fn f32_to_f16(x: f32) -> u16 {
    f64_to_f16(x as f64)
}

/// `x` rounded to the nearest f16 value.
pub fn round_f16(x: f32) -> f32 {
    f16_to_f32(f32_to_f16(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_matches_ieee_round_to_nearest_even() {
        // 1 + 2^-11 is halfway between 1 and the next f16: ties go to the even significand.
        assert_eq!(f64_to_f16(1.0 + 2f64.powi(-11)), 0x3c00);
        assert_eq!(f64_to_f16(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
        // Smallest denormal, overflow, signed zero, NaN.
        assert_eq!(f64_to_f16(2f64.powi(-24)), 1);
        assert_eq!(f64_to_f16(65520.0), 0x7c00);
        assert_eq!(f64_to_f16(-0.0), 0x8000);
        assert_eq!(f64_to_f16(f64::NAN), 0x7e00);
        assert_eq!(f16_to_f32(1), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0xfc00), f32::NEG_INFINITY);
    }
}
