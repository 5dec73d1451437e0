//! Scalar kernels, control flow, memory classes: GLSL compiled at test time, checked against
//! references computed here in Rust.

mod common;
use common::*;
use coopmat_exec::{EngineOptions, Resources};

#[test]
fn stores_global_invocation_id() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 8, local_size_y = 2) in;
layout(std430, binding = 0) buffer B { uint v[]; };
void main() {
    uint i = gl_GlobalInvocationID.y * 32u + gl_GlobalInvocationID.x;
    v[i] = gl_GlobalInvocationID.x * 1000u + gl_GlobalInvocationID.y + gl_LocalInvocationIndex * 100000u;
}"#,
    ) else {
        return;
    };
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 4 * 32 * 4]);
    let st = run(&m, &mut res, [4, 2, 1], &EngineOptions::default());
    assert_eq!(st.invocations, 4 * 2 * 16);
    let out = u32s(&res.buffers[&(0, 0)]);
    for y in 0..4u32 {
        for x in 0..32u32 {
            let li = (y % 2) * 8 + x % 8;
            assert_eq!(
                out[(y * 32 + x) as usize],
                x * 1000 + y + li * 100000,
                "x={x} y={y}"
            );
        }
    }
}

fn one_buffer(
    m: &coopmat_spirv::Module,
    data: Vec<u8>,
    groups: [u32; 3],
    threads: usize,
) -> Vec<u8> {
    let mut res = Resources::default();
    res.buffers.insert((0, 0), data);
    let opts = EngineOptions {
        threads,
        ..Default::default()
    };
    run(m, &mut res, groups, &opts);
    res.buffers.remove(&(0, 0)).unwrap()
}

#[test]
fn integer_and_float_arithmetic() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { uint a[256]; int r[2048]; float f[1024]; double d[256]; uint64_t q[256]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = a[i];
    int s = int(x) - 1000;
    int k = int(i) + 1;
    r[i * 8 + 0] = s * 7 + k;
    r[i * 8 + 1] = s / k;
    r[i * 8 + 2] = s % k;
    r[i * 8 + 3] = s >> 3;
    r[i * 8 + 4] = int(x << (i % 31)) ^ int(x | 0x55u);
    r[i * 8 + 5] = min(s, k * 3) + max(s, -k);
    r[i * 8 + 6] = int(bitCount(x)) + findMSB(x) * 100 + findLSB(x) * 10000;
    r[i * 8 + 7] = int(uint(s) / uint(k)) + clamp(s, -50, 50);
    float fx = float(s) * 0.37;
    f[i * 4 + 0] = fx * fx - float(k) / 3.0;
    f[i * 4 + 1] = sqrt(abs(fx)) + floor(fx) - ceil(fx * 0.5);
    f[i * 4 + 2] = float(int(fx)) + fract(abs(fx)) + float(uint(abs(fx)));
    f[i * 4 + 3] = fma(fx, 2.0, 1.0) + mix(1.0, 3.0, 0.25) + clamp(fx, -3.0, 3.0);
    d[i] = double(s) / 3.0LF + double(k);
    q[i] = uint64_t(x) * 4294967311ul + (uint64_t(k) << 40);
}"#,
    ) else {
        return;
    };
    let mut rng = Rng(7);
    let a: Vec<u32> = (0..256).map(|_| rng.below(3000) as u32).collect();
    let mut data = bytes_u32(&a);
    data.resize(1024 + 2048 * 4 + 1024 * 4 + 256 * 8 + 256 * 8, 0);
    let out = one_buffer(&m, data, [4, 1, 1], 1);
    let r = i32s(&out[1024..1024 + 8192]);
    let f = f32s(&out[1024 + 8192..1024 + 8192 + 4096]);
    let doff = 1024 + 8192 + 4096;
    for i in 0..256usize {
        let x = a[i];
        let s = x as i32 - 1000;
        let k = i as i32 + 1;
        let fm = |v: u32| {
            if v == 0 {
                -1
            } else {
                31 - v.leading_zeros() as i32
            }
        };
        let fl = |v: u32| {
            if v == 0 {
                -1
            } else {
                v.trailing_zeros() as i32
            }
        };
        let want = [
            s * 7 + k,
            s / k,
            // glslang lowers GLSL `%` on ints to OpSMod (result has the divisor's sign).
            s.rem_euclid(k),
            s >> 3,
            (x << (i % 31)) as i32 ^ (x | 0x55) as i32,
            s.min(k * 3) + s.max(-k),
            x.count_ones() as i32 + fm(x) * 100 + fl(x) * 10000,
            ((s as u32) / (k as u32)) as i32 + s.clamp(-50, 50),
        ];
        assert_eq!(&r[i * 8..i * 8 + 8], &want, "ints at {i}");
        let fx = s as f32 * 0.37f32;
        let wf = [
            fx * fx - k as f32 / 3.0,
            fx.abs().sqrt() + fx.floor() - (fx * 0.5).ceil(),
            (fx as i32) as f32 + (fx.abs() - fx.abs().floor()) + (fx.abs() as u32) as f32,
            fx.mul_add(2.0, 1.0) + 1.5 + fx.clamp(-3.0, 3.0),
        ];
        for j in 0..4 {
            assert_eq!(f[i * 4 + j], wf[j], "float {j} at {i}");
        }
        let dv = f64::from_le_bytes(out[doff + i * 8..doff + i * 8 + 8].try_into().unwrap());
        assert_eq!(dv, s as f64 / 3.0 + k as f64);
        let qv = u64::from_le_bytes(
            out[doff + 2048 + i * 8..doff + 2048 + i * 8 + 8]
                .try_into()
                .unwrap(),
        );
        assert_eq!(qv, (x as u64).wrapping_mul(4294967311) + ((k as u64) << 40));
    }
}

