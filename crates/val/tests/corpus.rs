//! Every corpus module must validate clean under vulkan1.3 (spirv-val accepts them all).

use coopmat_spirv::Module;
use coopmat_val::{ValidateOptions, has_errors, validate};

#[test]
fn corpus_validates_clean() {
    // COOPMAT_CORPUS_DIR, else <repo>/corpus-cache/cyllama-vulkan-0.7.0/spv (found from this
    // crate's manifest directory).
    let dir = std::env::var_os("COOPMAT_CORPUS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../corpus-cache/cyllama-vulkan-0.7.0/spv")
        });
    let mut modules = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&dir) {
        let mut paths: Vec<_> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "spv"))
            .collect();
        paths.sort();
        for p in paths {
            let name = p
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            modules.push((name, std::fs::read(&p).expect("read corpus module")));
        }
    }
    if modules.is_empty() {
        eprintln!(
            "corpus_validates_clean: skipping, no corpus at {} (run `cargo xtask corpus` or set COOPMAT_CORPUS_DIR)",
            dir.display()
        );
    }
    if modules.is_empty() {
        return;
    }
    let opts = ValidateOptions::default();
    let mut bad = Vec::new();
    for (name, bytes) in &modules {
        let m = Module::from_bytes(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let d = validate(&m, &opts);
        if has_errors(&d) {
            bad.push(format!(
                "{name}: [{}] {} (inst {:?})",
                d[0].rule.id, d[0].message, d[0].inst
            ));
        }
    }
    for b in bad.iter().take(40) {
        eprintln!("{b}");
    }
    assert!(
        bad.is_empty(),
        "{} of {} corpus modules rejected",
        bad.len(),
        modules.len()
    );
}
