//! The cooperative-vector family (SPV_NV_cooperative_vector): one `OpCooperativeVectorMatrixMulAddNV`
//! per combination the target lists (input type and interpretation, matrix and bias
//! interpretations, result type), a 16x32 row-major matrix and a bias shared by the subgroup, each
//! invocation its own input vector. The inputs exercise the spec's input conversions: float to
//! integer "round-to-nearest-even and saturating", integer to integer saturating (with the
//! input's signedness from MatrixBSignedComponents), packed inputs bitcast. Matrices and biases
//! are small integers and multiples of 1/2 and 1/4, so every sum is exact in any order and
//! precision; expected values come from the suite's own conversions. Row-major matrices only:
//! the optimal layouts are the device's own (and fp8 matrices exist only in those).

use crate::reference::{bytes, encode};
use crate::spv::ModuleText;
use crate::{Case, Comp, Compare, Output, Target};
use coopmat_spirv::coopvec::ComponentType as Ct;
use std::collections::BTreeMap;

/// Output components (M) and logical input components (K).
const M: u32 = 16;
const K: u32 = 32;

/// One combination of VkCooperativeVectorPropertiesNV: input type, input interpretation, matrix
/// interpretation, bias interpretation, result type.
pub type Combination = [Ct; 5];

/// Every case of the family for the target's combinations.
pub fn coopvec(target: &Target) -> Vec<Case> {
    target
        .coopvec
        .iter()
        .filter_map(|c| case(target.subgroup_size, c))
        .collect()
}

/// The suite's component type of a cooperative-vector type that is also a SPIR-V type.
fn comp(t: Ct) -> Option<Comp> {
    Some(match t {
        Ct::F16 => Comp::F16,
        Ct::F32 => Comp::F32,
        Ct::S8 => Comp::S8,
        Ct::U8 => Comp::U8,
        Ct::S32 => Comp::S32,
        Ct::U32 => Comp::U32,
        _ => return None,
    })
}

/// Input component `k` of invocation `lane`, by input type and interpretation: values that
/// exercise the conversion the pair asks for.
fn input_value(input: Ct, interp: Ct, lane: usize, k: usize) -> f64 {
    let i = lane * K as usize + k;
    match (input, interp) {
        // Ties both ways, just below and above the ends, far out of range.
        (Ct::F32, _) => {
            const EDGES: [f64; 16] = [
                2.5, 3.5, -2.5, -3.5, 0.5, -0.5, 1.5, 126.5, 127.4, 127.6, 200.0, -128.4, -128.6,
                -1000.0, 1e10, -1e10,
            ];
            EDGES
                .get(i)
                .copied()
                .unwrap_or(((i * 37) % 61) as f64 * 0.5 - 15.0)
        }
        (Ct::S32, _) => {
            const EDGES: [f64; 10] = [
                300.0, -300.0, 127.0, 128.0, -128.0, -129.0, 255.0, 256.0, -5.0, 0.0,
            ];
            EDGES
                .get(i)
                .copied()
                .unwrap_or(((i * 29) % 41) as f64 - 20.0)
        }
        (Ct::U8, _) => ((i * 53 + 7) % 256) as f64,
        (Ct::S8, _) => ((i * 53 + 7) % 256) as f64 - 128.0,
        // Packed words: any bits.
        (Ct::U32, _) => ((i as u64 * 2_654_435_761) % 4_294_967_296) as f64,
        // float16: multiples of 1/4 in [-1, 1].
        _ => ((lane * 7 + k * 3) % 9) as f64 * 0.25 - 1.0,
    }
}

