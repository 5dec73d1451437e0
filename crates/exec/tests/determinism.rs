//! Divergent SIMT kernels give identical output whatever the number of worker threads.

mod common;
use common::*;
use coopmat_exec::{EngineOptions, Pipeline, Resources};

#[test]
fn hundred_seeds_same_output_with_one_and_two_threads() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 96) in;
layout(std430, binding = 0) buffer B { uint data[]; };
layout(std430, binding = 1) buffer O { uint outv[]; };
shared uint sh[96];
shared uint counter;
void main() {
    uint l = gl_LocalInvocationID.x;
    uint g = gl_GlobalInvocationID.x;
    uint x = data[g];
    if (l == 0u) counter = 0u;
    barrier();
    uint acc = x;
    for (uint k = 0u; k < (x & 15u); k++) {
        if (((acc >> k) & 3u) == 1u) continue;
        acc = acc * 1664525u + 1013904223u;
        if ((acc & 0x300u) == 0x100u) break;
        if ((acc & 7u) == 3u) acc += subgroupAdd(k);
    }
    uint slot = 0u;
    if ((x & 1u) == 1u) {
        slot = atomicAdd(counter, 1u);
        acc ^= subgroupBallot(true).x;
    }
    sh[l] = acc;
    barrier();
    outv[g * 2u] = sh[(l * 7u) % 96u] + subgroupExclusiveAdd(acc & 0xffu);
    outv[g * 2u + 1u] = slot;
}"#,
    ) else {
        return;
    };
    let p1 = Pipeline::compile(
        &m,
        "main",
        &Default::default(),
        &EngineOptions {
            threads: 1,
            ..Default::default()
        },
    )
    .unwrap();
    let p2 = Pipeline::compile(
        &m,
        "main",
        &Default::default(),
        &EngineOptions {
            threads: 2,
            ..Default::default()
        },
    )
    .unwrap();
    let groups = 12u32;
    let n = groups as usize * 96;
    for seed in 1..=100u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let data: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
        let mk = || {
            let mut r = Resources::default();
            r.buffers.insert((0, 0), bytes_u32(&data));
            r.buffers.insert((0, 1), vec![0; 8 * n]);
            r
        };
        let (mut r1, mut r2) = (mk(), mk());
        p1.dispatch(&mut r1, [groups, 1, 1]).unwrap();
        p2.dispatch(&mut r2, [groups, 1, 1]).unwrap();
        assert_eq!(r1.buffers[&(0, 1)], r2.buffers[&(0, 1)], "seed {seed}");
        // The per-workgroup atomic slots are a permutation of 0..odd-count (lanes run in order).
        let out = u32s(&r1.buffers[&(0, 1)]);
        for wg in 0..groups as usize {
            let odd: Vec<usize> = (0..96).filter(|&l| data[wg * 96 + l] & 1 == 1).collect();
            for (k, &l) in odd.iter().enumerate() {
                assert_eq!(out[(wg * 96 + l) * 2 + 1], k as u32);
            }
        }
    }
}

