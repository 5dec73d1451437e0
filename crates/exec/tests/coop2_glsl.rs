//! GLSL (GL_NV_cooperative_matrix2) test shaders compiled by glslangValidator at test time
//! (skipped with a notice when it is absent): LoadTensorNV under every clamp mode, transposing
//! views, clipped StoreTensorNV, Reduce (Row, Column, Row|Column, 2x2) and PerElementOp with an
//! extra operand and a buffer side effect. Expected values are computed here from the spec
//! formulas (SPV_NV_tensor_addressing clamp table), independently of coopmat-tensor.

use coopmat_exec::{EngineOptions, Pipeline, Resources};

fn compile(src: &str, defines: &[String]) -> Option<Vec<u8>> {
    let defines: Vec<String> = defines.iter().map(|d| format!("-D{d}")).collect();
    let defines: Vec<&str> = defines.iter().map(String::as_str).collect();
    let spv = coopmat_testkit::glslang(std::path::Path::new(src), &defines);
    if spv.is_none() {
        eprintln!("NOTICE: glslangValidator absent; skipping GLSL coop2 tests");
    }
    spv
}

fn src(name: &str) -> String {
    format!("{}/tests/coop2/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn run(spv: &[u8], input: &[f32], out_words: usize) -> Result<Vec<f32>, String> {
    let m = coopmat_spirv::Module::from_bytes(spv).unwrap();
    let p = Pipeline::compile(&m, "", &Default::default(), &EngineOptions::default())
        .map_err(|e| e.to_string())?;
    let mut r = Resources::default();
    r.buffers
        .insert((0, 0), input.iter().flat_map(|x| x.to_le_bytes()).collect());
    r.buffers.insert((0, 1), vec![0; out_words * 4]);
    p.dispatch(&mut r, [1, 1, 1]).map_err(|e| e.to_string())?;
    Ok(r.buffers[&(0, 1)]
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect())
}

/// Spec clamp of coordinate `c` into `0..d` per mode (None = Constant's out-of-range).
fn clamp(mode: &str, c: i64, d: i64) -> Option<i64> {
    if (0..d).contains(&c) {
        return Some(c);
    }
    match mode {
        "Constant" => None,
        "ClampToEdge" => Some(c.clamp(0, d - 1)),
        "Repeat" => Some(c.rem_euclid(d)),
        "MirrorRepeat" => {
            let p = 2 * d - 2;
            let c = if p == 0 { 0 } else { c.rem_euclid(p) };
            Some(if c >= d { p - c } else { c })
        }
        _ => unreachable!(),
    }
}

#[test]
fn tensor_load_clamp_modes_views_reduce_per_element() {
    let input: Vec<f32> = (0..1024).map(|i| (i % 97) as f32 * 0.5 - 11.0).collect();
    for mode in ["Constant", "ClampToEdge", "Repeat", "MirrorRepeat"] {
        let def = format!("MODE=gl_CooperativeMatrixClampMode{mode}NV");
        let Some(spv) = compile(&src("tensor_ops.comp"), &[def]) else {
            return;
        };
        let out = run(&spv, &input, 4096).unwrap();
        // Load of a 16x16 slice at (4, 2) of a 10x12 tensor.
        for r in 0..16i64 {
            for c in 0..16i64 {
                let want = match (clamp(mode, 4 + r, 10), clamp(mode, 2 + c, 12)) {
                    (Some(y), Some(x)) => input[(y * 12 + x) as usize],
                    _ => -7.0,
                };
                assert_eq!(out[(r * 16 + c) as usize], want, "{mode} load ({r},{c})");
            }
        }
        // Transposed view: t[r][c] = x[256 + c*16 + r].
        let t = |r: usize, c: usize| input[256 + c * 16 + r];
        for r in 0..16 {
            for c in 0..16 {
                assert_eq!(out[256 + r * 16 + c], t(r, c), "view ({r},{c})");
            }
        }
        let row: Vec<f32> = (0..16).map(|r| (0..16).map(|c| t(r, c)).sum()).collect();
        let col: Vec<f32> = (0..16).map(|c| (0..16).map(|r| t(r, c)).sum()).collect();
        let all: f32 = row.iter().sum();
        for r in 0..16 {
            for c in 0..16 {
                assert!((out[512 + r * 16 + c] - row[r]).abs() < 1e-3, "row reduce");
                assert!(
                    (out[768 + r * 16 + c] - col[c]).abs() < 1e-3,
                    "column reduce"
                );
                assert!(
                    (out[1024 + r * 16 + c] - all).abs() < 1e-2,
                    "row|column reduce"
                );
                let pe = t(r, c) * 2.0 + (r * 100 + c) as f32;
                assert_eq!(out[1536 + r * 16 + c], pe, "per-element ({r},{c})");
                assert_eq!(
                    out[2048 + r * 16 + c],
                    t(r, c) + 1.0,
                    "per-element side effect"
                );
                assert_eq!(
                    out[2304 + r * 16 + c],
                    t(r, c) - 1.0,
                    "per-element shared store"
                );
            }
        }
        // Clipped store (view without dimensions, clip rows 2..6, cols 3..10): element
        // (r, c) inside goes to linear index (r-2)*min(16, 7) + (c-3) of the 16x16 layout
        // span, i.e. packed from the start; nothing else is written.
        let mut want = vec![0f32; 256];
        for r in 2..6 {
            for c in 3..10 {
                want[(r - 2) * 7 + (c - 3)] = t(r, c);
            }
        }
        assert_eq!(&out[1792..2048], &want[..], "clipped store");
        // Stored back through the transposing view: the input's words again.
        assert_eq!(&out[2560..2816], &input[256..512], "store through a view");
        // Over the edge of the 10x12 tensor: rows 4.., columns 2.. of it hold t, the rest 0.
        for y in 0..10 {
            for x in 0..12 {
                let want = if y >= 4 && x >= 2 {
                    t(y - 4, x - 2)
                } else {
                    0.0
                };
                assert_eq!(out[2816 + y * 12 + x], want, "edge store ({y},{x})");
            }
        }
        // The f16 matrix (t's values are halves of small integers: exact in f16).
        for e in 0..256 {
            let word = out[2944 + e / 2].to_bits();
            let h = half::f16::from_bits((word >> (16 * (e % 2))) as u16);
            assert_eq!(h.to_f32(), t(e / 16, e % 16), "f16 store {e}");
        }
        let mut overlapped = vec![0f32; 136];
        for r in 0..16 {
            for c in 0..16 {
                overlapped[8 * c + r] = t(r, c);
            }
        }
        assert_eq!(&out[3072..3208], &overlapped[..], "overlapping store");
        for r in 0..8 {
            for c in 0..8 {
                let s = t(2 * r, 2 * c)
                    + t(2 * r + 1, 2 * c)
                    + t(2 * r, 2 * c + 1)
                    + t(2 * r + 1, 2 * c + 1);
                assert!((out[1280 + r * 8 + c] - s).abs() < 1e-4, "2x2 reduce");
            }
        }
    }
}

#[test]
fn undefined_clamp_mode_out_of_range_is_reported() {
    let def = "MODE=gl_CooperativeMatrixClampModeUndefinedNV".to_string();
    let Some(spv) = compile(&src("tensor_ops.comp"), &[def]) else {
        return;
    };
    let input = vec![0f32; 1024];
    let e = run(&spv, &input, 4096).unwrap_err();
    assert!(e.contains("Undefined"), "{e}");
}

/// Runs qcom.comp's module on one workgroup over finite f16 halves and f32 values (no NaN
/// payloads to lose) and checks every defined output word against the spec's placement.
fn run_and_check_qcom(m: &coopmat_spirv::Module, what: &str) {
    let mut st = 0x1234_5678u32;
    let x: Vec<u32> = (0..1024)
        .map(|_| {
            st ^= st << 13;
            st ^= st >> 17;
            st ^= st << 5;
            st & 0x3bff_3bff
        })
        .collect();
    let p = Pipeline::compile(m, "", &Default::default(), &EngineOptions::default()).unwrap();
    let mut r = Resources::default();
    r.buffers
        .insert((0, 0), x.iter().flat_map(|v| v.to_le_bytes()).collect());
    r.buffers.insert((0, 1), vec![0; 4096 * 4]);
    p.dispatch(&mut r, [1, 1, 1]).unwrap();
    let out: Vec<u32> = r.buffers[&(0, 1)]
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let half = |w: u32, j: usize| (w >> (16 * (j % 2))) & 0xffff;
    for i in 0..16 {
        // A: invocation i's 8 packed words are row i (little-endian halves), stored row-major.
        for k in 0..8 {
            assert_eq!(out[i * 8 + k], x[i * 8 + k], "{what}: A row {i} word {k}");
        }
        // Extract, bitcast to f16[16], sub-array 8..16, bitcast back: words 4..8 of row i.
        for k in 0..4 {
            assert_eq!(
                out[256 + i * 4 + k],
                x[i * 8 + 4 + k],
                "{what}: sub-array {i}/{k}"
            );
        }
        // B: invocation i's array is column i.
        for k in 0..16 {
            let got = half(out[512 + k * 8 + i / 2], i);
            assert_eq!(got, x[k * 16 + i] & 0xffff, "{what}: B ({k},{i})");
        }
        // Accumulator f32: invocation i's array is row i.
        for k in 0..16 {
            assert_eq!(out[1024 + i * 16 + k], x[i * 16 + k], "{what}: C ({i},{k})");
        }
    }
}

#[test]
fn qcom_construct_extract_bitcast_subarray() {
    let Some(spv) = compile(&src("qcom.comp"), &[]) else {
        return;
    };
    let m = coopmat_spirv::Module::from_bytes(&spv).unwrap();
    run_and_check_qcom(&m, "QCOM");
}

/// `coopmat lower --pass qcom-to-khr`: the rewritten module has no QCOM instruction left,
/// validates (coopmat val; spirv-val 2026.4 when installed) and gives the same defined results.
#[test]
fn qcom_to_khr_lowering_gives_the_same_results() {
    let Some(spv) = compile(&src("qcom.comp"), &[]) else {
        return;
    };
    let mut m = coopmat_spirv::Module::from_bytes(&spv).unwrap();
    let report = coopmat_lower::qcom_to_khr(&mut m).unwrap();
    assert_eq!((report.conversions, report.arrays), (4, 3), "{report:?}");
    assert!(m.instructions.iter().all(|i| !matches!(
        i.opcode,
        coopmat_spirv::grammar::op::CompositeConstructCoopMatQCOM
            | coopmat_spirv::grammar::op::CompositeExtractCoopMatQCOM
            | coopmat_spirv::grammar::op::BitCastArrayQCOM
            | coopmat_spirv::grammar::op::ExtractSubArrayQCOM
    )));
    assert!(m.extensions().all(|e| !e.contains("QCOM")));
    let opts = coopmat_val::ValidateOptions {
        target_env: coopmat_val::TargetEnv::Vulkan(3),
        profile: None,
    };
    let errors: Vec<String> = coopmat_val::validate(&m, &opts)
        .iter()
        .filter(|d| d.severity == coopmat_val::Severity::Error)
        .map(|d| d.message.clone())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let bytes = m.to_bytes(m.endian);
    if let Some(Err(e)) = coopmat_testkit::spirv_val(&bytes, "vulkan1.3") {
        panic!("spirv-val: {e}");
    }
    run_and_check_qcom(&m, "lowered");
}

#[test]
fn qcom_partial_subgroup_is_an_error() {
    // 24 invocations with the default subgroup size 32: one partial subgroup of 24 lanes.
    let Some(spv) = compile(&src("qcom.comp"), &["LOCAL=24".to_string()]) else {
        return;
    };
    let m = coopmat_spirv::Module::from_bytes(&spv).unwrap();
    let p = Pipeline::compile(&m, "", &Default::default(), &EngineOptions::default()).unwrap();
    let mut r = Resources::default();
    r.buffers.insert((0, 0), vec![0; 4096]);
    r.buffers.insert((0, 1), vec![0; 4096 * 4]);
    let e = p.dispatch(&mut r, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::InvalidOperand, "{e}");
    assert!(e.what.contains("power of two"), "{e}");
}

fn run_opts(
    spv: &[u8],
    input: &[u32],
    out_words: usize,
    opts: &EngineOptions,
) -> Result<Vec<f32>, String> {
    let m = coopmat_spirv::Module::from_bytes(spv).unwrap();
    let p = Pipeline::compile(&m, "", &Default::default(), opts).map_err(|e| e.to_string())?;
    let mut r = Resources::default();
    r.buffers
        .insert((0, 0), input.iter().flat_map(|x| x.to_le_bytes()).collect());
    r.buffers.insert((0, 1), vec![0; out_words * 4]);
    p.dispatch(&mut r, [1, 1, 1]).map_err(|e| e.to_string())?;
    Ok(r.buffers[&(0, 1)]
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect())
}

/// DecodeFunc / DecodeVectorFunc with V = 2, 4, 8 over a 16x32 tensor in 1x8 blocks, 16x16
/// slice at column 8: every policy gives the spec's value (DecodeFunc gets Pointer + block
/// index · 32 bytes, blockCoord and coordInBlock); check_decode finds no disagreement.
#[test]
fn decode_vector_v2_v4_v8_all_policies() {
    use coopmat_exec::DecodePolicy;
    let input: Vec<u32> = (0..1024u32).map(|i| (i * 7 + 3) % 251).collect();
    for v in [2, 4, 8] {
        let Some(spv) = compile(&src("decode.comp"), &[format!("V={v}"), "BS=8".into()]) else {
            return;
        };
        for policy in [
            DecodePolicy::Scalar,
            DecodePolicy::Vector,
            DecodePolicy::Mixed,
            DecodePolicy::Random(9),
        ] {
            let opts = EngineOptions {
                decode_policy: policy,
                check_decode: true,
                ..Default::default()
            };
            let out = run_opts(&spv, &input, 256, &opts).unwrap();
            for r in 0..16 {
                for c in 0..16 {
                    // Block (r, x/8) at index r*4 + x/8 (4 blocks per row), element x%8.
                    let x = 8 + c;
                    let want = input[(r * 4 + x / 8) * 8 + x % 8] as f32 + r as f32 * 0.5;
                    assert_eq!(out[r * 16 + c], want, "V={v} {policy:?} ({r},{c})");
                }
            }
        }
    }
}

/// blockSize[LDim-1] = 6 is not a multiple of V = 4: fine for DecodeFunc, which the vector policy
/// (the default) then calls, since invoking DecodeVectorFunc would be undefined behaviour; an error
/// naming the rule when `check_decode` or the mixed policy makes the engine use DecodeVectorFunc.
#[test]
fn decode_vector_block_size_not_multiple_of_v() {
    use coopmat_exec::DecodePolicy;
    let input: Vec<u32> = (0..1024u32).map(|i| (i * 5 + 1) % 241).collect();
    let Some(spv) = compile(&src("decode.comp"), &["V=4".into(), "BS=6".into()]) else {
        return;
    };
    let scalar = EngineOptions {
        decode_policy: DecodePolicy::Scalar,
        ..Default::default()
    };
    let out = run_opts(&spv, &input, 256, &scalar).unwrap();
    assert_eq!(
        run_opts(&spv, &input, 256, &EngineOptions::default()).unwrap(),
        out,
        "the default policy falls back to DecodeFunc"
    );
    for r in 0..16 {
        for c in 0..16 {
            // 6 blocks per row (ceil(32/6)), block (r, x/6), element x%6.
            let x = 8 + c;
            let want = input[(r * 6 + x / 6) * 6 + x % 6] as f32 + r as f32 * 0.5;
            assert_eq!(out[r * 16 + c], want, "({r},{c})");
        }
    }
    for opts in [
        EngineOptions {
            check_decode: true,
            ..Default::default()
        },
        EngineOptions {
            decode_policy: DecodePolicy::Mixed,
            ..Default::default()
        },
    ] {
        let e = run_opts(&spv, &input, 256, &opts).unwrap_err();
        assert!(e.contains("not a multiple"), "{e}");
    }
}

/// 1-, 3-, 4- and 5-D layouts and a 3-D permuting view with dimensions; expected indices worked
/// out by hand from the spec pseudo-code (matrixCoordToLinear → linearToSpanCoord (innermost
/// dimension last) → + offset → Σ coord·stride).
#[test]
fn layouts_of_one_to_five_dimensions_and_3d_view() {
    let Some(spv) = compile(&src("dims.comp"), &[]) else {
        return;
    };
    let input: Vec<f32> = (0..4096).map(|i| i as f32).collect();
    let out = run(&spv, &input, 1536).unwrap();
    for r in 0..16usize {
        for c in 0..16usize {
            let at = |base: usize| out[base + r * 16 + c];
            // 1-D: span 256 at offset 100.
            assert_eq!(at(0), (100 + r * 16 + c) as f32, "1-D ({r},{c})");
            // 3-D (2,16,16), offset (1,0,0): strides (256,16,1).
            assert_eq!(at(256), (256 + r * 16 + c) as f32, "3-D ({r},{c})");
            // 4-D (2,4,8,16), offsets (1,2,0,0), spans (1,2,8,16): coords (1, 2+r/8, r%8, c),
            // strides (512,128,16,1).
            let i4 = 512 + (2 + r / 8) * 128 + (r % 8) * 16 + c;
            assert_eq!(at(512), i4 as f32, "4-D ({r},{c})");
            // 5-D (2,2,2,16,16), offsets (1,1,0,0,0): strides (1024,512,256,16,1).
            assert_eq!(at(768), (1024 + 512 + r * 16 + c) as f32, "5-D ({r},{c})");
            // View dims (1,16,16), permutation (2,0,1): viewCoord = (0, c, r), view linear
            // c*16 + r, span (16,16,1) coords (c, r, 0) + offset (0,0,3), strides (64,4,1).
            assert_eq!(at(1024), (c * 64 + r * 4 + 3) as f32, "3-D view ({r},{c})");
            // Block size (1, 4), dims (16, 64): stride (ceil(64/4) = 16, 1) in blocks, so
            // element (r, c) at column 8 + c reads index r*16 + (8 + c)/4.
            assert_eq!(
                at(1280),
                (r * 16 + (8 + c) / 4) as f32,
                "block 1x4 ({r},{c})"
            );
        }
    }
}

#[test]
fn decode_functions_read_the_invocations_private_variables() {
    // Read directly, and through a function the DecodeFunc calls (the engine copies Private
    // variables only into calls of functions that reach one).
    for defines in [vec![], vec!["THROUGH_CALL".to_string()]] {
        let Some(spv) = compile(&src("private_decode.comp"), &defines) else {
            return;
        };
        let m = coopmat_spirv::Module::from_bytes(&spv).unwrap();
        let p = Pipeline::compile(&m, "", &Default::default(), &EngineOptions::default()).unwrap();
        let mut r = Resources::default();
        r.buffers.insert((0, 0), 3u32.to_le_bytes().repeat(256));
        r.buffers.insert((0, 1), vec![0; 1024]);
        p.dispatch(&mut r, [1, 1, 1]).unwrap();
        for (e, c) in r.buffers[&(0, 1)].chunks(4).enumerate() {
            // Before: the call's own (zeroed) Private memory gave 0.
            assert_eq!(
                f32::from_le_bytes(c.try_into().unwrap()),
                6.0,
                "element {e} ({defines:?})"
            );
        }
    }
}

/// qcom-to-khr on 8x8 accumulators with 8-invocation subgroups (four matrices per workgroup,
/// each from its own subgroup's rows): the lowered module gives the original's bytes.
#[test]
fn qcom_to_khr_on_small_subgroups_keeps_each_subgroups_rows() {
    let Some(spv) = compile(&src("qcom_acc8.comp"), &[]) else {
        return;
    };
    let original = coopmat_spirv::Module::from_bytes(&spv).unwrap();
    let mut lowered = original.clone();
    coopmat_lower::qcom_to_khr(&mut lowered).unwrap();
    let mut st = 0x1234_5678u32;
    let input: Vec<u8> = (0..2048)
        .flat_map(|_| {
            st ^= st << 13;
            st ^= st >> 17;
            st ^= st << 5;
            (st & 0x3bff_3bff).to_le_bytes()
        })
        .collect();
    let options = EngineOptions {
        subgroup_size: 8,
        ..EngineOptions::default()
    };
    let run = |m: &coopmat_spirv::Module| {
        let p = Pipeline::compile(m, "", &Default::default(), &options).unwrap();
        let mut r = Resources::default();
        r.buffers.insert((0, 0), input.clone());
        r.buffers.insert((0, 1), vec![0; 8192]);
        p.dispatch(&mut r, [1, 1, 1]).unwrap();
        r.buffers[&(0, 1)].clone()
    };
    let (a, b) = (run(&original), run(&lowered));
    assert_eq!(a, b);
    // Row i of subgroup s's f32 matrix is that invocation's 8 floats.
    assert_eq!(&a[..4 * 64], &input[..4 * 64]);
}

/// A matrix among PerElementOp's extra operands is passed element by element, at the same
/// (row, column) as the element of the operated matrix; a vector operand, every component.
#[test]
fn per_element_op_passes_the_elements_of_matrix_operands() {
    let Some(spv) = compile(&src("per_element_matrix_operand.comp"), &[]) else {
        return;
    };
    let input: Vec<f32> = (0..512).map(|i| (i % 97) as f32 * 0.25 - 3.0).collect();
    let out = run(&spv, &input, 256).unwrap();
    for r in 0..16 {
        for c in 0..16 {
            let a = input[r * 16 + c];
            let b = input[256 + c * 16 + r]; // loaded column-major
            let want = a * 3.0 + b - r as f32 + c as f32 * 0.5;
            assert_eq!(out[r * 16 + c], want, "({r},{c})");
        }
    }
}

/// A per-element call over more elements than the engine calls a function on at once
/// (48x40 = 1920: the second part starts mid-row) gives each element its own row and column.
#[test]
fn per_element_op_on_a_large_matrix_gets_every_row_and_column() {
    let Some(spv) = compile(&src("per_element_large.comp"), &[]) else {
        return;
    };
    let input: Vec<f32> = (0..48 * 40).map(|i| (i % 89) as f32 * 0.5).collect();
    let out = run(&spv, &input, 48 * 40).unwrap();
    for r in 0..48 {
        for c in 0..40 {
            let want = input[r * 40 + c] * 2.0 + r as f32 * 64.0 + c as f32;
            assert_eq!(out[r * 40 + c], want, "({r},{c})");
        }
    }
}

/// Transposing-view loads whose runs (tensor rows, along tile columns) start at both halves of
/// a word, come in groups of 16 adjacent columns and a group of 2, and stop where the tensor
/// ends (Constant clamp beyond): every element of an f16 and an f32 tile equals the tensor
/// element the spec's coordinate formula names (SPV_NV_tensor_addressing: the view's
/// permutation, then the slice, then the clamp), bit for bit.
#[test]
fn transposed_loads_move_grouped_runs_exactly() {
    let Some(spv) = compile(&src("transposed_runs.comp"), &[]) else {
        return;
    };
    let (rows, cols) = (37usize, 29usize);
    // Distinct f16 bit patterns, NaNs and infinities excluded so every value is finite.
    let xh: Vec<u16> = (0..rows * cols)
        .map(|i| (i as u16).wrapping_mul(40503) & 0x7bff)
        .collect();
    let xf: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.25 - 100.0).collect();
    let m = coopmat_spirv::Module::from_bytes(&spv).unwrap();
    let p = Pipeline::compile(&m, "", &Default::default(), &EngineOptions::default()).unwrap();
    let mut r = Resources::default();
    r.buffers
        .insert((0, 0), xh.iter().flat_map(|x| x.to_le_bytes()).collect());
    r.buffers
        .insert((0, 1), xf.iter().flat_map(|x| x.to_le_bytes()).collect());
    r.buffers.insert((0, 2), vec![0; 32 * 48 * 2]);
    r.buffers.insert((0, 3), vec![0; 32 * 48 * 4]);
    p.dispatch(&mut r, [1, 1, 1]).unwrap();
    let oh: Vec<u16> = r.buffers[&(0, 2)]
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let of: Vec<f32> = r.buffers[&(0, 3)]
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for tr in 0..32 {
        for tc in 0..48 {
            // Tile (tr, tc) is tensor (3 + tc, 2 + tr): the view swaps the dimensions.
            let (y, x) = (3 + tc, 2 + tr);
            let inside = y < rows && x < cols;
            let want_h = if inside { xh[y * cols + x] } else { 0x4b00 };
            let want_f = if inside { xf[y * cols + x] } else { -7.0 };
            assert_eq!(oh[tr * 48 + tc], want_h, "f16 tile ({tr},{tc})");
            assert_eq!(of[tr * 48 + tc], want_f, "f32 tile ({tr},{tc})");
        }
    }
}

