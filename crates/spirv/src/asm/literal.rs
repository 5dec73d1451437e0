//! Literal spelling as `spirv-as` reads it.
//!
//! `spirv-as` reads numbers with C++ stream semantics, and this module reproduces them:
//! integers accept decimal, `0x` hex and (through `std::setbase(0)`) *octal* with a leading
//! `0`; floats accept C decimal syntax (correctly rounded) and hex floats `[-]0x1.8p+3` (lower
//! case `p`, exponent required), which are truncated rather than rounded. Narrow float formats
//! (f16, bf16, fp8) parse decimal text as an f32 first and then truncate toward zero.

/// A literal word as `spirv-as` classifies it outside typed operands.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Literal {
    /// A quoted string, unescaped.
    Str(Vec<u8>),
    /// A 32-bit word (raw mode).
    Word(u32),
    /// Something that reads as a number where a string was expected.
    Number,
}

/// Classifies a word expected to be a string: quoted strings are unescaped; words made of
/// digits, `.` and a leading `-` are numbers; anything else is `None`.
pub(crate) fn classify(b: &[u8]) -> Option<Literal> {
    if b.is_empty() {
        return None;
    }
    let mut is_string = false;
    let mut periods = 0;
    let mut signed = false;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'0'..=b'9' => {}
            b'.' => periods += 1,
            b'-' if i == 0 => signed = true,
            _ => {
                is_string = true;
                break;
            }
        }
    }
    if is_string || periods > 1 || (signed && b.len() == 1) {
        if b.len() < 2 || b[0] != b'"' || b[b.len() - 1] != b'"' {
            return None;
        }
        return Some(Literal::Str(unescape(&b[1..b.len() - 1])));
    }
    Some(Literal::Number)
}

/// A word in raw mode (after `!<n>`): a quoted string, an integer that fits 32 bits (C++
/// stream syntax: sign, `0x` hex, `0` octal), or a number with a `.` read as an f32 (decimal
/// or hex float); anything else is `None`.
pub(crate) fn raw_word(b: &[u8]) -> Option<Literal> {
    if b.first() == Some(&b'"') {
        return (b.len() >= 2 && b[b.len() - 1] == b'"')
            .then(|| Literal::Str(unescape(&b[1..b.len() - 1])));
    }
    let text = std::str::from_utf8(b).ok()?;
    if let Some((negative, mag)) = parse_cxx_integer(text) {
        let word = if negative {
            (mag <= 1 << 31).then(|| (mag as i64).wrapping_neg() as i32 as u32)
        } else {
            u32::try_from(mag).ok()
        };
        return word.map(Literal::Word);
    }
    if text.contains('.') {
        return parse_float(text, FloatFormat::F32).map(|bits| Literal::Word(bits as u32));
    }
    None
}

/// Removes backslash escapes: `\x` stands for `x`.
fn unescape(inner: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(inner.len());
    let mut escaping = false;
    for &c in inner {
        if c == b'\\' && !escaping {
            escaping = true;
        } else {
            out.push(c);
            escaping = false;
        }
    }
    out
}

