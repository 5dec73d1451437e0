//! llama.cpp's cm2 matmul modules (tensor layouts/views, LoadTensorNV with DecodeFunc and
//! DecodeVectorFunc, StoreTensorNV) run as ggml-vulkan dispatches them and match an f64
//! reference computed here from coopmat-ggml's dequantization; every decode policy gives the
//! same bits, `check_decode` finds no disagreement, and `strip_decode_vector` changes nothing.
//! Skips with a notice when the corpus is absent.

use coopmat_exec::{DecodePolicy, EngineOptions, Pipeline, Resources, SpecConstants};
use coopmat_ggml::GgmlType;
use coopmat_ggml::dispatch::{BindingRole, MatmulParams, cm2_matmul_dispatch};
use coopmat_ggml::f16::{f16_to_f32, f32_to_f16};

fn module(name: &str) -> Option<coopmat_spirv::Module> {
    let Some(dir) = coopmat_testkit::corpus_dir() else {
        eprintln!("NOTICE: corpus absent (set COOPMAT_CORPUS_DIR); skipping {name}");
        return None;
    };
    let bytes = std::fs::read(dir.join(format!("{name}.spv"))).ok()?;
    Some(coopmat_spirv::Module::from_bytes(&bytes).expect("corpus module parses"))
}

struct Problem {
    res: Resources,
    groups: [u32; 3],
    spec: SpecConstants,
    d_key: (u32, u32),
    stride_d: usize,
    a: Vec<f64>,
    b: Vec<f64>,
}

