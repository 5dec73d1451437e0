//! Whole-batch fast paths of the executor (contiguous per-lane loads/stores, column ops on
//! plain slices, shifts by a lane-uniform amount), checked against references computed here and
//! against the general per-lane path (partial masks, out-of-bounds lanes).

mod common;
use common::*;
use coopmat_exec::{EngineOptions, Pipeline, Resources};

/// Whether this CPU's MulAdd kernels read f16 tiles where lazy loads leave them: with
/// AVX-512F, or AVX2 with FMA and F16C (the engine's kernel levels).
fn tiles_read_in_place() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::is_x86_feature_detected as has;
        has!("fma") && (has!("avx512f") || (has!("avx2") && has!("f16c")))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Staging copy global → shared → global with lane-consecutive uvec4 addresses, a permuted
/// (non-contiguous) read, and shifts by uniform and per-lane amounts.
#[test]
fn contiguous_staging_and_uniform_shifts() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uvec4 a[]; };
layout(std430, binding = 1) buffer B { uvec4 b[]; };
layout(std430, binding = 2) buffer C { uint c[]; };
layout(push_constant) uniform P { uint sh; };
shared uvec4 s[128];
void main() {
    uint t = gl_LocalInvocationID.x, base = gl_WorkGroupID.x * 128u;
    s[t] = a[base + t];
    s[t + 64u] = a[base + (t ^ 1u) + 64u];
    barrier();
    b[base + t] = s[t] + uvec4(1u);
    b[base + t + 64u] = s[127u - t];
    uint g = gl_GlobalInvocationID.x;
    if (t % 3u != 0u) {
        c[g * 4u] = a[g].x << sh;
        c[g * 4u + 1u] = a[g].y >> 5u;
        c[g * 4u + 2u] = uint(int(a[g].z) >> int(sh + 2u));
        c[g * 4u + 3u] = a[g].w >> (t & 7u);
    }
}"#,
    ) else {
        return;
    };
    let groups = 3u32;
    let n = (groups * 128) as usize;
    let src: Vec<u32> = (0..4 * n as u32)
        .map(|i| i.wrapping_mul(2654435761) ^ 0x8000_0000)
        .collect();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), bytes_u32(&src));
    res.buffers.insert((0, 1), vec![0; 16 * n]);
    res.buffers
        .insert((0, 2), vec![0; 16 * 64 * groups as usize]);
    res.push_constants = 3u32.to_le_bytes().to_vec();
    run(&m, &mut res, [groups, 1, 1], &EngineOptions::default());
    let (b, c) = (u32s(&res.buffers[&(0, 1)]), u32s(&res.buffers[&(0, 2)]));
    let vec4 = |i: usize| &src[4 * i..4 * i + 4];
    for g in 0..groups as usize {
        let base = g * 128;
        let mut s = vec![[0u32; 4]; 128];
        for t in 0..64 {
            s[t].copy_from_slice(vec4(base + t));
            s[t + 64].copy_from_slice(vec4(base + (t ^ 1) + 64));
        }
        for t in 0..64 {
            let want0: Vec<u32> = s[t].iter().map(|x| x.wrapping_add(1)).collect();
            assert_eq!(
                &b[4 * (base + t)..4 * (base + t) + 4],
                &want0[..],
                "b[{}]",
                base + t
            );
            let i = base + t + 64;
            assert_eq!(&b[4 * i..4 * i + 4], &s[127 - t][..], "b[{i}]");
        }
    }
    for gi in 0..(64 * groups) as usize {
        let t = gi % 64;
        let v = vec4(gi);
        let want = if t % 3 == 0 {
            [0; 4]
        } else {
            [
                v[0] << 3,
                v[1] >> 5,
                ((v[2] as i32) >> 5) as u32,
                v[3] >> (t & 7),
            ]
        };
        assert_eq!(&c[4 * gi..4 * gi + 4], &want[..], "c[{gi}]");
    }
}

/// Staging copies fused into one op (`Op::LoadStore`): buffer to Workgroup memory and back, a
/// permuted source, a descending destination (not one run), an overlapping copy within one
/// array (every lane reads before any writes), a loaded value with a second use (not fused),
/// the store's address computed between the load and the store. The same buffers as the
/// reference with the fusion on and off (it is off while uniformity is observed), five ops a
/// lane fewer with it on (eleven with the integer chains it also turns off); a source out of
/// bounds is an error naming the load and the first lane out of bounds, and reads zeros with
/// robust access.
#[test]
fn staging_copies_are_fused() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uvec4 a[]; };
layout(std430, binding = 1) buffer B { uvec4 b[]; };
layout(std430, binding = 2) buffer C { uint c[]; };
layout(push_constant) uniform P { uint off; };
shared uvec4 s[129];
void main() {
    uint t = gl_LocalInvocationID.x, base = gl_WorkGroupID.x * 64u, n = gl_NumWorkGroups.x * 64u;
    s[t] = a[base + (t ^ 3u)];
    s[128u - t] = a[n + base + t + off];
    barrier();
    s[t + 1u] = s[t];
    barrier();
    b[base + t] = s[t + 1u];
    b[n + base + t] = s[128u - t];
    uvec4 v = a[base + t];
    c[base + t] = v.y;
    b[2u * n + base + t] = v;
}"#,
    ) else {
        return;
    };
    let groups = 3usize;
    let n = 64 * groups;
    let src: Vec<u32> = (0..8 * n as u32)
        .map(|i| i.wrapping_mul(2654435761) | 1)
        .collect();
    let vec4 = |i: usize| src.get(4 * i..4 * i + 4).unwrap_or(&[0; 4]).to_vec();
    let inputs = |off: u32| {
        let mut res = Resources::default();
        res.buffers.insert((0, 0), bytes_u32(&src));
        res.buffers.insert((0, 1), vec![0; 16 * 3 * n]);
        res.buffers.insert((0, 2), vec![0; 4 * n]);
        res.push_constants = off.to_le_bytes().to_vec();
        res
    };
    let check = |res: &Resources, off: usize| {
        let (b, c) = (u32s(&res.buffers[&(0, 1)]), u32s(&res.buffers[&(0, 2)]));
        for g in 0..groups {
            for t in 0..64 {
                let i = 64 * g + t;
                assert_eq!(b[4 * i..4 * i + 4], vec4(64 * g + (t ^ 3))[..], "b[{i}]");
                let j = n + i;
                assert_eq!(b[4 * j..4 * j + 4], vec4(n + i + off)[..], "b[{j}]");
                let k = 2 * n + i;
                assert_eq!(b[4 * k..4 * k + 4], vec4(i)[..], "b[{k}]");
                assert_eq!(c[i], src[4 * i + 1], "c[{i}]");
            }
        }
    };
    let observe = EngineOptions {
        observe_uniformity: true,
        ..Default::default()
    };
    let mut fused = inputs(0);
    let on = run(
        &m,
        &mut fused,
        [groups as u32, 1, 1],
        &EngineOptions::default(),
    );
    check(&fused, 0);
    let mut unfused = inputs(0);
    let off = run(&m, &mut unfused, [groups as u32, 1, 1], &observe);
    check(&unfused, 0);
    // Five copies a lane fused; `base + (t ^ 3)` is one integer chain (`Op::IntChain`, also
    // off while observing), and the five access chains indexed by an integer op's result
    // end those ops (`ChainAddress`).
    assert_eq!(
        off.lane_instructions - on.lane_instructions,
        11 * n as u64,
        "five copies, one chain and five access chains a lane fused"
    );
    // Lanes 56.. of the last workgroup read past the end of `a`.
    let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &Default::default())
        .unwrap();
    let e = p
        .dispatch(&mut inputs(8), [groups as u32, 1, 1])
        .unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::OutOfBounds, "{e}");
    assert!(e.place.contains("OpLoad"), "{e}");
    assert!(e.place.contains("local invocation (56, 0, 0)"), "{e}");
    let robust = EngineOptions {
        robust: true,
        ..Default::default()
    };
    let mut res = inputs(8);
    run(&m, &mut res, [groups as u32, 1, 1], &robust);
    check(&res, 8);
}

/// A contiguous store running past the end of its buffer is still an error naming the first
/// lane out of bounds; with `robust` the in-bounds lanes are written.
#[test]
fn contiguous_store_out_of_bounds_names_the_lane() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer B { uvec2 v[]; };
void main() { v[gl_LocalInvocationID.x + 1u] = uvec2(gl_LocalInvocationID.x + 7u, 5u); }"#,
    ) else {
        return;
    };
    let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &Default::default())
        .unwrap();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 8 * 8]);
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::OutOfBounds, "{e}");
    assert!(e.place.contains("local invocation (7, 0, 0)"), "{e}");
    let robust = EngineOptions {
        robust: true,
        ..Default::default()
    };
    let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &robust).unwrap();
    res.buffers.insert((0, 0), vec![0; 8 * 8]);
    p.dispatch(&mut res, [1, 1, 1]).unwrap();
    let mut want = vec![0u32, 0];
    for t in 0..7 {
        want.extend([t + 7, 5]);
    }
    assert_eq!(u32s(&res.buffers[&(0, 0)]), want);
}

