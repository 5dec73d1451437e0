//! Number formatting as spirv-dis prints literals.
//!
//! Integers print in decimal (signed types as signed). 32- and 64-bit floats that are zero or
//! normal print like C's `%.9g` / `%.17g` (enough digits to round-trip); subnormals, infinities
//! and NaNs print as hex floats (`0x1p+128`, `-0x1.8p+128`). 16-bit floats (IEEE and bfloat16)
//! and 8-bit floats always print as hex floats (`0x1p+0`).

use crate::binary::NumberKind;
use crate::grammar::fp_encoding;
use std::io::Write as _;

/// Appends `v` in decimal.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends `v` in decimal with a leading `-` when negative.
#[inline]
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    write_u64(out, v.unsigned_abs());
}

/// Appends a literal number operand (`words`, low-order word first) interpreted as `kind`.
/// `float_encoding` is the `FPEncoding` operand of the float type, if it has one. Numbers wider
/// than 64 bits print nothing, as in spirv-dis.
pub fn write_literal(
    out: &mut Vec<u8>,
    words: &[u32],
    kind: NumberKind,
    float_encoding: Option<u32>,
) {
    match *words {
        [w] => match kind {
            NumberKind::Signed(_) => write_i64(out, w as i32 as i64),
            NumberKind::Float(width) => match float_encoding {
                None if width == 16 => write_hex_float(out, (w & 0xffff) as u64, 5, 10),
                None if width == 32 => write_f32(out, w),
                None => {}
                Some(enc) => write_encoded_float(out, w, enc),
            },
            _ => write_u64(out, w as u64),
        },
        [lo, hi] => {
            let bits = lo as u64 | (hi as u64) << 32;
            match kind {
                NumberKind::Signed(_) => write_i64(out, bits as i64),
                NumberKind::Float(_) => write_f64(out, bits),
                _ => write_u64(out, bits),
            }
        }
        _ => {}
    }
}

/// Appends a float of a type with an `FPEncoding` operand (always as a hex float).
fn write_encoded_float(out: &mut Vec<u8>, w: u32, encoding: u32) {
    let (exp_bits, frac_bits) = match encoding {
        fp_encoding::BFloat16KHR => (8, 7),
        fp_encoding::Float8E4M3EXT => (4, 3),
        fp_encoding::Float8E5M2EXT => (5, 2),
        fp_encoding::Float6E2M3EXT => (2, 3),
        fp_encoding::Float6E3M2EXT => (3, 2),
        fp_encoding::Float4E2M1EXT => (2, 1),
        fp_encoding::Float8UnsignedE8M0EXT => {
            // Exponent only, no zero: 2^(bits - 127).
            out.extend_from_slice(b"0x1p");
            let e = (w & 0xff) as i64 - 127;
            if e >= 0 {
                out.push(b'+');
            }
            write_i64(out, e);
            return;
        }
        fp_encoding::MXInt8EXT => {
            // A two's complement 8-bit integer scaled by 2^-6, printed as its exact value.
            let i = (w & 0xff) as u8 as i8 as i32;
            if i == 0 {
                out.extend_from_slice(b"0x0p+0");
                return;
            }
            let a = i.unsigned_abs();
            let top = 31 - a.leading_zeros();
            let fraction = ((a << (8 - top)) & 0xff) as u64;
            if i < 0 {
                out.push(b'-');
            }
            out.extend_from_slice(b"0x1");
            let (mut f, mut n) = (fraction, 2);
            while n > 0 && f & 0xf == 0 {
                f >>= 4;
                n -= 1;
            }
            if n > 0 {
                out.push(b'.');
                for k in (0..n).rev() {
                    out.push(b"0123456789abcdef"[((f >> (4 * k)) & 0xf) as usize]);
                }
            }
            out.push(b'p');
            let e = top as i64 - 6;
            if e >= 0 {
                out.push(b'+');
            }
            write_i64(out, e);
            return;
        }
        _ => return,
    };
    let bits = (w as u64) & ((1u64 << (1 + exp_bits + frac_bits)) - 1);
    write_hex_float(out, bits, exp_bits, frac_bits);
}

/// Appends a 32-bit float given by its bits.
pub fn write_f32(out: &mut Vec<u8>, bits: u32) {
    let v = f32::from_bits(bits);
    if v == 0.0 || v.is_normal() {
        write_g(out, v as f64, 9);
    } else {
        write_hex_float(out, bits as u64, 8, 23);
    }
}

/// Appends a 64-bit float given by its bits.
pub fn write_f64(out: &mut Vec<u8>, bits: u64) {
    let v = f64::from_bits(bits);
    if v == 0.0 || v.is_normal() {
        write_g(out, v, 17);
    } else {
        write_hex_float(out, bits, 11, 52);
    }
}

