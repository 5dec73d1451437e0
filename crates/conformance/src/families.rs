//! The families of cases. Each builds its module from `spv.rs`, its inputs from a seed, and its
//! expected outputs with `reference.rs`. Inputs are chosen so that float results are exact in
//! the result type wherever the operation allows (small multiples of powers of two), making
//! most float comparisons exact; where rounding is the point (conversions) the reference rounds.

use crate::reference::{bytes, decode, encode, f32_to_bf16, f64_to_f16, other_neighbour};
use crate::spv::{ModuleText, Scope, Use};
use crate::{Case, Comp, Compare, MulAddShape, Output, Target};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Bytes of `values` encoded as `t`.
pub(crate) fn pack(t: Comp, values: &[f64]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&v| bytes(t, encode(t, v)))
        .collect()
}

/// A deterministic value for element `i` of a load/store input: distinct, exact in `t`.
pub(crate) fn load_value(t: Comp, i: usize, seed: usize) -> f64 {
    let k = (i * 7 + seed * 13) % 240;
    match t {
        Comp::F16 | Comp::F32 => k as f64 * 0.125 - 14.0,
        Comp::BF16 => (k % 120) as f64 * 0.25 - 15.0,
        Comp::S8 => (k as i64 - 120) as f64,
        Comp::U8 => k as f64,
        Comp::S32 => (k as i64 * 1_000_003 - 120_000_000) as f64,
        Comp::U32 => (k as u64 * 17_000_023) as f64,
    }
}

/// Every (type, rows, columns, use) the target's multiply-adds use.
pub(crate) fn matrix_types(target: &Target) -> BTreeSet<(Comp, u32, u32, Use)> {
    let mut s = BTreeSet::new();
    for m in &target.muladd {
        let [mm, n, k] = m.mnk;
        let [a, b, c, r] = m.types;
        s.insert((a, mm, k, Use::A));
        s.insert((b, k, n, Use::B));
        s.insert((c, mm, n, Use::Acc));
        s.insert((r, mm, n, Use::Acc));
    }
    s
}

/// A structured loop of the workgroup's `lanes` invocations copying `len` elements from `src` to
/// `dst` (each a variable and its element pointer type), then a workgroup barrier.
fn copy_loop(
    m: &mut ModuleText,
    t: Comp,
    src: (&str, &str),
    dst: (&str, &str),
    len: u32,
    lanes: u32,
) -> String {
    let ty = m.comp(t);
    let li = m.local_index();
    let (u0, n, step, wg, sem) = (m.u32(0), m.u32(len), m.u32(lanes), m.u32(2), m.u32(0x108));
    let (sv, sp) = src;
    let (dv, dp) = dst;
    format!(
        "%lid = OpLoad %uint {li}\nOpBranch %hdr\n%hdr = OpLabel\n%i = OpPhi %uint %lid %entry %inext %cont\n\
         OpLoopMerge %merge %cont None\nOpBranch %chk\n%chk = OpLabel\n%in_range = OpULessThan %bool %i {n}\n\
         OpBranchConditional %in_range %body %merge\n%body = OpLabel\n\
         %sp_i = OpAccessChain {sp} {sv} {u0} %i\n%v_i = OpLoad {ty} %sp_i\n\
         %dp_i = OpAccessChain {dp} {dv} %i\nOpStore %dp_i %v_i\nOpBranch %cont\n%cont = OpLabel\n\
         %inext = OpIAdd %uint %i {step}\nOpBranch %hdr\n%merge = OpLabel\n\
         OpControlBarrier {wg} {wg} {sem}"
    )
}

