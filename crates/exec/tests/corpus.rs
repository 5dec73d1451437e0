//! Every real-shader corpus module compiles into a pipeline (or fails with an error, never a
//! panic). Skips with a notice when the corpus is absent.

use coopmat_exec::{EngineOptions, Pipeline};

#[test]
fn corpus_modules_compile_without_panicking() {
    let mods = coopmat_testkit::corpus_or_notice("corpus_modules_compile_without_panicking");
    if mods.is_empty() {
        return;
    }
    let (mut ok, mut failed) = (0, Vec::new());
    for (name, bytes) in &mods {
        let Ok(m) = coopmat_spirv::Module::from_bytes(bytes) else {
            continue;
        };
        let r = std::panic::catch_unwind(|| {
            Pipeline::compile(&m, "", &Default::default(), &EngineOptions::default())
        });
        match r {
            Ok(Ok(_)) => ok += 1,
            Ok(Err(e)) => failed.push(format!("{name}: {e}")),
            Err(_) => panic!("{name}: the compiler panicked"),
        }
    }
    eprintln!(
        "{ok} of {} corpus modules compiled; {} errors",
        mods.len(),
        failed.len()
    );
    for f in failed.iter().take(10) {
        eprintln!("  {f}");
    }
    // Most real shaders must compile (unsupported instructions only fail when reached).
    assert!(
        ok * 10 >= mods.len() * 9,
        "only {ok} of {} compiled",
        mods.len()
    );
}

#[test]
fn corpus_modules_run_one_workgroup_without_panicking() {
    let mods =
        coopmat_testkit::corpus_or_notice("corpus_modules_run_one_workgroup_without_panicking");
    if mods.is_empty() {
        return;
    }
    let opts = EngineOptions {
        robust: true,
        instruction_budget: 2_000_000,
        threads: 1,
        printf: false,
        ..Default::default()
    };
    let (mut ran, mut errors) = (0, std::collections::BTreeMap::<String, usize>::new());
    // Every 7th module keeps the test short.
    for (name, bytes) in mods.iter().step_by(7) {
        let Ok(m) = coopmat_spirv::Module::from_bytes(bytes) else {
            continue;
        };
        let Ok(p) = Pipeline::compile(&m, "", &Default::default(), &opts) else {
            continue;
        };
        let mut res = coopmat_exec::Resources::default();
        for b in p.bindings() {
            res.buffers
                .insert((b.set, b.binding), vec![0; b.min_size + 65536]);
        }
        res.push_constants = vec![0; p.push_constant_size()];
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            p.dispatch(&mut res, [1, 1, 1])
        })) {
            Ok(Ok(_)) => ran += 1,
            Ok(Err(e)) => *errors.entry(e.what.chars().take(60).collect()).or_default() += 1,
            Err(_) => panic!("{name}: the engine panicked"),
        }
    }
    eprintln!("{ran} corpus modules ran one workgroup; errors by kind:");
    for (k, n) in &errors {
        eprintln!("  {n:4}  {k}");
    }
}
