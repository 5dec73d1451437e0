//! `coopmat val`: validate SPIR-V modules (core structure, the cooperative-matrix family,
//! Vulkan device profiles).

use anyhow::{Context, bail};
use coopmat_spirv::Module;
use coopmat_val::{Profile, TargetEnv, ValidateOptions, print, rules, validate};
use std::path::PathBuf;

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Rule, spec reference, instruction, location and notes.
    Rich,
    /// spirv-val's one-line style (`error: line N: message`).
    SpirvVal,
    /// One JSON document for all inputs.
    Json,
}

/// Arguments of `coopmat val`.
#[derive(clap::Args)]
pub struct Args {
    /// Input files (.spv binaries or .spvasm text), directories (searched for both) or `-`.
    pub inputs: Vec<PathBuf>,
    /// Target environment: spv1.0..spv1.6, vulkan1.0..vulkan1.4.
    #[arg(long, default_value = "vulkan1.3")]
    pub target_env: String,
    /// Device profile: a JSON file, or a built-in (nvidia-h100-580, lavapipe-26).
    #[arg(long)]
    pub profile: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Rich)]
    pub format: Format,
    /// Same as --format=json.
    #[arg(long)]
    pub json: bool,
    /// Print the rule registry (id, SPIRV-Tools coverage, spec reference) and exit.
    #[arg(long)]
    pub list_rules: bool,
    /// Only print a summary line per input.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `coopmat val`; returns 0 when every input is valid, 1 otherwise.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let mut out = String::new();
    let code = run_into(args, &mut out)?;
    crate::inputs::write_stdout(&out)?;
    Ok(code)
}

fn run_into(args: Args, out: &mut String) -> anyhow::Result<u8> {
    use std::fmt::Write;
    // Writing to a String cannot fail.
    macro_rules! outln {
        ($($t:tt)*) => {{ let _ = writeln!($($t)*); }};
    }
    macro_rules! outp {
        ($($t:tt)*) => {{ let _ = write!($($t)*); }};
    }
    if args.list_rules {
        for r in rules::ALL {
            outln!(
                out,
                "{}\t{}\t{}\t{}",
                r.id,
                if r.spt {
                    "spirv-val too"
                } else {
                    "coopmat only"
                },
                r.spec,
                r.summary
            );
        }
        return Ok(0);
    }
    let Some(target_env) = TargetEnv::parse(&args.target_env) else {
        bail!(
            "unknown target environment '{}' (spv1.0..spv1.6, vulkan1.0..vulkan1.4)",
            args.target_env
        );
    };
    let profile = match &args.profile {
        None => None,
        Some(p) => Some(match Profile::builtin(p) {
            Some(b) => b,
            None => {
                let text = crate::inputs::read_text_file(p).with_context(|| {
                    format!(
                        "reading profile {p} (built-ins: {})",
                        Profile::builtin_names().join(", ")
                    )
                })?;
                Profile::from_json(&text).with_context(|| format!("parsing profile {p}"))?
            }
        }),
    };
    let opts = ValidateOptions {
        target_env,
        profile,
    };
    let format = if args.json { Format::Json } else { args.format };
    let files = crate::inputs::collect(&args.inputs)?;
    let mut all_valid = true;
    let mut json_out = Vec::new();
    for f in &files {
        let (label, bytes) = crate::inputs::read(f)?;
        let bytes = if crate::inputs::is_text(f, &bytes) {
            match crate::inputs::assemble(&label, &bytes, &args.target_env) {
                Ok(b) => b,
                Err(rendered) => {
                    all_valid = false;
                    match format {
                        Format::Json => json_out.push(serde_json::json!({"file": label, "valid": false, "parse_error": rendered})),
                        _ => outp!(out, "{rendered}"),
                    }
                    continue;
                }
            }
        } else {
            bytes
        };
        let module = match Module::from_bytes(&bytes) {
            Ok(m) => m,
            Err(e) => {
                all_valid = false;
                match format {
                    Format::Json => json_out.push(serde_json::json!({"file": label, "valid": false, "parse_error": e.to_string()})),
                    _ => outln!(out, "error: {label}: cannot parse: {e}"),
                }
                continue;
            }
        };
        let diags = validate(&module, &opts);
        let (errors, warnings) = print::counts(&diags);
        // Disassemble only when something is reported.
        let listing = (!diags.is_empty()).then(|| print::Listing::new(&module));
        let line = |i: usize| listing.as_ref().map(|l| l.line(i).to_string());
        if errors > 0 {
            all_valid = false;
        }
        match format {
            Format::Json => {
                let ds: Vec<_> = diags
                    .iter()
                    .map(|d| {
                        serde_json::json!({
                            "rule": d.rule.id,
                            "severity": d.severity.as_str(),
                            "message": d.message,
                            "spec": d.rule.spec,
                            "instruction_index": d.inst,
                            "instruction": d.inst.and_then(line),
                            "location": d.inst.map(|i| print::location(&module, i)),
                            "related": d.related.iter().map(|(i, note)| serde_json::json!({
                                "instruction_index": i,
                                "note": note,
                                "instruction": line(*i),
                            })).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                json_out.push(serde_json::json!({"file": label, "valid": errors == 0, "errors": errors, "warnings": warnings, "diagnostics": ds}));
            }
            Format::SpirvVal => {
                if !args.quiet {
                    for d in &diags {
                        if let Some(l) = &listing {
                            outp!(out, "{}", print::spirv_val_style(&module, l, d));
                        }
                    }
                }
            }
            Format::Rich => {
                if !args.quiet {
                    for d in &diags {
                        if let Some(l) = &listing {
                            outln!(out, "{}", print::rich(&module, l, d, &label));
                        }
                    }
                }
                if errors > 0 || warnings > 0 || args.quiet || files.len() > 1 {
                    outln!(
                        out,
                        "{label}: {} ({errors} error(s), {warnings} warning(s))",
                        if errors == 0 { "valid" } else { "INVALID" }
                    );
                }
            }
        }
    }
    if format == Format::Json {
        outln!(out, "{}", serde_json::to_string_pretty(&json_out)?);
    }
    Ok(if all_valid { 0 } else { 1 })
}
