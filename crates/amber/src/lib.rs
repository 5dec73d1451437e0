//! Runs the compute subset of AmberScript (Google Amber's shader test format, as used by the Vulkan CTS) on
//! coopmat's CPU execution engine.
//!
//! [`parse::parse`] turns a script into statements; [`runner::run_text`] executes them against any
//! [`runner::Engine`]; [`run_file`] does both for a file. Scripts that need what the engine or this machine does not
//! have (images, graphics, OpenCL C, unsupported `DEVICE_FEATURE`s) come back as [`Outcome::Skip`] with the reason.

pub mod clspv;
pub mod exec_engine;
pub mod features;
pub mod parse;
pub mod runner;
pub mod shader;
pub mod types;
pub mod vkscript;

pub use exec_engine::ExecEngine;
pub use runner::{Engine, Outcome, Report, SpecMap};

use std::path::Path;

/// Reads and runs the script at `path` with `engine`.
pub fn run_file<E: Engine>(engine: &E, path: &Path) -> Report {
    match std::fs::read_to_string(path) {
        Ok(text) => runner::run_text(engine, &text, path.parent().unwrap_or(Path::new("."))),
        Err(e) => Report {
            outcome: Outcome::Fail(format!("cannot read {}: {e}", path.display())),
            runs: 0,
            expects: 0,
            dispatch_time: std::time::Duration::ZERO,
            lane_instructions: 0,
        },
    }
}

/// Expands `paths` into script files: files as given, directories searched recursively for `*.amber` and
/// `*.vkscript`, sorted.
pub fn collect_scripts(paths: &[std::path::PathBuf]) -> std::io::Result<Vec<std::path::PathBuf>> {
    // Each real directory once: a symlink cycle ends.
    fn walk(
        dir: &Path,
        out: &mut Vec<std::path::PathBuf>,
        seen: &mut std::collections::HashSet<std::path::PathBuf>,
    ) -> std::io::Result<()> {
        if !seen.insert(dir.canonicalize()?) {
            return Ok(());
        }
        for entry in std::fs::read_dir(dir)? {
            let p = entry?.path();
            if p.is_dir() {
                walk(&p, out, seen)?;
            } else if p
                .extension()
                .is_some_and(|e| e == "amber" || e == "vkscript")
            {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for p in paths {
        if p.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found, &mut seen)?;
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}