/// Loads in runs of consecutive lanes (4 lanes a row) match a reference; a run reaching past
/// the end of the buffer is an error naming the first lane out of bounds.
#[test]
fn run_loads_and_out_of_bounds_run() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer A { uvec4 a[]; };
layout(std430, binding = 1) buffer B { uvec4 b[]; };
layout(push_constant) uniform P { uint rowlen; };
void main() {
    uint t = gl_LocalInvocationID.x;
    b[t] = a[(t / 4u) * rowlen + t % 4u];
}"#,
    ) else {
        return;
    };
    let src: Vec<u32> = (0..4 * 80u32).map(|i| i * 7 + 1).collect();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), bytes_u32(&src));
    res.buffers.insert((0, 1), vec![0; 16 * 32]);
    res.push_constants = 9u32.to_le_bytes().to_vec();
    run(&m, &mut res, [1, 1, 1], &EngineOptions::default());
    let b = u32s(&res.buffers[&(0, 1)]);
    for t in 0..32 {
        let i = (t / 4) * 9 + t % 4;
        assert_eq!(&b[4 * t..4 * t + 4], &src[4 * i..4 * i + 4], "b[{t}]");
    }
    // Row 7 starts at element 7·11 = 77: lanes 31 (element 80) and up are out of bounds.
    res.push_constants = 11u32.to_le_bytes().to_vec();
    let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &Default::default())
        .unwrap();
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::OutOfBounds, "{e}");
    assert!(e.place.contains("local invocation (31, 0, 0)"), "{e}");
}

/// Loop-invariant instructions (a division that is by zero for lanes that skip it, a
/// Workgroup access chain of an inner loop, index arithmetic of a nested loop) moved to the
/// preheaders: results equal to the reference for lanes that run the loop 0 to 4 times, and
/// the same as with the motion off (it is off while uniformity is observed), with fewer
/// lane-instructions.
#[test]
fn loop_invariants_move_to_the_preheader() {
    let Some(m) = glsl_opt(
        r#"#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer O { uint o[]; };
layout(push_constant) uniform P { uint rounds; };
shared uint s[64];
void main() {
    uint t = gl_LocalInvocationID.x;
    s[t] = t * 3u + gl_WorkGroupID.x;
    barrier();
    uint trips = t % 5u;
    uint acc = 0u;
    for (uint i = 0u; i < trips; i++) {
        if (t % 4u != 0u)
            acc += (t + 7u) / (t % 4u);
        acc += i;
    }
    for (uint j = 0u; j < rounds; j++) {
        for (uint i = 0u; i < trips; i++)
            acc += ((j * t + 11u) ^ (t << 2u)) + s[(t + j) % 64u];
    }
    o[gl_GlobalInvocationID.x] = acc;
}"#,
        true,
    ) else {
        return;
    };
    let groups = 2u32;
    let rounds = 3u32;
    let go = |observe: bool| {
        let mut res = Resources::default();
        res.buffers
            .insert((0, 0), vec![0; 4 * 64 * groups as usize]);
        res.push_constants = rounds.to_le_bytes().to_vec();
        let opts = EngineOptions {
            observe_uniformity: observe,
            ..Default::default()
        };
        let st = run(&m, &mut res, [groups, 1, 1], &opts);
        (u32s(&res.buffers[&(0, 0)]), st.lane_instructions)
    };
    let (moved, moved_count) = go(false);
    let (kept, kept_count) = go(true);
    for g in 0..groups {
        for t in 0..64u32 {
            let trips = t % 5;
            let mut acc = 0u32;
            for i in 0..trips {
                if let Some(q) = (t + 7).checked_div(t % 4) {
                    acc = acc.wrapping_add(q);
                }
                acc = acc.wrapping_add(i);
            }
            for j in 0..rounds {
                for _ in 0..trips {
                    let s = ((t + j) % 64) * 3 + g;
                    acc = acc
                        .wrapping_add(j.wrapping_mul(t).wrapping_add(11) ^ (t << 2))
                        .wrapping_add(s);
                }
            }
            assert_eq!(moved[(g * 64 + t) as usize], acc, "group {g} lane {t}");
        }
    }
    assert_eq!(moved, kept);
    assert!(
        moved_count < kept_count,
        "no instruction left the loops ({moved_count} lane-instructions, {kept_count} without the motion)"
    );
}

/// A loop whose body is its continue target (spirv-opt's shape for a loop without branches):
/// the invariant arithmetic of the body leaves the loop. Each extra trip costs the motion's
/// program at most the loop's own work (the accumulation, the counter, the test and branch),
/// six lane-instructions fewer per lane than without it (the invariant chain is seven long);
/// the results are the reference's either way.
#[test]
fn invariants_of_a_body_in_the_continue_target_leave_the_loop() {
    let Some(m) = glsl_opt(
        r#"#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer O { uint o[]; };
layout(push_constant) uniform P { uint rounds; };
void main() {
    uint t = gl_LocalInvocationID.x;
    uint acc = 0u;
    for (uint i = 0u; i < rounds; i++)
        acc += (((t * 7u + 3u) / 5u) ^ (t << 3u)) * 9u + (t % 6u) + i;
    o[t] = acc;
}"#,
        true,
    ) else {
        return;
    };
    let go = |rounds: u32, observe: bool| {
        let mut res = Resources::default();
        res.buffers.insert((0, 0), vec![0; 4 * 64]);
        res.push_constants = rounds.to_le_bytes().to_vec();
        let opts = EngineOptions {
            observe_uniformity: observe,
            ..Default::default()
        };
        let st = run(&m, &mut res, [1, 1, 1], &opts);
        let out = u32s(&res.buffers[&(0, 0)]);
        for t in 0..64u32 {
            let inv = (((t * 7 + 3) / 5) ^ (t << 3)).wrapping_mul(9) + t % 6;
            let want = (0..rounds).fold(0u32, |a, i| a.wrapping_add(inv).wrapping_add(i));
            assert_eq!(out[t as usize], want, "lane {t}, {rounds} rounds");
        }
        st.lane_instructions
    };
    let per_trip = |observe: bool| (go(12, observe) - go(2, observe)) / 10 / 64;
    let (moved, kept) = (per_trip(false), per_trip(true));
    assert!(
        moved + 6 <= kept,
        "a trip costs {moved} lane-instructions per lane with the motion, {kept} without"
    );
}

/// Stores of 1, 2, 4 and 5 words a lane into Workgroup memory in lane order (the staging
/// pattern, written with plain stores into the batch's own memory), read back by other lanes
/// after a barrier: every word where the lane put it, in both workgroups.
#[test]
fn lane_ordered_workgroup_stores_of_one_to_five_words() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 64) in;
struct Five { uint v[5]; };
layout(std430, binding = 0) buffer B { uint b[]; };
shared uint s1[64];
shared uvec2 s2[64];
shared uvec4 s4[64];
shared Five s5[64];
void main() {
    uint t = gl_LocalInvocationID.x;
    uint g = gl_WorkGroupID.x * 1000u + t * 16u;
    s1[t] = g;
    s2[t] = uvec2(g + 1u, g + 2u);
    s4[t] = uvec4(g + 3u, g + 4u, g + 5u, g + 6u);
    Five f;
    for (int k = 0; k < 5; k++) f.v[k] = g + 7u + uint(k);
    s5[t] = f;
    barrier();
    uint u = (t * 29u + 3u) % 64u;
    uint o = (gl_WorkGroupID.x * 64u + t) * 12u;
    b[o] = s1[u];
    b[o + 1u] = s2[u].x; b[o + 2u] = s2[u].y;
    for (int k = 0; k < 4; k++) b[o + 3u + uint(k)] = s4[u][k];
    for (int k = 0; k < 5; k++) b[o + 7u + uint(k)] = s5[u].v[k];
}"#,
    ) else {
        return;
    };
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 4 * 12 * 128]);
    run(&m, &mut res, [2, 1, 1], &EngineOptions::default());
    let b = u32s(&res.buffers[&(0, 0)]);
    for wg in 0..2u32 {
        for t in 0..64u32 {
            let u = (t * 29 + 3) % 64;
            let g = wg * 1000 + u * 16;
            let want: Vec<u32> = (0..12).map(|k| g + k).collect();
            let o = ((wg * 64 + t) * 12) as usize;
            assert_eq!(&b[o..o + 12], &want[..], "group {wg} lane {t}");
        }
    }
}

