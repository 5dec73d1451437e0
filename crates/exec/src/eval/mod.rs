//! Per-lane semantics and column kernels: what each pure op does to the register file.
//!
//! Used by the executor (every batch) and by the compiler (OpSpecConstantOp is run on a
//! one-lane register image at compile time), so both give an op the same meaning.

pub(crate) mod tensor;

use crate::floats::{self, sext, trunc};
use crate::memory;
use crate::program::*;
use crate::{ExecError, err};

/// Words of an active-lane mask.
pub(crate) const MW: usize = MAX_LANES / 64;
/// One bit per lane of a batch.
pub(crate) type Mask = [u64; MW];

/// The first active lane of `mask`, if any.
pub(crate) fn first_active(mask: &Mask) -> Option<usize> {
    let w = mask.iter().position(|&w| w != 0)?;
    Some(w * 64 + mask[w].trailing_zeros() as usize)
}

macro_rules! each_lane {
    ($mask:expr, $lanes:expr, $dense:expr, |$l:ident| $body:block) => {
        if $dense {
            for $l in 0..$lanes $body
        } else {
            for (w, &bits) in $mask.iter().enumerate() {
                let mut bb = bits;
                while bb != 0 {
                    let $l = w * 64 + bb.trailing_zeros() as usize;
                    bb &= bb - 1;
                    $body
                }
            }
        }
    };
}

pub(crate) use each_lane;

// ---------------------------------------------------------------------------------------------
// Per-lane scalar semantics.

#[inline(always)]
fn fb(x: bool) -> u64 {
    x as u64
}

/// Unary op on raw bits. Float operations on an integer kind leave the bits alone (negation
/// negates, IsNan/IsInf are false); integer operations on a float kind act on its bits.
pub(crate) fn un1(op: UnOp, num: Num, x: u64) -> u64 {
    let bits = num.bits();
    let s = sext(x, bits);
    let float = num.is_float();
    // A float operation: `$e` over the value `$v` as f64, rounded back to `num`.
    macro_rules! fun {
        (|$v:ident| $e:expr) => {
            if float {
                let $v = floats::to_f64(num, x);
                floats::from_f64(num, $e)
            } else {
                trunc(x, bits)
            }
        };
    }
    let int = |v: u64| trunc(v, bits);
    match op {
        UnOp::FNeg if float => fun!(|v| -v),
        UnOp::FNeg | UnOp::SNeg => int(s.wrapping_neg() as u64),
        UnOp::IsNan => fb(float && floats::to_f64(num, x).is_nan()),
        UnOp::IsInf => fb(float && floats::to_f64(num, x).is_infinite()),
        UnOp::Round => fun!(|v| v.round()),
        UnOp::RoundEven => fun!(|v| v.round_ties_even()),
        UnOp::Trunc => fun!(|v| v.trunc()),
        UnOp::FAbs => fun!(|v| v.abs()),
        UnOp::FSign => fun!(|v| if v > 0.0 {
            1.0
        } else if v < 0.0 {
            -1.0
        } else {
            v
        }),
        UnOp::Floor => fun!(|v| v.floor()),
        UnOp::Ceil => fun!(|v| v.ceil()),
        UnOp::Fract => fun!(|v| v - v.floor()),
        UnOp::Radians => fun!(|v| v.to_radians()),
        UnOp::Degrees => fun!(|v| v.to_degrees()),
        UnOp::Sin => fun!(|v| v.sin()),
        UnOp::Cos => fun!(|v| v.cos()),
        UnOp::Tan => fun!(|v| v.tan()),
        UnOp::Asin => fun!(|v| v.asin()),
        UnOp::Acos => fun!(|v| v.acos()),
        UnOp::Atan => fun!(|v| v.atan()),
        UnOp::Sinh => fun!(|v| v.sinh()),
        UnOp::Cosh => fun!(|v| v.cosh()),
        UnOp::Tanh => fun!(|v| v.tanh()),
        UnOp::Asinh => fun!(|v| v.asinh()),
        UnOp::Acosh => fun!(|v| v.acosh()),
        UnOp::Atanh => fun!(|v| v.atanh()),
        UnOp::Exp => fun!(|v| floats::exp(v)),
        UnOp::Log => fun!(|v| v.ln()),
        UnOp::Exp2 => fun!(|v| v.exp2()),
        UnOp::Log2 => fun!(|v| v.log2()),
        UnOp::Sqrt => fun!(|v| v.sqrt()),
        UnOp::InverseSqrt => fun!(|v| 1.0 / v.sqrt()),
        UnOp::FrexpMant => fun!(|v| frexp(v).0),
        UnOp::FrexpExp if float => frexp(floats::to_f64(num, x)).1 as u32 as u64,
        UnOp::FrexpExp => trunc(x, bits),
        UnOp::ModfFract => fun!(|v| if v.is_infinite() {
            0f64.copysign(v)
        } else {
            (v - v.trunc()).copysign(v)
        }),
        UnOp::Not => int(!x),
        UnOp::LNot => fb(x == 0),
        UnOp::BitCount => trunc(x, bits).count_ones() as u64,
        UnOp::BitReverse => int(x.reverse_bits() >> (64 - bits)),
        UnOp::SAbs => int(s.wrapping_abs() as u64),
        UnOp::SSign => int(s.signum() as u64),
        UnOp::FindILsb => lowest_or_all_ones(trunc(x, bits), bits, false),
        UnOp::FindUMsb => lowest_or_all_ones(trunc(x, bits), bits, true),
        UnOp::FindSMsb => {
            let t = if s < 0 { !s as u64 } else { s as u64 };
            lowest_or_all_ones(t, bits, true)
        }
    }
}

/// FindILsb (`msb` false) / `Find[SU]Msb` (`msb` true) of `t`: the bit index, or −1 in `bits`
/// bits when no bit is set.
fn lowest_or_all_ones(t: u64, bits: u32, msb: bool) -> u64 {
    if t == 0 {
        trunc(u64::MAX, bits)
    } else if msb {
        63 - t.leading_zeros() as u64
    } else {
        t.trailing_zeros() as u64
    }
}