/// Runs `tile_reuse.comp` over `groups` workgroups on binding 0 = `input` (binding 2 the same
/// memory with `alias`), one thread when `threads` is 1: the stored tiles and the statistics.
fn run_tile_reuse(
    spv: &[u8],
    input: &[u32],
    groups: u32,
    alias: bool,
    opts: &EngineOptions,
) -> (Vec<f32>, coopmat_exec::DispatchStats) {
    use coopmat_exec::{BoundResources, BufferView};
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    let m = coopmat_spirv::Module::from_bytes(spv).unwrap();
    let p = Pipeline::compile(&m, "", &Default::default(), opts).unwrap();
    let words = |v: &[u32]| -> Vec<AtomicU32> { v.iter().map(|&x| AtomicU32::new(x)).collect() };
    let a = words(input);
    let out = words(&vec![0; groups as usize * 256]);
    let other = words(&vec![0; input.len()]);
    let calls = words(&[0]);
    let view = |w| BufferView {
        bytes: std::mem::size_of_val(w) as u64,
        words: w,
    };
    let mut b = BoundResources::default();
    b.buffers.insert((0, 0), view(&a));
    b.buffers.insert((0, 1), view(&out));
    b.buffers
        .insert((0, 2), view(if alias { &a } else { &other }));
    b.buffers.insert((0, 3), view(&calls));
    let st = p.dispatch_bound(&b, [groups, 1, 1], [0, 0, 0]).unwrap();
    let mut vals: Vec<f32> = out
        .iter()
        .map(|w| f32::from_bits(w.load(Relaxed)))
        .collect();
    // The decode calls counted, after the tiles.
    vals.push(calls[0].load(Relaxed) as f32);
    (vals, st)
}