/// Loads and stores: every matrix type of the target, both layouts, exact and padded strides,
/// an element offset, from a storage buffer or from Workgroup memory; and stores in every layout.
pub fn load_store(target: &Target) -> Vec<Case> {
    let sg = target.subgroup_size;
    let mut out = Vec::new();
    for (t, rows, cols, u) in matrix_types(target) {
        // Vulkan wants Pointer and Stride aligned to the lesser of 16 bytes and a row's (or
        // column's) size (VUID-RuntimeSpirv-OpCooperativeMatrixLoadKHR-08986): padding and
        // offsets are whole 16-byte units.
        let unit = 16 / t.bytes();
        for col_major in [false, true] {
            let (major, minor) = if col_major {
                (cols, rows)
            } else {
                (rows, cols)
            };
            // Element (r, c) of a matrix at `off` with `stride` in this layout.
            let element_at = |r: u32, c: u32, off: u32, stride: u32| {
                if col_major {
                    off + c * stride + r
                } else {
                    off + r * stride + c
                }
            };
            for pad in [0u32, unit] {
                for off in [0u32, unit] {
                    for workgroup in [false, true] {
                        let stride = minor + pad;
                        let len = off + (major - 1) * stride + minor + 1;
                        let input: Vec<f64> =
                            (0..len as usize).map(|i| load_value(t, i, 1)).collect();
                        let mut m = ModuleText::new(sg);
                        let (inb, pin) = m.buffer(0, t);
                        let (outb, pout) = m.buffer(1, t);
                        let mt = m.mat(t, rows, cols, u);
                        let (u0, c_off, c_stride, c_layout, c_row, c_cols) = (
                            m.u32(0),
                            m.u32(off),
                            m.u32(stride),
                            m.u32(u32::from(col_major)),
                            m.u32(0),
                            m.u32(cols),
                        );
                        let mut body = String::new();
                        if workgroup {
                            let (sh, psh) = m.shared(t, len);
                            body.push_str(&copy_loop(
                                &mut m,
                                t,
                                (&inb, &pin),
                                (&sh, &psh),
                                len,
                                sg,
                            ));
                            body.push('\n');
                            writeln!(body, "%p = OpAccessChain {psh} {sh} {c_off}").unwrap();
                        } else {
                            writeln!(body, "%p = OpAccessChain {pin} {inb} {u0} {c_off}").unwrap();
                        }
                        writeln!(
                            body,
                            "%mat = OpCooperativeMatrixLoadKHR {mt} %p {c_layout} {c_stride}\n\
                             %q = OpAccessChain {pout} {outb} {u0} {u0}\n\
                             OpCooperativeMatrixStoreKHR %q %mat {c_row} {c_cols}"
                        )
                        .unwrap();
                        let expected: Vec<f64> = (0..rows)
                            .flat_map(|r| (0..cols).map(move |c| (r, c)))
                            .map(|(r, c)| input[element_at(r, c, off, stride) as usize])
                            .collect();
                        out.push(Case::single(
                            format!(
                                "load/{}/{rows}x{cols}/{}/{}/stride+{pad}/offset{off}/{}",
                                t.name(),
                                u.name(),
                                if col_major { "col" } else { "row" },
                                if workgroup { "workgroup" } else { "storage" }
                            ),
                            "load-store",
                            m.finish(&body),
                            pack(t, &input),
                            t,
                            pack(t, &expected),
                            Compare::Exact,
                            cols,
                        ));
                    }
                }
            }
            // Stores in this layout with a padded stride and an offset: every other element
            // of the output stays zero.
            let (pad, off) = (unit, 2 * unit);
            let stride = minor + pad;
            let len = off + (major - 1) * stride + minor + 2;
            let input: Vec<f64> = (0..(rows * cols) as usize)
                .map(|i| load_value(t, i, 2))
                .collect();
            let mut m = ModuleText::new(sg);
            let (inb, pin) = m.buffer(0, t);
            let (outb, pout) = m.buffer(1, t);
            let mt = m.mat(t, rows, cols, u);
            let (u0, c_off, c_stride, c_layout, c_row, c_cols) = (
                m.u32(0),
                m.u32(off),
                m.u32(stride),
                m.u32(u32::from(col_major)),
                m.u32(0),
                m.u32(cols),
            );
            let body = format!(
                "%p = OpAccessChain {pin} {inb} {u0} {u0}\n\
                 %mat = OpCooperativeMatrixLoadKHR {mt} %p {c_row} {c_cols}\n\
                 %q = OpAccessChain {pout} {outb} {u0} {c_off}\n\
                 OpCooperativeMatrixStoreKHR %q %mat {c_layout} {c_stride}\n"
            );
            let mut expected = vec![0.0; len as usize];
            for r in 0..rows {
                for c in 0..cols {
                    expected[element_at(r, c, off, stride) as usize] =
                        input[(r * cols + c) as usize];
                }
            }
            out.push(Case::single(
                format!(
                    "store/{}/{rows}x{cols}/{}/{}/stride+{pad}/offset{off}",
                    t.name(),
                    u.name(),
                    if col_major { "col" } else { "row" }
                ),
                "load-store",
                m.finish(&body),
                pack(t, &input),
                t,
                pack(t, &expected),
                Compare::Exact,
                stride,
            ));
        }
    }
    out
}

/// Multiply-add values: floats are multiples of 1/2 (A, B) and 1/4 (C) in [-2, 2], so every
/// product and sum is exact in the result type; integers cover their type's range.
fn muladd_value(t: Comp, i: usize, seed: usize, role: usize) -> f64 {
    let x = (i * 2654435761 + seed * 40503 + role * 97) % 1_000_003;
    match t {
        Comp::F16 | Comp::F32 | Comp::BF16 if role == 2 => (x % 17) as f64 * 0.25 - 2.0,
        Comp::F16 | Comp::F32 | Comp::BF16 => (x % 9) as f64 * 0.5 - 2.0,
        Comp::S8 => (x % 256) as f64 - 128.0,
        Comp::U8 => (x % 256) as f64,
        Comp::S32 => (x % 2001) as f64 - 1000.0,
        Comp::U32 => (x % 2001) as f64,
    }
}

