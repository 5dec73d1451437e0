//! Shared helpers: compiling GLSL / assembling SPIR-V text with the peer tools, running.
#![allow(dead_code)]

use coopmat_exec::{EngineOptions, Pipeline, Resources};
use coopmat_spirv::Module;
use std::path::PathBuf;
use std::process::Command;

/// The head of a GLSL compute shader using KHR cooperative matrices, 16-bit types and subgroup
/// built-ins.
pub const COOPMAT_HDR: &str = r#"#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
"#;

/// The peer tool, or None (with a printed notice) when it is absent.
pub fn tool(name: &str) -> Option<PathBuf> {
    let p = coopmat_testkit::peer_tool(name);
    if p.is_none() {
        eprintln!("notice: peer tool {name} not found; skipping");
    }
    p
}

/// Compiles a GLSL compute shader (`-V --target-env vulkan1.3`); None if glslang is absent.
pub fn glsl(src: &str) -> Option<Module> {
    glsl_opt(src, false)
}

/// Like [`glsl`], optionally running `spirv-opt -O` afterwards.
pub fn glsl_opt(src: &str, optimize: bool) -> Option<Module> {
    let glslang = tool("glslangValidator")?;
    let dir = coopmat_testkit::scratch_dir("exec-tests");
    let (input, out) = (
        dir.path().join("shader.comp"),
        dir.path().join("shader.spv"),
    );
    std::fs::write(&input, src).unwrap();
    let o = Command::new(glslang)
        .args(["-V", "--target-env", "vulkan1.3", "-o"])
        .arg(&out)
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "glslang failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    if optimize {
        let opt = tool("spirv-opt")?;
        let o = Command::new(opt)
            .arg("-O")
            .arg(&out)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "spirv-opt failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let bytes = std::fs::read(&out).unwrap();
    Some(Module::from_bytes(&bytes).unwrap())
}

/// Assembles SPIR-V text with coopmat's own assembler (for Vulkan 1.3). Always `Some`: the
/// `Option` keeps the call sites' shape of the tool-backed helpers (`glsl`, `glsl_opt`).
pub fn spvasm(src: &str) -> Option<Module> {
    use coopmat_spirv::asm::{AsmOptions, TargetEnv, assemble};
    let options = AsmOptions {
        target_env: TargetEnv::from_name("vulkan1.3"),
        ..AsmOptions::default()
    };
    let words = assemble(src, &options).unwrap_or_else(|e| panic!("assembly failed: {e}"));
    Some(Module::from_words(&words).unwrap())
}

/// Compiles and dispatches; panics with the engine's message on error.
pub fn run(
    m: &Module,
    res: &mut Resources,
    groups: [u32; 3],
    opts: &EngineOptions,
) -> coopmat_exec::DispatchStats {
    let p = Pipeline::compile(m, "main", &Default::default(), opts)
        .unwrap_or_else(|e| panic!("compile: {e}"));
    p.dispatch(res, groups)
        .unwrap_or_else(|e| panic!("dispatch: {e}"))
}

pub fn u32s(v: &[u8]) -> Vec<u32> {
    v.chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
pub fn i32s(v: &[u8]) -> Vec<i32> {
    v.chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
pub fn f32s(v: &[u8]) -> Vec<f32> {
    v.chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
pub fn bytes_u32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A tiny deterministic generator (xorshift64*).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
