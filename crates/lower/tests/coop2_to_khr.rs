//! `coop2_to_khr`: cooperative-matrix-2 tensor loads and stores (GLSL through glslang, skipped
//! when it is absent) become KHR loads and stores that coopmat val and spirv-val accept, with no
//! SPV_NV_cooperative_matrix2 or SPV_NV_tensor_addressing left, and the engine runs the lowered
//! module to the original's bytes and to a reference product computed here; what has no KHR
//! form is refused with the reason.

use coopmat_exec::{EngineOptions, Pipeline, Resources};
use coopmat_lower::{LowerError, coop2_to_khr};
use coopmat_spirv::Module;
use coopmat_spirv::grammar::op;

mod common;
use common::{glsl, valid};

/// Extensions, the buffers A, B and C, push constants and matrix types of every case.
const HEADER: &str = include_str!("coop2/header.glsl");

/// The GEMM tile (its comment says what it exercises).
const GEMM: &str = include_str!("coop2/gemm.glsl");

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn run(m: &Module, a: &[u8], b: &[u8], push: &[u32]) -> Vec<u8> {
    let p = Pipeline::compile(m, "main", &Default::default(), &EngineOptions::default()).unwrap();
    let mut r = Resources::default();
    r.buffers.insert((0, 0), a.to_vec());
    r.buffers.insert((0, 1), b.to_vec());
    r.buffers.insert((0, 2), vec![0; 4 * (64 * 64 + 256)]);
    r.push_constants = words(push);
    p.dispatch(&mut r, [1, 1, 1]).unwrap();
    r.buffers[&(0, 2)].clone()
}

fn f16_bytes(v: &[f32]) -> Vec<u8> {
    v.iter()
        .flat_map(|&x| half::f16::from_f32(x).to_le_bytes())
        .collect()
}

#[test]
fn tensor_gemm_lowered_runs_the_same_and_matches_the_reference() {
    let Some(original) = glsl(&format!("{HEADER}{GEMM}")) else {
        eprintln!("glslangValidator not installed: skipped");
        return;
    };
    let mut lowered = original.clone();
    let report = coop2_to_khr(&mut lowered).unwrap();
    assert_eq!((report.loads, report.stores), (2, 2), "{report:?}");
    assert!(lowered.instructions.iter().all(|i| !matches!(
        i.opcode,
        op::CooperativeMatrixLoadTensorNV
            | op::CooperativeMatrixStoreTensorNV
            | op::TypeTensorLayoutNV
            | op::CreateTensorLayoutNV
            | op::TensorLayoutSliceNV
    )));
    assert!(
        lowered
            .extensions()
            .all(|e| e != "SPV_NV_cooperative_matrix2" && e != "SPV_NV_tensor_addressing"),
        "{:?}",
        lowered.extensions().collect::<Vec<_>>()
    );
    valid(&lowered);

    // A: 64 x 48 row-major with lda 48; B: 48 x 64 column-major with ldb 48; small integers, so
    // every product and sum is exact in f32.
    let (lda, ldb, ldc, k, row0, col0) = (48usize, 48usize, 64usize, 32usize, 16usize, 32usize);
    let av: Vec<f32> = (0..64 * lda).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
    let bv: Vec<f32> = (0..64 * ldb).map(|i| ((i * 5) % 13) as f32 - 6.0).collect();
    let (a, b) = (f16_bytes(&av), f16_bytes(&bv));
    let push = [lda, ldb, ldc, k, row0, col0].map(|x| x as u32);
    let before = run(&original, &a, &b, &push);
    let after = run(&lowered, &a, &b, &push);
    assert_eq!(before, after, "the lowered module wrote different bytes");
    let out: Vec<f32> = after
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for r in 0..16 {
        for cc in 0..16 {
            let want: f32 = (0..k)
                .map(|kk| av[(row0 + r) * lda + kk] * bv[kk + (col0 + cc) * ldb])
                .sum();
            assert_eq!(out[(row0 + r) * ldc + col0 + cc], want, "C[{r}][{cc}]");
            assert_eq!(out[64 * 64 + r * 16 + cc], want, "flat C[{r}][{cc}]");
        }
    }
}