/// Appends `v` as C's `printf("%.{precision}g")` does (round-half-even on exact ties, as glibc).
pub fn write_g(out: &mut Vec<u8>, v: f64, precision: usize) {
    if v == 0.0 {
        out.extend_from_slice(if v.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    // Rust's `{:.N e}` gives the correctly rounded significant digits and the decimal exponent.
    let mut buf = [0u8; 40];
    let mut cursor = std::io::Cursor::new(&mut buf[..]);
    let _ = write!(cursor, "{:.*e}", precision - 1, v.abs());
    let n = cursor.position() as usize;
    let s = &buf[..n];
    let e_pos = s.iter().position(|&b| b == b'e').unwrap_or(n);
    let mut digits = [0u8; 24];
    let mut nd = 0;
    for &b in &s[..e_pos] {
        if b.is_ascii_digit() && nd < digits.len() {
            digits[nd] = b;
            nd += 1;
        }
    }
    let exp: i32 = std::str::from_utf8(&s[(e_pos + 1).min(n)..])
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    // Trailing zeros of the significand are dropped in both styles.
    while nd > 1 && digits[nd - 1] == b'0' {
        nd -= 1;
    }
    let digits = &digits[..nd];
    if v < 0.0 {
        out.push(b'-');
    }
    if exp < -4 || exp >= precision as i32 {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.push(b'0');
        }
        write_u64(out, a as u64);
    } else if exp >= 0 {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.extend_from_slice(digits);
            out.extend(std::iter::repeat_n(b'0', int_len - digits.len()));
        } else {
            out.extend_from_slice(&digits[..int_len]);
            out.push(b'.');
            out.extend_from_slice(&digits[int_len..]);
        }
    } else {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-exp - 1) as usize));
        out.extend_from_slice(digits);
    }
}

/// Appends a float of the given layout as a hex float: `[-]0x1[.fff]p±e` (normalized, with
/// subnormals renormalized and trailing zero nibbles dropped), `0x0p+0` for zero.
pub fn write_hex_float(out: &mut Vec<u8>, bits: u64, exp_bits: u32, frac_bits: u32) {
    let nibbles = frac_bits.div_ceil(4);
    let overflow = nibbles * 4 - frac_bits;
    let bias = (1i64 << (exp_bits - 1)) - 1;
    let exponent = (bits >> frac_bits) & ((1u64 << exp_bits) - 1);
    let mut fraction = (bits & ((1u64 << frac_bits) - 1)) << overflow;
    let negative = bits >> (exp_bits + frac_bits) & 1 == 1;
    let is_zero = exponent == 0 && fraction == 0;
    let mut e = if is_zero { 0 } else { exponent as i64 - bias };
    if exponent == 0 && !is_zero {
        // Subnormal: shift the leading one out into the implicit position.
        let top = 1u64 << (nibbles * 4 - 1);
        while fraction & top == 0 {
            fraction <<= 1;
            e -= 1;
        }
        fraction = (fraction << 1) & ((1u64 << (nibbles * 4)) - 1);
    }
    let mut n = nibbles;
    while n > 0 && fraction & 0xf == 0 {
        fraction >>= 4;
        n -= 1;
    }
    if negative {
        out.push(b'-');
    }
    out.extend_from_slice(if is_zero { b"0x0" } else { b"0x1" });
    if n > 0 {
        out.push(b'.');
        for i in (0..n).rev() {
            out.push(b"0123456789abcdef"[((fraction >> (4 * i)) & 0xf) as usize]);
        }
    }
    out.push(b'p');
    if e >= 0 {
        out.push(b'+');
    }
    write_i64(out, e);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(v: f64, p: usize) -> String {
        let mut o = Vec::new();
        write_g(&mut o, v, p);
        String::from_utf8(o).unwrap()
    }

    /// Expected strings are what spirv-dis printed for these constants and, for the tie
    /// 1048576.125, what glibc's `printf("%.9g")` prints.
    #[test]
    fn g_matches_c_printf_rules() {
        assert_eq!(g(0.1f32 as f64, 9), "0.100000001");
        assert_eq!(g(1e10, 9), "1e+10");
        assert_eq!(g(-1e-10f32 as f64, 9), "-1.00000001e-10");
        assert_eq!(g(123456789.0f32 as f64, 9), "123456792");
        assert_eq!(g(1.0, 9), "1");
        assert_eq!(g(1048576.125, 9), "1048576.12");
        assert_eq!(g(0.0001, 9), "0.0001");
        assert_eq!(g(0.1, 17), "0.10000000000000001");
        assert_eq!(g(1e100, 17), "1e+100");
    }

    #[test]
    fn hex_floats() {
        let h = |bits: u64, e, f| {
            let mut o = Vec::new();
            write_hex_float(&mut o, bits, e, f);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(h(0x3c00, 5, 10), "0x1p+0");
        assert_eq!(h(0xc100, 5, 10), "-0x1.4p+1");
        assert_eq!(h(0x0001, 5, 10), "0x1p-24");
        assert_eq!(h(0x7f80_0000, 8, 23), "0x1p+128");
        assert_eq!(h(0x0000_0001, 8, 23), "0x1p-149");
        assert_eq!(h(0x8000, 5, 10), "-0x0p+0");
    }
}
