//! Helpers shared by the lowering tests: GLSL through glslang, and validation by coopmat val and
//! spirv-val 2026.4 (when installed).

use coopmat_spirv::Module;

/// Compiles GLSL with glslang for Vulkan 1.3; `None` (the test skips) when glslang is absent.
pub fn glsl(src: &str) -> Option<Module> {
    let glslang = coopmat_testkit::peer_tool("glslangValidator")?;
    let dir = coopmat_testkit::scratch_dir("lower");
    let (comp, spv) = (dir.path().join("s.comp"), dir.path().join("s.spv"));
    std::fs::write(&comp, src).unwrap();
    let out = std::process::Command::new(glslang)
        .args(["-V", "--target-env", "vulkan1.3", "-o"])
        .arg(&spv)
        .arg(&comp)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(Module::from_bytes(&std::fs::read(spv).unwrap()).unwrap())
}

/// Asserts that coopmat val (and spirv-val, when installed) accept the module.
pub fn valid(m: &Module) {
    let opts = coopmat_val::ValidateOptions {
        target_env: coopmat_val::TargetEnv::parse("vulkan1.3").unwrap(),
        ..Default::default()
    };
    let errors: Vec<_> = coopmat_val::validate(m, &opts)
        .into_iter()
        .filter(|d| d.severity == coopmat_val::Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // And SPIRV-Tools' validator, when installed.
    if let Some(Err(e)) = coopmat_testkit::spirv_val(&m.to_bytes(m.endian), "vulkan1.3") {
        panic!("spirv-val: {e}");
    }
}