#[test]
fn divergent_loops_early_return_and_switch() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { uint a[]; };
uint collatz(uint n) {
    uint steps = 0u;
    while (n != 1u) {
        if ((n & 1u) == 0u) { n /= 2u; } else { n = 3u * n + 1u; }
        steps++;
        if (steps > 500u) break;
    }
    return steps;
}
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = a[i];
    if (x % 7u == 3u) { a[i] = 0xdeadu; return; }
    uint acc = 0u;
    for (uint j = 0u; j < x % 13u; j++) {
        if (j == 5u) continue;
        switch (j % 4u) {
            case 0u: acc += j; break;
            case 1u: acc ^= 0x10u;
            case 2u: acc += 100u; break;
            default: acc *= 3u; break;
        }
        if (acc > 5000u) break;
    }
    a[i] = acc * 1000u + collatz(x + 1u);
}"#,
    ) else {
        return;
    };
    let mut rng = Rng(99);
    let a: Vec<u32> = (0..512).map(|_| rng.below(10000) as u32 + 1).collect();
    let out = u32s(&one_buffer(&m, bytes_u32(&a), [8, 1, 1], 2));
    for i in 0..512 {
        let x = a[i];
        let want = if x % 7 == 3 {
            0xdead
        } else {
            let mut acc: u32 = 0;
            for j in 0..x % 13 {
                if j == 5 {
                    continue;
                }
                match j % 4 {
                    0 => acc += j,
                    1 => {
                        acc ^= 0x10;
                        acc += 100
                    }
                    2 => acc += 100,
                    _ => acc = acc.wrapping_mul(3),
                }
                if acc > 5000 {
                    break;
                }
            }
            let mut n = x + 1;
            let mut steps = 0;
            while n != 1 {
                n = if n.is_multiple_of(2) {
                    n / 2
                } else {
                    3 * n + 1
                };
                steps += 1;
                if steps > 500 {
                    break;
                }
            }
            acc * 1000 + steps
        };
        assert_eq!(out[i], want, "lane {i} x={x}");
    }
}

#[test]
fn shared_memory_reduction_and_atomics() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 128) in;
layout(std430, binding = 0) buffer B { uint total; uint hist[16]; uint sums[]; };
layout(std430, binding = 1) readonly buffer I { uint data[]; };
shared uint tmp[128];
void main() {
    uint l = gl_LocalInvocationID.x;
    uint x = data[gl_GlobalInvocationID.x];
    tmp[l] = x;
    barrier();
    for (uint s = 64u; s > 0u; s >>= 1) {
        if (l < s) tmp[l] += tmp[l + s];
        barrier();
    }
    if (l == 0u) sums[gl_WorkGroupID.x] = tmp[0];
    atomicAdd(total, x);
    atomicAdd(hist[x % 16u], 1u);
}"#,
    ) else {
        return;
    };
    let mut rng = Rng(5);
    let data: Vec<u32> = (0..128 * 16).map(|_| rng.below(1000) as u32).collect();
    for threads in [1, 2] {
        let mut res = Resources::default();
        res.buffers.insert((0, 0), vec![0; 4 * (17 + 16)]);
        res.buffers.insert((0, 1), bytes_u32(&data));
        run(
            &m,
            &mut res,
            [16, 1, 1],
            &EngineOptions {
                threads,
                ..Default::default()
            },
        );
        let out = u32s(&res.buffers[&(0, 0)]);
        assert_eq!(out[0], data.iter().sum::<u32>());
        for b in 0..16 {
            assert_eq!(
                out[1 + b],
                data.iter().filter(|&&x| x % 16 == b as u32).count() as u32
            );
        }
        for g in 0..16 {
            assert_eq!(
                out[17 + g],
                data[g * 128..(g + 1) * 128].iter().sum::<u32>()
            );
        }
    }
}

