//! `coopmat gpu run` against `coopmat run`: the same shader and buffers on Mesa lavapipe
//! (through the peer tools' `sid-run`, which supplies the Vulkan loader and driver) and on the
//! engine give byte-identical buffers. Skipped with a notice when the peers are absent.

use std::path::Path;
use std::process::Command;

/// GLSL `src` to SPIR-V `spv` for Vulkan 1.3 with glslang (the callers have checked that it
/// is installed).
fn compile(src: &Path, spv: &Path) {
    let bytes = coopmat_testkit::glslang(src, &[]).expect("glslangValidator");
    std::fs::write(spv, bytes).unwrap();
}

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
    compile(&src, &spv);
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
    // SaturatingAccumulation where the device's list does not allow it is invalid usage: refused
    // before any device is opened.
    let out = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .args(["conformance", "--device", "gpu", "--saturating-all"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--saturating-all is for the engine"), "{err}");
}

/// A shader lavapipe cannot run: `gpu run` refuses it naming `missing`; after `coopmat lower
/// --pass PASS`, `coopmat diff` (engine against lavapipe) finds every compared buffer equal.
/// `buffers` get the directory's path for `{dir}`; `files` are written there first.
struct LoweredOnLavapipe<'a> {
    glsl: &'a str,
    pass: &'a str,
    missing: &'a str,
    files: Vec<(&'a str, Vec<u8>)>,
    args: Vec<String>,
    /// `coopmat diff --compare` of the output.
    compare: &'a str,
    agree: &'a str,
}

impl LoweredOnLavapipe<'_> {
    fn check(self) {
        let peers = Path::new("/opt/coopmat-peers/bin");
        let (sid_run, glslang) = (peers.join("sid-run"), peers.join("glslangValidator"));
        if !sid_run.exists() || !glslang.exists() {
            eprintln!("notice: sid-run or glslangValidator absent; skipping");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("in.comp");
        std::fs::write(&src, self.glsl).unwrap();
        for (name, bytes) in &self.files {
            std::fs::write(dir.path().join(name), bytes).unwrap();
        }
        let (original, lowered) = (dir.path().join("in.spv"), dir.path().join("lowered.spv"));
        compile(&src, &original);
        let args: Vec<String> = self
            .args
            .iter()
            .map(|a| a.replace("{dir}", dir.path().to_str().unwrap()))
            .collect();
        let gpu = |spv: &Path, cmd: &str| {
            let o = Command::new(&sid_run)
                .arg(env!("CARGO_BIN_EXE_coopmat"))
                .arg(cmd)
                .args(if cmd == "gpu" { vec!["run"] } else { vec![] })
                .arg(spv)
                .args(&args)
                .args(if cmd == "diff" {
                    vec!["--compare", self.compare]
                } else {
                    vec![]
                })
                .output()
                .unwrap();
            (
                o.status.code(),
                String::from_utf8_lossy(&o.stdout).into_owned()
                    + &String::from_utf8_lossy(&o.stderr),
            )
        };
        let (code, text) = gpu(&original, "gpu");
        if text.contains("no Vulkan loader") {
            eprintln!("notice: lavapipe not usable here; skipping");
            return;
        }
        assert_eq!(code, Some(2), "{text}");
        assert!(text.contains(self.missing), "{text}");
        let lower = Command::new(env!("CARGO_BIN_EXE_coopmat"))
            .arg("lower")
            .arg(&original)
            .arg("-o")
            .arg(&lowered)
            .args(["--pass", self.pass])
            .output()
            .unwrap();
        assert!(
            lower.status.success(),
            "{}",
            String::from_utf8_lossy(&lower.stderr)
        );
        let (code, text) = gpu(&lowered, "diff");
        assert_eq!(code, Some(0), "{text}");
        assert!(text.contains(self.agree), "{text}");
    }
}

#[test]
fn lavapipe_refuses_nv_matrices_by_name_and_runs_them_after_nv_to_khr() {
    // Integers as f16 inputs: every product and sum exact, so any order agrees.
    let halfs: Vec<u8> = (0..512u32)
        .flat_map(|i| half::f16::from_f32((i % 7) as f32 - 3.0).to_le_bytes())
        .collect();
    LoweredOnLavapipe {
        glsl: r#"#version 450
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
        pass: "nv-to-khr",
        missing: "capability CooperativeMatrixNV needs VK_NV_cooperative_matrix",
        files: vec![("a.bin", halfs)],
        args: [
            "--buffer",
            "0:0=raw:{dir}/a.bin",
            "--buffer",
            "0:1=zeros:1024",
        ]
        .map(String::from)
        .to_vec(),
        compare: "0:1:f32:16",
        agree: "0:1 (256 f32): agree",
    }
    .check();
}

/// The coop2-to-khr test GEMM (tensor loads and stores through row-major, column-major and
/// one-dimensional layouts): lavapipe lacks VK_NV_cooperative_matrix2, runs the lowered module,
/// and agrees with the engine on all of C (small integers: exact in any order).
#[test]
fn lavapipe_refuses_tensor_addressing_and_runs_it_after_coop2_to_khr() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lower/tests/coop2");
    let glsl = std::fs::read_to_string(tests.join("header.glsl")).unwrap()
        + &std::fs::read_to_string(tests.join("gemm.glsl")).unwrap();
    let f16 = |v: f32| half::f16::from_f32(v).to_le_bytes();
    let a: Vec<u8> = (0..64 * 48)
        .flat_map(|i| f16(((i * 7) % 11) as f32 - 5.0))
        .collect();
    let b: Vec<u8> = (0..64 * 48)
        .flat_map(|i| f16(((i * 5) % 13) as f32 - 6.0))
        .collect();
    // lda, ldb, ldc, k, row0, col0
    let push: String = [48u32, 48, 64, 32, 16, 32]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .map(|b| format!("{b:02x}"))
        .collect();
    LoweredOnLavapipe {
        glsl: &glsl,
        pass: "coop2-to-khr",
        missing: "needs VK_NV_cooperative_matrix2 cooperativeMatrixTensorAddressing",
        files: vec![("a.bin", a), ("b.bin", b)],
        args: [
            "--buffer",
            "0:0=raw:{dir}/a.bin",
            "--buffer",
            "0:1=raw:{dir}/b.bin",
            "--buffer",
            "0:2=zeros:17408",
        ]
        .map(String::from)
        .into_iter()
        .chain(["--push".into(), format!("0x{push}")])
        .collect(),
        compare: "0:2:f32:64",
        agree: "0:2 (4352 f32): agree",
    }
    .check();
}

