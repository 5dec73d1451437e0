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

/// Dispatches `groups` 32-invocation workgroups of `m` over `buffers` one workgroup a batch
/// (`check` sees those buffers first, with the subgroup size) and packed, with one and two
/// threads, for subgroup sizes 8 and 32: the packed runs must pack and give the same buffers.
fn packed_equals_alone(
    m: &coopmat_spirv::Module,
    buffers: &[((u32, u32), Vec<u8>)],
    groups: u32,
    check: impl Fn(u32, &std::collections::BTreeMap<(u32, u32), Vec<u8>>),
) {
    let run_with = |pack: bool, threads: usize, sg: u32| {
        let opts = EngineOptions {
            threads,
            subgroup_size: sg,
            pack_workgroups: pack,
            ..Default::default()
        };
        let p = Pipeline::compile(m, "main", &Default::default(), &opts).unwrap();
        let mut res = Resources::default();
        res.buffers.extend(buffers.iter().cloned());
        p.dispatch(&mut res, [groups, 1, 1]).unwrap();
        (p.workgroups_per_batch(), res.buffers)
    };
    for sg in [8, 32] {
        let (one, reference) = run_with(false, 1, sg);
        assert_eq!(one, 1);
        check(sg, &reference);
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
    let buffers = [
        ((0, 0), bytes_u32(&data)),
        ((0, 1), vec![0; 16 * 32 * groups as usize]),
        ((0, 2), vec![0; 4 * groups as usize]),
    ];
    packed_equals_alone(&m, &buffers, groups, |_, _| {});
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

/// Small workgroups with Workgroup variables and barriers run several to a batch too, each
/// with its own copy of the variables: tree reductions in shared memory, a barrier inside a
/// branch taken by whole workgroups (some workgroups skip it), shared atomics, and a shared
/// element at a constant index (its address is the same in every invocation, yet names each
/// workgroup's own copy) give the same buffers as one workgroup per batch, with a partly
/// filled last batch, one and two threads, and subgroup sizes 8 and 32. A barrier that only
/// part of a workgroup reaches is still an error in a packed batch.
#[test]
fn packed_workgroups_with_shared_memory_match_one_workgroup_per_batch() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B { uint data[]; };
layout(std430, binding = 1) buffer O { uint outv[]; };
shared uint tree[32];
shared uint counter;
shared uint slots[8];
void main() {
    uint tid = gl_LocalInvocationIndex;
    uint wg = gl_WorkGroupID.x;
    uint x = data[(wg * 32u + tid) % 1024u];
    if (tid == 0u) { counter = 0u; slots[5] = wg * 7u + 1u; }
    tree[tid] = x;
    barrier();
    for (uint s = 16u; s > 0u; s >>= 1) {
        if (tid < s) tree[tid] = max(tree[tid], tree[tid + s]);
        barrier();
    }
    uint top = tree[0];
    uint order = atomicAdd(counter, 1u + (x & 1u));
    // Whole workgroups take this branch or skip it, barrier and all.
    if ((top & 3u) != 0u) {
        tree[tid] = x ^ top;
        barrier();
        top += tree[(tid + 1u) & 31u];
    }
    barrier();
    outv[wg * 96u + tid] = top;
    outv[wg * 96u + 32u + tid] = slots[5] + counter;
    outv[wg * 96u + 64u + tid] = order;
}"#,
    ) else {
        return;
    };
    let groups = 37u32;
    let mut rng = Rng(11);
    let data: Vec<u32> = (0..1024).map(|_| rng.next() as u32).collect();
    let buffers = [
        ((0, 0), bytes_u32(&data)),
        ((0, 1), vec![0; 4 * 96 * groups as usize]),
    ];
    // The reference itself: each workgroup's maximum, and its own shared element.
    packed_equals_alone(&m, &buffers, groups, |sg, reference| {
        let out = u32s(&reference[&(0, 1)]);
        for wg in 0..groups as usize {
            let x = |t: usize| data[(wg * 32 + t) % 1024];
            let max = (0..32).map(x).max().unwrap();
            let top = if max & 3 != 0 {
                max.wrapping_add(x(1) ^ max)
            } else {
                max
            };
            assert_eq!(out[wg * 96], top, "workgroup {wg}'s maximum (sg {sg})");
            let sum: u32 = (0..32).map(|t| 1 + (x(t) & 1)).sum();
            assert_eq!(
                out[wg * 96 + 32],
                wg as u32 * 7 + 1 + sum,
                "workgroup {wg} (sg {sg})"
            );
        }
    });
    let Some(divergent) = glsl(
        r#"#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer O { uint outv[]; };
shared uint s[32];
void main() {
    uint tid = gl_LocalInvocationIndex;
    s[tid] = tid;
    // Workgroup 3 sends half its invocations to a barrier.
    if (gl_WorkGroupID.x != 3u || tid < 16u) barrier();
    outv[gl_GlobalInvocationID.x] = s[31u - tid];
}"#,
    ) else {
        return;
    };
    let p = Pipeline::compile(
        &divergent,
        "main",
        &Default::default(),
        &EngineOptions::default(),
    )
    .unwrap();
    assert!(p.workgroups_per_batch() > 1);
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 4 * 32 * 8]);
    let e = p.dispatch(&mut res, [8, 1, 1]).unwrap_err();
    assert!(
        e.to_string().contains("divergent control flow") && e.place.contains("workgroup (3, 0, 0)"),
        "{e}"
    );
}