/// Decoded tiles reused across workgroups (DESIGN.md, "Decoded tiles reused") only where the
/// decode would read the same memory again: every workgroup decodes the same tile; reuse is
/// refused when the decode reads a Workgroup table that differs per workgroup, when the module
/// writes the source buffer, and when it writes another binding of the same memory; a write to
/// other memory does not stop it. Values from the formula, with and without the cache.
#[test]
fn decoded_tiles_are_reused_only_over_unchanged_memory() {
    let input: Vec<u32> = (0..512u32).map(|i| (i * 7 + 3) % 251).collect();
    let groups = 4u32;
    // (defines, alias, the tile each workgroup sees changes, tables differ, reuse expected);
    // a decode function with a side effect (DECODE_COUNTS) is never reused either.
    let cases: [(&str, bool, bool, bool, bool); 6] = [
        ("", false, false, false, true),
        ("DECODE_COUNTS", false, false, false, false),
        ("TABLE_PER_WORKGROUP", false, false, true, false),
        ("WRITE_SOURCE", false, true, false, false),
        ("WRITE_ALIAS", true, true, false, false),
        ("WRITE_ALIAS", false, false, false, true),
    ];
    for (define, alias, written, tables, reuse) in cases {
        let defines: Vec<String> = if define.is_empty() {
            vec![]
        } else {
            vec![define.into()]
        };
        let Some(spv) = compile(&src("tile_reuse.comp"), &defines) else {
            return;
        };
        for cache in [256u64 << 20, 0] {
            let opts = EngineOptions {
                threads: 1,
                decoded_tile_cache: cache,
                ..Default::default()
            };
            let (out, st) = run_tile_reuse(&spv, &input, groups, alias, &opts);
            let what = format!("{define:?} alias {alias} cache {cache}");
            for w in 0..groups as usize {
                for r in 0..16 {
                    for c in 0..16 {
                        // The span (16, 32) reshapes the 16x16 tile: element (r, c) is span
                        // coordinate (L / 32, L % 32) for L = 16r + c, memory word L, block
                        // row r / 2. Earlier workgroups each added 1 to a written source.
                        let mut v = input[r * 16 + c] + r as u32 / 2;
                        if written {
                            v += w as u32;
                        }
                        if tables {
                            v += w as u32 * 100;
                        }
                        assert_eq!(
                            out[w * 256 + r * 16 + c],
                            v as f32,
                            "{what} wg {w} ({r},{c})"
                        );
                    }
                }
            }
            if define == "DECODE_COUNTS" {
                // A function with a side effect runs for every element of every tile.
                assert_eq!(
                    out[groups as usize * 256],
                    (groups * 256) as f32,
                    "{what}: calls"
                );
            }
            let want = if reuse && cache > 0 {
                groups as u64 - 1
            } else {
                0
            };
            assert_eq!(st.tiles_reused, want, "{what}: tiles reused");
            if cache == 0 || written {
                assert_eq!(st.tiles_stored, 0, "{what}: tiles kept");
            }
        }
    }
    // With several workers the values stay the same.
    let Some(spv) = compile(&src("tile_reuse.comp"), &[]) else {
        return;
    };
    let one = run_tile_reuse(
        &spv,
        &input,
        16,
        false,
        &EngineOptions {
            threads: 1,
            ..Default::default()
        },
    )
    .0;
    let many = run_tile_reuse(
        &spv,
        &input,
        16,
        false,
        &EngineOptions {
            threads: 4,
            ..Default::default()
        },
    )
    .0;
    assert_eq!(one, many);
}

