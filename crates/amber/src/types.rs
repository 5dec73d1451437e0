//! AmberScript data types (`DATA_TYPE uint32`, `vec3<float>`, `mat4x4<double>`) and their memory layout under
//! the std140 / std430 rules (Vulkan spec, "Offset and Stride Assignment"; GLSL 4.60 §7.6.2.2).

use std::fmt;

/// A scalar component type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// `int8`
    I8,
    /// `int16`
    I16,
    /// `int32`
    I32,
    /// `int64`
    I64,
    /// `uint8`
    U8,
    /// `uint16`
    U16,
    /// `uint32`
    U32,
    /// `uint64`
    U64,
    /// `float16`
    F16,
    /// `float`
    F32,
    /// `double`
    F64,
}

impl Scalar {
    /// Parses an Amber scalar type name.
    pub fn parse(name: &str) -> Option<Scalar> {
        Some(match name {
            "int8" => Scalar::I8,
            "int16" => Scalar::I16,
            "int32" => Scalar::I32,
            "int64" => Scalar::I64,
            "uint8" => Scalar::U8,
            "uint16" => Scalar::U16,
            "uint32" => Scalar::U32,
            "uint64" => Scalar::U64,
            "float16" => Scalar::F16,
            "float" => Scalar::F32,
            "double" => Scalar::F64,
            _ => return None,
        })
    }

    /// Size in bytes.
    pub fn size(self) -> usize {
        match self {
            Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 | Scalar::F16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }

    /// True for the floating-point types.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::F32 | Scalar::F64)
    }

    /// True for the signed integer types.
    pub fn is_signed_int(self) -> bool {
        matches!(self, Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64)
    }

    /// Encodes `v` as this type, little-endian, into `out` (which has `self.size()` bytes).
    pub fn encode(self, v: Value, out: &mut [u8]) {
        let n = self.size();
        if self.is_float() {
            let f = v.as_f64();
            match self {
                Scalar::F16 => out.copy_from_slice(&f16_bits_truncated(f as f32).to_le_bytes()),
                Scalar::F32 => out.copy_from_slice(&(f as f32).to_bits().to_le_bytes()),
                _ => out.copy_from_slice(&f.to_bits().to_le_bytes()),
            }
        } else {
            // Two's complement truncation: negative values in unsigned buffers wrap, as in Amber.
            let bits = v.as_i128() as u128 as u64;
            out.copy_from_slice(&bits.to_le_bytes()[..n]);
        }
    }

    /// Decodes a little-endian value of this type.
    pub fn decode(self, bytes: &[u8]) -> Value {
        let mut raw = [0u8; 8];
        raw[..self.size()].copy_from_slice(&bytes[..self.size()]);
        let u = u64::from_le_bytes(raw);
        match self {
            Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 => Value::Int(u as i128),
            Scalar::I8 => Value::Int(u as u8 as i8 as i128),
            Scalar::I16 => Value::Int(u as u16 as i16 as i128),
            Scalar::I32 => Value::Int(u as u32 as i32 as i128),
            Scalar::I64 => Value::Int(u as i64 as i128),
            Scalar::F16 => Value::Float(half::f16::from_bits(u as u16).to_f64()),
            Scalar::F32 => Value::Float(f32::from_bits(u as u32) as f64),
            Scalar::F64 => Value::Float(f64::from_bits(u)),
        }
    }

    /// Rounds `v` to what this type can hold (used to compare expected values in the buffer's own precision).
    pub fn round(self, v: Value) -> Value {
        if self == Scalar::F16 {
            // Results are rounded to nearest by the engine; compare against the nearest float16.
            return Value::Float(half::f16::from_f64(v.as_f64()).to_f64());
        }
        let mut b = [0u8; 8];
        self.encode(v, &mut b[..self.size()]);
        self.decode(&b)
    }
}

/// Amber's float -> float16 conversion: the float's mantissa is truncated (rounded toward zero), not rounded to
/// nearest. CTS expectations depend on it: `determinant_compute_fp16_mat_3x3.amber` expects 5140 ± 4, the
/// determinant of its inputs truncated to float16 (5141.76); rounded to nearest they give 5150.1.
pub fn f16_bits_truncated(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let a = x.abs();
    if a.is_nan() {
        return sign | 0x7e00;
    }
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    if exp >= 31 {
        // Too large for float16 (or infinite).
        return sign | 0x7c00;
    }
    if exp >= 1 {
        return sign | ((exp as u16) << 10) | ((bits & 0x7f_ffff) >> 13) as u16;
    }
    // Subnormal float16 (or zero): a count of 2^-24 units, truncated.
    sign | (a * 16_777_216.0) as u16
}