#[test]
fn subgroup_ops_in_divergent_code() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { uint a[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = a[i];
    uint o0 = 0u, o1 = 0u, o2 = 0u, o3 = 0u, o4 = 0u, o5 = 0u;
    if (x % 3u != 0u) {
        o0 = subgroupAdd(x);
        o1 = subgroupInclusiveMax(x);
        o2 = subgroupBallotBitCount(subgroupBallot((x & 1u) == 1u));
        o3 = subgroupBroadcastFirst(x);
        o4 = subgroupElect() ? 1u : 0u;
        o5 = subgroupExclusiveAdd(x);
    }
    uint sh = subgroupShuffleXor(x, 5u);
    a[i] = 0u;
    a[1024u + i * 8u + 0u] = o0;
    a[1024u + i * 8u + 1u] = o1;
    a[1024u + i * 8u + 2u] = o2;
    a[1024u + i * 8u + 3u] = o3;
    a[1024u + i * 8u + 4u] = o4;
    a[1024u + i * 8u + 5u] = o5;
    a[1024u + i * 8u + 6u] = sh;
    a[1024u + i * 8u + 7u] = gl_SubgroupInvocationID + 100u * gl_SubgroupID;
}"#,
    ) else {
        return;
    };
    let mut rng = Rng(11);
    let n = 128usize;
    let a: Vec<u32> = (0..n).map(|_| rng.below(100) as u32).collect();
    let mut data = bytes_u32(&a);
    data.resize(4 * (1024 + n * 8), 0);
    for sg in [8u32, 16, 32] {
        let mut res = Resources::default();
        res.buffers.insert((0, 0), data.clone());
        run(
            &m,
            &mut res,
            [2, 1, 1],
            &EngineOptions {
                subgroup_size: sg,
                ..Default::default()
            },
        );
        let out = u32s(&res.buffers[&(0, 0)]);
        let sg = sg as usize;
        for i in 0..n {
            let base = i / sg * sg;
            let act: Vec<usize> = (base..base + sg)
                .filter(|&j| !a[j].is_multiple_of(3))
                .collect();
            let o = &out[1024 + i * 8..1024 + i * 8 + 8];
            if !a[i].is_multiple_of(3) {
                assert_eq!(o[0], act.iter().map(|&j| a[j]).sum::<u32>(), "add {i}");
                assert_eq!(
                    o[1],
                    act.iter()
                        .filter(|&&j| j <= i)
                        .map(|&j| a[j])
                        .max()
                        .unwrap(),
                    "imax {i}"
                );
                assert_eq!(
                    o[2],
                    act.iter().filter(|&&j| a[j] & 1 == 1).count() as u32,
                    "ballot {i}"
                );
                assert_eq!(o[3], a[act[0]], "bfirst {i}");
                assert_eq!(o[4], (i == act[0]) as u32, "elect {i}");
                assert_eq!(
                    o[5],
                    act.iter().filter(|&&j| j < i).map(|&j| a[j]).sum::<u32>(),
                    "exadd {i}"
                );
            } else {
                assert_eq!(&o[..6], &[0; 6]);
            }
            assert_eq!(o[6], a[base + ((i - base) ^ 5)], "shuffle xor {i}");
            assert_eq!(o[7], (i % 64 % sg) as u32 + 100 * ((i % 64) / sg) as u32);
        }
    }
}

#[test]
fn buffer_reference_and_function_pointer_args() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 32) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(push_constant) uniform P { Floats src; Floats dst; uint n; } pc;
void scale(inout float x, float s) { x = x * s + 1.0; }
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) return;
    float x = pc.src.v[i];
    scale(x, 3.0);
    Floats shifted = Floats(uint64_t(pc.dst) + 4ul * uint64_t(i));
    shifted.v[0] = x;
}"#,
    ) else {
        return;
    };
    let src: Vec<f32> = (0..100).map(|i| i as f32 * 0.5).collect();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), bytes_f32(&src));
    res.buffers.insert((0, 1), vec![0; 400]);
    let a = res.device_address(0, 0).unwrap();
    let b = res.device_address(0, 1).unwrap();
    let mut push = Vec::new();
    push.extend(a.to_le_bytes());
    push.extend(b.to_le_bytes());
    push.extend(100u32.to_le_bytes());
    push.extend([0; 4]);
    res.push_constants = push;
    run(&m, &mut res, [4, 1, 1], &EngineOptions::default());
    let out = f32s(&res.buffers[&(0, 1)]);
    for i in 0..100 {
        assert_eq!(out[i], src[i] * 3.0 + 1.0);
    }
}

#[test]
fn errors_carry_their_kind() {
    use coopmat_exec::ErrorKind;
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { uint a[64]; };
void main() {
    if (gl_LocalInvocationIndex < 7u) { barrier(); }
    a[gl_LocalInvocationIndex] = 1u;
}"#,
    ) else {
        return;
    };
    let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &Default::default())
        .unwrap();
    let mut res = Resources::default();
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::MissingBinding, "{e}");
    // A buffer shorter than its block is valid Vulkan (accesses past its end are out of
    // bounds): the dispatch runs, and here meets the divergent barrier first.
    res.buffers.insert((0, 0), vec![0; 16]);
    assert_eq!(
        p.dispatch(&mut res, [1, 1, 1]).unwrap_err().kind,
        ErrorKind::DivergentBarrier
    );
    res.buffers.insert((0, 0), vec![0; 256]);
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::DivergentBarrier, "{e}");
    let e = coopmat_exec::Pipeline::compile(&m, "nope", &Default::default(), &Default::default())
        .err()
        .unwrap();
    assert_eq!(e.kind, ErrorKind::InvalidArgument, "{e}");
}

#[test]
fn out_of_bounds_is_an_error_naming_the_place() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer B { uint a[]; };
void main() { a[gl_GlobalInvocationID.x * 2u] = 1u; }"#,
    ) else {
        return;
    };
    let p =
        coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &EngineOptions::default())
            .unwrap();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 16]);
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::OutOfBounds, "{e}");
    assert!(e.place.contains("local invocation (2, 0, 0)"), "{e}");
    let p = coopmat_exec::Pipeline::compile(
        &m,
        "main",
        &Default::default(),
        &EngineOptions {
            robust: true,
            ..Default::default()
        },
    )
    .unwrap();
    p.dispatch(&mut res, [1, 1, 1]).unwrap();
    assert_eq!(u32s(&res.buffers[&(0, 0)]), vec![1, 0, 1, 0]);
}

