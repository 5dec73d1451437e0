//! Dispatch facts: the worked examples of GGML-FACTS §4, and the interface of the corpus
//! modules (push-constant block, spec ids, bindings, local size) read from the binaries.

use coopmat_ggml::dispatch::{PUSH_CONSTANT_BYTES, Variant, parse_shader_name};
use coopmat_ggml::flash_attn::{FA_PUSH_CONSTANTS, FlashAttnParams, alibi_slope, flash_attn};
use coopmat_ggml::matmul::{BatchShape, dequantize_matrix, mul_mat, nmse};
use coopmat_ggml::{GgmlType, MatmulParams, cm2_matmul_dispatch, quantize_row};
use coopmat_spirv::binary::parse_bytes;
use coopmat_spirv::grammar::{decoration, execution_mode, op, storage_class};
use std::collections::{BTreeMap, BTreeSet};

#[test]
fn worked_example_q4_0() {
    // GGML-FACTS §4.6.
    let d = cm2_matmul_dispatch("matmul_q4_0_f16_cm2", &MatmulParams::new(96, 40, 256)).unwrap();
    assert_eq!(d.variant, Variant::S);
    assert!(d.aligned);
    let spec: Vec<(u32, u64)> = d
        .spec
        .iter()
        .map(|(a, b)| (*a, *b))
        .filter(|(a, _)| *a <= 5)
        .collect();
    assert_eq!(
        spec,
        vec![(0, 256), (1, 32), (2, 64), (3, 128), (4, 0), (5, 1)]
    );
    assert_eq!(
        d.push_words,
        [
            96, 40, 256, 256, 256, 96, 24576, 10240, 3840, 0, 1, 256, 1, 1, 1, 1, 40
        ]
    );
    assert_eq!(d.push_constants.len(), PUSH_CONSTANT_BYTES);
    assert_eq!(&d.push_constants[24..28], &24576u32.to_le_bytes());
    assert_eq!(d.groups, [3, 1, 1]);
    assert_eq!(d.local_size, [256, 1, 1]);
    // Buffer sizes: A = 96*8 blocks*18 B, B = 40*256 f16, D = 40*96 f32.
    let sizes: Vec<u64> = d.bindings.iter().map(|b| b.min_bytes).collect();
    assert_eq!(sizes, vec![96 * 8 * 18, 40 * 256 * 2, 40 * 96 * 4]);
}

#[test]
fn large_and_unaligned_examples() {
    // §"Verified on hardware": 4096x512x14336 -> l, aligned, groups (32, 2, 1).
    for s in [
        "matmul_q4_0_f16_cm2",
        "matmul_iq4_nl_f16_cm2",
        "matmul_f16_cm2",
    ] {
        let d = cm2_matmul_dispatch(s, &MatmulParams::new(4096, 512, 14336)).unwrap();
        assert_eq!(
            (d.variant, d.aligned, d.groups),
            (Variant::L, true, [32, 2, 1]),
            "{s}"
        );
    }
    // M=200 N=77 K=512: N > 64 -> m; K % 64 == 0 -> aligned.
    let d = cm2_matmul_dispatch("matmul_iq4_nl_f16_cm2", &MatmulParams::new(200, 77, 512)).unwrap();
    assert_eq!((d.variant, d.groups), (Variant::M, [2, 1, 1]));
    // f16 m variant at 256^3: spec {256,128,128,64,0}.
    let mut p = MatmulParams::new(256, 256, 256);
    p.variant = Some(Variant::M);
    let d = cm2_matmul_dispatch("matmul_f16_cm2", &p).unwrap();
    assert_eq!(d.spec[&4], 0);
    assert_eq!(d.tile, [128, 128, 64]);
    // K not a multiple of the align: unaligned; stride_b not a multiple of 8 cannot be aligned.
    let d = cm2_matmul_dispatch("matmul_f16_cm2", &MatmulParams::new(64, 64, 100)).unwrap();
    assert!(!d.aligned);
    let mut p = MatmulParams::new(64, 64, 96);
    p.stride_b = Some(100);
    p.aligned = Some(true);
    assert!(cm2_matmul_dispatch("matmul_f16_cm2", &p).is_err());
    // Merged module: spec 7 and 8.
    let mut p = MatmulParams::new(64, 64, 256);
    p.quant_type = Some(GgmlType::Q6K);
    let d = cm2_matmul_dispatch("matmul_quant_f16_cm2", &p).unwrap();
    assert_eq!((d.spec[&7], d.spec[&8]), (14, 210));
    assert!(cm2_matmul_dispatch("matmul_quant_f16_cm2", &MatmulParams::new(64, 64, 256)).is_err());
    assert!(cm2_matmul_dispatch("matmul_q4_0_f16_cm2", &MatmulParams::new(64, 64, 100)).is_err());
    assert_eq!(
        parse_shader_name("matmul_q4_k_f16_f16acc_cm2").unwrap(),
        (Some(GgmlType::Q4K), true)
    );
    assert!(parse_shader_name("matmul_id_subgroup_q4_k_f16_cm2").is_err());
}