/// `m` run on one workgroup with `buffers` bound at (0, 0), (0, 1), ..., which it returns after.
/// With `observe` the engine observes uniformity, which turns its folds of combine and
/// per-element functions off: the functions are called.
fn run_folds_observed(
    m: &coopmat_spirv::Module,
    buffers: Vec<Vec<u8>>,
    observe: bool,
) -> Vec<Vec<u8>> {
    let opts = EngineOptions {
        observe_uniformity: observe,
        ..Default::default()
    };
    let p = Pipeline::compile(m, "", &Default::default(), &opts).unwrap();
    let mut r = Resources::default();
    let n = buffers.len() as u32;
    for (b, words) in (0..).zip(buffers) {
        r.buffers.insert((0, b), words);
    }
    p.dispatch(&mut r, [1, 1, 1]).unwrap();
    (0..n).map(|b| r.buffers.remove(&(0, b)).unwrap()).collect()
}

/// Max and min reductions (combine functions the engine folds itself) of f32 and f16 tiles in
/// every mode, the same bits as with uniformity observed (where the functions are called):
/// tiles of values with many ties, ±0 in every order, infinities, and then one NaN.
#[test]
fn min_max_reductions_fold_to_the_called_functions_bits() {
    let Some(spv) = compile(&src("min_max_reduce.comp"), &[]) else {
        return;
    };
    let m = coopmat_spirv::Module::from_bytes(&spv).unwrap();
    let go = |in32: &[u32], in16: &[u16], observe: bool| {
        let ins = vec![
            in32.iter().flat_map(|x| x.to_le_bytes()).collect(),
            in16.iter().flat_map(|x| x.to_le_bytes()).collect(),
            vec![0; 2048 * 4],
            vec![0; 2048 * 2],
        ];
        let mut out = run_folds_observed(&m, ins, observe);
        let out16 = out.pop().unwrap();
        (out.pop().unwrap(), out16)
    };
    // Values in small sets where the max (first set) or the min (second) is a zero: which
    // zero comes out depends on the order of the steps and of the operands.
    let sets32 = [
        [0x8000_0000u32, 0, 0xbf80_0000, 0xff80_0000],
        [0x8000_0000, 0, 0x3f80_0000, 0x7f80_0000],
    ];
    let sets16 = [[0x8000u16, 0, 0xbc00, 0xfc00], [0x8000, 0, 0x3c00, 0x7c00]];
    for (pick32, pick16) in sets32.iter().zip(&sets16) {
        let mut in32: Vec<u32> = (0..256).map(|i| pick32[(i * 7 + i / 16) % 4]).collect();
        let mut in16: Vec<u16> = (0..256).map(|i| pick16[(i * 5 + i / 16) % 4]).collect();
        for _ in 0..2 {
            let folded = go(&in32, &in16, false);
            let called = go(&in32, &in16, true);
            assert_eq!(folded.0, called.0, "f32 results");
            assert_eq!(folded.1, called.1, "f16 results");
            assert!(folded.0.iter().any(|&b| b != 0), "stored nothing");
            in32[37] = 0x7fc0_1234;
            in16[201] = 0x7e01;
        }
    }
}

