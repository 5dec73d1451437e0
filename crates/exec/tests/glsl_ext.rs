//! GLSL.std.450 Frexp/Modf/packing/Determinant/MatrixInverse, OpArrayLength and buffer reuse
//! across dispatches, checked against references computed here in Rust.

mod common;
use common::*;
use coopmat_exec::{EngineOptions, Pipeline, Resources};

#[test]
fn frexp_modf_pack_determinant_inverse_arraylength() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer B { float x[8]; float o[8 * 16]; int e[8]; uint pk[8 * 4]; uint len; float extra[]; };
void main() {
    uint i = gl_LocalInvocationIndex;
    float v = x[i];
    int ex;
    o[i * 16 + 0] = frexp(v, ex);
    e[i] = ex;
    float w;
    o[i * 16 + 1] = modf(v, w);
    o[i * 16 + 2] = w;
    vec4 c = vec4(v, -v, v * 0.25, 0.3);
    pk[i * 4 + 0] = packUnorm4x8(c);
    pk[i * 4 + 1] = packSnorm2x16(c.xy);
    vec4 u = unpackSnorm4x8(pk[i * 4 + 0]);
    o[i * 16 + 3] = u.x;
    vec2 h = unpackUnorm2x16(pk[i * 4 + 1]);
    o[i * 16 + 4] = h.y;
    mat3 mm = mat3(v, 1.0, 2.0, 0.5, v + 3.0, 1.0, -1.0, 2.0, 4.0);
    o[i * 16 + 5] = determinant(mm);
    mat3 inv = inverse(mm);
    for (int k = 0; k < 9; k++) o[i * 16 + 6 + k] = inv[k / 3][k % 3];
    if (i == 0u) len = uint(extra.length());
}"#,
    ) else {
        return;
    };
    let xs = [1.5f32, -0.375, 10.0, 0.0, -7.25, 0.75, 3.0e-3, -1.0];
    // Layout: x 32 bytes, o 512, e 32, pk 128, len 4 (then 4 of padding? no: float extra[] aligns to 4).
    let extra = 5;
    let size = 32 + 512 + 32 + 128 + 4 + 4 * extra;
    let mut data = vec![0u8; size];
    data[..32].copy_from_slice(&bytes_f32(&xs));
    let mut res = Resources::default();
    res.buffers.insert((0, 0), data);
    run(&m, &mut res, [1, 1, 1], &EngineOptions::default());
    let b = &res.buffers[&(0, 0)];
    let o = f32s(&b[32..544]);
    let e = i32s(&b[544..576]);
    let pk = u32s(&b[576..704]);
    let len = u32s(&b[704..708])[0];
    assert_eq!(len, extra as u32);
    for (i, &v) in xs.iter().enumerate() {
        let r = &o[i * 16..i * 16 + 16];
        // frexp: v = m · 2^e with 0.5 <= |m| < 1.
        if v == 0.0 {
            assert_eq!((r[0], e[i]), (0.0, 0));
        } else {
            assert!((0.5..1.0).contains(&r[0].abs()), "frexp({v}) = {}", r[0]);
            assert_eq!(r[0] as f64 * 2f64.powi(e[i]), v as f64, "frexp({v})");
        }
        assert_eq!(r[1], v.fract(), "modf fract of {v}");
        assert_eq!(r[2], v.trunc(), "modf whole of {v}");
        let c = [v, -v, v * 0.25, 0.3];
        let unorm = |f: f32, s: f32| (f.clamp(0.0, 1.0) * s).round() as u32;
        let snorm = |f: f32, s: f32| ((f.clamp(-1.0, 1.0) * s).round() as i32) as u32;
        let want0 = (0..4).fold(0u32, |a, k| a | (unorm(c[k], 255.0) << (8 * k)));
        let want1 = (snorm(c[0], 32767.0) & 0xffff) | (snorm(c[1], 32767.0) << 16);
        assert_eq!(pk[i * 4], want0, "packUnorm4x8 {c:?}");
        assert_eq!(pk[i * 4 + 1], want1, "packSnorm2x16 {c:?}");
        let sx = ((want0 & 0xff) as u8 as i8 as f32 / 127.0).clamp(-1.0, 1.0);
        assert_eq!(r[3], sx, "unpackSnorm4x8");
        assert_eq!(r[4], (want1 >> 16) as f32 / 65535.0, "unpackUnorm2x16");
        // Determinant and inverse in f64; the engine's f32 results within a few ulps.
        let a = [
            [v as f64, 1.0, 2.0],
            [0.5, v as f64 + 3.0, 1.0],
            [-1.0, 2.0, 4.0],
        ]; // a[col][row]
        let at = |r: usize, c: usize| a[c][r];
        let minor = |r: usize, c: usize| {
            let rs: Vec<usize> = (0..3).filter(|&x| x != r).collect();
            let cs: Vec<usize> = (0..3).filter(|&x| x != c).collect();
            at(rs[0], cs[0]) * at(rs[1], cs[1]) - at(rs[0], cs[1]) * at(rs[1], cs[0])
        };
        let det: f64 = (0..3)
            .map(|r| at(r, 0) * minor(r, 0) * if r.is_multiple_of(2) { 1.0 } else { -1.0 })
            .sum();
        let close = |got: f32, want: f64| (got as f64 - want).abs() <= 1e-5 * want.abs().max(1.0);
        assert!(close(r[5], det), "determinant {} vs {det}", r[5]);
        for k in 0..9usize {
            let (col, row) = (k / 3, k % 3);
            let sign = if (row + col).is_multiple_of(2) {
                1.0
            } else {
                -1.0
            };
            let want = sign * minor(col, row) / det;
            assert!(
                close(r[6 + k], want),
                "inverse[{col}][{row}] {} vs {want}",
                r[6 + k]
            );
        }
    }
}

