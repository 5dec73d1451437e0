//! `coopmat lint`: uniformity and cooperative-matrix/vector rules, as text, JSON or SARIF.

use anyhow::{Context, bail};
use coopmat_lint::rules::{self, Level};
use coopmat_lint::{Config, Finding, lint_module, render};
use coopmat_spirv::Module;
use std::path::{Path, PathBuf};

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// rustc-style text with the source line and the chain of values.
    Human,
    /// One JSON array of findings.
    Json,
    /// SARIF 2.1.0.
    Sarif,
}

/// Arguments of `coopmat lint`.
#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 when nothing at level deny is found (and, with \
--deny-warnings, no warning either); 1 when only warnings are found and --deny-warnings is \
given; 2 when a deny finding is found or an input cannot be read, assembled or parsed.\n\n\
Configuration: coopmat-lint.toml, found in the first input's directory or the nearest \
parent that has one (or given with --config), with a [rules] table: \
`coopmat-nonuniform-operand = \"warn\"`. Command-line levels override it."
)]
pub struct Args {
    /// Input files (.spv binaries or .spvasm text), directories (searched for both) or `-`.
    pub inputs: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Report RULE as an error (repeatable).
    #[arg(short = 'D', value_name = "RULE")]
    pub deny: Vec<String>,
    /// Report RULE as a warning (repeatable).
    #[arg(short = 'W', value_name = "RULE")]
    pub warn: Vec<String>,
    /// Do not report RULE (repeatable).
    #[arg(short = 'A', value_name = "RULE")]
    pub allow: Vec<String>,
    /// Exit with status 1 when warnings are found.
    #[arg(long)]
    pub deny_warnings: bool,
    /// A configuration file instead of the coopmat-lint.toml found upward from the input.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Device profile for coopmat-unsupported-configuration: a built-in (nvidia-h100-580,
    /// lavapipe-26) or a profile JSON.
    #[arg(long)]
    pub profile: Option<String>,
    /// Target environment for assembling .spvasm inputs.
    #[arg(long, default_value = "vulkan1.3")]
    pub target_env: String,
    /// List the rules (name, default level, summary) and exit.
    #[arg(long)]
    pub list_rules: bool,
    /// Print a rule's explanation and exit.
    #[arg(long, value_name = "RULE")]
    pub explain: Option<String>,
}

/// Runs `coopmat lint`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let mut out = String::new();
    let code = run_into(args, &mut out)?;
    crate::inputs::write_stdout(&out)?;
    Ok(code)
}

fn rule_named(name: &str) -> anyhow::Result<&'static rules::Rule> {
    rules::by_name(name).with_context(|| {
        let names: Vec<&str> = rules::RULES.iter().map(|r| r.name).collect();
        format!("unknown rule '{name}' (rules: {})", names.join(", "))
    })
}

/// The nearest coopmat-lint.toml at or above `start`.
fn find_config(start: &Path) -> Option<PathBuf> {
    let dir = if start.is_dir() {
        start.to_path_buf()
    } else {
        start.parent()?.to_path_buf()
    };
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };
    let mut cur = dir.canonicalize().ok()?;
    loop {
        let c = cur.join("coopmat-lint.toml");
        if c.is_file() {
            return Some(c);
        }
        if !cur.pop() {
            return None;
        }
    }
}

/// Reads the `[rules]` table of a configuration file.
fn read_config(path: &Path, config: &mut Config) -> anyhow::Result<()> {
    let text = crate::inputs::read_text_file(path)?;
    let table: toml::Table =
        toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    for (key, value) in &table {
        if key != "rules" {
            bail!(
                "{}: unknown section [{key}] (expected [rules])",
                path.display()
            );
        }
        let Some(rules_table) = value.as_table() else {
            bail!("{}: [rules] must be a table", path.display());
        };
        for (name, level) in rules_table {
            let rule = rule_named(name).with_context(|| path.display().to_string())?;
            let level = level.as_str().and_then(Level::parse).with_context(|| {
                format!(
                    "{}: level of {name} must be \"deny\", \"warn\", \"info\" or \"allow\"",
                    path.display()
                )
            })?;
            config.levels.insert(rule.name.to_string(), level);
        }
    }
    Ok(())
}