#[test]
fn batch_mapping_and_reference() {
    // ne02 = 2, ne12 = 4: B batches 0,1 use A batch 0; 2,3 use A batch 1.
    let bs = BatchShape {
        ne02: 2,
        ne03: 1,
        ne12: 4,
        ne13: 1,
    };
    assert_eq!(
        (0..4).map(|b| bs.a_batch(b)).collect::<Vec<_>>(),
        vec![0, 0, 1, 1]
    );
    // The reference against a direct triple loop, D[n][m] = Σ A[m][k] B[n][k].
    let (m, n, k) = (3, 2, 4);
    let a: Vec<f64> = (0..m * k).map(|i| i as f64 - 5.0).collect();
    let b: Vec<f64> = (0..n * k).map(|i| (i * i) as f64 * 0.5).collect();
    let d = mul_mat(&a, &b, m, n, k, BatchShape::default()).unwrap();
    // Hand: A row 0 = [-5,-4,-3,-2], B row 0 = [0, .5, 2, 4.5] -> -2 -6 -9 = -17.
    assert_eq!(d[0], -17.0);
    for ni in 0..n {
        for mi in 0..m {
            let mut s = 0.0;
            for ki in 0..k {
                s += a[mi * k + ki] * b[ni * k + ki];
            }
            assert_eq!(d[ni * m + mi], s);
        }
    }
    // Quantized A: dequantize_matrix honours stride_a.
    let x: Vec<f32> = (0..2 * 64).map(|i| (i as f32 * 0.1).sin()).collect();
    let q = quantize_row(GgmlType::Q8_0, &x).unwrap();
    let rows = dequantize_matrix(GgmlType::Q8_0, &q, 2, 32, 64, false).unwrap();
    let full = coopmat_ggml::dequantize_row(GgmlType::Q8_0, &q).unwrap();
    assert_eq!(&rows[..32], &full[..32]);
    assert_eq!(&rows[32..], &full[64..96]);
    assert!(nmse(&[1.0, 2.0], &[1.0, 2.0]) == 0.0);
}

#[test]
fn flash_attn_reference() {
    // One query, two keys: weights softmax(scale*[q.k0, q.k1]) = softmax([0, ln 3]) = [1/4, 3/4].
    let p = FlashAttnParams {
        hsk: 2,
        hsv: 1,
        n_q: 1,
        n_kv: 2,
        heads: 1,
        kv_heads: 1,
        batch: 1,
        scale: 3f64.ln(),
        max_bias: 0.0,
        logit_softcap: 0.0,
    };
    let o = flash_attn(
        &p,
        &[1.0, 0.0],
        &[0.0, 0.0, 1.0, 0.0],
        &[4.0, 8.0],
        None,
        None,
    )
    .unwrap();
    assert!((o[0] - 7.0).abs() < 1e-12);
    // A -inf mask entry removes a key; a sink of ln 1 = 0 adds weight 1 to the denominator only.
    let o = flash_attn(
        &p,
        &[1.0, 0.0],
        &[0.0, 0.0, 1.0, 0.0],
        &[4.0, 8.0],
        Some(&[0.0, f64::NEG_INFINITY]),
        None,
    )
    .unwrap();
    assert!((o[0] - 4.0).abs() < 1e-12);
    let o = flash_attn(
        &p,
        &[1.0, 0.0],
        &[0.0, 0.0, 1.0, 0.0],
        &[4.0, 8.0],
        Some(&[0.0, f64::NEG_INFINITY]),
        Some(&[0.0]),
    )
    .unwrap();
    assert!((o[0] - 2.0).abs() < 1e-12);
    assert_eq!(alibi_slope(0.0, 8, 3), 1.0);
    assert!((alibi_slope(8.0, 8, 0) - 0.5).abs() < 1e-15);
}

// ------------------------------------------------------------------ corpus interface checks

#[derive(Debug, Default)]
struct Iface {
    push_offsets: Vec<u32>,
    push_member_float: Vec<bool>,
    spec_ids: BTreeSet<u32>,
    bindings: BTreeSet<(u32, u32)>,
    local_size_spec0: bool,
}

