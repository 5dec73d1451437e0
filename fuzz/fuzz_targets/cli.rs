//! Fuzz target: the command line, arguments and input file together. An input is a command line
//! (arguments separated by NUL bytes) and, after two NUL bytes, the contents of the file `f` (also
//! written as `f.npy` and `f.amber`, the names `run --buffer` and `amber DIR` look for); the
//! command runs for real in a private scratch directory (`coopmat::Cli::try_parse_from`, then
//! `Cli::run`). It must never panic, abort or hang: every bad argument or file is an error.
//!
//! Sandbox: the process works in a fresh temporary directory, and a command line is skipped when
//! an argument could reach outside it (a `/`, `..`, or `-` for standard input, which would block)
//! or when it names a command that leaves the process's own work (`gpu` and `diff` load the
//! Vulkan loader; `ggml-matmul` runs llama.cpp shapes of minutes and reads the corpus). Engine
//! limits are appended to `run` and `amber` (an instruction budget, a memory limit, one thread)
//! and may not be given by the input, so that a dispatch of 2^32 workgroups ends in a budget error
//! rather than a libFuzzer timeout.
#![no_main]

use clap::Parser;
use libfuzzer_sys::fuzz_target;
use std::sync::Once;

static SCRATCH: Once = Once::new();

/// Options the target sets itself for commands that run the engine.
const ENGINE_LIMITS: &[&str] = &["--budget", "200000", "--max-memory", "268435456", "--threads", "1"];

fuzz_target!(|data: &[u8]| {
    SCRATCH.call_once(|| {
        let dir = std::env::temp_dir().join(format!("coopmat-fuzz-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        std::env::set_current_dir(&dir).expect("entering the scratch directory");
    });
    let (line, file) = match data.windows(2).position(|w| w == [0, 0]) {
        Some(i) => (&data[..i], &data[i + 2..]),
        None => (data, &[][..]),
    };
    let Ok(line) = std::str::from_utf8(line) else {
        return;
    };
    let args: Vec<&str> = line.split('\0').collect();
    let outside = |a: &&str| a.contains('/') || a.contains("..") || *a == "-";
    if args.iter().any(outside) {
        return;
    }
    let command = args.first().copied().unwrap_or("");
    if matches!(command, "gpu" | "diff" | "ggml-matmul") {
        return;
    }
    let limits = matches!(command, "run" | "amber");
    if limits && args.iter().any(|a| ENGINE_LIMITS.iter().step_by(2).any(|o| a.starts_with(o))) {
        return;
    }
    // One content under the names the commands look for: any file, an array, a script.
    for name in ["f", "f.npy", "f.amber"] {
        if std::fs::write(name, file).is_err() {
            return;
        }
    }
    let mut argv = vec!["coopmat"];
    argv.extend(&args);
    if limits {
        argv.extend(ENGINE_LIMITS);
    }
    match coopmat::Cli::try_parse_from(&argv) {
        // Clap's own message (usage, --help, --version) is rendered as the binary would print it.
        Err(e) => drop(e.render().to_string()),
        Ok(cli) => drop(cli.run()),
    }
});