/// OpCooperativeMatrixMulAddKHR over every tuple of the target, with the signedness operands the
/// types call for: plain accumulators and integer accumulators near the top of their range (the
/// result wraps: "the low-order N bits of the correct result"), and SaturatingAccumulation on the
/// tuples that list it ([`Target::with_saturating_everywhere`] lists it on every integer one).
pub fn muladd(target: &Target) -> Vec<Case> {
    let mut out = Vec::new();
    let shapes: Vec<MulAddShape> = target.muladd.clone();
    for s in shapes {
        let int = !s.types[3].is_float();
        let kinds: &[&str] = match (int, s.saturating) {
            (false, _) => &["plain"],
            (true, false) => &["plain", "wrap"],
            (true, true) => &["saturate"],
        };
        for &kind in kinds {
            let shape = Shape {
                mnk: s.mnk,
                types: s.types,
                scope: Scope::Subgroup,
                local_size: target.subgroup_size,
            };
            out.push(muladd_case(&shape, kind, "muladd"));
        }
    }
    out
}

/// SPV_NV_cooperative_matrix2's flexible dimensions: for every entry of the target's list, a
/// multiply-add of twice each granularity (M, N, K not of the fixed list), at the entry's scope;
/// Workgroup-scope entries run in a workgroup of the entry's workgroupInvocations, every
/// invocation taking part (VkCooperativeMatrixFlexibleDimensionsPropertiesNV).
pub fn flexible(target: &Target) -> Vec<Case> {
    target
        .flexible
        .iter()
        .map(|f| {
            let [gm, gn, gk] = f.granularity;
            let shape = Shape {
                mnk: [2 * gm, 2 * gn, 2 * gk],
                types: f.types,
                scope: f.scope,
                local_size: match f.scope {
                    Scope::Subgroup => target.subgroup_size,
                    Scope::Workgroup => f.workgroup_invocations,
                },
            };
            muladd_case(&shape, "plain", "flexible")
        })
        .collect()
}

/// A multiply-add case's shape, types, scope and workgroup size.
struct Shape {
    mnk: [u32; 3],
    types: [Comp; 4],
    scope: Scope,
    local_size: u32,
}

fn muladd_case(s: &Shape, kind: &str, family: &'static str) -> Case {
    let [mm, n, k] = s.mnk;
    let [ta, tb, tc, tr] = s.types;
    let a: Vec<f64> = (0..(mm * k) as usize)
        .map(|i| muladd_value(ta, i, 1, 0))
        .collect();
    let b: Vec<f64> = (0..(k * n) as usize)
        .map(|i| muladd_value(tb, i, 2, 1))
        .collect();
    let c: Vec<f64> = (0..(mm * n) as usize)
        .map(|i| {
            let v = muladd_value(tc, i, 3, 2);
            // Near the top of the range: the sums overflow (wrap) or saturate.
            match (kind, tc) {
                ("wrap" | "saturate", Comp::S32) => f64::from(i32::MAX) - 5000.0 + v,
                ("wrap" | "saturate", Comp::U32) => f64::from(u32::MAX) - 5000.0 + v,
                _ => v,
            }
        })
        .collect();
    let signed = |t: Comp| t.is_signed_int();
    let mut ops = Vec::new();
    if signed(ta) {
        ops.push("MatrixASignedComponentsKHR");
    }
    if signed(tb) {
        ops.push("MatrixBSignedComponentsKHR");
    }
    if signed(tc) {
        ops.push("MatrixCSignedComponentsKHR");
    }
    if signed(tr) {
        ops.push("MatrixResultSignedComponentsKHR");
    }
    if kind == "saturate" {
        ops.push("SaturatingAccumulationKHR");
    }
    let mut m = ModuleText::new(s.local_size);
    // Flexible dimensions and Workgroup scope are Vulkan features of VK_NV_cooperative_matrix2,
    // with no SPIR-V capability of their own.
    if family == "flexible" {
        m.ext("SPV_NV_cooperative_matrix2");
    }
    let (ba, pa) = m.buffer(0, ta);
    let (br, pr) = m.buffer(1, tr);
    let (bb, pb) = m.buffer(2, tb);
    let (bc, pc) = m.buffer(3, tc);
    let (mta, mtb, mtc, mtr) = (
        m.mat_in(ta, mm, k, Use::A, s.scope),
        m.mat_in(tb, k, n, Use::B, s.scope),
        m.mat_in(tc, mm, n, Use::Acc, s.scope),
        m.mat_in(tr, mm, n, Use::Acc, s.scope),
    );
    let (u0, row, ck, cn) = (m.u32(0), m.u32(0), m.u32(k), m.u32(n));
    let body = format!(
        "%pa = OpAccessChain {pa} {ba} {u0} {u0}\n%ma = OpCooperativeMatrixLoadKHR {mta} %pa {row} {ck}\n\
         %pb = OpAccessChain {pb} {bb} {u0} {u0}\n%mb = OpCooperativeMatrixLoadKHR {mtb} %pb {row} {cn}\n\
         %pc = OpAccessChain {pc} {bc} {u0} {u0}\n%mc = OpCooperativeMatrixLoadKHR {mtc} %pc {row} {cn}\n\
         %md = OpCooperativeMatrixMulAddKHR {mtr} %ma %mb %mc{}\n\
         %pr = OpAccessChain {pr} {br} {u0} {u0}\nOpCooperativeMatrixStoreKHR %pr %md {row} {cn}\n",
        if ops.is_empty() {
            String::new()
        } else {
            format!(" {}", ops.join("|"))
        }
    );
    // The reference: exact sums (i128 for integers, f64 for floats: exact by construction).
    let mut expected = Vec::new();
    for r in 0..mm as usize {
        for col in 0..n as usize {
            if tr.is_float() {
                let mut acc = c[r * n as usize + col];
                for kk in 0..k as usize {
                    acc += a[r * k as usize + kk] * b[kk * n as usize + col];
                }
                expected.push(encode(tr, acc));
            } else {
                let mut prod: i128 = 0;
                for kk in 0..k as usize {
                    prod += a[r * k as usize + kk] as i128 * b[kk * n as usize + col] as i128;
                }
                let total = prod + c[r * n as usize + col] as i128;
                let bits = tr.bits();
                let v = if kind == "saturate" {
                    let (lo, hi) = if signed(tr) {
                        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                    } else {
                        (0, (1i128 << bits) - 1)
                    };
                    total.clamp(lo, hi)
                } else {
                    total
                };
                expected.push((v as u128 as u64) & ((1u64 << bits) - 1));
            }
        }
    }
    Case {
        name: match s.scope {
            Scope::Subgroup if family == "muladd" => format!(
                "muladd/{mm}x{n}x{k}/{}x{}+{}->{}/{kind}",
                ta.name(),
                tb.name(),
                tc.name(),
                tr.name()
            ),
            scope => format!(
                "{family}/{}{}/{mm}x{n}x{k}/{}x{}+{}->{}",
                scope.name(),
                if scope == Scope::Workgroup {
                    format!("-{}", s.local_size)
                } else {
                    String::new()
                },
                ta.name(),
                tb.name(),
                tc.name(),
                tr.name()
            ),
        },
        family,
        text: m.finish(&body),
        groups: [1, 1, 1],
        inputs: BTreeMap::from([
            ((0, 0), pack(ta, &a)),
            ((0, 2), pack(tb, &b)),
            ((0, 3), pack(tc, &c)),
        ]),
        outputs: vec![Output {
            binding: (0, 1),
            comp: tr,
            expected: expected.iter().flat_map(|&v| bytes(tr, v)).collect(),
            compare: Compare::Exact,
            row_len: n,
            alternative: None,
        }],
    }
}

