//! Cooperative matrices (KHR and NV): GLSL compiled at test time, results checked against
//! references computed here. Integer results are exact; float results within stated bounds.

mod common;
use common::*;
use coopmat_exec::{EngineOptions, Resources};
use half::{bf16, f16};

const HDR: &str = COOPMAT_HDR;

fn run_bufs(
    m: &coopmat_spirv::Module,
    bufs: Vec<Vec<u8>>,
    groups: [u32; 3],
    opts: &EngineOptions,
) -> Vec<Vec<u8>> {
    let mut res = Resources::default();
    for (i, b) in bufs.into_iter().enumerate() {
        res.buffers.insert((0, i as u32), b);
    }
    run(m, &mut res, groups, opts);
    res.buffers.into_values().collect()
}

#[test]
fn load_store_layouts_and_strides() {
    let Some(m) = glsl(&format!(
        r#"{HDR}
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer I {{ float inp[]; }};
layout(std430, binding = 1) buffer O {{ float outp[]; }};
void main() {{
    coopmat<float, gl_ScopeSubgroup, 16, 8, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, inp, 3, 20, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, outp, 5, 24, gl_CooperativeMatrixLayoutColumnMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 8, gl_MatrixUseAccumulator> t;
    coopMatLoad(t, inp, 7, 17, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatStore(t, outp, 400, 9, gl_CooperativeMatrixLayoutRowMajor);
}}"#
    )) else {
        return;
    };
    let inp: Vec<f32> = (0..600).map(|i| i as f32 * 1.5 - 7.0).collect();
    let out = run_bufs(
        &m,
        vec![bytes_f32(&inp), vec![0; 4 * 600]],
        [1, 1, 1],
        &EngineOptions::default(),
    );
    let o = f32s(&out[1]);
    for r in 0..16 {
        for c in 0..8 {
            assert_eq!(
                o[5 + c * 24 + r],
                inp[3 + r * 20 + c],
                "row-major load / col-major store ({r},{c})"
            );
            assert_eq!(
                o[400 + r * 9 + c],
                inp[7 + c * 17 + r],
                "col-major load / row-major store ({r},{c})"
            );
        }
    }
}

fn f16s(n: usize, rng: &mut Rng) -> Vec<f16> {
    (0..n)
        .map(|_| f16::from_f32((rng.below(2001) as f32 - 1000.0) / 256.0))
        .collect()
}

#[test]
fn muladd_f16_to_f32() {
    let Some(m) = glsl(&format!(
        r#"{HDR}
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A {{ float16_t a[]; }};
layout(std430, binding = 1) buffer B {{ float16_t b[]; }};
layout(std430, binding = 2) buffer C {{ float c[]; }};
void main() {{
    uint sg = gl_SubgroupID;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mc;
    coopMatLoad(ma, a, sg * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, 0, 16, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatLoad(mc, c, sg * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    mc = coopMatMulAdd(ma, mb, mc);
    coopMatStore(mc, c, sg * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}}"#
    )) else {
        return;
    };
    let mut rng = Rng(3);
    let a = f16s(512, &mut rng);
    let b = f16s(256, &mut rng);
    let c: Vec<f32> = (0..512).map(|i| i as f32 * 0.25).collect();
    let hb = |v: &[f16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let out = run_bufs(
        &m,
        vec![hb(&a), hb(&b), bytes_f32(&c)],
        [1, 1, 1],
        &EngineOptions::default(),
    );
    let o = f32s(&out[2]);
    for s in 0..2 {
        for i in 0..16 {
            for j in 0..16 {
                let mut exact = c[s * 256 + i * 16 + j] as f64;
                let mut mag = exact.abs();
                for k in 0..16 {
                    // B is column-major: element (k, j) at j*16 + k.
                    let p = a[s * 256 + i * 16 + k].to_f64() * b[j * 16 + k].to_f64();
                    exact += p;
                    mag += p.abs();
                }
                // f32 accumulation of 16 exact products: |error| <= 17 * 2^-24 * sum|terms|.
                let got = o[s * 256 + i * 16 + j] as f64;
                assert!(
                    (got - exact).abs() <= 17.0 * mag * 2f64.powi(-24),
                    "({s},{i},{j}) {got} vs {exact}"
                );
            }
        }
    }
}

/// One load op whose subgroups read the same tile (a GEMM's workgroup loads each staged tile
/// twice; the engine loads it once and copies it): A row-major shared by subgroups 0, 1 and
/// by 2, 3; B at one address for all, with a stride that differs between 0, 1 and 2, 3 (so
/// not the same tile); C column-major f32 shared by 0, 2 and by 1, 3. Small integers: every
/// result exact.
#[test]
fn subgroups_loading_one_tile() {
    let Some(m) = glsl(&format!(
        r#"{HDR}
layout(local_size_x = 128) in;
layout(std430, binding = 0) buffer A {{ float16_t a[]; }};
layout(std430, binding = 1) buffer C {{ float c[]; }};
layout(std430, binding = 2) buffer D {{ float d[]; }};
void main() {{
    uint sg = gl_SubgroupID;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mc;
    coopMatLoad(ma, a, (sg / 2) * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, a, 512, 16 + 16 * (sg / 2), gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mc, c, (sg % 2) * 256, 16, gl_CooperativeMatrixLayoutColumnMajor);
    mc = coopMatMulAdd(ma, mb, mc);
    coopMatStore(mc, d, sg * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}}"#
    )) else {
        return;
    };
    let a: Vec<f16> = (0..1024)
        .map(|i| f16::from_f32(((i * 7) % 9) as f32 - 4.0))
        .collect();
    let c: Vec<f32> = (0..512).map(|i| ((i * 5) % 11) as f32).collect();
    let hb = |v: &[f16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let out = run_bufs(
        &m,
        vec![hb(&a), bytes_f32(&c), vec![0; 4 * 1024]],
        [1, 1, 1],
        &EngineOptions::default(),
    );
    let d = f32s(&out[2]);
    for sg in 0..4 {
        let (ao, stride, co) = ((sg / 2) * 256, 16 + 16 * (sg / 2), (sg % 2) * 256);
        for i in 0..16 {
            for j in 0..16 {
                let mut want = c[co + j * 16 + i];
                for k in 0..16 {
                    want += a[ao + i * 16 + k].to_f32() * a[512 + k * stride + j].to_f32();
                }
                assert_eq!(d[sg * 256 + i * 16 + j], want, "subgroup {sg} ({i},{j})");
            }
        }
    }
}

#[test]
fn muladd_f32_with_workgroup_scope_and_shared_memory() {
    let Some(m) = glsl(&format!(
        r#"{HDR}
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A {{ float a[]; }};
layout(std430, binding = 1) buffer C {{ float c[]; }};
shared float sa[16 * 8];
void main() {{
    uint l = gl_LocalInvocationID.x;
    sa[l] = a[l];
    sa[l + 64] = a[l + 64];
    barrier();
    coopmat<float, gl_ScopeWorkgroup, 16, 8, gl_MatrixUseA> ma;
    coopmat<float, gl_ScopeWorkgroup, 8, 16, gl_MatrixUseB> mb;
    coopMatLoad(ma, sa, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, a, 128, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator> mc = coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator>(1.0);
    mc = coopMatMulAdd(ma, mb, mc);
    coopMatStore(mc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}}"#
    )) else {
        return;
    };
    let a: Vec<f32> = (0..256).map(|i| ((i * 37) % 17) as f32 - 8.0).collect();
    let out = run_bufs(
        &m,
        vec![bytes_f32(&a), vec![0; 1024]],
        [1, 1, 1],
        &EngineOptions::default(),
    );
    let o = f32s(&out[1]);
    for i in 0..16 {
        for j in 0..16 {
            let mut s = 1.0f32;
            for k in 0..8 {
                s += a[i * 8 + k] * a[128 + k * 16 + j];
            }
            // Small integers: exact.
            assert_eq!(o[i * 16 + j], s, "({i},{j})");
        }
    }
}

fn int_muladd(signed: bool, saturating: bool) {
    let (t8, t32) = if signed {
        ("int8_t", "int32_t")
    } else {
        ("uint8_t", "uint32_t")
    };
    let sat = if saturating {
        ", gl_MatrixOperandsSaturatingAccumulation"
    } else {
        ""
    };
    let Some(m) = glsl(&format!(
        r#"{HDR}
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A {{ {t8} a[]; }};
layout(std430, binding = 1) buffer C {{ {t32} c[]; }};
void main() {{
    coopmat<{t8}, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<{t8}, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopmat<{t32}, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mc;
    coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, a, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    mc = coopMatMulAdd(ma, mb, mc{sat});
    coopMatStore(mc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}}"#
    )) else {
        return;
    };
    let mut rng = Rng(if signed { 1 } else { 2 });
    let a: Vec<u8> = (0..512).map(|_| rng.next() as u8).collect();
    // Accumulators near the limits so that saturation and wrapping both happen.
    let c: Vec<u32> = (0..256)
        .map(|i| match i % 4 {
            0 => {
                if signed {
                    i32::MAX as u32 - 1000
                } else {
                    u32::MAX - 1000
                }
            }
            1 => {
                if signed {
                    (i32::MIN + 1000) as u32
                } else {
                    5
                }
            }
            _ => rng.next() as u32,
        })
        .collect();
    let out = run_bufs(
        &m,
        vec![a.clone(), bytes_u32(&c)],
        [1, 1, 1],
        &EngineOptions::default(),
    );
    let o = u32s(&out[1]);
    let ext = |x: u8| if signed { x as i8 as i64 } else { x as i64 };
    for i in 0..16 {
        for j in 0..16 {
            let mut ab = 0i64;
            for k in 0..16 {
                ab += ext(a[i * 16 + k]) * ext(a[256 + k * 16 + j]);
            }
            let cv = if signed {
                c[i * 16 + j] as i32 as i64
            } else {
                c[i * 16 + j] as i64
            };
            let exact = ab + cv;
            let want = if saturating {
                if signed {
                    exact.clamp(i32::MIN as i64, i32::MAX as i64) as u32
                } else {
                    exact.clamp(0, u32::MAX as i64) as u32
                }
            } else {
                exact as u32
            };
            assert_eq!(
                o[i * 16 + j],
                want,
                "signed={signed} sat={saturating} ({i},{j})"
            );
        }
    }
}

#[test]
fn muladd_int8_to_int32_signed_unsigned_saturating() {
    int_muladd(true, false);
    int_muladd(true, true);
    int_muladd(false, false);
    int_muladd(false, true);
}

#[test]
fn muladd_bf16() {
    let Some(m) = glsl(&format!(
        r#"{HDR}
#extension GL_EXT_bfloat16 : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A {{ bfloat16_t a[]; }};
layout(std430, binding = 1) buffer C {{ float c[]; }};
void main() {{
    coopmat<bfloat16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<bfloat16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mc = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.5);
    coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, a, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    mc = coopMatMulAdd(ma, mb, mc);
    coopMatStore(mc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}}"#
    )) else {
        return;
    };
    let mut rng = Rng(17);
    let a: Vec<bf16> = (0..512)
        .map(|_| bf16::from_f32((rng.below(2001) as f32 - 1000.0) / 64.0))
        .collect();
    let ab: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
    let out = run_bufs(
        &m,
        vec![ab, vec![0; 1024]],
        [1, 1, 1],
        &EngineOptions::default(),
    );
    let o = f32s(&out[1]);
    for i in 0..16 {
        for j in 0..16 {
            let (mut s, mut mag) = (0.5f64, 0.5f64);
            for k in 0..16 {
                let p = a[i * 16 + k].to_f64() * a[256 + k * 16 + j].to_f64();
                s += p;
                mag += p.abs();
            }
            assert!(
                (o[i * 16 + j] as f64 - s).abs() <= 17.0 * mag * 2f64.powi(-24),
                "({i},{j})"
            );
        }
    }
}

#[test]
fn length_extract_insert_follow_the_documented_mapping() {
    let Some(m) = glsl(&format!(
        r#"{HDR}
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer C {{ uint len; uint pad[3]; float c[]; }};
void main() {{
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(2.0);
    for (int i = 0; i < m.length(); i++) {{
        m[i] = m[i] * float(gl_SubgroupInvocationID) + float(i);
    }}
    coopMatStore(m, c, gl_SubgroupID * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    if (gl_LocalInvocationID.x == 0) len = uint(m.length());
}}"#
    )) else {
        return;
    };
    for sg in [16u32, 32, 64] {
        let out = run_bufs(
            &m,
            vec![vec![0; 4 * (4 + 1024)]],
            [1, 1, 1],
            &EngineOptions {
                subgroup_size: sg,
                ..Default::default()
            },
        );
        let o = f32s(&out[0][16..]);
        let s = sg as usize;
        assert_eq!(
            u32s(&out[0])[0],
            (256usize.div_ceil(s)) as u32,
            "length with subgroup {sg}"
        );
        let nsg = 64 / s;
        for g in 0..nsg {
            for e in 0..256 {
                // Element e is lane e % S, component e / S (row-major, DESIGN.md).
                let want = 2.0 * (e % s) as f32 + (e / s) as f32;
                assert_eq!(o[g * 256 + e], want, "sg={sg} group {g} element {e}");
            }
        }
    }
}

#[test]
fn elementwise_ops_and_conversions() {
    let Some(m) = glsl(&format!(
        r#"{HDR}
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A {{ float a[]; }};
layout(std430, binding = 1) buffer O {{ float o[256]; float16_t h[256]; int iv[256]; }};
void main() {{
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> x, y;
    coopMatLoad(x, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(y, a, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> r = (x + y) * x - y / x;
    r = -r * 0.5;
    coopMatStore(r, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> hx = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(x);
    coopMatStore(hx, h, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> ix = coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(y);
    ix = ix * 3 - ix;
    coopMatStore(ix, iv, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}}"#
    )) else {
        return;
    };
    let a: Vec<f32> = (0..512)
        .map(|i| {
            if i < 256 {
                (i as f32 - 127.5) * 0.37
            } else {
                (i as f32 - 300.0) * 1.7
            }
        })
        .collect();
    let out = run_bufs(
        &m,
        vec![bytes_f32(&a), vec![0; 1024 + 512 + 1024]],
        [1, 1, 1],
        &EngineOptions::default(),
    );
    let o = &out[1];
    let r = f32s(&o[..1024]);
    for e in 0..256 {
        let (x, y) = (a[e], a[256 + e]);
        let want = -((x + y) * x - y / x) * 0.5;
        assert_eq!(r[e], want, "element {e}");
        let h = f16::from_le_bytes([o[1024 + 2 * e], o[1024 + 2 * e + 1]]);
        assert_eq!(h, f16::from_f32(x));
        let iv = i32::from_le_bytes(o[1536 + 4 * e..1540 + 4 * e].try_into().unwrap());
        assert_eq!(iv, (y as i32) * 3 - (y as i32));
    }
}

#[test]
fn nv_cooperative_matrix_muladd() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A { float16_t a[]; };
layout(std430, binding = 1) buffer C { float c[]; };
void main() {
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ma;
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> mb;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 8> mc = fcoopmatNV<32, gl_ScopeSubgroup, 16, 8>(0.0);
    coopMatLoadNV(ma, a, 0, 16, false);
    coopMatLoadNV(mb, a, 256, 16, true);
    mc = coopMatMulAddNV(ma, mb, mc);
    coopMatStoreNV(mc, c, 0, 8, false);
}"#,
    ) else {
        return;
    };
    let mut rng = Rng(23);
    let a = f16s(512, &mut rng);
    let ab: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
    let out = run_bufs(
        &m,
        vec![ab, vec![0; 512]],
        [1, 1, 1],
        &EngineOptions::default(),
    );
    let o = f32s(&out[1]);
    for i in 0..16 {
        for j in 0..8 {
            let (mut s, mut mag) = (0f64, 0f64);
            for k in 0..16 {
                // B column-major with stride 16: element (k, j) at 256 + j*16 + k.
                let p = a[i * 16 + k].to_f64() * a[256 + j * 16 + k].to_f64();
                s += p;
                mag += p.abs();
            }
            assert!(
                (o[i * 8 + j] as f64 - s).abs() <= 17.0 * mag * 2f64.powi(-24),
                "({i},{j})"
            );
        }
    }
}

#[test]
fn gemm_benchmark_shader_is_correct() {
    let src =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/bench/gemm.comp")).unwrap();
    let Some(m) = glsl_opt(&src, true) else {
        return;
    };
    let n = 256usize;
    let mut rng = Rng(31);
    let a = f16s(n * n, &mut rng);
    let b = f16s(n * n, &mut rng);
    let hb = |v: &[f16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let p = coopmat_exec::Pipeline::compile(
        &m,
        "main",
        &[(0u32, n as u64)].into_iter().collect(),
        &EngineOptions::default(),
    )
    .unwrap();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), hb(&a));
    res.buffers.insert((0, 1), hb(&b));
    res.buffers.insert((0, 2), vec![0; 4 * n * n]);
    let st = p.dispatch(&mut res, [2, 2, 1]).unwrap();
    assert_eq!(st.muladd_flops, 2 * (n * n * n) as u64);
    let o = f32s(&res.buffers[&(0, 2)]);
    for i in (0..n).step_by(7) {
        for j in 0..n {
            let (mut s, mut mag) = (0f64, 0f64);
            for k in 0..n {
                let p = a[i * n + k].to_f64() * b[k * n + j].to_f64();
                s += p;
                mag += p.abs();
            }
            let bound = (n as f64 + 1.0) * mag * 2f64.powi(-24);
            assert!(
                (o[i * n + j] as f64 - s).abs() <= bound,
                "({i},{j}) {} vs {s}",
                o[i * n + j]
            );
        }
    }
}

#[test]
fn matrices_in_arrays_function_arguments_and_buffer_references() {
    let Some(m) = glsl(&format!(
        r#"{HDR}
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 32) in;
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Ref {{ float v[]; }};
layout(push_constant) uniform P {{ Ref src; Ref dst; }} pc;
coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> twice_plus(coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> x, float s) {{
    return x * 2.0 + coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator>(s);
}}
void main() {{
    coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> arr[3];
    for (int i = 0; i < 3; i++) {{
        coopMatLoad(arr[i], pc.src.v, i * 64, 8, gl_CooperativeMatrixLayoutRowMajor);
    }}
    int k = int(pc.src.v[0]) & 1;
    coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> r = twice_plus(arr[k + 1], 0.5) - arr[0];
    coopMatStore(r, pc.dst.v, 0, 8, gl_CooperativeMatrixLayoutColumnMajor);
}}"#
    )) else {
        return;
    };
    let src: Vec<f32> = (0..192).map(|i| i as f32 * 0.25 + 1.0).collect();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), bytes_f32(&src));
    res.buffers.insert((0, 1), vec![0; 256]);
    let mut push = res.device_address(0, 0).unwrap().to_le_bytes().to_vec();
    push.extend(res.device_address(0, 1).unwrap().to_le_bytes());
    res.push_constants = push;
    run(&m, &mut res, [1, 1, 1], &EngineOptions::default());
    let o = f32s(&res.buffers[&(0, 1)]);
    let k = (src[0] as i32 & 1) as usize;
    for r in 0..8 {
        for c in 0..8 {
            let want = src[(k + 1) * 64 + r * 8 + c] * 2.0 + 0.5 - src[r * 8 + c];
            assert_eq!(o[c * 8 + r], want, "({r},{c})");
        }
    }
}

/// Matrices kept in Function variables (matrix registers after promotion): stored, reloaded
/// after a loop that overwrites one of them, swapped, and a never-read local array written
/// with constant indices (its stores are dropped) beside one written with a per-lane index
/// (kept: its out-of-bounds index must still be reported).
#[test]
fn matrices_in_local_variables_and_never_read_locals() {
    let Some(m) = glsl(&format!(
        r#"{HDR}
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer I {{ float inp[]; }};
layout(std430, binding = 1) buffer O {{ float outp[]; }};
layout(push_constant) uniform P {{ uint bad; }};
void main() {{
    coopmat<float, gl_ScopeSubgroup, 16, 8, gl_MatrixUseAccumulator> a, b, t;
    coopMatLoad(a, inp, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b, inp, 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    float unused[4];
    unused[1] = a[0];
    unused[3] = 2.0;
    for (int i = 0; i < 3; i++) {{
        t = a; a = b; b = t;
        b = b * 2.0;
    }}
    float kept[4];
    kept[(gl_LocalInvocationID.x + bad) & 7u] = 1.0;
    coopMatStore(a, outp, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(b, outp, 128, 8, gl_CooperativeMatrixLayoutRowMajor);
}}"#
    )) else {
        return;
    };
    let inp: Vec<f32> = (0..256).map(|i| i as f32 * 0.5 - 3.0).collect();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), bytes_f32(&inp));
    res.buffers.insert((0, 1), vec![0; 4 * 256]);
    res.push_constants = 0u32.to_le_bytes().to_vec();
    // Indices 0..7 of a 4-element array: lanes 4..7 (mod 8) are out of bounds.
    let p =
        coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &EngineOptions::default())
            .unwrap();
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert!(
        e.to_string().contains("out-of-bounds") || e.to_string().contains("bounds"),
        "{e}"
    );
    // With robust access the stray stores are dropped and the matrices come out right.
    let opts = EngineOptions {
        robust: true,
        ..Default::default()
    };
    res.buffers.insert((0, 1), vec![0; 4 * 256]);
    run(&m, &mut res, [1, 1, 1], &opts);
    let o = f32s(&res.buffers[&(0, 1)]);
    // Three swaps with doubling: (a, b) -> (b, 2a) -> (2a, 2b) -> (2b, 4a).
    for k in 0..128 {
        assert_eq!(o[k], 2.0 * inp[128 + k], "a at {k}");
        assert_eq!(o[128 + k], 4.0 * inp[k], "b at {k}");
    }
}

/// Matrix variables copied into one another in a loop (`Op::Move`): a load of a variable
/// stored before it is read again, and a store of a value used by nothing else, trade storage
/// instead of copying where every lane runs them, and copy where one subgroup does (the `if`);
/// `x = a; a = a + b` reads `a` twice, so its first load must copy, and `t = x = b * 3.0`
/// stores one value twice, so neither store may move it. Every result is exact
/// (small multiples of a quarter), and two dispatches on the same pipeline (the second on the
/// first's storage, whose slots traded places) agree with the reference.
#[test]
fn matrix_variables_move_where_their_source_dies() {
    let Some(m) = glsl(&format!(
        r#"{HDR}
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer I {{ float inp[]; }};
layout(std430, binding = 1) buffer O {{ float outp[]; }};
void main() {{
    uint sg = gl_SubgroupID;
    coopmat<float, gl_ScopeSubgroup, 16, 8, gl_MatrixUseAccumulator> a, b, t, x;
    coopMatLoad(a, inp, sg * 256, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b, inp, sg * 256 + 128, 8, gl_CooperativeMatrixLayoutRowMajor);
    for (int i = 0; i < 4; i++) {{
        t = a; a = b; b = t;
        b = b * 2.0;
        if (sg == 1) {{ t = a; a = b; b = t; }}
        x = a;
        a = a + b;
        b = x - b;
        t = x = b * 3.0;
        b = t - b;
    }}
    coopMatStore(a, outp, sg * 256, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(b, outp, sg * 256 + 128, 8, gl_CooperativeMatrixLayoutRowMajor);
}}"#
    )) else {
        return;
    };
    let inp: Vec<f32> = (0..512).map(|i| (i % 37) as f32 * 0.25 - 4.0).collect();
    let mut want = vec![0f32; 512];
    for sg in 0..2 {
        let mut a: Vec<f32> = inp[sg * 256..sg * 256 + 128].to_vec();
        let mut b: Vec<f32> = inp[sg * 256 + 128..sg * 256 + 256].to_vec();
        for _ in 0..4 {
            std::mem::swap(&mut a, &mut b);
            b.iter_mut().for_each(|v| *v *= 2.0);
            if sg == 1 {
                std::mem::swap(&mut a, &mut b);
            }
            let x = a.clone();
            a = a.iter().zip(&b).map(|(p, q)| p + q).collect();
            b = x.iter().zip(&b).map(|(p, q)| p - q).collect();
            let t: Vec<f32> = b.iter().map(|v| v * 3.0).collect();
            b = t.iter().zip(&b).map(|(p, q)| p - q).collect();
        }
        want[sg * 256..sg * 256 + 128].copy_from_slice(&a);
        want[sg * 256 + 128..sg * 256 + 256].copy_from_slice(&b);
    }
    let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &Default::default())
        .unwrap();
    for round in 0..2 {
        let mut res = Resources::default();
        res.buffers.insert((0, 0), bytes_f32(&inp));
        res.buffers.insert((0, 1), vec![0; 4 * 512]);
        let stats = p.dispatch(&mut res, [1, 1, 1]).unwrap();
        assert_eq!(f32s(&res.buffers[&(0, 1)]), want, "round {round}");
        // Per iteration, with both subgroups running: t = a, a = b and b = t each a load
        // and a store that move; x = a a store that moves (its load must copy).
        assert!(
            stats.matrix_moves >= 4 * 7,
            "round {round}: {} moves",
            stats.matrix_moves
        );
    }
}

/// The lint's workgroup-vote proof against the engine: llama.cpp's flash_attn_cm1 block skip
/// (the lint fixture `vote_skip.comp`) over blocks that are skipped (every mask value below the
/// threshold), kept by one invocation of one subgroup, kept by all with values that differ, and
/// kept because one value is NaN. The comparison the analysis calls workgroup-uniform is observed, never differing.
#[test]
fn workgroup_vote_skip_is_uniform_on_the_engine() {
    use coopmat_analysis::{Analysis, Level};
    use coopmat_spirv::grammar::op;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../lint/tests/glsl/vote_skip.comp"
    );
    let src = std::fs::read_to_string(path).unwrap();
    let blocks = 4usize;
    let mut mask = vec![-3.0e38f32; blocks * 256];
    mask[256 + 70] = 0.0; // block 1: one invocation of subgroup 2
    for (k, v) in mask[512..768].iter_mut().enumerate() {
        *v = k as f32; // block 2: everything, a value per invocation
    }
    mask[768 + 5] = f32::NAN; // block 3: a NaN
    for optimize in [false, true] {
        let Some(m) = glsl_opt(&src, optimize) else {
            return;
        };
        let opts = EngineOptions {
            observe_uniformity: true,
            ..Default::default()
        };
        let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &opts).unwrap();
        let mut res = Resources::default();
        res.buffers.insert((0, 0), vec![0; blocks * 512 * 2]);
        res.buffers.insert((0, 1), bytes_f32(&mask));
        res.buffers.insert((0, 2), vec![0; 256 * 4]);
        res.push_constants = (blocks as u32).to_le_bytes().to_vec();
        p.dispatch(&mut res, [1, 1, 1]).unwrap();
        let observed = p.observed_uniformity();
        let a = Analysis::run(&m);
        let c = a.check_observed(&observed);
        assert!(c.violations.is_empty(), "unsound for {:?}", c.violations);
        let skip_compares: Vec<u32> = m
            .instructions
            .iter()
            .filter(|i| i.opcode == op::FOrdLessThanEqual)
            .filter_map(|i| i.result_id)
            .filter(|&id| a.value(id) == Level::Workgroup)
            .collect();
        assert_eq!(skip_compares.len(), 1, "optimize {optimize}: the skip test");
        assert!(
            observed.iter().any(|&(id, _)| id == skip_compares[0]),
            "the skip test never ran"
        );
        // The max combined with the slots did differ between invocations: data flow alone
        // calls the comparison divergent.
        let reads_workgroup = |id: u32| {
            let Some(load) = m.def(id).filter(|d| d.opcode == op::Load) else {
                return false;
            };
            let chain = m.def(load.word(load.first_arg()).unwrap()).unwrap();
            let base = m.def(chain.word(chain.first_arg()).unwrap()).unwrap();
            base.opcode == op::Variable
                && base.word(2) == Some(coopmat_spirv::grammar::storage_class::Workgroup)
        };
        let combined: Vec<u32> = m
            .instructions
            .iter()
            .filter(|i| {
                i.opcode == op::ExtInst && i.word(i.first_arg() + 3).is_some_and(reads_workgroup)
            })
            .filter_map(|i| i.result_id)
            .collect();
        assert!(
            combined.iter().any(|&id| observed.contains(&(id, true))),
            "optimize {optimize}: the combined max never differed"
        );
    }
}

/// A matrix in a local variable indexed element by element in a loop (`m[i]` with a computed
/// `i`, as flash attention's softcap does): the variable lives in registers and the index names
/// the component of the lane's share; an index past `length()` is an out-of-bounds error naming
/// the invocation.
#[test]
fn matrix_locals_indexed_by_computed_components() {
    let src = |bound: &str| {
        format!(
            r#"#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B {{ float a[256]; float o[256]; }};
void main() {{
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    for (int i = 0; i < {bound}; ++i) {{
        m[i] = m[i] * 2.0 + float(i);
    }}
    coopMatStore(m, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}}"#
        )
    };
    let Some(m) = glsl(&src("m.length()")) else {
        return;
    };
    let input: Vec<f32> = (0..256).map(|x| x as f32 * 0.5).collect();
    let mut buf = bytes_f32(&input);
    buf.extend(vec![0u8; 1024]);
    let mut res = Resources::default();
    res.buffers.insert((0, 0), buf.clone());
    run(&m, &mut res, [1, 1, 1], &EngineOptions::default());
    let out = f32s(&res.buffers[&(0, 0)]);
    // Component i of lane l is element l + 32·i (row-major, DESIGN.md "Mapping to invocations").
    for e in 0..256 {
        assert_eq!(
            out[256 + e],
            input[e] * 2.0 + (e / 32) as f32,
            "element {e}"
        );
    }
    let Some(m) = glsl(&src("m.length() + 1")) else {
        return;
    };
    let p =
        coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &EngineOptions::default())
            .unwrap();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), buf);
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::OutOfBounds, "{e}");
    assert!(e.to_string().contains("Length 8"), "{e}");
}

/// MulAdds that share A (fused into one group at compile time): five accumulators updated in
/// place over three iterations (a group of four and one), and a pair where the second adds
/// the first's result (a dependency the fusion must leave alone), against f64.
#[test]
fn muladds_sharing_a_operand() {
    let Some(m) = glsl_opt(
        &format!(
            r#"{HDR}
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A {{ float16_t a[]; }};
layout(std430, binding = 1) buffer B {{ float16_t b[]; }};
layout(std430, binding = 2) buffer C {{ float c[]; }};
void main() {{
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb[5];
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[5];
    coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    [[unroll]] for (uint j = 0; j < 5; j++) {{
        coopMatLoad(mb[j], b, j * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(acc[j], c, j * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    }}
    for (uint r = 0; r < 3; r++)
        [[unroll]] for (uint j = 0; j < 5; j++)
            acc[j] = coopMatMulAdd(ma, mb[j], acc[j]);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> first =
        coopMatMulAdd(ma, mb[0], acc[4]);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> second =
        coopMatMulAdd(ma, mb[1], first);
    [[unroll]] for (uint j = 0; j < 5; j++)
        coopMatStore(acc[j], c, j * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(second, c, 5 * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}}"#
        ),
        true,
    ) else {
        return;
    };
    let mut rng = Rng(11);
    let a = f16s(256, &mut rng);
    let b = f16s(5 * 256, &mut rng);
    let c: Vec<f32> = (0..6 * 256).map(|i| (i % 97) as f32 * 0.5 - 20.0).collect();
    let hb = |v: &[f16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let out = run_bufs(
        &m,
        vec![hb(&a), hb(&b), bytes_f32(&c)],
        [1, 1, 1],
        &EngineOptions::default(),
    );
    let o = f32s(&out[2]);
    // (value, sum of magnitudes) of a·b[j] + x for x given per element.
    let step = |j: usize, x: &[(f64, f64)]| -> Vec<(f64, f64)> {
        (0..256)
            .map(|e| {
                let (i, col) = (e / 16, e % 16);
                let (mut v, mut mag) = x[e];
                for k in 0..16 {
                    let p = a[i * 16 + k].to_f64() * b[j * 256 + k * 16 + col].to_f64();
                    v += p;
                    mag += p.abs();
                }
                (v, mag)
            })
            .collect()
    };
    let mut want: Vec<Vec<(f64, f64)>> = (0..5)
        .map(|j| {
            (0..256)
                .map(|e| (c[j * 256 + e] as f64, c[j * 256 + e].abs() as f64))
                .collect()
        })
        .collect();
    for _ in 0..3 {
        for (j, w) in want.iter_mut().enumerate() {
            *w = step(j, w);
        }
    }
    let second = step(1, &step(0, &want[4]));
    want.push(second);
    for (t, w) in want.iter().enumerate() {
        for (e, &(v, mag)) in w.iter().enumerate() {
            let got = o[t * 256 + e] as f64;
            // Each f32 step rounds once per term: |error| <= 2^-23 * (terms) * sum|terms|.
            assert!(
                (got - v).abs() <= 100.0 * mag * 2f64.powi(-24),
                "tile {t} element {e}: {got} vs {v}"
            );
        }
    }
}

/// f16 × f16 + f16 with an f16 accumulator, twice: the documented definition (C, then one f32
/// multiply-add a step in k order, the products exact in f32, the sum rounded once to f16 with
/// ties to even), bit for bit; the subgroup whose C holds a NaN rounds element by element and
/// still gives every other element the same bits.
#[test]
fn muladd_f16_accumulator_rounds_once_to_f16() {
    let Some(m) = glsl(&format!(
        r#"{HDR}
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A {{ float16_t a[]; }};
layout(std430, binding = 1) buffer B {{ float16_t b[]; }};
layout(std430, binding = 2) buffer C {{ float16_t c[]; }};
void main() {{
    uint sg = gl_SubgroupID;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mc;
    coopMatLoad(ma, a, sg * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mc, c, sg * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    mc = coopMatMulAdd(ma, mb, mc);
    mc = coopMatMulAdd(ma, mb, mc);
    coopMatStore(mc, c, sg * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}}"#
    )) else {
        return;
    };
    let mut rng = Rng(11);
    let a = f16s(512, &mut rng);
    let b = f16s(256, &mut rng);
    let mut c: Vec<f16> = (0..512)
        .map(|i| f16::from_f32(i as f32 * 0.125 - 20.0))
        .collect();
    c[256 + 17] = f16::from_bits(0x7e05);
    let hb = |v: &[f16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let out = run_bufs(
        &m,
        vec![hb(&a), hb(&b), hb(&c)],
        [1, 1, 1],
        &EngineOptions::default(),
    );
    let o: Vec<f16> = out[2]
        .chunks(2)
        .map(|x| f16::from_le_bytes([x[0], x[1]]))
        .collect();
    for s in 0..2 {
        for i in 0..16 {
            for j in 0..16 {
                let e = s * 256 + i * 16 + j;
                // Two MulAdds: the second starts from the first's f16 result.
                let mut acc = c[e].to_f32();
                for _ in 0..2 {
                    for k in 0..16 {
                        acc = a[s * 256 + i * 16 + k]
                            .to_f32()
                            .mul_add(b[k * 16 + j].to_f32(), acc);
                    }
                    acc = f16::from_f32(acc).to_f32();
                }
                if acc.is_nan() {
                    assert!(o[e].is_nan(), "({s},{i},{j}) {:?}", o[e]);
                } else {
                    assert_eq!(
                        o[e].to_bits(),
                        f16::from_f32(acc).to_bits(),
                        "({s},{i},{j})"
                    );
                }
            }
        }
    }
}

/// An f32 tile stored with its last rows past the end of the buffer: without robust access
/// an out-of-bounds error naming the store; with it the rows inside are written (row 13 up to
/// the buffer's end, element by element) and the rest dropped. The whole-tile store path
/// checks the tile once and must leave such a tile to the row-by-row path; a tile that fits
/// exactly, rows 20 floats apart, goes through it.
#[test]
fn f32_tile_stores_past_the_end_fault_or_drop_their_rows() {
    let Some(m) = glsl(&format!(
        r#"{HDR}
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer I {{ float inp[]; }};
layout(std430, binding = 1) buffer O {{ float outp[]; }};
layout(push_constant) uniform P {{ uint at; }};
void main() {{
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> a;
    coopMatLoad(a, inp, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(a, outp, at, 20, gl_CooperativeMatrixLayoutRowMajor);
}}"#
    )) else {
        return;
    };
    let inp: Vec<f32> = (0..256).map(|i| i as f32 * 0.25 - 7.0).collect();
    let dispatch = |out_len: usize, robust: bool| {
        let mut res = Resources::default();
        res.buffers.insert((0, 0), bytes_f32(&inp));
        res.buffers.insert((0, 1), vec![0; 4 * out_len]);
        res.push_constants = 0u32.to_le_bytes().to_vec();
        let opts = EngineOptions {
            robust,
            ..Default::default()
        };
        let p = coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &opts).unwrap();
        p.dispatch(&mut res, [1, 1, 1])
            .map(|_| f32s(&res.buffers[&(0, 1)]))
    };
    // Row r of the tile at floats 20·r..20·r + 16; past `len`, nothing.
    let expect = |o: &[f32], len: usize| {
        assert_eq!(o.len(), len);
        for (k, &x) in o.iter().enumerate() {
            let (r, c) = (k / 20, k % 20);
            let want = if c < 16 { inp[16 * r + c] } else { 0.0 };
            assert_eq!(x, want, "float {k} (row {r}, column {c})");
        }
    };
    // The whole tile fits exactly (15·20 + 16 floats).
    expect(&dispatch(15 * 20 + 16, false).unwrap(), 15 * 20 + 16);
    // 13 whole rows and 10 floats of the 14th fit.
    let short = 13 * 20 + 10;
    let e = dispatch(short, false).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::OutOfBounds, "{e}");
    assert!(e.to_string().contains("OpCooperativeMatrixStoreKHR"), "{e}");
    expect(&dispatch(short, true).unwrap(), short);
}