/// A literal from a script: integers keep full precision (uint64 / int64 data), other numbers are doubles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An integer literal (decimal or `0x` hex, possibly negative).
    Int(i128),
    /// A floating-point literal (including `nan`, `inf`).
    Float(f64),
}

impl Value {
    /// Parses a numeric token.
    pub fn parse(tok: &str) -> Option<Value> {
        let (neg, body) = match tok.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, tok.strip_prefix('+').unwrap_or(tok)),
        };
        let sign = |x: i128| if neg { -x } else { x };
        if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            return i128::from_str_radix(hex, 16)
                .ok()
                .map(|x| Value::Int(sign(x)));
        }
        if !body.is_empty() && body.bytes().all(|c| c.is_ascii_digit()) {
            return body.parse::<i128>().ok().map(|x| Value::Int(sign(x)));
        }
        let lower = body.to_ascii_lowercase();
        let f = match lower.as_str() {
            "nan" => f64::NAN,
            "inf" | "infinity" => f64::INFINITY,
            _ => {
                // Rust's float parser accepts forms such as "1." and ".5" but also "inf"/"nan" spellings we handled.
                if !lower
                    .bytes()
                    .next()
                    .is_some_and(|c| c.is_ascii_digit() || c == b'.')
                {
                    return None;
                }
                lower.parse::<f64>().ok()?
            }
        };
        Some(Value::Float(if neg { -f } else { f }))
    }

    /// The value as a double.
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Int(i) => i as f64,
            Value::Float(f) => f,
        }
    }

    /// The value as an integer (floats truncate toward zero, saturating).
    pub fn as_i128(self) -> i128 {
        match self {
            Value::Int(i) => i,
            Value::Float(f) => f as i128,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
        }
    }
}

/// Buffer memory layout rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Layout {
    /// std140 (uniform-buffer rules: array strides and matrix columns round up to 16 bytes).
    Std140,
    /// std430 (Amber's default).
    #[default]
    Std430,
}

/// A buffer element type: a scalar, vector (`rows` components) or column-major matrix (`cols` columns of `rows`),
/// possibly marked as an array element (`T[]`), or the texel of a Vulkan format (`R32G32B32A32_SFLOAT`: its
/// components packed without padding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataType {
    /// Component type.
    pub scalar: Scalar,
    /// Components of a vector / rows of a matrix column (1 for a scalar).
    pub rows: u32,
    /// Matrix columns (1 for scalars and vectors).
    pub cols: u32,
    /// `T[]`: the buffer is an array of `T`, which std140 pads to 16 bytes an element.
    pub array: bool,
    /// A Vulkan format's texel: components one after the other, whatever the layout.
    pub packed: bool,
}

/// Why a `DATA_TYPE` was not taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeError {
    /// Not a type Amber knows.
    Unknown,
    /// A Vulkan format Amber knows whose texels this runner does not lay out (packed bit fields, mixed
    /// component widths): only graphics scripts use them.
    UnsupportedFormat,
}

impl DataType {
    /// A scalar, vector or matrix type, not an array and not a packed format.
    pub fn plain(scalar: Scalar, rows: u32, cols: u32) -> DataType {
        DataType {
            scalar,
            rows,
            cols,
            array: false,
            packed: false,
        }
    }
}

impl DataType {
    /// Parses `uint32`, `vec4<float>`, `mat3x3<float16>` (Amber's `matCxR`: C columns, R rows), `T[]`, and
    /// Vulkan format names such as `R8G8B8A8_UNORM`.
    pub fn parse(s: &str) -> Option<DataType> {
        Self::parse_checked(s).ok()
    }

    /// [`DataType::parse`] telling an unknown name from a format it does not lay out.
    pub fn parse_checked(s: &str) -> Result<DataType, TypeError> {
        if let Some(inner) = s.strip_suffix("[]") {
            let t = Self::parse_number(inner).ok_or(TypeError::Unknown)?;
            return Ok(DataType { array: true, ..t });
        }
        if let Some(t) = Self::parse_number(s) {
            return Ok(t);
        }
        Self::parse_format(s)
    }

