//! `coopmat gpu-info` and `coopmat gpu-run`: the same shader and buffers on a real Vulkan GPU,
//! the reference the CPU engine is compared with.

use crate::cmd_run::{parse_groups, parse_spec, write_outs};
use anyhow::{Context, Result};
use coopmat_exec::coopvec::ComponentType;
use coopmat_gpu::Gpu;
use std::collections::BTreeMap;

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

/// Arguments of `coopmat gpu-run`: those of `coopmat run` without the engine options.
pub type RunArgs = crate::cmd_run::DispatchArgs;

/// Runs `coopmat gpu-run`.
pub fn run(a: RunArgs) -> Result<u8> {
    let bytes = std::fs::read(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
    let spec: BTreeMap<u32, u64> = parse_spec(&a.spec)?.into_iter().collect();
    let groups = parse_groups(&a.groups)?;
    let mut buffers = a.buffers()?;
    let push = a.push_constants()?;
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
