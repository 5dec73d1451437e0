//! ggml quant block formats: sizes, exact dequantization (the reference: f32 arithmetic in
//! ggml's operation order, GGML-FACTS §2 and ggml's block definitions) and a simple
//! deterministic quantizer that produces valid blocks.

use crate::GgmlError;
use crate::f16::{f16_to_f32, f32_to_f16};

/// The ggml tensor types this crate knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GgmlType {
    /// IEEE half, no blocks.
    F16,
    /// 32 x 4-bit, scale d: `(q-8)*d`.
    Q4_0,
    /// 32 x 4-bit, scale d and min m: `q*d + m`.
    Q4_1,
    /// 32 x 5-bit, scale d: `(q-16)*d`.
    Q5_0,
    /// 32 x 5-bit, scale d and min m: `q*d + m`.
    Q5_1,
    /// 32 x i8, scale d.
    Q8_0,
    /// 256-element super-block, 2-bit.
    Q2K,
    /// 256-element super-block, 3-bit.
    Q3K,
    /// 256-element super-block, 4-bit.
    Q4K,
    /// 256-element super-block, 5-bit.
    Q5K,
    /// 256-element super-block, 6-bit.
    Q6K,
    /// 32 x 4-bit non-linear table.
    IQ4NL,
    /// 32 x e2m1 with an E8M0 scale.
    MXFP4,
}

/// The iq4_nl value table (GGML-FACTS §2.4).
pub const IQ4NL_TABLE: [i8; 16] = [
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
];

/// The doubled e2m1 table of mxfp4 (GGML-FACTS §2.5).
pub const MXFP4_TABLE: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

impl GgmlType {
    /// Every type, in ggml id order.
    pub const ALL: [GgmlType; 13] = [
        Self::F16,
        Self::Q4_0,
        Self::Q4_1,
        Self::Q5_0,
        Self::Q5_1,
        Self::Q8_0,
        Self::Q2K,
        Self::Q3K,
        Self::Q4K,
        Self::Q5K,
        Self::Q6K,
        Self::IQ4NL,
        Self::MXFP4,
    ];

    /// The `ggml_type` enum value.
    pub fn type_id(self) -> u32 {
        match self {
            Self::F16 => 1,
            Self::Q4_0 => 2,
            Self::Q4_1 => 3,
            Self::Q5_0 => 6,
            Self::Q5_1 => 7,
            Self::Q8_0 => 8,
            Self::Q2K => 10,
            Self::Q3K => 11,
            Self::Q4K => 12,
            Self::Q5K => 13,
            Self::Q6K => 14,
            Self::IQ4NL => 20,
            Self::MXFP4 => 39,
        }
    }

    /// The type with a `ggml_type` enum value.
    pub fn from_type_id(id: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.type_id() == id)
    }

    /// The name used in llama.cpp shader file names (`q4_k`, `iq4_nl`, ...).
    pub fn shader_name(self) -> &'static str {
        match self {
            Self::F16 => "f16",
            Self::Q4_0 => "q4_0",
            Self::Q4_1 => "q4_1",
            Self::Q5_0 => "q5_0",
            Self::Q5_1 => "q5_1",
            Self::Q8_0 => "q8_0",
            Self::Q2K => "q2_k",
            Self::Q3K => "q3_k",
            Self::Q4K => "q4_k",
            Self::Q5K => "q5_k",
            Self::Q6K => "q6_k",
            Self::IQ4NL => "iq4_nl",
            Self::MXFP4 => "mxfp4",
        }
    }

    /// The type whose shader name is `name`.
    pub fn from_shader_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.shader_name() == name)
    }

    /// Elements per block (QUANT_K).
    pub fn block_elems(self) -> usize {
        match self {
            Self::F16 => 1,
            Self::Q2K | Self::Q3K | Self::Q4K | Self::Q5K | Self::Q6K => 256,
            _ => 32,
        }
    }

    /// Bytes per block.
    pub fn block_bytes(self) -> usize {
        match self {
            Self::F16 => 2,
            Self::Q4_0 | Self::IQ4NL => 18,
            Self::Q4_1 => 20,
            Self::Q5_0 => 22,
            Self::Q5_1 => 24,
            Self::Q8_0 => 34,
            Self::Q2K => 84,
            Self::Q3K => 110,
            Self::Q4K => 144,
            Self::Q5K => 176,
            Self::Q6K => 210,
            Self::MXFP4 => 17,
        }
    }

    /// Bytes of a row of `n` elements (`n` a multiple of [`Self::block_elems`]).
    pub fn row_bytes(self, n: usize) -> Result<usize, GgmlError> {
        let k = self.block_elems();
        if !n.is_multiple_of(k) {
            return Err(GgmlError::NotBlockMultiple { ty: self, n, k });
        }
        Ok(n / k * self.block_bytes())
    }
}

