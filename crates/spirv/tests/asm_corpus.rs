//! Corpus round trip through the assembler.
//!
//! For every corpus module:
//! - `spirv-dis --raw-id` text (our own disassembler when `spirv-dis` is absent), assembled by
//!   coopmat with `--preserve-numeric-ids`, gives the original words except the generator
//!   word (header word 2): the assembler writes `spirv-as`'s own generator id, 7 << 16, where
//!   the original has glslang's. The version comes from the `; Version:` header comment and
//!   the bound is recomputed as max id + 1, both identical to the original.
//! - `spirv-dis` text with friendly names, assembled by coopmat and by `spirv-as` (when
//!   present), gives identical words (ids renumbered in order of first appearance).
//!
//! It prints `N/1569` for both and fails on any mismatch.

use coopmat_spirv::asm::{AsmOptions, GENERATOR, assemble};
use coopmat_spirv::binary::{parse_bytes, words_from_bytes};
use coopmat_spirv::dis;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn words(bytes: &[u8]) -> Vec<u32> {
    words_from_bytes(bytes).unwrap().0
}

fn tool_text(tool: &Path, args: &[&str], input: &Path) -> String {
    let out = Command::new(tool).args(args).arg(input).output().unwrap();
    assert!(
        out.status.success(),
        "{} {args:?} {}: {}",
        tool.display(),
        input.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn tool_words(tool: &Path, text: &str) -> Vec<u32> {
    let dir = std::env::temp_dir();
    let src = dir.join(format!("coopmat-asm-corpus-{}.spvasm", std::process::id()));
    let dst = dir.join(format!("coopmat-asm-corpus-{}.spv", std::process::id()));
    std::fs::write(&src, text).unwrap();
    let out = Command::new(tool)
        .arg(&src)
        .arg("-o")
        .arg(&dst)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "spirv-as: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w = words(&std::fs::read(&dst).unwrap());
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&dst);
    w
}

#[test]
fn corpus_round_trips_through_the_assembler() {
    let paths = coopmat_testkit::corpus_paths();
    if paths.is_empty() {
        eprintln!(
            "corpus_round_trips_through_the_assembler: skipping, no corpus (run `cargo xtask corpus` or set COOPMAT_CORPUS_DIR)"
        );
        return;
    }
    let spirv_dis = coopmat_testkit::peer_tool("spirv-dis");
    let spirv_as = coopmat_testkit::peer_tool("spirv-as");
    if spirv_dis.is_none() {
        eprintln!("spirv-dis not found: using coopmat's disassembler for the text");
    }
    if spirv_as.is_none() {
        eprintln!("spirv-as not found: skipping the friendly-name comparison");
    }
    let (mut raw_ok, mut friendly_ok, mut friendly_total) = (0usize, 0usize, 0usize);
    let mut failures = Vec::new();
    let mut asm_time = Duration::ZERO;
    let mut asm_words = 0usize;
    for path in &paths {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap();
        let original = words(&bytes);
        let text_of = |raw_id: bool| match &spirv_dis {
            Some(t) => tool_text(t, if raw_id { &["--raw-id"] } else { &[] }, path),
            None => dis::disassemble(
                &parse_bytes(&bytes).unwrap(),
                &dis::Options {
                    raw_id,
                    ..dis::Options::default()
                },
            ),
        };
        // Raw ids: the original words back, except the generator.
        let raw_text = text_of(true);
        let t0 = Instant::now();
        let ours = assemble(
            &raw_text,
            &AsmOptions {
                preserve_numeric_ids: true,
                ..AsmOptions::default()
            },
        );
        asm_time += t0.elapsed();
        asm_words += original.len();
        match ours {
            Ok(ours) => {
                let mut expected = original.clone();
                expected[2] = GENERATOR;
                if ours == expected {
                    raw_ok += 1;
                } else {
                    let i = (0..ours.len().min(expected.len())).find(|&i| ours[i] != expected[i]);
                    failures.push(format!("{name} (raw ids): first difference at word {i:?}"));
                }
            }
            Err(e) => failures.push(format!("{name} (raw ids): {}", e.render(&name, &raw_text))),
        }
        // Friendly names: identical to spirv-as.
        if let Some(tool) = &spirv_as {
            friendly_total += 1;
            let text = text_of(false);
            match assemble(&text, &AsmOptions::default()) {
                Ok(ours) => {
                    if ours == tool_words(tool, &text) {
                        friendly_ok += 1;
                    } else {
                        failures.push(format!("{name} (friendly names): differs from spirv-as"));
                    }
                }
                Err(e) => failures.push(format!(
                    "{name} (friendly names): {}",
                    e.render(&name, &text)
                )),
            }
        }
    }
    eprintln!(
        "raw-id round trip: {raw_ok}/{} modules identical except the generator word",
        paths.len()
    );
    if spirv_as.is_some() {
        eprintln!(
            "friendly-name text: {friendly_ok}/{friendly_total} modules identical to spirv-as"
        );
    }
    eprintln!(
        "assembling the raw-id texts took {:.3} s for {asm_words} words (build profile: {})",
        asm_time.as_secs_f64(),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
