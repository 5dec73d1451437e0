//! Every corpus module must validate clean under vulkan1.3 (spirv-val accepts them all).

use coopmat_spirv::Module;
use coopmat_val::{ValidateOptions, has_errors, validate};

#[test]
fn corpus_validates_clean() {
    let modules = coopmat_testkit::corpus_or_notice("corpus_validates_clean");
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