fn h(b: &[u8], off: usize) -> f32 {
    f16_to_f32(u16::from_le_bytes([b[off], b[off + 1]]))
}

/// Nibble of element `i` in the N32 pattern: low nibble of `qs[i]` for i < 16, high nibble of
/// `qs[i-16]` otherwise.
fn nib32(qs: &[u8], i: usize) -> u8 {
    if i < 16 { qs[i] & 0xf } else { qs[i - 16] >> 4 }
}

/// 6-bit scale and min of sub-block `j` of q4_K / q5_K (`get_scale_min_k4`).
pub fn scale_min_k4(scales: &[u8], j: usize) -> (u8, u8) {
    if j < 4 {
        (scales[j] & 63, scales[j + 4] & 63)
    } else {
        (
            (scales[j + 4] & 0xf) | ((scales[j - 4] >> 6) << 4),
            (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4),
        )
    }
}

/// The 16 6-bit scales of q3_K (stored with a +32 bias; returned unbiased).
pub fn q3k_scales(s: &[u8]) -> [i8; 16] {
    let mut out = [0i8; 16];
    for k in 0..4 {
        out[k] = ((s[k] & 0xf) | ((s[8 + k] & 3) << 4)) as i8 - 32;
        out[4 + k] = ((s[4 + k] & 0xf) | (((s[8 + k] >> 2) & 3) << 4)) as i8 - 32;
        out[8 + k] = ((s[k] >> 4) | (((s[8 + k] >> 4) & 3) << 4)) as i8 - 32;
        out[12 + k] = ((s[4 + k] >> 4) | (((s[8 + k] >> 6) & 3) << 4)) as i8 - 32;
    }
    out
}