/// Parses an unsigned magnitude the way `istream >> setbase(0)` does (hex `0x`, octal `0`,
/// decimal); `None` on bad syntax or u64 overflow.
fn parse_magnitude(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let (digits, radix) = if b.len() >= 2 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X') {
        (&s[2..], 16)
    } else if b.len() > 1 && b[0] == b'0' {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() || !digits.bytes().all(|c| (c as char).is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// Parses an integer with optional sign as C++ `ParseNumber` does; returns (negative, magnitude).
fn parse_cxx_integer(text: &str) -> Option<(bool, u64)> {
    let (neg, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    Some((neg, parse_magnitude(rest)?))
}

/// Parses an unsigned 32-bit number (`!<n>` immediates, numeric ids, ext-inst numbers).
pub(crate) fn parse_u32(text: &str) -> Option<u32> {
    match parse_cxx_integer(text)? {
        (false, v) => u32::try_from(v).ok(),
        (true, 0) => Some(0),
        (true, _) => None,
    }
}

/// Encodes an integer literal of the given width and signedness (SPIR-V 2.2.1: literals
/// narrower than 32 bits are sign-extended for signed types, as `spirv-as` does).
pub(crate) fn encode_int(
    text: &str,
    width: u32,
    signed: bool,
    out: &mut Vec<u32>,
) -> Result<(), String> {
    if width > 64 {
        return Err(format!("Unsupported {width}-bit integer literals"));
    }
    let does_not_fit = || {
        format!(
            "Integer {text} does not fit in a {width}-bit {} integer",
            if signed { "signed" } else { "unsigned" }
        )
    };
    let negative = text.starts_with('-');
    if negative && !signed {
        return Err("Cannot put a negative number in an unsigned literal".into());
    }
    let is_hex = text.starts_with("0x") || text.starts_with("0X");
    let bits: u64 = if negative {
        let Some((_, mag)) = parse_cxx_integer(text) else {
            return Err(format!("Invalid signed integer literal: {text}"));
        };
        if mag > 1u64 << 63 {
            return Err(format!("Invalid signed integer literal: {text}"));
        }
        let v = (mag as i64).wrapping_neg();
        if width == 0 || (width < 64 && v < -(1i64 << (width - 1))) {
            return Err(does_not_fit());
        }
        v as u64
    } else {
        let Some((_, v)) = parse_cxx_integer(text) else {
            return Err(format!("Invalid unsigned integer literal: {text}"));
        };
        let fits = if is_hex || !signed {
            width >= 64 || v >> width == 0
        } else {
            width > 0 && v >> (width - 1) == 0
        };
        if !fits {
            return Err(does_not_fit());
        }
        if is_hex && signed && width > 0 && width < 64 && (v >> (width - 1)) & 1 == 1 {
            v | (u64::MAX << width)
        } else {
            v
        }
    };
    out.push(bits as u32);
    if width > 32 {
        out.push((bits >> 32) as u32);
    }
    Ok(())
}

/// A floating-point format as `spirv-as` encodes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FloatFormat {
    /// IEEE binary16.
    F16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// bfloat16.
    BF16,
    /// OCP FP8 E4M3 (no infinities; the all-ones pattern is NaN).
    E4M3,
    /// OCP FP8 E5M2.
    E5M2,
    /// OCP FP6 E2M3 (no infinities or NaNs).
    E2M3,
    /// OCP FP6 E3M2 (no infinities or NaNs).
    E3M2,
    /// OCP FP4 E2M1 (no infinities or NaNs).
    E2M1,
    /// OCP E8M0 scale: an unsigned power of two, the byte is the biased exponent.
    E8M0,
    /// OCP MX INT8: two's complement with 6 fraction bits.
    MxInt8,
}

impl FloatFormat {
    /// (storage bits, exponent bits, fraction bits).
    fn layout(self) -> (u32, u32, u32) {
        match self {
            FloatFormat::F16 => (16, 5, 10),
            FloatFormat::F32 => (32, 8, 23),
            FloatFormat::F64 => (64, 11, 52),
            FloatFormat::BF16 => (16, 8, 7),
            FloatFormat::E4M3 => (8, 4, 3),
            FloatFormat::E5M2 => (8, 5, 2),
            FloatFormat::E2M3 => (6, 2, 3),
            FloatFormat::E3M2 => (6, 3, 2),
            FloatFormat::E2M1 => (4, 2, 1),
            FloatFormat::E8M0 | FloatFormat::MxInt8 => (8, 8, 0),
        }
    }

    fn width(self) -> u32 {
        self.layout().0
    }

    /// For formats without infinities: the largest finite bit pattern.
    fn saturated_max(self) -> Option<u64> {
        match self {
            FloatFormat::E4M3 => Some(0x7e),
            FloatFormat::E2M3 | FloatFormat::E3M2 => Some(0x1f),
            FloatFormat::E2M1 => Some(0x7),
            _ => None,
        }
    }
}

/// Encodes a float literal of the given format into words.
pub(crate) fn encode_float(
    text: &str,
    format: FloatFormat,
    out: &mut Vec<u32>,
) -> Result<(), String> {
    let invalid = || format!("Invalid {}-bit float literal: {text}", format.width());
    let bits = parse_float(text, format).ok_or_else(invalid)?;
    out.push(bits as u32);
    if format == FloatFormat::F64 {
        out.push((bits >> 32) as u32);
    }
    Ok(())
}

/// Parses float text into the format's bit pattern.
pub(crate) fn parse_float(text: &str, format: FloatFormat) -> Option<u64> {
    if matches!(format, FloatFormat::E8M0 | FloatFormat::MxInt8) {
        // Exact formats: the value (read as a double) must be representable as is.
        let v = f64::from_bits(parse_float(text, FloatFormat::F64)?);
        return match format {
            FloatFormat::E8M0 => {
                let bits = v.to_bits();
                let (exp, frac) = ((bits >> 52) as i64, bits & ((1 << 52) - 1));
                // 2^k for k in -127..=127 is the byte k + 127 (0xff is NaN).
                let k = exp - 1023;
                (frac == 0 && (-127..=127).contains(&k)).then(|| (k + 127) as u64)
            }
            _ => {
                let scaled = v * 64.0;
                (scaled.fract() == 0.0 && (-127.0..=127.0).contains(&scaled))
                    .then(|| u64::from(scaled as i8 as u8))
            }
        };
    }
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    if let Some(hex) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
        return parse_hex_float(hex, negative, format);
    }
    if negative && (rest.starts_with('-') || rest.starts_with('+')) {
        return None;
    }
    if !is_decimal_float(rest) {
        return None;
    }
    let sign = if negative { -1.0 } else { 1.0 };
    if format == FloatFormat::F64 {
        let v: f64 = rest.parse().ok()?;
        return v.is_finite().then(|| (sign * v).to_bits());
    }
    let v: f32 = rest.parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    let v = (sign as f32) * v;
    if format == FloatFormat::F32 {
        return Some(u64::from(v.to_bits()));
    }
    if let Some(max) = format.saturated_max() {
        // No infinity: above the largest finite value the parse fails; an exponent above the
        // bias saturates to the largest finite value (what spirv-as does).
        let (n, e, _) = format.layout();
        let largest = f32::from_bits(truncate_f32_unchecked(max, format));
        if v.abs() > largest {
            return None;
        }
        let unbiased = ((v.to_bits() >> 23) & 0xff) as i32 - 127;
        if unbiased > (1 << (e - 1)) - 1 {
            let sign = if v.is_sign_negative() {
                1u64 << (n - 1)
            } else {
                0
            };
            return Some(sign | max);
        }
    }
    truncate_f32(v, format)
}

/// The f32 bits of a positive bit pattern of a narrow format (normal numbers only).
fn truncate_f32_unchecked(pattern: u64, format: FloatFormat) -> u32 {
    let (_, e, f) = format.layout();
    let bias = (1i32 << (e - 1)) - 1;
    let field = (pattern >> f) as i32;
    let m = (pattern & ((1 << f) - 1)) as u32;
    (((field - bias + 127) as u32) << 23) | (m << (23 - f))
}

/// C decimal float syntax as `istream >> float` accepts it: `[+-]?(d+.?d*|.d+)([eE][+-]?d+)?`.
fn is_decimal_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = i - f;
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let e = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == e {
            return false;
        }
    }
    i == b.len()
}