#[test]
fn clustered_quad_rotate_and_relative_shuffles() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_clustered : require
#extension GL_KHR_shader_subgroup_quad : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_KHR_shader_subgroup_rotate : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B { uint a[32]; uint o[]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    uint x = a[i];
    o[i * 6 + 0] = subgroupClusteredAdd(x, 4);
    o[i * 6 + 1] = subgroupClusteredMax(x, 8);
    o[i * 6 + 2] = subgroupQuadBroadcast(x, 2);
    o[i * 6 + 3] = subgroupQuadSwapDiagonal(x);
    o[i * 6 + 4] = subgroupRotate(x, 3u);
    o[i * 6 + 5] = subgroupShuffleDown(x, 1u) + subgroupShuffleUp(x, 2u) * 1000u;
}"#,
    ) else {
        return;
    };
    let a: Vec<u32> = (0..32).map(|i| (i * 37 + 11) % 101).collect();
    let mut data = bytes_u32(&a);
    data.resize(4 * (32 + 32 * 6), 0);
    let out = u32s(&one_buffer(&m, data, [1, 1, 1], 1));
    for i in 0..32usize {
        let o = &out[32 + i * 6..32 + i * 6 + 6];
        let c4 = i / 4 * 4;
        let c8 = i / 8 * 8;
        assert_eq!(o[0], a[c4..c4 + 4].iter().sum::<u32>(), "clustered add {i}");
        assert_eq!(
            o[1],
            *a[c8..c8 + 8].iter().max().unwrap(),
            "clustered max {i}"
        );
        assert_eq!(o[2], a[c4 + 2], "quad broadcast {i}");
        assert_eq!(o[3], a[i ^ 3], "quad swap diagonal {i}");
        assert_eq!(o[4], a[(i + 3) % 32], "rotate {i}");
        // Out-of-range shuffles are undefined; the engine gives 0 (checked where defined).
        let down = if i + 1 < 32 { a[i + 1] } else { 0 };
        let up = if i >= 2 { a[i - 2] } else { 0 };
        if i + 1 < 32 && i >= 2 {
            assert_eq!(o[5], down + up * 1000, "shuffle up/down {i}");
        }
    }
}

#[test]
fn instruction_budget_is_per_workgroup_and_stops_endless_loops() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer B { uint n; uint a[]; };
void main() {
    uint x = 0u;
    for (uint i = 0u; i != n; i++) { x += i; }
    a[gl_GlobalInvocationID.x] = x;
}"#,
    ) else {
        return;
    };
    let run_with = |n: u32, budget: u64| {
        let p = coopmat_exec::Pipeline::compile(
            &m,
            "main",
            &Default::default(),
            &EngineOptions {
                instruction_budget: budget,
                threads: 1,
                ..Default::default()
            },
        )
        .unwrap();
        let mut res = Resources::default();
        let mut d = bytes_u32(&[n]);
        d.resize(4 + 4 * 64, 0);
        res.buffers.insert((0, 0), d);
        p.dispatch(&mut res, [8, 1, 1])
    };
    // 8 workgroups each well under the budget: fine even though their sum exceeds it.
    let st = run_with(10, 2000).unwrap();
    assert!(st.lane_instructions > 2000);
    // n = 0xffffffff never terminates in practice: the budget stops it with a located error.
    let e = run_with(u32::MAX, 100_000).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::Budget, "{e}");
    assert!(e.place.contains("workgroup (0, 0, 0)"), "{e}");
}

#[test]
fn variables_beyond_the_memory_limit_are_an_error_before_allocation() {
    // 64 MiB of Private memory per invocation × 1024 invocations = 64 GiB for one workgroup:
    // refused with the variable named, not an abort in the allocator.
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 1024) in;
layout(std430, binding = 0) buffer B { uint d[]; };
uint big[1 << 24];
void main() {
    big[gl_LocalInvocationIndex] = 1u;
    d[gl_LocalInvocationIndex] = big[gl_LocalInvocationIndex ^ 1u];
}"#,
    ) else {
        return;
    };
    let run_with = |max_memory: u64, threads: usize, groups: u32| {
        let p = coopmat_exec::Pipeline::compile(
            &m,
            "main",
            &Default::default(),
            &EngineOptions {
                max_memory,
                threads,
                ..Default::default()
            },
        )
        .unwrap();
        let mut res = Resources::default();
        res.buffers.insert((0, 0), vec![0; 4096]);
        p.dispatch(&mut res, [groups, 1, 1])
    };
    let e = run_with(0, 1, 1).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::ResourceLimit, "{e}");
    assert!(e.what.contains("67108864 bytes per invocation"), "{e}");
    // The limit counts the workgroups that run at once: one fits 65 GiB, two threads do not.
    let e = run_with(65 << 30, 2, 2).unwrap_err();
    assert!(
        e.what
            .contains("2 batch(es) of 1 workgroup(s) running at once"),
        "{e}"
    );
}