/// Per-lane loads of 1 to 5 words from scattered addresses (lanes sharing an address among
/// them) of a storage buffer and of Workgroup memory, the one-check gather of every lane's
/// words, equal to the elements the host reads; with one lane out of bounds the load still
/// fails and names that lane.
#[test]
fn scattered_loads_of_one_to_five_words() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 64) in;
struct Five { uint v[5]; };
layout(std430, binding = 0) readonly buffer A {
    uint a1[64]; uvec2 a2[64]; uvec3 a3[64]; uvec4 a4[64]; Five a5[64];
};
layout(std430, binding = 1) buffer B { uint b[]; };
layout(std430, binding = 2) readonly buffer R { uvec2 r[]; };
layout(push_constant) uniform P { uint stride; };
shared uvec4 s4[64];
shared uvec2 s2[64];
void main() {
    uint t = gl_LocalInvocationID.x;
    uint j = (t * 37u + 11u) % 48u;
    s4[t] = a4[t];
    s2[t] = a2[63u - t];
    barrier();
    uint o = t * 20u;
    b[o] = a1[j];
    b[o + 1u] = a2[j].x; b[o + 2u] = a2[j].y;
    uvec3 v3 = a3[j]; b[o + 3u] = v3.x; b[o + 4u] = v3.y; b[o + 5u] = v3.z;
    uvec4 v4 = a4[j]; b[o + 6u] = v4.x; b[o + 7u] = v4.y; b[o + 8u] = v4.z; b[o + 9u] = v4.w;
    Five f = a5[j];
    for (int k = 0; k < 5; k++) b[o + 10u + uint(k)] = f.v[k];
    uvec4 w4 = s4[(t * 5u) % 64u]; b[o + 15u] = w4.x; b[o + 16u] = w4.w;
    uvec2 w2 = s2[(t * 3u + 1u) % 40u]; b[o + 17u] = w2.x; b[o + 18u] = w2.y;
    uvec2 rr = r[t * stride]; b[o + 19u] = rr.x + rr.y;
}"#,
    ) else {
        return;
    };
    // Word offsets of the members (std430: uvec3 elements take 16 bytes).
    let (o1, o2, o3, o4, o5) = (0usize, 64, 64 + 128, 64 + 128 + 256, 64 + 128 + 256 + 256);
    let words: Vec<u32> = (0..o5 + 5 * 64)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761))
        .collect();
    let rbuf: Vec<u32> = (0..2 * 64 * 3).map(|i| i as u32 * 3 + 5).collect();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), bytes_u32(&words));
    res.buffers.insert((0, 1), vec![0; 4 * 20 * 64]);
    res.buffers.insert((0, 2), bytes_u32(&rbuf));
    res.push_constants = 3u32.to_le_bytes().to_vec();
    run(&m, &mut res, [1, 1, 1], &EngineOptions::default());
    let b = u32s(&res.buffers[&(0, 1)]);
    for t in 0..64usize {
        let j = (t * 37 + 11) % 48;
        let mut want = vec![words[o1 + j]];
        want.extend(&words[o2 + 2 * j..o2 + 2 * j + 2]);
        want.extend(&words[o3 + 4 * j..o3 + 4 * j + 3]);
        want.extend(&words[o4 + 4 * j..o4 + 4 * j + 4]);
        want.extend(&words[o5 + 5 * j..o5 + 5 * j + 5]);
        let s4 = (t * 5) % 64;
        want.extend([words[o4 + 4 * s4], words[o4 + 4 * s4 + 3]]);
        let s2 = 63 - (t * 3 + 1) % 40;
        want.extend(&words[o2 + 2 * s2..o2 + 2 * s2 + 2]);
        want.push(rbuf[2 * 3 * t].wrapping_add(rbuf[2 * 3 * t + 1]));
        assert_eq!(&b[20 * t..20 * t + 20], &want[..], "lane {t}");
    }
    // r has 192 elements: with a stride of 4, lanes 48 and up read past it.
    res.push_constants = 4u32.to_le_bytes().to_vec();
    let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &Default::default())
        .unwrap();
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::OutOfBounds, "{e}");
    assert!(e.place.contains("local invocation (48, 0, 0)"), "{e}");
}

/// The bits of an f32 binary op's result `r` of operands `x` and `y` under the engine's NaN
/// rule: `r` when it is not a NaN, else the first NaN operand quieted, else 0xffc00000.
fn nan_rule(x: u32, y: u32, r: f32) -> u32 {
    let is_nan = |v: u32| v & 0x7fff_ffff > 0x7f80_0000;
    if !r.is_nan() {
        r.to_bits()
    } else if is_nan(x) {
        x | 0x0040_0000
    } else if is_nan(y) {
        y | 0x0040_0000
    } else {
        0xffc0_0000
    }
}

