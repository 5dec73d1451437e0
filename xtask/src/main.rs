//! Repository tasks: `cargo xtask grammar [--check]`, `cargo xtask corpus`, `cargo xtask test`,
//! `cargo xtask icd [--root DIR]`.

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
        Some("icd") => {
            let root = match args.get(1).map(String::as_str) {
                Some("--root") => PathBuf::from(
                    args.get(2)
                        .ok_or_else(|| anyhow::anyhow!("--root needs a directory"))?,
                ),
                Some(other) => {
                    bail!("unknown argument {other:?}; usage: cargo xtask icd [--root DIR]")
                }
                None => repo.join("target/coopmat-icd"),
            };
            let manifest = icd(&repo, &root)?;
            println!("wrote {}", manifest.display());
            println!(
                "use it with: VK_DRIVER_FILES={} <program>",
                manifest.display()
            );
            Ok(())
        }
        _ => bail!(
            "usage: cargo xtask grammar [--check] | cargo xtask corpus | cargo xtask test [CARGO TEST ARGS] | cargo xtask icd [--root DIR]"
        ),
    }
}

/// The project's test command: fetch the real-shader corpus (best effort; corpus tests skip
/// without it), check the generated tables, build the Vulkan driver's library, then run every
/// test of the workspace in release mode (the engine's kernels are too slow unoptimized).
fn test(repo: &std::path::Path, extra: &[String]) -> Result<()> {
    match corpus::run(repo) {
        Ok((dir, n)) => println!("corpus: {n} modules in {}", dir.display()),
        Err(e) => println!("corpus unavailable ({e:#}); corpus tests will be skipped"),
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // `cargo test` builds the driver crate as an rlib only; its tests that go through the Vulkan
    // loader and llama.cpp load the cdylib from target/release.
    let status = std::process::Command::new(&cargo)
        .current_dir(repo)
        .args(["build", "--release", "-p", "coopmat-icd", "--lib"])
        .status()?;
    if !status.success() {
        bail!("building coopmat-icd failed ({status})");
    }
    let status = std::process::Command::new(&cargo)
        .current_dir(repo)
        .args(["test", "--workspace", "--release"])
        .args(extra)
        .status()?;
    if !status.success() {
        bail!("cargo test failed ({status})");
    }
    Ok(())
}

/// Builds the Vulkan driver (release) and writes `root/libcoopmat_icd.so` with its manifest
/// `root/coopmat_icd.json`, whose library path is relative (the pair can be moved together).
fn icd(repo: &std::path::Path, root: &std::path::Path) -> Result<PathBuf> {
    let status =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(repo)
            .args(["build", "--release", "-p", "coopmat-icd"])
            .status()?;
    if !status.success() {
        bail!("building coopmat-icd failed ({status})");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target"));
    let lib = target.join("release/libcoopmat_icd.so");
    std::fs::create_dir_all(root)?;
    // Copy, then rename over the old library: a program that has the old one loaded keeps
    // its (unlinked) file instead of seeing its code change under it.
    let tmp = root.join(".libcoopmat_icd.so.new");
    std::fs::copy(&lib, &tmp).map_err(|e| anyhow::anyhow!("copying {}: {e}", lib.display()))?;
    std::fs::rename(&tmp, root.join("libcoopmat_icd.so"))?;
    let manifest = root.join("coopmat_icd.json");
    std::fs::write(
        &manifest,
        "{\n  \"file_format_version\": \"1.0.1\",\n  \"ICD\": {\n    \"library_path\": \"./libcoopmat_icd.so\",\n    \"api_version\": \"1.3.290\",\n    \"library_arch\": \"64\",\n    \"is_portability_driver\": false\n  }\n}\n",
    )?;
    Ok(std::fs::canonicalize(manifest)?)
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
