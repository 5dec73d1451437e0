//! `coopmat val`: validate SPIR-V modules (core structure, the cooperative-matrix family,
//! Vulkan device profiles).

use anyhow::{Context, bail};
use coopmat_spirv::Module;
use coopmat_val::{Profile, TargetEnv, ValidateOptions, print, rules, validate};
use std::io::Read;
use std::path::{Path, PathBuf};

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

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("reading directory {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            if e.is_dir() || e.extension().is_some_and(|x| x == "spv" || x == "spvasm") {
                collect(&e, out)?;
            }
        }
    } else {
        out.push(path.to_path_buf());
    }
    Ok(())
}

/// Runs `coopmat val`; returns 0 when every input is valid, 1 otherwise.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let mut out = String::new();
    let code = run_into(args, &mut out)?;
    // A closed pipe (`coopmat val ... | head`) is not an error.
    use std::io::Write;
    match std::io::stdout().lock().write_all(out.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
        _ => {}
    }
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
                let text = std::fs::read_to_string(p).with_context(|| {
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
    let mut files = Vec::new();
    if args.inputs.is_empty() {
        bail!("no input (give FILE, DIR or -)");
    }
    for i in &args.inputs {
        if i.as_os_str() == "-" {
            files.push(i.clone());
        } else {
            collect(i, &mut files)?;
        }
    }
    let mut all_valid = true;
    let mut json_out = Vec::new();
    for f in &files {
        let (label, bytes) = if f.as_os_str() == "-" {
            let mut b = Vec::new();
            std::io::stdin()
                .read_to_end(&mut b)
                .context("reading standard input")?;
            ("<stdin>".to_string(), b)
        } else {
            (
                f.display().to_string(),
                std::fs::read(f).with_context(|| format!("reading {}", f.display()))?,
            )
        };
        // Assembly text (.spvasm, or text on stdin) is assembled first with coopmat's
        // spirv-as compatible assembler; the version comes from a `; Version:` comment or
        // the target environment.
        let is_text = f.extension().is_some_and(|x| x == "spvasm")
            || (f.as_os_str() == "-"
                && bytes.len() >= 4
                && bytes[..4] != [0x03, 0x02, 0x23, 0x07]
                && bytes[..4] != [0x07, 0x23, 0x02, 0x03]);
        let bytes = if is_text {
            let text = String::from_utf8_lossy(&bytes);
            let env = coopmat_spirv::asm::TargetEnv::from_name(&args.target_env);
            let aopts = coopmat_spirv::asm::AsmOptions {
                target_env: env,
                ..Default::default()
            };
            match coopmat_spirv::asm::assemble(&text, &aopts) {
                Ok(words) => words.iter().flat_map(|w| w.to_le_bytes()).collect(),
                Err(e) => {
                    all_valid = false;
                    match format {
                        Format::Json => json_out.push(serde_json::json!({"file": label, "valid": false, "parse_error": e.to_string()})),
                        _ => outp!(out, "{}", e.render(&label, &text)),
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
