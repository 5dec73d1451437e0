//! SIMT execution: one workgroup is one batch of lanes under an active mask.
//!
//! Control flow: every function call keeps a pending mask per block (blocks are in structured
//! order, see `compile::Cx::function`). The lowest block with pending lanes runs next with all
//! of them; branches add lanes to their targets' pending masks. Lanes that split at a header
//! therefore meet again at its merge block, loops iterate until every lane has left, and
//! lanes that returned wait until the call is over.

use crate::compile::{Program, VarAddr};
use crate::floats::{self, Num, sext, trunc};
use crate::kernels;
use crate::memory::{self, Mem, MemErr, ObjInfo};
use crate::ops::*;
use crate::types::MemLeaf;
use crate::{DispatchStats, ExecError, Pipeline, Resources, err};
use coopmat_spirv::grammar::{built_in, cooperative_matrix_operands as cmo};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::time::{Duration, Instant};

mod coop;
mod coop2;
mod subgroup;

/// Most lanes (invocations) in one batch.
pub const MAX_LANES: usize = 1024;
const MW: usize = MAX_LANES / 64;
type Mask = [u64; MW];

/// A failure inside one op: what, and the lane if it is lane-specific.
struct Fault {
    what: String,
    lane: Option<usize>,
}

impl From<MemErr> for Fault {
    fn from(e: MemErr) -> Fault {
        Fault {
            what: e.to_string(),
            lane: None,
        }
    }
}