/// The conformance suite's QCOM family on lavapipe, which lacks the extension: every case runs
/// through qcom-to-khr and agrees with the suite's reference.
#[test]
fn lavapipe_passes_the_qcom_family_through_qcom_to_khr() {
    let sid_run = Path::new("/opt/coopmat-peers/bin/sid-run");
    if !sid_run.exists() {
        eprintln!("notice: sid-run absent; skipping");
        return;
    }
    let o = Command::new(sid_run)
        .arg(env!("CARGO_BIN_EXE_coopmat"))
        .args([
            "conformance",
            "--device",
            "gpu",
            "--profile",
            "lavapipe-26",
            "--family",
            "qcom",
            "-v",
        ])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    if text.contains("no Vulkan loader") {
        eprintln!("notice: lavapipe not usable here; skipping");
        return;
    }
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains("| qcom | 17 | 17 | 0 | 0 | 0 |"), "{text}");
    assert!(
        text.contains("Pass qcom/float32/8x8/Acc/packed/extract (through qcom-to-khr)"),
        "{text}"
    );
}

/// `--address`: buffer device addresses in the push constants and in a buffer. The engine gives
/// its own addresses, lavapipe (bufferDeviceAddress) its own; both read through them to the
/// same results, which the test also knows.
#[test]
fn device_addresses_reach_the_engine_and_lavapipe() {
    let peers = Path::new("/opt/coopmat-peers/bin");
    let (sid_run, glslang) = (peers.join("sid-run"), peers.join("glslangValidator"));
    if !glslang.exists() {
        eprintln!("notice: glslangValidator absent; skipping");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spv = dir.path().join("bda.spv");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/glsl/device_addresses.comp");
    compile(&src, &spv);
    let data: Vec<u8> = (100u32..132).flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(dir.path().join("data.bin"), &data).unwrap();
    let args_with_push = |out: Option<&Path>, push: &str| {
        let mut v: Vec<String> = vec![
            spv.to_str().unwrap().into(),
            "--buffer".into(),
            format!("0:0=raw:{}", dir.path().join("data.bin").display()),
            // Bytes 0..8 become the address of 0:0, the word at 8 (scale) stays 7.
            "--buffer".into(),
            "0:1=const:16:7".into(),
            "--buffer".into(),
            "0:2=zeros:128".into(),
            "--push".into(),
            push.into(),
            "--address".into(),
            "push:0=0:1".into(),
            "--address".into(),
            "push:8=0:0".into(),
            "--address".into(),
            "0:1@0=0:0".into(),
        ];
        if let Some(o) = out {
            v.push("--out".into());
            v.push(format!("0:2={}", o.display()));
        }
        v
    };
    let push16 = format!("0x{}", "00".repeat(16));
    let args = |out: Option<&Path>| args_with_push(out, &push16);
    let out = dir.path().join("o.bin");
    let run = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .arg("run")
        .args(args(Some(&out)))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let got: Vec<u32> = std::fs::read(&out)
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want: Vec<u32> = (100u32..132).map(|v| 4 * v + 7).collect();
    assert_eq!(got, want);
    // An address needs room: a push block of 4 bytes cannot take one at byte 0.
    let short = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .arg("run")
        .args(args_with_push(None, "0x00000000"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&short.stderr);
    assert_eq!(short.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--address: --push has 4 bytes: no room for an address at byte 0"),
        "{err}"
    );
    if !sid_run.exists() {
        eprintln!("notice: sid-run absent; skipping lavapipe");
        return;
    }
    let diff = Command::new(&sid_run)
        .arg(env!("CARGO_BIN_EXE_coopmat"))
        .arg("diff")
        .args(args(None))
        .args(["--compare", "0:2:u32"])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&diff.stdout).into_owned() + &String::from_utf8_lossy(&diff.stderr);
    if text.contains("no Vulkan loader") {
        eprintln!("notice: lavapipe not usable here; skipping");
        return;
    }
    assert!(diff.status.success(), "{text}");
    assert!(text.contains("0:2 (32 u32): agree"), "{text}");
}