fn refused(body: &str, expect: &str) {
    let Some(mut m) = glsl(&format!("{HEADER}{body}")) else {
        return;
    };
    match coop2_to_khr(&mut m) {
        Err(LowerError::Refused(why)) => assert!(why.contains(expect), "{why}"),
        other => panic!("expected a refusal naming {expect:?}, got {other:?}"),
    }
}

/// A 16x16 A matrix loaded through the layout `l` that `setup` makes (`load` replaces the
/// load's layout argument when given), then stored.
fn load_through(setup: &str, load: &str) -> String {
    let declared = if setup.starts_with("tensorLayoutNV") {
        String::new()
    } else {
        "tensorLayoutNV<2> l = createTensorLayoutNV(2);\n".into()
    };
    format!(
        "void main() {{\n{declared}{setup}\nMA m; coopMatLoadTensorNV(m, a, 0, {load});\n\
         coopMatStore(m, a, 256, 16, gl_CooperativeMatrixLayoutRowMajor);\n}}"
    )
}

#[test]
fn what_has_no_khr_form_is_refused_with_the_reason() {
    for (why, setup, load, expect) in [
        (
            "clamp mode Constant: out-of-range elements need bounds checks",
            "tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> l = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);\n\
             l = setTensorLayoutDimensionNV(l, 16, 16);",
            "l",
            "clamp mode Constant",
        ),
        (
            "a span of 8 columns for a 16-column matrix wraps each row over two tensor rows",
            "l = setTensorLayoutDimensionNV(l, 32, 32);",
            "sliceTensorLayoutNV(l, 0, 32, 0, 8)",
            "spans (32, 8)",
        ),
        (
            "spans that depend on the path: 16 columns on one branch, 8 on the other",
            "l = setTensorLayoutDimensionNV(l, 32, 32);\n\
             if (p.k > 16) { l = sliceTensorLayoutNV(l, 0, 16, 0, 16); } else { l = sliceTensorLayoutNV(l, 0, 16, 0, 8); }",
            "l",
            "spans (16, not a constant)",
        ),
        (
            "columns from a push constant: not provably the matrix's 16",
            "l = setTensorLayoutDimensionNV(l, 16, p.k);",
            "l",
            "not a constant",
        ),
        (
            "neither stride provably 1",
            "l = setTensorLayoutDimensionNV(l, 16, 16);\nl = setTensorLayoutStrideNV(l, p.lda, p.ldb);",
            "l",
            "neither stride",
        ),
        (
            "block sizes address whole blocks",
            "l = setTensorLayoutBlockSizeNV(l, 1, 2);\nl = setTensorLayoutDimensionNV(l, 16, 16);",
            "l",
            "block size",
        ),
        (
            "a view",
            "l = setTensorLayoutDimensionNV(l, 16, 16);\n\
             tensorViewNV<2, false, 1, 0> v = createTensorViewNV(2, false, 1, 0);",
            "l, v",
            "tensor view",
        ),
    ] {
        eprintln!("{why}");
        refused(&load_through(setup, load), expect);
    }
    // Workgroup scope.
    refused(
        r#"void main() {
    coopmat<float16_t, gl_ScopeWorkgroup, 32, 32, gl_MatrixUseA> m;
    coopMatLoad(m, a, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, a, 2048, 32, gl_CooperativeMatrixLayoutRowMajor);
}"#,
        "Subgroup scope",
    );
    // A reduction.
    refused(
        r#"float add(const in float x, const in float y) { return x + y; }
void main() {
    MC m = MC(1.0);
    MC r;
    coopMatReduceNV(r, m, gl_CooperativeMatrixReduceRowNV, add);
    coopMatStore(r, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}"#,
        "reduction",
    );
}