fn fault<T>(what: impl Into<String>) -> Result<T, Fault> {
    Err(Fault {
        what: what.into(),
        lane: None,
    })
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

// ---------------------------------------------------------------------------------------------
// Per-lane scalar semantics.

#[inline(always)]
fn fb(x: bool) -> u64 {
    x as u64
}

/// Unary op on raw bits.
pub(crate) fn un1(op: UnOp, num: Num, x: u64) -> u64 {
    let bits = num.bits();
    if num.is_float() {
        let v = floats::to_f64(num, x);
        let r = match op {
            UnOp::FNeg => -v,
            UnOp::IsNan => return fb(v.is_nan()),
            UnOp::IsInf => return fb(v.is_infinite()),
            UnOp::Round => v.round(),
            UnOp::RoundEven => v.round_ties_even(),
            UnOp::Trunc => v.trunc(),
            UnOp::FAbs => v.abs(),
            UnOp::FSign => {
                if v > 0.0 {
                    1.0
                } else if v < 0.0 {
                    -1.0
                } else {
                    v
                }
            }
            UnOp::Floor => v.floor(),
            UnOp::Ceil => v.ceil(),
            UnOp::Fract => v - v.floor(),
            UnOp::Radians => v.to_radians(),
            UnOp::Degrees => v.to_degrees(),
            UnOp::Sin => v.sin(),
            UnOp::Cos => v.cos(),
            UnOp::Tan => v.tan(),
            UnOp::Asin => v.asin(),
            UnOp::Acos => v.acos(),
            UnOp::Atan => v.atan(),
            UnOp::Sinh => v.sinh(),
            UnOp::Cosh => v.cosh(),
            UnOp::Tanh => v.tanh(),
            UnOp::Asinh => v.asinh(),
            UnOp::Acosh => v.acosh(),
            UnOp::Atanh => v.atanh(),
            UnOp::Exp => v.exp(),
            UnOp::Log => v.ln(),
            UnOp::Exp2 => v.exp2(),
            UnOp::Log2 => v.log2(),
            UnOp::Sqrt => v.sqrt(),
            UnOp::InverseSqrt => 1.0 / v.sqrt(),
            UnOp::FrexpMant => frexp(v).0,
            UnOp::FrexpExp => return frexp(v).1 as u32 as u64,
            UnOp::ModfFract => {
                if v.is_infinite() {
                    0f64.copysign(v)
                } else {
                    (v - v.trunc()).copysign(v)
                }
            }
            _ => return un_int(op, bits, x),
        };
        return floats::from_f64(num, r);
    }
    un_int(op, bits, x)
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

fn un_int(op: UnOp, bits: u32, x: u64) -> u64 {
    let s = sext(x, bits);
    trunc(
        match op {
            UnOp::SNeg | UnOp::FNeg => (s.wrapping_neg()) as u64,
            UnOp::Not => !x,
            UnOp::LNot => fb(x == 0),
            UnOp::BitCount => trunc(x, bits).count_ones() as u64,
            UnOp::BitReverse => x.reverse_bits() >> (64 - bits),
            UnOp::SAbs => s.wrapping_abs() as u64,
            UnOp::SSign => s.signum() as u64,
            UnOp::FindILsb => {
                let t = trunc(x, bits);
                if t == 0 {
                    u64::MAX
                } else {
                    t.trailing_zeros() as u64
                }
            }
            UnOp::FindUMsb => {
                let t = trunc(x, bits);
                if t == 0 {
                    u64::MAX
                } else {
                    63 - t.leading_zeros() as u64
                }
            }
            UnOp::FindSMsb => {
                let t = if s < 0 { !s as u64 } else { s as u64 };
                if t == 0 {
                    u64::MAX
                } else {
                    63 - t.leading_zeros() as u64
                }
            }
            UnOp::IsNan | UnOp::IsInf => 0,
            _ => x,
        },
        bits,
    )
}

/// Binary op on raw bits.
pub(crate) fn bin1(op: BinOp, num: Num, x: u64, y: u64) -> u64 {
    let bits = num.bits().max(1);
    use BinOp::*;
    match op {
        FAdd | FSub | FMul | FDiv | FRem | FMod | FOEq | FUEq | FONe | FUNe | FOLt | FULt
        | FOGt | FUGt | FOLe | FULe | FOGe | FUGe | Ordered | Unordered | FMin | FMax | NMin
        | NMax | Pow | Atan2 | Step | Ldexp => {
            if num == Num::F32 && matches!(op, FAdd | FSub | FMul | FDiv) {
                let (a, b) = (f32::from_bits(x as u32), f32::from_bits(y as u32));
                let r = match op {
                    FAdd => a + b,
                    FSub => a - b,
                    FMul => a * b,
                    _ => a / b,
                };
                return r.to_bits() as u64;
            }
            let a = floats::to_f64(num, x);
            let b = if op == Ldexp {
                sext(y, 32) as f64
            } else {
                floats::to_f64(num, y)
            };
            let un = a.is_nan() || b.is_nan();
            let r = match op {
                FAdd => a + b,
                FSub => a - b,
                FMul => a * b,
                FDiv => a / b,
                FRem => a % b,
                FMod => {
                    let r = a % b;
                    if r != 0.0 && (r < 0.0) != (b < 0.0) {
                        r + b
                    } else {
                        r
                    }
                }
                FOEq => return fb(a == b),
                FUEq => return fb(un || a == b),
                FONe => return fb(!un && a != b),
                FUNe => return fb(a != b),
                FOLt => return fb(a < b),
                FULt => return fb(un || a < b),
                FOGt => return fb(a > b),
                FUGt => return fb(un || a > b),
                FOLe => return fb(a <= b),
                FULe => return fb(un || a <= b),
                FOGe => return fb(a >= b),
                FUGe => return fb(un || a >= b),
                Ordered => return fb(!un),
                Unordered => return fb(un),
                FMin | NMin => {
                    if a.is_nan() {
                        b
                    } else if b.is_nan() {
                        a
                    } else {
                        a.min(b)
                    }
                }
                FMax | NMax => {
                    if a.is_nan() {
                        b
                    } else if b.is_nan() {
                        a
                    } else {
                        a.max(b)
                    }
                }
                Pow => a.powf(b),
                Atan2 => a.atan2(b),
                Step => {
                    if b < a {
                        0.0
                    } else {
                        1.0
                    }
                }
                _ => ldexp(a, b as i64),
            };
            floats::from_f64(num, r)
        }
        _ => {
            let (sa, sb) = (sext(x, bits), sext(y, bits));
            let (ua, ub) = (trunc(x, bits), trunc(y, bits));
            trunc(
                match op {
                    IAdd => ua.wrapping_add(ub),
                    ISub => ua.wrapping_sub(ub),
                    IMul => ua.wrapping_mul(ub),
                    UDiv => ua.checked_div(ub).unwrap_or(0),
                    SDiv => sa.checked_div(sb).unwrap_or(0) as u64,
                    UMod => ua.checked_rem(ub).unwrap_or(0),
                    SRem => sa.checked_rem(sb).unwrap_or(0) as u64,
                    SMod => {
                        let r = sa.checked_rem(sb).unwrap_or(0);
                        (if r != 0 && (r < 0) != (sb < 0) {
                            r + sb
                        } else {
                            r
                        }) as u64
                    }
                    Shl => {
                        if ub >= bits as u64 {
                            0
                        } else {
                            ua << ub
                        }
                    }
                    ShrL => {
                        if ub >= bits as u64 {
                            0
                        } else {
                            ua >> ub
                        }
                    }
                    ShrA => (sa >> ub.min(63)) as u64,
                    And => ua & ub,
                    Or => ua | ub,
                    Xor => ua ^ ub,
                    IEq => return fb(ua == ub),
                    INe => return fb(ua != ub),
                    UGt => return fb(ua > ub),
                    UGe => return fb(ua >= ub),
                    ULt => return fb(ua < ub),
                    ULe => return fb(ua <= ub),
                    SGt => return fb(sa > sb),
                    SGe => return fb(sa >= sb),
                    SLt => return fb(sa < sb),
                    SLe => return fb(sa <= sb),
                    LEq => return fb((x != 0) == (y != 0)),
                    LNe => return fb((x != 0) != (y != 0)),
                    LAnd => return fb(x != 0 && y != 0),
                    LOr => return fb(x != 0 || y != 0),
                    UMin => ua.min(ub),
                    UMax => ua.max(ub),
                    SMin => sa.min(sb) as u64,
                    SMax => sa.max(sb) as u64,
                    UMulHi => ((ua as u128 * ub as u128) >> bits) as u64,
                    SMulHi => ((sa as i128 * sb as i128) >> bits) as u64,
                    AddCarry => fb(ua.wrapping_add(ub) != trunc(ua.wrapping_add(ub), bits)
                        || ua.checked_add(ub).is_none()),
                    SubBorrow => fb(ua < ub),
                    _ => 0,
                },
                bits,
            )
        }
    }
}

fn tern1(op: TernOp, num: Num, x: u64, y: u64, z: u64) -> u64 {
    let bits = num.bits();
    match op {
        TernOp::UClamp => trunc(x, bits).max(trunc(y, bits)).min(trunc(z, bits)),
        TernOp::SClamp => trunc(
            sext(x, bits).max(sext(y, bits)).min(sext(z, bits)) as u64,
            bits,
        ),
        TernOp::UExtract | TernOp::SExtract => {
            let (off, cnt) = (y.min(64) as u32, z.min(64) as u32);
            if cnt == 0 {
                return 0;
            }
            let v = trunc(x >> off.min(63), cnt);
            if op == TernOp::SExtract {
                trunc(sext(v, cnt) as u64, bits)
            } else {
                v
            }
        }
        _ => {
            let (a, b, c) = (
                floats::to_f64(num, x),
                floats::to_f64(num, y),
                floats::to_f64(num, z),
            );
            let r = match op {
                TernOp::FMix => a + (b - a) * c,
                TernOp::FClamp | TernOp::NClamp => a.max(b).min(c),
                TernOp::Fma => {
                    if num == Num::F32 {
                        (a as f32).mul_add(b as f32, c as f32) as f64
                    } else {
                        a.mul_add(b, c)
                    }
                }
                _ => {
                    let t = ((c - a) / (b - a)).clamp(0.0, 1.0);
                    t * t * (3.0 - 2.0 * t)
                }
            };
            floats::from_f64(num, r)
        }
    }
}

/// Conversion on raw bits.
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

/// Specialized loops for 32-bit integer ops (the address arithmetic of most shaders).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn bin_u32(
    op: BinOp,
    c: &mut [u64],
    dc: usize,
    ac: usize,
    bc: usize,
    lanes: usize,
    mask: &Mask,
    dense: bool,
) -> bool {
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
    if dense
        && matches!(op, BinOp::Shl | BinOp::ShrL | BinOp::ShrA)
        && let Some((dd, aa, bb)) = cols3(c, dc, ac, bc, lanes)
        && let Some(&y0) = bb.first()
        && bb.iter().fold(0, |acc, &y| acc | (y ^ y0)) as u32 == 0
    {
        let y = y0 as u32;
        let it = dd.iter_mut().zip(aa);
        match op {
            BinOp::Shl if y < 32 => it.for_each(|(d, &x)| *d = ((x as u32) << y) as u64),
            BinOp::ShrL if y < 32 => it.for_each(|(d, &x)| *d = ((x as u32) >> y) as u64),
            BinOp::ShrA => it.for_each(|(d, &x)| *d = ((x as i32) >> y.min(31)) as u32 as u64),
            _ => it.for_each(|(d, _)| *d = 0),
        }
        return true;
    }
    match op {
        BinOp::IAdd => go!(|x, y| x.wrapping_add(y)),
        BinOp::ISub => go!(|x, y| x.wrapping_sub(y)),
        BinOp::IMul => go!(|x, y| x.wrapping_mul(y)),
        BinOp::UDiv => go!(|x, y| x.checked_div(y).unwrap_or(0)),
        BinOp::UMod => go!(|x, y| x.checked_rem(y).unwrap_or(0)),
        BinOp::Shl => go!(|x, y| if y >= 32 { 0 } else { x << y }),
        BinOp::ShrL => go!(|x, y| if y >= 32 { 0 } else { x >> y }),
        BinOp::ShrA => go!(|x, y| ((x as i32) >> y.min(31)) as u32),
        BinOp::And => go!(|x, y| x & y),
        BinOp::Or => go!(|x, y| x | y),
        BinOp::Xor => go!(|x, y| x ^ y),
        BinOp::IEq => go!(|x, y| x == y),
        BinOp::INe => go!(|x, y| x != y),
        BinOp::ULt => go!(|x, y| x < y),
        BinOp::ULe => go!(|x, y| x <= y),
        BinOp::UGt => go!(|x, y| x > y),
        BinOp::UGe => go!(|x, y| x >= y),
        BinOp::SLt => go!(|x, y| (x as i32) < (y as i32)),
        BinOp::SLe => go!(|x, y| (x as i32) <= (y as i32)),
        BinOp::SGt => go!(|x, y| (x as i32) > (y as i32)),
        BinOp::SGe => go!(|x, y| (x as i32) >= (y as i32)),
        BinOp::UMin => go!(|x, y| x.min(y)),
        BinOp::UMax => go!(|x, y| x.max(y)),
        BinOp::SMin => go!(|x, y| (x as i32).min(y as i32) as u32),
        BinOp::SMax => go!(|x, y| (x as i32).max(y as i32) as u32),
        _ => false,
    }
}

/// All-lanes access chain on plain slices: constant steps fold into one offset and the first
/// dynamic step reads the base column directly (no copy pass). False, with nothing written,
/// when a column is out of range or an index column is the result column.
fn access_chain_dense(c: &mut [u64], dc: usize, bc: usize, steps: &[Step], lanes: usize) -> bool {
    let fits = |x: usize| x + lanes <= c.len();
    let dyn_ok = steps.iter().all(|s| match *s {
        Step::Dyn { idx, bits, .. } => {
            let ic = idx as usize * lanes;
            ic != dc && fits(ic) && (1..=64).contains(&bits)
        }
        Step::Const(_) => true,
    });
    if !dyn_ok || !fits(dc) || !fits(bc) {
        return false;
    }
    let k = steps.iter().fold(0u64, |a, s| match *s {
        Step::Const(x) => a.wrapping_add(x as u64),
        Step::Dyn { .. } => a,
    });
    let mut dyns = steps.iter().filter_map(|s| match *s {
        Step::Dyn { idx, bits, stride } => Some((idx as usize * lanes, 64 - bits as u32, stride)),
        Step::Const(_) => None,
    });
    let mut first = dyns.next();
    if let Some((ic, s, stride)) = first
        && let Some((dd, bb, ii)) = cols3(c, dc, bc, ic, lanes)
    {
        for ((d, &b), &i) in dd.iter_mut().zip(bb).zip(ii) {
            let i = ((i << s) as i64) >> s;
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
            *d = d.wrapping_add(i.wrapping_mul(stride) as u64);
        }
    }
    true
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

/// Runs pure column ops on a one-lane register image (OpSpecConstantOp).
pub(crate) fn eval_const(ops: &[Op], img: &mut [u64]) -> Result<(), ExecError> {
    let mut mask = [0u64; MW];
    mask[0] = 1;
    for o in ops {
        match pure(o, img, 1, &mask, true) {
            Ok(true) => {}
            Ok(false) => return err(format!("{o:?} cannot be evaluated in OpSpecConstantOp")),
            Err(f) => return err(f.what),
        }
    }
    Ok(())
}

/// Executes ops that only touch lane columns; Ok(false) if `o` is not one of them.
fn pure(o: &Op, c: &mut [u64], lanes: usize, mask: &Mask, dense: bool) -> Result<bool, Fault> {
    let col = |x: u32| x as usize * lanes;
    match *o {
        Op::Bin {
            op,
            num,
            d,
            a,
            b,
            n,
            bs,
        } => {
            for k in 0..n {
                let (dc, ac, bc) = (col(d + k), col(a + k), col(if bs { b } else { b + k }));
                if num == Num::Int(32) && bin_u32(op, c, dc, ac, bc, lanes, mask, dense) {
                    continue;
                }
                match (op, num) {
                    (BinOp::FMul, Num::F32) => each_lane!(mask, lanes, dense, |l| {
                        c[dc + l] = (f32::from_bits(c[ac + l] as u32)
                            * f32::from_bits(c[bc + l] as u32))
                        .to_bits() as u64;
                    }),
                    (BinOp::FAdd, Num::F32) => each_lane!(mask, lanes, dense, |l| {
                        c[dc + l] = (f32::from_bits(c[ac + l] as u32)
                            + f32::from_bits(c[bc + l] as u32))
                        .to_bits() as u64;
                    }),
                    _ => each_lane!(mask, lanes, dense, |l| {
                        c[dc + l] = bin1(op, num, c[ac + l], c[bc + l]);
                    }),
                }
            }
        }
        Op::Un { op, num, d, a, n } => {
            for k in 0..n {
                let (dc, ac) = (col(d + k), col(a + k));
                each_lane!(mask, lanes, dense, |l| {
                    c[dc + l] = un1(op, num, c[ac + l]);
                });
            }
        }
        Op::Tern {
            op,
            num,
            d,
            a,
            b,
            c: cc,
            n,
            bs,
            cs,
        } => {
            for k in 0..n {
                let (dc, ac) = (col(d + k), col(a + k));
                let bc = col(if bs { b } else { b + k });
                let ccc = col(if cs { cc } else { cc + k });
                each_lane!(mask, lanes, dense, |l| {
                    c[dc + l] = tern1(op, num, c[ac + l], c[bc + l], c[ccc + l]);
                });
            }
        }
        Op::BfInsert {
            d,
            base,
            ins,
            off,
            cnt,
            n,
            bits,
        } => {
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
        Op::Cvt {
            kind,
            from,
            to,
            d,
            a,
            n,
        } => {
            for k in 0..n {
                let (dc, ac) = (col(d + k), col(a + k));
                match (kind, from, to) {
                    (CvtKind::UToF, Num::Int(32), Num::F32) => {
                        each_lane!(mask, lanes, dense, |l| {
                            c[dc + l] = (c[ac + l] as u32 as f32).to_bits() as u64;
                        })
                    }
                    _ => each_lane!(mask, lanes, dense, |l| {
                        c[dc + l] = cvt1(kind, from, to, c[ac + l]);
                    }),
                }
            }
        }
        Op::Bitcast {
            d,
            a,
            from,
            na,
            to,
            nd,
        } => {
            let (fb_, tb) = (from.bits().max(1), to.bits().max(1));
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
        Op::Trunc { d, a, bits } => {
            let (dc, ac) = (col(d), col(a));
            each_lane!(mask, lanes, dense, |l| {
                c[dc + l] = trunc(c[ac + l], bits as u32);
            });
        }
        Op::Select {
            d,
            c: cond,
            a,
            b,
            n,
            cs,
            nmats: 0,
            ..
        } => {
            for k in 0..n {
                let (dc, ac, bc) = (col(d + k), col(a + k), col(b + k));
                let cc = col(if cs { cond } else { cond + k });
                each_lane!(mask, lanes, dense, |l| {
                    c[dc + l] = if c[cc + l] != 0 { c[ac + l] } else { c[bc + l] };
                });
            }
        }
        Op::Copy { d, a } if a.nmats == 0 => {
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
        Op::ExtractDyn { d, a, idx, n, w } => {
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
        Op::InsertDyn { d, a, v, idx, n, w } => {
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
        _ => return Ok(false),
    }
    Ok(true)
}

// ---------------------------------------------------------------------------------------------
// Batches.

/// Counters of one chunk of workgroups, or the first error with its workgroup index.
type ChunkResult = Result<(u64, u64, u64, Duration, Duration), (u64, ExecError)>;

/// Scope instances with an active lane: (instance, first active lane), found lazily (no
/// per-call array to fill: this runs once per MulAdd and cooperative load/store).
struct Insts<'m> {
    mask: &'m Mask,
    scope: usize,
    lanes: usize,
    i: usize,
    n: usize,
}

impl Iterator for Insts<'_> {
    type Item = (usize, usize);
    fn next(&mut self) -> Option<(usize, usize)> {
        while self.i < self.n {
            let i = self.i;
            self.i += 1;
            let lo = i * self.scope;
            let hi = ((i + 1) * self.scope).min(self.lanes);
            if let Some(l) = (lo..hi).find(|&l| self.mask[l / 64] >> (l % 64) & 1 != 0) {
                return Some((i, l));
            }
        }
        None
    }
}

/// Everything shared by the batches of one dispatch.
struct Shared<'a> {
    objs: Vec<ObjInfo>,
    words: Vec<&'a [AtomicU32]>,
    binding_obj: std::collections::HashMap<(u32, u32), u32>,
    push_obj: u32,
    local_base: u32,
    groups: [u32; 3],
}

/// One workgroup's worth of state; reused for the workgroups a worker runs.
struct Batch<'p, 'a> {
    p: &'p Program,
    lanes: usize,
    full: Mask,
    exited: Mask,
    cols: Vec<u64>,
    mf: Vec<f32>,
    mw: Vec<u64>,
    mem: Mem<'a>,
    pending: Vec<Vec<Mask>>,
    wg: [u32; 3],
    groups: [u32; 3],
    lane_instr: u64,
    /// `lane_instr` when the current workgroup started (the budget is per workgroup).
    group_start: u64,
    instr: u64,
    flops: u64,
    printf: String,
    /// Batch that runs functions the engine calls itself (decode functions), made on first use.
    sub: Option<Box<Batch<'p, 'a>>>,
    /// Time in decode calls and MulAdds (coop2 statistics).
    t_decode: std::time::Duration,
    t_muladd: std::time::Duration,
    /// Tensor-load element sources by offset-free layout (coop2).
    src_cache: coop2::SourceCache,
}

impl<'p, 'a> Batch<'p, 'a> {
    fn new(p: &'p Program, sh: &Shared<'a>, lanes: usize) -> Batch<'p, 'a> {
        let mut full = [0u64; MW];
        for l in 0..lanes {
            full[l / 64] |= 1 << (l % 64);
        }
        let mut cols = vec![0u64; p.ncols * lanes];
        for &(c, v) in &p.const_cols {
            cols[c as usize * lanes..(c as usize + 1) * lanes].fill(v);
        }
        for &(c, a) in &p.var_cols {
            let obj = match a {
                VarAddr::Binding(s, b) => sh.binding_obj.get(&(s, b)).copied().unwrap_or(0),
                VarAddr::Push => sh.push_obj,
                VarAddr::Local(i) => sh.local_base + i,
            };
            cols[c as usize * lanes..(c as usize + 1) * lanes].fill(memory::object_base(obj));
        }
        let local = p
            .locals
            .iter()
            .map(|l| {
                let per = l.bytes.next_multiple_of(8);
                memory::zeroed(if l.per_lane {
                    per as usize * lanes
                } else {
                    per as usize
                })
            })
            .collect();
        let mut b = Batch {
            p,
            lanes,
            full,
            exited: [0; MW],
            cols,
            mf: vec![0.0; p.mf_len],
            mw: vec![0; p.mw_len],
            mem: Mem {
                objs: sh.objs.clone(),
                shared: sh.words.clone(),
                local,
            },
            pending: p
                .funcs
                .iter()
                .map(|f| vec![[0u64; MW]; f.blocks.len()])
                .collect(),
            wg: [0; 3],
            groups: sh.groups,
            lane_instr: 0,
            group_start: 0,
            instr: 0,
            flops: 0,
            printf: String::new(),
            sub: None,
            t_decode: std::time::Duration::ZERO,
            t_muladd: std::time::Duration::ZERO,
            src_cache: Default::default(),
        };
        for &(m, v) in &p.const_mats {
            b.fill_mat(m, v);
        }
        b
    }

    fn fill_mat(&mut self, m: u32, raw: u64) {
        let s = self.p.mats[m as usize];
        let len = s.inst as usize * s.cm.elems();
        if s.cm.is_f32_arena() {
            let v = floats::to_f64(s.cm.num, raw) as f32;
            self.mf[s.off..s.off + len].fill(v);
        } else {
            self.mw[s.off..s.off + len].fill(raw);
        }
    }

    fn run_group(&mut self, wg: [u32; 3]) -> Result<(), ExecError> {
        let p = self.p;
        self.wg = wg;
        self.exited = [0; MW];
        self.group_start = self.lane_instr;
        // Fresh Workgroup and per-lane memory, built-ins.
        for (i, l) in p.locals.iter().enumerate() {
            if !l.per_lane || i < p.locals.len() {
                for w in self.mem.local[i].iter() {
                    w.store(0, Relaxed);
                }
            }
        }
        let ls = p.local_size;
        let sg = p.sg as usize;
        for bf in &p.builtins {
            let per = p.locals[bf.local as usize].bytes.next_multiple_of(8) as usize;
            let words = &self.mem.local[bf.local as usize];
            for l in 0..self.lanes {
                let lid = [
                    l as u32 % ls[0],
                    (l as u32 / ls[0]) % ls[1],
                    l as u32 / (ls[0] * ls[1]),
                ];
                let v3 = |f: &dyn Fn(usize) -> u32| [f(0), f(1), f(2), 0];
                let nsg = self.lanes.div_ceil(sg) as u32;
                let li = (l % sg) as u32;
                let mask_of = |pred: &dyn Fn(u32) -> bool| {
                    let mut m = [0u32; 4];
                    for k in 0..sg as u32 {
                        if pred(k) {
                            m[(k / 32) as usize] |= 1 << (k % 32);
                        }
                    }
                    m
                };
                let vals: [u32; 4] = match bf.builtin {
                    built_in::GlobalInvocationId => v3(&|k| wg[k] * ls[k] + lid[k]),
                    built_in::LocalInvocationId => v3(&|k| lid[k]),
                    built_in::WorkgroupId => v3(&|k| wg[k]),
                    built_in::NumWorkgroups => v3(&|k| self.groups[k]),
                    built_in::WorkgroupSize | built_in::EnqueuedWorkgroupSize => v3(&|k| ls[k]),
                    built_in::LocalInvocationIndex => [l as u32, 0, 0, 0],
                    built_in::SubgroupId => [(l / sg) as u32, 0, 0, 0],
                    built_in::SubgroupLocalInvocationId => [li, 0, 0, 0],
                    built_in::SubgroupSize | built_in::SubgroupMaxSize => [sg as u32, 0, 0, 0],
                    built_in::NumSubgroups => [nsg, 0, 0, 0],
                    built_in::SubgroupEqMask => mask_of(&|k| k == li),
                    built_in::SubgroupGeMask => mask_of(&|k| k >= li),
                    built_in::SubgroupGtMask => mask_of(&|k| k > li),
                    built_in::SubgroupLeMask => mask_of(&|k| k <= li),
                    built_in::SubgroupLtMask => mask_of(&|k| k < li),
                    _ => [0; 4],
                };
                for (k, &v) in vals.iter().enumerate() {
                    let off = per * l + bf.off as usize + k * bf.comp_bytes as usize;
                    if off + bf.comp_bytes as usize <= per * (l + 1) {
                        memory::write_bytes(words, off, bf.comp_bytes, v as u64, false);
                    }
                }
            }
        }
        let full = self.full;
        for (o, d) in &p.private_init {
            self.op(o, &full, true).map_err(|f| self.place(f, *d, 0))?;
        }
        self.call(p.entry as usize, full)?;
        if !self.printf.is_empty() {
            print!("{}", self.printf);
            self.printf.clear();
        }
        Ok(())
    }

    fn place(&self, f: Fault, desc: u32, func: usize) -> ExecError {
        let p = self.p;
        let mut place = format!(
            "{} in function {}, workgroup ({}, {}, {})",
            p.descs
                .get(desc as usize)
                .map(String::as_str)
                .unwrap_or("?"),
            p.funcs.get(func).map(|f| f.name.as_str()).unwrap_or("?"),
            self.wg[0],
            self.wg[1],
            self.wg[2]
        );
        if let Some(l) = f.lane {
            let ls = p.local_size;
            place += &format!(
                ", local invocation ({}, {}, {})",
                l as u32 % ls[0],
                (l as u32 / ls[0]) % ls[1],
                l as u32 / (ls[0] * ls[1])
            );
        }
        ExecError {
            what: f.what,
            place,
        }
    }

    fn call(&mut self, fi: usize, mask: Mask) -> Result<(), ExecError> {
        let p = self.p;
        let f = &p.funcs[fi];
        let nb = f.blocks.len();
        for m in self.pending[fi].iter_mut() {
            *m = [0; MW];
        }
        if nb == 0 {
            return Ok(());
        }
        self.pending[fi][0] = mask;
        let budget = p.options.instruction_budget;
        let mut cur = 0usize;
        loop {
            while cur < nb && self.pending[fi][cur].iter().all(|&w| w == 0) {
                cur += 1;
            }
            if cur >= nb {
                break;
            }
            let mut active = std::mem::replace(&mut self.pending[fi][cur], [0; MW]);
            for (a, e) in active.iter_mut().zip(&self.exited) {
                *a &= !e;
            }
            let count: u32 = active.iter().map(|w| w.count_ones()).sum();
            if count == 0 {
                continue;
            }
            let dense = active == self.full;
            let block = &f.blocks[cur];
            self.instr += block.ops.len() as u64 + 1;
            self.lane_instr += (block.ops.len() as u64 + 1) * count as u64;
            if budget != 0 && self.lane_instr - self.group_start > budget {
                return Err(self.place(
                    Fault {
                        what: format!("instruction budget of {budget} lane-instructions exceeded"),
                        lane: None,
                    },
                    block.term.1,
                    fi,
                ));
            }
            // MulAdd time is taken per run of consecutive MulAdds: a clock read per tile costs
            // about 7 % of a GEMM.
            let mut mm_start: Option<Instant> = None;
            for (o, d) in &block.ops {
                let is_mm = matches!(o, Op::CmMulAdd { .. });
                if is_mm && mm_start.is_none() {
                    mm_start = Some(Instant::now());
                } else if !is_mm && let Some(t0) = mm_start.take() {
                    self.t_muladd += t0.elapsed();
                }
                if let Err(e) = self.op(o, &active, dense) {
                    return Err(self.place(e, *d, fi));
                }
                if let Op::Call { .. } = o {
                    // A callee may have terminated lanes.
                    for (a, e) in active.iter_mut().zip(&self.exited) {
                        *a &= !e;
                    }
                }
            }
            if let Some(t0) = mm_start {
                self.t_muladd += t0.elapsed();
            }
            let mut next = cur;
            let mut go = |b: &mut Self, e: &Edge, m: Mask| {
                if m.iter().all(|&w| w == 0) {
                    return;
                }
                let dense = m == b.full;
                for (dst, src) in &e.phis {
                    b.copy_val(*dst, *src, &m, dense);
                }
                let t = &mut b.pending[fi][e.target as usize];
                for k in 0..MW {
                    t[k] |= m[k];
                }
                next = next.min(e.target as usize);
            };
            match &block.term.0 {
                Term::Branch(e) => go(self, e, active),
                Term::Cond { c, t, f: fe } => {
                    let (mut mt, mut mf) = ([0u64; MW], [0u64; MW]);
                    let base = *c as usize * self.lanes;
                    each_lane!(active, self.lanes, false, |l| {
                        if self.cols[base + l] != 0 {
                            mt[l / 64] |= 1 << (l % 64);
                        } else {
                            mf[l / 64] |= 1 << (l % 64);
                        }
                    });
                    // Phis read values before any of the edges writes (parallel copies).
                    go(self, t, mt);
                    go(self, fe, mf);
                }
                Term::Switch {
                    sel,
                    bits,
                    default,
                    cases,
                } => {
                    let base = *sel as usize * self.lanes;
                    let mut masks = vec![[0u64; MW]; cases.len() + 1];
                    each_lane!(active, self.lanes, false, |l| {
                        let v = trunc(self.cols[base + l], *bits as u32);
                        let k = cases
                            .iter()
                            .position(|(lit, _)| trunc(*lit, *bits as u32) == v)
                            .unwrap_or(cases.len());
                        masks[k][l / 64] |= 1 << (l % 64);
                    });
                    for (k, (_, e)) in cases.iter().enumerate() {
                        go(self, e, masks[k]);
                    }
                    go(self, default, masks[cases.len()]);
                }
                Term::Return(v) => {
                    if let (Some(v), Some(r)) = (v, f.ret) {
                        self.copy_val(r, *v, &active, dense);
                    }
                }
                Term::Kill => {
                    for (e, a) in self.exited.iter_mut().zip(&active) {
                        *e |= a;
                    }
                }
                Term::Unreachable => {
                    return Err(self.place(
                        Fault {
                            what: "OpUnreachable was reached".into(),
                            lane: None,
                        },
                        block.term.1,
                        fi,
                    ));
                }
            }
            cur = next;
        }
        Ok(())
    }

    fn copy_val(&mut self, d: Val, a: Val, mask: &Mask, dense: bool) {
        let _ = pure(
            &Op::Copy {
                d: Val { nmats: 0, ..d },
                a: Val { nmats: 0, ..a },
            },
            &mut self.cols,
            self.lanes,
            mask,
            dense,
        );
        for k in 0..a.nmats {
            self.mat_copy(d.mat + k, a.mat + k, mask);
        }
    }

    /// Scope instances of a matrix slot with at least one active lane.
    fn instances<'m>(&self, m: u32, mask: &'m Mask) -> Insts<'m> {
        let s = self.p.mats[m as usize];
        Insts {
            mask,
            scope: s.scope as usize,
            lanes: self.lanes,
            i: 0,
            n: s.inst as usize,
        }
    }

    fn mat_copy(&mut self, d: u32, a: u32, mask: &Mask) {
        let (sd, sa) = (self.p.mats[d as usize], self.p.mats[a as usize]);
        let n = sd.cm.elems();
        for (i, _) in self.instances(d, mask) {
            if sd.cm.is_f32_arena() {
                self.mf
                    .copy_within(sa.off + i * n..sa.off + (i + 1) * n, sd.off + i * n);
            } else {
                self.mw
                    .copy_within(sa.off + i * n..sa.off + (i + 1) * n, sd.off + i * n);
            }
        }
    }

    /// Element `e` of instance `i` of matrix slot `m` as raw bits of its component kind.
    fn mat_get(&self, m: u32, i: usize, e: usize) -> u64 {
        let s = self.p.mats[m as usize];
        let k = s.off + i * s.cm.elems() + e;
        if s.cm.is_f32_arena() {
            let v = self.mf[k];
            if s.cm.num == Num::F32 {
                v.to_bits() as u64
            } else {
                floats::from_f64(s.cm.num, v as f64)
            }
        } else {
            self.mw[k]
        }
    }

    fn mat_set(&mut self, m: u32, i: usize, e: usize, raw: u64) {
        let s = self.p.mats[m as usize];
        let k = s.off + i * s.cm.elems() + e;
        if s.cm.is_f32_arena() {
            self.mf[k] = floats::to_f64(s.cm.num, raw) as f32;
        } else {
            self.mw[k] = trunc(raw, s.cm.num.bits());
        }
    }

    fn op(&mut self, o: &Op, mask: &Mask, dense: bool) -> Result<(), Fault> {
        let lanes = self.lanes;
        if pure(o, &mut self.cols, lanes, mask, dense)? {
            return Ok(());
        }
        let col = |x: u32| x as usize * lanes;
        let robust = self.p.options.robust;
        match o {
            Op::Copy { d, a } => self.copy_val(*d, *a, mask, dense),
            Op::Select {
                d,
                c,
                a,
                b,
                n,
                cs,
                nmats,
                dm,
                am,
                bm,
            } => {
                let _ = pure(
                    &Op::Select {
                        d: *d,
                        c: *c,
                        a: *a,
                        b: *b,
                        n: *n,
                        cs: *cs,
                        nmats: 0,
                        dm: 0,
                        am: 0,
                        bm: 0,
                    },
                    &mut self.cols,
                    lanes,
                    mask,
                    dense,
                );
                for k in 0..*nmats {
                    for (i, l) in self.instances(dm + k, mask) {
                        let src = if self.cols[col(*c) + l] != 0 {
                            am + k
                        } else {
                            bm + k
                        };
                        let mut one = [0u64; MW];
                        let scope = self.p.mats[(dm + k) as usize].scope as usize;
                        for x in i * scope..((i + 1) * scope).min(lanes) {
                            one[x / 64] |= 1 << (x % 64);
                        }
                        self.mat_copy(dm + k, src, &one);
                    }
                }
            }
            Op::Load { d, ptr, leaves } => {
                let pc = col(*ptr);
                let nw = word_run(leaves);
                if nw > 0
                    && load_words_fast(
                        &self.mem,
                        &mut self.cols,
                        lanes,
                        pc,
                        d.col as usize,
                        nw,
                        mask,
                        dense,
                    )
                {
                    return Ok(());
                }
                let mut has_mat = false;
                let extent = leaf_extent(leaves);
                let nwords = word_run(leaves);
                let mut cache = memory::ResolveCache::default();
                each_lane!(mask, lanes, dense, |l| {
                    let addr = self.cols[pc + l];
                    // One bounds check for the whole value, then plain word reads.
                    if let Some((sh, idx, b)) =
                        self.mem.resolve_cached(&mut cache, addr, l, extent, false)
                    {
                        let words = self.mem.words(sh, idx);
                        if nwords > 0 && b % 4 == 0 {
                            let w0 = b / 4;
                            for k in 0..nwords {
                                self.cols[col(d.col + k as u32) + l] =
                                    words[w0 + k].load(Relaxed) as u64;
                            }
                            continue;
                        }
                        for leaf in leaves.iter() {
                            match *leaf {
                                MemLeaf::Scalar { off, num, col: c } => {
                                    let v =
                                        memory::read_bytes(words, b + off as usize, num.bytes());
                                    self.cols[col(d.col + c) + l] =
                                        if num == Num::Bool { (v != 0) as u64 } else { v };
                                }
                                MemLeaf::Mat { .. } => has_mat = true,
                            }
                        }
                        continue;
                    }
                    for leaf in leaves.iter() {
                        match *leaf {
                            MemLeaf::Scalar { off, num, col: c } => {
                                let v = match self.mem.read(
                                    addr.wrapping_add(off as u64),
                                    l,
                                    num.bytes(),
                                ) {
                                    Ok(v) => v,
                                    Err(_) if robust => 0,
                                    Err(e) => {
                                        return Err(Fault {
                                            what: e.to_string(),
                                            lane: Some(l),
                                        });
                                    }
                                };
                                let v = if num == Num::Bool { (v != 0) as u64 } else { v };
                                self.cols[col(d.col + c) + l] = v;
                            }
                            MemLeaf::Mat { .. } => has_mat = true,
                        }
                    }
                });
                if has_mat {
                    for leaf in leaves.iter() {
                        if let MemLeaf::Mat { off, mat, cm } = *leaf {
                            self.mat_from_lanes(d.mat + mat, *ptr, off, cm.num, mask, robust)?;
                        }
                    }
                }
            }
            Op::Store { ptr, v, leaves } => {
                let pc = col(*ptr);
                let nw = word_run(leaves);
                if nw > 0
                    && store_words_fast(
                        &self.mem,
                        &self.cols,
                        lanes,
                        pc,
                        v.col as usize,
                        nw,
                        mask,
                        dense,
                    )
                {
                    return Ok(());
                }
                let extent = leaf_extent(leaves);
                let scalar_only = leaves.iter().all(|x| matches!(x, MemLeaf::Scalar { .. }));
                let nwords = word_run(leaves);
                let mut cache = memory::ResolveCache::default();
                each_lane!(mask, lanes, dense, |l| {
                    let addr = self.cols[pc + l];
                    if scalar_only
                        && let Some((sh, idx, b)) =
                            self.mem.resolve_cached(&mut cache, addr, l, extent, true)
                    {
                        let words = self.mem.words(sh, idx);
                        if nwords > 0 && b % 4 == 0 {
                            let w0 = b / 4;
                            for k in 0..nwords {
                                words[w0 + k]
                                    .store(self.cols[col(v.col + k as u32) + l] as u32, Relaxed);
                            }
                            continue;
                        }
                        for leaf in leaves.iter() {
                            if let MemLeaf::Scalar { off, num, col: c } = *leaf {
                                let x = self.cols[col(v.col + c) + l];
                                memory::write_bytes(words, b + off as usize, num.bytes(), x, sh);
                            }
                        }
                        continue;
                    }
                    for leaf in leaves.iter() {
                        match *leaf {
                            MemLeaf::Scalar { off, num, col: c } => {
                                let x = self.cols[col(v.col + c) + l];
                                match self.mem.write(
                                    addr.wrapping_add(off as u64),
                                    l,
                                    num.bytes(),
                                    x,
                                ) {
                                    Ok(()) => {}
                                    Err(_) if robust => {}
                                    Err(e) => {
                                        return Err(Fault {
                                            what: e.to_string(),
                                            lane: Some(l),
                                        });
                                    }
                                }
                            }
                            MemLeaf::Mat { off, mat, cm } => {
                                let s = self.p.mats[(v.mat + mat) as usize];
                                let scope = s.scope as usize;
                                let (i, li) = (l / scope, l % scope);
                                let len = cm.elems().div_ceil(scope);
                                let b = cm.num.bytes();
                                for k in 0..len {
                                    let e = li + k * scope;
                                    let x = if e < cm.elems() {
                                        self.mat_get(v.mat + mat, i, e)
                                    } else {
                                        0
                                    };
                                    let a2 = addr.wrapping_add(off as u64 + (k as u64) * b as u64);
                                    if let Err(e) = self.mem.write(a2, l, b, x)
                                        && !robust
                                    {
                                        return Err(Fault {
                                            what: e.to_string(),
                                            lane: Some(l),
                                        });
                                    }
                                }
                            }
                        }
                    }
                });
            }
            Op::CopyMem { dst, src, bytes } => {
                let (dc, sc) = (col(*dst), col(*src));
                each_lane!(mask, lanes, dense, |l| {
                    let (da, sa) = (self.cols[dc + l], self.cols[sc + l]);
                    for k in 0..*bytes as u64 {
                        let v = self.mem.read(sa + k, l, 1).map_err(|e| Fault {
                            what: e.to_string(),
                            lane: Some(l),
                        })?;
                        self.mem.write(da + k, l, 1, v).map_err(|e| Fault {
                            what: e.to_string(),
                            lane: Some(l),
                        })?;
                    }
                });
            }
            Op::AccessChain { d, base, steps } => {
                // Column at a time: copy the base, then add each step to every active lane.
                let (dc, bc) = (col(*d), col(*base));
                let c = &mut self.cols;
                if dense && access_chain_dense(c, dc, bc, steps, lanes) {
                    return Ok(());
                }
                each_lane!(mask, lanes, dense, |l| {
                    c[dc + l] = c[bc + l];
                });
                for s in steps.iter() {
                    match *s {
                        Step::Const(x) => each_lane!(mask, lanes, dense, |l| {
                            c[dc + l] = c[dc + l].wrapping_add(x as u64);
                        }),
                        Step::Dyn { idx, bits, stride } => {
                            let ic = col(idx);
                            each_lane!(mask, lanes, dense, |l| {
                                let i = sext(c[ic + l], bits as u32);
                                c[dc + l] = c[dc + l].wrapping_add(i.wrapping_mul(stride) as u64);
                            });
                        }
                    }
                }
            }
            Op::ArrayLength {
                d,
                ptr,
                off,
                stride,
            } => {
                let (dc, pc) = (col(*d), col(*ptr));
                each_lane!(mask, lanes, dense, |l| {
                    let rest = self.mem.bytes_from(self.cols[pc + l]).unwrap_or(0);
                    self.cols[dc + l] = rest.saturating_sub(*off as u64) / (*stride).max(1) as u64;
                });
            }
            Op::Atomic {
                op,
                num,
                d,
                ptr,
                v,
                cmp,
            } => {
                let (dc, pc, vc, cc) = (col(*d), col(*ptr), col(*v), col(*cmp));
                each_lane!(mask, lanes, dense, |l| {
                    let addr = self.cols[pc + l];
                    let (x, y) = (self.cols[vc + l], self.cols[cc + l]);
                    let r = self.atomic(*op, *num, addr, l, x, y).map_err(|e| Fault {
                        what: e.what,
                        lane: Some(l),
                    })?;
                    if *op != AtomicOp::Store {
                        self.cols[dc + l] = r;
                    }
                });
            }
            Op::Barrier => {
                let mut want = self.full;
                for (w, e) in want.iter_mut().zip(&self.exited) {
                    *w &= !e;
                }
                if *mask != want {
                    return fault(
                        "OpControlBarrier reached in divergent control flow (not every invocation of the workgroup is at it)",
                    );
                }
            }
            Op::Call { f, args, ret } => {
                for (p, a) in args.iter() {
                    self.copy_val(*p, *a, mask, dense);
                }
                self.call(*f as usize, *mask).map_err(|e| Fault {
                    what: format!("{} (in {})", e.what, e.place),
                    lane: None,
                })?;
                if let Some((d, _)) = ret
                    && let Some(r) = self.p.funcs[*f as usize].ret
                {
                    self.copy_val(*d, r, mask, dense);
                }
            }
            Op::Sg { .. } => self.subgroup(o, mask)?,
            Op::CmLoad { .. } | Op::CmStore { .. } => self.cm_mem(o, mask)?,
            Op::CmMulAdd { d, a, b, c, flags } => {
                self.muladd(*d, *a, *b, *c, *flags, mask)?;
            }
            Op::CmExtract { d, m, idx } => {
                let s = self.p.mats[*m as usize];
                let scope = s.scope as usize;
                each_lane!(mask, lanes, dense, |l| {
                    let e = l % scope + *idx as usize * scope;
                    self.cols[col(*d) + l] = if e < s.cm.elems() {
                        self.mat_get(*m, l / scope, e)
                    } else {
                        0
                    };
                });
            }
            Op::CmInsert { d, m, v, idx } => {
                if d != m {
                    self.mat_copy(*d, *m, mask);
                }
                let s = self.p.mats[*d as usize];
                let scope = s.scope as usize;
                each_lane!(mask, lanes, dense, |l| {
                    let e = l % scope + *idx as usize * scope;
                    if e < s.cm.elems() {
                        let x = self.cols[col(*v) + l];
                        self.mat_set(*d, l / scope, e, x);
                    }
                });
            }
            Op::CmSplat { d, v } => {
                let s = self.p.mats[*d as usize];
                for (i, l) in self.instances(*d, mask) {
                    let x = self.cols[col(*v) + l];
                    for e in 0..s.cm.elems() {
                        self.mat_set(*d, i, e, x);
                    }
                }
            }
            Op::CmUn { .. } | Op::CmBin { .. } | Op::CmScale { .. } | Op::CmCvt { .. } => {
                self.cm_elementwise(o, mask)?
            }
            Op::Printf { fmt, args } => {
                each_lane!(mask, lanes, dense, |l| {
                    let vals: Vec<(Num, Vec<u64>)> = args
                        .iter()
                        .map(|&(c, num, n)| {
                            (num, (0..n).map(|k| self.cols[col(c + k) + l]).collect())
                        })
                        .collect();
                    if self.p.options.printf {
                        self.printf += &format_printf(fmt, &vals);
                        self.printf.push('\n');
                    }
                });
            }
            Op::Coop2(c) => self.coop2(c, mask)?,
            Op::Unsupported(what) => return fault(what.clone()),
            _ => return fault(format!("internal: op {o:?} has no executor")),
        }
        Ok(())
    }

    /// Loads a matrix kept as lanes' shares in per-lane memory (e.g. a Function variable).
    fn mat_from_lanes(
        &mut self,
        m: u32,
        ptr: u32,
        off: u32,
        num: Num,
        mask: &Mask,
        robust: bool,
    ) -> Result<(), Fault> {
        let s = self.p.mats[m as usize];
        let scope = s.scope as usize;
        let len = s.cm.elems().div_ceil(scope);
        let b = num.bytes();
        for (i, _) in self.instances(m, mask) {
            for li in 0..scope {
                let l = i * scope + li;
                if l >= self.lanes {
                    break;
                }
                let addr = self.cols[ptr as usize * self.lanes + l];
                for k in 0..len {
                    let e = li + k * scope;
                    if e >= s.cm.elems() {
                        break;
                    }
                    let x = match self.mem.read(
                        addr.wrapping_add(off as u64 + (k * b as usize) as u64),
                        l,
                        b,
                    ) {
                        Ok(x) => x,
                        Err(_) if robust => 0,
                        Err(e) => {
                            return Err(Fault {
                                what: e.to_string(),
                                lane: Some(l),
                            });
                        }
                    };
                    self.mat_set(m, i, e, x);
                }
            }
        }
        Ok(())
    }

    fn atomic(
        &mut self,
        op: AtomicOp,
        num: Num,
        addr: u64,
        l: usize,
        x: u64,
        y: u64,
    ) -> Result<u64, Fault> {
        let n = num.bytes();
        let (sh, idx, b) = self.mem.resolve(addr, l, n as u64, op != AtomicOp::Load)?;
        let words = self.mem.words(sh, idx);
        if b % n as usize != 0 {
            return fault(format!("misaligned atomic at {addr:#x}"));
        }
        let bits = num.bits();
        let f = |old: u64| -> u64 {
            match op {
                AtomicOp::Load => old,
                AtomicOp::Store | AtomicOp::Exchange => x,
                AtomicOp::CmpXchg => {
                    if old == trunc(y, bits) {
                        x
                    } else {
                        old
                    }
                }
                AtomicOp::IInc => old.wrapping_add(1),
                AtomicOp::IDec => old.wrapping_sub(1),
                AtomicOp::IAdd => old.wrapping_add(x),
                AtomicOp::ISub => old.wrapping_sub(x),
                AtomicOp::SMin => bin1(BinOp::SMin, num, old, x),
                AtomicOp::UMin => bin1(BinOp::UMin, num, old, x),
                AtomicOp::SMax => bin1(BinOp::SMax, num, old, x),
                AtomicOp::UMax => bin1(BinOp::UMax, num, old, x),
                AtomicOp::And => old & x,
                AtomicOp::Or => old | x,
                AtomicOp::Xor => old ^ x,
                AtomicOp::FAdd => bin1(BinOp::FAdd, num, old, x),
                AtomicOp::FMin => bin1(BinOp::FMin, num, old, x),
                AtomicOp::FMax => bin1(BinOp::FMax, num, old, x),
            }
        };
        if n == 4 {
            let w = &words[b / 4];
            let mut cur = w.load(Relaxed);
            if op == AtomicOp::Load {
                return Ok(cur as u64);
            }
            loop {
                let new = trunc(f(cur as u64), 32) as u32;
                match w.compare_exchange_weak(cur, new, Relaxed, Relaxed) {
                    Ok(_) => return Ok(cur as u64),
                    Err(c) => cur = c,
                }
            }
        }
        // 64-bit (and narrower) atomics: serialized by a striped lock (SPIR-V atomics on the
        // same address are totally ordered; plain accesses racing with them are a data race).
        static LOCKS: [std::sync::Mutex<()>; 64] = [const { std::sync::Mutex::new(()) }; 64];
        let _g = LOCKS[((addr >> 3) % 64) as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let old = memory::read_bytes(words, b, n);
        if op != AtomicOp::Load {
            memory::write_bytes(words, b, n, trunc(f(old), bits), sh);
        }
        Ok(old)
    }
}

/// Load of `n` consecutive 32-bit words per lane into columns `dcol..dcol + n`, for values whose
/// leaves are such words; false (caller falls back to the general path, which redoes every
/// lane) when a lane's address is not a valid aligned in-bounds one.
#[allow(clippy::too_many_arguments)]
fn load_words_fast(
    mem: &Mem,
    cols: &mut [u64],
    lanes: usize,
    pc: usize,
    dcol: usize,
    n: usize,
    mask: &Mask,
    dense: bool,
) -> bool {
    if dense && let Some(ws) = contiguous(mem, &cols[pc..pc + lanes], n, false) {
        for (l, lw) in ws.chunks_exact(n).enumerate() {
            for (k, w) in lw.iter().enumerate() {
                cols[(dcol + k) * lanes + l] = w.load(Relaxed) as u64;
            }
        }
        return true;
    }
    // Scattered rows of a shared buffer miss the cache: prefetch every lane's words of the
    // first lane's object first, so that the misses overlap instead of queueing one by one.
    if dense
        && let Some(&a0) = cols.get(pc)
        && let Some(o) = mem.objs.get((a0 >> memory::OBJ_SHIFT) as usize)
        && o.shared
        && o.per_lane == 0
    {
        let words = mem.words(o.shared, o.idx);
        for &a in &cols[pc..pc + lanes] {
            if (a ^ a0) >> memory::OBJ_SHIFT == 0
                && let Some(w) = words.get(((a & ((1u64 << memory::OBJ_SHIFT) - 1)) / 4) as usize)
            {
                crate::kernels::prefetch(w);
            }
        }
    }
    let (mut cur, mut words, mut size, mut per_lane): (u64, &[AtomicU32], u64, u64) =
        (u64::MAX, &[], 0, 0);
    if dense {
        // Runs of lanes with consecutive addresses (rows of a buffer read by 4 or 16 lanes in
        // the GEMM staging): one object lookup and bounds check per run.
        let step = 4 * n as u64;
        let mut l = 0;
        while l < lanes {
            let addr = cols[pc + l];
            let oi = addr >> memory::OBJ_SHIFT;
            if oi != cur {
                let Some(o) = mem.objs.get(oi as usize).filter(|_| oi != 0) else {
                    return false;
                };
                words = mem.words(o.shared, o.idx);
                (size, per_lane, cur) = (o.size, o.per_lane, oi);
            }
            let mut r = 1;
            if per_lane == 0 {
                while l + r < lanes && cols[pc + l + r] == addr.wrapping_add(step * r as u64) {
                    r += 1;
                }
            }
            let off = addr & ((1u64 << memory::OBJ_SHIFT) - 1);
            if !off.is_multiple_of(4) || off + step * r as u64 > size {
                return false;
            }
            let w0 = ((per_lane * l as u64 + off) / 4) as usize;
            for (j, lw) in words[w0..w0 + n * r].chunks_exact(n).enumerate() {
                for (k, w) in lw.iter().enumerate() {
                    cols[(dcol + k) * lanes + l + j] = w.load(Relaxed) as u64;
                }
            }
            l += r;
        }
        return true;
    }
    each_lane!(mask, lanes, dense, |l| {
        let addr = cols[pc + l];
        let oi = addr >> memory::OBJ_SHIFT;
        if oi != cur {
            let Some(o) = mem.objs.get(oi as usize).filter(|_| oi != 0) else {
                return false;
            };
            words = mem.words(o.shared, o.idx);
            (size, per_lane, cur) = (o.size, o.per_lane, oi);
        }
        let off = addr & ((1u64 << memory::OBJ_SHIFT) - 1);
        if !off.is_multiple_of(4) || off + 4 * n as u64 > size {
            return false;
        }
        let w0 = ((per_lane * l as u64 + off) / 4) as usize;
        for (k, w) in words[w0..w0 + n].iter().enumerate() {
            cols[(dcol + k) * lanes + l] = w.load(Relaxed) as u64;
        }
    });
    true
}

/// When every lane is active and lane `l` addresses `n` words at `addr0 + 4·n·l` of one
/// shared-copy object (the staging pattern `shared[base + lid] = global[base2 + lid]`), the
/// words of all lanes in lane order, checked once for bounds and alignment.
fn contiguous<'m>(mem: &'m Mem, addrs: &[u64], n: usize, write: bool) -> Option<&'m [AtomicU32]> {
    let a0 = *addrs.first()?;
    let step = 4 * n as u64;
    let mut next = a0;
    // No early exit: the compare loop vectorizes and a mismatch is usually found late anyway.
    let mut same = true;
    for &a in addrs {
        same &= a == next;
        next = next.wrapping_add(step);
    }
    let oi = a0 >> memory::OBJ_SHIFT;
    let o = mem.objs.get(oi as usize)?;
    let off = a0 & ((1u64 << memory::OBJ_SHIFT) - 1);
    let end = off.checked_add(step * addrs.len() as u64)?;
    if !same || oi == 0 || o.per_lane != 0 || (write && !o.writable) || !off.is_multiple_of(4) {
        return None;
    }
    // `end` is in the same object: the last lane's address is `a0 + step·(lanes − 1)` exactly.
    if end > o.size || (end - step) >> memory::OBJ_SHIFT != 0 {
        return None;
    }
    mem.words(o.shared, o.idx)
        .get((off / 4) as usize..(end / 4) as usize)
}

/// Store counterpart of [`load_words_fast`].
#[allow(clippy::too_many_arguments)]
fn store_words_fast(
    mem: &Mem,
    cols: &[u64],
    lanes: usize,
    pc: usize,
    vcol: usize,
    n: usize,
    mask: &Mask,
    dense: bool,
) -> bool {
    if dense && let Some(ws) = contiguous(mem, &cols[pc..pc + lanes], n, true) {
        for (l, lw) in ws.chunks_exact(n).enumerate() {
            for (k, w) in lw.iter().enumerate() {
                w.store(cols[(vcol + k) * lanes + l] as u32, Relaxed);
            }
        }
        return true;
    }
    let (mut cur, mut words, mut size, mut per_lane): (u64, &[AtomicU32], u64, u64) =
        (u64::MAX, &[], 0, 0);
    each_lane!(mask, lanes, dense, |l| {
        let addr = cols[pc + l];
        let oi = addr >> memory::OBJ_SHIFT;
        if oi != cur {
            let Some(o) = mem
                .objs
                .get(oi as usize)
                .filter(|_| oi != 0 && mem.objs[oi as usize].writable)
            else {
                return false;
            };
            words = mem.words(o.shared, o.idx);
            (size, per_lane, cur) = (o.size, o.per_lane, oi);
        }
        let off = addr & ((1u64 << memory::OBJ_SHIFT) - 1);
        if !off.is_multiple_of(4) || off + 4 * n as u64 > size {
            return false;
        }
        let w0 = ((per_lane * l as u64 + off) / 4) as usize;
        for (k, w) in words[w0..w0 + n].iter().enumerate() {
            w.store(cols[(vcol + k) * lanes + l] as u32, Relaxed);
        }
    });
    true
}

/// If the leaves are 32-bit scalars at offsets 0, 4, 8, … going to columns 0, 1, 2, …, their
/// count (such values load and store as plain words), else 0.
fn word_run(leaves: &[MemLeaf]) -> usize {
    let ok = leaves.iter().enumerate().all(|(k, x)| {
        matches!(*x, MemLeaf::Scalar { off, num, col } if off == 4 * k as u32 && col == k as u32 && matches!(num, Num::Int(32) | Num::F32))
    });
    if ok { leaves.len() } else { 0 }
}

/// Bytes from the start of a value to the end of its last leaf.
fn leaf_extent(leaves: &[MemLeaf]) -> u64 {
    leaves
        .iter()
        .map(|x| match *x {
            MemLeaf::Scalar { off, num, .. } => off as u64 + num.bytes() as u64,
            MemLeaf::Mat { off, .. } => off as u64,
        })
        .max()
        .unwrap_or(0)
}

/// Formats one DebugPrintf line (printf-style %d %i %u %x %X %f %e %g %c %s %% with an
/// optional `v<N>` vector prefix).
pub(crate) fn format_printf(fmt: &str, args: &[(Num, Vec<u64>)]) -> String {
    let mut out = String::new();
    let mut it = fmt.chars().peekable();
    let mut ai = 0;
    while let Some(ch) = it.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        let mut spec = String::new();
        while let Some(&c) = it.peek() {
            if c.is_ascii_digit()
                || c == '.'
                || c == '-'
                || c == '+'
                || c == ' '
                || c == '#'
                || c == 'l'
                || c == 'v'
            {
                spec.push(c);
                it.next();
            } else {
                break;
            }
        }
        let Some(conv) = it.next() else { break };
        if conv == '%' {
            out.push('%');
            continue;
        }
        let prec: Option<usize> = spec.split('.').nth(1).and_then(|p| {
            p.trim_start_matches('v')
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect::<String>()
                .parse()
                .ok()
        });
        let Some((num, vals)) = args.get(ai) else {
            out.push_str("<missing>");
            continue;
        };
        ai += 1;
        let items: Vec<String> = vals
            .iter()
            .map(|&v| match conv {
                'd' | 'i' => sext(v, num.bits().max(1)).to_string(),
                'u' => trunc(v, num.bits().max(1)).to_string(),
                'x' => format!("{:x}", trunc(v, num.bits().max(1))),
                'X' => format!("{:X}", trunc(v, num.bits().max(1))),
                'c' => char::from_u32(v as u32).unwrap_or('?').to_string(),
                'e' | 'E' => format!("{:.*e}", prec.unwrap_or(6), floats::to_f64(*num, v)),
                'a' | 'A' | 'g' | 'G' => format!("{}", floats::to_f64(*num, v)),
                _ => format!("{:.*}", prec.unwrap_or(6), floats::to_f64(*num, v)),
            })
            .collect();
        out.push_str(&items.join(", "));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Dispatch.

/// The object table of a dispatch: null, the buffers in (set, binding) order, push constants,
/// then the program's own objects.
fn shared<'a>(
    p: &Program,
    resources: &Resources,
    bufs: &'a [Vec<AtomicU32>],
    push: &'a [AtomicU32],
    groups: [u32; 3],
) -> Shared<'a> {
    let mut objs = vec![ObjInfo {
        idx: 0,
        shared: true,
        per_lane: 0,
        size: 0,
        writable: false,
    }];
    let mut words: Vec<&[AtomicU32]> = Vec::new();
    let mut binding_obj = std::collections::HashMap::new();
    for (i, (k, v)) in resources.buffers.iter().enumerate() {
        binding_obj.insert(*k, objs.len() as u32);
        objs.push(ObjInfo {
            idx: i as u32,
            shared: true,
            per_lane: 0,
            size: v.len() as u64,
            writable: true,
        });
        words.push(&bufs[i]);
    }
    let push_obj = objs.len() as u32;
    objs.push(ObjInfo {
        idx: words.len() as u32,
        shared: true,
        per_lane: 0,
        size: resources.push_constants.len() as u64,
        writable: false,
    });
    words.push(push);
    let local_base = objs.len() as u32;
    for (i, l) in p.locals.iter().enumerate() {
        let per = l.bytes.next_multiple_of(8);
        objs.push(ObjInfo {
            idx: i as u32,
            shared: false,
            per_lane: if l.per_lane { per } else { 0 },
            size: l.bytes,
            writable: true,
        });
    }
    Shared {
        objs,
        words,
        binding_obj,
        push_obj,
        local_base,
        groups,
    }
}