/// Per-element max and min with a matrix operand (functions the engine folds onto the f32
/// tiles) give the called functions' bits (uniformity observed turns folding off): ±0 in both
/// orders, infinities, ties, and NaNs on either side with different payloads.
#[test]
fn per_element_min_max_fold_to_the_called_functions_bits() {
    let Some(spv) = compile(&src("per_element_min_max.comp"), &[]) else {
        return;
    };
    let m = coopmat_spirv::Module::from_bytes(&spv).unwrap();
    let picks = [
        0x8000_0000u32,
        0,
        0x3f80_0000,
        0xbf80_0000,
        0x7f80_0000,
        0xff80_0000,
        0x4000_0000,
    ];
    let mut input: Vec<u32> = (0..512)
        .map(|i| picks[(i * 5 + i / 7) % picks.len()])
        .collect();
    for round in 0..2 {
        let go = |observe: bool| {
            let ins = vec![
                input.iter().flat_map(|x| x.to_le_bytes()).collect(),
                vec![0; 1024 * 4],
            ];
            run_folds_observed(&m, ins, observe).remove(1)
        };
        let (folded, called) = (go(false), go(true));
        assert_eq!(folded, called, "round {round}");
        assert!(folded.iter().any(|&b| b != 0), "stored nothing");
        // Then NaNs in either tile, a quiet and a signaling payload.
        input[3] = 0x7fc0_1234;
        input[256 + 9] = 0xff80_0001;
        input[20] = 0x7f80_0002;
        input[256 + 20] = 0xffc0_0003;
    }
}

