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

/// For `v` converted to float type `t` and rounded to `nearest` (its bits): the other value
/// Vulkan allows, which leaves the rounding of an inexact conversion open ("rounded to one or the
/// other" of the two neighbours; a value beyond the largest finite one may give that or the
/// infinity): the neighbour on the other side of `v`, or `nearest` itself when `v` is exact, an
/// infinity or NaN.
pub fn other_neighbour(t: Comp, v: f64, nearest: u64) -> u64 {
    let r = decode(t, nearest);
    if v.is_nan() || v.is_infinite() || r == v {
        return nearest;
    }
    // Bits are sign and magnitude: +1 is the next value away from zero, -1 the next toward it.
    if r.abs() < v.abs() {
        nearest + 1
    } else {
        nearest - 1
    }
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

/// `TensorClampMode` (SPV_NV_tensor_addressing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClampMode {
    /// Out of range is undefined behaviour (the cases stay in range).
    Undefined,
    /// Loads read the clamp value; stores are discarded.
    Constant,
    /// Coordinates clamp to the edge.
    ClampToEdge,
    /// Coordinates wrap (`OpSMod`).
    Repeat,
    /// Coordinates wrap with period `2*dim-2`, mirrored.
    RepeatMirrored,
}

impl ClampMode {
    /// Every mode.
    pub const ALL: [ClampMode; 5] = [
        ClampMode::Undefined,
        ClampMode::Constant,
        ClampMode::ClampToEdge,
        ClampMode::Repeat,
        ClampMode::RepeatMirrored,
    ];

    /// The enumerant's value.
    pub fn value(self) -> u32 {
        match self {
            ClampMode::Undefined => 0,
            ClampMode::Constant => 1,
            ClampMode::ClampToEdge => 2,
            ClampMode::Repeat => 3,
            ClampMode::RepeatMirrored => 4,
        }
    }

    /// The enumerant's name.
    pub fn name(self) -> &'static str {
        match self {
            ClampMode::Undefined => "Undefined",
            ClampMode::Constant => "Constant",
            ClampMode::ClampToEdge => "ClampToEdge",
            ClampMode::Repeat => "Repeat",
            ClampMode::RepeatMirrored => "RepeatMirrored",
        }
    }
}

/// A two-dimensional tensor layout's state after the instructions a case runs.
#[derive(Clone, Copy, Debug)]
pub struct Layout2 {
    /// layoutDimension.
    pub dim: [u32; 2],
    /// stride (in blocks).
    pub stride: [u32; 2],
    /// offset (cumulative slice offsets).
    pub offset: [i32; 2],
    /// span.
    pub span: [u32; 2],
    /// blockSize.
    pub block: [u32; 2],
    /// The type's clamp mode.
    pub mode: ClampMode,
}

/// A two-dimensional tensor view's state.
#[derive(Clone, Copy, Debug)]
pub struct View2 {
    /// viewDimension and viewStride when the view has dimensions.
    pub dims_strides: Option<([u32; 2], [u32; 2])>,
    /// The permutation.
    pub perm: [usize; 2],
    /// clipRowOffset, clipRowSpan, clipColOffset, clipColSpan.
    pub clip: [u32; 4],
}

/// Where element (row, col) of a tensor load or store goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorElement {
    /// Memory: the block index (`sum(blockCoord * stride)`), the block coordinate and the
    /// coordinate within the block.
    At {
        /// The index.
        index: u64,
        /// blockCoord.
        block: [u32; 2],
        /// coordInBlock.
        in_block: [u32; 2],
    },
    /// Constant clamp mode, a load out of range: the clamp value.
    ClampValue,
    /// Outside the view's clip: a load keeps Object's element, a store writes nothing.
    Clipped,
    /// A store out of range under a mode other than Undefined: nothing is written.
    Discarded,
    /// Out of range under Undefined: undefined behaviour.
    Undefined,
}

