//! `coopmat gpu run` against `coopmat run`: the same shader and buffers on Mesa lavapipe
//! (through the peer tools' `sid-run`, which supplies the Vulkan loader and driver) and on the
//! engine give byte-identical buffers. Skipped with a notice when the peers are absent.

use std::path::Path;
use std::process::Command;

#[test]
fn gpu_run_on_lavapipe_matches_the_engine() {
    let peers = Path::new("/opt/coopmat-peers/bin");
    let (sid_run, glslang) = (peers.join("sid-run"), peers.join("glslangValidator"));
    if !sid_run.exists() || !glslang.exists() {
        eprintln!("notice: sid-run or glslangValidator absent; skipping the lavapipe comparison");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spv = dir.path().join("arith.spv");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../exec/bench/arith.comp");
    let st = Command::new(&glslang)
        .args(["-V", "--target-env", "vulkan1.3", "-o"])
        .arg(&spv)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stdout)
    );
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let common = |o: &str| {
        vec![
            spv.to_str().unwrap().to_string(),
            "--groups".into(),
            "2,1,1".into(),
            "--buffer".into(),
            "0:0=zeros:2048".into(),
            "--out".into(),
            format!("0:0={o}"),
        ]
    };
    let gpu = Command::new(&sid_run)
        .arg(env!("CARGO_BIN_EXE_coopmat"))
        .args(["gpu", "run"])
        .args(common(&out("gpu.bin")))
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&gpu.stdout).into_owned() + &String::from_utf8_lossy(&gpu.stderr);
    if text.contains("no Vulkan loader") || text.contains("no Vulkan device") {
        eprintln!("notice: lavapipe not usable here ({text}); skipping");
        return;
    }
    assert!(gpu.status.success(), "{text}");
    assert!(text.contains("llvmpipe"), "{text}");
    let cpu = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .arg("run")
        .args(common(&out("cpu.bin")))
        .output()
        .unwrap();
    assert!(
        cpu.status.success(),
        "{}",
        String::from_utf8_lossy(&cpu.stderr)
    );
    let (g, c) = (
        std::fs::read(out("gpu.bin")).unwrap(),
        std::fs::read(out("cpu.bin")).unwrap(),
    );
    assert_eq!(g.len(), 2048);
    assert!(g.iter().any(|&b| b != 0), "the shader wrote nothing");
    assert_eq!(g, c, "lavapipe and the engine differ");
    // `coopmat diff` runs both itself and says so.
    let diff = Command::new(&sid_run)
        .arg(env!("CARGO_BIN_EXE_coopmat"))
        .args([
            "diff",
            spv.to_str().unwrap(),
            "--groups",
            "2,1,1",
            "--buffer",
            "0:0=zeros:2048",
            "--compare",
            "0:0:u32:16",
        ])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&diff.stdout).into_owned() + &String::from_utf8_lossy(&diff.stderr);
    assert_eq!(diff.status.code(), Some(0), "{text}");
    assert!(text.contains("0:0 (512 u32): agree"), "{text}");
}

#[test]
fn gpu_commands_fail_cleanly_without_a_loader_or_on_bad_input() {
    // Without sid-run there is normally no libvulkan here: a clear error, exit status 2.
    let out = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .args(["gpu", "run", "/nonexistent.spv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("reading /nonexistent.spv"), "{err}");
}

#[test]
fn lavapipe_refuses_nv_matrices_by_name_and_runs_them_after_nv_to_khr() {
    let peers = Path::new("/opt/coopmat-peers/bin");
    let (sid_run, glslang) = (peers.join("sid-run"), peers.join("glslangValidator"));
    if !sid_run.exists() || !glslang.exists() {
        eprintln!("notice: sid-run or glslangValidator absent; skipping");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("nv.comp");
    std::fs::write(
        &src,
        r#"#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A { float16_t a[]; };
layout(std430, binding = 1) buffer C { float c[]; };
void main() {
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ma;
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> mb;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> mc = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(1.0);
    coopMatLoadNV(ma, a, 0, 16, false);
    coopMatLoadNV(mb, a, 256, 16, true);
    mc = coopMatMulAddNV(ma, mb, mc);
    coopMatStoreNV(mc, c, 0, 16, false);
}"#,
    )
    .unwrap();
    let (nv, khr) = (dir.path().join("nv.spv"), dir.path().join("khr.spv"));
    let st = Command::new(&glslang)
        .args(["-V", "--target-env", "vulkan1.3", "-o"])
        .arg(&nv)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stdout)
    );
    // Integers as f16 inputs: every product and sum exact, so any order agrees.
    let input = dir.path().join("a.bin");
    let halfs: Vec<u8> = (0..512u32)
        .flat_map(|i| half::f16::from_f32((i % 7) as f32 - 3.0).to_le_bytes())
        .collect();
    std::fs::write(&input, halfs).unwrap();
    let buffers = |spv: &Path| {
        vec![
            spv.to_str().unwrap().to_string(),
            "--buffer".into(),
            format!("0:0=raw:{}", input.display()),
            "--buffer".into(),
            "0:1=zeros:1024".into(),
        ]
    };
    let gpu = |spv: &Path, cmd: &[&str], extra: &[&str]| {
        let o = Command::new(&sid_run)
            .arg(env!("CARGO_BIN_EXE_coopmat"))
            .args(cmd)
            .args(buffers(spv))
            .args(extra)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
        )
    };
    let (code, text) = gpu(&nv, &["gpu", "run"], &[]);
    if text.contains("no Vulkan loader") {
        eprintln!("notice: lavapipe not usable here; skipping");
        return;
    }
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("capability CooperativeMatrixNV needs VK_NV_cooperative_matrix"),
        "{text}"
    );
    let lower = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .args([
            "lower",
            nv.to_str().unwrap(),
            "-o",
            khr.to_str().unwrap(),
            "--pass",
            "nv-to-khr",
        ])
        .output()
        .unwrap();
    assert!(
        lower.status.success(),
        "{}",
        String::from_utf8_lossy(&lower.stderr)
    );
    let (code, text) = gpu(&khr, &["diff"], &["--compare", "0:1:f32:16"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("0:1 (256 f32): agree"), "{text}");
}