    fn parse_number(s: &str) -> Option<DataType> {
        let plain = DataType::plain;
        if let Some(scalar) = Scalar::parse(s) {
            return Some(plain(scalar, 1, 1));
        }
        let (head, inner) = s.strip_suffix('>')?.split_once('<')?;
        let scalar = Scalar::parse(inner)?;
        let dim = |d: &str| d.parse::<u32>().ok().filter(|n| (2..=4).contains(n));
        if let Some(n) = head.strip_prefix("vec") {
            return Some(plain(scalar, dim(n)?, 1));
        }
        let (c, r) = head.strip_prefix("mat")?.split_once('x')?;
        Some(plain(scalar, dim(r)?, dim(c)?))
    }

    /// A Vulkan format name (`VkFormat` without `VK_FORMAT_`): components `R|G|B|A|D|S|X` with bit widths, then
    /// the numeric format. Amber stores every component by its width: UNORM, SNORM, SCALED and SRGB
    /// components hold the integers the script gives (Amber's `Buffer::WriteValueFromComponent`).
    fn parse_format(s: &str) -> Result<DataType, TypeError> {
        let mut parts = s.split('_');
        let comps = parts.next().ok_or(TypeError::Unknown)?;
        let mode = parts.next().ok_or(TypeError::Unknown)?;
        let rest: Vec<&str> = parts.collect();
        let mut widths = Vec::new();
        let mut chars = comps.chars().peekable();
        while let Some(c) = chars.next() {
            if !"RGBADSX".contains(c) {
                return Err(TypeError::Unknown);
            }
            let mut digits = String::new();
            while let Some(d) = chars.next_if(|d| d.is_ascii_digit()) {
                digits.push(d);
            }
            widths.push(digits.parse::<u32>().map_err(|_| TypeError::Unknown)?);
        }
        let signed = match mode {
            "SFLOAT" | "SINT" | "SNORM" | "SSCALED" => true,
            "UFLOAT" | "UINT" | "UNORM" | "USCALED" | "SRGB" => false,
            _ => return Err(TypeError::Unknown),
        };
        if widths.is_empty() || widths.len() > 4 {
            return Err(TypeError::Unknown);
        }
        // Packed (`_PACK32`), mixed-width or multi-mode formats (`D24_UNORM_S8_UINT`).
        if !rest.is_empty() || widths.iter().any(|&w| w != widths[0]) {
            return Err(TypeError::UnsupportedFormat);
        }
        let scalar = match (mode, widths[0]) {
            ("SFLOAT", 16) => Scalar::F16,
            ("SFLOAT", 32) => Scalar::F32,
            ("SFLOAT", 64) => Scalar::F64,
            ("SFLOAT" | "UFLOAT", _) => return Err(TypeError::UnsupportedFormat),
            (_, 8) if signed => Scalar::I8,
            (_, 16) if signed => Scalar::I16,
            (_, 32) if signed => Scalar::I32,
            (_, 64) if signed => Scalar::I64,
            (_, 8) => Scalar::U8,
            (_, 16) => Scalar::U16,
            (_, 32) => Scalar::U32,
            (_, 64) => Scalar::U64,
            _ => return Err(TypeError::UnsupportedFormat),
        };
        Ok(DataType {
            scalar,
            rows: widths.len() as u32,
            cols: 1,
            array: false,
            packed: true,
        })
    }

    /// Number of values in one element.
    pub fn components(&self) -> usize {
        (self.rows * self.cols) as usize
    }

    /// Byte offsets of the values of one element, and the element stride, under `layout`, as Amber lays them
    /// out (its `Format` segments): a column of `rows` values, padded to four values for a vec3, a matrix with
    /// three rows, and under std140 any matrix or array element; a format's texel is never padded.
    pub fn element_layout(&self, layout: Layout) -> ElementLayout {
        let s = self.scalar.size();
        let rows = self.rows as usize;
        let padded = !self.packed
            && (rows == 3 || (layout == Layout::Std140 && (self.cols > 1 || self.array)));
        let column = if padded { 4 * s } else { rows * s };
        let offsets = (0..self.cols as usize)
            .flat_map(|c| (0..rows).map(move |r| c * column + r * s))
            .collect();
        ElementLayout {
            offsets,
            stride: column * self.cols as usize,
            scalar: self.scalar,
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self.scalar {
            Scalar::I8 => "int8",
            Scalar::I16 => "int16",
            Scalar::I32 => "int32",
            Scalar::I64 => "int64",
            Scalar::U8 => "uint8",
            Scalar::U16 => "uint16",
            Scalar::U32 => "uint32",
            Scalar::U64 => "uint64",
            Scalar::F16 => "float16",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
        };
        match (self.cols, self.rows) {
            (1, 1) => write!(f, "{s}"),
            (1, r) => write!(f, "vec{r}<{s}>"),
            (c, r) => write!(f, "mat{c}x{r}<{s}>"),
        }
    }
}

/// Where the values of one element lie.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementLayout {
    /// Byte offset of each value within the element (padding is whatever is not listed).
    pub offsets: Vec<usize>,
    /// Bytes from one element to the next.
    pub stride: usize,
    /// Component type.
    pub scalar: Scalar,
}