/// Small workgroups without shared memory or barriers run several to a batch
/// (`EngineOptions::pack_workgroups`): divergent loops, early returns, subgroup operations,
/// per-workgroup atomics and every built-in give the same buffers as one workgroup per batch,
/// with a partly filled last batch, one and two threads, and subgroup sizes 8 and 32.
#[test]
fn packed_workgroups_match_one_workgroup_per_batch() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 16, local_size_y = 2) in;
layout(std430, binding = 0) buffer B { uint data[]; };
layout(std430, binding = 1) buffer O { uint outv[]; };
layout(std430, binding = 2) buffer C { uint counters[]; };
void main() {
    uint g = gl_WorkGroupID.x * 32u + gl_LocalInvocationIndex;
    uint x = data[g % 1024u];
    uint acc = x ^ gl_WorkGroupID.x * 0x9e3779b9u;
    if ((x & 31u) == 7u) {
        outv[g * 4u] = 0xdeadu;
        return;
    }
    for (uint k = 0u; k < (x & 15u); k++) {
        if (((acc >> k) & 3u) == 1u) continue;
        acc = acc * 1664525u + 1013904223u;
        if ((acc & 0x300u) == 0x100u) break;
        if ((acc & 7u) == 3u) acc += subgroupAdd(k);
    }
    uint slot = atomicAdd(counters[gl_WorkGroupID.x], 1u + (acc & 1u));
    if (subgroupElect()) acc += subgroupBallot((x & 2u) != 0u).x;
    outv[g * 4u] = acc + subgroupExclusiveAdd(acc & 0xffu);
    outv[g * 4u + 1u] = slot;
    outv[g * 4u + 2u] = gl_LocalInvocationIndex | gl_SubgroupID << 8 | gl_NumSubgroups << 16
        | gl_SubgroupInvocationID << 24;
    outv[g * 4u + 3u] = subgroupBroadcastFirst(gl_WorkGroupID.x) ^ gl_LocalInvocationID.y << 20;
}"#,
    ) else {
        return;
    };
    let groups = 37u32;
    let mut rng = Rng(7);
    let data: Vec<u32> = (0..1024).map(|_| rng.next() as u32).collect();
    let run_with = |pack: bool, threads: usize, sg: u32| {
        let opts = EngineOptions {
            threads,
            subgroup_size: sg,
            pack_workgroups: pack,
            ..Default::default()
        };
        let p = Pipeline::compile(&m, "main", &Default::default(), &opts).unwrap();
        let mut res = Resources::default();
        res.buffers.insert((0, 0), bytes_u32(&data));
        res.buffers
            .insert((0, 1), vec![0; 16 * 32 * groups as usize]);
        res.buffers.insert((0, 2), vec![0; 4 * groups as usize]);
        p.dispatch(&mut res, [groups, 1, 1]).unwrap();
        (p.workgroups_per_batch(), res.buffers)
    };
    for sg in [8, 32] {
        let (one, reference) = run_with(false, 1, sg);
        assert_eq!(one, 1);
        for threads in [1, 2] {
            let (pack, got) = run_with(true, threads, sg);
            assert!(pack > 1, "32-invocation workgroups are packed (sg {sg})");
            for (k, v) in &reference {
                assert!(
                    got[k] == *v,
                    "binding {k:?} differs (subgroup size {sg}, {threads} threads, {pack} per batch)"
                );
            }
        }
    }
    // A fault in a packed batch names the faulting invocation's own workgroup: here one of
    // 5..8 (which of them faults first depends on the early returns; run alone, workgroup 5
    // would).
    let opts = EngineOptions::default();
    let p = Pipeline::compile(&m, "main", &Default::default(), &opts).unwrap();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), bytes_u32(&data));
    // Room for the outputs of workgroups 0..5 only: workgroup 5's first store is out of bounds.
    res.buffers.insert((0, 1), vec![0; 16 * 32 * 5]);
    res.buffers.insert((0, 2), vec![0; 4 * groups as usize]);
    let e = p.dispatch(&mut res, [groups, 1, 1]).unwrap_err();
    assert!(
        [
            "workgroup (5, 0, 0)",
            "workgroup (6, 0, 0)",
            "workgroup (7, 0, 0)"
        ]
        .iter()
        .any(|w| e.place.contains(w))
            && e.place.contains("local invocation"),
        "{e}"
    );
}

/// A fault in some workgroups stops the dispatch with an error from the worker that met it, with
/// one thread and with two (workers take chunks of workgroups from a shared counter): the error
/// names a workgroup that faults, and no other worker hangs or panics.
#[test]
fn a_fault_in_late_workgroups_is_reported_with_one_and_two_threads() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer O { uint outv[]; };
void main() {
    uint g = gl_WorkGroupID.x;
    // Workgroups 37 and later write past the end of the buffer (37 · 32 words long).
    outv[gl_GlobalInvocationID.x] = g;
}"#,
    ) else {
        return;
    };
    for threads in [1, 2] {
        let p = Pipeline::compile(
            &m,
            "main",
            &Default::default(),
            &EngineOptions {
                threads,
                ..Default::default()
            },
        )
        .unwrap();
        let mut r = Resources::default();
        r.buffers.insert((0, 0), vec![0xff; 37 * 32 * 4]);
        let e = p.dispatch(&mut r, [64, 1, 1]).unwrap_err().to_string();
        eprintln!("{threads} threads: {e}");
        let wg: u32 = e
            .split("workgroup (")
            .nth(1)
            .and_then(|t| t.split(',').next())
            .and_then(|x| x.trim().parse().ok())
            .unwrap_or_else(|| panic!("{threads} threads: no workgroup in {e:?}"));
        assert!(
            wg >= 37,
            "{threads} threads: workgroup {wg} does not fault: {e}"
        );
        if threads == 1 {
            // In order, the first fault is met first.
            assert_eq!(wg, 37, "one thread meets the first fault first: {e}");
        }
    }
}

