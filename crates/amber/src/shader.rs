//! Turning `SHADER` blocks into SPIR-V words: SPIR-V assembly through `coopmat_spirv::asm`, GLSL through
//! `glslangValidator -V`, `SPIRV-HEX` and `SPIRV-BIN` directly.

use crate::parse::{ShaderDef, ShaderFormat};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why a shader could not be turned into SPIR-V.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShaderError {
    /// A tool or input the shader needs is not available here: the script is skipped with this reason.
    Unavailable(String),
    /// The shader is broken (or our tools reject it): the script fails.
    Failed(String),
}

const DEFAULT_PEERS_BIN: &str = "/opt/coopmat-peers/bin";

/// Finds a peer tool: `$COOPMAT_PEERS_BIN/name`, else `/opt/coopmat-peers/bin/name`, else on `PATH`.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("COOPMAT_PEERS_BIN")
        .map_or_else(|| PathBuf::from(DEFAULT_PEERS_BIN), PathBuf::from);
    let candidate = dir.join(name);
    if candidate.is_file() {
        return Some(candidate);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Compiles or assembles `shader` (whose script lives in `script_dir`) into SPIR-V words.
pub fn compile(shader: &ShaderDef, script_dir: &Path) -> Result<Vec<u32>, ShaderError> {
    if shader.stage != "compute" {
        return Err(ShaderError::Unavailable(format!(
            "{} shaders (graphics)",
            shader.stage
        )));
    }
    let source = match &shader.file {
        Some(f) => {
            let p = script_dir.join(f);
            if !p.is_file() {
                return Err(ShaderError::Unavailable(format!(
                    "shader file {f} is absent next to the script"
                )));
            }
            if shader.format == ShaderFormat::SpirvBin {
                let bytes = std::fs::read(&p)
                    .map_err(|e| ShaderError::Failed(format!("{}: {e}", p.display())))?;
                return words_of(&bytes, &shader.name);
            }
            std::fs::read_to_string(&p)
                .map_err(|e| ShaderError::Failed(format!("{}: {e}", p.display())))?
        }
        None => shader.source.clone(),
    };
    match &shader.format {
        ShaderFormat::SpirvAsm => assemble(&source, shader),
        ShaderFormat::Glsl => glsl(&source, shader),
        ShaderFormat::SpirvHex => {
            let mut bytes = Vec::new();
            for tok in source
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|t| !t.is_empty())
            {
                let h = tok.strip_prefix("0x").unwrap_or(tok);
                let b = u8::from_str_radix(h, 16).map_err(|_| {
                    ShaderError::Failed(format!("shader {}: bad SPIRV-HEX byte {tok}", shader.name))
                })?;
                bytes.push(b);
            }
            words_of(&bytes, &shader.name)
        }
        ShaderFormat::SpirvBin => Err(ShaderError::Failed(format!(
            "shader {}: SPIRV-BIN needs FILE",
            shader.name
        ))),
        // OpenCL C through clspv when one is installed (the kernels' arguments are then found
        // by the module's clspv reflection); Amber's COMPILE_OPTIONS only move plain-old-data
        // arguments, which the reflection reports wherever they are, so they are not passed.
        ShaderFormat::Other(f) if f == "OPENCL-C" && find_tool("clspv").is_some() => {
            run_tool("clspv", &[], &source, "cl", &shader.name)
        }
        ShaderFormat::Other(f) => Err(ShaderError::Unavailable(format!(
            "{f} shaders (no {} compiler for them here)",
            if f == "OPENCL-C" { "clspv" } else { "suitable" }
        ))),
    }
}