fn iface(bytes: &[u8]) -> Iface {
    let m = parse_bytes(bytes).expect("corpus module parses");
    let mut deco: BTreeMap<u32, Vec<(u32, u32)>> = BTreeMap::new();
    let mut member_off: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    let mut ptr: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
    let mut structs: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    let mut floats = BTreeSet::new();
    let mut out = Iface::default();
    let mut push_var_type = None;
    let mut local_size_id = None;
    for i in &m.instructions {
        let w = &i.words;
        match i.opcode {
            op::Decorate if w.len() >= 4 => deco.entry(w[1]).or_default().push((w[2], w[3])),
            op::MemberDecorate if w.len() >= 5 && w[3] == decoration::Offset => {
                member_off.insert((w[1], w[2]), w[4]);
            }
            op::TypePointer => {
                ptr.insert(w[1], (w[2], w[3]));
            }
            op::TypeStruct => {
                structs.insert(w[1], w[2..].to_vec());
            }
            op::TypeFloat => {
                floats.insert(w[1]);
            }
            op::Variable if w[3] == storage_class::PushConstant => push_var_type = Some(w[1]),
            op::ExecutionModeId if w[2] == execution_mode::LocalSizeId => {
                local_size_id = Some(w[3])
            }
            _ => {}
        }
    }
    for (id, ds) in &deco {
        let mut set = None;
        let mut binding = None;
        for &(d, v) in ds {
            if d == decoration::SpecId {
                out.spec_ids.insert(v);
                if Some(*id) == local_size_id && v == 0 {
                    out.local_size_spec0 = true;
                }
            }
            if d == decoration::DescriptorSet {
                set = Some(v);
            }
            if d == decoration::Binding {
                binding = Some(v);
            }
        }
        if let (Some(s), Some(b)) = (set, binding) {
            out.bindings.insert((s, b));
        }
    }
    if let Some(pt) = push_var_type {
        let st = ptr[&pt].1;
        let members = &structs[&st];
        for (idx, mt) in members.iter().enumerate() {
            out.push_offsets.push(member_off[&(st, idx as u32)]);
            out.push_member_float.push(floats.contains(mt));
        }
    }
    out
}

#[test]
fn corpus_matmul_interfaces_match_dispatch() {
    let mods = coopmat_testkit::corpus_or_notice("corpus_matmul_interfaces_match_dispatch");
    if mods.is_empty() {
        return;
    }
    let mods: BTreeMap<String, Vec<u8>> = mods.into_iter().collect();
    let names = [
        "matmul_f16_cm2",
        "matmul_f16_f16acc_cm2",
        "matmul_iq4_nl_f16_cm2",
        "matmul_mxfp4_f16_cm2",
        "matmul_q4_k_f16_cm2",
        "matmul_q5_k_f16_cm2",
        "matmul_quant_f16_cm2",
    ];
    for name in names {
        let Some(bytes) = mods.get(name) else {
            panic!("{name} missing from the corpus");
        };
        let f = iface(bytes);
        let offsets: Vec<u32> = (0..17).map(|i| i * 4).collect();
        assert_eq!(f.push_offsets, offsets, "{name}: push-constant offsets");
        assert!(
            f.push_member_float.iter().all(|x| !x),
            "{name}: all push members are u32"
        );
        assert_eq!(
            f.bindings,
            [(0, 0), (0, 1), (0, 2)].into_iter().collect(),
            "{name}: bindings"
        );
        assert!(f.local_size_spec0, "{name}: LocalSizeId uses spec 0");
        let mut p = MatmulParams::new(200, 77, 512);
        if name.contains("quant") {
            p.quant_type = Some(GgmlType::Q4_0);
        }
        let d = cm2_matmul_dispatch(name, &p).unwrap();
        // Every SpecId of the module gets a value, and we set nothing beyond ids 0..=8.
        for id in &f.spec_ids {
            assert!(d.spec.contains_key(id), "{name}: spec id {id} not provided");
        }
        let want: BTreeSet<u32> = if name.contains("quant") {
            (0..=8).collect()
        } else {
            (0..=6).collect()
        };
        assert_eq!(f.spec_ids, want, "{name}: spec ids");
    }
}

#[test]
fn corpus_flash_attn_push_constants() {
    let mods = coopmat_testkit::corpus_or_notice("corpus_flash_attn_push_constants");
    let Some((_, bytes)) = mods.iter().find(|(n, _)| n == "flash_attn_f32_f16_cm2") else {
        return;
    };
    let f = iface(bytes);
    let offsets: Vec<u32> = (0..32).map(|i| i * 4).collect();
    assert_eq!(f.push_offsets, offsets);
    let want: Vec<bool> = FA_PUSH_CONSTANTS.iter().map(|x| x.1).collect();
    assert_eq!(f.push_member_float, want);
    assert_eq!(f.bindings, (0..8).map(|b| (0, b)).collect());
    assert_eq!(f.spec_ids, (0..16).collect());
    assert!(f.local_size_spec0);
}

