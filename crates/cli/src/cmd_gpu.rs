//! `coopmat gpu info`, `coopmat gpu run` and `coopmat diff`: the same shader and buffers on a
//! real Vulkan GPU, the reference the CPU engine is compared with.

use crate::cmd_run::{parse_groups, parse_spec, write_outs};
use anyhow::{Context, Result};
use coopmat_exec::coopvec::ComponentType;
use coopmat_gpu::{Dispatch, Gpu};
use std::collections::BTreeMap;

/// `coopmat gpu`: its subcommands.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: GpuCommand,
}

#[derive(clap::Subcommand)]
enum GpuCommand {
    /// Describe the device: name, driver, enabled extensions, cooperative-vector combinations
    /// and limits.
    Info(InfoArgs),
    /// Run a compute shader on the device (the same dispatch description as `coopmat run`).
    Run(Box<RunArgs>),
}

/// Runs `coopmat gpu`.
pub fn gpu(a: Args) -> Result<u8> {
    match a.command {
        GpuCommand::Info(a) => info(a),
        GpuCommand::Run(a) => run(*a),
    }
}

/// Arguments of `coopmat gpu info`.
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

/// Runs `coopmat gpu info`.
fn info(a: InfoArgs) -> Result<u8> {
    let gpu = Gpu::open()?;
    let combos = gpu.cooperative_vector_properties()?;
    let limits = gpu.cooperative_vector_limits();
    let matrices = gpu.cooperative_matrix_properties()?;
    let scope = |s: u32| match s {
        2 => "workgroup",
        3 => "subgroup",
        _ => "other",
    };
    let matrix_rows: Vec<String> = matrices
        .iter()
        .map(|e| {
            format!(
                "{}x{}x{} {} x {} + {} -> {}{} ({})",
                e.mnk[0],
                e.mnk[1],
                e.mnk[2],
                type_name(e.types[0]),
                type_name(e.types[1]),
                type_name(e.types[2]),
                type_name(e.types[3]),
                if e.saturating { " saturating" } else { "" },
                scope(e.scope)
            )
        })
        .collect();
    let mut features: Vec<(&str, bool)> = gpu
        .capability_support()
        .iter()
        .map(|(_, f, on)| (*f, *on))
        .collect();
    // Two capabilities can need one feature.
    features.dedup();
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
            "available_extensions": gpu.available_extensions(),
            "cooperative_vector_combinations": combos,
            "cooperative_matrix_properties": matrix_rows,
            "features": features.iter().map(|(f, on)| serde_json::json!({"feature": f, "supported": on})).collect::<Vec<_>>(),
            "cooperative_vector_limits": {
                "max_components": limits.max_components,
                "training": limits.training,
                "training_f16_accumulation": limits.training_f16_accumulation,
                "training_f32_accumulation": limits.training_f32_accumulation,
            },
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(0);
    }
    outln!("device: {}", gpu.name());
    outln!("extensions: {}", gpu.extensions().join(" "));
    let related: Vec<&String> = gpu
        .available_extensions()
        .iter()
        .filter(|e| e.contains("cooperative") || e.contains("matrix"))
        .collect();
    outln!(
        "available ({} in all; matrix-related: {})",
        gpu.available_extensions().len(),
        related
            .iter()
            .map(|e| e.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let names = |on: bool| {
        features
            .iter()
            .filter(|f| f.1 == on)
            .map(|f| f.0)
            .collect::<Vec<_>>()
            .join(", ")
    };
    outln!("features: {}", names(true));
    outln!("lacking: {}", names(false));
    outln!("cooperative-matrix shapes (M x N x K, A x B + C -> Result):");
    for r in &matrix_rows {
        outln!("  {r}");
    }
    outln!(
        "cooperative-vector combinations (input, input interpretation, matrix, bias, result, transpose):"
    );
    for c in &combos {
        outln!(
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

/// Arguments of `coopmat gpu run`: those of `coopmat run` without the engine options, and
/// the device's own.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The shader, its inputs and outputs.
    #[command(flatten)]
    pub dispatch: crate::cmd_run::DispatchArgs,
    /// Dispatches recorded back to back (a memory barrier between), timed together.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub repeat: u32,
    /// Required subgroup size (VK_EXT_subgroup_size_control / Vulkan 1.3).
    #[arg(long)]
    pub subgroup_size: Option<u32>,
}

/// Runs `coopmat gpu run`.
fn run(args: RunArgs) -> Result<u8> {
    let a = &args.dispatch;
    let bytes = crate::inputs::read_file(&a.file)?;
    let spec: BTreeMap<u32, u64> = parse_spec(&a.spec)?.into_iter().collect();
    let groups = parse_groups(&a.groups)?;
    let mut buffers = a.buffers()?;
    if !a.buffer_arrays()?.is_empty() {
        anyhow::bail!(
            "descriptor arrays (--buffer SET:BINDING[I]) are not supported by gpu run yet"
        );
    }
    let push = a.push_constants()?;
    let addresses = a.addresses()?;
    let gpu = Gpu::open()?;
    let d = Dispatch {
        module: &bytes,
        entry: a.entry.as_deref().unwrap_or(""),
        spec: &spec,
        push: &push,
        groups,
        repeat: args.repeat,
        subgroup_size: args.subgroup_size,
        addresses: &addresses,
    };
    let t = gpu.dispatch(&d, &mut buffers)?;
    write_outs(&a.outs, &buffers)?;
    let per = |x: std::time::Duration| x.as_secs_f64() * 1e3 / args.repeat as f64;
    outln!(
        "ran {groups:?} workgroups x {} on {}: {:.3} ms per dispatch from submit to fence{}",
        args.repeat,
        gpu.name(),
        per(t.wall),
        t.gpu
            .map(|g| format!(", {:.3} ms between timestamps", per(g)))
            .unwrap_or_default()
    );
    Ok(0)
}

/// Arguments of `coopmat diff`.
#[derive(clap::Args)]
pub struct DiffArgs {
    /// The shader, its inputs and workgroup counts (as for `coopmat run`).
    #[command(flatten)]
    pub dispatch: crate::cmd_run::DispatchArgs,
    /// Engine options.
    #[command(flatten)]
    pub engine: crate::engine_args::EngineArgs,
    /// Compare buffer SET:BINDING as DTYPE (f16, bf16, f32, f64, i8..i64, u8..u64), optionally
    /// :COLS to report rows and columns. Without any, every buffer is compared byte for byte.
    #[arg(long = "compare")]
    pub compare: Vec<String>,
    /// Float elements may differ by this many units in the last place.
    #[arg(long, default_value_t = 0)]
    pub ulps: u64,
    /// Float elements may differ by this much in absolute value.
    #[arg(long, default_value_t = 0.0)]
    pub atol: f64,
    /// How many differing elements to list per buffer.
    #[arg(long, default_value_t = 8)]
    pub show: usize,
}

/// An element type `coopmat diff` compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Elem {
    Float { bits: u32, bf16: bool },
    Int { bits: u32, signed: bool },
}

impl Elem {
    fn parse(s: &str) -> Result<Elem> {
        Ok(match s {
            "f16" => Elem::Float {
                bits: 16,
                bf16: false,
            },
            "bf16" => Elem::Float {
                bits: 16,
                bf16: true,
            },
            "f32" => Elem::Float {
                bits: 32,
                bf16: false,
            },
            "f64" => Elem::Float {
                bits: 64,
                bf16: false,
            },
            _ => {
                let (signed, w) = match s.split_at_checked(1) {
                    Some(("i", w)) => (true, w),
                    Some(("u", w)) => (false, w),
                    _ => anyhow::bail!(
                        "unknown element type {s:?} (f16, bf16, f32, f64, i8..i64, u8..u64)"
                    ),
                };
                match w {
                    "8" | "16" | "32" | "64" => Elem::Int {
                        bits: w.parse()?,
                        signed,
                    },
                    _ => anyhow::bail!(
                        "unknown element type {s:?} (f16, bf16, f32, f64, i8..i64, u8..u64)"
                    ),
                }
            }
        })
    }

    fn bytes(self) -> usize {
        match self {
            Elem::Float { bits, .. } | Elem::Int { bits, .. } => bits as usize / 8,
        }
    }

    /// The element's value for display and absolute differences.
    fn value(self, raw: u64) -> f64 {
        match self {
            Elem::Float {
                bits: 16,
                bf16: true,
            } => half::bf16::from_bits(raw as u16).to_f64(),
            Elem::Float { bits: 16, .. } => half::f16::from_bits(raw as u16).to_f64(),
            Elem::Float { bits: 32, .. } => f32::from_bits(raw as u32) as f64,
            Elem::Float { .. } => f64::from_bits(raw),
            Elem::Int { bits, signed: true } => ((raw << (64 - bits)) as i64 >> (64 - bits)) as f64,
            Elem::Int { .. } => raw as f64,
        }
    }

    /// Units in the last place between two floats (their bit patterns on one ordered line);
    /// None when exactly one is NaN.
    fn ulps(self, a: u64, b: u64) -> Option<u64> {
        let Elem::Float { bits, .. } = self else {
            return Some(if a == b { 0 } else { u64::MAX });
        };
        let (va, vb) = (self.value(a), self.value(b));
        if va.is_nan() || vb.is_nan() {
            return (va.is_nan() && vb.is_nan()).then_some(0);
        }
        let sign = 1u64 << (bits - 1);
        let ordered = |x: u64| -> i128 {
            if x & sign != 0 {
                -((x & (sign - 1)) as i128)
            } else {
                x as i128
            }
        };
        Some((ordered(a) - ordered(b)).unsigned_abs() as u64)
    }
}

/// One `--compare`: buffer, element type, columns for coordinates, the type's name.
type Compare = ((u32, u32), Elem, Option<usize>, String);

/// Runs `coopmat diff`: exit status 0 when every compared buffer agrees within the tolerance,
/// 1 otherwise.
pub fn diff(a: DiffArgs) -> Result<u8> {
    let d = &a.dispatch;
    let bytes = crate::inputs::read_file(&d.file)?;
    let module = coopmat_spirv::Module::from_bytes(&bytes)
        .with_context(|| format!("parsing {}", d.file.display()))?;
    let spec = parse_spec(&d.spec)?;
    let groups = parse_groups(&d.groups)?;
    let pipe = coopmat_exec::Pipeline::compile(
        &module,
        d.entry.as_deref().unwrap_or(""),
        &spec,
        &a.engine.options(),
    )?;
    if !d.buffer_arrays()?.is_empty() {
        anyhow::bail!("descriptor arrays (--buffer SET:BINDING[I]) are not supported by diff yet");
    }
    let mut engine = coopmat_exec::Resources {
        buffers: d.buffers()?,
        push_constants: d.push_constants()?,
        buffer_arrays: Default::default(),
    };
    // The device writes its own addresses over the same bytes.
    let (device_push, mut device) = (engine.push_constants.clone(), engine.buffers.clone());
    let addresses = d.addresses()?;
    crate::cmd_run::apply_addresses(&mut engine, &addresses)?;
    pipe.dispatch(&mut engine, groups)
        .context("the engine's dispatch")?;
    let gpu = Gpu::open()?;
    let spec: BTreeMap<u32, u64> = spec.into_iter().collect();
    let dispatch = Dispatch {
        module: &bytes,
        entry: d.entry.as_deref().unwrap_or(""),
        spec: &spec,
        push: &device_push,
        groups,
        repeat: 1,
        subgroup_size: None,
        addresses: &addresses,
    };
    gpu.dispatch(&dispatch, &mut device)
        .context("the device's dispatch")?;
    outln!("engine vs {}", gpu.name());
    let mut compares: Vec<Compare> = Vec::new();
    for c in &a.compare {
        let mut parts = c.split(':');
        let (set, binding, ty) = (parts.next(), parts.next(), parts.next());
        let (Some(set), Some(binding), Some(ty)) = (set, binding, ty) else {
            anyhow::bail!("--compare SET:BINDING:DTYPE[:COLS], got {c:?}");
        };
        let cols: Option<usize> = parts
            .next()
            .map(str::parse)
            .transpose()
            .context("--compare COLS")?;
        compares.push((
            (set.parse()?, binding.parse()?),
            Elem::parse(ty)?,
            cols,
            ty.to_string(),
        ));
    }
    if compares.is_empty() {
        for k in engine.buffers.keys() {
            let bytes = Elem::Int {
                bits: 8,
                signed: false,
            };
            compares.push((*k, bytes, None, "bytes".to_string()));
        }
    }
    let mut all_ok = true;
    for (key, elem, cols, name) in compares {
        let (Some(e), Some(g)) = (engine.buffers.get(&key), device.get(&key)) else {
            anyhow::bail!("--compare {}:{}: no such buffer", key.0, key.1);
        };
        let n = e.len() / elem.bytes();
        let raw = |v: &[u8], i: usize| {
            let mut w = [0u8; 8];
            w[..elem.bytes()].copy_from_slice(&v[i * elem.bytes()..(i + 1) * elem.bytes()]);
            u64::from_le_bytes(w)
        };
        let (mut differ, mut worst_ulps, mut worst_abs) = (Vec::new(), 0u64, 0f64);
        for i in 0..n {
            let (x, y) = (raw(e, i), raw(g, i));
            if x == y {
                continue;
            }
            let u = elem.ulps(x, y);
            let abs = (elem.value(x) - elem.value(y)).abs();
            let within = matches!(elem, Elem::Float { .. })
                && (u.is_some_and(|u| u <= a.ulps) || abs <= a.atol);
            worst_ulps = worst_ulps.max(u.unwrap_or(u64::MAX));
            if abs.is_finite() {
                worst_abs = worst_abs.max(abs);
            }
            if !within {
                differ.push((i, x, y));
            }
        }
        let label = format!("{}:{} ({n} {name})", key.0, key.1);
        if differ.is_empty() {
            outln!(
                "{label}: agree{}",
                if worst_ulps > 0 {
                    format!(
                        " within the tolerance (largest difference {worst_ulps} ulps, {worst_abs:e})"
                    )
                } else {
                    String::new()
                }
            );
            continue;
        }
        all_ok = false;
        let largest = match (elem, worst_ulps) {
            (Elem::Int { .. }, _) => String::new(),
            (_, u64::MAX) => " (a NaN against a number among them)".to_string(),
            _ => format!(" (largest {worst_ulps} ulps, {worst_abs:e} absolute)"),
        };
        outln!("{label}: {} differ{largest}", differ.len());
        for &(i, x, y) in differ.iter().take(a.show) {
            let at = match cols {
                Some(c) if c > 0 => format!("[{i}] (row {}, column {})", i / c, i % c),
                _ => format!("[{i}]"),
            };
            outln!(
                "  {at}: engine {} ({x:#x}), device {} ({y:#x})",
                elem.value(x),
                elem.value(y)
            );
        }
    }
    Ok(if all_ok { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_types_parse_and_measure_ulps() {
        assert_eq!(
            Elem::parse("f16").unwrap(),
            Elem::Float {
                bits: 16,
                bf16: false
            }
        );
        assert_eq!(
            Elem::parse("i32").unwrap(),
            Elem::Int {
                bits: 32,
                signed: true
            }
        );
        assert!(
            Elem::parse("i7").is_err() && Elem::parse("x").is_err() && Elem::parse("").is_err()
        );
        let f32e = Elem::parse("f32").unwrap();
        let one = 1f32.to_bits() as u64;
        assert_eq!(f32e.ulps(one, one + 3), Some(3));
        // Across zero: +0 and -0 are 0 ulps apart, the smallest subnormals of both signs 2.
        assert_eq!(f32e.ulps(0, 0x8000_0000), Some(0));
        assert_eq!(f32e.ulps(1, 0x8000_0001), Some(2));
        let nan = f32::NAN.to_bits() as u64;
        assert_eq!(f32e.ulps(nan, nan | 1), Some(0));
        assert_eq!(f32e.ulps(nan, one), None);
        let h = Elem::parse("f16").unwrap();
        assert_eq!(h.value(0x3c00), 1.0);
        assert_eq!(Elem::parse("i8").unwrap().value(0xff), -1.0);
    }
}
