//! `coopmat info`: a compact summary of SPIR-V modules (header, capabilities, entry points,
//! cooperative types and instructions), for people or, with `--json`, for machines.

use coopmat_spirv::info::{self, MatrixFlavor, ModuleInfo, Scalar, Value};
use serde_json::{Value as Json, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Arguments of `coopmat info`.
#[derive(clap::Args)]
pub struct Args {
    /// Input files or directories (directories: every `.spv` file in them, recursively).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print one JSON array (one object per module) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `coopmat info`; returns the exit status (1 when some module could not be read).
pub fn run(args: Args) -> anyhow::Result<u8> {
    let paths = crate::inputs::collect_with(&args.files, &["spv"])?;
    let mut status = 0;
    let mut json_out = Vec::new();
    let mut text = String::new();
    for path in &paths {
        let result = crate::inputs::read_file(path)
            .and_then(|b| info::module_info_from_bytes(&b).map_err(anyhow::Error::from));
        match result {
            Ok(m) if args.json => json_out.push(to_json(path, &m)),
            Ok(m) => {
                render(&mut text, path, &m);
                // Stream per module: a directory of 1500 modules should not wait for the end.
                print!("{text}");
                text.clear();
            }
            Err(e) => {
                status = 1;
                if args.json {
                    json_out.push(
                        json!({ "file": path.display().to_string(), "error": format!("{e:#}") }),
                    );
                } else {
                    eprintln!("{}: error: {e:#}", path.display());
                }
            }
        }
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&json_out)?);
    }
    Ok(status)
}

fn flavor(f: MatrixFlavor) -> &'static str {
    match f {
        MatrixFlavor::Khr => "KHR",
        MatrixFlavor::Nv => "NV",
    }
}

/// A resolved value with an optional enumerant name, e.g. `Subgroup` or `spec constant 3 (default 3)`.
fn named(v: &Value, name: Option<&String>) -> String {
    match (v, name) {
        (Value::Constant { .. } | Value::Literal(_), Some(n)) => n.clone(),
        (_, Some(n)) => format!("{v} = {n}"),
        _ => v.to_string(),
    }
}

fn render(out: &mut String, path: &Path, m: &ModuleInfo) {
    let (maj, min) = m.version;
    let _ = writeln!(out, "{}:", path.display());
    let _ = writeln!(
        out,
        "  SPIR-V {maj}.{min}, generator {} ({}) version {}, bound {}, {} instructions",
        m.generator, m.generator_id, m.generator_version, m.bound, m.instruction_count
    );
    let list = |v: &[String]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(" ")
        }
    };
    let _ = writeln!(out, "  capabilities: {}", list(&m.capabilities));
    let _ = writeln!(out, "  extensions: {}", list(&m.extensions));
    let _ = writeln!(out, "  ext inst imports: {}", list(&m.ext_inst_imports));
    let _ = writeln!(
        out,
        "  memory model: {} {}",
        m.addressing_model.as_deref().unwrap_or("-"),
        m.memory_model.as_deref().unwrap_or("-")
    );
    for ep in &m.entry_points {
        let size = match (&ep.local_size, ep.local_size_source) {
            (Some([x, y, z]), Some(src)) => format!(", local size ({x}, {y}, {z}) via {src}"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  entry point: {} {:?}{size}",
            ep.execution_model, ep.name
        );
    }
    if !m.coop_matrix_types.is_empty() {
        let _ = writeln!(out, "  cooperative matrix types:");
        for t in &m.coop_matrix_types {
            let name = t
                .name
                .as_ref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            let usage = t
                .matrix_use
                .as_ref()
                .map(|u| format!(" {}", named(u, t.use_name.as_ref())))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "    %{}{name} {} {} {} rows {} cols {}{usage}",
                t.id,
                flavor(t.flavor),
                t.component,
                named(&t.scope, t.scope_name.as_ref()),
                t.rows,
                t.columns
            );
        }
    }
    for t in &m.tensor_layout_types {
        let _ = writeln!(
            out,
            "  tensor layout type: %{} dim {} clamp {}",
            t.id,
            t.dim,
            named(&t.clamp_mode, t.clamp_mode_name.as_ref())
        );
    }
    for t in &m.tensor_view_types {
        let perm: Vec<String> = t.permutation.iter().map(Value::to_string).collect();
        let _ = writeln!(
            out,
            "  tensor view type: %{} dim {} has dimensions {} permutation [{}]",
            t.id,
            t.dim,
            t.has_dimensions,
            perm.join(", ")
        );
    }
    for t in &m.coop_vector_types {
        let _ = writeln!(
            out,
            "  cooperative vector type: %{} {} x {}",
            t.id, t.component, t.count
        );
    }
    if !m.coop_instructions.is_empty() {
        let counts: Vec<String> = m
            .coop_instructions
            .iter()
            .map(|(n, c)| format!("{n} {c}"))
            .collect();
        let _ = writeln!(out, "  cooperative instructions: {}", counts.join(", "));
    }
}