impl Pipeline {
    /// Word copies of the bound buffers, in reused allocations where earlier dispatches left
    /// some (see [`Pipeline::give_words`]).
    fn take_words(&self, resources: &Resources) -> Vec<Vec<AtomicU32>> {
        let mut pool = std::mem::take(&mut *self.scratch.lock().unwrap_or_else(|e| e.into_inner()));
        resources
            .buffers
            .values()
            .map(|data| {
                // The smallest kept vector that holds the buffer without growing, else any.
                let need = data.len().div_ceil(4);
                let pick = pool
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| v.capacity() >= need)
                    .min_by_key(|(_, v)| v.capacity())
                    .map(|(i, _)| i);
                let mut v = match pick {
                    Some(i) => pool.swap_remove(i),
                    None => pool.pop().unwrap_or_default(),
                };
                memory::fill_from_bytes(&mut v, data);
                v
            })
            .collect()
    }

    /// Keeps the word vectors of a finished dispatch for the next one (at most 16 of them).
    fn give_words(&self, mut bufs: Vec<Vec<AtomicU32>>) {
        bufs.truncate(16);
        *self.scratch.lock().unwrap_or_else(|e| e.into_inner()) = bufs;
    }

    /// Calls a function of the module with one lane per element — the path the engine uses
    /// for functions it invokes itself (decode and per-element functions of
    /// cooperative_matrix2): `lanes` invocations run as batches of up to 1024 lanes in
    /// lockstep, grouped into subgroups as usual.
    ///
    /// `function` is the function's result id. `args[i]` holds parameter `i` column-major:
    /// component `c` (of its flattened scalar components) of lane `l` at `c·lanes + l`, as raw
    /// bits zero-extended to 64; pointer parameters are addresses (see
    /// [`Resources::device_address`]). Returns the result the same way (empty for void).
    /// Buffers in `resources` are read and written; Workgroup and Private memory start zeroed
    /// for each batch; built-in inputs read as zero. Cooperative-matrix values inside the
    /// called function are not supported on this path.
    pub fn call_function(
        &self,
        function: u32,
        args: &[&[u64]],
        lanes: usize,
        resources: &mut Resources,
    ) -> Result<Vec<u64>, ExecError> {
        let p = &self.p;
        let Some(fi) = p.funcs.iter().position(|f| f.id == function) else {
            return err(format!(
                "function %{function} is not part of the compiled pipeline"
            ));
        };
        let f = &p.funcs[fi];
        if args.len() != f.params.len() {
            return err(format!(
                "function %{function} takes {} parameters, {} given",
                f.params.len(),
                args.len()
            ));
        }
        for (i, (a, v)) in args.iter().zip(&f.params).enumerate() {
            if a.len() != v.ncols as usize * lanes || v.nmats != 0 {
                return err(format!(
                    "argument {i}: expected {} values ({} components × {lanes} lanes)",
                    v.ncols as usize * lanes,
                    v.ncols
                ));
            }
        }
        let bufs: Vec<Vec<AtomicU32>> = resources
            .buffers
            .values()
            .map(|v| memory::from_bytes(v))
            .collect();
        let push = memory::from_bytes(&resources.push_constants);
        let sh = shared(p, resources, &bufs, &push, [1, 1, 1]);
        let ret = f.ret.unwrap_or_default();
        let mut out = vec![0u64; ret.ncols as usize * lanes];
        let mut start = 0;
        while start < lanes {
            let n = (lanes - start).min(MAX_LANES);
            let mut b = Batch::new(p, &sh, n);
            for (a, v) in args.iter().zip(&f.params) {
                for c in 0..v.ncols as usize {
                    let dst = (v.col as usize + c) * n;
                    b.cols[dst..dst + n]
                        .copy_from_slice(&a[c * lanes + start..c * lanes + start + n]);
                }
            }
            let full = b.full;
            b.call(fi, full)?;
            for c in 0..ret.ncols as usize {
                let src = (ret.col as usize + c) * n;
                out[c * lanes + start..c * lanes + start + n]
                    .copy_from_slice(&b.cols[src..src + n]);
            }
            start += n;
        }
        for ((_, v), w) in resources.buffers.iter_mut().zip(&bufs) {
            memory::to_bytes(w, v);
        }
        Ok(out)
    }

    /// Runs `groups` workgroups over `resources`; buffers are updated in place.
    pub fn dispatch(
        &self,
        resources: &mut Resources,
        groups: [u32; 3],
    ) -> Result<crate::DispatchStats, ExecError> {
        let p = &self.p;
        let start = Instant::now();
        for b in &p.bindings {
            match resources.buffers.get(&(b.set, b.binding)) {
                None => {
                    return err(format!(
                        "binding (set {}, binding {}){} is used by the shader but not bound",
                        b.set,
                        b.binding,
                        b.name.as_ref().map(|n| format!(" {n}")).unwrap_or_default()
                    ));
                }
                Some(buf) if buf.len() < b.min_size => {
                    return err(format!(
                        "buffer (set {}, binding {}) has {} bytes; the shader's layout needs at least {}",
                        b.set,
                        b.binding,
                        buf.len(),
                        b.min_size
                    ));
                }
                _ => {}
            }
        }
        if resources.push_constants.len() < p.push_size {
            return err(format!(
                "push constants have {} bytes; the shader reads {}",
                resources.push_constants.len(),
                p.push_size
            ));
        }
        let bufs = self.take_words(resources);
        let push = memory::from_bytes(&resources.push_constants);
        let sh = shared(p, resources, &bufs, &push, groups);
        let total = groups.iter().map(|&g| g as u64).product::<u64>();
        let gid = |i: u64| {
            [
                (i % groups[0] as u64) as u32,
                ((i / groups[0] as u64) % groups[1] as u64) as u32,
                (i / (groups[0] as u64 * groups[1] as u64)) as u32,
            ]
        };
        let threads = if p.options.threads == 0 {
            rayon::current_num_threads()
        } else {
            p.options.threads
        };
        let mut stats = DispatchStats::default();
        if threads <= 1 || total <= 1 {
            let mut b = Batch::new(p, &sh, p.lanes as usize);
            for i in 0..total {
                b.run_group(gid(i))?;
            }
            stats.lane_instructions = b.lane_instr;
            stats.instructions = b.instr;
            stats.muladd_flops = b.flops;
            stats.decode_time = b.t_decode;
            stats.muladd_time = b.t_muladd;
        } else {
            use rayon::prelude::*;
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| ExecError::new(format!("cannot start {threads} threads: {e}")))?;
            let stop = AtomicBool::new(false);
            let chunk = total.div_ceil(threads as u64 * 8).max(1);
            let nchunks = total.div_ceil(chunk);
            let res: Vec<ChunkResult> = pool.install(|| {
                (0..nchunks)
                    .into_par_iter()
                    .map(|c| {
                        let mut b = Batch::new(p, &sh, p.lanes as usize);
                        for i in c * chunk..((c + 1) * chunk).min(total) {
                            if stop.load(Relaxed) {
                                break;
                            }
                            if let Err(e) = b.run_group(gid(i)) {
                                stop.store(true, Relaxed);
                                return Err((i, e));
                            }
                        }
                        Ok((b.lane_instr, b.instr, b.flops, b.t_decode, b.t_muladd))
                    })
                    .collect()
            });
            let mut first: Option<(u64, ExecError)> = None;
            for r in res {
                match r {
                    Ok((a, b, c, td, tm)) => {
                        stats.decode_time += td;
                        stats.muladd_time += tm;
                        stats.lane_instructions += a;
                        stats.instructions += b;
                        stats.muladd_flops += c;
                    }
                    Err((i, e)) => {
                        if first.as_ref().is_none_or(|(j, _)| i < *j) {
                            first = Some((i, e));
                        }
                    }
                }
            }
            if let Some((_, e)) = first {
                return Err(e);
            }
        }
        for ((_, v), w) in resources.buffers.iter_mut().zip(&bufs) {
            memory::to_bytes(w, v);
        }
        self.give_words(bufs);
        stats.workgroups = total;
        stats.invocations = total * p.lanes as u64;
        stats.elapsed = start.elapsed();
        Ok(stats)
    }
}