/// Float values that exercise conversions: specials, both zeros, the ends of float16's range,
/// values halfway between float16 (and bfloat16) neighbours (ties to even, both ways),
/// subnormals, and ordinary values.
fn conversion_values(n: usize) -> Vec<f64> {
    let p = |e: i32| 2f64.powi(e);
    let special = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        65504.0,
        65520.0,
        -65520.0,
        1.0 + p(-11),
        1.0 + 3.0 * p(-11),
        -(1.0 + p(-11)),
        p(-14),
        p(-24),
        p(-25),
        3.0 * p(-25),
        p(-26),
        1e-8,
        -1e-8,
        1e6,
        0.1,
        -0.1,
        1.0 / 3.0,
        std::f64::consts::PI,
        1024.0 + 0.5,
        // bfloat16 (8 significant bits): ties at 1 + 2^-8 and 1 + 3 * 2^-8, just above a tie,
        // its largest value below float16's overflow, and 2^16.
        1.0 + p(-8),
        1.0 + 3.0 * p(-8),
        -(1.0 + p(-8)),
        1.0 + p(-8) + p(-10),
        65280.0,
        65536.0,
    ];
    (0..n)
        .map(|i| {
            special.get(i).copied().unwrap_or_else(|| {
                let x = (i * 2654435761 % 1_000_003) as f64;
                (x - 500_000.0) / 997.0
            })
        })
        .collect()
}