/// Dequantizes one block (`b.len() == ty.block_bytes()`) into `ty.block_elems()` f32 values.
pub fn dequantize_block(ty: GgmlType, b: &[u8]) -> Result<Vec<f32>, GgmlError> {
    if b.len() != ty.block_bytes() {
        return Err(GgmlError::BlockSize { ty, got: b.len() });
    }
    let n = ty.block_elems();
    let mut y = vec![0f32; n];
    match ty {
        GgmlType::F16 => y[0] = h(b, 0),
        GgmlType::Q4_0 => {
            let d = h(b, 0);
            for (i, y) in y.iter_mut().enumerate() {
                *y = (nib32(&b[2..], i) as i32 - 8) as f32 * d;
            }
        }
        GgmlType::Q4_1 => {
            let (d, m) = (h(b, 0), h(b, 2));
            for (i, y) in y.iter_mut().enumerate() {
                *y = nib32(&b[4..], i) as f32 * d + m;
            }
        }
        GgmlType::Q5_0 | GgmlType::Q5_1 => {
            let one = ty == GgmlType::Q5_1;
            let d = h(b, 0);
            let m = if one { h(b, 2) } else { 0.0 };
            let o = if one { 4 } else { 2 };
            let qh = u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
            let qs = &b[o + 4..];
            for (i, y) in y.iter_mut().enumerate() {
                let q = nib32(qs, i) as i32 | ((((qh >> i) & 1) as i32) << 4);
                *y = if one {
                    q as f32 * d + m
                } else {
                    (q - 16) as f32 * d
                };
            }
        }
        GgmlType::Q8_0 => {
            let d = h(b, 0);
            for (i, y) in y.iter_mut().enumerate() {
                *y = b[2 + i] as i8 as f32 * d;
            }
        }
        GgmlType::IQ4NL => {
            let d = h(b, 0);
            for (i, y) in y.iter_mut().enumerate() {
                *y = d * IQ4NL_TABLE[nib32(&b[2..], i) as usize] as f32;
            }
        }
        GgmlType::MXFP4 => {
            // 2^(e-128) as an f32 (denormal for e < 2), times the doubled table.
            let d = (2f64).powi(b[0] as i32 - 128) as f32;
            for (i, y) in y.iter_mut().enumerate() {
                *y = MXFP4_TABLE[nib32(&b[1..], i) as usize] as f32 * d;
            }
        }
        GgmlType::Q2K => {
            let (scales, qs) = (&b[0..16], &b[16..80]);
            let (d, dmin) = (h(b, 80), h(b, 82));
            for (e, y) in y.iter_mut().enumerate() {
                let (n128, j, hh, l) = (e / 128, (e / 32) % 4, (e / 16) % 2, e % 16);
                let sc = scales[e / 16];
                let q = (qs[32 * n128 + 16 * hh + l] >> (2 * j)) & 3;
                let dl = d * (sc & 0xf) as f32;
                let ml = dmin * (sc >> 4) as f32;
                *y = dl * q as f32 - ml;
            }
        }
        GgmlType::Q3K => {
            let (hmask, qs, sc) = (&b[0..32], &b[32..96], q3k_scales(&b[96..108]));
            let d = h(b, 108);
            for (e, y) in y.iter_mut().enumerate() {
                let (n128, j, hh, l) = (e / 128, (e / 32) % 4, (e / 16) % 2, e % 16);
                let q = ((qs[32 * n128 + 16 * hh + l] >> (2 * j)) & 3) as i32;
                let bit = 1u8 << (4 * n128 + j);
                let hi = if hmask[16 * hh + l] & bit != 0 { 0 } else { 4 };
                let dl = d * sc[e / 16] as f32;
                *y = dl * (q - hi) as f32;
            }
        }
        GgmlType::Q4K | GgmlType::Q5K => {
            let (d, dmin) = (h(b, 0), h(b, 2));
            let scales = &b[4..16];
            let five = ty == GgmlType::Q5K;
            let (qh, qs) = if five {
                (&b[16..48], &b[48..176])
            } else {
                (&b[0..0], &b[16..144])
            };
            for (e, y) in y.iter_mut().enumerate() {
                let (chunk, hi, l) = (e / 64, (e % 64) / 32, e % 32);
                let (sc, m) = scale_min_k4(scales, e / 32);
                let byte = qs[32 * chunk + l];
                let mut q = if hi == 0 { byte & 0xf } else { byte >> 4 } as u32;
                if five && qh[l] & (1 << (2 * chunk + hi)) != 0 {
                    q += 16;
                }
                let d1 = d * sc as f32;
                let m1 = dmin * m as f32;
                *y = d1 * q as f32 - m1;
            }
        }
        GgmlType::Q6K => {
            let (ql, qh, sc) = (&b[0..128], &b[128..192], &b[192..208]);
            let d = h(b, 208);
            for (e, y) in y.iter_mut().enumerate() {
                let (n128, g, l) = (e / 128, (e % 128) / 32, e % 32);
                let lo = ql[64 * n128 + l + 32 * (g & 1)];
                let lo = if g < 2 { lo & 0xf } else { lo >> 4 };
                let hi = (qh[32 * n128 + l] >> (2 * g)) & 3;
                let q = (lo | (hi << 4)) as i32 - 32;
                *y = d * sc[e / 16] as i8 as f32 * q as f32;
            }
        }
    }
    Ok(y)
}

/// Dequantizes a row of whole blocks.
pub fn dequantize_row(ty: GgmlType, bytes: &[u8]) -> Result<Vec<f32>, GgmlError> {
    let bb = ty.block_bytes();
    if !bytes.len().is_multiple_of(bb) {
        return Err(GgmlError::BlockSize {
            ty,
            got: bytes.len() % bb,
        });
    }
    let mut out = Vec::with_capacity(bytes.len() / bb * ty.block_elems());
    for b in bytes.chunks(bb) {
        out.extend(dequantize_block(ty, b)?);
    }
    Ok(out)
}