/// A per-element `exp` (a function the engine folds, then runs through its f32 exp kernel
/// straight on the tile) gives the bits the called function gives (uniformity observed turns
/// folding off): values across the whole range, ±0, subnormals, and the inputs the kernel
/// leaves to the general path (beyond ±700, infinities, NaNs of both signs and payloads).
#[test]
fn per_element_exp_folds_to_the_called_functions_bits() {
    let Some(spv) = compile(&src("per_element_exp.comp"), &[]) else {
        return;
    };
    let m = coopmat_spirv::Module::from_bytes(&spv).unwrap();
    let go = |input: &[u32], observe: bool| {
        let ins = vec![
            input.iter().flat_map(|x| x.to_le_bytes()).collect(),
            vec![0; 512 * 4],
        ];
        run_folds_observed(&m, ins, observe).pop().unwrap()
    };
    let mut input: Vec<u32> = (0..256)
        .map(|i| ((i as f32 - 128.0) * 0.731).to_bits())
        .collect();
    let folded = go(&input, false);
    assert_eq!(folded, go(&input, true), "in range");
    assert_eq!(&folded[..1024], &folded[1024..], "in place");
    for (k, x) in [
        0x8000_0000u32,
        1,
        0x8000_0001,
        0x442f_4000, // 701
        0xc42f_4000, // -701
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_1234,
        0xffa0_0001,
    ]
    .into_iter()
    .enumerate()
    {
        input[k * 29] = x;
    }
    let folded = go(&input, false);
    assert_eq!(
        folded,
        go(&input, true),
        "with values outside the kernel's range"
    );
}

/// Tensor layout values are handles into the batch's interned table (DESIGN.md, "Tensor
/// layouts and views as handles"): 9000 distinct slices in one workgroup pass the table's
/// first collection bound (4096) more than once, while values made before the loop (one in a
/// register, two in a dynamically indexed Function array) and the one the loop's phi carries
/// stay live; two workgroups run one after the other on one batch (the table cleared between
/// them, on one thread) and side by side (two threads). Values from the slice formula.
#[test]
fn layout_handles_survive_collections_and_workgroups() {
    let Some(spv) = compile(&src("layout_values.comp"), &[]) else {
        return;
    };
    const ITERS: usize = 9000;
    const W: usize = ITERS + 16;
    let input: Vec<f32> = (0..64 * W).map(|i| (i % 7) as f32).collect();
    let x = |r: usize, c: usize| input[r * W + c];
    let m = coopmat_spirv::Module::from_bytes(&spv).unwrap();
    for threads in [1, 2] {
        let opts = EngineOptions {
            threads,
            ..Default::default()
        };
        let p = Pipeline::compile(&m, "", &Default::default(), &opts).unwrap();
        let mut res = Resources::default();
        res.buffers
            .insert((0, 0), input.iter().flat_map(|v| v.to_le_bytes()).collect());
        res.buffers.insert((0, 1), vec![0; 2048 * 4]);
        p.dispatch(&mut res, [2, 1, 1]).unwrap();
        let out: Vec<f32> = res.buffers[&(0, 1)]
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        for wg in 0..2usize {
            for r in 0..16 {
                for c in 0..16 {
                    let at = |k: usize| out[wg * 1024 + k * 256 + r * 16 + c];
                    let sum: f32 = (0..ITERS).map(|i| x((i + wg) % 48 + r, i + c)).sum();
                    let last = ITERS - 1;
                    let kept = x(wg * 16 + r, 8 + c);
                    let what = format!("threads {threads}, workgroup {wg}, ({r}, {c})");
                    assert_eq!(at(0), sum, "loop sum, {what}");
                    assert_eq!(at(1), kept, "value made before the loop, {what}");
                    assert_eq!(at(2), x((last + wg) % 48 + r, last + c), "phi, {what}");
                    assert_eq!(at(3), kept + x(r, wg + c), "array, {what}");
                }
            }
        }
    }
}