impl ElementLayout {
    /// Byte offsets of consecutive values starting at byte `start`, where `start` is taken as the start of an
    /// element (Amber's `EXPECT ... IDX` is a byte offset), never reading past `len` bytes.
    pub fn value_offsets(&self, start: usize, len: usize) -> impl Iterator<Item = usize> + '_ {
        let size = self.scalar.size();
        // A start past the end yields nothing (and cannot overflow below).
        let elements = if start <= len {
            (len - start) / self.stride + 1
        } else {
            0
        };
        (0..elements)
            .flat_map(move |e: usize| {
                self.offsets
                    .iter()
                    .map(move |o| start + e * self.stride + o)
            })
            .take_while(move |&o| o + size <= len)
    }

    /// Packs `values` (in order, padding left zero) into a buffer of at least `min_elements` elements.
    pub fn pack(&self, values: &[Value], min_elements: usize) -> Vec<u8> {
        let per = self.offsets.len();
        let elements = values.len().div_ceil(per).max(min_elements);
        let mut out = vec![0u8; elements * self.stride];
        let size = self.scalar.size();
        for (v, off) in values.iter().zip(self.value_offsets(0, out.len())) {
            self.scalar.encode(*v, &mut out[off..off + size]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_types() {
        assert_eq!(DataType::parse("uint32").unwrap().components(), 1);
        let v = DataType::parse("vec3<float>").unwrap();
        assert_eq!((v.rows, v.cols, v.scalar), (3, 1, Scalar::F32));
        let m = DataType::parse("mat2x4<double>").unwrap();
        assert_eq!((m.cols, m.rows), (2, 4));
        assert!(DataType::parse("vec5<float>").is_none());
        assert!(DataType::parse("vec2<quad>").is_none());
        assert_eq!(m.to_string(), "mat2x4<double>");
    }

    #[test]
    fn std430_and_std140_layouts() {
        // GLSL 4.60 §7.6.2.2 rules 3, 4, 5, 9 computed by hand.
        let vec3 = DataType::parse("vec3<float>").unwrap();
        assert_eq!(vec3.element_layout(Layout::Std430).stride, 16);
        assert_eq!(vec3.element_layout(Layout::Std430).offsets, [0, 4, 8]);
        let f = DataType::parse("float").unwrap();
        assert_eq!(f.element_layout(Layout::Std430).stride, 4);
        // Amber pads std140 scalars and vectors only as array elements (`float[]`).
        assert_eq!(f.element_layout(Layout::Std140).stride, 4);
        let fa = DataType::parse("float[]").unwrap();
        assert_eq!(fa.element_layout(Layout::Std140).stride, 16);
        assert_eq!(fa.element_layout(Layout::Std430).stride, 4);
        let v2a = DataType::parse("vec2<int32>[]").unwrap();
        assert_eq!(v2a.element_layout(Layout::Std140).offsets, [0, 4]);
        assert_eq!(v2a.element_layout(Layout::Std140).stride, 16);
        let m3 = DataType::parse("mat3x3<float>")
            .unwrap()
            .element_layout(Layout::Std430);
        assert_eq!(m3.stride, 48);
        assert_eq!(m3.offsets, [0, 4, 8, 16, 20, 24, 32, 36, 40]);
        let m2 = DataType::parse("mat2x2<float>").unwrap();
        assert_eq!(m2.element_layout(Layout::Std430).offsets, [0, 4, 8, 12]);
        assert_eq!(m2.element_layout(Layout::Std140).offsets, [0, 4, 16, 20]);
        let h3 = DataType::parse("vec3<float16>")
            .unwrap()
            .element_layout(Layout::Std430);
        assert_eq!(h3.stride, 8);
        let d4 = DataType::parse("mat4x4<double>")
            .unwrap()
            .element_layout(Layout::Std430);
        assert_eq!(d4.stride, 128);
    }

    #[test]
    fn vulkan_formats_are_packed_texels() {
        let f = DataType::parse("R32G32B32_SFLOAT").unwrap();
        assert_eq!((f.scalar, f.rows), (Scalar::F32, 3));
        assert_eq!(
            f.element_layout(Layout::Std430).stride,
            12,
            "no vec3 padding"
        );
        assert_eq!(f.element_layout(Layout::Std140).offsets, [0, 4, 8]);
        let b = DataType::parse("B8G8R8A8_UNORM").unwrap();
        assert_eq!((b.scalar, b.rows), (Scalar::U8, 4));
        assert_eq!(DataType::parse("R8G8_SNORM").unwrap().scalar, Scalar::I8);
        assert_eq!(DataType::parse("R16_SFLOAT").unwrap().scalar, Scalar::F16);
        assert_eq!(
            DataType::parse_checked("A2B10G10R10_UNORM_PACK32"),
            Err(TypeError::UnsupportedFormat)
        );
        assert_eq!(
            DataType::parse_checked("D24_UNORM_S8_UINT"),
            Err(TypeError::UnsupportedFormat)
        );
        assert_eq!(DataType::parse_checked("R33_QUUX"), Err(TypeError::Unknown));
        assert_eq!(
            DataType::parse_checked("my_struct"),
            Err(TypeError::Unknown)
        );
    }

    #[test]
    fn values_and_encoding() {
        assert_eq!(Value::parse("0x7f800000"), Some(Value::Int(0x7f80_0000)));
        assert_eq!(Value::parse("-3"), Some(Value::Int(-3)));
        assert_eq!(Value::parse("12."), Some(Value::Float(12.0)));
        assert_eq!(Value::parse(".5"), Some(Value::Float(0.5)));
        assert!(matches!(Value::parse("nan"), Some(Value::Float(x)) if x.is_nan()));
        assert_eq!(Value::parse("-inf"), Some(Value::Float(f64::NEG_INFINITY)));
        assert_eq!(Value::parse("abc"), None);
        // float16 data is truncated like Amber does: 2.4 -> 2.3984375 (0x40cc; nearest would be 0x40cd); the
        // other values are CTS inputs with their truncated values worked out by hand from the float bits.
        let f16 = |x: f64| {
            let mut b = [0u8; 2];
            Scalar::F16.encode(Value::Float(x), &mut b);
            half::f16::from_bits(u16::from_le_bytes(b)).to_f64()
        };
        assert_eq!(f16(2.4), 2.3984375);
        assert_eq!(f16(-4.0233599), -4.01953125);
        assert_eq!(f16(90.5568627), 90.5);
        assert_eq!(f16(-60.4349515), -60.40625);
        assert_eq!(f16(-1.0), -1.0);
        assert_eq!(f16(65504.0), 65504.0);
        assert_eq!(f16(1e6), f64::INFINITY);
        assert!(f16(f64::NAN).is_nan());
        assert_eq!(f16(-0.0).to_bits(), (-0.0f64).to_bits());
        // Subnormal: 3e-7 is 5.03 units of 2^-24, truncated to 5.
        assert_eq!(f16(3.0e-7), 5.0 * 2.0f64.powi(-24));

        let mut b = [0u8; 1];
        Scalar::U8.encode(Value::Int(-1), &mut b);
        assert_eq!(b[0], 0xff);
        assert_eq!(Scalar::I8.decode(&b), Value::Int(-1));
        assert_eq!(
            Scalar::F32.round(Value::Float(4.7)),
            Value::Float(4.7f32 as f64)
        );
    }

    #[test]
    fn packs_with_padding() {
        let l = DataType::parse("vec3<float>")
            .unwrap()
            .element_layout(Layout::Std430);
        let bytes = l.pack(
            &[Value::Int(1), Value::Int(2), Value::Int(3), Value::Int(4)],
            0,
        );
        assert_eq!(bytes.len(), 32);
        assert_eq!(&bytes[12..16], &[0; 4]);
        assert_eq!(f32::from_le_bytes(bytes[16..20].try_into().unwrap()), 4.0);
        let offs: Vec<_> = l.value_offsets(16, 32).collect();
        assert_eq!(offs, [16, 20, 24]);
    }
}
