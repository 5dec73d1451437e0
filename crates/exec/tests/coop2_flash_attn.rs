//! flash_attn_f32_f16_cm2 from the corpus on a small attention problem (one head, one batch,
//! no mask, no sinks) vs coopmat_ggml's f64 softmax(QK^T·scale)V reference. The dispatch
//! (bindings, spec constants, push constants) follows coopmat_ggml::flash_attn's facts.
//! Skips with a notice when the corpus is absent.

use coopmat_exec::{EngineOptions, Pipeline, Resources, SpecConstants};
use coopmat_ggml::f16::{f16_to_f32, f32_to_f16};
use coopmat_ggml::flash_attn::{FaPushConstants, FlashAttnParams, fa_groups, flash_attn};

#[test]
fn flash_attn_f32_f16_cm2_small() {
    // P is rounded to f16 before the PV product (2^-11 relative per weight, so <= 4.9e-4
    // absolute as the weights sum to 1 and |V| <= 1), softmax and accumulation in f32.
    flash_attn_small("flash_attn_f32_f16_cm2", 1e-3);
}

#[test]
fn flash_attn_f32_f16_f16acc_cm2_small() {
    // O accumulated in f16 over KV = 64 terms: |error| <= 64 · 2^-11 · Σ|p·v| <= 3.2e-2 (the
    // classic n·u bound; every partial sum is at most 1 in magnitude).
    flash_attn_small("flash_attn_f32_f16_f16acc_cm2", 3.2e-2);
}

