//! `coopmat amber`: run AmberScript compute tests on the CPU engine.

use anyhow::Result;
use coopmat_amber::{ExecEngine, Outcome};
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `coopmat amber`.
#[derive(clap::Args)]
pub struct Args {
    /// Scripts (`*.amber`) or directories searched recursively for them.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Engine options.
    #[command(flatten)]
    pub engine: crate::engine_args::EngineArgs,
    /// Print only failures and the summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// Print timing per script.
    #[arg(short, long)]
    pub verbose: bool,
}

/// Runs `coopmat amber`; returns 1 if any script failed.
pub fn run(args: Args) -> Result<u8> {
    let mut engine = ExecEngine::default();
    engine.options = args.engine.options();
    let files = coopmat_amber::collect_scripts(&args.files)?;
    let (mut passed, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    for f in &files {
        let t0 = Instant::now();
        let r = coopmat_amber::run_file(&engine, f);
        let timing = if args.verbose {
            format!(
                " [{:.3}s, {} runs, {} expects, dispatch {:.3}s, {} lane-instructions]",
                t0.elapsed().as_secs_f64(),
                r.runs,
                r.expects,
                r.dispatch_time.as_secs_f64(),
                r.lane_instructions
            )
        } else {
            String::new()
        };
        match r.outcome {
            Outcome::Pass => {
                passed += 1;
                if !args.quiet {
                    outln!("PASS {}{timing}", f.display());
                }
            }
            Outcome::Fail(why) => {
                failed += 1;
                outln!("FAIL {}: {why}{timing}", f.display());
            }
            Outcome::Skip(why) => {
                skipped += 1;
                if !args.quiet {
                    outln!("SKIP {}: {why}{timing}", f.display());
                }
            }
        }
    }
    outln!("{passed} passed, {failed} failed, {skipped} skipped");
    let times = engine.op_times.lock().unwrap_or_else(|e| e.into_inner());
    crate::engine_args::report_op_times(
        &times,
        "every dispatch of the scripts",
        args.engine.profile_instructions,
    );
    Ok(u8::from(failed > 0))
}