/// GLSL.std.450 Frexp: `v = m · 2^e` with `0.5 <= |m| < 1`; zero, infinities and NaN give
/// `(v, 0)`.
fn frexp(v: f64) -> (f64, i32) {
    if v == 0.0 || !v.is_finite() {
        return (v, 0);
    }
    // Subnormal f64: scale into the normal range first.
    let (v, adj) = if v.abs() < f64::MIN_POSITIVE {
        (v * 2f64.powi(64), -64)
    } else {
        (v, 0)
    };
    let b = v.to_bits();
    let e = ((b >> 52) & 0x7ff) as i32 - 1022;
    let m = f64::from_bits((b & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (m, e + adj)
}

/// `a · 2^e` without overflowing the intermediate power of two (exponents beyond ±2200
/// saturate: any finite f64 is then scaled to zero or infinity).
fn ldexp(a: f64, e: i64) -> f64 {
    let mut e = e.clamp(-2200, 2200) as i32;
    let mut r = a;
    while e > 1000 {
        r *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        r *= 2f64.powi(-1000);
        e += 1000;
    }
    r * 2f64.powi(e)
}

/// min/max that return the other operand when one is NaN (GLSL.std.450 FMin/NMin and
/// FMax/NMax alike); without NaNs, GLSL.std.450's definitions: FMax is "y if x < y; otherwise
/// x", FMin "y if y < x; otherwise x", so equal operands (±0 included) give the first one.
pub(crate) fn min_max_nan(a: f64, b: f64, max: bool) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if max {
        if a < b { b } else { a }
    } else if b < a {
        b
    } else {
        a
    }
}

/// The NaN an f32 add, subtract, multiply or divide returns, fixed so that it does not depend on
/// the operand order the compiler picks for a commutative operation (Rust leaves NaN payloads
/// unspecified; SPIR-V and Vulkan do not specify them either): the first NaN operand, quieted,
/// else x86's default NaN, what the hardware gives for an invalid operation such as inf − inf.
fn f32_nan_result(x: u32, y: u32) -> u32 {
    let is_nan = |v: u32| v & 0x7fff_ffff > 0x7f80_0000;
    if is_nan(x) {
        x | 0x0040_0000
    } else if is_nan(y) {
        y | 0x0040_0000
    } else {
        0xffc0_0000
    }
}

/// Binary op on raw bits. Float operations compute in f64 and round once to `num` (exact for
/// + − × ÷ on every kind up to f32, see `floats`); integer operations wrap to the width.
pub(crate) fn bin1(op: BinOp, num: Num, x: u64, y: u64) -> u64 {
    use BinOp::*;
    let bits = num.bits().max(1);
    if num == Num::F32 && matches!(op, FAdd | FSub | FMul | FDiv) {
        let (a, b) = (f32::from_bits(x as u32), f32::from_bits(y as u32));
        let r = if op == FAdd {
            a + b
        } else if op == FSub {
            a - b
        } else if op == FMul {
            a * b
        } else {
            a / b
        };
        if r.is_nan() {
            return f32_nan_result(x as u32, y as u32) as u64;
        }
        return r.to_bits() as u64;
    }
    // A float operation over the operands as f64, rounded back to `num`.
    macro_rules! fop {
        (|$a:ident, $b:ident| $e:expr) => {{
            let ($a, $b) = (floats::to_f64(num, x), floats::to_f64(num, y));
            floats::from_f64(num, $e)
        }};
    }
    // A float comparison; `$un` is whether either operand is NaN.
    macro_rules! fcmp {
        (|$a:ident, $b:ident, $un:ident| $e:expr) => {{
            let ($a, $b) = (floats::to_f64(num, x), floats::to_f64(num, y));
            let $un = $a.is_nan() || $b.is_nan();
            fb($e)
        }};
    }
    let (sa, sb) = (sext(x, bits), sext(y, bits));
    let (ua, ub) = (trunc(x, bits), trunc(y, bits));
    let int = |v: u64| trunc(v, bits);
    match op {
        FAdd => fop!(|a, b| a + b),
        FSub => fop!(|a, b| a - b),
        FMul => fop!(|a, b| a * b),
        FDiv => fop!(|a, b| a / b),
        FRem => fop!(|a, b| a % b),
        FMod => fop!(|a, b| {
            let r = a % b;
            if r != 0.0 && (r < 0.0) != (b < 0.0) {
                r + b
            } else {
                r
            }
        }),
        FOEq => fcmp!(|a, b, _un| a == b),
        FUEq => fcmp!(|a, b, un| un || a == b),
        FONe => fcmp!(|a, b, un| !un && a != b),
        FUNe => fcmp!(|a, b, _un| a != b),
        FOLt => fcmp!(|a, b, _un| a < b),
        FULt => fcmp!(|a, b, un| un || a < b),
        FOGt => fcmp!(|a, b, _un| a > b),
        FUGt => fcmp!(|a, b, un| un || a > b),
        FOLe => fcmp!(|a, b, _un| a <= b),
        FULe => fcmp!(|a, b, un| un || a <= b),
        FOGe => fcmp!(|a, b, _un| a >= b),
        FUGe => fcmp!(|a, b, un| un || a >= b),
        Ordered => fcmp!(|_a, _b, un| !un),
        Unordered => fcmp!(|_a, _b, un| un),
        FMin | NMin | FMax | NMax => {
            let (a, b) = (floats::to_f64(num, x), floats::to_f64(num, y));
            let r = min_max_nan(a, b, matches!(op, FMax | NMax));
            // The result is one of the operands (exact in f64), so rounding it back gives that
            // operand's own bits: skip the rounding (flash attention's max reductions fold
            // element by element through here). Only two NaNs round.
            if r.to_bits() == a.to_bits() && !r.is_nan() {
                trunc(x, bits)
            } else if r.to_bits() == b.to_bits() && !r.is_nan() {
                trunc(y, bits)
            } else {
                floats::from_f64(num, r)
            }
        }
        Pow => fop!(|a, b| a.powf(b)),
        Atan2 => fop!(|a, b| a.atan2(b)),
        Step => fop!(|a, b| if b < a { 0.0 } else { 1.0 }),
        Ldexp => floats::from_f64(num, ldexp(floats::to_f64(num, x), sext(y, 32))),
        IAdd => int(ua.wrapping_add(ub)),
        ISub => int(ua.wrapping_sub(ub)),
        IMul => int(ua.wrapping_mul(ub)),
        UDiv => int(ua.checked_div(ub).unwrap_or(0)),
        SDiv => int(sa.checked_div(sb).unwrap_or(0) as u64),
        UMod => int(ua.checked_rem(ub).unwrap_or(0)),
        SRem => int(sa.checked_rem(sb).unwrap_or(0) as u64),
        SMod => {
            let r = sa.checked_rem(sb).unwrap_or(0);
            int((if r != 0 && (r < 0) != (sb < 0) {
                r + sb
            } else {
                r
            }) as u64)
        }
        Shl => int(if ub >= bits as u64 { 0 } else { ua << ub }),
        ShrL => int(if ub >= bits as u64 { 0 } else { ua >> ub }),
        ShrA => int((sa >> ub.min(63)) as u64),
        And => ua & ub,
        Or => ua | ub,
        Xor => ua ^ ub,
        IEq => fb(ua == ub),
        INe => fb(ua != ub),
        UGt => fb(ua > ub),
        UGe => fb(ua >= ub),
        ULt => fb(ua < ub),
        ULe => fb(ua <= ub),
        SGt => fb(sa > sb),
        SGe => fb(sa >= sb),
        SLt => fb(sa < sb),
        SLe => fb(sa <= sb),
        LEq => fb((x != 0) == (y != 0)),
        LNe => fb((x != 0) != (y != 0)),
        LAnd => fb(x != 0 && y != 0),
        LOr => fb(x != 0 || y != 0),
        UMin => ua.min(ub),
        UMax => ua.max(ub),
        SMin => int(sa.min(sb) as u64),
        SMax => int(sa.max(sb) as u64),
        UMulHi => int(((ua as u128 * ub as u128) >> bits) as u64),
        SMulHi => int(((sa as i128 * sb as i128) >> bits) as u64),
        AddCarry => {
            fb(ua.wrapping_add(ub) != trunc(ua.wrapping_add(ub), bits)
                || ua.checked_add(ub).is_none())
        }
        SubBorrow => fb(ua < ub),
    }
}

/// [`tern1`]'s f32 `Fma` for a lane whose result is a NaN. Never inlined: a copy compiled
/// inside a column level with FMA would take the instruction's NaN payload rule, where the
/// baseline's library `fma` defines the payload at every level.
#[inline(never)]
fn fma_f32_nan(x: u64, y: u64, z: u64) -> u64 {
    tern1(TernOp::Fma, Num::F32, x, y, z)
}

/// Ternary op on raw bits.
pub(crate) fn tern1(op: TernOp, num: Num, x: u64, y: u64, z: u64) -> u64 {
    let bits = num.bits();
    // A float operation over the operands as f64, rounded back to `num`.
    macro_rules! fop {
        (|$a:ident, $b:ident, $c:ident| $e:expr) => {{
            let ($a, $b, $c) = (
                floats::to_f64(num, x),
                floats::to_f64(num, y),
                floats::to_f64(num, z),
            );
            floats::from_f64(num, $e)
        }};
    }
    let extract = |signed: bool| {
        let (off, cnt) = (y.min(64) as u32, z.min(64) as u32);
        if cnt == 0 {
            return 0;
        }
        let v = trunc(x >> off.min(63), cnt);
        if signed {
            trunc(sext(v, cnt) as u64, bits)
        } else {
            v
        }
    };
    match op {
        TernOp::UClamp => trunc(x, bits).max(trunc(y, bits)).min(trunc(z, bits)),
        TernOp::SClamp => trunc(
            sext(x, bits).max(sext(y, bits)).min(sext(z, bits)) as u64,
            bits,
        ),
        TernOp::UExtract => extract(false),
        TernOp::SExtract => extract(true),
        TernOp::FMix => fop!(|a, b, c| a + (b - a) * c),
        TernOp::FClamp | TernOp::NClamp => fop!(|a, b, c| a.max(b).min(c)),
        TernOp::Fma if num == Num::F32 => {
            fop!(|a, b, c| (a as f32).mul_add(b as f32, c as f32) as f64)
        }
        TernOp::Fma => fop!(|a, b, c| a.mul_add(b, c)),
        TernOp::SmoothStep => fop!(|a, b, c| {
            let t = ((c - a) / (b - a)).clamp(0.0, 1.0);
            t * t * (3.0 - 2.0 * t)
        }),
    }
}

/// Conversion on raw bits.
#[inline]
pub(crate) fn cvt1(kind: CvtKind, from: Num, to: Num, x: u64) -> u64 {
    let tb = to.bits();
    match kind {
        CvtKind::UConv => trunc(trunc(x, from.bits()), tb),
        CvtKind::SConv => trunc(sext(x, from.bits()) as u64, tb),
        CvtKind::FConv => floats::from_f64(to, floats::to_f64(from, x)),
        CvtKind::FConvSat => floats::from_f64_sat(to, floats::to_f64(from, x)),
        CvtKind::SToF => floats::from_f64(to, sext(x, from.bits()) as f64),
        CvtKind::UToF => floats::from_f64(to, trunc(x, from.bits()) as f64),
        CvtKind::FToU => {
            let v = floats::to_f64(from, x);
            let max = if tb >= 64 {
                u64::MAX as f64
            } else {
                ((1u64 << tb) - 1) as f64
            };
            trunc(
                if v.is_nan() {
                    0
                } else {
                    v.clamp(0.0, max) as u64
                },
                tb,
            )
        }
        CvtKind::FToS => {
            let v = floats::to_f64(from, x);
            let (lo, hi) = (-(2f64.powi(tb as i32 - 1)), 2f64.powi(tb as i32 - 1) - 1.0);
            trunc(
                if v.is_nan() {
                    0
                } else {
                    v.clamp(lo, hi) as i64 as u64
                },
                tb,
            )
        }
    }
}

/// The operand of a [`chain_step`] besides the running value.
#[derive(Clone, Copy)]
enum ChainIn<'a> {
    /// One a lane (the low 32 bits of a column's words).
    Lanes(&'a [u64]),
    /// The same in every lane.
    One(u32),
}

/// One step of [`Columns::int_chain`]: `acc = acc op other` (`other op acc` unless
/// `acc_left`) in every lane, as `bin1` computes it on 32-bit integers (operands truncated to
/// 32 bits, results wrapping; a shift by 32 or more gives 0, or the sign for ShrA).
#[inline(always)]
fn chain_step(op: ChainOp, acc_left: bool, acc: &mut [u32], other: ChainIn) {
    macro_rules! each {
        (|$x:ident, $y:ident| $e:expr) => {
            match (other, acc_left) {
                (ChainIn::Lanes(other), true) => {
                    for (a, &o) in acc.iter_mut().zip(other) {
                        let ($x, $y) = (*a, o as u32);
                        *a = $e;
                    }
                }
                (ChainIn::Lanes(other), false) => {
                    for (a, &o) in acc.iter_mut().zip(other) {
                        let ($x, $y) = (o as u32, *a);
                        *a = $e;
                    }
                }
                (ChainIn::One(o), true) => {
                    for a in acc.iter_mut() {
                        let ($x, $y) = (*a, o);
                        *a = $e;
                    }
                }
                (ChainIn::One(o), false) => {
                    for a in acc.iter_mut() {
                        let ($x, $y) = (o, *a);
                        *a = $e;
                    }
                }
            }
        };
    }
    match op {
        ChainOp::IAdd => each!(|x, y| x.wrapping_add(y)),
        ChainOp::ISub => each!(|x, y| x.wrapping_sub(y)),
        ChainOp::IMul => each!(|x, y| x.wrapping_mul(y)),
        ChainOp::Shl => each!(|x, y| if y >= 32 { 0 } else { x << y }),
        ChainOp::ShrL => each!(|x, y| if y >= 32 { 0 } else { x >> y }),
        ChainOp::ShrA => each!(|x, y| ((x as i32) >> y.min(31)) as u32),
        ChainOp::And => each!(|x, y| x & y),
        ChainOp::Or => each!(|x, y| x | y),
        ChainOp::Xor => each!(|x, y| x ^ y),
    }
}

/// Specialized column loops, equal to `bin1` lane for lane: 32-bit integer ops (the address
/// arithmetic of most shaders), logic on bools and comparisons of f32 columns (an f32 compares
/// as its exact f64 widening does). The generic per-lane path matches `op` and `num` per lane.
/// False for other ops and kinds, having written nothing.
#[allow(clippy::too_many_arguments)]
fn bin_loop(
    op: BinOp,
    num: Num,
    c: &mut [u64],
    dc: usize,
    ac: usize,
    bc: usize,
    lanes: usize,
    mask: &Mask,
    dense: bool,
) -> bool {
    let (int32, f32) = (num == Num::Int(32), num == Num::F32);
    macro_rules! go {
        (|$x:ident, $y:ident| $e:expr) => {{
            // All lanes and a result column distinct from both operands: plain slices, so the
            // loop has no bounds checks and vectorizes.
            if dense && let Some((dd, aa, bb)) = cols3(c, dc, ac, bc, lanes) {
                for ((d, &$x), &$y) in dd.iter_mut().zip(aa).zip(bb) {
                    let ($x, $y) = ($x as u32, $y as u32);
                    *d = ($e) as u64;
                }
                return true;
            }
            if dense
                && zip_in_place(c, dc, ac, bc, lanes, |xs, ys, rs| {
                    for ((r, &$x), &$y) in rs.iter_mut().zip(xs).zip(ys) {
                        let ($x, $y) = ($x as u32, $y as u32);
                        *r = ($e) as u64;
                    }
                })
            {
                return true;
            }
            each_lane!(mask, lanes, dense, |l| {
                let $x = c[ac + l] as u32;
                let $y = c[bc + l] as u32;
                c[dc + l] = ($e) as u64;
            });
            true
        }};
    }
    // Shifts by an amount the same in every lane (usually a constant): a scalar shift count
    // lets the loop vectorize (SSE2 has no per-lane variable shifts).
    if int32
        && dense
        && matches!(op, BinOp::Shl | BinOp::ShrL | BinOp::ShrA)
        && let Some((dd, aa, bb)) = cols3(c, dc, ac, bc, lanes)
        && let Some(&y0) = bb.first()
        && bb.iter().fold(0, |acc, &y| acc | (y ^ y0)) as u32 == 0
    {
        let y = y0 as u32;
        let it = dd.iter_mut().zip(aa);
        if op == BinOp::ShrA {
            it.for_each(|(d, &x)| *d = ((x as i32) >> y.min(31)) as u32 as u64);
        } else if y >= 32 {
            it.for_each(|(d, _)| *d = 0);
        } else if op == BinOp::Shl {
            it.for_each(|(d, &x)| *d = ((x as u32) << y) as u64);
        } else {
            it.for_each(|(d, &x)| *d = ((x as u32) >> y) as u64);
        }
        return true;
    }
    // A bool result of each lane's operands.
    macro_rules! test {
        (|$x:ident, $y:ident| $e:expr) => {{
            if dense && let Some((dd, aa, bb)) = cols3(c, dc, ac, bc, lanes) {
                for ((d, &$x), &$y) in dd.iter_mut().zip(aa).zip(bb) {
                    *d = fb($e);
                }
            } else {
                each_lane!(mask, lanes, dense, |l| {
                    let ($x, $y) = (c[ac + l], c[bc + l]);
                    c[dc + l] = fb($e);
                });
            }
            true
        }};
    }
    // Either operand NaN: the unordered comparisons' extra case.
    let f = |v: u64| f32::from_bits(v as u32);
    let un = |x: u64, y: u64| f(x).is_nan() | f(y).is_nan();
    match op {
        BinOp::IAdd if int32 => go!(|x, y| x.wrapping_add(y)),
        BinOp::ISub if int32 => go!(|x, y| x.wrapping_sub(y)),
        BinOp::IMul if int32 => go!(|x, y| x.wrapping_mul(y)),
        BinOp::UDiv if int32 => go!(|x, y| x.checked_div(y).unwrap_or(0)),
        BinOp::UMod if int32 => go!(|x, y| x.checked_rem(y).unwrap_or(0)),
        BinOp::Shl if int32 => go!(|x, y| if y >= 32 { 0 } else { x << y }),
        BinOp::ShrL if int32 => go!(|x, y| if y >= 32 { 0 } else { x >> y }),
        BinOp::ShrA if int32 => go!(|x, y| ((x as i32) >> y.min(31)) as u32),
        BinOp::And if int32 => go!(|x, y| x & y),
        BinOp::Or if int32 => go!(|x, y| x | y),
        BinOp::Xor if int32 => go!(|x, y| x ^ y),
        BinOp::IEq if int32 => go!(|x, y| x == y),
        BinOp::INe if int32 => go!(|x, y| x != y),
        BinOp::ULt if int32 => go!(|x, y| x < y),
        BinOp::ULe if int32 => go!(|x, y| x <= y),
        BinOp::UGt if int32 => go!(|x, y| x > y),
        BinOp::UGe if int32 => go!(|x, y| x >= y),
        BinOp::SLt if int32 => go!(|x, y| (x as i32) < (y as i32)),
        BinOp::SLe if int32 => go!(|x, y| (x as i32) <= (y as i32)),
        BinOp::SGt if int32 => go!(|x, y| (x as i32) > (y as i32)),
        BinOp::SGe if int32 => go!(|x, y| (x as i32) >= (y as i32)),
        BinOp::UMin if int32 => go!(|x, y| x.min(y)),
        BinOp::UMax if int32 => go!(|x, y| x.max(y)),
        BinOp::SMin if int32 => go!(|x, y| (x as i32).min(y as i32) as u32),
        BinOp::SMax if int32 => go!(|x, y| (x as i32).max(y as i32) as u32),
        BinOp::LAnd => test!(|x, y| (x != 0) & (y != 0)),
        BinOp::LOr => test!(|x, y| (x != 0) | (y != 0)),
        BinOp::LEq => test!(|x, y| (x != 0) == (y != 0)),
        BinOp::LNe => test!(|x, y| (x != 0) != (y != 0)),
        BinOp::FOEq if f32 => test!(|x, y| f(x) == f(y)),
        BinOp::FUEq if f32 => test!(|x, y| un(x, y) | (f(x) == f(y))),
        BinOp::FONe if f32 => test!(|x, y| !un(x, y) & (f(x) != f(y))),
        BinOp::FUNe if f32 => test!(|x, y| f(x) != f(y)),
        BinOp::FOLt if f32 => test!(|x, y| f(x) < f(y)),
        BinOp::FULt if f32 => test!(|x, y| un(x, y) | (f(x) < f(y))),
        BinOp::FOGt if f32 => test!(|x, y| f(x) > f(y)),
        BinOp::FUGt if f32 => test!(|x, y| un(x, y) | (f(x) > f(y))),
        BinOp::FOLe if f32 => test!(|x, y| f(x) <= f(y)),
        BinOp::FULe if f32 => test!(|x, y| un(x, y) | (f(x) <= f(y))),
        BinOp::FOGe if f32 => test!(|x, y| f(x) >= f(y)),
        BinOp::FUGe if f32 => test!(|x, y| un(x, y) | (f(x) >= f(y))),
        BinOp::Ordered if f32 => test!(|x, y| !un(x, y)),
        BinOp::Unordered if f32 => test!(|x, y| un(x, y)),
        // Other kinds, and ops without a specialized loop: the generic per-lane path.
        BinOp::IAdd
        | BinOp::ISub
        | BinOp::IMul
        | BinOp::UDiv
        | BinOp::UMod
        | BinOp::Shl
        | BinOp::ShrL
        | BinOp::ShrA
        | BinOp::And
        | BinOp::Or
        | BinOp::Xor
        | BinOp::IEq
        | BinOp::INe
        | BinOp::ULt
        | BinOp::ULe
        | BinOp::UGt
        | BinOp::UGe
        | BinOp::SLt
        | BinOp::SLe
        | BinOp::SGt
        | BinOp::SGe
        | BinOp::UMin
        | BinOp::UMax
        | BinOp::SMin
        | BinOp::SMax
        | BinOp::FOEq
        | BinOp::FUEq
        | BinOp::FONe
        | BinOp::FUNe
        | BinOp::FOLt
        | BinOp::FULt
        | BinOp::FOGt
        | BinOp::FUGt
        | BinOp::FOLe
        | BinOp::FULe
        | BinOp::FOGe
        | BinOp::FUGe
        | BinOp::Ordered
        | BinOp::Unordered
        | BinOp::SDiv
        | BinOp::SRem
        | BinOp::SMod
        | BinOp::FAdd
        | BinOp::FSub
        | BinOp::FMul
        | BinOp::FDiv
        | BinOp::FRem
        | BinOp::FMod
        | BinOp::FMin
        | BinOp::FMax
        | BinOp::NMin
        | BinOp::NMax
        | BinOp::Pow
        | BinOp::Atan2
        | BinOp::Step
        | BinOp::Ldexp
        | BinOp::UMulHi
        | BinOp::SMulHi
        | BinOp::AddCarry
        | BinOp::SubBorrow => false,
    }
}

/// The byte offset an access chain adds for lane `l`: constant steps plus index × stride, in
/// checked 64-bit arithmetic (None on overflow: far outside any object).
#[inline]
fn chain_delta(c: &[u64], l: usize, lanes: usize, steps: &[Step]) -> Option<i64> {
    let mut delta = 0i64;
    for s in steps {
        let step = match *s {
            Step::Const(x) => x,
            Step::Dyn { idx, bits, stride } => {
                let i = sext(*c.get(idx.ix() * lanes + l)?, bits as u32);
                i.checked_mul(stride)?
            }
        };
        delta = delta.checked_add(step)?;
    }
    Some(delta)
}

/// The chain's constant offset when its wrapping column passes are exact for indices below 2^31
/// (strides below 2^24, constants below 2^40, at most 64 steps) and its columns are in range,
/// with the result column neither the base nor an index; None otherwise.
fn wrapping_chain_offset(
    len: usize,
    dc: usize,
    bc: usize,
    steps: &[Step],
    lanes: usize,
) -> Option<u64> {
    let fits = |x: usize| x + lanes <= len;
    let ok = steps.len() <= 64
        && dc != bc
        && fits(dc)
        && fits(bc)
        && steps.iter().all(|s| match *s {
            Step::Dyn { idx, bits, stride } => {
                let ic = idx.ix() * lanes;
                ic != dc && fits(ic) && (1..=64).contains(&bits) && stride.unsigned_abs() < 1 << 24
            }
            Step::Const(x) => x.unsigned_abs() < 1 << 40,
        });
    ok.then(|| {
        steps.iter().fold(0u64, |a, s| match *s {
            Step::Const(x) => a.wrapping_add(x as u64),
            Step::Dyn { .. } => a,
        })
    })
}

/// Nonzero when address `a`, derived from base `b`, is not in `b`'s object below
/// [`memory::MAX_OBJECT_BYTES`]. (A poison base's results stay in the poison object, which no
/// access resolves.)
#[inline(always)]
fn outside(a: u64, b: u64) -> u64 {
    (a ^ (b >> memory::OBJ_SHIFT << memory::OBJ_SHIFT)) >> (memory::OBJ_SHIFT - 1)
}

/// Replaces each result that left its base's object by [`memory::POISON`].
fn poison_outside(dd: &mut [u64], bb: &[u64]) {
    for (d, &b) in dd.iter_mut().zip(bb) {
        if outside(*d, b) != 0 {
            *d = memory::POISON;
        }
    }
}

/// All-lanes access chain on plain slices: constant steps fold into one offset and the first
/// dynamic step reads the base column directly (no copy pass), in wrapping arithmetic that
/// vectorizes. It is exact when every stride is below 2^24 and every index below 2^31 in
/// magnitude (checked: the sum then cannot overflow); a last pass poisons each result that left
/// its base's object, as [`memory::offset_address`] does. False when a column is out of range,
/// an index column is the result column, a stride or the constant offset is too large (nothing
/// written), or an index is (the result column is then garbage): the caller then takes the
/// exact per-lane path, which writes every lane.
#[inline(always)]
pub(crate) fn access_chain_dense(
    c: &mut [u64],
    dc: usize,
    bc: usize,
    steps: &[Step],
    lanes: usize,
) -> bool {
    let Some(k) = wrapping_chain_offset(c.len(), dc, bc, steps, lanes) else {
        return false;
    };
    let mut dyns = steps.iter().filter_map(|s| match *s {
        Step::Dyn { idx, bits, stride } => Some((idx.ix() * lanes, 64 - bits as u32, stride)),
        Step::Const(_) => None,
    });
    // Nonzero when some index is 2^31 or more in magnitude: the wrapping sums may then be
    // inexact, and the exact per-lane path redoes the chain.
    let mut big = 0u64;
    let mut first = dyns.next();
    if let Some((ic, s, stride)) = first
        && let Some((dd, bb, ii)) = cols3(c, dc, bc, ic, lanes)
    {
        if dyns.clone().next().is_none() && s == 32 {
            // The usual one-index chain with a 32-bit index, in 32x32-bit multiplies: with
            // u = i + 2^31 (the index's bits with the sign bit flipped, in [0, 2^32)),
            // i * stride = ±(u * |stride|) - 2^31 * stride, the constant folded into the offset
            // and the sign applied as (p ^ m) - m. The same wrapping sum as the general loop
            // below; no index can be out of range.
            let mag = stride.unsigned_abs() & 0xffff_ffff;
            let neg = if stride < 0 { u64::MAX } else { 0 };
            let k = k.wrapping_sub((1u64 << 31).wrapping_mul(stride as u64));
            let mut left = 0u64;
            for ((d, &b), &i) in dd.iter_mut().zip(bb).zip(ii) {
                let u = ((i as u32) ^ 0x8000_0000) as u64;
                let a = b
                    .wrapping_add(k)
                    .wrapping_add(((u * mag) ^ neg).wrapping_sub(neg));
                left |= outside(a, b);
                *d = a;
            }
            if left != 0 {
                poison_outside(dd, bb);
            }
            return true;
        }
        if dyns.clone().next().is_none() {
            // The usual one-index chain checks its object in the same pass, as an OR over the
            // lanes (cheap where 64-bit compares are not); a rare stray lane is poisoned after.
            let mut left = 0u64;
            for ((d, &b), &i) in dd.iter_mut().zip(bb).zip(ii) {
                let i = ((i << s) as i64) >> s;
                big |= (i as u64).wrapping_add(1 << 31) >> 32;
                let a = b
                    .wrapping_add(k)
                    .wrapping_add(i.wrapping_mul(stride) as u64);
                left |= outside(a, b);
                *d = a;
            }
            if big != 0 {
                return false;
            }
            if left != 0 {
                poison_outside(dd, bb);
            }
            return true;
        }
        for ((d, &b), &i) in dd.iter_mut().zip(bb).zip(ii) {
            let i = ((i << s) as i64) >> s;
            big |= (i as u64).wrapping_add(1 << 31) >> 32;
            *d = b
                .wrapping_add(k)
                .wrapping_add(i.wrapping_mul(stride) as u64);
        }
        first = None;
    } else {
        c.copy_within(bc..bc + lanes, dc);
        if k != 0 {
            c[dc..dc + lanes]
                .iter_mut()
                .for_each(|d| *d = d.wrapping_add(k));
        }
    }
    for (ic, s, stride) in first.into_iter().chain(dyns) {
        let Some((dd, ii, _)) = cols3(c, dc, ic, ic, lanes) else {
            unreachable!("checked above: index columns are in range and not the result");
        };
        for (d, &i) in dd.iter_mut().zip(ii) {
            let i = ((i << s) as i64) >> s;
            big |= (i as u64).wrapping_add(1 << 31) >> 32;
            *d = d.wrapping_add(i.wrapping_mul(stride) as u64);
        }
    }
    if big != 0 {
        return false;
    }
    // Each result must stay in its base's object, below the largest object size.
    let Some((dd, bb, _)) = cols3(c, dc, bc, bc, lanes) else {
        unreachable!("checked above: the result column is in range and not the base column");
    };
    if dd
        .iter()
        .zip(bb.iter())
        .fold(0, |left, (&a, &b)| left | outside(a, b))
        != 0
    {
        poison_outside(dd, bb);
    }
    true
}

/// [`access_chain_dense`] for a partial mask: the same column passes and the same exactness
/// conditions, over the active lanes only.
#[inline(always)]
fn access_chain_masked(
    c: &mut [u64],
    dc: usize,
    bc: usize,
    steps: &[Step],
    lanes: usize,
    mask: &Mask,
) -> bool {
    let Some(k) = wrapping_chain_offset(c.len(), dc, bc, steps, lanes) else {
        return false;
    };
    each_lane!(mask, lanes, false, |l| {
        c[dc + l] = c[bc + l].wrapping_add(k);
    });
    let mut big = 0u64;
    for s in steps {
        if let Step::Dyn { idx, bits, stride } = *s {
            let (ic, sh) = (idx.ix() * lanes, 64 - bits as u32);
            each_lane!(mask, lanes, false, |l| {
                let i = ((c[ic + l] << sh) as i64) >> sh;
                big |= (i as u64).wrapping_add(1 << 31) >> 32;
                c[dc + l] = c[dc + l].wrapping_add(i.wrapping_mul(stride) as u64);
            });
        }
    }
    if big != 0 {
        return false;
    }
    each_lane!(mask, lanes, false, |l| {
        if outside(c[dc + l], c[bc + l]) != 0 {
            c[dc + l] = memory::POISON;
        }
    });
    true
}

/// OpAccessChain / OpPtrAccessChain for the active lanes: each result is its base moved by the
/// chain's offset, or [`memory::POISON`] when that leaves the base's object, so that no index
/// can reach another buffer. (An access through such a pointer is undefined behaviour in
/// SPIR-V; the engine reports it as out of bounds, or gives Vulkan's robust result with
/// `robust`.)
#[inline(always)]
pub(crate) fn access_chain(
    c: &mut [u64],
    dc: usize,
    bc: usize,
    steps: &[Step],
    lanes: usize,
    mask: &Mask,
    dense: bool,
) {
    if dense && access_chain_dense(c, dc, bc, steps, lanes) {
        return;
    }
    if !dense && access_chain_masked(c, dc, bc, steps, lanes, mask) {
        return;
    }
    each_lane!(mask, lanes, dense, |l| {
        c[dc + l] = lane_address(c, l, lanes, bc, steps);
    });
}

/// Lane `l`'s result of an access chain over base column `bc` (offset `bc` into `c`): the base
/// moved by the chain's offset, or [`memory::POISON`] when that overflows (the definition the
/// column forms above are tested against; `Op::Once` computes one lane with it).
#[inline]
pub(crate) fn lane_address(c: &[u64], l: usize, lanes: usize, bc: usize, steps: &[Step]) -> u64 {
    match chain_delta(c, l, lanes, steps) {
        Some(delta) => memory::offset_address_i64(c[bc + l], delta),
        None => memory::POISON,
    }
}

/// Column `d` (mutable) and columns `a`, `b` (shared) of the register file, or None when `d` is
/// one of them. Columns start at multiples of `lanes`, so distinct ones never overlap.
fn cols3(
    c: &mut [u64],
    d: usize,
    a: usize,
    b: usize,
    lanes: usize,
) -> Option<(&mut [u64], &[u64], &[u64])> {
    if d == a || d == b || d + lanes > c.len() {
        return None;
    }
    let (lo, hi) = c.split_at_mut(d);
    let (dst, hi) = hi.split_at_mut(lanes);
    let (lo, hi): (&[u64], &[u64]) = (lo, hi);
    let pick = |x: usize| {
        if x < d {
            lo.get(x..x + lanes)
        } else {
            x.checked_sub(d + lanes).and_then(|o| hi.get(o..o + lanes))
        }
    };
    Some((dst, pick(a)?, pick(b)?))
}

/// Lanes a step of [`zip_in_place`] takes.
const IN_PLACE_STEP: usize = 16;

/// Column `d` from columns `a` and `b` over every lane, where `d` may be `a` or `b` (an
/// accumulation, `s = s + x`, which [`cols3`] refuses): `f` maps [`IN_PLACE_STEP`] lanes of
/// the operands, copied first, to those lanes of the result, a loop that still vectorizes.
/// False, nothing written, when a column lies outside `c` or `lanes` is not a whole number of
/// steps.
#[inline(always)]
fn zip_in_place(
    c: &mut [u64],
    d: usize,
    a: usize,
    b: usize,
    lanes: usize,
    mut f: impl FnMut(&[u64; IN_PLACE_STEP], &[u64; IN_PLACE_STEP], &mut [u64; IN_PLACE_STEP]),
) -> bool {
    const K: usize = IN_PLACE_STEP;
    if !lanes.is_multiple_of(K) || [d, a, b].iter().any(|&x| x + lanes > c.len()) {
        return false;
    }
    let (mut x, mut y, mut r) = ([0u64; K], [0u64; K], [0u64; K]);
    for o in (0..lanes).step_by(K) {
        x.copy_from_slice(&c[a + o..a + o + K]);
        y.copy_from_slice(&c[b + o..b + o + K]);
        f(&x, &y, &mut r);
        c[d + o..d + o + K].copy_from_slice(&r);
    }
    true
}

/// f32 `Fma` of columns `[d, a, b, c]` over every lane, [`IN_PLACE_STEP`] lanes a step over
/// copies of the operands (an accumulation `s = fma(x, y, s)` writes an operand's column):
/// `f32::mul_add`, one rounding, which the column levels with FMA compile to the instruction,
/// where `tern1` went through a call per lane (llama.cpp's k-quant matrix-vector shaders: half
/// their time). A NaN result is redone through `tern1` ([`fma_f32_nan`]), which defines its
/// payload; every other
/// result is `tern1`'s (its f64 round trip is exact). False, nothing written, when a column
/// lies outside `c` or `lanes` is not a whole number of steps.
#[inline(always)]
fn fma_f32_steps(c: &mut [u64], [d, a, b, z]: [usize; 4], lanes: usize) -> bool {
    const K: usize = IN_PLACE_STEP;
    if !lanes.is_multiple_of(K) || [d, a, b, z].iter().any(|&x| x + lanes > c.len()) {
        return false;
    }
    let f = |v: u64| f32::from_bits(v as u32);
    let (mut xs, mut ys, mut zs, mut rs) = ([0u64; K], [0u64; K], [0u64; K], [0u64; K]);
    for o in (0..lanes).step_by(K) {
        xs.copy_from_slice(&c[a + o..a + o + K]);
        ys.copy_from_slice(&c[b + o..b + o + K]);
        zs.copy_from_slice(&c[z + o..z + o + K]);
        let mut nan = false;
        for (((r, &x), &y), &w) in rs.iter_mut().zip(&xs).zip(&ys).zip(&zs) {
            let v = f(x).mul_add(f(y), f(w));
            nan |= v.is_nan();
            *r = v.to_bits() as u64;
        }
        if nan {
            for (i, r) in rs.iter_mut().enumerate() {
                if f(*r).is_nan() {
                    *r = fma_f32_nan(xs[i], ys[i], zs[i]);
                }
            }
        }
        c[d + o..d + o + K].copy_from_slice(&rs);
    }
    true
}

/// Column `d` (mutable) and column `a` (shared) of the register file, or None when they are the
/// same column.
pub(crate) fn cols2(
    c: &mut [u64],
    d: usize,
    a: usize,
    lanes: usize,
) -> Option<(&mut [u64], &[u64])> {
    if d == a || d + lanes > c.len() {
        return None;
    }
    let (lo, hi) = c.split_at_mut(d);
    let (dst, hi) = hi.split_at_mut(lanes);
    let src = if a < d {
        lo.get(a..a + lanes)?
    } else {
        let o = a.checked_sub(d + lanes)?;
        hi.get(o..o + lanes)?
    };
    Some((dst, src))
}

/// `c[d + l] = f(c[a + l])` over the active lanes; with every lane active and distinct columns
/// a loop over plain slices (no bounds checks: it vectorizes where `f` does).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn map_col(
    c: &mut [u64],
    dc: usize,
    ac: usize,
    lanes: usize,
    mask: &Mask,
    dense: bool,
    f: impl Fn(u64) -> u64,
) {
    if dense && let Some((dd, aa)) = cols2(c, dc, ac, lanes) {
        for (d, &x) in dd.iter_mut().zip(aa) {
            *d = f(x);
        }
        return;
    }
    each_lane!(mask, lanes, dense, |l| {
        c[dc + l] = f(c[ac + l]);
    });
}