/// Component conversions of accumulator matrices (OpFConvert, OpConvertSToF, OpConvertUToF,
/// OpConvertFToS, OpBitcast) between the target's accumulator types, and float16 <-> bfloat16 on
/// A matrices where the target lists both.
pub fn convert(target: &Target) -> Vec<Case> {
    let sg = target.subgroup_size;
    let mut out = Vec::new();
    let mut shapes: BTreeSet<(u32, u32)> = BTreeSet::new();
    let mut accs: BTreeSet<Comp> = BTreeSet::new();
    for s in &target.muladd {
        shapes.insert((s.mnk[0], s.mnk[1]));
        accs.insert(s.types[2]);
        accs.insert(s.types[3]);
    }
    let Some(&(rows, cols)) = shapes.iter().next() else {
        return out;
    };
    let pairs: &[(Comp, Comp, &str)] = &[
        (Comp::F32, Comp::F16, "OpFConvert"),
        (Comp::F16, Comp::F32, "OpFConvert"),
        (Comp::S32, Comp::F32, "OpConvertSToF"),
        (Comp::U32, Comp::F32, "OpConvertUToF"),
        (Comp::F32, Comp::S32, "OpConvertFToS"),
        (Comp::F16, Comp::S32, "OpConvertFToS"),
        (Comp::S32, Comp::F16, "OpConvertSToF"),
        (Comp::U32, Comp::S32, "OpBitcast"),
    ];
    let mut jobs: Vec<(Comp, Comp, &str, Use, u32, u32)> = pairs
        .iter()
        .filter(|(from, to, _)| accs.contains(from) && accs.contains(to))
        .map(|&(from, to, op)| (from, to, op, Use::Acc, rows, cols))
        .collect();
    // float16 <-> bfloat16 on A matrices of a shape the list has in both types (bfloat16 is an
    // A/B type only on the lists here): rounding to bfloat16's 8 bits, and back.
    let mut a_types: BTreeMap<(u32, u32), BTreeSet<Comp>> = BTreeMap::new();
    for s in &target.muladd {
        a_types
            .entry((s.mnk[0], s.mnk[2]))
            .or_default()
            .insert(s.types[0]);
    }
    if let Some((&(ar, ac), _)) = a_types
        .iter()
        .find(|(_, t)| t.contains(&Comp::F16) && t.contains(&Comp::BF16))
    {
        jobs.push((Comp::F16, Comp::BF16, "OpFConvert", Use::A, ar, ac));
        jobs.push((Comp::BF16, Comp::F16, "OpFConvert", Use::A, ar, ac));
    }
    for (from, to, op, usage, rows, cols) in jobs {
        let count = (rows * cols) as usize;
        let src: Vec<f64> = match from {
            Comp::F32 | Comp::F16 | Comp::BF16 if to.is_float() => {
                let v = conversion_values(count);
                // A 16-bit source holds what its type can.
                if from != Comp::F32 {
                    v.iter()
                        .map(|&x| decode(Comp::F16, encode(Comp::F16, x)))
                        .collect()
                } else {
                    v.iter().map(|&x| f64::from(x as f32)).collect()
                }
            }
            // To integers: values in range (out of range is undefined), fractions truncated.
            Comp::F32 | Comp::F16 => (0..count)
                .map(|i| (i as f64 * 37.25) % 2000.0 - 1000.0)
                .collect(),
            Comp::S32 => (0..count)
                .map(|i| (i as i64 * 2_654_435 % 4_000_000 - 2_000_000) as f64)
                .collect(),
            _ => (0..count)
                .map(|i| (i as u64 * 2_654_435_761 % 4_294_967_296) as f64)
                .collect(),
        };
        // What the source buffer holds exactly.
        let src: Vec<f64> = src.iter().map(|&v| decode(from, encode(from, v))).collect();
        let expected: Vec<u64> = src
            .iter()
            .map(|&v| match (op, to) {
                ("OpBitcast", _) => encode(from, v),
                ("OpConvertFToS", _) => encode(to, v.trunc()),
                (_, Comp::F16) => u64::from(f64_to_f16(if from == Comp::F32 {
                    f64::from(v as f32)
                } else {
                    v
                })),
                // Exact in float32 (a float16 source): one rounding, to nearest even.
                (_, Comp::BF16) => u64::from(f32_to_bf16(v as f32)),
                _ => encode(to, v),
            })
            .collect();
        let mut m = ModuleText::new(sg);
        let (inb, pin) = m.buffer(0, from);
        let (outb, pout) = m.buffer(1, to);
        let (mf, mt) = (m.mat(from, rows, cols, usage), m.mat(to, rows, cols, usage));
        let (u0, row, cc) = (m.u32(0), m.u32(0), m.u32(cols));
        let body = format!(
            "%p = OpAccessChain {pin} {inb} {u0} {u0}\n%a = OpCooperativeMatrixLoadKHR {mf} %p {row} {cc}\n\
             %b = {op} {mt} %a\n%q = OpAccessChain {pout} {outb} {u0} {u0}\n\
             OpCooperativeMatrixStoreKHR %q %b {row} {cc}\n"
        );
        out.push(Case {
            name: format!(
                "convert/{rows}x{cols}{}/{}->{}/{op}",
                if usage == Use::Acc { "" } else { "/A" },
                from.name(),
                to.name()
            ),
            family: "convert",
            text: m.finish(&body),
            groups: [1, 1, 1],
            inputs: BTreeMap::from([((0, 0), pack(from, &src))]),
            outputs: vec![Output {
                binding: (0, 1),
                comp: to,
                expected: expected.iter().flat_map(|&v| bytes(to, v)).collect(),
                // NaN payloads are the implementation's; an inexact float result may be either
                // neighbour (Vulkan: "rounded to one or the other"); everything else is exact.
                compare: if to.is_float() {
                    Compare::Float { ulps: 0 }
                } else {
                    Compare::Exact
                },
                row_len: cols,
                alternative: to.is_float().then(|| {
                    src.iter()
                        .zip(&expected)
                        .flat_map(|(&v, &e)| bytes(to, other_neighbour(to, v, e)))
                        .collect()
                }),
            }],
        });
    }
    out
}