/// A pipeline dispatched again builds its batches on the storage the last dispatch left
/// (`DispatchStats::batches_reused`) and gives, bit for bit, what a freshly compiled pipeline
/// gives on the same input: the KHR GEMM (shared memory, matrix phis that trade storage, zero
/// constant accumulators) with one and two threads, and a PerElementOp whose function runs in a
/// sub-batch; inputs alternate, so a register or arena word left from the other input would
/// show.
#[test]
fn dispatches_on_reused_batch_storage_equal_fresh_pipelines() {
    let src =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/bench/gemm.comp")).unwrap();
    let Some(gemm) = glsl_opt(&src, true) else {
        return;
    };
    let n = 128usize;
    let spec: coopmat_exec::SpecConstants = [(0u32, n as u64)].into_iter().collect();
    let input = |seed: u64| {
        let mut rng = Rng(seed);
        let mut half = |len: usize| -> Vec<u8> {
            (0..len)
                .flat_map(|_| {
                    half::f16::from_f32((rng.next() % 2001) as f32 / 1000.0 - 1.0).to_le_bytes()
                })
                .collect()
        };
        (half(n * n), half(n * n))
    };
    let run_gemm = |p: &Pipeline, (a, b): &(Vec<u8>, Vec<u8>)| {
        let mut res = Resources::default();
        res.buffers.insert((0, 0), a.clone());
        res.buffers.insert((0, 1), b.clone());
        res.buffers.insert((0, 2), vec![0xff; 4 * n * n]);
        let st = p.dispatch(&mut res, [1, 1, 1]).unwrap();
        (res.buffers.remove(&(0, 2)).unwrap(), st.batches_reused)
    };
    let inputs = [input(5), input(6)];
    for threads in [1, 2] {
        let opts = EngineOptions {
            threads,
            ..Default::default()
        };
        let fresh = |i: &(Vec<u8>, Vec<u8>)| {
            run_gemm(&Pipeline::compile(&gemm, "main", &spec, &opts).unwrap(), i).0
        };
        let want = [fresh(&inputs[0]), fresh(&inputs[1])];
        let p = Pipeline::compile(&gemm, "main", &spec, &opts).unwrap();
        for round in 0..4 {
            let (got, reused) = run_gemm(&p, &inputs[round % 2]);
            assert!(
                got == want[round % 2],
                "GEMM, {threads} threads, dispatch {round}"
            );
            assert_eq!(
                reused > 0,
                round > 0,
                "GEMM, {threads} threads, dispatch {round}: {reused}"
            );
        }
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/coop2/per_element_matrix_operand.comp"
    );
    let Some(spv) = coopmat_testkit::glslang(std::path::Path::new(path), &[]) else {
        return;
    };
    let m = coopmat_spirv::Module::from_bytes(&spv).unwrap();
    let run_pe = |p: &Pipeline, seed: u32| {
        let x: Vec<u8> = (0..512u32)
            .flat_map(|i| ((i * seed % 97) as f32 * 0.25 - 3.0).to_le_bytes())
            .collect();
        let mut res = Resources::default();
        res.buffers.insert((0, 0), x);
        res.buffers.insert((0, 1), vec![0xff; 1024]);
        let st = p.dispatch(&mut res, [1, 1, 1]).unwrap();
        (res.buffers.remove(&(0, 1)).unwrap(), st.batches_reused)
    };
    let opts = EngineOptions::default();
    let fresh = |seed| {
        run_pe(
            &Pipeline::compile(&m, "main", &Default::default(), &opts).unwrap(),
            seed,
        )
        .0
    };
    let want = [fresh(3), fresh(7)];
    let p = Pipeline::compile(&m, "main", &Default::default(), &opts).unwrap();
    for round in 0..4 {
        let (got, reused) = run_pe(&p, [3, 7][round % 2]);
        assert!(got == want[round % 2], "PerElementOp, dispatch {round}");
        // The batch and the sub-batch of the function calls, from the second dispatch on.
        assert_eq!(
            reused,
            if round > 0 { 2 } else { 0 },
            "PerElementOp, dispatch {round}"
        );
    }
}
