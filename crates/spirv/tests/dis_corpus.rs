//! The disassembler against `spirv-dis` on the real-shader corpus (1569 llama.cpp modules).
//!
//! `corpus_sample_matches_spirv_dis` checks every 16th module in default and `--raw-id` modes.
//! `corpus_matches_spirv_dis` checks all of them; running the peer tool 3138 times takes over a
//! minute, so debug builds ignore it and release builds (`cargo xtask test`, CI) run it. Set `COOPMAT_DIS_FLAGS` (e.g. `--offsets --comment`) to check
//! other options too. Both skip with a notice when the corpus or `spirv-dis` is missing.

use coopmat_spirv::binary;
use coopmat_spirv::dis::{self, Options};
use std::path::Path;

fn spirv_dis(tool: &Path, flags: &[String], bytes: &[u8]) -> Vec<u8> {
    let mut args: Vec<&str> = flags.iter().map(String::as_str).collect();
    args.push("-");
    coopmat_testkit::run_tool(tool, &args, bytes)
}

fn options(flags: &[String]) -> Options {
    let mut o = Options::default();
    for f in flags {
        assert!(o.set_spirv_dis_flag(f), "unsupported flag {f}");
    }
    o
}

/// Compares every `step`-th module; returns (identical, compared) per flag set.
fn check(test: &str, step: usize) {
    let Some(tool) = coopmat_testkit::peer_tool("spirv-dis") else {
        eprintln!("{test}: skipping, spirv-dis not found");
        return;
    };
    let modules = coopmat_testkit::corpus_or_notice(test);
    if modules.is_empty() {
        return;
    }
    let mut flag_sets: Vec<Vec<String>> = vec![vec![], vec!["--raw-id".into()]];
    if let Ok(extra) = std::env::var("COOPMAT_DIS_FLAGS") {
        flag_sets.push(extra.split_whitespace().map(String::from).collect());
    }
    let mut failures = Vec::new();
    for flags in &flag_sets {
        let opts = options(flags);
        let mut same = 0;
        let mut total = 0;
        let mut text = Vec::new();
        for (name, bytes) in modules.iter().step_by(step) {
            total += 1;
            let parsed = match binary::parse_bytes(bytes) {
                Ok(p) => p,
                Err(e) => {
                    failures.push(format!("{name}: parse error {e}"));
                    continue;
                }
            };
            text.clear();
            dis::disassemble_into(&parsed, &opts, &mut text);
            let expected = spirv_dis(&tool, flags, bytes);
            if text == expected {
                same += 1;
            } else {
                let e = String::from_utf8_lossy(&expected);
                let o = String::from_utf8_lossy(&text);
                let line = e
                    .lines()
                    .zip(o.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                failures.push(format!(
                    "{name} {flags:?}: line {}: expected {:?}, got {:?}",
                    line + 1,
                    e.lines().nth(line).unwrap_or(""),
                    o.lines().nth(line).unwrap_or("")
                ));
            }
        }
        eprintln!("{test}: {flags:?}: {same}/{total} byte-identical");
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
fn corpus_sample_matches_spirv_dis() {
    check("corpus_sample_matches_spirv_dis", 16);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "runs spirv-dis 3138 times; runs by default in release builds (`cargo xtask test`)"
)]
fn corpus_matches_spirv_dis() {
    check("corpus_matches_spirv_dis", 1);
}