/// Found by the engine fuzz target (2026-11-25): OpISubBorrow inside OpSpecConstantOp with a
/// scalar result type (the assembler refuses it; patched into the words) made the compiler write
/// the borrow past the result. Now a compile error naming the instruction.
#[test]
fn extended_arithmetic_with_a_scalar_result_is_a_compile_error() {
    let path = coopmat_testkit::repo_root().join("tests/spvasm/patch/spec_constant_isub.spvasm");
    let src = std::fs::read_to_string(path).unwrap();
    let words = coopmat_spirv::asm::assemble(&src, &Default::default()).unwrap();
    let mut m = coopmat_spirv::Module::from_words(&words).unwrap();
    let inst = m
        .instructions
        .iter_mut()
        .find(|i| i.opcode == coopmat_spirv::grammar::op::SpecConstantOp)
        .unwrap();
    inst.words[3] = u32::from(coopmat_spirv::grammar::op::ISubBorrow);
    let m = coopmat_spirv::Module::from_words(&m.to_words()).unwrap();
    let e = coopmat_exec::Pipeline::compile(
        &m,
        "",
        &Default::default(),
        &coopmat_exec::EngineOptions::default(),
    )
    .err()
    .expect("a compile error");
    assert!(e.to_string().contains("extended-arithmetic"), "{e}");
}

/// Function variables reached through constant-index access chains live in registers (glslang's
/// `v[2] = ...` on a local vector, an array of vectors and a struct): element stores under
/// divergent control keep the other invocations' values, and a dynamically indexed variable
/// (not promoted) gives the same answers.
#[test]
fn locals_written_through_constant_indices_under_divergent_control() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { uint v[]; };
struct S { uint a; uvec2 b; };
void main() {
    uint l = gl_LocalInvocationIndex;
    uvec4 x = uvec4(l, l + 1u, l + 2u, l + 3u);
    uvec2 arr[3] = uvec2[3](uvec2(1u, 2u), uvec2(3u, 4u), uvec2(5u, 6u));
    S s = S(7u, uvec2(8u, 9u));
    uvec4 dyn = x;
    if ((l & 1u) != 0u) { x[2] = 100u; arr[1][0] = l; s.b[1] = 2u * l; dyn[l % 4u] = 100u; }
    if (l % 3u == 0u) { x.w += x[2]; arr[2] = arr[0]; s.a = x[0]; }
    v[l] = x.x + x.y * 3u + x.z * 5u + x.w * 7u + arr[1].x * 11u + arr[2].y * 13u
        + s.a * 17u + s.b.y * 19u + dyn[(l + 1u) % 4u] * 23u;
}"#,
    ) else {
        return;
    };
    let out = u32s(&one_buffer(&m, vec![0; 64 * 4], [1, 1, 1], 0));
    for l in 0..64u32 {
        let mut x = [l, l + 1, l + 2, l + 3];
        let mut arr = [[1u32, 2], [3, 4], [5, 6]];
        let (mut sa, mut sb) = (7u32, [8u32, 9]);
        let mut dyn_ = x;
        if l & 1 != 0 {
            x[2] = 100;
            arr[1][0] = l;
            sb[1] = 2 * l;
            dyn_[(l % 4) as usize] = 100;
        }
        if l % 3 == 0 {
            x[3] += x[2];
            arr[2] = arr[0];
            sa = x[0];
        }
        let want = x[0]
            + x[1] * 3
            + x[2] * 5
            + x[3] * 7
            + arr[1][0] * 11
            + arr[2][1] * 13
            + sa * 17
            + sb[1] * 19
            + dyn_[((l + 1) % 4) as usize] * 23;
        assert_eq!(out[l as usize], want, "invocation {l}");
    }
}

