//! Repository tasks: `cargo xtask grammar [--check]`, `cargo xtask corpus`.

use anyhow::{Result, bail};
use std::path::PathBuf;

mod corpus;
mod grammar;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the repo")
        .to_path_buf()
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let repo = repo_root();
    match args.first().map(String::as_str) {
        Some("grammar") => {
            let dir = std::env::var_os("COOPMAT_GRAMMAR_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| grammar::default_grammar_dir(&repo));
            if args.iter().any(|a| a == "--check") {
                grammar::check(&repo, &dir)?;
                println!("grammar tables are up to date");
            } else {
                grammar::write(&repo, &dir)?;
                println!("wrote {}", grammar::output_path(&repo).display());
            }
            Ok(())
        }
        Some("corpus") => {
            let (dir, n) = corpus::run(&repo)?;
            println!("{n} SPIR-V modules in {}", dir.display());
            Ok(())
        }
        Some("test") => test(&repo, &args[1..]),
        _ => bail!(
            "usage: cargo xtask grammar [--check] | cargo xtask corpus | cargo xtask test [CARGO TEST ARGS]"
        ),
    }
}

/// The project's test command: fetch the real-shader corpus (best effort; corpus tests skip
/// without it), check the generated tables, then run every test of the workspace in release mode
/// (the engine's kernels are too slow unoptimized).
fn test(repo: &std::path::Path, extra: &[String]) -> Result<()> {
    match corpus::run(repo) {
        Ok((dir, n)) => println!("corpus: {n} modules in {}", dir.display()),
        Err(e) => println!("corpus unavailable ({e:#}); corpus tests will be skipped"),
    }
    let status =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(repo)
            .args(["test", "--workspace", "--release"])
            .args(extra)
            .status()?;
    if !status.success() {
        bail!("cargo test failed ({status})");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_grammar_tables_match_the_generator() {
        let repo = repo_root();
        let dir = grammar::default_grammar_dir(&repo);
        if !dir.exists() {
            eprintln!("skipping: {} not found", dir.display());
            return;
        }
        grammar::check(&repo, &dir).unwrap();
    }
}