#[test]
fn buffers_survive_repeated_dispatches_of_changing_sizes() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer B { uint v[]; };
layout(std430, binding = 1) buffer C { uint w[]; };
void main() { v[0] += 1u; w[w.length() - 1u] = v.length(); }"#,
    ) else {
        return;
    };
    let p = Pipeline::compile(&m, "main", &Default::default(), &EngineOptions::default()).unwrap();
    for (nv, nw) in [(4usize, 64usize), (64, 4), (9, 9), (1000, 3)] {
        let mut res = Resources::default();
        let v: Vec<u8> = (0..nv * 4 + 2).map(|i| i as u8).collect();
        res.buffers.insert((0, 0), v.clone());
        res.buffers.insert((0, 1), vec![0xee; nw * 4]);
        p.dispatch(&mut res, [1, 1, 1]).unwrap();
        let mut want = v.clone();
        let first = u32::from_le_bytes(v[..4].try_into().unwrap()) + 1;
        want[..4].copy_from_slice(&first.to_le_bytes());
        assert_eq!(res.buffers[&(0, 0)], want, "sizes {nv} {nw}");
        let w = u32s(&res.buffers[&(0, 1)]);
        assert_eq!(w[nw - 1], nv as u32);
        assert!(w[..nw - 1].iter().all(|&x| x == 0xeeeeeeee));
    }
}

/// OpGroupIAdd / OpGroupBroadcast / OpGroupAny with Subgroup scope (uniform control flow).
#[test]
fn group_ops_with_subgroup_scope() {
    let Some(m) = spvasm(
        r#"
               OpCapability Shader
               OpCapability Groups
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %lid
               OpExecutionMode %main LocalSize 64 1 1
               OpDecorate %lid BuiltIn LocalInvocationIndex
               OpDecorate %rt ArrayStride 4
               OpDecorate %S Block
               OpMemberDecorate %S 0 Offset 0
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
         %rt = OpTypeRuntimeArray %uint
          %S = OpTypeStruct %rt
       %ptrS = OpTypePointer StorageBuffer %S
       %ptru = OpTypePointer StorageBuffer %uint
      %ptrin = OpTypePointer Input %uint
        %lid = OpVariable %ptrin Input
        %buf = OpVariable %ptrS StorageBuffer
       %zero = OpConstant %uint 0
      %three = OpConstant %uint 3
        %c50 = OpConstant %uint 50
         %sg = OpConstant %uint 3
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %l = OpLoad %uint %lid
          %s = OpGroupIAdd %uint %sg Reduce %l
          %x = OpIMul %uint %l %l
          %b = OpGroupBroadcast %uint %sg %x %three
          %q = OpUGreaterThan %bool %l %c50
          %y = OpGroupAny %bool %sg %q
         %ys = OpSelect %uint %y %c50 %zero
         %t0 = OpIAdd %uint %s %b
          %t = OpIAdd %uint %t0 %ys
          %p = OpAccessChain %ptru %buf %zero %l
               OpStore %p %t
               OpReturn
               OpFunctionEnd
"#,
    ) else {
        return;
    };
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 64 * 4]);
    run(&m, &mut res, [1, 1, 1], &EngineOptions::default());
    let out = u32s(&res.buffers[&(0, 0)]);
    for (l, &v) in out.iter().enumerate() {
        let base = l as u32 / 32 * 32;
        let sum: u32 = (base..base + 32).sum();
        let bc = (base + 3) * (base + 3);
        let any = if base + 31 > 50 { 50 } else { 0 };
        assert_eq!(v, sum + bc + any, "lane {l}");
    }
}

