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