/// Runs SPIRV-Tools' optimizer (`spirv-opt`, a peer tool) with `passes` (its command-line flags,
/// as Amber's `SHADER_OPTIMIZATION` names them) over `words`.
pub fn optimize(words: &[u32], passes: &[String]) -> Result<Vec<u32>, ShaderError> {
    let exe = find_tool("spirv-opt").ok_or_else(|| {
        ShaderError::Unavailable(
            "SHADER_OPTIMIZATION needs spirv-opt, which is not installed".into(),
        )
    })?;
    if let Some(p) = passes.iter().find(|p| !p.starts_with("--")) {
        return Err(ShaderError::Failed(format!("{p} is not a spirv-opt flag")));
    }
    let dir = tempfile::tempdir()
        .map_err(|e| ShaderError::Failed(format!("temporary directory: {e}")))?;
    let (input, output) = (dir.path().join("in.spv"), dir.path().join("out.spv"));
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&input, bytes).map_err(|e| ShaderError::Failed(format!("{e}")))?;
    let out = Command::new(&exe)
        .args(passes)
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output()
        .map_err(|e| ShaderError::Unavailable(format!("cannot run {}: {e}", exe.display())))?;
    if !out.status.success() {
        return Err(ShaderError::Failed(format!(
            "spirv-opt {}: {}",
            passes.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let bytes = std::fs::read(&output).map_err(|e| ShaderError::Failed(format!("{e}")))?;
    words_of(&bytes, "optimized")
}

fn words_of(bytes: &[u8], name: &str) -> Result<Vec<u32>, ShaderError> {
    if !bytes.len().is_multiple_of(4) || bytes.len() < 20 {
        return Err(ShaderError::Failed(format!(
            "shader {name}: {} bytes is not a SPIR-V module",
            bytes.len()
        )));
    }
    let mut words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if words[0] == 0x0302_2307 {
        // Big-endian module.
        for w in &mut words {
            *w = w.swap_bytes();
        }
    }
    if words[0] != 0x0723_0203 {
        return Err(ShaderError::Failed(format!(
            "shader {name}: bad SPIR-V magic {:#010x}",
            words[0]
        )));
    }
    Ok(words)
}

/// Runs `tool args... in -o out` on `source` and returns the module words.
fn run_tool(
    tool: &str,
    args: &[&str],
    source: &str,
    ext: &str,
    name: &str,
) -> Result<Vec<u32>, ShaderError> {
    let exe = find_tool(tool)
        .ok_or_else(|| ShaderError::Unavailable(format!("{tool} is not installed")))?;
    let dir = tempfile::tempdir()
        .map_err(|e| ShaderError::Failed(format!("temporary directory: {e}")))?;
    let input = dir.path().join(format!("shader.{ext}"));
    let output = dir.path().join("shader.spv");
    std::fs::write(&input, source)
        .map_err(|e| ShaderError::Failed(format!("{}: {e}", input.display())))?;
    let out = Command::new(&exe)
        .args(args)
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output()
        .map_err(|e| ShaderError::Unavailable(format!("cannot run {}: {e}", exe.display())))?;
    if !out.status.success() {
        let mut msg = String::from_utf8_lossy(&out.stderr).into_owned();
        msg.push_str(&String::from_utf8_lossy(&out.stdout));
        let msg = msg.replace(&*input.to_string_lossy(), "<shader>");
        return Err(ShaderError::Failed(format!(
            "shader {name}: {tool} failed: {}",
            msg.trim()
        )));
    }
    let bytes = std::fs::read(&output)
        .map_err(|e| ShaderError::Failed(format!("{}: {e}", output.display())))?;
    words_of(&bytes, name)
}

fn assemble(source: &str, shader: &ShaderDef) -> Result<Vec<u32>, ShaderError> {
    use coopmat_spirv::asm::{AsmOptions, TargetEnv};
    // Amber assembles with SPIR-V 1.0 unless TARGET_ENV says otherwise.
    let env = shader.target_env.as_deref().unwrap_or("spv1.0");
    let target_env = TargetEnv::from_name(env).ok_or_else(|| {
        ShaderError::Failed(format!("shader {}: unknown TARGET_ENV {env}", shader.name))
    })?;
    let options = AsmOptions {
        target_env: Some(target_env),
        ..AsmOptions::default()
    };
    coopmat_spirv::asm::assemble(source, &options).map_err(|e| {
        ShaderError::Failed(format!(
            "shader {}: assembler: {}",
            shader.name,
            e.render("<shader>", source)
        ))
    })
}

/// glslangValidator's `--target-env` for an Amber `TARGET_ENV` (`spv1.3`, `vulkan1.1`, `vulkan1.1spv1.4`).
fn glslang_env(env: Option<&str>) -> Result<Vec<String>, String> {
    let Some(env) = env else {
        return Ok(vec!["--target-env".into(), "vulkan1.0".into()]);
    };
    if let Some(v) = env.strip_prefix("spv") {
        return Ok(vec!["--target-env".into(), format!("spirv{v}")]);
    }
    if let Some((vk, spv)) = env.split_once("spv") {
        return Ok(vec![
            "--target-env".into(),
            vk.into(),
            "--target-env".into(),
            format!("spirv{spv}"),
        ]);
    }
    if env.starts_with("vulkan") {
        return Ok(vec!["--target-env".into(), env.into()]);
    }
    Err(format!("unknown TARGET_ENV {env}"))
}

fn glsl(source: &str, shader: &ShaderDef) -> Result<Vec<u32>, ShaderError> {
    let env = glslang_env(shader.target_env.as_deref()).map_err(ShaderError::Failed)?;
    let mut args: Vec<&str> = vec!["-V", "-S", "comp"];
    args.extend(env.iter().map(String::as_str));
    // Amber (shaderc) accepts GLSL without a #version line; glslang wants one (comments may
    // come before it).
    let src = if source
        .lines()
        .any(|l| l.trim_start().starts_with("#version"))
    {
        source.to_string()
    } else {
        format!("#version 430\n{source}")
    };
    run_tool("glslangValidator", &args, &src, "comp", &shader.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_envs() {
        assert_eq!(
            glslang_env(Some("spv1.3")).unwrap(),
            ["--target-env", "spirv1.3"]
        );
        assert_eq!(glslang_env(None).unwrap(), ["--target-env", "vulkan1.0"]);
        assert_eq!(
            glslang_env(Some("vulkan1.1")).unwrap(),
            ["--target-env", "vulkan1.1"]
        );
        assert!(glslang_env(Some("opencl")).is_err());
    }

    #[test]
    fn hex_and_bad_words() {
        assert!(matches!(
            words_of(&[1, 2, 3], "s"),
            Err(ShaderError::Failed(_))
        ));
        let mut bytes = 0x0723_0203u32.to_le_bytes().to_vec();
        bytes.extend([0u8; 16]);
        assert_eq!(words_of(&bytes, "s").unwrap()[0], 0x0723_0203);
    }
}