/// A deterministic problem: A quantized from uniform values in [-1, 1), B f16.
fn problem(name: &str, m: u32, n: u32, k: u32, seed: u64) -> Problem {
    let d = cm2_matmul_dispatch(name, &MatmulParams::new(m, n, k)).unwrap();
    let (sa, sb, sd) = (
        d.push_words[3] as usize,
        d.push_words[4] as usize,
        d.push_words[5] as usize,
    );
    let padded_n = d.push_words[16] as usize;
    let mut next = coopmat_testkit::xorshift64(seed | 1);
    let mut rnd = move || (next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let (mut ab, mut av) = (Vec::new(), Vec::new());
    for _ in 0..m {
        let row: Vec<f32> = (0..sa).map(|_| rnd()).collect();
        if d.a_type == GgmlType::F16 {
            for (j, &x) in row.iter().enumerate() {
                let h = f32_to_f16(x);
                ab.extend(h.to_le_bytes());
                if j < k {
                    av.push(f16_to_f32(h) as f64);
                }
            }
        } else {
            let q = coopmat_ggml::quantize_row(d.a_type, &row).unwrap();
            let deq = coopmat_ggml::dequantize_row(d.a_type, &q).unwrap();
            av.extend(deq[..k].iter().map(|&x| x as f64));
            ab.extend(q);
        }
    }
    let (mut bb, mut bv) = (Vec::new(), Vec::new());
    for r in 0..padded_n.max(n) {
        for j in 0..sb {
            let h = f32_to_f16(rnd());
            bb.extend(h.to_le_bytes());
            if r < n && j < k {
                bv.push(f16_to_f32(h) as f64);
            }
        }
    }
    let mut res = Resources::default();
    let mut d_key = (0, 0);
    for b in &d.bindings {
        let mut buf = match b.role {
            BindingRole::A => ab.clone(),
            BindingRole::B => bb.clone(),
            BindingRole::D => {
                d_key = (b.set, b.binding);
                Vec::new()
            }
        };
        buf.resize(buf.len().max(b.min_bytes as usize), 0);
        res.buffers.insert((b.set, b.binding), buf);
    }
    res.push_constants = d.push_constants.clone();
    Problem {
        res,
        groups: d.groups,
        spec: d.spec.iter().map(|(&k, &v)| (k, v)).collect(),
        d_key,
        stride_d: sd,
        a: av,
        b: bv,
    }
}

fn run(
    m: &coopmat_spirv::Module,
    p: &Problem,
    policy: DecodePolicy,
    check: bool,
) -> Result<(Vec<u8>, u64), String> {
    let opts = EngineOptions {
        threads: 1,
        decode_policy: policy,
        check_decode: check,
        ..Default::default()
    };
    let pipe = Pipeline::compile(m, "", &p.spec, &opts).map_err(|e| e.to_string())?;
    let mut res = p.res.clone();
    let st = pipe
        .dispatch(&mut res, p.groups)
        .map_err(|e| e.to_string())?;
    Ok((res.buffers[&p.d_key].clone(), st.lane_instructions))
}

/// Max over outputs of |out - ref| / Σ_k |a·b| (the f64 reference computed here).
fn max_rel_error(p: &Problem, out: &[u8], m: usize, n: usize, k: usize) -> f64 {
    let mut worst = 0f64;
    for ni in 0..n {
        for mi in 0..m {
            let (mut r, mut s) = (0f64, 0f64);
            for j in 0..k {
                let x = p.a[mi * k + j] * p.b[ni * k + j];
                r += x;
                s += x.abs();
            }
            let o = (ni * p.stride_d + mi) * 4;
            let v = f32::from_le_bytes(out[o..o + 4].try_into().unwrap()) as f64;
            let e = (v - r).abs() / s.max(f64::MIN_POSITIVE);
            if e.is_nan() || e > worst {
                worst = e;
            }
        }
    }
    worst
}

fn check_shader(name: &str, shapes: &[(u32, u32, u32)]) {
    let Some(module) = module(name) else { return };
    let mut stripped = module.clone();
    coopmat_lower::strip_decode_vector(&mut stripped).unwrap();
    for &(m, n, k) in shapes {
        let p = problem(name, m, n, k, 0x5eed ^ (m as u64) << 20 ^ k as u64);
        let (base, li_scalar) = run(&module, &p, DecodePolicy::Scalar, false).unwrap();
        let err = max_rel_error(&p, &base, m as usize, n as usize, k as usize);
        // A rounded to f16 by the decode (2^-11) unless already f16, f32 accumulation.
        let u = if name == "matmul_f16_cm2" {
            0.0
        } else {
            2f64.powi(-11)
        };
        let tol = u + (k as f64 + 1.0) * 2f64.powi(-24);
        eprintln!("{name} {m}x{n}x{k}: max relative error {err:.3e} (tolerance {tol:.3e})");
        assert!(err <= tol, "{name} {m}x{n}x{k}: {err:e} > {tol:e}");
        for policy in [
            DecodePolicy::Vector,
            DecodePolicy::Mixed,
            DecodePolicy::Random(3),
        ] {
            let (o, li) = run(&module, &p, policy, true).unwrap();
            assert!(
                o == base,
                "{name} {m}x{n}x{k}: {policy:?} differs from scalar"
            );
            // DecodeVectorFunc really ran: with check_decode every vector group adds a vector
            // call and its scalar check, so the lane-instruction count differs from scalar.
            if name != "matmul_f16_cm2" {
                assert_ne!(
                    li, li_scalar,
                    "{name}: {policy:?} made no vector decode call"
                );
            }
        }
        // Vector without checking: the DecodeVectorFunc calls alone (the tile-wide path), the
        // same bits with fewer lane-instructions (one call per V elements).
        let (o, li) = run(&module, &p, DecodePolicy::Vector, false).unwrap();
        assert!(o == base, "{name} {m}x{n}x{k}: unchecked Vector differs");
        if name != "matmul_f16_cm2" {
            assert!(
                li < li_scalar,
                "{name}: {li} lane-instructions, scalar {li_scalar}"
            );
        }
        let (o, _) = run(&stripped, &p, DecodePolicy::Scalar, false).unwrap();
        assert!(o == base, "{name}: strip_decode_vector changed the output");
    }
}

#[test]
fn matmul_f16_cm2() {
    check_shader("matmul_f16_cm2", &[(64, 64, 64), (200, 77, 512)]);
}

#[test]
fn matmul_iq4_nl_f16_cm2() {
    check_shader("matmul_iq4_nl_f16_cm2", &[(64, 64, 256), (200, 77, 512)]);
}

#[test]
fn matmul_mxfp4_f16_cm2() {
    check_shader("matmul_mxfp4_f16_cm2", &[(64, 64, 256), (200, 77, 512)]);
}

#[test]
fn matmul_q4_k_f16_cm2() {
    check_shader("matmul_q4_k_f16_cm2", &[(64, 64, 256), (200, 77, 512)]);
}

/// The divergence analysis (coopmat-analysis) against what the engine observes: no value the
/// analysis calls uniform within a subgroup ever differs between the active invocations of a
/// subgroup while these dispatches run (partial tiles included). Prints the precision: values
/// observed uniform that the analysis calls divergent.
#[test]
fn divergence_analysis_is_sound_on_the_cm2_matmuls() {
    use coopmat_analysis::Analysis;
    for name in [
        "matmul_f16_cm2",
        "matmul_iq4_nl_f16_cm2",
        "matmul_mxfp4_f16_cm2",
        "matmul_q4_k_f16_cm2",
    ] {
        let Some(module) = module(name) else { return };
        let p = problem(name, 200, 77, 512, 7);
        let opts = EngineOptions {
            threads: 1,
            observe_uniformity: true,
            ..Default::default()
        };
        let pipe = Pipeline::compile(&module, "", &p.spec, &opts).unwrap();
        let mut res = p.res.clone();
        pipe.dispatch(&mut res, p.groups).unwrap();
        let c = Analysis::run(&module).check_observed(&pipe.observed_uniformity());
        eprintln!(
            "{name}: {} values observed, {} violations, {} of {} observed-uniform values called divergent",
            c.values,
            c.violations.len(),
            c.called_divergent,
            c.observed_uniform
        );
        assert!(c.values > 100, "{name}: too few values observed");
        assert!(
            c.violations.is_empty(),
            "{name}: unsound for {:?}",
            c.violations
        );
    }
}

/// `EngineOptions::profile_ops` on a module whose tensor loads call a decode function in a
/// sub-batch: the decode function's ops are counted under its own name (the sub-batch times
/// them in the caller's profile; its own would be dropped), the output is the same bits as
/// without profiling, and the sum of the times stays within the dispatch's (one thread).
#[test]
fn op_profile_of_a_decoding_matmul_counts_its_decode_calls_apart() {
    let name = "matmul_q4_k_f16_cm2";
    let Some(m) = module(name) else {
        return;
    };
    let p = problem(name, 64, 64, 512, 5);
    let (plain, _) = run(&m, &p, DecodePolicy::Vector, false).unwrap();
    let opts = EngineOptions {
        threads: 1,
        profile_ops: true,
        ..Default::default()
    };
    let pipe = Pipeline::compile(&m, "", &p.spec, &opts).unwrap();
    let mut res = p.res.clone();
    let st = pipe.dispatch(&mut res, p.groups).unwrap();
    assert_eq!(res.buffers[&p.d_key], plain, "profiling changed the output");
    // The loads run in the entry point's function.
    let load = st.op_times.iter().find(|t| t.op == "CmLoadTensor");
    let entry = load.expect("tensor loads timed").function.clone();
    let decode: Vec<_> = st.op_times.iter().filter(|t| t.function != entry).collect();
    assert!(
        !decode.is_empty(),
        "no decode function ops: {:?}",
        st.op_times
    );
    let decode_time: std::time::Duration = decode.iter().map(|t| t.time).sum();
    let all: std::time::Duration = st.op_times.iter().map(|t| t.time).sum();
    assert!(decode_time > std::time::Duration::ZERO);
    assert!(
        all <= st.elapsed,
        "op times {all:?} > dispatch {:?}",
        st.elapsed
    );
    // Sorted longest first.
    assert!(st.op_times.windows(2).all(|w| w[0].time >= w[1].time));
}