#[test]
fn corpus_flash_attn_spec_defaults() {
    use coopmat_ggml::flash_attn::FA_SPEC_CONSTANTS;
    let mods = coopmat_testkit::corpus_or_notice("corpus_flash_attn_spec_defaults");
    let Some((_, bytes)) = mods.iter().find(|(n, _)| n == "flash_attn_f32_f16_cm2") else {
        return;
    };
    let m = parse_bytes(bytes).unwrap();
    // SpecId -> (default of each declaration, use count beyond the decoration and definition).
    let mut spec_of: BTreeMap<u32, u32> = BTreeMap::new();
    for i in &m.instructions {
        if i.opcode == op::Decorate && i.words[2] == decoration::SpecId {
            spec_of.insert(i.words[1], i.words[3]);
        }
    }
    let mut defaults: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    let mut used: BTreeMap<u32, bool> = BTreeMap::new();
    for i in &m.instructions {
        if i.opcode == op::SpecConstant
            && let Some(&sid) = spec_of.get(&i.words[2])
        {
            defaults.entry(sid).or_default().push(i.words[3]);
        }
        if i.opcode != op::Decorate && i.result_id.is_none_or(|r| !spec_of.contains_key(&r)) {
            for w in &i.words[1..] {
                if let Some(&sid) = spec_of.get(w) {
                    *used.entry(sid).or_default() = true;
                }
            }
        }
    }
    for s in FA_SPEC_CONSTANTS {
        let d = &defaults[&s.id];
        assert!(d.contains(&s.default), "spec {}: defaults {d:?}", s.id);
        assert_eq!(
            used.get(&s.id).copied().unwrap_or(false),
            s.referenced,
            "spec {} use",
            s.id
        );
    }
}

#[test]
fn flash_attn_workgroups_cover_everything_once() {
    use coopmat_ggml::flash_attn::{FaPushConstants, fa_groups, fa_workgroup};
    for (n, kv, heads, gqa, k_num) in [
        (70, 300, 4, 1, 1),
        (70, 300, 4, 1, 3),
        (1, 256, 8, 4, 1),
        (1, 256, 8, 2, 2),
    ] {
        let (br, bc) = (16, 32);
        let mut pc = FaPushConstants::default();
        pc.u[0] = n;
        pc.u[1] = kv;
        pc.gqa_ratio = gqa;
        pc.k_num = k_num;
        pc.split_kv = if k_num > 1 {
            kv.div_ceil(k_num).div_ceil(bc) * bc
        } else {
            kv
        };
        let g = fa_groups(n, br, heads, 2, gqa, k_num);
        let mut seen = std::collections::BTreeMap::new();
        for x in 0..g[0] {
            for y in 0..g[1] {
                for z in 0..g[2] {
                    let w = fa_workgroup([x, y, z], &pc, bc);
                    for h in w.iq2..w.iq2 + gqa {
                        for j in w.start_j..w.end_j {
                            *seen.entry((w.i, w.gqa_iq1, h, z, j)).or_insert(0) += 1;
                        }
                    }
                }
            }
        }
        let tiles = if gqa > 1 { n } else { n.div_ceil(br) };
        assert_eq!(
            seen.len() as u32,
            tiles * heads * 2 * kv.div_ceil(bc),
            "{n} {kv} {heads} {gqa} {k_num}"
        );
        assert!(seen.values().all(|&c| c == 1));
    }
    assert_eq!(FaPushConstants::default().to_bytes().len(), 128);
}

/// A matrix of 2^32 elements or more has no 32-bit batch stride: an error naming the matrix,
/// not a wrapped push constant (or, in a debug build, an overflow panic).
#[test]
fn batch_strides_past_32_bits_are_errors() {
    let e = cm2_matmul_dispatch("matmul_f16_cm2", &MatmulParams::new(1 << 28, 16, 16))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("A has 4294967296 elements (268435456 rows of 16)"),
        "{e}"
    );
    let e = cm2_matmul_dispatch("matmul_f16_cm2", &MatmulParams::new(16, 1 << 28, 16))
        .unwrap_err()
        .to_string();
    assert!(e.contains("B has 4294967296 elements"), "{e}");
    // Just under: fine.
    cm2_matmul_dispatch("matmul_f16_cm2", &MatmulParams::new((1 << 28) - 1, 16, 16)).unwrap();
}
