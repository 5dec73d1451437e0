//! The hand-written `.spvasm` files under `tests/spvasm/`: each assembles with coopmat exactly as
//! with `spirv-as` (for several option sets), parses and writes back identically, and survives
//! disassembly by `coopmat_spirv::dis` and reassembly.
//!
//! A file `X.raw.spvasm` next to `X.spvasm` is `X` with some operands written as raw `!<n>`
//! words (for forms `spirv-as` rejects but `spirv-dis` prints); `spirv-as` on the twin is then
//! the reference for `X`.

use coopmat_spirv::asm::{AsmOptions, TargetEnv, assemble};
use coopmat_spirv::binary::{parse_words, write_words};
use coopmat_spirv::dis;
use std::path::{Path, PathBuf};
use std::process::Command;

fn spvasm_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "spvasm") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&coopmat_testkit::repo_root().join("tests/spvasm"), &mut out);
    out.sort();
    out
}

fn option_sets() -> Vec<(Vec<&'static str>, AsmOptions)> {
    vec![
        (vec![], AsmOptions::default()),
        (
            vec!["--preserve-numeric-ids"],
            AsmOptions {
                preserve_numeric_ids: true,
                ..AsmOptions::default()
            },
        ),
        (
            vec!["--target-env", "vulkan1.1"],
            AsmOptions {
                target_env: TargetEnv::from_name("vulkan1.1"),
                ..AsmOptions::default()
            },
        ),
    ]
}

/// Runs `spirv-as` on a file; `None` when it rejects it.
fn spirv_as(tool: &Path, file: &Path, flags: &[&str]) -> Option<Vec<u32>> {
    let out = std::env::temp_dir().join(format!(
        "coopmat-asm-spvasm-{}-{}.spv",
        std::process::id(),
        file.file_stem().unwrap().to_string_lossy()
    ));
    let status = Command::new(tool)
        .args(flags)
        .arg(file)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    if !status.status.success() {
        return None;
    }
    let bytes = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

#[test]
fn spvasm_files_match_spirv_as() {
    let files = spvasm_files();
    assert!(
        files.len() >= 8,
        "expected the hand-written files under tests/spvasm, found {}",
        files.len()
    );
    let Some(tool) = coopmat_testkit::peer_tool("spirv-as") else {
        eprintln!("spvasm_files_match_spirv_as: skipping, spirv-as not found");
        return;
    };
    let mut compared = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let twin = file.with_extension("raw.spvasm");
        let reference = if twin.is_file() {
            twin.clone()
        } else {
            file.clone()
        };
        for (flags, options) in option_sets() {
            let ours = assemble(&text, &options).unwrap_or_else(|e| {
                panic!(
                    "{}: {}",
                    file.display(),
                    e.render(&file.display().to_string(), &text)
                )
            });
            let theirs = spirv_as(&tool, &reference, &flags)
                .unwrap_or_else(|| panic!("spirv-as rejects {} {flags:?}", reference.display()));
            assert_eq!(
                ours.len(),
                theirs.len(),
                "{} {flags:?}: word count",
                file.display()
            );
            if let Some(i) = (0..ours.len()).find(|&i| ours[i] != theirs[i]) {
                panic!(
                    "{} {flags:?}: word {i} is {:#x}, spirv-as wrote {:#x}",
                    file.display(),
                    ours[i],
                    theirs[i]
                );
            }
            compared += 1;
        }
    }
    eprintln!(
        "compared {compared} assemblies of {} files with spirv-as",
        files.len()
    );
}

#[test]
fn spvasm_files_round_trip() {
    for file in spvasm_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.display().to_string();
        let words = assemble(&text, &AsmOptions::default())
            .unwrap_or_else(|e| panic!("{}", e.render(&name, &text)));
        // Binary reader and writer.
        let parsed = parse_words(&words).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            write_words(&parsed.header, &parsed.instructions),
            words,
            "{name}: parse/write"
        );
        // Our disassembler, friendly names: same module back (ids renumbered in order of
        // appearance only where the text already had them so).
        for raw_id in [false, true] {
            let opts = dis::Options {
                raw_id,
                ..dis::Options::default()
            };
            let dtext = dis::disassemble(&parsed, &opts);
            let again = assemble(
                &dtext,
                &AsmOptions {
                    preserve_numeric_ids: raw_id,
                    ..AsmOptions::default()
                },
            )
            .unwrap_or_else(|e| {
                panic!("{name} (dis raw_id={raw_id}): {}", e.render("dis", &dtext))
            });
            if raw_id {
                // Raw ids reproduce the binary exactly.
                assert_eq!(again, words, "{name}: assemble(dis --raw-id) differs");
            } else {
                // Friendly names renumber ids; the re-disassembly must be stable.
                let p2 = parse_words(&again).unwrap();
                assert_eq!(
                    dis::disassemble(&p2, &opts),
                    dtext,
                    "{name}: dis/as/dis not stable"
                );
            }
        }
    }
}