fn scalar_json(s: &Scalar) -> Json {
    match *s {
        Scalar::Int(v) => json!(v),
        Scalar::UInt(v) => json!(v),
        Scalar::Float(v) => json!(v),
        Scalar::Bool(v) => json!(v),
    }
}

fn value_json(v: &Value) -> Json {
    match v {
        Value::Literal(x) => json!({ "kind": "literal", "value": x }),
        Value::Constant { id, value } => {
            json!({ "kind": "constant", "id": id, "value": scalar_json(value) })
        }
        Value::SpecConstant {
            id,
            spec_id,
            default,
        } => {
            json!({ "kind": "spec_constant", "id": id, "spec_id": spec_id, "default": scalar_json(default) })
        }
        Value::SpecConstantOp { id, operation } => {
            json!({ "kind": "spec_constant_op", "id": id, "operation": operation })
        }
        Value::Other { id } => json!({ "kind": "other", "id": id }),
    }
}

fn to_json(path: &Path, m: &ModuleInfo) -> Json {
    json!({
        "file": path.display().to_string(),
        "version": format!("{}.{}", m.version.0, m.version.1),
        "generator": {
            "word": m.generator_word,
            "tool_id": m.generator_id,
            "name": m.generator,
            "version": m.generator_version,
        },
        "bound": m.bound,
        "instruction_count": m.instruction_count,
        "capabilities": m.capabilities,
        "extensions": m.extensions,
        "ext_inst_imports": m.ext_inst_imports,
        "addressing_model": m.addressing_model,
        "memory_model": m.memory_model,
        "entry_points": m.entry_points.iter().map(|ep| json!({
            "execution_model": ep.execution_model,
            "name": ep.name,
            "function": ep.function,
            "local_size": ep.local_size.as_ref().map(|s| s.iter().map(value_json).collect::<Vec<_>>()),
            "local_size_source": ep.local_size_source,
        })).collect::<Vec<_>>(),
        "cooperative_matrix_types": m.coop_matrix_types.iter().map(|t| json!({
            "id": t.id,
            "name": t.name,
            "flavor": flavor(t.flavor),
            "component_type": t.component,
            "scope": value_json(&t.scope),
            "scope_name": t.scope_name,
            "rows": value_json(&t.rows),
            "columns": value_json(&t.columns),
            "use": t.matrix_use.as_ref().map(value_json),
            "use_name": t.use_name,
        })).collect::<Vec<_>>(),
        "tensor_layout_types": m.tensor_layout_types.iter().map(|t| json!({
            "id": t.id,
            "dim": value_json(&t.dim),
            "clamp_mode": value_json(&t.clamp_mode),
            "clamp_mode_name": t.clamp_mode_name,
        })).collect::<Vec<_>>(),
        "tensor_view_types": m.tensor_view_types.iter().map(|t| json!({
            "id": t.id,
            "dim": value_json(&t.dim),
            "has_dimensions": value_json(&t.has_dimensions),
            "permutation": t.permutation.iter().map(value_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "cooperative_vector_types": m.coop_vector_types.iter().map(|t| json!({
            "id": t.id,
            "component_type": t.component,
            "count": value_json(&t.count),
        })).collect::<Vec<_>>(),
        "cooperative_instructions": m.coop_instructions,
    })
}