fn put_h(b: &mut [u8], off: usize, v: f32) {
    b[off..off + 2].copy_from_slice(&f32_to_f16(v).to_le_bytes());
}

/// Index of the table entry nearest to `x`.
fn nearest(table: &[f32], x: f32) -> usize {
    let mut best = 0;
    for (i, &t) in table.iter().enumerate() {
        if (t - x).abs() < (table[best] - x).abs() {
            best = i;
        }
    }
    best
}

fn signed_absmax(x: &[f32]) -> f32 {
    x.iter()
        .copied()
        .fold(0f32, |m, v| if v.abs() > m.abs() { v } else { m })
}

fn q_round(x: f32, lo: i32, hi: i32) -> i32 {
    (x.round() as i32).clamp(lo, hi)
}

fn inv(d: f32) -> f32 {
    if d != 0.0 { 1.0 / d } else { 0.0 }
}

/// Sets the N32 nibble of element `i`.
fn set_nib32(qs: &mut [u8], i: usize, v: u8) {
    if i < 16 {
        qs[i] = (qs[i] & 0xf0) | (v & 0xf);
    } else {
        qs[i - 16] = (qs[i - 16] & 0x0f) | (v << 4);
    }
}

/// Quantizes one block of `ty.block_elems()` finite values. The quantizer is simple (per-block
/// or per-sub-block absmax / min-max with round to nearest); it only promises valid blocks whose
/// dequantization is close to the input.
pub fn quantize_block(ty: GgmlType, x: &[f32]) -> Result<Vec<u8>, GgmlError> {
    if x.len() != ty.block_elems() {
        return Err(GgmlError::NotBlockMultiple {
            ty,
            n: x.len(),
            k: ty.block_elems(),
        });
    }
    let mut b = vec![0u8; ty.block_bytes()];
    match ty {
        GgmlType::F16 => put_h(&mut b, 0, x[0]),
        GgmlType::Q4_0 | GgmlType::Q5_0 => {
            let half = if ty == GgmlType::Q4_0 { 8 } else { 16 };
            let d = signed_absmax(x) / -(half as f32);
            put_h(&mut b, 0, d);
            let id = inv(crate::f16::round_f16(d));
            let mut qh = 0u32;
            let qs_off = if ty == GgmlType::Q4_0 { 2 } else { 6 };
            for (i, &v) in x.iter().enumerate() {
                let q = q_round(v * id + half as f32, 0, 2 * half - 1) as u8;
                set_nib32(&mut b[qs_off..], i, q & 0xf);
                qh |= ((q >> 4) as u32 & 1) << i;
            }
            if ty == GgmlType::Q5_0 {
                b[2..6].copy_from_slice(&qh.to_le_bytes());
            }
        }
        GgmlType::Q4_1 | GgmlType::Q5_1 => {
            let levels = if ty == GgmlType::Q4_1 { 15 } else { 31 };
            let min = x.iter().copied().fold(f32::INFINITY, f32::min);
            let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let d = (max - min) / levels as f32;
            put_h(&mut b, 0, d);
            put_h(&mut b, 2, min);
            let (d, min) = (crate::f16::round_f16(d), crate::f16::round_f16(min));
            let id = inv(d);
            let mut qh = 0u32;
            let qs_off = if ty == GgmlType::Q4_1 { 4 } else { 8 };
            for (i, &v) in x.iter().enumerate() {
                let q = q_round((v - min) * id, 0, levels) as u8;
                set_nib32(&mut b[qs_off..], i, q & 0xf);
                qh |= ((q >> 4) as u32 & 1) << i;
            }
            if ty == GgmlType::Q5_1 {
                b[4..8].copy_from_slice(&qh.to_le_bytes());
            }
        }
        GgmlType::Q8_0 => {
            let amax = x.iter().fold(0f32, |m, v| m.max(v.abs()));
            let d = amax / 127.0;
            put_h(&mut b, 0, d);
            let id = inv(crate::f16::round_f16(d));
            for (i, &v) in x.iter().enumerate() {
                b[2 + i] = q_round(v * id, -127, 127) as i8 as u8;
            }
        }
        GgmlType::IQ4NL => {
            let d = crate::f16::round_f16(signed_absmax(x) / IQ4NL_TABLE[0] as f32);
            put_h(&mut b, 0, d);
            let table: Vec<f32> = IQ4NL_TABLE.iter().map(|&t| d * t as f32).collect();
            for (i, &v) in x.iter().enumerate() {
                set_nib32(&mut b[2..], i, nearest(&table, v) as u8);
            }
        }
        GgmlType::MXFP4 => {
            // Smallest e with amax <= 12 * 2^(e-128) (the table's largest magnitude).
            let amax = x.iter().fold(0f32, |m, v| m.max(v.abs())) as f64;
            let e = if amax == 0.0 {
                0
            } else {
                ((amax / 12.0).log2().ceil() as i32 + 128).clamp(0, 254)
            };
            b[0] = e as u8;
            let d = (2f64).powi(e - 128) as f32;
            let table: Vec<f32> = MXFP4_TABLE.iter().map(|&t| t as f32 * d).collect();
            for (i, &v) in x.iter().enumerate() {
                set_nib32(&mut b[1..], i, nearest(&table, v) as u8);
            }
        }
        GgmlType::Q2K => quantize_q2k(x, &mut b),
        GgmlType::Q3K => quantize_q3k(x, &mut b),
        GgmlType::Q4K | GgmlType::Q5K => quantize_q45k(ty, x, &mut b),
        GgmlType::Q6K => quantize_q6k(x, &mut b),
    }
    Ok(b)
}

