//! Runs the shared Amber scripts (`/work/shared/amber` or `../shared/amber` beside the repository).

use coopmat_amber::Outcome;
use coopmat_amber::parse::{self, StmtKind};
use coopmat_amber::shader;
use std::path::PathBuf;

/// The shared script directory, if present.
fn shared_dir() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    [
        std::env::var_os("COOPMAT_AMBER_DIR").map(PathBuf::from),
        Some(root.join("../shared/amber")),
        Some(PathBuf::from("/work/shared/amber")),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.is_dir())
    .map(|p| p.canonicalize().unwrap_or(p))
}

fn scripts(test: &str) -> Vec<PathBuf> {
    match shared_dir() {
        Some(d) => coopmat_amber::collect_scripts(&[d]).expect("readable script directory"),
        None => {
            eprintln!("{test}: no shared Amber scripts (set COOPMAT_AMBER_DIR); skipping");
            Vec::new()
        }
    }
}

/// Every script parses (the ldexp template excepted) and every SPIR-V assembly shader assembles with
/// `coopmat_spirv::asm` to the same words as `spirv-as` (when installed), so a failure of the run test is about
/// execution.
#[test]
fn shared_scripts_parse_and_assemble() {
    let files = scripts("shared_scripts_parse_and_assemble");
    let peer = shader::find_tool("spirv-as");
    let mut problems = Vec::new();
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let script = match parse::parse(&text) {
            Ok(s) => s,
            Err(e) => {
                if !text.contains("{amber_") {
                    problems.push(format!("{}: {e}", f.display()));
                }
                continue;
            }
        };
        for s in &script.statements {
            let StmtKind::Shader(sh) = &s.kind else {
                continue;
            };
            if sh.format != parse::ShaderFormat::SpirvAsm {
                continue;
            }
            let ours = match shader::compile(sh, f.parent().unwrap()) {
                Ok(w) => w,
                Err(e) => {
                    problems.push(format!("{}: {e:?}", f.display()));
                    continue;
                }
            };
            if let Some(tool) = &peer {
                let dir = tempfile::tempdir().unwrap();
                let (src, out) = (dir.path().join("s.spvasm"), dir.path().join("s.spv"));
                std::fs::write(&src, &sh.source).unwrap();
                let env = sh.target_env.as_deref().unwrap_or("spv1.0");
                let st = std::process::Command::new(tool)
                    .args(["--target-env", env])
                    .arg(&src)
                    .arg("-o")
                    .arg(&out)
                    .status()
                    .unwrap();
                assert!(
                    st.success(),
                    "spirv-as rejected a shader of {}",
                    f.display()
                );
                let bytes = std::fs::read(&out).unwrap();
                let theirs: Vec<u32> = bytes
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                    .collect();
                if theirs != ours {
                    problems.push(format!(
                        "{}: shader {} assembles differently from spirv-as",
                        f.display(),
                        sh.name
                    ));
                }
            }
            checked += 1;
        }
    }
    eprintln!(
        "{} scripts parsed, {checked} assembly shaders checked",
        files.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Skip reasons a shared script may have: each names a feature the script needs that the engine (or this
/// machine) lacks. Anything else skipped is a test failure.
const ALLOWED_SKIPS: &[&str] = &[
    "uses OPENCL-C shaders",
    "uses IMAGE objects",
    "uses SAMPLER objects",
    "uses BIND ... AS storage_image",
    "uses BIND SAMPLER",
    "uses image probe",
    "needs DEVICE_FEATURE shaderStorageImageMultisample",
    "template with unfilled placeholders",
    "needs full subgroups (FULLY_POPULATED) with local_size_x 119",
];

/// Scripts that fail for reasons written down in `crates/amber/README.md`; they may fail, any other failure fails
/// the test, and so does a listed script that passes (the list must be kept current).
const KNOWN_ENGINE_FAILURES: &[&str] = &[];

/// Runs every shared script on `coopmat-exec`: each passes or is skipped for an allowed reason.
#[test]
fn shared_scripts_pass_or_skip_for_listed_reasons() {
    let files = scripts("shared_scripts_pass_or_skip_for_listed_reasons");
    if files.is_empty() {
        return;
    }
    let engine = coopmat_amber::ExecEngine::default();
    let (mut pass, mut fail, mut skip, mut missing_data) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    for f in &files {
        let name = f.to_string_lossy();
        // The two bandwidth/parallelism benchmarks run minutes in an unoptimised engine; `cargo test --release`
        // (and `coopmat amber`) run them.
        if cfg!(debug_assertions) && name.contains("/benchmarks/") {
            eprintln!("not run in a debug build: {name}");
            continue;
        }
        match coopmat_amber::run_file(&engine, f).outcome {
            Outcome::Pass => {
                pass += 1;
                if KNOWN_ENGINE_FAILURES.iter().any(|k| name.ends_with(k)) {
                    problems.push(format!(
                        "listed as a known engine failure but passes now (remove it from the list): {name}"
                    ));
                }
            }
            Outcome::Skip(why) => {
                skip += 1;
                // Without glslang on this machine the GLSL scripts cannot run: allowed, with a notice below.
                let no_glslang = why == "glslangValidator is not installed";
                let allowed = |r: &str| ALLOWED_SKIPS.iter().any(|a| r.starts_with(a));
                if !no_glslang && !why.split("; ").all(allowed) {
                    problems.push(format!("unexpected skip {name}: {why}"));
                }
            }
            Outcome::Fail(why) => {
                fail += 1;
                // The shared copy lacks some scripts' data files (the CTS keeps input.txt beside
                // them): those fail as Amber fails them, which is right, and are counted apart.
                let data_file_absent = why.contains("No such file or directory")
                    && why
                        .split(": ")
                        .any(|p| p.ends_with(".txt") && !std::path::Path::new(p).is_file());
                if data_file_absent {
                    missing_data += 1;
                } else if !KNOWN_ENGINE_FAILURES.iter().any(|k| name.ends_with(k)) {
                    problems.push(format!("FAIL {name}: {why}"));
                }
            }
        }
    }
    if shader::find_tool("glslangValidator").is_none() {
        eprintln!("glslangValidator not found: the GLSL scripts were skipped");
    }
    eprintln!(
        "{pass} passed, {fail} failed ({missing_data} for a data file the copy lacks), {skip} skipped"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every shared script again with the engine observing uniformity: no value the divergence
/// analysis calls subgroup-uniform differs within a subgroup (the benchmarks are left out: they
/// repeat the same shaders for minutes).
#[test]
fn shared_scripts_uphold_the_divergence_analysis() {
    let files = scripts("shared_scripts_uphold_the_divergence_analysis");
    let engine = coopmat_amber::ExecEngine {
        options: coopmat_exec::EngineOptions {
            observe_uniformity: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut problems = Vec::new();
    let mut ran = 0;
    for f in &files {
        let name = f.to_string_lossy();
        if name.contains("/benchmarks/") {
            continue;
        }
        if let Outcome::Fail(why) = coopmat_amber::run_file(&engine, f).outcome
            && why.contains("divergence analysis")
        {
            problems.push(format!("{name}: {why}"));
        }
        ran += 1;
    }
    let s = *engine.uniformity.lock().unwrap();
    eprintln!(
        "{ran} scripts: {} values observed, {} violations, {} observed-uniform values called divergent",
        s[0], s[1], s[2]
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