/// 8- and 16-bit loads whose lanes all point into one buffer take a path checked once per
/// column (`load_narrow_fast`); a lane past the end still fails alone and by name, and robust
/// access still reads it as zero. Every lane active (128 invocations, one subgroup-aligned
/// batch), so the one-check path is the one tried.
/// Function arrays indexed by computed values live in registers too ([`Op::IndexChain`]):
/// llama.cpp's matrix-vector shaders keep `temp[j][n]` with both bounds specialization
/// constants, so the loops stay loops. Uniform indices (loop counters, a bound from push
/// constants), indices the analysis cannot prove uniform that are (a loop bound read per
/// lane, the same in every lane) or are not, per-lane indices under divergent control, and a
/// constant member before a computed index give the answers computed here (one workgroup of
/// 128, a batch of its own, so that uniform offsets take their one-copy paths); an index past its array is an
/// out-of-bounds error naming the invocation (the message is the register path's), and reads
/// zero under robust access.
#[test]
fn locals_indexed_by_computed_values_under_divergent_control() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 128) in;
layout(constant_id = 0) const uint R = 3;
layout(constant_id = 1) const uint C = 2;
layout(std430, binding = 0) buffer B { float x[256]; uint rows[2]; uint bad; float o[]; };
struct S { uint a; float v[4]; };
void main() {
    uint l = gl_LocalInvocationIndex;
    float t[C][R];
    S s;
    s.a = l;
    for (uint j = 0; j < C; ++j) for (uint n = 0; n < R; ++n) t[j][n] = float(j * 10 + n);
    for (uint k = 0; k < 4; ++k) s.v[k] = float(k);
    for (uint it = 0; it < 3; ++it)
        for (uint j = 0; j < C; ++j)
            for (uint n = 0; n < rows[l & 1u]; ++n)
                t[j][n] += x[(it * C + j) * R + n + l];
    if ((l & 1u) != 0u) { t[l % C][(l / 2u) % R] = float(l); s.v[l % 4u] += 100.0; }
    uint k = bad != 0u && l == 37u ? R + bad - 1u : l % R;
    float y = t[(l / 3u) % C][k];
    uint base = l * (C * R + 2u);
    o[base] = y + s.v[(l + 1u) % 4u] * 1000.0;
    for (uint j = 0; j < C; ++j) for (uint n = 0; n < R; ++n) o[base + 1u + j * R + n] = t[j][n];
    o[base + 1u + C * R] = float(s.a);
}"#,
    ) else {
        return;
    };
    let (r, c) = (3usize, 2usize);
    let stride = c * r + 2;
    let x: Vec<f32> = (0..256).map(|i| (i * 7 % 13) as f32 * 0.25).collect();
    let input = |rows: [u32; 2], bad: u32| {
        let mut b = bytes_f32(&x);
        b.extend(bytes_u32(&rows));
        b.extend(bad.to_le_bytes());
        b.extend(vec![0; 128 * stride * 4]);
        b
    };
    let want = |rows: [u32; 2], lane37: Option<f32>| {
        let mut out = Vec::new();
        for l in 0..128usize {
            let mut t = [[0f32; 3]; 2];
            let mut v = [0f32, 1.0, 2.0, 3.0];
            for (j, row) in t.iter_mut().enumerate() {
                for (n, e) in row.iter_mut().enumerate() {
                    *e = (j * 10 + n) as f32;
                }
            }
            for it in 0..3 {
                for (j, row) in t.iter_mut().enumerate() {
                    for (n, e) in row.iter_mut().enumerate().take(rows[l & 1] as usize) {
                        *e += x[(it * c + j) * r + n + l];
                    }
                }
            }
            if l & 1 != 0 {
                t[l % c][(l / 2) % r] = l as f32;
                v[l % 4] += 100.0;
            }
            let y = match lane37 {
                Some(y) if l == 37 => y,
                _ => t[(l / 3) % c][l % r],
            };
            out.push(y + v[(l + 1) % 4] * 1000.0);
            out.extend(t.iter().flatten());
            out.push(l as f32);
        }
        out
    };
    for rows in [[3, 3], [2, 2], [0, 0], [3, 1]] {
        let out = f32s(&one_buffer(&m, input(rows, 0), [1, 1, 1], 0));
        assert_eq!(out[259..], want(rows, None)[..], "rows {rows:?}");
    }
    // Lane 37 reads t[0][3]: past the end of its row (4 of 6 is still inside the variable).
    let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &Default::default())
        .unwrap();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), input([3, 3], 1));
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::OutOfBounds, "{e}");
    assert!(
        e.to_string()
            .contains("past the end of its array in a Function variable"),
        "{e}"
    );
    assert!(e.place.contains("local invocation (37, 0, 0)"), "{e}");
    let robust = EngineOptions {
        robust: true,
        ..Default::default()
    };
    let mut res = Resources::default();
    res.buffers.insert((0, 0), input([3, 3], 1));
    run(&m, &mut res, [1, 1, 1], &robust);
    assert_eq!(
        f32s(&res.buffers[&(0, 0)])[259..],
        want([3, 3], Some(0.0))[..]
    );
}