/// Runs pure column ops on a one-lane register image (OpSpecConstantOp).
pub(crate) fn eval_const(ops: &[Op], img: &mut [u64]) -> Result<(), ExecError> {
    let mut mask = [0u64; MW];
    mask[0] = 1;
    let mut k = Columns {
        c: img,
        lanes: 1,
        mask: &mask,
        dense: true,
    };
    for o in ops {
        // A malformed module can make a compiled op write past the constants compiled so far.
        if let Some((d, n)) = o.result_cols()
            && d.ix() + n as usize > k.c.len()
        {
            return Err(ExecError::invalid(
                "a specialization constant operation writes past its result",
            ));
        }
        match o {
            Op::Un(x) => k.un(x),
            Op::Bin(x) => k.bin(x),
            Op::IntChain(x) => k.int_chain(x),
            Op::Tern(x) => k.tern(x),
            Op::Dot(x) => k.dot(x),
            Op::BfInsert(x) => k.bf_insert(x),
            Op::Cvt(x) => k.cvt(x),
            Op::Bitcast(x) => k.bitcast(x),
            Op::Trunc(x) => k.trunc_col(x),
            Op::Select(x) if x.nmats == 0 => k.select(x),
            Op::Copy(x) | Op::Move(x) if x.a.nmats == 0 => k.copy(x),
            Op::ExtractDyn(x) => k.extract_dyn(x),
            Op::InsertDyn(x) => k.insert_dyn(x),
            Op::Select(_)
            | Op::Copy(_)
            | Op::Move(_)
            | Op::Load(_)
            | Op::Store(_)
            | Op::LoadStore(_)
            | Op::CopyMem(_)
            | Op::AccessChain(_)
            | Op::ArrayLength(_)
            | Op::Atomic(_)
            | Op::Barrier { .. }
            | Op::Call(_)
            | Op::Sg(_)
            | Op::CmLoad(_)
            | Op::CmStore(_)
            | Op::CmMulAdd(_)
            | Op::CmMulAddSharedA(_)
            | Op::CmExtract(_)
            | Op::CmInsert(_)
            | Op::CmSplat(_)
            | Op::CmUn(_)
            | Op::CmBin(_)
            | Op::CmScale(_)
            | Op::CmCvt(_)
            | Op::Printf(_)
            | Op::Coop2(_)
            | Op::CoopVec(_)
            | Op::Descriptor(_)
            | Op::Once(_)
            | Op::IndexChain(_)
            | Op::IndexedGet(_)
            | Op::IndexedSet(_)
            | Op::Unsupported(_) => {
                return err(format!("{o:?} cannot be evaluated in OpSpecConstantOp"));
            }
        }
    }
    Ok(())
}