/// Converts an f32 to a narrower format, rounding toward zero; `None` when the exponent is too
/// large for the format (it would be infinite).
fn truncate_f32(v: f32, format: FloatFormat) -> Option<u64> {
    let (n, e, f) = format.layout();
    let bits = v.to_bits();
    let sign = u64::from(bits >> 31) << (n - 1);
    let exp = (bits >> 23) & 0xff;
    let frac = bits & 0x7f_ffff;
    if exp == 0 && frac == 0 {
        return Some(sign);
    }
    // Normalize: value = 1.m * 2^unbiased with m in 23 bits.
    let (unbiased, mant) = if exp == 0 {
        let lead = 31 - frac.leading_zeros(); // position of the leading one
        let shift = 23 - lead;
        (-126 - shift as i32, (frac << shift) & 0x7f_ffff)
    } else {
        (exp as i32 - 127, frac)
    };
    let bias = (1i32 << (e - 1)) - 1;
    if unbiased > bias {
        return None;
    }
    if n <= 8 && unbiased < -128 {
        // SPIRV-Tools narrows the exponent to the target's 8-bit integer type before encoding,
        // so tiny f32 subnormals wrap into a large exponent field (masked to its width).
        let wrapped = unbiased + 256;
        let field = ((wrapped + bias) as u64) & ((1u64 << e) - 1);
        return Some(sign | field << f | u64::from(mant) >> (23 - f));
    }
    let full = u64::from(mant | 0x80_0000); // 24 significant bits
    if unbiased >= 1 - bias {
        let field = (unbiased + bias) as u64;
        let m = u64::from(mant) >> (23 - f);
        return Some(sign | field << f | m);
    }
    // Subnormal in the target: value = full * 2^(unbiased-23) = m * 2^(1-bias-f).
    let shift = (1 - bias - unbiased) as u64 + (23 - u64::from(f));
    let m = if shift >= 64 { 0 } else { full >> shift };
    Some(sign | m)
}

