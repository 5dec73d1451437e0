//! `coopmat gpu-info` and `coopmat gpu-run`: the same shader and buffers on a real Vulkan GPU,
//! the reference the CPU engine is compared with.

use crate::cmd_run::{
    buffer_source, parse_binding, parse_groups, parse_push, parse_spec, write_outs,
};
use anyhow::{Context, Result};
use coopmat_exec::coopvec::ComponentType;
use coopmat_gpu::Gpu;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Arguments of `coopmat gpu-info`.
#[derive(clap::Args)]
pub struct InfoArgs {
    /// Print JSON (device, enabled extensions, cooperative-vector combinations).
    #[arg(long)]
    pub json: bool,
}

fn type_name(raw: u32) -> String {
    ComponentType::from_raw(raw)
        .map(|t| t.name().to_string())
        .unwrap_or_else(|| format!("component type {raw}"))
}

/// Runs `coopmat gpu-info`.
pub fn info(a: InfoArgs) -> Result<u8> {
    let gpu = Gpu::open()?;
    let combos = gpu.cooperative_vector_properties()?;
    let limits = gpu.cooperative_vector_limits();
    if a.json {
        let combos: Vec<serde_json::Value> = combos
            .iter()
            .map(|c| {
                serde_json::json!({
                    "input_type": type_name(c.input_type),
                    "input_interpretation": type_name(c.input_interpretation),
                    "matrix_interpretation": type_name(c.matrix_interpretation),
                    "bias_interpretation": type_name(c.bias_interpretation),
                    "result_type": type_name(c.result_type),
                    "transpose": c.transpose,
                })
            })
            .collect();
        let v = serde_json::json!({
            "device": gpu.name(),
            "extensions": gpu.extensions(),
            "cooperative_vector_combinations": combos,
            "cooperative_vector_limits": {
                "max_components": limits.max_components,
                "training": limits.training,
                "training_f16_accumulation": limits.training_f16_accumulation,
                "training_f32_accumulation": limits.training_f32_accumulation,
            },
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(0);
    }
    println!("device: {}", gpu.name());
    println!("extensions: {}", gpu.extensions().join(" "));
    println!(
        "cooperative-vector combinations (input, input interpretation, matrix, bias, result, transpose):"
    );
    for c in &combos {
        println!(
            "  {} {} {} {} {} {}",
            type_name(c.input_type),
            type_name(c.input_interpretation),
            type_name(c.matrix_interpretation),
            type_name(c.bias_interpretation),
            type_name(c.result_type),
            c.transpose
        );
    }
    Ok(0)
}

/// Arguments of `coopmat gpu-run` (those of `coopmat run` without the engine options).
#[derive(clap::Args)]
pub struct RunArgs {
    /// The SPIR-V binary.
    pub file: PathBuf,
    /// Entry point name (default: the first entry point).
    #[arg(long)]
    pub entry: Option<String>,
    /// Workgroup counts X,Y,Z.
    #[arg(long, default_value = "1,1,1")]
    pub groups: String,
    /// Buffer SET:BINDING=SOURCE, SOURCE one of FILE.npy, raw:FILE, zeros:BYTES,
    /// const:BYTES:U32, random:BYTES:SEED.
    #[arg(long = "buffer")]
    pub buffers: Vec<String>,
    /// Push constants: a file, or hex bytes.
    #[arg(long)]
    pub push: Option<String>,
    /// Specialization constant ID=VALUE.
    #[arg(long = "spec")]
    pub spec: Vec<String>,
    /// Write buffer SET:BINDING=FILE.npy[:DTYPE] or FILE.bin.
    #[arg(long = "out")]
    pub outs: Vec<String>,
}

/// Runs `coopmat gpu-run`.
pub fn run(a: RunArgs) -> Result<u8> {
    let bytes = std::fs::read(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
    let spec: BTreeMap<u32, u64> = parse_spec(&a.spec)?.into_iter().collect();
    let groups = parse_groups(&a.groups)?;
    let mut buffers = BTreeMap::new();
    for b in &a.buffers {
        let (key, src) = parse_binding(b)?;
        buffers.insert(key, buffer_source(src)?);
    }
    let push = match &a.push {
        Some(p) => parse_push(p)?,
        None => Vec::new(),
    };
    let gpu = Gpu::open()?;
    let t = gpu.dispatch(
        &bytes,
        a.entry.as_deref().unwrap_or(""),
        &spec,
        &mut buffers,
        &push,
        groups,
    )?;
    write_outs(&a.outs, &buffers)?;
    println!(
        "ran {groups:?} workgroups on {} in {:.3} ms (submit to fence)",
        gpu.name(),
        t.as_secs_f64() * 1e3
    );
    Ok(0)
}