/// Element-wise arithmetic on accumulator matrices of the target's types, and
/// OpMatrixTimesScalar.
pub fn elementwise(target: &Target) -> Vec<Case> {
    let sg = target.subgroup_size;
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for s in &target.muladd {
        for t in [s.types[2], s.types[3]] {
            let (rows, cols) = (s.mnk[0], s.mnk[1]);
            if !seen.insert((t, rows, cols)) {
                continue;
            }
            let ops: &[&str] = if t.is_float() {
                &[
                    "OpFAdd",
                    "OpFSub",
                    "OpFMul",
                    "OpFDiv",
                    "OpFNegate",
                    "OpMatrixTimesScalar",
                ]
            } else if t.is_signed_int() {
                &["OpIAdd", "OpISub", "OpIMul", "OpSDiv", "OpSNegate"]
            } else {
                &["OpIAdd", "OpISub", "OpIMul", "OpUDiv"]
            };
            for &op in ops {
                out.push(elementwise_case(sg, t, rows, cols, op));
            }
        }
    }
    out
}

fn elementwise_case(sg: u32, t: Comp, rows: u32, cols: u32, op: &str) -> Case {
    let count = (rows * cols) as usize;
    let x: Vec<f64> = (0..count)
        .map(|i| {
            let k = (i * 2654435761 % 1009) as f64;
            match t {
                Comp::F16 | Comp::BF16 | Comp::F32 => (k - 504.0) / 16.0,
                Comp::S32 => (k - 504.0) * 1013.0,
                _ => k * 1013.0,
            }
        })
        .collect();
    let y: Vec<f64> = (0..count)
        .map(|i| {
            let k = (i * 40503 % 997) as f64 + 1.0;
            match t {
                Comp::F16 | Comp::BF16 | Comp::F32 => {
                    if i % 2 == 0 {
                        k / 64.0
                    } else {
                        -k / 32.0
                    }
                }
                Comp::S32 if i % 3 == 0 => -k,
                _ => k,
            }
        })
        .collect();
    let scalar = 0.75;
    let unary = matches!(op, "OpFNegate" | "OpSNegate");
    let mut m = ModuleText::new(sg);
    let (xb, px) = m.buffer(0, t);
    let (ob, po) = m.buffer(1, t);
    let (yb, py) = m.buffer(2, t);
    let mt = m.mat(t, rows, cols, Use::Acc);
    let (u0, row, cc) = (m.u32(0), m.u32(0), m.u32(cols));
    let ty = m.comp(t);
    let rhs = match op {
        "OpMatrixTimesScalar" => {
            m.raw_decl("%scalar", &format!("%scalar = OpConstant {ty} 0.75"));
            "%scalar"
        }
        _ => "%y",
    };
    let op_line = if unary {
        format!("%z = {op} {mt} %x")
    } else {
        format!("%z = {op} {mt} %x {rhs}")
    };
    let body = format!(
        "%p = OpAccessChain {px} {xb} {u0} {u0}\n%x = OpCooperativeMatrixLoadKHR {mt} %p {row} {cc}\n\
         %pq = OpAccessChain {py} {yb} {u0} {u0}\n%y = OpCooperativeMatrixLoadKHR {mt} %pq {row} {cc}\n\
         {op_line}\n%q = OpAccessChain {po} {ob} {u0} {u0}\nOpCooperativeMatrixStoreKHR %q %z {row} {cc}\n"
    );
    let xs: Vec<f64> = x.iter().map(|&v| decode(t, encode(t, v))).collect();
    let ys: Vec<f64> = y.iter().map(|&v| decode(t, encode(t, v))).collect();
    let expected: Vec<u64> = xs
        .iter()
        .zip(&ys)
        .map(|(&a, &b)| {
            let v = match op {
                "OpFAdd" | "OpIAdd" => a + b,
                "OpFSub" | "OpISub" => a - b,
                "OpFMul" | "OpIMul" => a * b,
                "OpFDiv" => a / b,
                "OpSDiv" | "OpUDiv" => (a / b).trunc(),
                "OpFNegate" | "OpSNegate" => -a,
                _ => a * scalar,
            };
            if t.is_float() {
                encode(t, v)
            } else {
                // Integer results wrap: exact in i128 before the mask.
                let exact: i128 = match op {
                    "OpIMul" => a as i128 * b as i128,
                    _ => v as i128,
                };
                (exact as u128 as u64) & ((1u64 << t.bits()) - 1)
            }
        })
        .collect();
    Case {
        name: format!("elementwise/{}/{rows}x{cols}/{op}", t.name()),
        family: "elementwise",
        text: m.finish(&body),
        groups: [1, 1, 1],
        inputs: BTreeMap::from([((0, 0), pack(t, &x)), ((0, 2), pack(t, &y))]),
        outputs: vec![Output {
            binding: (0, 1),
            comp: t,
            expected: expected.iter().flat_map(|&v| bytes(t, v)).collect(),
            // Vulkan allows OpFDiv 2.5 ULP of the exact quotient (Appendix A, "Precision and
            // Operation of SPIR-V Instructions", both 32- and 16-bit); the reference's
            // correctly rounded result is within 0.5 ULP of it, so results may differ by 3.
            compare: match (t.is_float(), op) {
                (true, "OpFDiv") => Compare::Float { ulps: 3 },
                (true, _) => Compare::Float { ulps: 0 },
                _ => Compare::Exact,
            },
            row_len: cols,
            alternative: None,
        }],
    }
}