#[test]
fn narrow_loads_of_one_buffer_check_the_furthest_lane() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 128) in;
layout(std430, binding = 0) readonly buffer A { uint16_t h[]; };
layout(std430, binding = 1) readonly buffer C { uint8_t q[]; };
layout(std430, binding = 2) buffer B { uint o[]; };
layout(push_constant) uniform P { uint off; };
void main() {
    uint i = gl_LocalInvocationID.x;
    o[i] = uint(h[i * 3u + off]) + (uint(q[i * 5u + off]) << 16);
}"#,
    ) else {
        return;
    };
    let words: Vec<u8> = (0..400u16)
        .flat_map(|x| (x * 7 + 1).to_le_bytes())
        .collect();
    let bytes: Vec<u8> = (0..700u32).map(|x| (x * 13 % 251) as u8).collect();
    let setup = |off: u32| {
        let mut res = Resources::default();
        res.buffers.insert((0, 0), words.clone());
        res.buffers.insert((0, 1), bytes.clone());
        res.buffers.insert((0, 2), vec![0; 512]);
        res.push_constants = off.to_le_bytes().to_vec();
        res
    };
    let compile = |robust| {
        coopmat_exec::Pipeline::compile(
            &m,
            "main",
            &Default::default(),
            &EngineOptions {
                robust,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let want = |off: u32, i: u32| {
        let h = (i * 3 + off) as usize;
        let q = (i * 5 + off) as usize;
        let hv = if h < 400 { h as u32 * 7 + 1 } else { 0 };
        let qv = if q < 700 {
            (q as u32 * 13 % 251) << 16
        } else {
            0
        };
        hv + qv
    };
    let mut res = setup(2);
    compile(false).dispatch(&mut res, [1, 1, 1]).unwrap();
    let out = u32s(&res.buffers[&(0, 2)]);
    assert!(
        (0..128).all(|i| out[i as usize] == want(2, i)),
        "{:?}",
        &out[..8]
    );
    // off = 66: h[i·3 + 66] passes the end (400 halves) from lane 112 on.
    let mut res = setup(66);
    let e = compile(false).dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::OutOfBounds, "{e}");
    assert!(e.place.contains("local invocation (112, 0, 0)"), "{e}");
    let mut res = setup(66);
    compile(true).dispatch(&mut res, [1, 1, 1]).unwrap();
    let out = u32s(&res.buffers[&(0, 2)]);
    assert!(
        (0..128).all(|i| out[i as usize] == want(66, i)),
        "{:?}",
        &out[108..116]
    );
}

/// A subgroup barrier (OpControlBarrier with Subgroup execution scope) asks only the subgroup
/// to be there: in a branch taken by some subgroups and not others it runs (ggml's KHR
/// cooperative-matrix matmuls do this), with the subgroup's shared-memory writes visible after
/// it; in a branch that splits a subgroup it is a divergent-barrier error, as a workgroup
/// barrier in a branch that splits the workgroup is.
#[test]
fn subgroup_barriers_need_only_their_subgroup() {
    use coopmat_exec::ErrorKind;
    let src = |cond: &str| {
        format!(
            r#"#version 450
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 128) in;
layout(std430, binding = 0) buffer B {{ uint a[128]; }};
shared uint s[128];
void main() {{
    uint i = gl_LocalInvocationIndex;
    s[i] = i * 3u;
    if ({cond}) {{
        subgroupBarrier();
        a[i] = s[i ^ 1u] + 1u;
    }} else {{
        a[i] = 7u;
    }}
}}"#
        )
    };
    let Some(m) = glsl(&src("gl_SubgroupID % 2u == 1u")) else {
        return;
    };
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 512]);
    let opts = EngineOptions::default();
    run(&m, &mut res, [1, 1, 1], &opts);
    let out = u32s(&res.buffers[&(0, 0)]);
    let sg = opts.subgroup_size as usize;
    for (i, &x) in out.iter().enumerate() {
        let want = if (i / sg) % 2 == 1 {
            (i as u32 ^ 1) * 3 + 1
        } else {
            7
        };
        assert_eq!(x, want, "invocation {i}");
    }
    let Some(m) = glsl(&src("gl_SubgroupInvocationID < 5u")) else {
        return;
    };
    let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &opts).unwrap();
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::DivergentBarrier, "{e}");
}

/// Stores of byte and 16-bit vectors write what their component stores would, a word at a
/// time where the components fill whole words (u8vec4, i8vec4, u16vec2, u16vec4); a u8vec2 (half
/// a word) leaves the other half as it was. Values chosen so that every byte differs from the
/// buffer's fill and masking a component to its width matters (negative i8s).
#[test]
fn narrow_vector_stores_write_their_bytes() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { u8vec4 a[]; };
layout(std430, binding = 1) buffer B { i8vec4 b[]; };
layout(std430, binding = 2) buffer C { u16vec2 c[]; };
layout(std430, binding = 3) buffer D { u16vec4 d[]; };
layout(std430, binding = 4) buffer E { u8vec2 e[]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    a[i] = u8vec4(i, i + 1u, 255u - i, i * 3u);
    b[i] = i8vec4(-int(i), int(i), -1, -128);
    c[i] = u16vec2(i * 1000u, 65535u - i);
    d[i] = u16vec4(i, i << 8, 40000u + i, 7u);
    e[2u * i + 1u] = u8vec2(i + 7u, 200u - i);
}"#,
    ) else {
        return;
    };
    let mut res = Resources::default();
    for (b, len) in [(0, 256), (1, 256), (2, 256), (3, 512), (4, 256)] {
        res.buffers.insert((0, b), vec![0xa5; len]);
    }
    let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &Default::default())
        .unwrap();
    p.dispatch(&mut res, [1, 1, 1]).unwrap();
    for i in 0..64usize {
        let u = i as u32;
        let at = |b: u32, k: usize| &res.buffers[&(0, b)][k..];
        assert_eq!(
            at(0, 4 * i)[..4],
            [u as u8, (u + 1) as u8, (255 - u) as u8, (u * 3) as u8]
        );
        let bi = [(-(u as i32)) as u8, u as u8, 0xff, 0x80];
        assert_eq!(at(1, 4 * i)[..4], bi, "i8vec4 {i}");
        let c: Vec<u8> = [((u * 1000) & 0xffff) as u16, (65535 - u) as u16]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(at(2, 4 * i)[..4], c[..], "u16vec2 {i}");
        let d: Vec<u8> = [u as u16, ((u << 8) & 0xffff) as u16, (40000 + u) as u16, 7]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(at(3, 8 * i)[..8], d[..], "u16vec4 {i}");
        let e = [0xa5, 0xa5, (u + 7) as u8, (200 - u) as u8];
        assert_eq!(at(4, 4 * i)[..4], e, "u8vec2 {i} and the half beside it");
    }
}