/// `v` converted to interpretation `to` as the spec says (integers saturate; floats to
/// integers round to nearest even and saturate).
fn interpret(v: f64, to: Ct, signed_input: bool, input: Ct) -> f64 {
    // An integer input's value under MatrixBSignedComponents.
    let v = match input {
        Ct::S8 | Ct::U8 if !signed_input => v.rem_euclid(256.0),
        Ct::S8 | Ct::U8 => {
            let b = v.rem_euclid(256.0);
            if b >= 128.0 { b - 256.0 } else { b }
        }
        Ct::S32 if !signed_input => v.rem_euclid(4_294_967_296.0),
        _ => v,
    };
    let round = |x: f64| {
        let f = x.floor();
        let d = x - f;
        if d > 0.5 || (d == 0.5 && f % 2.0 != 0.0) {
            f + 1.0
        } else {
            f
        }
    };
    match to {
        Ct::S8 => round(v).clamp(-128.0, 127.0),
        Ct::U8 => round(v).clamp(0.0, 255.0),
        _ => v,
    }
}

/// The case of a combination; None where the suite has none: fp8 matrices, which Vulkan allows
/// only in the optimal layouts (VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10090), whose
/// bytes only the device's vkConvertCooperativeVectorMatrixNV produces (BENCHMARKS.md,
/// "Cooperative vectors in the engine", compares those on the H100).
fn case(sg: u32, c: &Combination) -> Option<Case> {
    let [input, input_interp, matrix_interp, bias_interp, result] = *c;
    if matches!(matrix_interp, Ct::E4M3 | Ct::E5M2) {
        return None;
    }
    let (in_comp, res_comp) = (comp(input)?, comp(result)?);
    let packed = matches!(input_interp, Ct::S8Packed | Ct::U8Packed);
    let in_components = if packed { K / 4 } else { K };
    let signed_input = matches!(input, Ct::S8 | Ct::S32);
    let signed_result = result == Ct::S32;

    // Inputs, matrix and bias, and the products.
    let lanes = sg as usize;
    let mut in_vals = Vec::new();
    let mut interpreted = vec![vec![0f64; K as usize]; lanes];
    for (lane, row) in interpreted.iter_mut().enumerate() {
        if packed {
            for w in 0..in_components as usize {
                let word = input_value(Ct::U32, input_interp, lane, w) as u32;
                in_vals.push(f64::from(word));
                for (b, byte) in word.to_le_bytes().into_iter().enumerate() {
                    row[w * 4 + b] = if input_interp == Ct::S8Packed {
                        f64::from(byte as i8)
                    } else {
                        f64::from(byte)
                    };
                }
            }
        } else {
            for (k, slot) in row.iter_mut().enumerate() {
                let v = input_value(input, input_interp, lane, k);
                // What the buffer holds exactly.
                let held = crate::reference::decode(in_comp, encode(in_comp, v));
                in_vals.push(held);
                *slot = interpret(held, input_interp, signed_input, input);
            }
        }
    }
    let matrix_value = |m: u32, k: u32| -> f64 {
        let x = ((m * 13 + k * 7) % 17) as f64;
        match matrix_interp {
            Ct::S8 => x - 8.0,
            Ct::U8 => x,
            _ => (x % 9.0) * 0.5 - 2.0,
        }
    };
    let matrix_bytes = matrix_interp.bytes();
    let stride = K * matrix_bytes;
    let mut matrix = Vec::new();
    for m in 0..M {
        for k in 0..K {
            let v = matrix_value(m, k);
            let bits = encode(comp(matrix_interp)?, v);
            matrix.extend_from_slice(&bits.to_le_bytes()[..matrix_bytes as usize]);
        }
    }
    let bias_value = |m: u32| match bias_interp {
        Ct::F16 => f64::from(m % 8) * 0.25 - 1.0,
        _ => f64::from(m) * 100.0 - 700.0,
    };
    let bias_comp = comp(bias_interp)?;
    let bias: Vec<u8> = (0..M)
        .flat_map(|m| bytes(bias_comp, encode(bias_comp, bias_value(m))))
        .collect();
    let mut expected = Vec::new();
    for row in &interpreted {
        for m in 0..M {
            let mut acc = bias_value(m);
            for (k, x) in row.iter().enumerate() {
                acc += matrix_value(m, k as u32) * x;
            }
            expected.extend(bytes(res_comp, encode(res_comp, acc)));
        }
    }
    // Inputs as bytes, M results per invocation.
    let input_bytes: Vec<u8> = in_vals
        .iter()
        .flat_map(|&v| bytes(in_comp, encode(in_comp, v)))
        .collect();

    let mut mt = ModuleText::new(sg);
    mt.cap("CooperativeVectorNV");
    mt.ext("SPV_NV_cooperative_vector");
    let (inb, _) = mt.buffer(0, in_comp);
    let (outb, _) = mt.buffer(1, res_comp);
    let (matb, _) = mt.buffer(2, Comp::U32);
    let (biasb, _) = mt.buffer(3, Comp::U32);
    let (tin, tres) = (mt.comp(in_comp), mt.comp(res_comp));
    let (u0, cm, ck, cin) = (mt.u32(0), mt.u32(M), mt.u32(K), mt.u32(in_components));
    let in_stride = mt.u32(in_components * in_comp.bytes());
    let out_stride = mt.u32(M * res_comp.bytes());
    let cstride = mt.u32(stride);
    let interps: Vec<String> = [input_interp, matrix_interp, bias_interp]
        .iter()
        .map(|t| mt.u32(t.raw()))
        .collect();
    let (ni, nr) = (in_comp.name(), res_comp.name());
    mt.raw_decl(
        &format!("%vin_{ni}_{in_components}"),
        &format!("%vin_{ni}_{in_components} = OpTypeCooperativeVectorNV {tin} {cin}"),
    );
    mt.raw_decl(
        &format!("%vres_{nr}"),
        &format!("%vres_{nr} = OpTypeCooperativeVectorNV {tres} {cm}"),
    );
    for name in [ni, nr, "uint32"] {
        mt.raw_decl(
            &format!("%prt_{name}"),
            &format!("%prt_{name} = OpTypePointer StorageBuffer %rt_{name}"),
        );
    }
    mt.raw_decl("%false", "%false = OpConstantFalse %bool");
    let lane = mt.local_index();
    let mut ops = Vec::new();
    if signed_input {
        ops.push("MatrixBSignedComponentsKHR");
    }
    if signed_result {
        ops.push("MatrixResultSignedComponentsKHR");
    }
    let ops = if ops.is_empty() {
        String::new()
    } else {
        format!(" {}", ops.join("|"))
    };
    let body = format!(
        "%lane = OpLoad %uint {lane}\n%inoff = OpIMul %uint %lane {in_stride}\n\
         %outoff = OpIMul %uint %lane {out_stride}\n\
         %pi = OpAccessChain %prt_{ni} {inb} {u0}\n\
         %x = OpCooperativeVectorLoadNV %vin_{ni}_{in_components} %pi %inoff None\n\
         %pm = OpAccessChain %prt_uint32 {matb} {u0}\n%pb = OpAccessChain %prt_uint32 {biasb} {u0}\n\
         %r = OpCooperativeVectorMatrixMulAddNV %vres_{nr} %x {} %pm {u0} {} %pb {u0} {} {cm} {ck} {u0} %false {cstride}{ops}\n\
         %po = OpAccessChain %prt_{nr} {outb} {u0}\nOpCooperativeVectorStoreNV %po %outoff %r None\n",
        interps[0], interps[1], interps[2]
    );
    let name = format!(
        "coopvec/{}-as-{}/{}/{}-bias/{}",
        input.name(),
        input_interp.name(),
        matrix_interp.name(),
        bias_interp.name(),
        result.name()
    );
    Some(Case {
        name,
        family: "coopvec",
        text: mt.finish(&body),
        groups: [1, 1, 1],
        inputs: BTreeMap::from([((0, 0), input_bytes), ((0, 2), matrix), ((0, 3), bias)]),
        outputs: vec![Output {
            binding: (0, 1),
            comp: res_comp,
            expected,
            compare: Compare::Exact,
            row_len: M,
            alternative: None,
        }],
    })
}