/// Tiles read without a decode function (`plain_reuse.comp`): a tile gathered through a
/// transposing view is kept and reused by every later workgroup that reads it; one read by rows
/// is never kept; a load whose kept tiles are never reused stops keeping them after its trial
/// (256 tiles, then while one in eight is reused). Values from the input, with and without
/// the cache, on one and two threads.
#[test]
fn plain_tiles_are_kept_only_where_reuse_pays() {
    use coopmat_exec::{BoundResources, BufferView, SpecConstants};
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    let Some(spv) = compile(&src("plain_reuse.comp"), &[]) else {
        return;
    };
    let m = coopmat_spirv::Module::from_bytes(&spv).unwrap();
    let groups = 300u32;
    // Halves of small integers (exact), two to a word.
    let half = |i: u32| half::f16::from_f32((i % 1000) as f32).to_bits() as u32;
    let input: Vec<AtomicU32> = (0..groups * 128)
        .map(|j| AtomicU32::new(half(2 * j) | half(2 * j + 1) << 16))
        .collect();
    for (same, threads, cache) in [
        (true, 1, 256u64 << 20),
        (true, 2, 256 << 20),
        (true, 1, 0),
        (false, 1, 256 << 20),
        (false, 2, 256 << 20),
    ] {
        let mut spec = SpecConstants::default();
        spec.insert(0, same as u64);
        spec.insert(1, groups as u64);
        let opts = EngineOptions {
            threads,
            decoded_tile_cache: cache,
            ..Default::default()
        };
        let p = Pipeline::compile(&m, "", &spec, &opts).unwrap();
        let out: Vec<AtomicU32> = (0..groups * 256).map(|_| AtomicU32::new(0)).collect();
        let mut b = BoundResources::default();
        for (binding, w) in [(0, &input), (1, &out)] {
            let view = BufferView {
                bytes: std::mem::size_of_val(w.as_slice()) as u64,
                words: w,
            };
            b.buffers.insert((0, binding), view);
        }
        let st = p.dispatch_bound(&b, [groups, 1, 1], [0, 0, 0]).unwrap();
        let what = format!("same {same} threads {threads} cache {cache}");
        let got = |h: usize| (out[h / 2].load(Relaxed) >> (16 * (h % 2))) & 0xffff;
        for w in 0..groups as usize {
            let t = if same { 0 } else { w as u32 };
            for r in 0..16u32 {
                for c in 0..16u32 {
                    let e = (r * 16 + c) as usize;
                    // Through the view, element (r, c) is the tile's (c, r).
                    assert_eq!(got(w * 512 + e), half(t * 256 + c * 16 + r), "{what} view");
                    assert_eq!(
                        got(w * 512 + 256 + e),
                        half(t * 256 + e as u32),
                        "{what} rows"
                    );
                }
            }
        }
        if cache == 0 {
            assert_eq!((st.tiles_stored, st.tiles_reused), (0, 0), "{what}");
        } else if same {
            // The view's tile once (twice at most with two workers racing), reused by the rest.
            let g = groups as u64;
            assert!((1..=2).contains(&st.tiles_stored), "{what}: {st:?}");
            assert!((g - 2..g).contains(&st.tiles_reused), "{what}: {st:?}");
        } else {
            // Never reused: kept during the trial only (a few more with two workers racing).
            assert_eq!(st.tiles_reused, 0, "{what}");
            assert!((256..=260).contains(&st.tiles_stored), "{what}: {st:?}");
        }
    }
}

/// The parts of a per-element function that depend only on push constants and its non-matrix
/// extra operands run once per call (`Op::Once` from `Analysis::in_call`): each workgroup's
/// call passes its own extra operand, and batches pack several workgroups. The results equal
/// the formula's and those of running every lane; `call_function` with a different extra
/// operand in every lane still gets each lane's own result.
#[test]
fn per_element_uniform_parts_run_once_per_call() {
    let Some(spv) = compile(&src("per_element_uniform_parts.comp"), &[]) else {
        return;
    };
    let m = coopmat_spirv::Module::from_bytes(&spv).unwrap();
    let groups = 3u32;
    let input: Vec<f32> = (0..256 * groups)
        .map(|i| (i % 89) as f32 * 0.5 - 7.0)
        .collect();
    let (base, gain) = (5u32, 0.25f32);
    let inputs = || {
        let mut r = Resources::default();
        r.buffers
            .insert((0, 0), input.iter().flat_map(|x| x.to_le_bytes()).collect());
        r.buffers.insert((0, 1), vec![0; 256 * groups as usize * 4]);
        r.push_constants = [base.to_le_bytes(), gain.to_le_bytes()].concat();
        r
    };
    let want = |r: u32, c: u32, a: f32, w: u32| {
        a * (gain * (base * 7 + w * 3) as f32) + (r * 16 + c) as f32
    };
    let mut outs = Vec::new();
    for observe in [false, true] {
        let opts = EngineOptions {
            observe_uniformity: observe,
            ..Default::default()
        };
        let p = Pipeline::compile(&m, "", &Default::default(), &opts).unwrap();
        let mut r = inputs();
        let st = p.dispatch(&mut r, [groups, 1, 1]).unwrap();
        assert_eq!(st.uniform_copies > 0, !observe, "{st:?}");
        let out: Vec<f32> = r.buffers[&(0, 1)]
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        for w in 0..groups {
            for e in 0..256u32 {
                let i = (w * 256 + e) as usize;
                assert_eq!(
                    out[i],
                    want(e / 16, e % 16, input[i], w),
                    "workgroup {w}, element {e}"
                );
            }
        }
        outs.push(out);
    }
    assert_eq!(outs[0], outs[1]);
    // The function alone, with a different extra operand in every lane.
    let p = Pipeline::compile(&m, "", &Default::default(), &EngineOptions::default()).unwrap();
    let fid = m
        .functions()
        .iter()
        .map(|f| f.id)
        .find(|&id| m.name(id).is_some_and(|n| n.starts_with("f(")))
        .unwrap();
    let lanes = 300usize;
    let rows: Vec<u64> = (0..lanes as u64).map(|i| i % 16).collect();
    let cols: Vec<u64> = (0..lanes as u64).map(|i| (i / 16) % 16).collect();
    let elems: Vec<u64> = (0..lanes)
        .map(|i| (i as f32 - 100.0).to_bits() as u64)
        .collect();
    let ws: Vec<u64> = (0..lanes as u64).map(|i| i % 5).collect();
    let mut r = inputs();
    let out = p
        .call_function(fid, &[&rows, &cols, &elems, &ws], lanes, &mut r)
        .unwrap();
    for (i, &o) in out.iter().enumerate() {
        let w = want(
            rows[i] as u32,
            cols[i] as u32,
            i as f32 - 100.0,
            ws[i] as u32,
        );
        assert_eq!(f32::from_bits(o as u32), w, "lane {i}");
    }
}

