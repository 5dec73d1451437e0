//! No panics on bad input: every positive module, with single words replaced by pseudo-random
//! values (ids out of bound, wrong types, broken operand counts), must either fail to parse or
//! validate without panicking, under every target environment and both built-in profiles.

use coopmat_spirv::Module;
use coopmat_spirv::asm::{self, AsmOptions};
use coopmat_val::{Profile, TargetEnv, ValidateOptions, validate};
use std::path::PathBuf;

fn positive_modules() -> Vec<Vec<u32>> {
    let dir = repo_root().join("tests/val/positive");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        out.push(
            asm::assemble(&text, &AsmOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}", f.display())),
        );
    }
    out
}

#[test]
fn mutated_modules_never_panic() {
    let modules = positive_modules();
    let envs = [
        ValidateOptions::default(),
        ValidateOptions {
            target_env: TargetEnv::Spv(0),
            profile: Profile::builtin("nvidia-h100-580"),
        },
        ValidateOptions {
            target_env: TargetEnv::Vulkan(1),
            profile: Profile::builtin("lavapipe-26"),
        },
    ];
    // A fixed xorshift sequence keeps failures reproducible.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    // COOPMAT_FUZZ_ROUNDS raises the number of mutations per module for longer runs.
    let rounds: usize = std::env::var("COOPMAT_FUZZ_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let mut validated = 0;
    for (mi, words) in modules.iter().enumerate() {
        for round in 0..rounds {
            let mut w = words.clone();
            let pos = 5 + (next() as usize) % (w.len() - 5);
            let r = next();
            w[pos] = match r % 4 {
                0 => (r >> 8) as u32,
                1 => w[pos].wrapping_add(1),
                2 => (r >> 8) as u32 % 64,
                _ => w[pos] ^ (1 << ((r >> 8) % 32)),
            };
            let Ok(m) = Module::from_words(&w) else {
                continue;
            };
            let opts = &envs[round % envs.len()];
            let result = std::panic::catch_unwind(|| validate(&m, opts));
            assert!(
                result.is_ok(),
                "module {mi}, round {round}: word {pos} set to {:#x} panicked",
                w[pos]
            );
            validated += 1;
        }
    }
    assert!(validated > 1000, "only {validated} mutated modules parsed");
}

/// The repository root, from this crate's own manifest directory (crates/val).
fn repo_root() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