#[allow(dead_code)]
pub(crate) fn kernel_level() -> &'static str {
    kernels::level_name()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipeline_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Pipeline>();
    }

    #[test]
    fn printf_formats_scalars_and_vectors() {
        let f = |x: f32| x.to_bits() as u64;
        let s = format_printf(
            "i=%d u=%u x=%x f=%.2f v=%v3f %%",
            &[
                (Num::Int(32), vec![(-5i32) as u32 as u64]),
                (Num::Int(32), vec![7]),
                (Num::Int(32), vec![255]),
                (Num::F32, vec![f(1.5)]),
                (Num::F32, vec![f(1.0), f(2.5), f(-3.0)]),
            ],
        );
        assert_eq!(s, "i=-5 u=7 x=ff f=1.50 v=1.000000, 2.500000, -3.000000 %");
    }

    #[test]
    fn integer_semantics_follow_the_spec() {
        // OpSMod takes the divisor's sign, OpSRem the dividend's (SPIR-V 3.52.13).
        assert_eq!(
            bin1(BinOp::SMod, Num::Int(32), (-7i32) as u32 as u64, 3) as u32 as i32,
            2
        );
        assert_eq!(
            bin1(BinOp::SRem, Num::Int(32), (-7i32) as u32 as u64, 3) as u32 as i32,
            -1
        );
        assert_eq!(bin1(BinOp::ShrA, Num::Int(8), 0x80, 3), 0xf0);
        assert_eq!(
            bin1(BinOp::UMulHi, Num::Int(32), 0xffff_ffff, 0xffff_ffff),
            0xffff_fffe
        );
        assert_eq!(
            cvt1(CvtKind::SConv, Num::Int(8), Num::Int(32), 0xff),
            0xffff_ffff
        );
        assert_eq!(
            cvt1(
                CvtKind::FToS,
                Num::F32,
                Num::Int(8),
                (-300f32).to_bits() as u64
            ),
            0x80
        );
        assert_eq!(
            un1(UnOp::FindSMsb, Num::Int(32), (-1i32) as u32 as u64),
            0xffff_ffff
        );
    }
}