/// The spec's `matrixCoordToTensorElement(WithView)` (SPV_NV_cooperative_matrix2, "Tensor
/// Layout and View"), written here from the pseudo-code in 64-bit arithmetic: clip and view
/// permutation, span coordinates, offset and clamp, blocks, strides.
pub fn tensor_element(
    l: &Layout2,
    view: Option<&View2>,
    row: u32,
    col: u32,
    cols: u32,
    store: bool,
) -> TensorElement {
    let (row, col) = (u64::from(row), u64::from(col));
    let mut index = match view {
        None => row * u64::from(cols) + col,
        Some(v) => {
            let [ro, rs, co, cs] = v.clip.map(u64::from);
            if row < ro || row >= ro + rs || col < co || col >= co + cs {
                return TensorElement::Clipped;
            }
            let width = u64::from(cols).min(cs);
            let linear = (row - ro) * width + (col - co);
            let dims = v.dims_strides.map_or(l.span, |(d, _)| d).map(u64::from);
            let mut rest = linear;
            let mut view_coord = [0u64; 2];
            for dim in (0..2).rev() {
                let i = v.perm[dim];
                view_coord[i] = rest % dims[i];
                rest /= dims[i];
            }
            let strides = v
                .dims_strides
                .map_or([u64::from(l.span[1]), 1], |(_, s)| s.map(u64::from));
            view_coord[0] * strides[0] + view_coord[1] * strides[1]
        }
    };
    let mut span_coord = [0u64; 2];
    for dim in (0..2).rev() {
        let s = u64::from(l.span[dim]);
        span_coord[dim] = index % s;
        index /= s;
    }
    let (mut block, mut in_block) = ([0u32; 2], [0u32; 2]);
    for dim in 0..2 {
        let d = i64::from(l.dim[dim]);
        let mut c = span_coord[dim] as i64 + i64::from(l.offset[dim]);
        if c < 0 || c >= d {
            if store && l.mode != ClampMode::Undefined {
                return TensorElement::Discarded;
            }
            c = match l.mode {
                ClampMode::Undefined => return TensorElement::Undefined,
                ClampMode::Constant => return TensorElement::ClampValue,
                ClampMode::ClampToEdge => c.clamp(0, d - 1),
                ClampMode::Repeat => c.rem_euclid(d),
                ClampMode::RepeatMirrored => {
                    let period = 2 * d - 2;
                    let m = c.rem_euclid(period);
                    if m >= d { period - m } else { m }
                }
            };
        }
        let b = i64::from(l.block[dim]);
        block[dim] = (c / b) as u32;
        in_block[dim] = (c % b) as u32;
    }
    let index =
        u64::from(block[0]) * u64::from(l.stride[0]) + u64::from(block[1]) * u64::from(l.stride[1]);
    TensorElement::At {
        index,
        block,
        in_block,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_other_neighbour_of_an_inexact_conversion() {
        // 1 + 2^-11 lies between 1.0 (0x3c00, the nearest even) and 1 + 2^-10 (0x3c01).
        let v = 1.0 + 2f64.powi(-11);
        assert_eq!(other_neighbour(Comp::F16, v, encode(Comp::F16, v)), 0x3c01);
        // 65520 rounds to infinity; the largest finite float16 is the other choice.
        assert_eq!(
            other_neighbour(Comp::F16, -65520.0, encode(Comp::F16, -65520.0)),
            0xfbff
        );
        // Exact values have no alternative.
        assert_eq!(
            other_neighbour(Comp::BF16, 1.5, encode(Comp::BF16, 1.5)),
            0x3fc0
        );
    }

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

    fn layout(mode: ClampMode, offset: [i32; 2]) -> Layout2 {
        Layout2 {
            dim: [5, 6],
            stride: [10, 1],
            offset,
            span: [4, 4],
            block: [1, 1],
            mode,
        }
    }

    #[test]
    fn tensor_coordinates_worked_by_hand() {
        let at = |e: TensorElement| match e {
            TensorElement::At { index, .. } => Some(index),
            _ => None,
        };
        // (1, 2) of a 4x4 matrix at offset (3, 4) of a 5x6 tensor: tensor (4, 6), column 6 out.
        let l = layout(ClampMode::ClampToEdge, [3, 4]);
        assert_eq!(
            at(tensor_element(&l, None, 1, 2, 4, false)),
            Some(4 * 10 + 5)
        );
        // Repeat: column 6 -> 0; mirrored: period 10, 6 -> 4; row -1 -> 1 mirrored, 4 repeated.
        let l = layout(ClampMode::Repeat, [3, 4]);
        assert_eq!(at(tensor_element(&l, None, 1, 2, 4, false)), Some(40));
        let l = layout(ClampMode::RepeatMirrored, [3, 4]);
        assert_eq!(at(tensor_element(&l, None, 1, 2, 4, false)), Some(44));
        let l = layout(ClampMode::RepeatMirrored, [-1, 0]);
        assert_eq!(at(tensor_element(&l, None, 0, 0, 4, false)), Some(10));
        let l = layout(ClampMode::Repeat, [-1, 0]);
        assert_eq!(at(tensor_element(&l, None, 0, 0, 4, false)), Some(40));
        // Constant: a load reads the clamp value, a store is discarded; Undefined says so.
        let l = layout(ClampMode::Constant, [3, 4]);
        assert_eq!(
            tensor_element(&l, None, 1, 2, 4, false),
            TensorElement::ClampValue
        );
        assert_eq!(
            tensor_element(&l, None, 1, 2, 4, true),
            TensorElement::Discarded
        );
        let l = layout(ClampMode::Undefined, [3, 4]);
        assert_eq!(
            tensor_element(&l, None, 1, 2, 4, false),
            TensorElement::Undefined
        );
        // A transposing view: matrix (1, 2) reads tensor (2, 1).
        let l = layout(ClampMode::Undefined, [0, 0]);
        let v = View2 {
            dims_strides: None,
            perm: [1, 0],
            clip: [0, u32::MAX, 0, u32::MAX],
        };
        assert_eq!(at(tensor_element(&l, Some(&v), 1, 2, 4, false)), Some(21));
        // Blocks of 2x4: element (3, 5) is in block (1, 1), at (1, 1) within it.
        let mut l = layout(ClampMode::Undefined, [0, 0]);
        l.block = [2, 4];
        l.stride = [2, 1];
        l.span = [4, 8];
        assert_eq!(
            tensor_element(&l, None, 3, 5, 8, false),
            TensorElement::At {
                index: 3,
                block: [1, 1],
                in_block: [1, 1]
            }
        );
    }
}