/// Element-wise +, −, ×, ÷ of f32 cooperative matrices (one vector loop per op) against IEEE
/// f32 arithmetic, in place as well (the result tile is an operand's), over ordinary values,
/// zeros, infinities and subnormals; a tile holding NaNs (payloads in either operand) gives
/// the engine's NaN rule: the first NaN operand quieted, else the default NaN 0xffc00000.
#[test]
fn f32_matrix_arithmetic_matches_ieee_and_fixes_nan_bits() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) buffer O { float o[]; };
void main() {
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> x, y, r;
    coopMatLoad(x, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(y, a, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    r = x + y; coopMatStore(r, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    r = x - y; coopMatStore(r, o, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    r = x * y; coopMatStore(r, o, 512, 16, gl_CooperativeMatrixLayoutRowMajor);
    r = x / y; coopMatStore(r, o, 768, 16, gl_CooperativeMatrixLayoutRowMajor);
    x = x * y; x = x + y; coopMatStore(x, o, 1024, 16, gl_CooperativeMatrixLayoutRowMajor);
}"#,
    ) else {
        return;
    };
    let special = [
        0u32,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        1,
        0x8000_0001,
        0x3f80_0000,
        0x7f7f_ffff,
    ];
    for with_nans in [false, true] {
        let mut words: Vec<u32> = (0..512u32)
            .map(|i| {
                if i % 5 == 0 {
                    special[(i as usize / 5) % special.len()]
                } else {
                    (i.wrapping_mul(2_654_435_761) % 0x7f00_0000) ^ ((i & 1) << 31)
                }
            })
            .collect();
        if with_nans {
            words[3] = 0x7f80_0123;
            words[256 + 3] = 0xffc0_0042;
            words[256 + 9] = 0x7fa0_0007;
        }
        let mut res = Resources::default();
        res.buffers.insert((0, 0), bytes_u32(&words));
        res.buffers.insert((0, 1), vec![0; 4 * 1280]);
        run(&m, &mut res, [1, 1, 1], &EngineOptions::default());
        let out = u32s(&res.buffers[&(0, 1)]);
        let f = f32::from_bits;
        for e in 0..256 {
            let (x, y) = (words[e], words[256 + e]);
            let want = [
                nan_rule(x, y, f(x) + f(y)),
                nan_rule(x, y, f(x) - f(y)),
                nan_rule(x, y, f(x) * f(y)),
                nan_rule(x, y, f(x) / f(y)),
            ];
            for (k, w) in want.iter().enumerate() {
                assert_eq!(out[256 * k + e], *w, "op {k} element {e} nans {with_nans}");
            }
            let p = nan_rule(x, y, f(x) * f(y));
            assert_eq!(
                out[1024 + e],
                nan_rule(p, y, f(p) + f(y)),
                "in place, element {e}"
            );
        }
    }
}

/// A matrix times a scalar and conversions between f32 and f16 matrices (one vector pass per
/// tile) against scalar arithmetic: f32 × s with the engine's NaN rule, f16 × s rounded once
/// (the f32 product of two f16 values is exact), f32 → f16 rounded to nearest even (overflow,
/// subnormals), f16 → f32 exact, in place as well; a tile holding a NaN takes the element path
/// and its other elements are unchanged.
#[test]
fn matrix_scale_and_float_conversions_match_scalar_arithmetic() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) buffer O { float o[]; };
layout(std430, binding = 2) buffer H { float16_t h[]; };
void main() {
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> x, r;
    coopMatLoad(x, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    float s = a[256];
    r = x * s;
    coopMatStore(r, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> hx =
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(x);
    coopMatStore(hx, h, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    hx = hx * float16_t(s);
    coopMatStore(hx, h, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    r = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(hx);
    coopMatStore(r, o, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    x = x * s;
    coopMatStore(x, o, 512, 16, gl_CooperativeMatrixLayoutRowMajor);
}"#,
    ) else {
        return;
    };
    let f = f32::from_bits;
    let h16 = half::f16::from_f32;
    let special = [
        0u32,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        1,
        0x3380_0001,
        0x477f_f000,
    ];
    for (scale, with_nan) in [
        (0.75f32, false),
        (-3.0e-3, false),
        (1.5, true),
        (0.0, false),
    ] {
        let mut words: Vec<u32> = (0..257u32)
            .map(|i| {
                if i % 7 == 0 {
                    special[(i as usize / 7) % special.len()]
                } else {
                    // Values across the f16 range, subnormals and overflow included.
                    let e = 0x2f00_0000 + (i.wrapping_mul(2_654_435_761) % 0x1a00_0000);
                    e ^ ((i & 1) << 31)
                }
            })
            .collect();
        words[256] = scale.to_bits();
        if with_nan {
            words[19] = 0x7fa0_0031;
        }
        let mut res = Resources::default();
        res.buffers.insert((0, 0), bytes_u32(&words));
        res.buffers.insert((0, 1), vec![0; 4 * 768]);
        res.buffers.insert((0, 2), vec![0; 2 * 512]);
        run(&m, &mut res, [1, 1, 1], &EngineOptions::default());
        let o = u32s(&res.buffers[&(0, 1)]);
        let hb = &res.buffers[&(0, 2)];
        let h = |i: usize| half::f16::from_bits(u16::from_le_bytes([hb[2 * i], hb[2 * i + 1]]));
        let hs = h16(scale);
        for e in 0..256 {
            let x = words[e];
            let what = format!("element {e}, scale {scale}, nan {with_nan}");
            let scaled = nan_rule(x, scale.to_bits(), f(x) * scale);
            assert_eq!(o[e], scaled, "f32 x*s, {what}");
            assert_eq!(o[512 + e], scaled, "in place, {what}");
            if f(x).is_nan() {
                assert!(h(e).is_nan() && h(256 + e).is_nan(), "{what}");
                assert!(f(o[256 + e]).is_nan(), "{what}");
                continue;
            }
            assert_eq!(h(e).to_bits(), h16(f(x)).to_bits(), "f32 -> f16, {what}");
            let want = h16(h16(f(x)).to_f32() * hs.to_f32());
            if want.is_nan() {
                // 0 · ∞ (an f16 overflow times a zero scale): the element path's NaN.
                assert!(
                    h(256 + e).is_nan() && f(o[256 + e]).is_nan(),
                    "f16 x*s, {what}"
                );
                continue;
            }
            assert_eq!(h(256 + e).to_bits(), want.to_bits(), "f16 x*s, {what}");
            assert_eq!(
                o[256 + e],
                h(256 + e).to_f32().to_bits(),
                "f16 -> f32, {what}"
            );
        }
    }
}

/// Values the divergence analysis proves the same in every lane of a batch run once
/// (`Op::Once`): per workgroup when a batch is one workgroup, only dispatch-uniform ones when a
/// batch packs several (there `gl_WorkGroupID` differs between the lanes of one batch). Results
/// are those of running every lane (observing uniformity turns it off).
#[test]
fn uniform_values_run_once_per_batch() {
    // (local size, shared memory or not): 64 with a barrier is one workgroup a batch; 32
    // without Workgroup memory or barriers packs several workgroups into a batch.
    for (local, shared) in [(64u32, true), (32, false)] {
        let sync = if shared { "shared uint s[64];\n" } else { "" };
        let body = if shared {
            "s[t] = t; barrier(); uint other = s[63u - t];"
        } else {
            "uint other = 63u - t;"
        };
        let src = format!(
            r#"#version 450
layout(local_size_x = {local}) in;
layout(std430, binding = 0) readonly buffer A {{ uint a[]; }};
layout(std430, binding = 1) buffer C {{ uint c[]; }};
layout(push_constant) uniform P {{ uint k; }};
{sync}void main() {{
    uint t = gl_LocalInvocationID.x, w = gl_WorkGroupID.x;
    {body}
    uint u = a[k] * 3u + k;         // the same in the whole dispatch
    uint g = a[w + 1u] ^ (w * 77u); // the same in the workgroup
    // Conversions and a unary op, uniform too (single-lane paths of their own).
    uint h = ~uint(float(a[k] & 1023u) * 0.5 + float(w));
    uint i = w * {local}u + t;
    c[i] = u + g * 5u + t * 11u + other + h;
}}"#
        );
        let Some(m) = glsl(&src) else {
            return;
        };
        let groups = 5u32;
        let a: Vec<u32> = (0..16u32).map(|i| i.wrapping_mul(2654435761)).collect();
        let inputs = || {
            let mut res = Resources::default();
            res.buffers.insert((0, 0), bytes_u32(&a));
            res.buffers
                .insert((0, 1), vec![0; 4 * (groups * local) as usize]);
            res.push_constants = 2u32.to_le_bytes().to_vec();
            res
        };
        let mut once = inputs();
        let stats = run(&m, &mut once, [groups, 1, 1], &EngineOptions::default());
        let observe = EngineOptions {
            observe_uniformity: true,
            ..Default::default()
        };
        let mut every_lane = inputs();
        let off = run(&m, &mut every_lane, [groups, 1, 1], &observe);
        let c = u32s(&once.buffers[&(0, 1)]);
        for w in 0..groups {
            for t in 0..local {
                let u = a[2].wrapping_mul(3).wrapping_add(2);
                let g = a[w as usize + 1] ^ w.wrapping_mul(77);
                let h = !(((a[2] & 1023) as f32 * 0.5 + w as f32) as u32);
                let want = u
                    .wrapping_add(g.wrapping_mul(5))
                    .wrapping_add(t * 11)
                    .wrapping_add(63 - t)
                    .wrapping_add(h);
                assert_eq!(
                    c[(w * local + t) as usize],
                    want,
                    "local {local}, ({w}, {t})"
                );
            }
        }
        assert_eq!(once.buffers, every_lane.buffers, "local {local}");
        assert!(stats.uniform_copies > 0, "local {local}: {stats:?}");
        assert_eq!(off.uniform_copies, 0);
    }
}

/// A matrix carried round a loop moves into its phi without a copy when every lane that may
/// still run takes the back edge, also in a batch with room for more workgroups than it holds
/// (one or three workgroups of 64 where a batch packs four): the subgroups loop 3 and 4 times,
/// so once the first leaves, the second's edges must copy, and the first's result stays. Each
/// subgroup's tile is its count of A·B (small integers, exact).
#[test]
fn matrices_move_round_loops_in_partly_filled_batches() {
    // Optimized: the accumulator is a phi of the loop header, not a Function variable.
    let Some(m) = glsl_opt(
        r#"#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float16_t a[]; };
layout(std430, binding = 1) writeonly buffer C { float c[]; };
void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, a, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint i = 0; i < 3u + gl_SubgroupID; i++)
        acc = coopMatMulAdd(ma, mb, acc);
    uint tile = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    coopMatStore(acc, c, tile * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
}"#,
        true,
    ) else {
        return;
    };
    let av: Vec<f32> = (0..256).map(|e| ((e / 16 + e % 16) % 3) as f32).collect();
    let bv: Vec<f32> = (0..256).map(|e| ((e / 16) * (e % 16) % 5) as f32).collect();
    let halves: Vec<u8> = av
        .iter()
        .chain(&bv)
        .flat_map(|&x| half::f16::from_f32(x).to_le_bytes())
        .collect();
    let opts = EngineOptions {
        subgroup_size: 32,
        ..Default::default()
    };
    for groups in [1u32, 3] {
        let mut res = Resources::default();
        res.buffers.insert((0, 0), halves.clone());
        res.buffers
            .insert((0, 1), vec![0; 4 * 256 * 2 * groups as usize]);
        run(&m, &mut res, [groups, 1, 1], &opts);
        let c = f32s(&res.buffers[&(0, 1)]);
        for tile in 0..2 * groups as usize {
            let count = (3 + tile % 2) as f32;
            for e in 0..256 {
                let (i, j) = (e / 16, e % 16);
                let want: f32 = (0..16).map(|k| av[i * 16 + k] * bv[k * 16 + j]).sum();
                assert_eq!(
                    c[tile * 256 + e],
                    count * want,
                    "{groups} groups, tile {tile}, ({i},{j})"
                );
            }
        }
    }
}

/// MulAdds chained through their accumulator (a K loop unrolled in the shader: each result
/// read only by the next MulAdd, as its C) run as one kernel call per pair, with the sum kept
/// in registers: bit for bit what the MulAdds give one by one (the same shader with the first
/// intermediate also stored, which keeps that pair apart) and close to an f64 reference, with
/// the pairs counted (`DispatchStats::chained_muladds`). 16×16×16 tiles (all instances in one
/// call) and 16×32 · 32×16 ones (instance by instance).
#[test]
fn chained_muladds_equal_the_steps_one_by_one() {
    for k in [16u32, 32] {
        let shader = |keep_first: bool| {
            format!(
                r#"{COOPMAT_HDR}
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A {{ float16_t a[]; }};
layout(std430, binding = 1) buffer C {{ float c[]; }};
const uint K = {k};
void main() {{
    coopmat<float16_t, gl_ScopeSubgroup, 16, K, gl_MatrixUseA> a0, a1, a2;
    coopmat<float16_t, gl_ScopeSubgroup, K, 16, gl_MatrixUseB> b0, b1, b2, b3, b4, b5;
    coopMatLoad(a0, a, 0 * 16 * K, K, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(a1, a, 1 * 16 * K, K, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(a2, a, 2 * 16 * K, K, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b0, a, 3 * 16 * K, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b1, a, 4 * 16 * K, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b2, a, 5 * 16 * K, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b3, a, 6 * 16 * K, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b4, a, 7 * 16 * K, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b5, a, 8 * 16 * K, 16, gl_CooperativeMatrixLayoutRowMajor);
    uint o = (gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID) * 1024u;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c0, c1;
    coopMatLoad(c0, c, o, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(c1, c, o + 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
    c0 = coopMatMulAdd(a0, b0, c0);
    c1 = coopMatMulAdd(a0, b1, c1);
    {keep}
    c0 = coopMatMulAdd(a1, b2, c0);
    c1 = coopMatMulAdd(a1, b3, c1);
    c0 = coopMatMulAdd(a2, b4, c0);
    c1 = coopMatMulAdd(a2, b5, c1);
    coopMatStore(c0, c, o, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(c1, c, o + 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
}}"#,
                keep = if keep_first {
                    "coopMatStore(c0, c, o + 512u, 16, gl_CooperativeMatrixLayoutRowMajor);"
                } else {
                    ""
                }
            )
        };
        let (Some(chained), Some(apart)) = (
            glsl_opt(&shader(false), true),
            glsl_opt(&shader(true), true),
        ) else {
            return;
        };
        let k = k as usize;
        // Halves with fractions, so that every sum rounds.
        let av: Vec<f32> = (0..9 * 16 * k)
            .map(|e| half::f16::from_f32(((e * 7 + 3) % 23) as f32 * 0.173 - 1.9).to_f32())
            .collect();
        let halves: Vec<u8> = av
            .iter()
            .flat_map(|&x| half::f16::from_f32(x).to_le_bytes())
            .collect();
        let groups = 3usize;
        let tiles = 2 * groups;
        let c0: Vec<f32> = (0..tiles * 1024)
            .map(|e| ((e * 13) % 17) as f32 * 0.37 - 3.0)
            .collect();
        let opts = EngineOptions {
            subgroup_size: 32,
            ..Default::default()
        };
        let mut outs = Vec::new();
        for m in [&chained, &apart] {
            let mut res = Resources::default();
            res.buffers.insert((0, 0), halves.clone());
            res.buffers.insert((0, 1), bytes_f32(&c0));
            let stats = run(m, &mut res, [groups as u32, 1, 1], &opts);
            outs.push((f32s(&res.buffers[&(0, 1)]), stats.chained_muladds));
        }
        let tile = |t: usize, e: usize| av[t * 16 * k + e];
        for t in 0..tiles {
            for (acc, bs) in [(0, [3, 5, 7]), (1, [4, 6, 8])] {
                for e in 0..256 {
                    let (i, j) = (e / 16, e % 16);
                    let mut want = c0[t * 1024 + acc * 256 + e] as f64;
                    for (s, &b) in bs.iter().enumerate() {
                        for kk in 0..k {
                            want += tile(s, i * k + kk) as f64 * tile(b, kk * 16 + j) as f64;
                        }
                    }
                    let at = t * 1024 + acc * 256 + e;
                    let (got, one_by_one) = (outs[0].0[at], outs[1].0[at]);
                    assert_eq!(
                        got.to_bits(),
                        one_by_one.to_bits(),
                        "k {k}, tile {t}, acc {acc}, ({i},{j})"
                    );
                    assert!(
                        (got as f64 - want).abs() < 1e-3,
                        "k {k}, tile {t}: {got} against {want}"
                    );
                }
            }
        }
        // Per subgroup (two a workgroup): the first two MulAdds of each accumulator chain
        // with the next; with c0's first result stored too, c0 chains its second MulAdd and
        // c1 its first (one pair each).
        assert_eq!(
            (outs[0].1, outs[1].1),
            (4 * groups as u64, 4 * groups as u64),
            "k {k}"
        );
    }
}

/// Tiles staged in Workgroup memory whose loads only MulAdds read stay there, the MulAdd
/// kernel widening them as it reads (`DispatchStats::tiles_in_place`): bit for bit what the
/// same shader gives when one B tile is also stored (that group then widens its tiles into
/// their slots first) and when a barrier lies between the loads and the MulAdds (no tile
/// stays). The halves include signaling and quiet NaNs, infinities and subnormals; two
/// subgroups, the second reading the first's A tile in one segment and its own in the other.
#[test]
fn tiles_left_in_workgroup_memory_equal_loaded_tiles() {
    let shader = |between: &str, after: &str| {
        format!(
            r#"{COOPMAT_HDR}
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A {{ uint a[]; }};
layout(std430, binding = 1) buffer C {{ float c[]; }};
layout(std430, binding = 2) buffer E {{ float16_t e[]; }};
// Ten 16×16 f16 tiles, rows of 8 words, 16 rows: 128 words a tile.
shared uint st[10 * 128];
void main() {{
    for (uint i = gl_LocalInvocationID.x; i < 10 * 128; i += 64) st[i] = a[i];
    barrier();
    uint sg = gl_SubgroupID;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a0, a1;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b0, b1, b2, b3;
    coopMatLoad(a0, st, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(a1, st, (1 + sg) * 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b0, st, (3 + sg) * 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b1, st, 5 * 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b2, st, (6 + sg) * 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b3, st, (8 + sg) * 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    {between}
    uint o = sg * 512u;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c0, c1;
    coopMatLoad(c0, c, o, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(c1, c, o + 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
    c0 = coopMatMulAdd(a0, b0, c0);
    c1 = coopMatMulAdd(a0, b1, c1);
    c0 = coopMatMulAdd(a1, b2, c0);
    c1 = coopMatMulAdd(a1, b3, c1);
    coopMatStore(c0, c, o, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(c1, c, o + 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
    {after}
}}"#
        )
    };
    let store_b3 = "coopMatStore(b3, e, sg * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);";
    let variants = [
        ("in place", shader("", "")),
        ("one B stored", shader("", store_b3)),
        ("barrier between", shader("barrier();", "")),
    ];
    let special = [0x7c01u16, 0x7e55, 0xfc00, 0x7c00, 0x0001, 0x83ff, 0x8000];
    let halves: Vec<u16> = (0..10 * 256)
        .map(|i| {
            if i % 41 == 7 {
                special[(i / 41) % special.len()]
            } else {
                half::f16::from_f32(((i * 29) % 31) as f32 * 0.19 - 2.7).to_bits()
            }
        })
        .collect();
    let bytes: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
    let c0: Vec<f32> = (0..1024)
        .map(|e| ((e * 13) % 17) as f32 * 0.37 - 3.0)
        .collect();
    let opts = EngineOptions {
        subgroup_size: 32,
        ..Default::default()
    };
    let mut outs = Vec::new();
    for (name, src) in &variants {
        let Some(m) = glsl_opt(src, true) else {
            return;
        };
        let mut res = Resources::default();
        res.buffers.insert((0, 0), bytes.clone());
        res.buffers.insert((0, 1), bytes_f32(&c0));
        res.buffers.insert((0, 2), vec![0; 1024]);
        let stats = run(&m, &mut res, [1, 1, 1], &opts);
        outs.push((*name, res.buffers[&(0, 1)].clone(), stats.tiles_in_place));
    }
    // Two subgroups, two segments, one A and two Bs each.
    assert_eq!(outs[0].2, if tiles_read_in_place() { 12 } else { 0 });
    for (name, out, in_place) in &outs[1..] {
        assert_eq!(*out, outs[0].1, "{name}");
        assert_eq!(*in_place, 0, "{name}");
    }
    // Subgroup 0's c0 against f64 where no NaN or infinity takes part.
    let f = |t: usize, e: usize| half::f16::from_bits(halves[t * 256 + e]).to_f64();
    let mut checked = 0;
    for (i, j) in (0..16).flat_map(|i| (0..16).map(move |j| (i, j))) {
        let want = c0[i * 16 + j] as f64
            + (0..16)
                .map(|k| f(0, i * 16 + k) * f(3, k * 16 + j) + f(1, i * 16 + k) * f(6, k * 16 + j))
                .sum::<f64>();
        let at = 4 * (i * 16 + j);
        let got = f32::from_le_bytes(outs[0].1[at..at + 4].try_into().unwrap()) as f64;
        if want.is_finite() {
            assert!((got - want).abs() < 1e-3, "({i},{j}): {got} against {want}");
            checked += 1;
        }
    }
    assert!(checked >= 64, "{checked}");
}

/// Small workgroups that stage tiles in shared memory run several to a batch, each with its own
/// copy of the staging array: MulAdds that read their tiles where they were staged read their
/// own workgroup's copy. Every workgroup stages different tiles; packed batches (one and two
/// threads, a partly filled last batch) give the bytes of one workgroup a batch, and read tiles
/// in place where the CPU has AVX-512.
#[test]
fn packed_workgroups_read_their_own_staged_tiles() {
    let src = format!(
        r#"{COOPMAT_HDR}
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer A {{ uint a[]; }};
layout(std430, binding = 1) buffer C {{ float c[]; }};
shared uint st[6 * 128];
void main() {{
    uint wg = gl_WorkGroupID.x;
    for (uint i = gl_LocalInvocationID.x; i < 6 * 128; i += 32) st[i] = a[(wg % 7) * 768 + i];
    barrier();
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a0, a1;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b0, b1, b2, b3;
    coopMatLoad(a0, st, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(a1, st, 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b0, st, 256, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b1, st, 384, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b2, st, 512, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b3, st, 640, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c0, c1;
    coopMatLoad(c0, c, wg * 512u, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(c1, c, wg * 512u + 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
    c0 = coopMatMulAdd(a0, b0, c0);
    c1 = coopMatMulAdd(a0, b1, c1);
    c0 = coopMatMulAdd(a1, b2, c0);
    c1 = coopMatMulAdd(a1, b3, c1);
    coopMatStore(c0, c, wg * 512u, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(c1, c, wg * 512u + 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
}}"#
    );
    let Some(m) = glsl_opt(&src, true) else {
        return;
    };
    let groups = 11u32;
    let bytes: Vec<u8> = (0..7 * 1536)
        .flat_map(|i| half::f16::from_f32(((i * 37) % 23) as f32 * 0.125 - 1.4).to_le_bytes())
        .collect();
    let c: Vec<f32> = (0..512 * groups as usize)
        .map(|e| ((e * 11) % 19) as f32 * 0.25 - 2.0)
        .collect();
    let dispatch = |pack: bool, threads: usize| {
        let opts = EngineOptions {
            subgroup_size: 32,
            pack_workgroups: pack,
            threads,
            ..Default::default()
        };
        let p = Pipeline::compile(&m, "main", &Default::default(), &opts).unwrap();
        let mut res = Resources::default();
        res.buffers.insert((0, 0), bytes.clone());
        res.buffers.insert((0, 1), bytes_f32(&c));
        let stats = p.dispatch(&mut res, [groups, 1, 1]).unwrap();
        (
            p.workgroups_per_batch(),
            res.buffers[&(0, 1)].clone(),
            stats.tiles_in_place,
        )
    };
    let (one, reference, _) = dispatch(false, 1);
    assert_eq!(one, 1);
    // Workgroups staging different tiles give different products.
    assert_ne!(reference[..2048], reference[2048..4096]);
    for threads in [1, 2] {
        let (pack, got, in_place) = dispatch(true, threads);
        assert!(pack > 1, "32-invocation workgroups are packed");
        assert!(got == reference, "{threads} threads, {pack} per batch");
        assert_eq!(
            in_place > 0,
            tiles_read_in_place(),
            "{threads} threads: {in_place} tiles in place"
        );
    }
}

/// A column-major tile load whose result only MulAdds read is not lazy (the kernel reads rows),
/// so its MulAdd reads its slot, even where that slot held a tile that an earlier block's MulAdd
/// group read in place: the f64 product of the column-major tile.
#[test]
fn a_column_major_load_after_lazy_ones_reads_its_own_tile() {
    let src = format!(
        r#"{COOPMAT_HDR}
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer A {{ uint a[]; }};
layout(std430, binding = 1) buffer C {{ float c[]; }};
shared uint st[8 * 128];
void main() {{
    for (uint i = gl_LocalInvocationID.x; i < 8 * 128; i += 32) st[i] = a[i];
    barrier();
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a0, a1, a2;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b0, b1, b2, b3;
    coopMatLoad(a2, st, 7 * 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(a0, st, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(a1, st, 1 * 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b0, st, 2 * 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b1, st, 3 * 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b2, st, 4 * 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b3, st, 5 * 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c0, c1;
    coopMatLoad(c0, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(c1, c, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    c0 = coopMatMulAdd(a0, b0, c0);
    c1 = coopMatMulAdd(a0, b1, c1);
    c0 = coopMatMulAdd(a1, b2, c0);
    c1 = coopMatMulAdd(a1, b3, c1);
    coopMatStore(c0, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(c1, c, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    barrier();
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b4;
    coopMatLoad(b4, st, 6 * 128, 8, gl_CooperativeMatrixLayoutColumnMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c2;
    coopMatLoad(c2, c, 512, 16, gl_CooperativeMatrixLayoutRowMajor);
    c2 = coopMatMulAdd(a2, b4, c2);
    coopMatStore(c2, c, 512, 16, gl_CooperativeMatrixLayoutRowMajor);
}}"#
    );
    let Some(m) = glsl_opt(&src, true) else {
        return;
    };
    let halves: Vec<u16> = (0..8 * 256)
        .map(|i| half::f16::from_f32(((i * 29) % 31) as f32 * 0.19 - 2.7).to_bits())
        .collect();
    let c0: Vec<f32> = (0..768)
        .map(|e| ((e * 13) % 17) as f32 * 0.37 - 3.0)
        .collect();
    let mut res = Resources::default();
    res.buffers.insert(
        (0, 0),
        halves.iter().flat_map(|h| h.to_le_bytes()).collect(),
    );
    res.buffers.insert((0, 1), bytes_f32(&c0));
    let opts = EngineOptions {
        subgroup_size: 32,
        ..Default::default()
    };
    let stats = run(&m, &mut res, [1, 1, 1], &opts);
    if tiles_read_in_place() {
        assert!(stats.tiles_in_place > 0);
    }
    let out = f32s(&res.buffers[&(0, 1)]);
    let f = |t: usize, e: usize| half::f16::from_bits(halves[t * 256 + e]).to_f64();
    for (i, j) in (0..16).flat_map(|i| (0..16).map(move |j| (i, j))) {
        // b4 is column-major: element (k, j) at j·16 + k of tile 6.
        let want = c0[512 + i * 16 + j] as f64
            + (0..16)
                .map(|k| f(7, i * 16 + k) * f(6, j * 16 + k))
                .sum::<f64>();
        let got = out[512 + i * 16 + j] as f64;
        assert!((got - want).abs() < 1e-3, "({i},{j}): {got} against {want}");
    }
}

/// Components of a matrix read with an index that is the same in every lane (each scope
/// instance's lanes then read a slice of its tile) give what the per-lane path gives: f16 and
/// f32 tiles, two subgroups, every component, values including infinities, subnormals, a
/// negative zero and NaN payloads, compared with reads whose index differs between lanes, and
/// an index past the matrix's Length still reported.
#[test]
fn uniform_index_extracts_equal_the_per_lane_path() {
    use half::f16;
    let src = |hi: &str| {
        format!(
            r#"{COOPMAT_HDR}
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B {{
    uint lo; uint hi; uint shift; uint pad;
    uint16_t h[512]; float f[512];
    uint uh[512]; float uf[512]; uint vh[512]; float vf[512];
}};
void main() {{
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mh;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mf;
    coopMatLoad(mh, h, gl_SubgroupID * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mf, f, gl_SubgroupID * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    uint l = gl_LocalInvocationID.x;
    for (uint i = lo; i < {hi}; ++i) {{
        uh[i * 64 + l] = uint(float16BitsToUint16(mh[i]));
        uf[i * 64 + l] = mf[i];
        uint j = (gl_SubgroupInvocationID + shift + i) % uint(mh.length());
        vh[i * 64 + l] = uint(float16BitsToUint16(mh[j]));
        vf[i * 64 + l] = mf[j];
    }}
}}"#
        )
    };
    let Some(m) = glsl(&src("hi")) else {
        return;
    };
    let specials = [
        0x7c00u16, 0xfc00, 0x8000, 0x0001, 0x03ff, 0x7e01, 0xfd55, 0x7bff,
    ];
    let h: Vec<u16> = (0..512u16)
        .map(|e| {
            specials
                .get(e as usize % 37)
                .copied()
                .unwrap_or(e.wrapping_mul(0x9e3))
        })
        .collect();
    let fv: Vec<f32> = (0..512u32)
        .map(|e| match e % 41 {
            0 => f32::from_bits(0x7fc0_1234),
            1 => f32::INFINITY,
            2 => -0.0,
            3 => f32::from_bits(1),
            _ => e as f32 * -0.75 + 3.0,
        })
        .collect();
    let run_with = |shift: u32, h: &[u16]| {
        let mut buf = bytes_u32(&[0, 8, shift, 0]);
        buf.extend(h.iter().flat_map(|x| x.to_le_bytes()));
        buf.extend(bytes_f32(&fv));
        buf.extend(vec![0u8; 4 * 512 * 4]);
        let mut res = Resources::default();
        res.buffers.insert((0, 0), buf);
        // One workgroup filling its batch: every lane active (a packed batch would be part
        // empty, and the per-lane path would run).
        let opts = EngineOptions {
            pack_workgroups: false,
            ..Default::default()
        };
        run(&m, &mut res, [1, 1, 1], &opts);
        let w = u32s(&res.buffers[&(0, 0)]);
        let at = 4 + 256 + 512;
        (w[at..at + 1024].to_vec(), w[at + 1024..at + 2048].to_vec())
    };
    let (uniform, _) = run_with(0, &h);
    let (uh, uf) = uniform.split_at(512);
    // Without NaNs an f16 slice is narrowed at the vector width: every component exact.
    let no_nan: Vec<u16> = h
        .iter()
        .map(|&x| {
            if f16::from_bits(x).is_nan() {
                x & 0x3fff
            } else {
                x
            }
        })
        .collect();
    let (plain, _) = run_with(0, &no_nan);
    for i in 0..8 {
        for l in 0..64 {
            let e = (l / 32) * 256 + (l % 32) + 32 * i;
            assert_eq!(
                plain[i * 64 + l],
                no_nan[e] as u32,
                "f16 component {i} lane {l}"
            );
        }
    }
    // Component i of lane l of subgroup g is element (l % 32) + 32·i of the tile at g·256.
    for i in 0..8 {
        for l in 0..64 {
            let e = (l / 32) * 256 + (l % 32) + 32 * i;
            // NaNs are compared with the per-lane path below (both quiet signaling ones).
            if !f16::from_bits(h[e]).is_nan() {
                assert_eq!(uh[i * 64 + l], h[e] as u32, "f16 component {i} lane {l}");
            }
            if !fv[e].is_nan() {
                assert_eq!(
                    uf[i * 64 + l],
                    fv[e].to_bits(),
                    "f32 component {i} lane {l}"
                );
            }
        }
    }
    // The per-lane path reads component (lane + shift + i) % 8: some shift gives each lane
    // every component; its bits (NaNs included) equal the uniform read's.
    for shift in 0..8u32 {
        let (_, varying) = run_with(shift, &h);
        let (vh, vf) = varying.split_at(512);
        for i in 0..8usize {
            for l in 0..64usize {
                let c = (l % 32 + shift as usize + i) % 8;
                assert_eq!(vh[i * 64 + l], uh[c * 64 + l], "f16 shift {shift} lane {l}");
                assert_eq!(vf[i * 64 + l], uf[c * 64 + l], "f32 shift {shift} lane {l}");
            }
        }
    }
    // A uniform index past the Length (8) is reported, as a varying one is.
    let Some(m) = glsl(&src("hi + 1")) else {
        return;
    };
    let opts = EngineOptions {
        pack_workgroups: false,
        ..Default::default()
    };
    let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &opts).unwrap();
    let mut res = Resources::default();
    let mut buf = bytes_u32(&[0, 8, 0, 0]);
    buf.extend(vec![0u8; 2 * 512 + 4 * 512 * 5]);
    res.buffers.insert((0, 0), buf);
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::OutOfBounds, "{e}");
    assert!(e.to_string().contains("Length 8"), "{e}");
}

/// A staging copy in a K loop keeps the lane shape it found (`CopyShape`) only while its
/// columns have it: the rows move by a push-constant stride every step; the source lanes are
/// permuted differently from step 3 on; the destination is not one run at step 1 (the full
/// path, then the load and the store); and at step 5 a uniform offset moves the last
/// workgroup's last lanes past the end of the buffer while the shape still matches, so only
/// the bounds check of the reused shape can catch it. The same buffers as a reference and as
/// the engine with the fusion off (off while uniformity is observed), the error names the
/// load and the first lane out of bounds, and robust access reads zeros there as unfused.
#[test]
fn staging_shapes_are_reused_only_while_they_hold() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uvec4 a[]; };
layout(std430, binding = 1) buffer B { uvec4 b[]; };
layout(push_constant) uniform P { uint rows; uint extra; };
shared uvec4 s[64];
void main() {
    uint t = gl_LocalInvocationID.x, g = gl_WorkGroupID.x;
    for (uint k = 0u; k < 6u; k++) {
        uint col = k < 3u ? t : (t ^ 5u);
        uint at = k == 1u ? (t ^ 1u) : t;
        s[at] = a[(g * 6u + k) * rows + col + (k == 5u ? extra : 0u)];
        barrier();
        b[(g * 6u + k) * 64u + t] = s[63u - t];
        barrier();
    }
}"#,
    ) else {
        return;
    };
    let (groups, rows) = (3usize, 80usize);
    let src: Vec<u32> = (0..(4 * 6 * groups * rows) as u32)
        .map(|i| i.wrapping_mul(2654435761) | 1)
        .collect();
    let inputs = |extra: u32| {
        let mut res = Resources::default();
        res.buffers.insert((0, 0), bytes_u32(&src));
        res.buffers.insert((0, 1), vec![0; 16 * 6 * 64 * groups]);
        res.push_constants = [rows as u32, extra]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        res
    };
    let check = |res: &Resources, extra: usize| {
        let b = u32s(&res.buffers[&(0, 1)]);
        for g in 0..groups {
            for k in 0..6 {
                for t in 0..64 {
                    // The lane whose store landed in s[63 - t].
                    let u = if k == 1 { (63 - t) ^ 1 } else { 63 - t };
                    let col = if k < 3 { u } else { u ^ 5 };
                    let i = (g * 6 + k) * rows + col + if k == 5 { extra } else { 0 };
                    let want = src.get(4 * i..4 * i + 4).unwrap_or(&[0; 4]);
                    let o = 4 * ((g * 6 + k) * 64 + t);
                    assert_eq!(b[o..o + 4], want[..], "group {g} step {k} lane {t}");
                }
            }
        }
    };
    let observe = EngineOptions {
        observe_uniformity: true,
        ..Default::default()
    };
    let robust = EngineOptions {
        robust: true,
        ..Default::default()
    };
    let robust_observe = EngineOptions {
        robust: true,
        observe_uniformity: true,
        ..Default::default()
    };
    let g3 = [groups as u32, 1, 1];
    for extra in [0, 7] {
        let mut fused = inputs(extra);
        let on = run(&m, &mut fused, g3, &EngineOptions::default());
        check(&fused, extra as usize);
        let mut unfused = inputs(extra);
        let off = run(&m, &mut unfused, g3, &observe);
        assert_eq!(fused.buffers, unfused.buffers, "extra {extra}");
        assert!(
            on.lane_instructions < off.lane_instructions,
            "nothing fused"
        );
    }
    // With 20 more, lanes 56..=59 (t ^ 5 >= 60) of the last workgroup's step 5 read past the
    // end of `a`.
    let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &Default::default())
        .unwrap();
    let e = p.dispatch(&mut inputs(20), g3).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::OutOfBounds, "{e}");
    assert!(e.place.contains("OpLoad"), "{e}");
    assert!(e.place.contains("local invocation (56, 0, 0)"), "{e}");
    let mut fused = inputs(20);
    run(&m, &mut fused, g3, &robust);
    check(&fused, 20);
    let mut unfused = inputs(20);
    run(&m, &mut unfused, g3, &robust_observe);
    assert_eq!(fused.buffers, unfused.buffers);
}

/// 32-bit integer ops that each read the one before's result, and nothing else that result,
/// run as one chain (`Op::IntChain`): every chainable op, the running value on either side,
/// shift counts of 32 or more (0, as one op alone gives), a signed shift, a value with a second
/// use (which stays a register), chains under a branch only some lanes take. The same buffers
/// as a reference computed here and as the engine with the fusion off (it is off while
/// uniformity is observed), and fewer lane-instructions with it on.
#[test]
fn integer_chains_equal_their_ops_one_by_one() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) buffer B { uint b[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = a[i], y = a[i + 256u], s = a[i + 512u];
    b[i] = ((((((x + y) * 2654435761u) ^ (y >> 3u)) - s) >> (s & 63u)) << (y & 7u)) | (x - (y & 65535u));
    uint t = x * y;
    b[i + 256u] = t + 1u;
    b[i + 512u] = uint((int(t ^ s) >> int(s & 31u)) - int(x));
    if ((x & 3u) != 0u) {
        b[i + 768u] = (((x << (s & 63u)) + 17u) & y) - (s >> 4u);
    }
}"#,
    ) else {
        return;
    };
    let n = 256usize;
    let mut r = 0x1234_5678u32;
    let src: Vec<u32> = (0..3 * n)
        .map(|k| {
            r ^= r << 13;
            r ^= r >> 17;
            r ^= r << 5;
            if k % 7 == 0 { k as u32 } else { r }
        })
        .collect();
    let shl = |v: u32, c: u32| if c >= 32 { 0 } else { v << c };
    let shr = |v: u32, c: u32| if c >= 32 { 0 } else { v >> c };
    let mut want = vec![0u32; 4 * n];
    for i in 0..n {
        let (x, y, s) = (src[i], src[i + n], src[i + 2 * n]);
        let chain = (x.wrapping_add(y).wrapping_mul(2654435761) ^ (y >> 3)).wrapping_sub(s);
        want[i] = shl(shr(chain, s & 63), y & 7) | x.wrapping_sub(y & 65535);
        let t = x.wrapping_mul(y);
        want[i + n] = t.wrapping_add(1);
        want[i + 2 * n] = ((((t ^ s) as i32) >> (s & 31)).wrapping_sub(x as i32)) as u32;
        if x & 3 != 0 {
            want[i + 3 * n] = (shl(x, s & 63).wrapping_add(17) & y).wrapping_sub(s >> 4);
        }
    }
    let inputs = || {
        let mut res = Resources::default();
        res.buffers.insert((0, 0), bytes_u32(&src));
        res.buffers.insert((0, 1), vec![0; 16 * n]);
        res
    };
    let mut fused = inputs();
    let on = run(&m, &mut fused, [4, 1, 1], &EngineOptions::default());
    let observe = EngineOptions {
        observe_uniformity: true,
        ..Default::default()
    };
    let mut unfused = inputs();
    let off = run(&m, &mut unfused, [4, 1, 1], &observe);
    let got = u32s(&fused.buffers[&(0, 1)]);
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "b[{k}]");
    }
    assert_eq!(got, u32s(&unfused.buffers[&(0, 1)]));
    assert!(
        on.lane_instructions < off.lane_instructions,
        "{} against {} lane-instructions: nothing fused",
        on.lane_instructions,
        off.lane_instructions
    );
}

/// `n` values k/64 for k in -1000..=1000, from `rng`.
fn sixty_fourths(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| (rng.below(2001) as f32 - 1000.0) / 64.0)
        .collect()
}

/// Runs `m` on one workgroup with `inputs` bound at bindings 0.. of set 0 and zeroed buffers
/// of `outputs` bytes after them, with the compiler's passes and without (observing
/// uniformity turns them off); asserts that both leave every buffer the same. Returns the
/// buffers and the lane-instructions the passes saved.
fn with_and_without_passes(
    m: &coopmat_spirv::Module,
    inputs: &[&[f32]],
    outputs: &[usize],
) -> (Resources, u64) {
    let bound = || {
        let mut res = Resources::default();
        for (b, x) in inputs.iter().enumerate() {
            res.buffers.insert((0, b as u32), bytes_f32(x));
        }
        for (k, &n) in outputs.iter().enumerate() {
            res.buffers
                .insert((0, (inputs.len() + k) as u32), vec![0; n]);
        }
        res
    };
    let observe = EngineOptions {
        observe_uniformity: true,
        ..Default::default()
    };
    let (mut with, mut without) = (bound(), bound());
    let on = run(m, &mut with, [1, 1, 1], &EngineOptions::default());
    let off = run(m, &mut without, [1, 1, 1], &observe);
    assert_eq!(with.buffers, without.buffers);
    (with, off.lane_instructions - on.lane_instructions)
}

const COPIES_AND_SPLATS: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpExecutionMode %main LocalSize 64 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %rt ArrayStride 16
               OpDecorate %S Block
               OpMemberDecorate %S 0 Offset 0
               OpDecorate %in DescriptorSet 0
               OpDecorate %in Binding 0
               OpDecorate %in2 DescriptorSet 0
               OpDecorate %in2 Binding 1
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 2
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
         %v4 = OpTypeVector %float 4
     %v3uint = OpTypeVector %uint 3
         %rt = OpTypeRuntimeArray %v4
          %S = OpTypeStruct %rt
       %ptrS = OpTypePointer StorageBuffer %S
       %ptrv = OpTypePointer StorageBuffer %v4
      %ptrin = OpTypePointer Input %v3uint
        %gid = OpVariable %ptrin Input
         %in = OpVariable %ptrS StorageBuffer
        %in2 = OpVariable %ptrS StorageBuffer
        %out = OpVariable %ptrS StorageBuffer
       %zero = OpConstant %uint 0
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3uint %gid
          %x = OpCompositeExtract %uint %g 0
          %p = OpAccessChain %ptrv %in %zero %x
          %v = OpLoad %v4 %p
          %e = OpCompositeExtract %float %v 1
         %p2 = OpAccessChain %ptrv %in2 %zero %x
          %q = OpLoad %v4 %p2
          %c = OpCopyObject %v4 %q
          %s = OpFMul %float %e %e
         %sp = OpCompositeConstruct %v4 %s %s %s %s
          %r = OpFSub %v4 %sp %c
         %r2 = OpFMul %v4 %r %sp
         %po = OpAccessChain %ptrv %out %zero %x
               OpStore %po %r2
               OpReturn
               OpFunctionEnd
"#;

/// Copies and extracts read their source's registers, and a splat only ever an operand of
/// per-component ops is never built (`Cx::copy_view`, `Cx::splat_operand`): the same bits as
/// with them (observing uniformity turns both off), seven ops a lane fewer. `%v` dies at the
/// extract of `%e`, and the load of `%q` right after would take its registers from the pool
/// if `%v` were not kept while `%e` lives: `%e` would then read `q.y`.
#[test]
fn copies_read_their_source_and_splats_are_never_built() {
    let Some(m) = spvasm(COPIES_AND_SPLATS) else {
        return;
    };
    let mut rng = Rng(0x5eed);
    let (v, q) = (sixty_fourths(&mut rng, 256), sixty_fourths(&mut rng, 256));
    let (with, saved) = with_and_without_passes(&m, &[&v, &q], &[1024]);
    let got = f32s(&with.buffers[&(0, 2)]);
    for l in 0..64 {
        let s = v[4 * l + 1] * v[4 * l + 1];
        for k in 0..4 {
            let want = (s - q[4 * l + k]) * s;
            assert_eq!(
                got[4 * l + k].to_bits(),
                want.to_bits(),
                "lane {l} component {k}"
            );
        }
    }
    // %x, %e and %c read their sources (3 copies); %sp's four component copies are gone.
    assert_eq!(saved, 7 * 64);
}

const FORWARDED_STORES: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpExecutionMode %main LocalSize 64 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %rt ArrayStride 4
               OpDecorate %S Block
               OpMemberDecorate %S 0 Offset 0
               OpDecorate %in DescriptorSet 0
               OpDecorate %in Binding 0
               OpDecorate %in2 DescriptorSet 0
               OpDecorate %in2 Binding 1
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 2
               OpDecorate %out2 DescriptorSet 0
               OpDecorate %out2 Binding 3
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
     %v3uint = OpTypeVector %uint 3
         %rt = OpTypeRuntimeArray %float
          %S = OpTypeStruct %rt
       %ptrS = OpTypePointer StorageBuffer %S
       %ptrf = OpTypePointer StorageBuffer %float
       %ptrF = OpTypePointer Function %float
      %ptrin = OpTypePointer Input %v3uint
        %gid = OpVariable %ptrin Input
         %in = OpVariable %ptrS StorageBuffer
        %in2 = OpVariable %ptrS StorageBuffer
        %out = OpVariable %ptrS StorageBuffer
       %out2 = OpVariable %ptrS StorageBuffer
       %zero = OpConstant %uint 0
       %main = OpFunction %void None %fn
      %entry = OpLabel
        %var = OpVariable %ptrF Function
          %w = OpVariable %ptrF Function
          %g = OpLoad %v3uint %gid
          %x = OpCompositeExtract %uint %g 0
          %p = OpAccessChain %ptrf %in %zero %x
          %a = OpLoad %float %p
               OpStore %var %a
         %l1 = OpLoad %float %var
          %b = OpFMul %float %l1 %l1
               OpStore %var %b
         %l2 = OpLoad %float %var
         %p2 = OpAccessChain %ptrf %in2 %zero %x
          %q = OpLoad %float %p2
          %r = OpFAdd %float %l2 %q
               OpStore %var %r
         %po = OpAccessChain %ptrf %out %zero %x
               OpStore %po %r
               OpStore %w %a
          %m = OpLoad %float %w
               OpStore %w %q
               OpBranch %next
       %next = OpLabel
         %ph = OpPhi %float %m %entry
         %wl = OpLoad %float %w
         %r2 = OpFAdd %float %ph %wl
        %po2 = OpAccessChain %ptrf %out2 %zero %x
               OpStore %po2 %r2
               OpReturn
               OpFunctionEnd
"#;

/// Loads of a promoted variable after a whole store of it in the same block take the stored
/// value's registers, and a store that a later one overwrites before any read compiles to
/// nothing (`Cx::promoted_store`): the same bits as with both off (observing uniformity), four
/// ops a lane fewer. `%b` is used only by its store: the store keeps it from the pool until
/// `%l2`'s last use, so that `%l2` may take its registers (without that, `%l2` reads `%var`
/// and the store of `%b` stays). `%m` feeds a phi, so it reads `%w` itself: the store of `%a`
/// to `%w` before it must stay (the test fails if loads that read are not counted).
#[test]
fn loads_after_stores_take_the_stored_value_and_dead_stores_go() {
    let Some(m) = spvasm(FORWARDED_STORES) else {
        return;
    };
    let mut rng = Rng(0xf0d);
    let (a, q) = (sixty_fourths(&mut rng, 64), sixty_fourths(&mut rng, 64));
    let (with, saved) = with_and_without_passes(&m, &[&a, &q], &[256, 256]);
    let (r, r2) = (f32s(&with.buffers[&(0, 2)]), f32s(&with.buffers[&(0, 3)]));
    for l in 0..64 {
        let b = a[l] * a[l];
        assert_eq!(r[l].to_bits(), (b + q[l]).to_bits(), "r, lane {l}");
        assert_eq!(r2[l].to_bits(), (a[l] + q[l]).to_bits(), "r2, lane {l}");
    }
    // %l1 and %l2 take %a's and %b's registers; the stores of %a and %b to %var are dead.
    assert_eq!(saved, 4 * 64);
}