/// The float accumulator types and shapes of the target.
pub(crate) fn float_accumulators(target: &Target) -> BTreeSet<(Comp, u32, u32)> {
    target
        .muladd
        .iter()
        .flat_map(|s| {
            [
                (s.types[2], s.mnk[0], s.mnk[1]),
                (s.types[3], s.mnk[0], s.mnk[1]),
            ]
        })
        .filter(|(t, _, _)| matches!(t, Comp::F16 | Comp::F32))
        .collect()
}

/// OpCooperativeMatrixReduceNV (SPV_NV_cooperative_matrix2): rows, columns, both, and 2x2, with
/// addition, maximum and minimum as the combine function. Inputs are small integers, so sums are
/// exact.
pub fn reduce(target: &Target) -> Vec<Case> {
    let sg = target.subgroup_size;
    let mut out = Vec::new();
    for (t, rows, cols) in float_accumulators(target) {
        // A 2x2 reduction's result is half the source: the source is twice the listed shape, so
        // the result is a listed (or flexible) one.
        for (mode, sr, sc, rr, rc) in [
            ("Row", rows, cols, rows, cols),
            ("Column", rows, cols, rows, cols),
            ("Row|Column", rows, cols, rows, cols),
            ("2x2", 2 * rows, 2 * cols, rows, cols),
        ] {
            let (rows, cols) = (sr, sc);
            for combine in ["OpFAdd", "max", "min"] {
                let count = (rows * cols) as usize;
                let x: Vec<f64> = (0..count)
                    .map(|i| ((i * 2654435761) % 61) as f64 - 30.0)
                    .collect();
                let comb = |a: f64, b: f64| match combine {
                    "OpFAdd" => a + b,
                    "max" => a.max(b),
                    _ => a.min(b),
                };
                let at = |r: u32, c: u32| x[(r * cols + c) as usize];
                let mut expected = Vec::new();
                for r in 0..rr {
                    for c in 0..rc {
                        let v = match mode {
                            "Row" => (1..cols).fold(at(r, 0), |acc, k| comb(acc, at(r, k))),
                            "Column" => (1..rows).fold(at(0, c), |acc, k| comb(acc, at(k, c))),
                            "Row|Column" => (0..rows)
                                .flat_map(|i| (0..cols).map(move |j| (i, j)))
                                .skip(1)
                                .fold(at(0, 0), |acc, (i, j)| comb(acc, at(i, j))),
                            _ => comb(
                                comb(at(2 * r, 2 * c), at(2 * r + 1, 2 * c)),
                                comb(at(2 * r, 2 * c + 1), at(2 * r + 1, 2 * c + 1)),
                            ),
                        };
                        expected.push(encode(t, v));
                    }
                }
                let mut m = ModuleText::new(sg);
                m.cap("CooperativeMatrixReductionsNV");
                m.ext("SPV_NV_cooperative_matrix2");
                let (xb, px) = m.buffer(0, t);
                let (ob, po) = m.buffer(1, t);
                let ms = m.mat(t, rows, cols, Use::Acc);
                let md = m.mat(t, rr, rc, Use::Acc);
                let (u0, row, cc, rcc) = (m.u32(0), m.u32(0), m.u32(cols), m.u32(rc));
                let ty = m.comp(t);
                m.raw_decl(
                    &format!("%fn2_{}", t.name()),
                    &format!("%fn2_{0} = OpTypeFunction {ty} {ty} {ty}", t.name()),
                );
                let op_line = match combine {
                    "OpFAdd" => format!("%s = OpFAdd {ty} %a0 %b0"),
                    "max" => {
                        m.raw_decl("%glsl", "%glsl = OpExtInstImport \"GLSL.std.450\"");
                        format!("%s = OpExtInst {ty} %glsl FMax %a0 %b0")
                    }
                    _ => {
                        m.raw_decl("%glsl", "%glsl = OpExtInstImport \"GLSL.std.450\"");
                        format!("%s = OpExtInst {ty} %glsl FMin %a0 %b0")
                    }
                };
                let body = format!(
                    "%p = OpAccessChain {px} {xb} {u0} {u0}\n%x = OpCooperativeMatrixLoadKHR {ms} %p {row} {cc}\n\
                     %r = OpCooperativeMatrixReduceNV {md} %x {mode} %combine\n\
                     %q = OpAccessChain {po} {ob} {u0} {u0}\nOpCooperativeMatrixStoreKHR %q %r {row} {rcc}\n"
                );
                let combine_fn = format!(
                    "%combine = OpFunction {ty} None %fn2_{0}\n%a0 = OpFunctionParameter {ty}\n\
                     %b0 = OpFunctionParameter {ty}\n%cl = OpLabel\n{op_line}\nOpReturnValue %s\nOpFunctionEnd\n",
                    t.name()
                );
                let text = with_function(m.finish(&body), &combine_fn);
                out.push(Case::single(
                    format!("reduce/{}/{rows}x{cols}/{mode}/{combine}", t.name()),
                    "reduce",
                    text,
                    pack(t, &x),
                    t,
                    expected.iter().flat_map(|&v| bytes(t, v)).collect(),
                    Compare::Float { ulps: 0 },
                    rc,
                ));
            }
        }
    }
    out
}