/// Loop-carried cooperative matrices: the back-edge value takes the phi's slot only where the
/// old value is dead (here it is still stored after the new one is computed).
#[test]
fn loop_carried_matrices_keep_old_values_alive_where_read() {
    let Some(m) = glsl_opt(
        r#"#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B { float o[]; };
void main() {
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(1.0);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> two =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(2.0);
    for (uint i = 0; i < 4u; i++) {
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> next = acc * two;
        coopMatStore(acc, o, i * 256u, 16u, gl_CooperativeMatrixLayoutRowMajor);
        acc = next;
    }
    coopMatStore(acc, o, 4u * 256u, 16u, gl_CooperativeMatrixLayoutRowMajor);
}"#,
        true,
    ) else {
        return;
    };
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 5 * 256 * 4]);
    run(&m, &mut res, [1, 1, 1], &EngineOptions::default());
    let o = f32s(&res.buffers[&(0, 0)]);
    for i in 0..4 {
        let want = 2f32.powi(i as i32);
        assert!(
            o[i * 256..(i + 1) * 256].iter().all(|&x| x == want),
            "iteration {i}"
        );
    }
    assert!(o[1024..].iter().all(|&x| x == 16.0), "{:?}", &o[1024..1028]);
}

#[test]
fn arrays_of_buffer_descriptors_index_the_bound_buffers() {
    // An array of 3 storage blocks and a runtime-sized array of uniform-like blocks, indexed
    // by a per-invocation value; each invocation sums one element of every buffer it picks.
    let Some(m) = glsl(
        r#"#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer In { uint v[]; } ins[3];
layout(std430, binding = 1) readonly buffer More { uint w[4]; } more[];
layout(std430, binding = 2) buffer Out { uint o[]; };
void main() {
    uint i = gl_LocalInvocationIndex;
    uint k = i % 3;
    o[i] = ins[nonuniformEXT(k)].v[i] + more[nonuniformEXT(i % 2)].w[i % 4] * 1000u;
    ins[nonuniformEXT(k)].v[i] = 7u;
}"#,
    ) else {
        return;
    };
    let mut res = Resources::default();
    let ins: Vec<Vec<u32>> = (0..3u32)
        .map(|b| (0..8).map(|i| 100 * b + i).collect())
        .collect();
    let more: Vec<Vec<u32>> = (0..2u32)
        .map(|b| (0..4).map(|i| 10 * b + i).collect())
        .collect();
    res.buffer_arrays
        .insert((0, 0), ins.iter().map(|v| bytes_u32(v)).collect());
    res.buffer_arrays
        .insert((0, 1), more.iter().map(|v| bytes_u32(v)).collect());
    res.buffers.insert((0, 2), vec![0; 32]);
    run(&m, &mut res, [1, 1, 1], &EngineOptions::default());
    let o = u32s(&res.buffers[&(0, 2)]);
    for i in 0..8u32 {
        let want =
            ins[(i % 3) as usize][i as usize] + more[(i % 2) as usize][(i % 4) as usize] * 1000;
        assert_eq!(o[i as usize], want, "invocation {i}");
    }
    // The writes went to the buffer each invocation picked, and only there.
    for b in 0..3u32 {
        let v = u32s(&res.buffer_arrays[&(0, 0)][b as usize]);
        for i in 0..8u32 {
            let want = if i % 3 == b { 7 } else { 100 * b + i };
            assert_eq!(v[i as usize], want, "buffer {b} element {i}");
        }
    }
    // An index past the bound buffers is an error naming it.
    let mut res2 = res.clone();
    res2.buffer_arrays.insert((0, 1), vec![bytes_u32(&[0; 4])]);
    let p = Pipeline::compile(&m, "main", &Default::default(), &EngineOptions::default()).unwrap();
    let e = p.dispatch(&mut res2, [1, 1, 1]).unwrap_err();
    assert!(
        e.to_string()
            .contains("descriptor index 1 is outside the 1 buffers bound at set 0, binding 1"),
        "{e}"
    );
}