/// The built-in inputs of a three-dimensional workgroup whose size is no multiple of the
/// subgroup's, against values computed here: local and global ids, the flat index, the subgroup
/// and the index in it, packed several workgroups to a batch (subgroup size 8: 24 invocations
/// are three subgroups) and one to a batch (subgroup size 16: the last subgroup is partial).
#[test]
fn built_ins_of_three_dimensional_workgroups_match_their_definitions() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 4, local_size_y = 3, local_size_z = 2) in;
layout(std430, binding = 0) buffer O { uint outv[]; };
void main() {
    uint wg = gl_WorkGroupID.x + 3u * (gl_WorkGroupID.y + 2u * gl_WorkGroupID.z);
    uint at = (wg * 24u + gl_LocalInvocationIndex) * 4u;
    uvec3 l = gl_LocalInvocationID, g = gl_GlobalInvocationID;
    outv[at] = l.x | l.y << 8 | l.z << 16;
    outv[at + 1u] = g.x | g.y << 8 | g.z << 16;
    outv[at + 2u] = gl_LocalInvocationIndex;
    outv[at + 3u] = gl_SubgroupID | gl_SubgroupInvocationID << 8 | gl_NumSubgroups << 16;
}"#,
    ) else {
        return;
    };
    for (sg, packed) in [(8u32, true), (16, false)] {
        let opts = EngineOptions {
            subgroup_size: sg,
            ..Default::default()
        };
        let p = Pipeline::compile(&m, "main", &Default::default(), &opts).unwrap();
        assert_eq!(p.workgroups_per_batch() > 1, packed, "subgroup size {sg}");
        let mut res = Resources::default();
        res.buffers.insert((0, 0), vec![0; 4 * 4 * 24 * 12]);
        p.dispatch(&mut res, [3, 2, 2]).unwrap();
        let out = u32s(&res.buffers[&(0, 0)]);
        for (wx, wy, wz) in
            (0..2).flat_map(|z| (0..2).flat_map(move |y| (0..3).map(move |x| (x, y, z))))
        {
            for i in 0..24u32 {
                let (lx, ly, lz) = (i % 4, i / 4 % 3, i / 12);
                let at = ((wx + 3 * (wy + 2 * wz)) * 24 + i) as usize * 4;
                let (gx, gy, gz) = (wx * 4 + lx, wy * 3 + ly, wz * 2 + lz);
                let want = [
                    lx | (ly << 8) | (lz << 16),
                    gx | (gy << 8) | (gz << 16),
                    i,
                    (i / sg) | ((i % sg) << 8) | (24u32.div_ceil(sg) << 16),
                ];
                assert_eq!(
                    out[at..at + 4],
                    want,
                    "workgroup ({wx}, {wy}, {wz}), invocation {i}, subgroup size {sg}"
                );
            }
        }
    }
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