/// A scalar binary op of a three-column scratch block: columns 1 and 2 into column 0.
pub(crate) fn scratch_bin(op: BinOp, num: Num) -> BinArgs {
    BinArgs {
        op,
        num,
        d: Col(0),
        a: Col(1),
        b: Col(2),
        n: 1,
        bs: false,
        a_scalar: false,
    }
}

/// The register file of a batch as the column kernels see it: `lanes` values per column,
/// the active mask, and whether every lane is active (`dense`: plain loops).
pub(crate) struct Columns<'a> {
    /// The lane columns.
    pub c: &'a mut [u64],
    /// Lanes per column.
    pub lanes: usize,
    /// Active lanes.
    pub mask: &'a Mask,
    /// All lanes active.
    pub dense: bool,
}

/// A pure column op: its result columns from its operand columns, lane by lane.
#[derive(Clone, Copy)]
pub(crate) enum ColumnOp<'a> {
    Un(&'a UnArgs),
    Bin(&'a BinArgs),
    IntChain(&'a IntChainArgs),
    Tern(&'a TernArgs),
    Dot(&'a DotArgs),
    BfInsert(&'a BfInsertArgs),
    Cvt(&'a CvtArgs),
    Bitcast(&'a BitcastArgs),
    Trunc(&'a TruncArgs),
    ExtractDyn(&'a ExtractDynArgs),
    InsertDyn(&'a InsertDynArgs),
    /// The column part of [`Op::Select`] (its matrix slots are the caller's).
    Select(&'a SelectArgs),
    AccessChain(&'a AccessChainArgs),
}

impl Columns<'_> {
    /// Runs a column op with the widest vectors the CPU has. The column loops are plain loops
    /// over slices that the compiler vectorizes; the binary targets the x86-64 baseline, whose
    /// vectors (SSE2) hold two lanes, so the same loops are also compiled with AVX2 and with
    /// AVX-512 (`run_avx2`, `run_avx512`) and the level is detected once. Integer and IEEE
    /// float operations give the same bits at every width (Rust neither contracts a·b + c
    /// into an FMA nor reassociates).
    pub(crate) fn run(&mut self, o: ColumnOp) {
        self.run_at(crate::kernels::column_level(), o)
    }

    /// [`Columns::run`] at a given level, one the CPU has ([`crate::kernels::column_levels`]).
    pub(crate) fn run_at(&mut self, level: crate::kernels::ColumnLevel, o: ColumnOp) {
        match level {
            crate::kernels::ColumnLevel::Base => self.column_op(o),
            // SAFETY: the CPU has every feature `run_avx2` enables (column_levels() lists
            // Avx2 only then).
            #[cfg(target_arch = "x86_64")]
            crate::kernels::ColumnLevel::Avx2 => unsafe { run_avx2(self, o) },
            // SAFETY: the CPU has every feature `run_avx512` enables (column_levels() lists
            // Avx512 only then).
            #[cfg(target_arch = "x86_64")]
            crate::kernels::ColumnLevel::Avx512 => unsafe { run_avx512(self, o) },
        }
    }

    #[inline(always)]
    fn column_op(&mut self, o: ColumnOp) {
        match o {
            ColumnOp::Un(x) => self.un(x),
            ColumnOp::Bin(x) => self.bin(x),
            ColumnOp::IntChain(x) => self.int_chain(x),
            ColumnOp::Tern(x) => self.tern(x),
            ColumnOp::Dot(x) => self.dot(x),
            ColumnOp::BfInsert(x) => self.bf_insert(x),
            ColumnOp::Cvt(x) => self.cvt(x),
            ColumnOp::Bitcast(x) => self.bitcast(x),
            ColumnOp::Trunc(x) => self.trunc_col(x),
            ColumnOp::ExtractDyn(x) => self.extract_dyn(x),
            ColumnOp::InsertDyn(x) => self.insert_dyn(x),
            ColumnOp::Select(x) => self.select(x),
            ColumnOp::AccessChain(AccessChainArgs { d, base, steps }) => {
                let lanes = self.lanes;
                access_chain(
                    self.c,
                    d.ix() * lanes,
                    base.ix() * lanes,
                    steps,
                    lanes,
                    self.mask,
                    self.dense,
                )
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c,bmi1,bmi2,lzcnt,popcnt")]
fn run_avx2(c: &mut Columns, o: ColumnOp) {
    c.column_op(o)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(
    enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c,bmi1,bmi2,lzcnt,popcnt"
)]
fn run_avx512(c: &mut Columns, o: ColumnOp) {
    c.column_op(o)
}

impl Columns<'_> {
    /// [`Op::IntChain`]: 128 lanes at a time, the running value in 32-bit lanes on the stack
    /// (sixteen a vector), each step one loop over them, then the result (or the address of
    /// its [`ChainAddress`]) written. A uniform operand is read once, from the first active
    /// lane. Every lane of a chunk is read before any is written, so the result may share a
    /// column with an operand (a lane's result depends on its own operands only). Inactive
    /// lanes are computed too (nothing here can fault) but not written.
    #[inline(always)]
    pub(crate) fn int_chain(&mut self, x: &IntChainArgs) {
        const CHUNK: usize = 128;
        let (c, lanes, mask, dense) = (&mut *self.c, self.lanes, self.mask, self.dense);
        // With no lane active nothing is written: any lane will do.
        let lead = if dense {
            0
        } else {
            first_active(mask).unwrap_or(0)
        };
        // A uniform operand's value (the first active lane's; `lead` < `lanes`), read before
        // any chunk is written: the result may share its column.
        let one = |k: Col| c[k.ix() * lanes + lead.min(lanes.saturating_sub(1))];
        let first_one = one(x.first) as u32;
        let base_one = x.address.map_or(0, |a| one(a.base));
        let mut others = [0u32; MAX_CHAIN];
        for (o, s) in others.iter_mut().zip(&x.steps) {
            *o = one(s.other) as u32;
        }
        let mut acc = [0u32; CHUNK];
        for l0 in (0..lanes).step_by(CHUNK) {
            let n = (lanes - l0).min(CHUNK);
            let acc = &mut acc[..n];
            let col = |k: Col| k.ix() * lanes + l0;
            if x.first_uniform {
                acc.fill(first_one);
            } else {
                for (a, &v) in acc.iter_mut().zip(&c[col(x.first)..col(x.first) + n]) {
                    *a = v as u32;
                }
            }
            for (k, s) in x.steps.iter().enumerate() {
                // Past MAX_CHAIN steps (not compiled) a uniform operand is read lane by lane,
                // which gives the same values.
                let other = match others.get(k) {
                    Some(&v) if s.uniform => ChainIn::One(v),
                    _ => ChainIn::Lanes(&c[col(s.other)..col(s.other) + n]),
                };
                chain_step(s.op, s.acc_left, acc, other);
            }
            let d = col(x.d);
            let put = |c: &mut [u64], v: &[u64]| {
                if dense {
                    c[d..d + n].copy_from_slice(v);
                } else {
                    for (k, &a) in v.iter().enumerate() {
                        let l = l0 + k;
                        if mask[l / 64] >> (l % 64) & 1 != 0 {
                            c[d + k] = a;
                        }
                    }
                }
            };
            match x.address {
                None if dense => {
                    for (o, &a) in c[d..d + n].iter_mut().zip(acc.iter()) {
                        *o = a as u64;
                    }
                }
                None => {
                    let mut addr = [0u64; CHUNK];
                    for (o, &a) in addr.iter_mut().zip(acc.iter()) {
                        *o = a as u64;
                    }
                    put(c, &addr[..n]);
                }
                Some(ChainAddress {
                    base,
                    base_uniform,
                    offset,
                    stride,
                }) => {
                    // `access_chain_dense`'s sum and object test, per lane as a select.
                    let at = |p: u64, b: u64| {
                        if outside(p, b) != 0 {
                            memory::POISON
                        } else {
                            p
                        }
                    };
                    let moved = |a: u32| (a as i32 as i64).wrapping_mul(stride) as u64;
                    // Every lane active: the addresses go straight into the result column
                    // (every operand of the chunk is read by now). Otherwise they are made in
                    // a scratch, declared where used, and only the active lanes' written.
                    // Zeroing that scratch on every call and copying it was about a third of
                    // a 128-lane chain's time (197 → 136 TSC cycles in a microbenchmark).
                    if base_uniform {
                        let b = base_one;
                        let b0 = b.wrapping_add(offset as u64);
                        if dense {
                            for (o, &a) in c[d..d + n].iter_mut().zip(acc.iter()) {
                                *o = at(b0.wrapping_add(moved(a)), b);
                            }
                            continue;
                        }
                        let mut addr = [0u64; CHUNK];
                        for (o, &a) in addr.iter_mut().zip(acc.iter()) {
                            *o = at(b0.wrapping_add(moved(a)), b);
                        }
                        put(c, &addr[..n]);
                    } else {
                        let sum = |b: u64, a: u32| {
                            at(b.wrapping_add(offset as u64).wrapping_add(moved(a)), b)
                        };
                        let bc = col(base);
                        if dense && bc == d {
                            // The result replaces the bases lane by lane.
                            for (o, &a) in c[d..d + n].iter_mut().zip(acc.iter()) {
                                *o = sum(*o, a);
                            }
                            continue;
                        }
                        if dense && let Some((dst, bases)) = cols2(c, d, bc, n) {
                            for ((o, &a), &b) in dst.iter_mut().zip(acc.iter()).zip(bases) {
                                *o = sum(b, a);
                            }
                            continue;
                        }
                        let mut addr = [0u64; CHUNK];
                        let bases = &c[bc..bc + n];
                        for ((o, &a), &b) in addr.iter_mut().zip(acc.iter()).zip(bases) {
                            *o = sum(b, a);
                        }
                        put(c, &addr[..n]);
                    }
                }
            }
        }
    }

    /// [`Op::Bin`].
    #[inline(always)]
    pub(crate) fn bin(
        &mut self,
        &BinArgs {
            op,
            num,
            d,
            a,
            b,
            n,
            bs,
            a_scalar,
        }: &BinArgs,
    ) {
        let (c, lanes, mask, dense) = (&mut *self.c, self.lanes, self.mask, self.dense);
        let col = |x: Col| x.ix() * lanes;

        for k in 0..n {
            let ac = col(if a_scalar { a } else { a + k });
            let (dc, bc) = (col(d + k), col(if bs { b } else { b + k }));
            // Min/max of floats decoded to f32 by `$f`: the larger (smaller) operand's own bits;
            // ties (±0) and NaNs take the general path, which fixes their bits.
            macro_rules! pick {
                ($f:expr, $gt:expr) => {
                    if dense && let Some((dd, aa, bb)) = cols3(c, dc, ac, bc, lanes) {
                        // A select loop that vectorizes (a call in the loop kept flash
                        // attention's max at about 4 cycles a lane), then the lanes it left
                        // to the general path. Operands with the same clean bits and not NaN
                        // are the general path's "first operand" already (flash attention's
                        // padded rows are all such ties).
                        let clean = |x: u64| x >> num.bits() == 0;
                        let mut general = false;
                        for ((d, &x), &y) in dd.iter_mut().zip(aa).zip(bb) {
                            let (a, b) = ($f(x), $f(y));
                            let (first, second) = ($gt(a, b), $gt(b, a));
                            let same = (x == y) & (a == b) & clean(x);
                            *d = if first { x } else { y };
                            general |= !(first | second | same);
                        }
                        if general {
                            for ((d, &x), &y) in dd.iter_mut().zip(aa).zip(bb) {
                                let (a, b) = ($f(x), $f(y));
                                let same = (x == y) & (a == b) & clean(x);
                                if !($gt(a, b) | $gt(b, a) | same) {
                                    *d = bin1(op, num, x, y);
                                }
                            }
                        }
                    } else {
                        each_lane!(mask, lanes, dense, |l| {
                            let (x, y) = (c[ac + l], c[bc + l]);
                            let (a, b) = ($f(x), $f(y));
                            // A select, not a branch: the sign of a ReLU input is random.
                            let (first, second) = ($gt(a, b), $gt(b, a));
                            let r = if first { x } else { y };
                            c[dc + l] = if first | second {
                                r
                            } else {
                                bin1(op, num, x, y)
                            };
                        })
                    }
                };
            }
            if bin_loop(op, num, c, dc, ac, bc, lanes, mask, dense) {
                continue;
            }
            if num == Num::F32 && matches!(op, BinOp::FMul | BinOp::FAdd | BinOp::FSub) {
                // As `bin1` computes them (f32 directly); a NaN result goes through `bin1`, so
                // its payload does not depend on the operand order a vectorized loop picks.
                macro_rules! arith {
                    ($e:expr) => {
                        if dense && let Some((dd, aa, bb)) = cols3(c, dc, ac, bc, lanes) {
                            // A loop that vectorizes, then the rare NaN results fixed.
                            let mut nan = false;
                            for ((d, &x), &y) in dd.iter_mut().zip(aa).zip(bb) {
                                let r: f32 =
                                    $e(f32::from_bits(x as u32), f32::from_bits(y as u32));
                                nan |= r.is_nan();
                                *d = r.to_bits() as u64;
                            }
                            if nan {
                                for ((d, &x), &y) in dd.iter_mut().zip(aa).zip(bb) {
                                    if f32::from_bits(*d as u32).is_nan() {
                                        *d = bin1(op, num, x, y);
                                    }
                                }
                            }
                        } else if !(dense
                            && zip_in_place(c, dc, ac, bc, lanes, |xs, ys, rs| {
                                // The same loop on a step's copies (the result column is an
                                // operand's): the operands are still there to fix a NaN with.
                                // (One closure for both loops ran the matrix-vector shader 4 %
                                // slower.)
                                let mut nan = false;
                                for ((r, &x), &y) in rs.iter_mut().zip(xs).zip(ys) {
                                    let v: f32 =
                                        $e(f32::from_bits(x as u32), f32::from_bits(y as u32));
                                    nan |= v.is_nan();
                                    *r = v.to_bits() as u64;
                                }
                                if nan {
                                    for ((r, &x), &y) in rs.iter_mut().zip(xs).zip(ys) {
                                        if f32::from_bits(*r as u32).is_nan() {
                                            *r = bin1(op, num, x, y);
                                        }
                                    }
                                }
                            }))
                        {
                            each_lane!(mask, lanes, dense, |l| {
                                let (x, y) = (c[ac + l], c[bc + l]);
                                let r: f32 =
                                    $e(f32::from_bits(x as u32), f32::from_bits(y as u32));
                                c[dc + l] = if r.is_nan() {
                                    bin1(op, num, x, y)
                                } else {
                                    r.to_bits() as u64
                                };
                            })
                        }
                    };
                }
                match op {
                    BinOp::FMul => arith!(|a: f32, b: f32| a * b),
                    BinOp::FAdd => arith!(|a: f32, b: f32| a + b),
                    _ => arith!(|a: f32, b: f32| a - b),
                }
            } else if num == Num::F32
                && matches!(op, BinOp::FMin | BinOp::FMax | BinOp::NMin | BinOp::NMax)
            {
                // Flash attention's row maxima fold through here.
                let f = |v: u64| f32::from_bits(v as u32);
                match op {
                    BinOp::FMax | BinOp::NMax => pick!(f, |a: f32, b: f32| a > b),
                    _ => pick!(f, |a: f32, b: f32| a < b),
                }
            } else if num == Num::F16
                && matches!(
                    op,
                    BinOp::FAdd
                        | BinOp::FSub
                        | BinOp::FMul
                        | BinOp::FMin
                        | BinOp::FMax
                        | BinOp::NMin
                        | BinOp::NMax
                )
            {
                // f16 through f32: +, −, × rounded in f32 then to f16 equal the f64 path (24 ≥
                // 2·11 + 2 bits: double rounding is innocuous); min/max pick an operand. NaN
                // results take the general path, which fixes their bits.
                let lut = floats::f16_lut();
                let f = |v: u64| lut[v as u16 as usize];
                // Arithmetic through f32; NaN results take the general path.
                macro_rules! arith {
                    ($e:expr) => {
                        each_lane!(mask, lanes, dense, |l| {
                            let (x, y) = (c[ac + l], c[bc + l]);
                            let r = $e(f(x), f(y));
                            c[dc + l] = if r.is_nan() {
                                bin1(op, num, x, y)
                            } else {
                                floats::f32_to_f16(r) as u64
                            };
                        })
                    };
                }
                match op {
                    BinOp::FAdd => arith!(|a: f32, b: f32| a + b),
                    BinOp::FSub => arith!(|a: f32, b: f32| a - b),
                    BinOp::FMul => arith!(|a: f32, b: f32| a * b),
                    BinOp::FMax | BinOp::NMax => pick!(f, |a: f32, b: f32| a > b),
                    _ => pick!(f, |a: f32, b: f32| a < b),
                }
            } else {
                each_lane!(mask, lanes, dense, |l| {
                    c[dc + l] = bin1(op, num, c[ac + l], c[bc + l]);
                })
            }
        }
    }

    /// [`Op::Un`].
    #[inline(always)]
    pub(crate) fn un(&mut self, &UnArgs { op, num, d, a, n }: &UnArgs) {
        let (c, lanes, mask, dense) = (&mut *self.c, self.lanes, self.mask, self.dense);
        let col = |x: Col| x.ix() * lanes;

        for k in 0..n {
            let (dc, ac) = (col(d + k), col(a + k));
            if op == UnOp::Exp
                && num == Num::F32
                && dense
                && let Some((dd, aa)) = cols2(c, dc, ac, lanes)
            {
                // Softmax's exponentials: a loop without branches that vectorizes, then the
                // lanes outside `exp_in_range`'s range (and NaNs) redone by `un1`.
                // The range test rides along (an or of vector compares), so that the scalar
                // pass runs only for a column that has such a lane.
                let wide = |x: u64| f32::from_bits(x as u32) as f64;
                let mut outside = false;
                for (d, &x) in dd.iter_mut().zip(aa) {
                    outside |= !floats::in_exp_range(wide(x));
                    *d = (floats::exp_in_range(wide(x)) as f32).to_bits() as u64;
                }
                if outside {
                    for (d, &x) in dd.iter_mut().zip(aa) {
                        if !floats::in_exp_range(wide(x)) {
                            *d = un1(op, num, x);
                        }
                    }
                }
                continue;
            }
            if op == UnOp::LNot {
                // As `un1`, in a loop that vectorizes (the generic one matches `op` per lane).
                map_col(c, dc, ac, lanes, mask, dense, |x| fb(x == 0));
                continue;
            }
            map_col(c, dc, ac, lanes, mask, dense, |x| un1(op, num, x));
        }
    }

    /// [`Op::Tern`].
    #[inline(always)]
    pub(crate) fn tern(
        &mut self,
        &TernArgs {
            op,
            num,
            d,
            a,
            b,
            c: cc,
            n,
            bs,
            cs,
        }: &TernArgs,
    ) {
        let (c, lanes, mask, dense) = (&mut *self.c, self.lanes, self.mask, self.dense);
        let col = |x: Col| x.ix() * lanes;

        for k in 0..n {
            let (dc, ac) = (col(d + k), col(a + k));
            let bc = col(if bs { b } else { b + k });
            let ccc = col(if cs { cc } else { cc + k });
            if op == TernOp::Fma
                && num == Num::F32
                && dense
                && fma_f32_steps(c, [dc, ac, bc, ccc], lanes)
            {
                continue;
            }
            each_lane!(mask, lanes, dense, |l| {
                c[dc + l] = tern1(op, num, c[ac + l], c[bc + l], c[ccc + l]);
            });
        }
    }

    /// [`Op::BfInsert`].
    #[inline(always)]
    pub(crate) fn bf_insert(
        &mut self,
        &BfInsertArgs {
            d,
            base,
            ins,
            off,
            cnt,
            n,
            bits,
        }: &BfInsertArgs,
    ) {
        let (c, lanes, mask, dense) = (&mut *self.c, self.lanes, self.mask, self.dense);
        let col = |x: Col| x.ix() * lanes;

        for k in 0..n {
            let (dc, bc, ic) = (col(d + k), col(base + k), col(ins + k));
            let (oc, cc2) = (col(off), col(cnt));
            each_lane!(mask, lanes, dense, |l| {
                let (o, n2) = (c[oc + l].min(64) as u32, c[cc2 + l].min(64) as u32);
                let m = if n2 == 0 {
                    0
                } else {
                    trunc(u64::MAX, n2) << o.min(63)
                };
                c[dc + l] = trunc(
                    (c[bc + l] & !m) | ((c[ic + l] << o.min(63)) & m),
                    bits as u32,
                );
            });
        }
    }

    /// [`Op::Cvt`].
    #[inline(always)]
    pub(crate) fn cvt(
        &mut self,
        &CvtArgs {
            kind,
            from,
            to,
            d,
            a,
            n,
        }: &CvtArgs,
    ) {
        let (c, lanes, mask, dense) = (&mut *self.c, self.lanes, self.mask, self.dense);
        let col = |x: Col| x.ix() * lanes;

        // The conversions decode functions run most get loops of their own: `cvt1` with
        // constant arguments (inlined, its match folded away), or a faster equal form whose
        // NaN inputs still go through `cvt1` (which fixes their bits).
        macro_rules! lanes {
            ($dc:expr, $ac:expr, $f:expr) => {
                map_col(c, $dc, $ac, lanes, mask, dense, $f)
            };
        }
        macro_rules! constant {
            ($dc:expr, $ac:expr, $k:expr, $from:expr, $to:expr) => {
                lanes!($dc, $ac, |x| cvt1($k, $from, $to, x))
            };
        }
        use CvtKind as K;
        use Num::{F16, F32, Int};
        for k in 0..n {
            let (dc, ac) = (col(d + k), col(a + k));
            match (kind, from, to) {
                (K::UToF, Int(32), F32) => {
                    lanes!(dc, ac, |x: u64| (x as u32 as f32).to_bits() as u64)
                }
                // The whole column at the vector width (F16C where the CPU has it, exact for
                // every value but NaNs), a chunk at a time through the stack; NaN inputs then
                // through `cvt1`, which gives their bits. The table below, one random read a
                // lane into 256 KiB, missed the caches when the register columns had been
                // pushed out by a K step's tiles (q4_k's staged scales: 2.2 ns a lane).
                (K::FConv, F16, F32) if dense && dc != ac => {
                    let Some((dst, src)) = cols2(c, dc, ac, lanes) else {
                        lanes!(dc, ac, |x| cvt1(kind, from, to, x));
                        continue;
                    };
                    let mut wide = [0f32; 128];
                    for (d, s) in dst.chunks_mut(128).zip(src.chunks(128)) {
                        crate::kernels::f16_cols_to_f32(s, &mut wide[..s.len()]);
                        for ((d, &w), &x) in d.iter_mut().zip(&wide).zip(s) {
                            *d = if floats::f16_is_nan(x as u16) {
                                cvt1(kind, from, to, x)
                            } else {
                                w.to_bits() as u64
                            };
                        }
                    }
                }
                (K::FConv, F16, F32) => {
                    let lut = floats::f16_lut();
                    lanes!(dc, ac, |x: u64| {
                        let h = x as u16;
                        if floats::f16_is_nan(h) {
                            cvt1(kind, from, to, x)
                        } else {
                            lut[h as usize].to_bits() as u64
                        }
                    })
                }
                // One rounding of the same exact value as through f64.
                (K::FConv, F32, F16) if dense && dc != ac => {
                    // The whole column through vcvtps2ph where the CPU has it; NaN inputs
                    // then through `cvt1`, which fixes their bits.
                    let Some((dst, src)) = cols2(c, dc, ac, lanes) else {
                        lanes!(dc, ac, |x| cvt1(kind, from, to, x));
                        continue;
                    };
                    if crate::kernels::f32_cols_to_f16(src, dst) {
                        for (d, &x) in dst.iter_mut().zip(src) {
                            if f32::from_bits(x as u32).is_nan() {
                                *d = cvt1(kind, from, to, x);
                            }
                        }
                    }
                }
                (K::FConv, F32, F16) => lanes!(dc, ac, |x: u64| {
                    let f = f32::from_bits(x as u32);
                    if f.is_nan() {
                        cvt1(kind, from, to, x)
                    } else {
                        half::f16::from_f32(f).to_bits() as u64
                    }
                }),
                (K::UConv, Int(8), Int(32)) => constant!(dc, ac, K::UConv, Int(8), Int(32)),
                (K::UConv, Int(16), Int(32)) => constant!(dc, ac, K::UConv, Int(16), Int(32)),
                (K::SConv, Int(8), Int(32)) => constant!(dc, ac, K::SConv, Int(8), Int(32)),
                (K::SConv, Int(32), Int(8)) => constant!(dc, ac, K::SConv, Int(32), Int(8)),
                (K::SToF, Int(32), F16) => constant!(dc, ac, K::SToF, Int(32), F16),
                (K::UToF, Int(32), F16) => constant!(dc, ac, K::UToF, Int(32), F16),
                (K::SToF, Int(32), F32) => constant!(dc, ac, K::SToF, Int(32), F32),
                // Quantized weights: 8- and 16-bit integers to floats (q8_0's int8 vectors,
                // q4_0's and q4_k's nibbles as uint8 vectors).
                (K::SToF, Int(8), F32) => constant!(dc, ac, K::SToF, Int(8), F32),
                (K::UToF, Int(8), F32) => constant!(dc, ac, K::UToF, Int(8), F32),
                (K::SToF, Int(16), F32) => constant!(dc, ac, K::SToF, Int(16), F32),
                (K::UToF, Int(16), F32) => constant!(dc, ac, K::UToF, Int(16), F32),
                (K::SToF, Int(8), F16) => constant!(dc, ac, K::SToF, Int(8), F16),
                (K::UToF, Int(8), F16) => constant!(dc, ac, K::UToF, Int(8), F16),
                _ => lanes!(dc, ac, |x| cvt1(kind, from, to, x)),
            }
        }
    }

    /// [`Op::Bitcast`].
    #[inline(always)]
    pub(crate) fn bitcast(
        &mut self,
        &BitcastArgs {
            d,
            a,
            from,
            na,
            to,
            nd,
        }: &BitcastArgs,
    ) {
        let (c, lanes, mask, dense) = (&mut *self.c, self.lanes, self.mask, self.dense);
        let col = |x: Col| x.ix() * lanes;

        let (fb_, tb) = (from.bits().max(1), to.bits().max(1));
        if na * fb_ > 128 {
            // Long vectors (cooperative vectors): each result component gathered from the
            // bit span it covers.
            each_lane!(mask, lanes, dense, |l| {
                for k in 0..nd {
                    let (mut v, mut got) = (0u64, 0u32);
                    while got < tb {
                        let p = k * tb + got;
                        let (ci, off) = (p / fb_, p % fb_);
                        let take = (fb_ - off).min(tb - got);
                        let bits = trunc(trunc(c[col(a + ci) + l], fb_) >> off, take);
                        v |= bits << got;
                        got += take;
                    }
                    c[col(d + k) + l] = v;
                }
            });
            return;
        }
        // Column by column where components map one to one, split or join (the same bits as
        // the general lane loop below, computed in loops over lanes that vectorize).
        if na == nd && fb_ == tb {
            for k in 0..nd {
                let (dc, ac) = (col(d + k), col(a + k));
                each_lane!(mask, lanes, dense, |l| {
                    c[dc + l] = trunc(c[ac + l], tb);
                });
            }
            return;
        }
        if na == 1 && nd * tb == fb_ {
            let ac = col(a);
            for k in 0..nd {
                let dc = col(d + k);
                each_lane!(mask, lanes, dense, |l| {
                    c[dc + l] = trunc(trunc(c[ac + l], fb_) >> (k * tb), tb);
                });
            }
            return;
        }
        if nd == 1 && na * fb_ == tb && tb <= 64 {
            let dc = col(d);
            each_lane!(mask, lanes, dense, |l| {
                let mut v = 0u64;
                for k in 0..na {
                    v |= trunc(c[col(a + k) + l], fb_) << (k * fb_);
                }
                c[dc + l] = v;
            });
            return;
        }
        each_lane!(mask, lanes, dense, |l| {
            let mut acc: u128 = 0;
            for k in 0..na {
                acc |= (trunc(c[col(a + k) + l], fb_) as u128) << (k * fb_);
            }
            for k in 0..nd {
                c[col(d + k) + l] = trunc((acc >> (k * tb)) as u64, tb);
            }
        });
    }

    /// [`Op::Trunc`].
    #[inline(always)]
    pub(crate) fn trunc_col(&mut self, &TruncArgs { d, a, bits }: &TruncArgs) {
        let (c, lanes, mask, dense) = (&mut *self.c, self.lanes, self.mask, self.dense);
        let col = |x: Col| x.ix() * lanes;

        let (dc, ac) = (col(d), col(a));
        each_lane!(mask, lanes, dense, |l| {
            c[dc + l] = trunc(c[ac + l], bits as u32);
        });
    }

    /// [`Op::Select`].
    #[inline(always)]
    pub(crate) fn select(
        &mut self,
        &SelectArgs {
            d,
            c: cond,
            a,
            b,
            n,
            cs,
            ..
        }: &SelectArgs,
    ) {
        let (c, lanes, mask, dense) = (&mut *self.c, self.lanes, self.mask, self.dense);
        let col = |x: Col| x.ix() * lanes;

        for k in 0..n {
            let (dc, ac, bc) = (col(d + k), col(a + k), col(b + k));
            let cc = col(if cs { cond } else { cond + k });
            each_lane!(mask, lanes, dense, |l| {
                c[dc + l] = if c[cc + l] != 0 { c[ac + l] } else { c[bc + l] };
            });
        }
    }

    /// [`Op::Copy`].
    pub(crate) fn copy(&mut self, &CopyArgs { d, a }: &CopyArgs) {
        let (c, lanes, mask, dense) = (&mut *self.c, self.lanes, self.mask, self.dense);
        let col = |x: Col| x.ix() * lanes;

        for k in 0..a.ncols {
            let (dc, ac) = (col(d.col + k), col(a.col + k));
            if dense {
                c.copy_within(ac..ac + lanes, dc);
            } else {
                each_lane!(mask, lanes, false, |l| {
                    c[dc + l] = c[ac + l];
                });
            }
        }
    }

    /// [`Op::Dot`]. Per lane it is `bin1`'s multiplies and adds in component order. With every
    /// lane active, f32 and at most [`IN_PLACE_STEP`] components, a loop over steps of lanes
    /// computes the same IEEE operations (Rust neither contracts them into FMAs nor
    /// reassociates) and redoes a lane through `bin1` where the result is a NaN, whose payload
    /// `bin1` defines (a NaN anywhere in the sum makes the result one). A step reads all its
    /// operands before it writes, so the result may share a column with an operand.
    #[inline(always)]
    pub(crate) fn dot(
        &mut self,
        &DotArgs {
            num,
            d,
            a,
            sa,
            b,
            sb,
            n,
        }: &DotArgs,
    ) {
        const K: usize = IN_PLACE_STEP;
        let (c, lanes, mask, dense) = (&mut *self.c, self.lanes, self.mask, self.dense);
        let col = |x: Col, k: u32, s: u32| (x.ix() + (k * s) as usize) * lanes;
        let lane = |c: &[u64], l: usize| {
            let mut r = bin1(BinOp::FMul, num, c[col(a, 0, sa) + l], c[col(b, 0, sb) + l]);
            for k in 1..n {
                let p = bin1(BinOp::FMul, num, c[col(a, k, sa) + l], c[col(b, k, sb) + l]);
                r = bin1(BinOp::FAdd, num, r, p);
            }
            r
        };
        let last = |x: Col, s: u32| col(x, n.saturating_sub(1), s) + lanes;
        if dense
            && num == Num::F32
            && (1..=K as u32).contains(&n)
            && lanes.is_multiple_of(K)
            && [last(a, sa), last(b, sb), col(d, 0, 0) + lanes]
                .iter()
                .all(|&end| end <= c.len())
        {
            let f = |v: u64| f32::from_bits(v as u32);
            for o in (0..lanes).step_by(K) {
                let mut r = [0f32; K];
                for k in 0..n {
                    let (xs, ys) = (&c[col(a, k, sa) + o..][..K], &c[col(b, k, sb) + o..][..K]);
                    for ((r, &x), &y) in r.iter_mut().zip(xs).zip(ys) {
                        let p = f(x) * f(y);
                        *r = if k == 0 { p } else { *r + p };
                    }
                }
                let nan = r.iter().any(|v| v.is_nan());
                let mut bits = [0u64; K];
                for (i, (o2, v)) in bits.iter_mut().zip(r).enumerate() {
                    *o2 = if nan && v.is_nan() {
                        lane(c, o + i)
                    } else {
                        v.to_bits() as u64
                    };
                }
                c[col(d, 0, 0) + o..][..K].copy_from_slice(&bits);
            }
            return;
        }
        each_lane!(mask, lanes, dense, |l| {
            let r = lane(c, l);
            c[col(d, 0, 0) + l] = r;
        });
    }

    /// [`Op::ExtractDyn`].
    #[inline(always)]
    pub(crate) fn extract_dyn(&mut self, &ExtractDynArgs { d, a, idx, n, w }: &ExtractDynArgs) {
        let (c, lanes, mask, dense) = (&mut *self.c, self.lanes, self.mask, self.dense);
        let col = |x: Col| x.ix() * lanes;

        let (dc, ic) = (col(d), col(idx));
        each_lane!(mask, lanes, dense, |l| {
            let i = trunc(c[ic + l], w);
            c[dc + l] = if i < n as u64 {
                c[col(a + i as u32) + l]
            } else {
                0
            };
        });
    }

    /// [`Op::InsertDyn`].
    #[inline(always)]
    pub(crate) fn insert_dyn(&mut self, &InsertDynArgs { d, a, v, idx, n, w }: &InsertDynArgs) {
        let (c, lanes, mask, dense) = (&mut *self.c, self.lanes, self.mask, self.dense);
        let col = |x: Col| x.ix() * lanes;

        let (vc, ic) = (col(v), col(idx));
        each_lane!(mask, lanes, dense, |l| {
            let i = trunc(c[ic + l], w);
            for k in 0..n {
                c[col(d + k) + l] = if i == k as u64 {
                    c[vc + l]
                } else {
                    c[col(a + k) + l]
                };
            }
        });
    }
}

/// The identity of a GroupNonUniform reduction or scan over `op` (SPIR-V 3.3.24 Group
/// Operation: the value the exclusive scan gives the first invocation).
pub(crate) fn reduction_identity(op: BinOp, num: Num) -> u64 {
    let bits = num.bits();
    use BinOp::*;
    match op {
        IMul => 1,
        FMul => floats::from_f64(num, 1.0),
        SMin => trunc((1u64 << (bits - 1)) - 1, bits),
        UMin | And => trunc(u64::MAX, bits),
        NMin | FMin => floats::from_f64(num, f64::INFINITY),
        SMax => trunc(1u64 << (bits - 1), bits),
        NMax | FMax => floats::from_f64(num, f64::NEG_INFINITY),
        LAnd => 1,
        IAdd | FAdd | Or | Xor | LOr | LNe | UMax => 0,
        // Not reduction operators: the compiler never emits a reduction over them.
        ISub | UDiv | SDiv | UMod | SRem | SMod | FSub | FDiv | FRem | FMod | Shl | ShrL | ShrA
        | IEq | INe | UGt | UGe | ULt | ULe | SGt | SGe | SLt | SLe | FOEq | FUEq | FONe | FUNe
        | FOLt | FULt | FOGt | FUGt | FOLe | FULe | FOGe | FUGe | Ordered | Unordered | LEq
        | Pow | Atan2 | Step | Ldexp | UMulHi | SMulHi | AddCarry | SubBorrow => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal operands (±0 included) give the first operand: GLSL.std.450 FMax is "y if
    /// x < y; otherwise x", FMin "y if y < x; otherwise x" (NMax/NMin alike without NaNs).
    #[test]
    fn min_max_of_signed_zeros_return_the_first_operand() {
        for op in [BinOp::FMax, BinOp::FMin, BinOp::NMax, BinOp::NMin] {
            for (num, nz) in [(Num::F32, 0x8000_0000u64), (Num::F16, 0x8000)] {
                assert_eq!(bin1(op, num, nz, 0), nz, "{op:?} {num:?} (-0, +0)");
                assert_eq!(bin1(op, num, 0, nz), 0, "{op:?} {num:?} (+0, -0)");
            }
        }
    }

    /// Min and max return an operand's own bits without rounding it again: the same bits as
    /// rounding the f64 result, for every kind, pairs of specials and random values (upper
    /// garbage bits included), NaNs too.
    #[test]
    fn min_max_skip_the_rounding_with_the_same_bits() {
        let mut next = coopmat_testkit::xorshift64(0x9e37_79b9_7f4a_7c15);
        for num in [
            Num::F16,
            Num::F32,
            Num::F64,
            Num::BF16,
            Num::E4M3,
            Num::E5M2,
        ] {
            let bits = num.bits();
            let mut vals: Vec<u64> = vec![0, 1, 1 << (bits - 1), (1 << (bits - 1)) | 1];
            vals.extend((0..300).map(|_| next()));
            if bits <= 16 {
                vals.extend(0..1u64 << bits.min(8));
            }
            for &x in &vals {
                for &y in &vals {
                    for (op, max) in [
                        (BinOp::FMin, false),
                        (BinOp::FMax, true),
                        (BinOp::NMin, false),
                        (BinOp::NMax, true),
                    ] {
                        let rounded = floats::from_f64(
                            num,
                            min_max_nan(floats::to_f64(num, x), floats::to_f64(num, y), max),
                        );
                        assert_eq!(bin1(op, num, x, y), rounded, "{num:?} {op:?} {x:#x} {y:#x}");
                    }
                }
            }
        }
    }

    /// The f32 and f16 min/max columns at every level, every lane active or only some: the
    /// larger (smaller) operand's own bits, garbage above its value included, and the general
    /// per-lane path's bits for everything else: ties of equal values (which the vectorized loop
    /// returns as the first operand itself), ±0 pairs, NaNs of both kinds and signs.
    #[test]
    fn min_max_columns_match_bin1() {
        let mut next = coopmat_testkit::xorshift64(0x51ed_270b_a3c9_4f17);
        for (num, special) in [
            (
                Num::F32,
                vec![
                    0u64,
                    0x8000_0000,
                    1,
                    0x3f80_0000,
                    0xbf80_0000,
                    0x7f80_0000,
                    0xff80_0000,
                    0x7fc0_0000,
                    0xffc0_0001,
                    0x7f80_0001,
                    0x7f7f_ffff,
                ],
            ),
            (
                Num::F16,
                vec![
                    0, 0x8000, 1, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x7c01,
                ],
            ),
        ] {
            let mut vals = special.clone();
            let low = (1u64 << num.bits()) - 1;
            vals.extend((0..200).map(|_| next() & low));
            // Garbage above the value's bits, on copies of the specials.
            vals.extend(special.iter().map(|&x| x | 0xdead_0000_0000_0000));
            // A column of finite values with garbage and nothing else: its ties are the only
            // lanes, so no NaN lane sends the column through the general path.
            let finite: Vec<u64> = special[..7]
                .iter()
                .map(|&x| x | 0xdead_0000_0000_0000)
                .collect();
            let lanes = 64;
            for op in [BinOp::FMax, BinOp::FMin, BinOp::NMax, BinOp::NMin] {
                for chunk in vals.chunks(lanes).chain([&finite[..]]) {
                    for shift in [0, 1, 5] {
                        for level in crate::kernels::column_levels() {
                            for sparse in [false, true] {
                                let mut mask = [0u64; MW];
                                mask[0] = if sparse {
                                    0x5555_5555_5555_5555
                                } else {
                                    u64::MAX
                                };
                                let mut c = vec![0u64; 3 * lanes];
                                for (l, &x) in chunk.iter().enumerate() {
                                    c[lanes + l] = x;
                                    c[2 * lanes + l] = chunk[(l + shift) % chunk.len()];
                                }
                                let mut cols = Columns {
                                    c: &mut c,
                                    lanes,
                                    mask: &mask,
                                    dense: !sparse,
                                };
                                cols.run_at(level, ColumnOp::Bin(&scratch_bin(op, num)));
                                let value = |x: u64| match num {
                                    Num::F16 => half::f16::from_bits(x as u16).to_f32(),
                                    _ => f32::from_bits(x as u32),
                                };
                                let max = matches!(op, BinOp::FMax | BinOp::NMax);
                                for l in (0..lanes).filter(|l| mask[0] >> l & 1 == 1) {
                                    let (x, y) = (c[lanes + l], c[2 * lanes + l]);
                                    let (a, b) = (value(x), value(y));
                                    let want = match (a > b, b > a) {
                                        (true, _) => {
                                            if max {
                                                x
                                            } else {
                                                y
                                            }
                                        }
                                        (_, true) => {
                                            if max {
                                                y
                                            } else {
                                                x
                                            }
                                        }
                                        _ => bin1(op, num, x, y),
                                    };
                                    assert_eq!(
                                        c[l], want,
                                        "{level:?} {num:?} {op:?} {x:#x} {y:#x} sparse {sparse}"
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The f16 column fast paths give the bits of the general per-lane path, special values
    /// (±0, subnormals, infinities, NaNs, the largest finite) included.
    #[test]
    fn f16_column_fast_paths_match_bin1() {
        let special: [u16; 10] = [
            0x0000, 0x8000, 0x0001, 0x83ff, 0x3c00, 0xbc00, 0x7bff, 0x7c00, 0xfc00, 0x7e00,
        ];
        let mut vals: Vec<u16> = special.to_vec();
        let mut s = 0x1234_5678u32;
        for _ in 0..2000 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            vals.push(s as u16);
        }
        let lanes = 64;
        let mut mask = [0u64; MW];
        mask[0] = u64::MAX;
        for op in [
            BinOp::FAdd,
            BinOp::FSub,
            BinOp::FMul,
            BinOp::FMin,
            BinOp::FMax,
            BinOp::NMin,
            BinOp::NMax,
        ] {
            for chunk in vals.chunks(lanes) {
                for shift in [0, 1, 7] {
                    for level in crate::kernels::column_levels() {
                        let mut c = vec![0u64; 3 * lanes];
                        for (l, &x) in chunk.iter().enumerate() {
                            c[lanes + l] = x as u64;
                            c[2 * lanes + l] = chunk[(l + shift) % chunk.len()] as u64;
                        }
                        let mut cols = Columns {
                            c: &mut c,
                            lanes,
                            mask: &mask,
                            dense: true,
                        };
                        cols.run_at(level, ColumnOp::Bin(&scratch_bin(op, Num::F16)));
                        for l in 0..chunk.len() {
                            let (x, y) = (c[lanes + l], c[2 * lanes + l]);
                            assert_eq!(
                                c[l],
                                bin1(op, Num::F16, x, y),
                                "{level:?} {op:?} {x:#x} {y:#x}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;

    /// Raw inputs of every kind: all f16 bit patterns (NaNs and subnormals included), f32
    /// edge values and a pseudo-random spread of 64-bit words.
    fn inputs() -> Vec<u64> {
        let mut v: Vec<u64> = (0..=u16::MAX as u64).collect();
        for f in [
            0.0f32,
            -0.0,
            1.0,
            -1.5,
            65504.0,
            65520.0,
            1e-8,
            6e-5,
            f32::INFINITY,
        ] {
            v.push(f.to_bits() as u64);
        }
        v.push(0x7fc0_0001);
        v.push(0xffa0_0000);
        let mut next = coopmat_testkit::xorshift64(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20000 {
            let x = next();
            v.push(x);
            v.push(x & 0xffff_ffff);
        }
        v
    }

    /// Twelve batches of 32-bit words from [`inputs`] past its f16 patterns: f32 edge values,
    /// then random words, NaNs among them.
    fn f32_batches() -> Vec<Vec<u64>> {
        let all = inputs();
        let full = all.chunks(MAX_LANES).filter(|c| c.len() == MAX_LANES);
        full.skip(64)
            .take(12)
            .map(|c| c.iter().map(|&x| trunc(x, 32)).collect())
            .collect()
    }

    /// Runs one op over `vals` in column `a` (and `a + 1..` for multi-component inputs) of a
    /// batch as wide as the inputs, all lanes active.
    /// Runs it at every column level the CPU has ([`crate::kernels::column_levels`]) and
    /// requires the same register file from each; returns the baseline's.
    fn run(
        vals: &[u64],
        ncols_in: u32,
        f: impl Fn(&mut Columns, crate::kernels::ColumnLevel),
    ) -> (Vec<u64>, usize) {
        let lanes = MAX_LANES;
        let n = vals.len().min(lanes);
        let mut c0 = vec![0u64; lanes * 16];
        for k in 0..ncols_in as usize {
            for l in 0..n {
                c0[(8 + k) * lanes + l] = vals[(l * 7 + k * 131) % vals.len()];
            }
        }
        let mut mask = [0u64; MW];
        for l in 0..n {
            mask[l / 64] |= 1 << (l % 64);
        }
        let dense = n == lanes;
        let mut out: Option<Vec<u64>> = None;
        for level in crate::kernels::column_levels() {
            let mut c = c0.clone();
            f(
                &mut Columns {
                    c: &mut c,
                    lanes,
                    mask: &mask,
                    dense,
                },
                level,
            );
            match &out {
                None => out = Some(c),
                Some(base) => assert!(*base == c, "{level:?} differs from the baseline"),
            }
        }
        (out.unwrap_or(c0), n)
    }

    /// Binary ops whose result column is an operand's (`s = s + x`, which the distinct-column
    /// loops refuse) take [`zip_in_place`] with every lane active: the same bits as `bin1`
    /// from the operands as they were, NaN payloads included, where the result is the first
    /// operand, the second, or both.
    #[test]
    fn in_place_bins_equal_bin1() {
        use Num::{F32, Int};
        let cases = [
            (BinOp::FAdd, F32),
            (BinOp::FMul, F32),
            (BinOp::FSub, F32),
            (BinOp::IAdd, Int(32)),
            (BinOp::IMul, Int(32)),
            (BinOp::Xor, Int(32)),
        ];
        let all = inputs();
        let lanes = MAX_LANES;
        for (op, num) in cases {
            for chunk in all.chunks(lanes).filter(|c| c.len() == lanes) {
                let vals: Vec<u64> = chunk.iter().map(|&x| trunc(x, 32)).collect();
                let operand = |k: usize, l: usize| vals[(l * 7 + k * 131) % vals.len()];
                for (a, b, d) in [(8, 9, 8), (8, 9, 9), (8, 8, 8)] {
                    let args = BinArgs {
                        op,
                        num,
                        d: Col(d),
                        a: Col(a),
                        b: Col(b),
                        n: 1,
                        bs: false,
                        a_scalar: false,
                    };
                    let (c, n) = run(&vals, 2, |cols, level| {
                        cols.run_at(level, ColumnOp::Bin(&args))
                    });
                    for l in 0..n {
                        let (x, y) = (operand(a as usize - 8, l), operand(b as usize - 8, l));
                        assert_eq!(
                            c[d as usize * lanes + l],
                            bin1(op, num, x, y),
                            "{op:?} {num:?} d={d} a={a} b={b} of {x:#x}, {y:#x}"
                        );
                    }
                }
            }
        }
    }

    /// [`Op::Dot`] of f32 columns is `bin1`'s multiplies and adds in component order, bit for
    /// bit and NaN payloads included, every lane active or not, for one to five components
    /// (its fast path takes up to sixteen), strided operands (a matrix's rows) and a result
    /// that shares a column with an operand.
    #[test]
    fn dots_equal_their_multiplies_and_adds() {
        let lanes = MAX_LANES;
        for (i, mut vals) in f32_batches().into_iter().enumerate() {
            // Every third batch leaves its last lanes inactive.
            if i % 3 == 2 {
                vals.truncate(lanes - 3);
            }
            let operand = |k: usize, l: usize| vals[(l * 7 + k * 131) % vals.len()];
            for n in 1..=5u32 {
                // Inputs fill columns 8..=15; a at 8 (stride 1 or 2), b at 9 + ... .
                for (sa, b, sb, d) in [
                    (1, 8 + n, 1, 0),
                    (2, 9, 2, 0),
                    (1, 8 + n, 1, 8),
                    (1, 8 + n, 1, 9 + n),
                ] {
                    if 8 + (n - 1) * sa >= 16 || b + (n - 1) * sb >= 16 {
                        continue;
                    }
                    let args = DotArgs {
                        num: Num::F32,
                        d: Col(d),
                        a: Col(8),
                        sa,
                        b: Col(b),
                        sb,
                        n,
                    };
                    let (c, used) = run(&vals, 8, |cols, level| {
                        cols.run_at(level, ColumnOp::Dot(&args))
                    });
                    for l in 0..used {
                        let x = |k: u32| operand((8 + k * sa - 8) as usize, l);
                        let y = |k: u32| operand((b + k * sb - 8) as usize, l);
                        let mut want = bin1(BinOp::FMul, Num::F32, x(0), y(0));
                        for k in 1..n {
                            let p = bin1(BinOp::FMul, Num::F32, x(k), y(k));
                            want = bin1(BinOp::FAdd, Num::F32, want, p);
                        }
                        assert_eq!(
                            c[d as usize * lanes + l],
                            want,
                            "n={n} sa={sa} b={b} sb={sb} d={d}, lane {l}"
                        );
                    }
                }
            }
        }
    }

    /// f32 `Fma` with every lane active takes [`fma_f32_steps`]: `tern1`'s bits, NaN payloads
    /// included, with the result in a column of its own or in any operand's (`s = fma(x, y, s)`).
    #[test]
    fn fmas_equal_tern1() {
        let lanes = MAX_LANES;
        for vals in f32_batches() {
            let operand = |k: usize, l: usize| vals[(l * 7 + k * 131) % vals.len()];
            for d in [0u32, 8, 9, 10] {
                let args = TernArgs {
                    op: TernOp::Fma,
                    num: Num::F32,
                    d: Col(d),
                    a: Col(8),
                    b: Col(9),
                    c: Col(10),
                    n: 1,
                    bs: false,
                    cs: false,
                };
                let (c, n) = run(&vals, 3, |cols, level| {
                    cols.run_at(level, ColumnOp::Tern(&args))
                });
                for l in 0..n {
                    let (x, y, z) = (operand(0, l), operand(1, l), operand(2, l));
                    assert_eq!(
                        c[d as usize * lanes + l],
                        tern1(TernOp::Fma, Num::F32, x, y, z),
                        "d={d}, lane {l}: fma({x:#x}, {y:#x}, {z:#x})"
                    );
                }
            }
        }
    }

    #[test]
    fn conversion_loops_equal_cvt1() {
        use Num::{F16, F32, Int};
        let cases = [
            (CvtKind::UToF, Int(32), F32),
            (CvtKind::FConv, F16, F32),
            (CvtKind::FConv, F32, F16),
            (CvtKind::UConv, Int(8), Int(32)),
            (CvtKind::UConv, Int(16), Int(32)),
            (CvtKind::SConv, Int(8), Int(32)),
            (CvtKind::SConv, Int(32), Int(8)),
            (CvtKind::SToF, Int(32), F16),
            (CvtKind::UToF, Int(32), F16),
            (CvtKind::SToF, Int(32), F32),
            (CvtKind::SToF, Int(8), F32),
            (CvtKind::UToF, Int(8), F32),
            (CvtKind::SToF, Int(16), F32),
            (CvtKind::UToF, Int(16), F32),
            (CvtKind::SToF, Int(8), F16),
            (CvtKind::UToF, Int(8), F16),
        ];
        let all = inputs();
        for (kind, from, to) in cases {
            for chunk in all.chunks(MAX_LANES) {
                // Inputs are zero-extended bits of the source type, as registers hold them.
                let vals: Vec<u64> = chunk.iter().map(|&x| trunc(x, from.bits())).collect();
                let args = CvtArgs {
                    kind,
                    from,
                    to,
                    d: Col(0),
                    a: Col(8),
                    n: 1,
                };
                let (c, n) = run(&vals, 1, |cols, level| {
                    cols.run_at(level, ColumnOp::Cvt(&args))
                });
                for l in 0..n {
                    let x = c[8 * MAX_LANES + l];
                    assert_eq!(
                        c[l],
                        cvt1(kind, from, to, x),
                        "{kind:?} {from:?}->{to:?} of {x:#x}"
                    );
                }
            }
        }
    }

    /// An [`Op::IntChain`] ending in a [`ChainAddress`] gives what the access chain gives for
    /// the chain's value as its one index, a 32-bit signed index (the exact per-lane
    /// definition, [`memory::offset_address_i64`], with [`memory::POISON`] outside the base's
    /// object): positive and negative strides and offsets, indices leaving the object on
    /// either side, per-lane and uniform operands and bases. A uniform operand is its first
    /// active lane's value: the test batch is partly active, its first lanes inactive and
    /// holding other values there, its inactive lanes left as they were; and it is read before
    /// any lane is written, also where the result shares its column (or the base's), over
    /// several 128-lane chunks. The same with every lane active (where the addresses go
    /// straight into the result column, also when it is the base's).
    #[test]
    fn chain_addresses_equal_their_access_chains() {
        for dense in [false, true] {
            chain_addresses_at(dense);
        }
    }

    fn chain_addresses_at(dense: bool) {
        let lanes = 512;
        let active = |l: usize| dense || (l >= 5 && l % 7 != 3);
        let mut mask = [0u64; MW];
        for l in (0..lanes).filter(|&l| active(l)) {
            mask[l / 64] |= 1 << (l % 64);
        }
        let (uni, uni_base) = (0x8000_0003u64, (2u64 << memory::OBJ_SHIFT) | 0x10_0000);
        let mut next = coopmat_testkit::xorshift64(0x2545_f491_4f6c_dd1d);
        let mut c0 = vec![0u64; lanes * 8];
        for l in 0..lanes {
            let x = next();
            c0[l] = x >> (x & 31); // first: small and large (negative as i32) values
            c0[lanes + l] = x % 9; // other, one a lane
            // Uniform columns: one value in the active lanes only.
            c0[2 * lanes + l] = if active(l) { uni } else { x };
            c0[3 * lanes + l] = ((1 + l as u64 % 3) << memory::OBJ_SHIFT) | ((x >> 27) % (1 << 34));
            c0[4 * lanes + l] = if active(l) { uni_base } else { x };
        }
        let (first, other, uniform, base, ubase) = (Col(0), Col(1), Col(2), Col(3), Col(4));
        let (mut inside, mut poisoned) = (0, 0);
        for (stride, offset) in [
            (16i64, 0i64),
            (-4, 48),
            (1 << 20, -4096),
            (1 << 23, 1 << 38),
        ] {
            for (base, base_uniform) in [(base, false), (ubase, true)] {
                for first_uniform in [false, true] {
                    for d in [Col(5), uniform, base] {
                        let args = IntChainArgs {
                            d,
                            first: if first_uniform { uniform } else { first },
                            first_uniform,
                            steps: vec![
                                ChainStep {
                                    op: ChainOp::IMul,
                                    other,
                                    acc_left: true,
                                    uniform: false,
                                },
                                ChainStep {
                                    op: ChainOp::ISub,
                                    other: uniform,
                                    acc_left: false,
                                    uniform: true,
                                },
                            ],
                            address: Some(ChainAddress {
                                base,
                                base_uniform,
                                offset,
                                stride,
                            }),
                        };
                        for level in crate::kernels::column_levels() {
                            let mut c = c0.clone();
                            Columns {
                                c: &mut c,
                                lanes,
                                mask: &mask,
                                dense,
                            }
                            .run_at(level, ColumnOp::IntChain(&args));
                            for l in 0..lanes {
                                let at = d.ix() * lanes + l;
                                if !active(l) {
                                    assert_eq!(c[at], c0[at], "inactive lane {l} written");
                                    continue;
                                }
                                let v = |k: Col| c0[k.ix() * lanes + l];
                                let acc = bin1(BinOp::IMul, Num::Int(32), v(args.first), v(other));
                                let acc = bin1(BinOp::ISub, Num::Int(32), uni, acc);
                                let delta = offset + (acc as u32 as i32 as i64) * stride;
                                let want = memory::offset_address_i64(v(base), delta);
                                assert_eq!(c[at], want, "{level:?} {args:?} lane {l}");
                                if want == memory::POISON {
                                    poisoned += 1;
                                } else {
                                    inside += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(
            inside > 1000 && poisoned > 1000,
            "{inside} inside, {poisoned} outside"
        );
    }

    /// [`Op::IntChain`] equals its ops one after the other through `bin1`, for every chain op
    /// with the running value on either side, in chains of four over inputs where shift
    /// counts of 32 or more are common; with the result in the column of its first operand
    /// (the register pool may give it that one), and in a partly active batch (the last
    /// chunk), whose inactive lanes keep their value.
    #[test]
    fn int_chains_equal_their_bins_one_by_one() {
        let all = inputs();
        let ops = ChainOp::ALL;
        let mut cases = Vec::new();
        for (i, &(op, _)) in ops.iter().enumerate() {
            for acc_left in [true, false] {
                // The op under test, then three others, so each op also meets earlier results.
                let steps: Vec<ChainStep> = (0..4)
                    .map(|k| ChainStep {
                        op: ops[(i + 3 * k) % ops.len()].0,
                        other: Col(9 + k as u32 % 3),
                        acc_left: if k == 0 { acc_left } else { k % 2 == 1 },
                        uniform: false,
                    })
                    .collect();
                debug_assert_eq!(steps[0].op, op);
                for d in [Col(0), Col(8)] {
                    cases.push(IntChainArgs {
                        d,
                        first: Col(8),
                        first_uniform: false,
                        steps: steps.clone(),
                        address: None,
                    });
                }
            }
        }
        for args in &cases {
            for chunk in all.chunks(MAX_LANES) {
                let (c, n) = run(chunk, 4, |cols, level| {
                    cols.run_at(level, ColumnOp::IntChain(args))
                });
                // The inputs as `run` placed them (the result may have overwritten column 8).
                let input = |k: usize, l: usize| chunk[(l * 7 + k * 131) % chunk.len()];
                for l in 0..MAX_LANES {
                    let got = c[args.d.ix() * MAX_LANES + l];
                    if l >= n {
                        assert_eq!(got, 0, "inactive lane {l} written");
                        continue;
                    }
                    let mut acc = input(0, l);
                    for s in &args.steps {
                        let other = input(s.other.ix() - 8, l);
                        let bin = ChainOp::ALL.iter().find(|(c, _)| *c == s.op).unwrap().1;
                        acc = if s.acc_left {
                            bin1(bin, Num::Int(32), acc, other)
                        } else {
                            bin1(bin, Num::Int(32), other, acc)
                        };
                    }
                    assert_eq!(got, acc, "{args:?} lane {l}");
                }
            }
        }
        // Every other lane active, every column holding data: the inactive lanes' results
        // (computed from their operands) must not land.
        let lanes = 128;
        let mut mask = [0u64; MW];
        for l in (0..lanes).step_by(2) {
            mask[l / 64] |= 1 << (l % 64);
        }
        let c0: Vec<u64> = (0..lanes * 16).map(|i| all[(i * 13) % all.len()]).collect();
        for level in crate::kernels::column_levels() {
            for args in &cases {
                let mut c = c0.clone();
                Columns {
                    c: &mut c,
                    lanes,
                    mask: &mask,
                    dense: false,
                }
                .run_at(level, ColumnOp::IntChain(args));
                for l in (1..lanes).step_by(2) {
                    let at = args.d.ix() * lanes + l;
                    assert_eq!(
                        c[at], c0[at],
                        "{level:?} {args:?}: inactive lane {l} written"
                    );
                }
            }
        }
    }

    #[test]
    fn f32_arithmetic_loops_equal_bin1() {
        let all: Vec<u64> = inputs().iter().map(|&x| x & 0xffff_ffff).collect();
        for op in [
            BinOp::FAdd,
            BinOp::FSub,
            BinOp::FMul,
            BinOp::FMin,
            BinOp::FMax,
            BinOp::NMin,
            BinOp::NMax,
        ] {
            bin_loops_equal_bin1(op, Num::F32, &all);
        }
    }

    /// Runs `op` over `vals` in chunks of `MAX_LANES` (the last one masked) at every column
    /// level and requires `bin1`'s result in every lane.
    fn bin_loops_equal_bin1(op: BinOp, num: Num, vals: &[u64]) {
        for chunk in vals.chunks(MAX_LANES) {
            let args = BinArgs {
                op,
                num,
                d: Col(0),
                a: Col(8),
                b: Col(9),
                n: 1,
                bs: false,
                a_scalar: false,
            };
            let (c, n) = run(chunk, 2, |cols, level| {
                cols.run_at(level, ColumnOp::Bin(&args))
            });
            for l in 0..n {
                let (x, y) = (c[8 * MAX_LANES + l], c[9 * MAX_LANES + l]);
                assert_eq!(c[l], bin1(op, num, x, y), "{op:?} {x:#x} {y:#x}");
            }
        }
    }

    /// The f32 comparison and bool logic loops equal `bin1` (and `LNot` `un1`) lane by lane,
    /// dense and masked (the last chunk), over the inputs and over a small set of values
    /// (±0, 1, NaNs, infinity) where equal operands are common.
    #[test]
    fn compare_and_logic_loops_equal_bin1() {
        let small = [
            0u64,
            0x8000_0000,
            0x3f80_0000,
            0x7fc0_0000,
            0xffc0_0001,
            0x7f80_0000,
            1,
        ];
        let mut all: Vec<u64> = inputs().iter().map(|&x| x & 0xffff_ffff).collect();
        all.extend((0..3000u64).map(|i| small[(i * i % 7) as usize]));
        let ops = [
            (BinOp::FOEq, Num::F32),
            (BinOp::FUEq, Num::F32),
            (BinOp::FONe, Num::F32),
            (BinOp::FUNe, Num::F32),
            (BinOp::FOLt, Num::F32),
            (BinOp::FULt, Num::F32),
            (BinOp::FOGt, Num::F32),
            (BinOp::FUGt, Num::F32),
            (BinOp::FOLe, Num::F32),
            (BinOp::FULe, Num::F32),
            (BinOp::FOGe, Num::F32),
            (BinOp::FUGe, Num::F32),
            (BinOp::Ordered, Num::F32),
            (BinOp::Unordered, Num::F32),
            (BinOp::LAnd, Num::Bool),
            (BinOp::LOr, Num::Bool),
            (BinOp::LEq, Num::Bool),
            (BinOp::LNe, Num::Bool),
        ];
        for (op, num) in ops {
            bin_loops_equal_bin1(op, num, &all);
        }
        for chunk in all.chunks(MAX_LANES) {
            let args = UnArgs {
                op: UnOp::LNot,
                num: Num::Bool,
                d: Col(0),
                a: Col(8),
                n: 1,
            };
            let (c, n) = run(chunk, 1, |cols, level| {
                cols.run_at(level, ColumnOp::Un(&args))
            });
            for l in 0..n {
                let x = c[8 * MAX_LANES + l];
                assert_eq!(c[l], un1(UnOp::LNot, Num::Bool, x), "LNot {x:#x}");
            }
        }
    }

    /// The f32 exp column loop (vectorized, at every level) equals `un1` lane by lane, over
    /// the inputs and a sweep of -110..110 (overflow, underflow to subnormals and zero), NaNs
    /// and infinities included.
    #[test]
    fn f32_exp_loop_equals_un1() {
        let mut all: Vec<u64> = inputs().iter().map(|&x| x & 0xffff_ffff).collect();
        all.extend((0..4096).map(|i| (i as f32 * 0.0537 - 110.0).to_bits() as u64));
        all.extend([f32::NEG_INFINITY, 1000.0, -1000.0].map(|x| x.to_bits() as u64));
        let args = UnArgs {
            op: UnOp::Exp,
            num: Num::F32,
            d: Col(0),
            a: Col(8),
            n: 1,
        };
        for chunk in all.chunks(MAX_LANES) {
            let (c, n) = run(chunk, 1, |cols, level| {
                cols.run_at(level, ColumnOp::Un(&args))
            });
            for l in 0..n {
                let x = c[8 * MAX_LANES + l];
                assert_eq!(c[l], un1(UnOp::Exp, Num::F32, x), "exp {x:#x}");
            }
        }
    }

    /// 32-bit shifts by an amount the same in every lane (their own loop) and unsigned division
    /// and remainder by a column (the compiler turns constant powers of two into shifts and
    /// masks before they get here) equal `bin1`, for operands that are powers of two, that are
    /// not, that are 0 or 32 and more, and that are not the same in every lane.
    #[test]
    fn uniform_operand_loops_equal_bin1() {
        let all: Vec<u64> = inputs().iter().map(|&x| x & 0xffff_ffff).collect();
        let ys = [1u64, 2, 4, 8, 1 << 31, 3, 0, 6, 31, 32, 0x1_0000_0004];
        for op in [
            BinOp::UDiv,
            BinOp::UMod,
            BinOp::Shl,
            BinOp::ShrL,
            BinOp::ShrA,
        ] {
            for &y in &ys {
                for (ci, chunk) in all.chunks(MAX_LANES).take(8).enumerate() {
                    let args = BinArgs {
                        op,
                        num: Num::Int(32),
                        d: Col(0),
                        a: Col(8),
                        b: Col(9),
                        n: 1,
                        bs: false,
                        a_scalar: false,
                    };
                    let (c, n) = run(chunk, 1, |cols, level| {
                        let lanes = cols.lanes;
                        for l in 0..lanes {
                            // One chunk has a stray lane, so that its divisor is not uniform.
                            cols.c[9 * lanes + l] = if ci == 1 && l == 5 { y + 1 } else { y };
                        }
                        cols.run_at(level, ColumnOp::Bin(&args))
                    });
                    for l in 0..n {
                        let (x, yl) = (c[8 * MAX_LANES + l], c[9 * MAX_LANES + l]);
                        assert_eq!(c[l], bin1(op, Num::Int(32), x, yl), "{op:?} {x:#x} {yl:#x}");
                    }
                }
            }
        }
    }

    /// The whole-column access chain (its 32-bit one-index form and the general one) gives
    /// every lane the address of the exact per-lane path: bases in several objects, indices of
    /// 32 and 16 bits over their whole range (negative ones included), positive and negative
    /// strides, constant steps, and results that leave their object (poisoned).
    #[test]
    fn access_chain_columns_equal_the_per_lane_path() {
        let lanes = MAX_LANES;
        let mut next = coopmat_testkit::xorshift64(0x2545_f491_4f6c_dd1d);
        let edge = [
            0u64,
            1,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            0x7fff,
            0x8000,
            0xffff,
        ];
        for stride in [16i64, 1, 144, -4, -(1 << 23), (1 << 24) - 1, 0] {
            for (bits, extra) in [
                (32u8, None),
                (16, None),
                (32, Some(-40i64)),
                (32, Some(1 << 30)),
            ] {
                let (bc, ic, dc) = (0, lanes, 2 * lanes);
                let mut c = vec![0u64; 3 * lanes];
                for l in 0..lanes {
                    let obj = 1 + next() % 3;
                    c[bc + l] = (obj << memory::OBJ_SHIFT) + (next() % (1 << 20));
                    c[ic + l] = if l < edge.len() {
                        edge[l]
                    } else if l % 3 == 0 {
                        next() % 4096
                    } else {
                        next()
                    };
                }
                let mut steps = vec![Step::Dyn {
                    idx: Col((ic / lanes) as u32),
                    bits,
                    stride,
                }];
                if let Some(k) = extra {
                    steps.insert(0, Step::Const(k));
                }
                let want: Vec<u64> = (0..lanes)
                    .map(|l| lane_address(&c, l, lanes, bc, &steps))
                    .collect();
                let mut got = c.clone();
                // Indices of 32 bits or fewer never make the column form inexact.
                assert!(access_chain_dense(&mut got, dc, bc, &steps, lanes));
                // The same through every column level the CPU has.
                let args = AccessChainArgs {
                    d: Col((dc / lanes) as u32),
                    base: Col((bc / lanes) as u32),
                    steps: steps.clone().into(),
                };
                let mask = [u64::MAX; MW];
                for level in crate::kernels::column_levels() {
                    let mut at = c.clone();
                    Columns {
                        c: &mut at,
                        lanes,
                        mask: &mask,
                        dense: true,
                    }
                    .run_at(level, ColumnOp::AccessChain(&args));
                    assert!(at == got, "{level:?}: stride {stride}, {bits}-bit index");
                }
                {
                    for l in 0..lanes {
                        assert_eq!(
                            got[dc + l],
                            want[l],
                            "lane {l}: stride {stride}, {bits}-bit index {:#x}, constant {extra:?}",
                            c[ic + l]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn bitcast_loops_equal_the_general_form() {
        use Num::{F16, F32, Int};
        let general = |from: Num, na: u32, to: Num, nd: u32, src: &[u64]| -> Vec<u64> {
            let (fb, tb) = (from.bits(), to.bits());
            let mut acc: u128 = 0;
            for k in 0..na {
                acc |= (trunc(src[k as usize], fb) as u128) << (k * fb);
            }
            (0..nd)
                .map(|k| trunc((acc >> (k * tb)) as u64, tb))
                .collect()
        };
        let cases = [
            (Int(32), 1, F32, 1),
            (Int(32), 1, Int(8), 4),
            (Int(32), 1, F16, 2),
            (Int(8), 4, Int(32), 1),
            (F16, 2, Int(32), 1),
            (Int(16), 4, Int(64), 1),
            (Int(64), 1, Int(16), 4),
            (Int(8), 8, Int(16), 4),
        ];
        let all = inputs();
        for (from, na, to, nd) in cases {
            let args = BitcastArgs {
                d: Col(0),
                a: Col(8),
                from,
                na,
                to,
                nd,
            };
            let vals: Vec<u64> = all[..MAX_LANES]
                .iter()
                .map(|&x| trunc(x, from.bits()))
                .collect();
            let (c, n) = run(&vals, na, |cols, level| {
                cols.run_at(level, ColumnOp::Bitcast(&args))
            });
            for l in 0..n {
                let src: Vec<u64> = (0..na as usize)
                    .map(|k| c[(8 + k) * MAX_LANES + l])
                    .collect();
                let want = general(from, na, to, nd, &src);
                for k in 0..nd as usize {
                    assert_eq!(
                        c[k * MAX_LANES + l],
                        want[k],
                        "{from:?}x{na} -> {to:?}x{nd}"
                    );
                }
            }
        }
    }
}