/// Per sub-block (scale, -min) with min clamped to <= 0, for `y = scale*q - negmin`.
fn sub_scale_min(x: &[f32], levels: f32) -> (f32, f32) {
    let min = x.iter().copied().fold(0f32, f32::min);
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    ((max - min).max(0.0) / levels, -min)
}

fn quantize_q2k(x: &[f32], b: &mut [u8]) {
    let sm: Vec<(f32, f32)> = x.chunks(16).map(|c| sub_scale_min(c, 3.0)).collect();
    let d = sm.iter().fold(0f32, |m, s| m.max(s.0)) / 15.0;
    let dmin = sm.iter().fold(0f32, |m, s| m.max(s.1)) / 15.0;
    put_h(b, 80, d);
    put_h(b, 82, dmin);
    let (d, dmin) = (h(b, 80), h(b, 82));
    for (j, &(s, m)) in sm.iter().enumerate() {
        let sc = q_round(s * inv(d), 0, 15) as u8;
        let mn = q_round(m * inv(dmin), 0, 15) as u8;
        b[j] = sc | (mn << 4);
    }
    for (e, &v) in x.iter().enumerate() {
        let sc = b[e / 16];
        let dl = d * (sc & 0xf) as f32;
        let ml = dmin * (sc >> 4) as f32;
        let q = q_round((v + ml) * inv(dl), 0, 3) as u8;
        let (n128, j, hh, l) = (e / 128, (e / 32) % 4, (e / 16) % 2, e % 16);
        b[16 + 32 * n128 + 16 * hh + l] |= q << (2 * j);
    }
}

fn quantize_q3k(x: &[f32], b: &mut [u8]) {
    let s: Vec<f32> = x.chunks(16).map(|c| signed_absmax(c) / -4.0).collect();
    let d = s.iter().fold(0f32, |m, v| m.max(v.abs())) / 31.0;
    put_h(b, 108, d);
    let d = h(b, 108);
    let mut sc = [0i8; 16];
    for (j, &v) in s.iter().enumerate() {
        sc[j] = q_round(v * inv(d), -32, 31) as i8;
    }
    // Pack the biased 6-bit scales (inverse of `q3k_scales`).
    let u: Vec<u8> = sc.iter().map(|&v| (v as i32 + 32) as u8).collect();
    let p = &mut b[96..108];
    for k in 0..4 {
        p[k] = (u[k] & 0xf) | ((u[8 + k] & 0xf) << 4);
        p[4 + k] = (u[4 + k] & 0xf) | ((u[12 + k] & 0xf) << 4);
        p[8 + k] =
            (u[k] >> 4) | ((u[4 + k] >> 4) << 2) | ((u[8 + k] >> 4) << 4) | ((u[12 + k] >> 4) << 6);
    }
    for (e, &v) in x.iter().enumerate() {
        let dl = d * sc[e / 16] as f32;
        let q = q_round(v * inv(dl), -4, 3) + 4; // 0..7
        let (n128, j, hh, l) = (e / 128, (e / 32) % 4, (e / 16) % 2, e % 16);
        b[32 + 32 * n128 + 16 * hh + l] |= ((q & 3) as u8) << (2 * j);
        if q >= 4 {
            b[16 * hh + l] |= 1u8 << (4 * n128 + j);
        }
    }
}