fn run_into(args: Args, out: &mut String) -> anyhow::Result<u8> {
    use std::fmt::Write;
    if args.list_rules {
        for r in rules::RULES {
            let _ = writeln!(out, "{}\t{}\t{}", r.name, r.default.as_str(), r.summary);
        }
        return Ok(0);
    }
    if let Some(name) = &args.explain {
        let r = rule_named(name)?;
        let _ = writeln!(
            out,
            "{} (default: {})\n\n{}\n\n{}",
            r.name,
            r.default.as_str(),
            r.summary,
            r.explanation
        );
        return Ok(0);
    }
    let files = crate::inputs::collect(&args.inputs)?;
    let mut config = Config::default();
    if let Some(p) = &args.profile {
        config.profile = Some(match coopmat_val::Profile::builtin(p) {
            Some(b) => b,
            None => {
                let text = crate::inputs::read_text_file(p).map_err(|e| {
                    anyhow::anyhow!(
                        "reading profile {p} (built-ins: {}): {e}",
                        coopmat_val::Profile::builtin_names().join(", ")
                    )
                })?;
                coopmat_val::Profile::from_json(&text)
                    .map_err(|e| anyhow::anyhow!("parsing profile {p}: {e}"))?
            }
        });
    }
    let config_file = match &args.config {
        Some(c) => Some(c.clone()),
        None => args
            .inputs
            .iter()
            .find(|i| i.as_os_str() != "-")
            .and_then(|i| find_config(i)),
    };
    if let Some(c) = &config_file {
        read_config(c, &mut config)?;
    }
    for (names, level) in [
        (&args.deny, Level::Deny),
        (&args.warn, Level::Warn),
        (&args.allow, Level::Allow),
    ] {
        for n in names {
            config.levels.insert(rule_named(n)?.name.to_string(), level);
        }
    }
    // Modules are independent: lint them in parallel, report in input order.
    use rayon::prelude::*;
    let results: Vec<anyhow::Result<Linted>> = files
        .par_iter()
        .map(|f| lint_file(f, &args.target_env, &config))
        .collect();
    let mut findings: Vec<Finding> = Vec::new();
    let mut broken = false;
    for r in results {
        match r? {
            Linted::Findings(f) => findings.extend(f),
            Linted::Broken(message) => {
                eprint!("{message}");
                broken = true;
            }
        }
    }
    match args.format {
        Format::Human => {
            out.push_str(&render::human(&findings));
            let (d, w) = counts(&findings);
            if d + w > 0 || files.len() > 1 {
                let _ = writeln!(
                    out,
                    "{} module(s): {d} error(s), {w} warning(s)",
                    files.len()
                );
            }
        }
        Format::Json => {
            let _ = writeln!(out, "{}", render::json(&findings));
        }
        Format::Sarif => {
            let _ = writeln!(out, "{}", render::sarif(&findings, &config));
        }
    }
    let (d, w) = counts(&findings);
    Ok(if d > 0 || broken {
        2
    } else if w > 0 && args.deny_warnings {
        1
    } else {
        0
    })
}

fn counts(findings: &[Finding]) -> (usize, usize) {
    let d = findings.iter().filter(|f| f.level == Level::Deny).count();
    let w = findings.iter().filter(|f| f.level == Level::Warn).count();
    (d, w)
}

/// What linting one input gave.
enum Linted {
    Findings(Vec<Finding>),
    /// The input does not assemble or parse: the message, printed in input order.
    Broken(String),
}

fn lint_file(f: &std::path::Path, target_env: &str, config: &Config) -> anyhow::Result<Linted> {
    let (label, bytes) = crate::inputs::read(f)?;
    let bytes = if crate::inputs::is_text(f, &bytes) {
        match crate::inputs::assemble(&label, &bytes, target_env) {
            Ok(b) => b,
            Err(rendered) => return Ok(Linted::Broken(rendered)),
        }
    } else {
        bytes
    };
    Ok(match Module::from_bytes(&bytes) {
        Ok(m) => Linted::Findings(lint_module(&m, &label, config)),
        Err(e) => Linted::Broken(format!("error: {label}: cannot parse: {e}\n")),
    })
}
