//! The QCOM family (SPV_QCOM_cooperative_matrix_conversion): `OpCompositeConstructCoopMatQCOM`
//! and `OpCompositeExtractCoopMatQCOM` on every matrix type of the target the extension allows
//! (A and B of 256-bit lines, accumulators up to the subgroup size), from arrays of the component
//! type and packed in uint32 words; `OpBitCastArrayQCOM` and `OpExtractSubArrayQCOM` per
//! invocation. A device without the extension runs the cases through `qcom-to-khr`.
//!
//! Placement (the spec's text): the array of the invocation with SubgroupLocalInvocationId i is
//! row i of an A or accumulator matrix and column i of a B matrix; arrays of invocations past
//! the matrix's rows (columns) are ignored by construct and undefined after extract, so only
//! the invocations inside write. Packing of small elements in a uint32 word: element 0 in the
//! low bits, as OpBitcast orders a vector (the spec calls it a bitcast).

use crate::families::{load_value, matrix_types, pack};
use crate::spv::{ModuleText, Use};
use crate::{Case, Comp, Compare, Target};
use std::fmt::Write;

/// Whether the extension allows a matrix of this type and Use (SPV_QCOM_cooperative_matrix_conversion,
/// OpCompositeConstructCoopMatQCOM): lines of 256 bits for A and B, accumulators of i32, u32,
/// f32 or f16 with rows and columns within the subgroup.
fn allowed(t: Comp, rows: u32, cols: u32, u: Use, sg: u32) -> bool {
    let line_256 = |n: u32| n * t.bits() == 256;
    match u {
        Use::A => {
            matches!(t, Comp::F16 | Comp::F32 | Comp::S8 | Comp::U8) && line_256(cols) && rows <= sg
        }
        Use::B => {
            matches!(t, Comp::F16 | Comp::F32 | Comp::S8 | Comp::U8) && line_256(rows) && cols <= sg
        }
        Use::Acc => {
            matches!(t, Comp::F16 | Comp::F32 | Comp::S32 | Comp::U32) && rows <= sg && cols <= sg
        }
    }
}

/// The array an invocation holds: its element type and length, packed in uint32 or not.
fn line_array(t: Comp, rows: u32, cols: u32, u: Use, packed: bool) -> (Comp, u32) {
    let elements = if u == Use::B { rows } else { cols };
    if packed {
        (Comp::U32, elements * t.bits() / 32)
    } else {
        (t, elements)
    }
}