/// Appends a function after the module's entry point.
pub(crate) fn with_function(module: String, function: &str) -> String {
    let glsl_import = module.contains("%glsl = OpExtInstImport");
    let mut s = module;
    if glsl_import {
        // An OpExtInstImport belongs before the memory model, not among the types.
        let line = "%glsl = OpExtInstImport \"GLSL.std.450\"\n";
        s = s.replacen(line, "", 1);
        s = s.replacen("OpMemoryModel", &format!("{line}OpMemoryModel"), 1);
    }
    s.push_str(function);
    s
}

/// OpCooperativeMatrixPerElementOpNV: f(row, column, x, s) = x * s + row - column / 2 on every
/// element, with a scalar operand.
pub fn per_element(target: &Target) -> Vec<Case> {
    let sg = target.subgroup_size;
    let mut out = Vec::new();
    for (t, rows, cols) in float_accumulators(target) {
        let count = (rows * cols) as usize;
        let x: Vec<f64> = (0..count)
            .map(|i| ((i * 40503) % 41) as f64 - 20.0)
            .collect();
        let expected: Vec<u64> = (0..count)
            .map(|i| {
                let (r, c) = ((i as u32 / cols) as f64, (i as u32 % cols) as f64);
                encode(t, x[i] * 1.5 + r - c * 0.5)
            })
            .collect();
        let mut m = ModuleText::new(sg);
        m.cap("CooperativeMatrixPerElementOperationsNV");
        m.ext("SPV_NV_cooperative_matrix2");
        let (xb, px) = m.buffer(0, t);
        let (ob, po) = m.buffer(1, t);
        let mt = m.mat(t, rows, cols, Use::Acc);
        let (u0, row, cc) = (m.u32(0), m.u32(0), m.u32(cols));
        let ty = m.comp(t);
        m.raw_decl("%s15", &format!("%s15 = OpConstant {ty} 1.5"));
        m.raw_decl("%half_c", &format!("%half_c = OpConstant {ty} 0.5"));
        m.raw_decl(
            "%fn_pe",
            &format!("%fn_pe = OpTypeFunction {ty} %uint %uint {ty} {ty}"),
        );
        let body = format!(
            "%p = OpAccessChain {px} {xb} {u0} {u0}\n%x = OpCooperativeMatrixLoadKHR {mt} %p {row} {cc}\n\
             %r = OpCooperativeMatrixPerElementOpNV {mt} %x %pe %s15\n\
             %q = OpAccessChain {po} {ob} {u0} {u0}\nOpCooperativeMatrixStoreKHR %q %r {row} {cc}\n"
        );
        let f = format!(
            "%pe = OpFunction {ty} None %fn_pe\n%pr = OpFunctionParameter %uint\n%pc = OpFunctionParameter %uint\n\
             %pv = OpFunctionParameter {ty}\n%ps = OpFunctionParameter {ty}\n%pl = OpLabel\n\
             %fr = OpConvertUToF {ty} %pr\n%fc = OpConvertUToF {ty} %pc\n%vs = OpFMul {ty} %pv %ps\n\
             %a1 = OpFAdd {ty} %vs %fr\n%hc = OpFMul {ty} %fc %half_c\n%a2 = OpFSub {ty} %a1 %hc\n\
             OpReturnValue %a2\nOpFunctionEnd\n"
        );
        out.push(Case::single(
            format!("per-element/{}/{rows}x{cols}", t.name()),
            "per-element",
            with_function(m.finish(&body), &f),
            pack(t, &x),
            t,
            expected.iter().flat_map(|&v| bytes(t, v)).collect(),
            Compare::Float { ulps: 0 },
            cols,
        ));
    }
    out
}