fn flash_attn_small(name: &str, tol: f64) {
    let Some(dir) = coopmat_testkit::corpus_dir() else {
        eprintln!("NOTICE: corpus absent; skipping flash_attn_f32_f16_cm2_small");
        return;
    };
    let Ok(bytes) = std::fs::read(dir.join(format!("{name}.spv"))) else {
        eprintln!("NOTICE: {name}.spv absent; skipping");
        return;
    };
    let module = coopmat_spirv::Module::from_bytes(&bytes).unwrap();
    let (hs, nq, nkv, br, bc, wg) = (64usize, 16usize, 64usize, 16u32, 32u32, 128u32);
    let mut st = 0x9e37_79b9u32;
    let mut rnd = move || {
        st ^= st << 13;
        st ^= st >> 17;
        st ^= st << 5;
        (st >> 8) as f32 / (1 << 24) as f32 * 2.0 - 1.0
    };
    let q: Vec<f32> = (0..nq * hs).map(|_| rnd()).collect();
    let k: Vec<u16> = (0..nkv * hs).map(|_| f32_to_f16(rnd())).collect();
    let v: Vec<u16> = (0..nkv * hs).map(|_| f32_to_f16(rnd())).collect();
    let scale = 1.0 / (hs as f64).sqrt();
    let p = FlashAttnParams {
        hsk: hs,
        hsv: hs,
        n_q: nq,
        n_kv: nkv,
        heads: 1,
        kv_heads: 1,
        batch: 1,
        scale,
        max_bias: 0.0,
        logit_softcap: 0.0,
    };
    let f64v = |x: &[u16]| x.iter().map(|&h| f16_to_f32(h) as f64).collect::<Vec<_>>();
    let reference = flash_attn(
        &p,
        &q.iter().map(|&x| x as f64).collect::<Vec<_>>(),
        &f64v(&k),
        &f64v(&v),
        None,
        None,
    )
    .unwrap();
    let mut spec = SpecConstants::new();
    for (id, val) in [
        (0, wg),
        (1, br),
        (2, bc),
        (3, hs as u32),
        (4, hs as u32),
        (5, 1),
        (6, 16),
        (7, 1),
        (8, 32),
        (9, 0),
        (10, 0),
        (11, 0),
        (12, 1),
        (13, 1),
        (14, 2),
        (15, 2),
    ] {
        spec.insert(id, val as u64);
    }
    let mut pc = FaPushConstants::default();
    // N, KV, ne1 (= heads: O is [HSV, H, N, B]), ne2 (= N), ne3, neq2, neq3, nek2, nek3, nev2, nev3, nem1, nem2, nem3,
    // nb01 (Q row stride, elements), nb02, nb03 (bytes), nb11, nb12, nb13, nb21, nb22, nb23.
    let (n32, kv32, h32) = (nq as u32, nkv as u32, hs as u32);
    pc.u = [
        n32,
        kv32,
        1,
        n32,
        1,
        1,
        1,
        1,
        1,
        1,
        1,
        0,
        0,
        0,
        h32,
        h32 * n32 * 4,
        h32 * n32 * 4,
        h32,
        h32 * kv32 * 2,
        h32 * kv32 * 2,
        h32,
        h32 * kv32 * 2,
        h32 * kv32 * 2,
    ];
    pc.scale = scale as f32;
    pc.max_bias = 0.0;
    pc.logit_softcap = 0.0;
    pc.m0 = 1.0;
    pc.m1 = 1.0;
    pc.gqa_ratio = 1;
    pc.split_kv = kv32;
    pc.k_num = 1;
    let mut res = Resources::default();
    let bytes16 = |x: &[u16]| x.iter().flat_map(|h| h.to_le_bytes()).collect::<Vec<u8>>();
    res.buffers
        .insert((0, 0), q.iter().flat_map(|x| x.to_le_bytes()).collect());
    res.buffers.insert((0, 1), bytes16(&k));
    res.buffers.insert((0, 2), bytes16(&v));
    res.buffers.insert((0, 3), vec![0; 4096]);
    res.buffers.insert((0, 4), vec![0; 64]);
    res.buffers.insert((0, 5), vec![0; nq * hs * 4]);
    res.buffers.insert((0, 6), vec![0; 4096]);
    res.buffers.insert((0, 7), vec![0; 4096]);
    res.push_constants = pc.to_bytes();
    // Observed uniformity checks the divergence analysis on the way (crates/analysis).
    let opts = EngineOptions {
        threads: 1,
        observe_uniformity: true,
        ..Default::default()
    };
    let pipe = Pipeline::compile(&module, "", &spec, &opts).unwrap();
    for b in pipe.bindings() {
        let buf = res.buffers.entry((b.set, b.binding)).or_default();
        if buf.len() < b.min_size {
            buf.resize(b.min_size, 0);
        }
    }
    let inputs = res.clone();
    pipe.dispatch(&mut res, fa_groups(n32, br, 1, 1, 1, 1))
        .unwrap();
    // Without observing, the engine folds one-op combine functions itself instead of calling
    // them (Func::as_fold): the same bits.
    let mut folded = inputs;
    let fast = Pipeline::compile(
        &module,
        "",
        &spec,
        &EngineOptions {
            threads: 1,
            ..Default::default()
        },
    )
    .unwrap();
    fast.dispatch(&mut folded, fa_groups(n32, br, 1, 1, 1, 1))
        .unwrap();
    assert_eq!(
        folded.buffers, res.buffers,
        "{name}: folded combine functions"
    );
    let c = coopmat_analysis::Analysis::run(&module).check_observed(&pipe.observed_uniformity());
    eprintln!(
        "{name}: {} values observed, {} violations, {} of {} observed-uniform values called divergent",
        c.values,
        c.violations.len(),
        c.called_divergent,
        c.observed_uniform
    );
    assert!(
        c.violations.is_empty(),
        "{name}: divergence analysis unsound for {:?}",
        c.violations
    );
    let out: Vec<f64> = res.buffers[&(0, 5)]
        .chunks(4)
        .take(nq * hs)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
        .collect();
    let mut worst = 0f64;
    let mut at = 0;
    for (i, (o, r)) in out.iter().zip(&reference).enumerate() {
        if (o - r).abs() > worst {
            worst = (o - r).abs();
            at = i;
        }
    }
    eprintln!(
        "worst at {at} (row {}, col {}): {} vs {}",
        at / hs,
        at % hs,
        out[at],
        reference[at]
    );
    // Outputs are convex combinations of V values in [-1, 1]; the tolerance is the caller's.
    eprintln!(
        "{name}: max abs error {worst:.3e} (tolerance {tol:e}); out[0..4] {:?} ref {:?}",
        &out[..4],
        &reference[..4]
    );
    assert!(worst <= tol, "{name}: max abs error {worst:e}");
}