/// Rows that repeat the row above, computed once (`EngineOptions::repeated_rows_once`): a
/// MulAdd into f32 (in place too) and into f16, a Row reduction, a per-element exp (in place
/// too) and a per-element product with a matrix operand give the same bits as with every row
/// computed, for tiles whose last rows repeat from various rows on, in A, in C or both, per
/// subgroup; rows that differ only in a zero's sign or a NaN's payload end the run.
#[test]
fn repeated_rows_computed_once_give_every_rows_bits() {
    let Some(spv) = compile(&src("repeated_rows.comp"), &[]) else {
        return;
    };
    let m = coopmat_spirv::Module::from_bytes(&spv).unwrap();
    // xorshift64*: the same inputs every run.
    let mut state = 41u64;
    let mut below = |n: u64| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    };
    // A 16x16 tile whose rows from `from` on repeat row `from`; `edit` changes one element of
    // one row afterwards.
    let mut tile = |from: usize, scale: f32, edit: Option<(usize, u32)>| -> Vec<u32> {
        let mut t: Vec<u32> = (0..256)
            .map(|_| ((below(2001) as f32 - 1000.0) * scale).to_bits())
            .collect();
        for r in from + 1..16 {
            let (src, dst) = (from * 16, r * 16);
            t.copy_within(src..src + 16, dst);
        }
        if let Some((r, bits)) = edit {
            t[r * 16 + 7] = bits;
        }
        t
    };
    let half = |t: &[u32]| -> Vec<u8> {
        t.iter()
            .flat_map(|&x| half::f16::from_f32(f32::from_bits(x)).to_le_bytes())
            .collect()
    };
    let words = |t: &[u32]| -> Vec<u8> { t.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let b = tile(16, 1.0 / 512.0, None);
    let run = |a: &[Vec<u32>; 2], c: &[Vec<u32>; 2], on: bool| {
        let opts = EngineOptions {
            repeated_rows_once: on,
            ..Default::default()
        };
        let p = Pipeline::compile(&m, "", &Default::default(), &opts).unwrap();
        let mut r = Resources::default();
        r.buffers
            .insert((0, 0), [half(&a[0]), half(&a[1])].concat());
        r.buffers.insert((0, 1), half(&b));
        r.buffers
            .insert((0, 2), [words(&c[0]), words(&c[1])].concat());
        r.buffers.insert((0, 3), vec![0; 2 * 2048 * 4]);
        r.buffers.insert((0, 4), vec![0; 2 * 256 * 2]);
        let stats = p.dispatch(&mut r, [1, 1, 1]).unwrap();
        let out = [r.buffers.remove(&(0, 3)), r.buffers.remove(&(0, 4))];
        (out, stats.repeated_rows)
    };
    let neg_zero = Some((10, 0x8000_0000));
    let pos_zero = Some((10, 0));
    // (A's first repeated row, C's, C's edit) per subgroup, and the rows computed once.
    type Case = [(usize, usize, Option<(usize, u32)>); 2];
    let cases: [(Case, Option<u64>); 7] = [
        ([(16, 16, None); 2], Some(0)),
        // Every row the same in both: 15 rows copied by each of the 7 ops, per subgroup.
        ([(0, 0, None); 2], Some(2 * 7 * 15)),
        ([(5, 16, None), (3, 9, None)], None),
        ([(4, 4, None), (16, 16, None)], None),
        // C's row 10 differs from the others by a zero's sign (all rows +0 there, or -0).
        ([(2, 2, neg_zero), (2, 2, pos_zero)], None),
        // A NaN in every repeated row (the reduction's fold then declines), and one whose
        // payload differs in row 12.
        (
            [
                (3, 6, Some((9, 0x7fc0_0000))),
                (3, 6, Some((12, 0x7fa0_0001))),
            ],
            None,
        ),
        ([(1, 16, None), (16, 1, None)], None),
    ];
    for (k, (case, copied)) in cases.into_iter().enumerate() {
        let a = [
            tile(case[0].0, 1.0 / 256.0, None),
            tile(case[1].0, 1.0 / 256.0, None),
        ];
        let c = [
            tile(case[0].1, 1.0 / 128.0, case[0].2),
            tile(case[1].1, 1.0 / 128.0, case[1].2),
        ];
        let (once, n_once) = run(&a, &c, true);
        let (every, n_every) = run(&a, &c, false);
        assert_eq!(once, every, "case {k}");
        assert_eq!(n_every, 0, "case {k}: nothing copied with the option off");
        match copied {
            Some(n) => assert_eq!(n_once, n, "case {k}: rows copied"),
            None => assert!(n_once > 0, "case {k}: some rows copied"),
        }
    }
}
