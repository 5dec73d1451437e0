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
    /// Subgroup size (power of two, 8..=128); `SUBGROUP REQUIRED_SIZE` overrides it per pipeline.
    #[arg(long, default_value_t = 32)]
    pub subgroup_size: u32,
    /// Threads for independent workgroups (0: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Robust buffer access (out-of-bounds loads read 0, stores are dropped) instead of errors.
    #[arg(long)]
    pub robust: bool,
    /// Lane-instructions a workgroup may run before it is stopped (0: no limit).
    #[arg(long, default_value_t = 0)]
    pub budget: u64,
    /// Print only failures and the summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// Print timing per script.
    #[arg(short, long)]
    pub verbose: bool,
}

/// Runs `coopmat amber`; returns 1 if any script failed.
pub fn run(args: Args) -> Result<u8> {
    if !args.subgroup_size.is_power_of_two() || !(8..=128).contains(&args.subgroup_size) {
        anyhow::bail!(
            "--subgroup-size must be a power of two in 8..=128, not {}",
            args.subgroup_size
        );
    }
    let mut engine = ExecEngine::default();
    engine.options.subgroup_size = args.subgroup_size;
    engine.options.threads = args.threads;
    engine.options.robust = args.robust;
    engine.options.instruction_budget = args.budget;
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
                    println!("PASS {}{timing}", f.display());
                }
            }
            Outcome::Fail(why) => {
                failed += 1;
                println!("FAIL {}: {why}{timing}", f.display());
            }
            Outcome::Skip(why) => {
                skipped += 1;
                if !args.quiet {
                    println!("SKIP {}: {why}{timing}", f.display());
                }
            }
        }
    }
    println!("{passed} passed, {failed} failed, {skipped} skipped");
    Ok(u8::from(failed > 0))
}