/// Parses the part of a hex float after `0x` the way SPIRV-Tools' `HexFloat` stream reader
/// does: bits beyond the fraction are dropped (truncation), exponents too large give infinity
/// (or NaN when fraction bits remain at the top exponent), too small give zero.
fn parse_hex_float(body: &str, negative: bool, format: FloatFormat) -> Option<u64> {
    let (n, e, f) = format.layout();
    let b = body.as_bytes();
    // Formats narrower than a byte keep their fraction bits at the top of a byte while the
    // implicit bit of a subnormal result and the sign go to the top of the format's own width
    // (so hex subnormals of FP6/FP4 come out shifted, as spirv-as writes them).
    let storage = n.max(8);
    let mask_n: u64 = if storage == 64 {
        u64::MAX
    } else {
        (1u64 << storage) - 1
    };
    let top = storage - 1;
    // The reader's exponent arithmetic is 32-bit (64-bit for doubles) and wraps.
    let wrap = |v: i64| -> i64 { if n == 64 { v } else { v as i32 as i64 } };
    let bias = (1i64 << (e - 1)) - 1;
    let mut i = 0;
    while i < b.len() && b[i] == b'0' {
        i += 1;
    }
    let mut fraction: u64 = 0;
    let mut exponent: i64 = bias;
    let mut index: u32 = 0;
    let mut bits_written = false;
    let mut is_denorm = true;
    let write = |fraction: &mut u64, bit: u64, index: &mut u32| {
        // Bits beyond the storage width are dropped.
        if *index <= top {
            *fraction |= bit << (top - *index);
        }
        *index = index.saturating_add(1);
    };
    let (mut seen_dot, mut seen_p) = (false, false);
    while !seen_dot && !seen_p {
        let c = *b.get(i)?;
        if c == b'.' {
            seen_dot = true;
        } else if c == b'p' {
            seen_p = true;
        } else {
            let nibble = (c as char).to_digit(16)? as u64;
            is_denorm = false;
            for k in (0..4).rev() {
                let bit = (nibble >> k) & 1;
                if bits_written {
                    write(&mut fraction, bit, &mut index);
                    exponent = wrap(exponent + 1);
                }
                bits_written |= bit == 1;
            }
        }
        i += 1;
    }
    bits_written = false;
    while seen_dot && !seen_p {
        let c = *b.get(i)?;
        if c == b'p' {
            seen_p = true;
        } else {
            let nibble = (c as char).to_digit(16)? as u64;
            for k in (0..4).rev() {
                let bit = (nibble >> k) & 1;
                bits_written |= bit == 1;
                if is_denorm && !bits_written {
                    exponent = wrap(exponent - 1);
                } else {
                    write(&mut fraction, bit, &mut index);
                }
            }
        }
        i += 1;
    }
    let mut seen_sign = false;
    let mut exp_sign = 1i64;
    let mut any_digits = false;
    let mut written: i64 = 0;
    while i < b.len() {
        let c = b[i];
        if !seen_sign && !any_digits && (c == b'-' || c == b'+') {
            seen_sign = true;
            exp_sign = if c == b'-' { -1 } else { 1 };
        } else if c.is_ascii_digit() {
            any_digits = true;
            written = wrap(wrap(written * 10) + i64::from(c - b'0'));
        } else {
            return None;
        }
        i += 1;
    }
    if !any_digits {
        return None;
    }
    exponent = wrap(exponent + wrap(written * exp_sign));
    let mut is_zero = is_denorm && fraction == 0;
    if is_denorm && !is_zero {
        fraction = (fraction << 1) & mask_n;
        exponent = wrap(exponent - 1);
    } else if is_zero {
        exponent = 0;
    }
    if exponent <= 0 && !is_zero {
        fraction = (fraction >> 1) | (1u64 << (n - 1));
    }
    let frac_mask = (1u64 << f) - 1;
    fraction = (fraction >> (storage - f)) & frac_mask;
    let max_exponent = (1i64 << e) - 1;
    while exponent < 0 && !is_zero {
        fraction = (fraction >> 1) & frac_mask;
        exponent += 1;
        if fraction == 0 {
            is_zero = true;
            exponent = 0;
        }
    }
    if exponent > max_exponent {
        exponent = max_exponent;
        fraction = 0;
    }
    let sign = u64::from(negative) << (n - 1);
    Some(sign | fraction | ((exponent as u64) << f) & (max_exponent as u64) << f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(text: &str, width: u32, signed: bool) -> Result<Vec<u32>, String> {
        let mut v = Vec::new();
        encode_int(text, width, signed, &mut v).map(|_| v)
    }

    #[test]
    fn integers_follow_stream_rules() {
        assert_eq!(int("010", 32, true).unwrap(), [8]);
        assert_eq!(int("0xff", 8, true).unwrap(), [0xffff_ffff]);
        assert!(int("128", 8, true).is_err());
        assert!(int("08", 32, true).is_err());
        assert!(int("-0", 16, false).is_err());
        assert_eq!(int("-1", 64, true).unwrap(), [u32::MAX, u32::MAX]);
        assert!(int("9223372036854775808", 64, true).is_err());
        assert_eq!(
            int("0x8000000000000000", 64, true).unwrap(),
            [0, 0x8000_0000]
        );
    }

    #[test]
    fn hex_floats_truncate() {
        assert_eq!(
            parse_float("0x1.ffffff8p+0", FloatFormat::F32),
            Some(0x3fff_ffff)
        );
        assert_eq!(
            parse_float("-0x1p-149", FloatFormat::F32),
            Some(0x8000_0001)
        );
        assert_eq!(
            parse_float("0x1.8p+128", FloatFormat::F32),
            Some(0x7fc0_0000)
        );
        assert_eq!(parse_float("0x1p+16", FloatFormat::F16), Some(0x7c00));
        assert_eq!(parse_float("0x1P+2", FloatFormat::F32), None);
    }
}
