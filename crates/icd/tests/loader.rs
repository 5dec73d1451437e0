//! The driver through the real Vulkan loader (the peers' `sid-run` supplies Debian sid's
//! libvulkan): a manifest next to the built library, `vulkaninfo` listing the device and its six
//! cooperative extensions, and `coopmat gpu run` producing the engine's bytes. Skipped with a
//! notice when the peers, the library or the `coopmat` binary are absent.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{driver_library, profile_dir};

/// A manifest for the built library in a temporary directory (library path absolute).
fn manifest(dir: &Path) -> Option<PathBuf> {
    let lib = driver_library()?;
    let m = dir.join("coopmat_icd.json");
    std::fs::write(
        &m,
        format!(
            r#"{{"file_format_version": "1.0.1", "ICD": {{"library_path": "{}", "api_version": "1.3.290"}}}}"#,
            lib.display()
        ),
    )
    .unwrap();
    Some(m)
}

fn peers() -> Option<PathBuf> {
    let p = Path::new("/opt/coopmat-peers/bin");
    if p.join("sid-run").exists() && p.join("vulkaninfo").exists() {
        Some(p.to_path_buf())
    } else {
        eprintln!("notice: the peer tools (sid-run, vulkaninfo) are absent; skipping");
        None
    }
}

#[test]
fn vulkaninfo_lists_the_device_and_the_cooperative_extensions() {
    let (Some(peers), dir) = (peers(), tempfile::tempdir().unwrap()) else {
        return;
    };
    let Some(m) = manifest(dir.path()) else {
        return;
    };
    let out = Command::new(peers.join("vulkaninfo"))
        .env("VK_DRIVER_FILES", &m)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("coopmat engine"), "{text}");
    assert!(text.contains("PHYSICAL_DEVICE_TYPE_CPU"), "{text}");
    for e in [
        "VK_KHR_cooperative_matrix",
        "VK_NV_cooperative_matrix ",
        "VK_NV_cooperative_matrix2",
        "VK_NV_cooperative_matrix_decode_vector",
        "VK_QCOM_cooperative_matrix_conversion",
        "VK_NV_cooperative_vector",
    ] {
        assert!(text.contains(e), "{e} missing:\n{text}");
    }
}

#[test]
fn gpu_run_through_the_driver_gives_the_engines_bytes() {
    let (Some(peers), dir) = (peers(), tempfile::tempdir().unwrap()) else {
        return;
    };
    let Some(m) = manifest(dir.path()) else {
        return;
    };
    let coopmat = profile_dir().join("coopmat");
    let glslang = peers.join("glslangValidator");
    if !coopmat.exists() || !glslang.exists() {
        eprintln!("notice: the coopmat binary or glslangValidator is absent; skipping");
        return;
    }
    let spv = dir.path().join("gemm.spv");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../exec/bench/gemm.comp");
    let bytes = coopmat_testkit::glslang(&src, &[]).expect("glslangValidator");
    std::fs::write(&spv, bytes).unwrap();
    let args = |out: &Path| {
        let mut v: Vec<String> = [
            spv.to_str().unwrap(),
            "--spec",
            "0=256",
            "--groups",
            "2,2,1",
            "--buffer",
            "0:0=random:131072:1",
            "--buffer",
            "0:1=random:131072:2",
            "--buffer",
            "0:2=zeros:262144",
            "--out",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.push(format!("0:2={}", out.display()));
        v
    };
    let (gpu_out, cpu_out) = (dir.path().join("gpu.bin"), dir.path().join("cpu.bin"));
    let gpu = Command::new(peers.join("sid-run"))
        .env("VK_DRIVER_FILES", &m)
        .arg(&coopmat)
        .args(["gpu", "run"])
        .args(args(&gpu_out))
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&gpu.stdout).into_owned() + &String::from_utf8_lossy(&gpu.stderr);
    assert!(gpu.status.success(), "{text}");
    assert!(
        text.contains("coopmat engine"),
        "the run did not use the driver: {text}"
    );
    let cpu = Command::new(&coopmat)
        .arg("run")
        .args(args(&cpu_out))
        .output()
        .unwrap();
    assert!(
        cpu.status.success(),
        "{}",
        String::from_utf8_lossy(&cpu.stderr)
    );
    let (g, c) = (
        std::fs::read(gpu_out).unwrap(),
        std::fs::read(cpu_out).unwrap(),
    );
    assert_eq!(g.len(), 262144);
    assert!(g.iter().any(|&b| b != 0), "the shader wrote nothing");
    assert_eq!(g, c, "the driver and the engine differ");
}
