//! Repository tasks: `cargo xtask grammar [--check]`, `cargo xtask corpus`.

use anyhow::{Result, bail};
use std::path::PathBuf;

mod corpus;
mod grammar;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the repo").to_path_buf()
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
        _ => bail!("usage: cargo xtask grammar [--check] | cargo xtask corpus"),
    }
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