fn quantize_q45k(ty: GgmlType, x: &[f32], b: &mut [u8]) {
    let five = ty == GgmlType::Q5K;
    let levels = if five { 31.0 } else { 15.0 };
    let sm: Vec<(f32, f32)> = x.chunks(32).map(|c| sub_scale_min(c, levels)).collect();
    let d = sm.iter().fold(0f32, |m, s| m.max(s.0)) / 63.0;
    let dmin = sm.iter().fold(0f32, |m, s| m.max(s.1)) / 63.0;
    put_h(b, 0, d);
    put_h(b, 2, dmin);
    let (d, dmin) = (h(b, 0), h(b, 2));
    let sc: Vec<u8> = sm
        .iter()
        .map(|s| q_round(s.0 * inv(d), 0, 63) as u8)
        .collect();
    let mn: Vec<u8> = sm
        .iter()
        .map(|s| q_round(s.1 * inv(dmin), 0, 63) as u8)
        .collect();
    let p = &mut b[4..16];
    for j in 0..4 {
        p[j] = sc[j] | ((sc[j + 4] >> 4) << 6);
        p[j + 4] = mn[j] | ((mn[j + 4] >> 4) << 6);
        p[j + 8] = (sc[j + 4] & 0xf) | ((mn[j + 4] & 0xf) << 4);
    }
    let qs_off = if five { 48 } else { 16 };
    for (e, &v) in x.iter().enumerate() {
        let j = e / 32;
        let d1 = d * sc[j] as f32;
        let m1 = dmin * mn[j] as f32;
        let q = q_round((v + m1) * inv(d1), 0, levels as i32) as u8;
        let (chunk, hi, l) = (e / 64, (e % 64) / 32, e % 32);
        b[qs_off + 32 * chunk + l] |= (q & 0xf) << (4 * hi);
        if five && q >= 16 {
            b[16 + l] |= 1 << (2 * chunk + hi);
        }
    }
}

fn quantize_q6k(x: &[f32], b: &mut [u8]) {
    let s: Vec<f32> = x.chunks(16).map(|c| signed_absmax(c) / -32.0).collect();
    let d = s.iter().fold(0f32, |m, v| m.max(v.abs())) / 127.0;
    put_h(b, 208, d);
    let d = h(b, 208);
    for (j, &v) in s.iter().enumerate() {
        b[192 + j] = q_round(v * inv(d), -128, 127) as i8 as u8;
    }
    for (e, &v) in x.iter().enumerate() {
        let dl = d * b[192 + e / 16] as i8 as f32;
        let q = (q_round(v * inv(dl), -32, 31) + 32) as u8;
        let (n128, g, l) = (e / 128, (e % 128) / 32, e % 32);
        let lo = &mut b[64 * n128 + l + 32 * (g & 1)];
        *lo |= (q & 0xf) << if g < 2 { 0 } else { 4 };
        b[128 + 32 * n128 + l] |= (q >> 4) << (2 * g);
    }
}

/// Quantizes a row (length a multiple of the block size).
pub fn quantize_row(ty: GgmlType, x: &[f32]) -> Result<Vec<u8>, GgmlError> {
    let k = ty.block_elems();
    if !x.len().is_multiple_of(k) {
        return Err(GgmlError::NotBlockMultiple { ty, n: x.len(), k });
    }
    let mut out = Vec::with_capacity(x.len() / k * ty.block_bytes());
    for c in x.chunks(k) {
        out.extend(quantize_block(ty, c)?);
    }
    Ok(out)
}