/// Packs an invocation's elements into little-endian uint32 words (element 0 lowest).
fn pack_words(t: Comp, values: &[f64]) -> Vec<f64> {
    pack(t, values)
        .chunks(4)
        .map(|w| f64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
        .collect()
}

fn array_type(m: &mut ModuleText, t: Comp, len: u32) -> String {
    let ty = m.comp(t);
    let n = m.u32(len);
    let id = format!("%arr_{}_{len}", t.name());
    m.raw_decl(&id, &format!("{id} = OpTypeArray {ty} {n}"));
    id
}

/// Loads the invocation's `len` elements of `t` from buffer `(var, ptr)` at `lane * len` and
/// makes the array `%arr`.
fn load_line(m: &mut ModuleText, t: Comp, (var, ptr): (&str, &str), len: u32) -> String {
    let ty = m.comp(t);
    let arr = array_type(m, t, len);
    let (li, u0, clen) = (m.local_index(), m.u32(0), m.u32(len));
    let mut s = format!("%lid = OpLoad %uint {li}\n%base = OpIMul %uint %lid {clen}\n");
    let mut elements = Vec::new();
    for j in 0..len {
        let cj = m.u32(j);
        writeln!(
            s,
            "%li{j} = OpIAdd %uint %base {cj}\n%lp{j} = OpAccessChain {ptr} {var} {u0} %li{j}\n%le{j} = OpLoad {ty} %lp{j}"
        )
        .unwrap();
        elements.push(format!("%le{j}"));
    }
    writeln!(
        s,
        "%arr = OpCompositeConstruct {arr} {}",
        elements.join(" ")
    )
    .unwrap();
    s
}

/// Stores the elements of array `src` (of `t`, `len` long) at `lane * len` of buffer
/// `(var, ptr)`, in the invocations whose lane is below `lines` (all when None).
fn store_line(
    m: &mut ModuleText,
    t: Comp,
    src: &str,
    (var, ptr): (&str, &str),
    len: u32,
    lines: Option<u32>,
) -> String {
    let ty = m.comp(t);
    let (li, u0, clen) = (m.local_index(), m.u32(0), m.u32(len));
    let mut s = format!("%slid = OpLoad %uint {li}\n");
    if let Some(n) = lines {
        let cn = m.u32(n);
        writeln!(
            s,
            "%inside = OpULessThan %bool %slid {cn}\nOpSelectionMerge %skip None\n\
             OpBranchConditional %inside %write %skip\n%write = OpLabel"
        )
        .unwrap();
    }
    writeln!(s, "%sbase = OpIMul %uint %slid {clen}").unwrap();
    for j in 0..len {
        let cj = m.u32(j);
        writeln!(
            s,
            "%sx{j} = OpCompositeExtract {ty} {src} {j}\n%si{j} = OpIAdd %uint %sbase {cj}\n\
             %sp{j} = OpAccessChain {ptr} {var} {u0} %si{j}\nOpStore %sp{j} %sx{j}"
        )
        .unwrap();
    }
    if lines.is_some() {
        s.push_str("OpBranch %skip\n%skip = OpLabel\n");
    }
    s
}

fn new_module(sg: u32) -> ModuleText {
    let mut m = ModuleText::new(sg);
    m.cap("CooperativeMatrixConversionQCOM");
    m.ext("SPV_QCOM_cooperative_matrix_conversion");
    m
}

/// Every case of the family.
pub fn qcom(target: &Target) -> Vec<Case> {
    let sg = target.subgroup_size;
    let mut out = Vec::new();
    for (t, rows, cols, u) in matrix_types(target) {
        if !allowed(t, rows, cols, u, sg) {
            continue;
        }
        let packings: &[bool] = if t.bits() < 32 || (u == Use::Acc && t == Comp::F32) {
            &[false, true]
        } else {
            &[false]
        };
        let lines = if u == Use::B { cols } else { rows };
        for &packed in packings {
            let (st, len) = line_array(t, rows, cols, u, packed);
            // The matrix, row-major, and each invocation's line of it.
            let matrix: Vec<f64> = (0..(rows * cols) as usize)
                .map(|i| load_value(t, i, 5))
                .collect();
            let elements = if u == Use::B { rows } else { cols };
            let line = |i: u32| -> Vec<f64> {
                (0..elements)
                    .map(|k| {
                        let (r, c) = if u == Use::B { (k, i) } else { (i, k) };
                        if i < lines {
                            matrix[(r * cols + c) as usize]
                        } else {
                            load_value(t, (i * 31 + k) as usize, 9)
                        }
                    })
                    .collect()
            };
            let lanes: Vec<f64> = (0..sg)
                .flat_map(|i| {
                    let l = line(i);
                    if packed { pack_words(t, &l) } else { l }
                })
                .collect();
            let name = format!(
                "qcom/{}/{rows}x{cols}/{}/{}",
                t.name(),
                u.name(),
                if packed { "packed" } else { "elements" }
            );

            // Construct: every invocation's line, then a cooperative store, row-major.
            let mut m = new_module(sg);
            let (inb, pin) = m.buffer(0, st);
            let (outb, pout) = m.buffer(1, t);
            let mt = m.mat(t, rows, cols, u);
            let (u0, ccols) = (m.u32(0), m.u32(cols));
            let mut body = load_line(&mut m, st, (&inb, &pin), len);
            writeln!(
                body,
                "%m = OpCompositeConstructCoopMatQCOM {mt} %arr\n%q = OpAccessChain {pout} {outb} {u0} {u0}\n\
                 OpCooperativeMatrixStoreKHR %q %m {u0} {ccols}"
            )
            .unwrap();
            out.push(Case::single(
                format!("{name}/construct"),
                "qcom",
                m.finish(&body),
                pack(st, &lanes),
                t,
                pack(t, &matrix),
                Compare::Exact,
                cols,
            ));

            // Extract: a cooperative load, then the invocations inside write their lines.
            let mut m = new_module(sg);
            let (inb, pin) = m.buffer(0, t);
            let (outb, pout) = m.buffer(1, st);
            let mt = m.mat(t, rows, cols, u);
            let arr = array_type(&mut m, st, len);
            let (u0, ccols) = (m.u32(0), m.u32(cols));
            let mut body = format!(
                "%p = OpAccessChain {pin} {inb} {u0} {u0}\n%m = OpCooperativeMatrixLoadKHR {mt} %p {u0} {ccols}\n\
                 %x = OpCompositeExtractCoopMatQCOM {arr} %m\n"
            );
            body.push_str(&store_line(
                &mut m,
                st,
                "%x",
                (&outb, &pout),
                len,
                Some(lines),
            ));
            let expected: Vec<f64> = (0..lines)
                .flat_map(|i| {
                    let l = line(i);
                    if packed { pack_words(t, &l) } else { l }
                })
                .collect();
            out.push(Case::single(
                format!("{name}/extract"),
                "qcom",
                m.finish(&body),
                pack(t, &matrix),
                st,
                pack(st, &expected),
                Compare::Exact,
                len,
            ));
        }
    }
    out.extend(arrays(sg));
    out
}

/// OpBitCastArrayQCOM (uint32 ↔ float32, float16 → uint32, uint32 → float16: the same bytes,
/// element 0 of a pair in the low half) and OpExtractSubArrayQCOM (a constant start, and one that
/// differs between invocations), each invocation on its own array.
fn arrays(sg: u32) -> Vec<Case> {
    let mut out = Vec::new();
    for (from, from_len, to, to_len) in [
        (Comp::U32, 8, Comp::F32, 8),
        (Comp::F16, 16, Comp::U32, 8),
        (Comp::U32, 8, Comp::F16, 16),
    ] {
        let values: Vec<f64> = (0..(sg * from_len) as usize)
            .map(|i| match from {
                // Words whose bits are finite floats of both widths.
                Comp::U32 => f64::from(0x3c00_4000u32 + ((i as u32 * 0x0001_0003) & 0x03ff_03ff)),
                _ => load_value(from, i, 3),
            })
            .collect();
        let input = pack(from, &values);
        let mut m = new_module(sg);
        let (inb, pin) = m.buffer(0, from);
        let (outb, pout) = m.buffer(1, to);
        let dst = array_type(&mut m, to, to_len);
        let mut body = load_line(&mut m, from, (&inb, &pin), from_len);
        writeln!(body, "%y = OpBitCastArrayQCOM {dst} %arr").unwrap();
        body.push_str(&store_line(&mut m, to, "%y", (&outb, &pout), to_len, None));
        out.push(Case::single(
            format!(
                "qcom/bitcast/{}[{from_len}]-to-{}[{to_len}]",
                from.name(),
                to.name()
            ),
            "qcom",
            m.finish(&body),
            input.clone(),
            to,
            input,
            Compare::Exact,
            to_len,
        ));
    }
    for varying in [false, true] {
        let t = Comp::F32;
        let values: Vec<f64> = (0..(sg * 16) as usize)
            .map(|i| load_value(t, i, 4))
            .collect();
        let mut m = new_module(sg);
        let (inb, pin) = m.buffer(0, t);
        let (outb, pout) = m.buffer(1, t);
        let dst = array_type(&mut m, t, 8);
        let mut body = load_line(&mut m, t, (&inb, &pin), 16);
        if varying {
            // Start 0 for even invocations, 8 for odd ones (a multiple of the result length).
            let (one, eight) = (m.u32(1), m.u32(8));
            writeln!(
                body,
                "%odd = OpBitwiseAnd %uint %lid {one}\n%start = OpIMul %uint %odd {eight}\n\
                 %y = OpExtractSubArrayQCOM {dst} %arr %start"
            )
            .unwrap();
        } else {
            let eight = m.u32(8);
            writeln!(body, "%y = OpExtractSubArrayQCOM {dst} %arr {eight}").unwrap();
        }
        body.push_str(&store_line(&mut m, t, "%y", (&outb, &pout), 8, None));
        let expected: Vec<f64> = (0..sg as usize)
            .flat_map(|i| {
                let start = if varying { (i % 2) * 8 } else { 8 };
                values[i * 16 + start..i * 16 + start + 8].to_vec()
            })
            .collect();
        out.push(Case::single(
            format!(
                "qcom/sub-array/float32[16]-to-[8]/{}",
                if varying {
                    "start-per-invocation"
                } else {
                    "start-8"
                }
            ),
            "qcom",
            m.finish(&body),
            pack(t, &values),
            t,
            pack(t, &expected),
            Compare::Exact,
            8,
        ));
    }
    out
}
