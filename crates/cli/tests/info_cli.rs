//! `coopmat info` end to end on a module assembled by the reference assembler (spirv-as).

use std::path::PathBuf;
use std::process::Command;

const TEXT: &str = r#"
OpCapability Shader
OpCapability Float16
OpCapability VulkanMemoryModel
OpCapability CooperativeMatrixKHR
OpExtension "SPV_KHR_cooperative_matrix"
OpMemoryModel Logical Vulkan
OpEntryPoint GLCompute %main "main"
OpExecutionModeId %main LocalSizeId %c64 %c1 %c1
OpDecorate %rows SpecId 7
%void = OpTypeVoid
%fn = OpTypeFunction %void
%f16 = OpTypeFloat 16
%u32 = OpTypeInt 32 0
%c64 = OpConstant %u32 64
%c1 = OpConstant %u32 1
%subgroup = OpConstant %u32 3
%rows = OpSpecConstant %u32 16
%matrix_a = OpConstant %u32 0
%mat = OpTypeCooperativeMatrixKHR %f16 %subgroup %rows %c1 %matrix_a
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
"#;

fn spirv_as() -> Option<PathBuf> {
    let dir = std::env::var_os("COOPMAT_PEERS_BIN")
        .map(PathBuf::from)
        .unwrap_or("/opt/coopmat-peers/bin".into());
    let p = dir.join("spirv-as");
    p.is_file().then_some(p)
}

fn assembled(dir: &std::path::Path) -> Option<PathBuf> {
    let Some(tool) = spirv_as() else {
        eprintln!("skipping: spirv-as not found");
        return None;
    };
    let src = dir.join("m.spvasm");
    let out = dir.join("m.spv");
    std::fs::write(&src, TEXT).unwrap();
    let st = Command::new(tool)
        .args(["--target-env", "spv1.6", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    Some(out)
}

#[test]
fn human_output_resolves_spec_constants() {
    let scratch = coopmat_testkit::scratch_dir("info-cli-human");
    let dir = scratch.path();
    let Some(spv) = assembled(dir) else { return };
    let out = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .arg("info")
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(&format!("{}:", spv.display())), "{text}");
    assert!(
        text.contains("SPIR-V 1.6, generator Khronos SPIR-V Tools Assembler (7)"),
        "{text}"
    );
    assert!(
        text.contains("entry point: GLCompute \"main\", local size (64, 1, 1) via LocalSizeId"),
        "{text}"
    );
    assert!(
        text.contains("KHR f16 Subgroup rows spec constant 7 (default 16) cols 1 MatrixAKHR"),
        "{text}"
    );
    assert!(
        text.contains("cooperative instructions: OpTypeCooperativeMatrixKHR 1"),
        "{text}"
    );
}

#[test]
fn json_output_and_exit_status() {
    let scratch = coopmat_testkit::scratch_dir("info-cli-json");
    let dir = scratch.path();
    let Some(spv) = assembled(dir) else { return };
    let bad = dir.join("bad.spv");
    std::fs::write(&bad, b"not spirv").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .args(["info", "--json"])
        .arg(&spv)
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "a bad module makes the status 1"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v[0];
    assert_eq!(m["version"], "1.6");
    assert_eq!(
        m["capabilities"],
        serde_json::json!([
            "Shader",
            "Float16",
            "VulkanMemoryModel",
            "CooperativeMatrixKHR"
        ])
    );
    let rows = &m["cooperative_matrix_types"][0]["rows"];
    assert_eq!(
        (
            rows["kind"].as_str(),
            rows["spec_id"].as_u64(),
            rows["default"].as_u64()
        ),
        (Some("spec_constant"), Some(7), Some(16))
    );
    assert_eq!(m["entry_points"][0]["local_size"][0]["value"], 64);
    assert!(v[1]["error"].as_str().unwrap().contains("word"), "{}", v[1]);
}