/// SPV_KHR_integer_dot_product (GL_EXT_integer_dot_product): the packed 4x8-bit and vector
/// forms of OpSDot, OpUDot, OpSUDot and the AccSat forms, against sums computed here.
#[test]
fn integer_dot_products_packed_and_vector() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_EXT_integer_dot_product : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer In { int x[]; } inb;
layout(set = 0, binding = 1) buffer Out { int y[]; } outb;
void main() {
  uint i = gl_GlobalInvocationID.x;
  int a = inb.x[i], b = inb.x[i + 32];
  outb.y[i * 6 + 0] = dotPacked4x8EXT(a, b);
  outb.y[i * 6 + 1] = int(dotPacked4x8EXT(uint(a), uint(b)));
  outb.y[i * 6 + 2] = dotPacked4x8EXT(a, uint(b));
  outb.y[i * 6 + 3] = dotPacked4x8AccSatEXT(a, b, inb.x[i + 64]);
  outb.y[i * 6 + 4] = dotEXT(unpack8(a), unpack8(b));
  outb.y[i * 6 + 5] = int(dotAccSatEXT(unpack8(uint(a)), unpack8(uint(b)), uint(inb.x[i + 64])));
}"#,
    ) else {
        return;
    };
    // Words with extreme bytes (-128, 127, 255) and accumulators near both ends of the range.
    let mut st = 0x9E37_79B9u32;
    let mut x: Vec<u32> = (0..96)
        .map(|_| {
            st ^= st << 13;
            st ^= st >> 17;
            st ^= st << 5;
            st
        })
        .collect();
    x[0] = 0x8080_8080;
    x[32] = 0x8080_8080;
    x[64] = 0x7fff_0000;
    x[1] = 0xffff_ffff;
    x[33] = 0xffff_ffff;
    x[65] = 0xffff_ff00;
    let mut res = Resources::default();
    res.buffers
        .insert((0, 0), x.iter().flat_map(|v| v.to_le_bytes()).collect());
    res.buffers.insert((0, 1), vec![0; 32 * 6 * 4]);
    run(&m, &mut res, [1, 1, 1], &EngineOptions::default());
    let y = i32s(&res.buffers[&(0, 1)]);
    let s = |v: u32| (0..4).map(move |k| (v >> (8 * k)) as u8 as i8 as i64);
    let u = |v: u32| (0..4).map(move |k| (v >> (8 * k)) as u8 as i64);
    for i in 0..32 {
        let (a, b, c) = (x[i], x[i + 32], x[i + 64]);
        let ss: i64 = s(a).zip(s(b)).map(|(p, q)| p * q).sum();
        let uu: i64 = u(a).zip(u(b)).map(|(p, q)| p * q).sum();
        let su: i64 = s(a).zip(u(b)).map(|(p, q)| p * q).sum();
        let want = [
            ss as i32,
            uu as u32 as i32,
            su as i32,
            (ss + c as i32 as i64).clamp(i32::MIN as i64, i32::MAX as i64) as i32,
            ss as i32,
            (uu + c as i64).min(u32::MAX as i64) as u32 as i32,
        ];
        assert_eq!(&y[i * 6..i * 6 + 6], &want, "invocation {i}");
    }
}