/// `EngineOptions::profile_ops`: the call counts follow the trip count of a loop the compiler
/// cannot unroll (exactly proportional in the called function), the callee's ops are timed
/// under its own name, and each op's time is its own: the Call op's does not include its
/// callee's (the sum of all op times stays within the dispatch's time on one thread, which
/// inclusive times would pass nearly twice over). Without the option nothing is timed.
#[test]
fn op_profile_counts_and_times_each_op_once() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B { uint n; float v[]; };
float work(float f) {
    for (uint j = 0u; j < 64u; j++) {
        f = f * 0.999 + 0.25;
    }
    return f;
}
void main() {
    float f = float(gl_LocalInvocationIndex);
    for (uint i = 0u; i < n; i++) {
        f = work(f);
    }
    v[gl_GlobalInvocationID.x] = f;
}"#,
    ) else {
        return;
    };
    let profile = |n: u32, on: bool| {
        let mut data = n.to_le_bytes().to_vec();
        data.resize(4 + 4 * 64, 0);
        let mut res = Resources::default();
        res.buffers.insert((0, 0), data);
        let opts = EngineOptions {
            threads: 1,
            profile_ops: on,
            ..Default::default()
        };
        let st = run(&m, &mut res, [2, 1, 1], &opts);
        (st, res.buffers.remove(&(0, 0)).unwrap())
    };
    let (plain, plain_out) = profile(20, false);
    assert!(plain.op_times.is_empty());
    let (st20, out20) = profile(20, true);
    assert_eq!(out20, plain_out, "profiling changed the output");
    let (st40, _) = profile(40, true);
    let callee = |st: &coopmat_exec::DispatchStats| -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = st
            .op_times
            .iter()
            .filter(|t| t.function.starts_with("work"))
            .map(|t| (t.op.to_string(), t.calls))
            .collect();
        v.sort();
        v
    };
    let (c20, c40) = (callee(&st20), callee(&st40));
    assert!(!c20.is_empty(), "no ops of work(): {:?}", st20.op_times);
    // Each call of work() runs the same ops: twice the calls, twice every count.
    for ((op, a), (op2, b)) in c20.iter().zip(&c40) {
        assert_eq!(op, op2);
        assert_eq!(*b, 2 * a, "{op}: {a} calls at n = 20, {b} at n = 40");
    }
    let calls = |st: &coopmat_exec::DispatchStats| {
        st.op_times
            .iter()
            .filter(|t| t.op == "Call" && t.function == "main")
            .map(|t| t.calls)
            .sum::<u64>()
    };
    // n calls a batch (the two workgroups may share one).
    assert!(
        calls(&st20) > 0 && calls(&st20) % 20 == 0,
        "{:?}",
        st20.op_times
    );
    assert_eq!(calls(&st40), 2 * calls(&st20));
    for st in [&st20, &st40] {
        let all: std::time::Duration = st.op_times.iter().map(|t| t.time).sum();
        let inner: std::time::Duration = st
            .op_times
            .iter()
            .filter(|t| t.function.starts_with("work"))
            .map(|t| t.time)
            .sum();
        assert!(
            all <= st.elapsed,
            "op times {all:?} > dispatch {:?}",
            st.elapsed
        );
        // Nearly all the work is inside work().
        assert!(inner * 2 > all, "work() {inner:?} of {all:?}");
    }
}

/// OpSwitch whose selector every active lane shares takes one case search for all of them; one
/// that differs in a single lane (the batch's first, its last, a lane of a partial mask) must
/// still send each lane its own way. Signed selectors too (-1 as a case).
#[test]
fn switches_on_shared_and_nearly_shared_selectors() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { int a[]; };
int pick(int s) {
    switch (s) {
        case -1: return 11;
        case 2: return 22;
        case 5: return 55;
        case 7: return 77;
        default: return 99;
    }
}
void main() {
    uint i = gl_GlobalInvocationID.x;
    int s = a[i];
    int r = pick(s);
    // A partial mask: only the odd invocations switch again.
    if ((i & 1u) == 1u) {
        switch (s) {
            case 5: r += 1000; break;
            case -1: r += 2000; break;
            default: r += 3000; break;
        }
    }
    a[i] = r;
}"#,
    ) else {
        return;
    };
    let groups = 6usize;
    let mut a = vec![2i32; 64 * groups];
    // Workgroup 1: the last lane differs; 2: the first; 3: one odd lane; 4: all -1; 5: mixed.
    a[64 + 63] = 7;
    a[128] = 1;
    a[192..256].fill(5);
    a[192 + 33] = -1;
    a[256..320].fill(-1);
    for (j, x) in a[320..384].iter_mut().enumerate() {
        *x = [2, 5, 7, -1, 3][j % 5];
    }
    let want: Vec<i32> = (0..a.len())
        .map(|i| {
            let s = a[i];
            let mut r = match s {
                -1 => 11,
                2 => 22,
                5 => 55,
                7 => 77,
                _ => 99,
            };
            if i % 2 == 1 {
                r += match s {
                    5 => 1000,
                    -1 => 2000,
                    _ => 3000,
                };
            }
            r
        })
        .collect();
    let bytes: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
    for threads in [1, 2] {
        let out = one_buffer(&m, bytes.clone(), [groups as u32, 1, 1], threads);
        let got: Vec<i32> = out
            .chunks(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, want, "threads {threads}");
    }
}
