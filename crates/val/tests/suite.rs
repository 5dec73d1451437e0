//! Runs the hand-written negative and positive modules under tests/val/ (repo root).
//!
//! Each negative `.spvasm` names the rule it must trigger in a `; expect: RULE-ID` header; the
//! test assembles it with `coopmat_spirv::asm` (spirv-as compatible, so no peer tool is needed),
//! validates it and checks that an error with that rule is reported. Positive modules must
//! validate clean with coopmat and, when spirv-val is installed, with spirv-val too.

use coopmat_spirv::Module;
use coopmat_spirv::asm::{self, AsmOptions, TargetEnv as AsmEnv};
use coopmat_spirv::binary::write_words;
use coopmat_spirv::grammar::{memory_access, op};
use coopmat_val::{Profile, Severity, TargetEnv, ValidateOptions, rules, validate, validate_bytes};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

struct Case {
    path: PathBuf,
    headers: BTreeMap<String, String>,
}

fn cases(kind: &str) -> Vec<Case> {
    let dir = repo_root().join("tests/val").join(kind);
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "spvasm"))
        .collect();
    entries.sort();
    for path in entries {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut headers = BTreeMap::new();
        for line in text.lines().take_while(|l| l.starts_with(';')) {
            if let Some((k, v)) = line[1..].split_once(':') {
                headers.insert(k.trim().to_string(), v.trim().to_string());
            }
        }
        out.push(Case { path, headers });
    }
    out
}

fn assemble(case: &Case) -> Result<Vec<u8>, String> {
    let env = case
        .headers
        .get("assemble-env")
        .map(String::as_str)
        .unwrap_or("vulkan1.3");
    let text = std::fs::read_to_string(&case.path).map_err(|e| e.to_string())?;
    let opts = AsmOptions {
        target_env: Some(AsmEnv::from_name(env).ok_or_else(|| format!("unknown env {env}"))?),
        ..Default::default()
    };
    let words = asm::assemble(&text, &opts).map_err(|e| e.to_string())?;
    Ok(words.iter().flat_map(|w| w.to_le_bytes()).collect())
}

fn options(case: &Case) -> ValidateOptions {
    let env = case
        .headers
        .get("validate-env")
        .map(String::as_str)
        .unwrap_or("vulkan1.3");
    ValidateOptions {
        target_env: TargetEnv::parse(env).expect("validate-env"),
        profile: case
            .headers
            .get("profile")
            .map(|p| Profile::builtin(p).expect("built-in profile")),
    }
}

fn tool(name: &str) -> Option<PathBuf> {
    let t = coopmat_testkit::peer_tool(name);
    if t.is_none() {
        eprintln!("notice: {name} not found; skipping (set COOPMAT_PEERS_BIN)");
    }
    t
}

#[test]
fn negative_cases_are_rejected_naming_their_rule() {
    let cases = cases("negative");
    assert!(cases.len() >= 150, "only {} negative cases", cases.len());
    let mut failures = Vec::new();
    let mut covered = BTreeSet::new();
    for case in &cases {
        let name = case
            .path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let expect = case.headers.get("expect").cloned().unwrap_or_default();
        assert!(
            rules::by_id(&expect).is_some(),
            "{name}: unknown rule {expect}"
        );
        let bytes = match assemble(case) {
            Ok(b) => b,
            Err(e) => {
                failures.push(format!("{name}: assembly failed: {e}"));
                continue;
            }
        };
        let diags = validate_bytes(&bytes, &options(case));
        let errors: BTreeSet<&str> = diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.rule.id)
            .collect();
        if errors.contains(expect.as_str()) {
            covered.insert(expect);
        } else {
            failures.push(format!("{name}: expected {expect}, got {errors:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} negative cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    // Every rule has a negative case (the tensor memory-operand rule is covered below because
    // spirv-as cannot assemble MakePointerAvailable on OpCooperativeMatrixLoadTensorNV, and the
    // Vulkan import rule by tests/binary_only.rs because it cannot assemble an unknown set).
    let missing: Vec<&str> = rules::ALL
        .iter()
        .map(|r| r.id)
        .filter(|id| {
            !covered.contains(*id) && *id != rules::NV2_MEMOP.id && *id != rules::CORE_EXT_IMPORT.id
        })
        .collect();
    assert!(
        missing.is_empty(),
        "rules without a negative case: {missing:?}"
    );
}

#[test]
fn positive_cases_validate_clean_with_coopmat_and_spirv_val() {
    let spirv_val = tool("spirv-val");
    let cases = cases("positive");
    assert!(!cases.is_empty());
    for case in &cases {
        let name = case
            .path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let bytes = assemble(case).unwrap_or_else(|e| panic!("{name}: {e}"));
        let diags = validate_bytes(&bytes, &options(case));
        let errors: Vec<String> = diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| format!("[{}] {}", d.rule.id, d.message))
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        if spirv_val.is_some()
            && let Some(Err(e)) = coopmat_testkit::spirv_val(&bytes, "vulkan1.3")
        {
            panic!("{name}: spirv-val rejects: {e}");
        }
    }
}

/// Rewrites the first OpCooperativeMatrix{Load,Store}TensorNV's `Aligned 4` memory operand into
/// `MakePointer{Available,Visible}` with a scope id (both take one parameter word).
fn patch_memory_operand(bytes: &[u8], opcode: u16, bit: u32) -> Vec<u32> {
    let mut m = Module::from_bytes(bytes).unwrap();
    let scope = m
        .instructions
        .iter()
        .find(|i| i.opcode == op::Constant && i.words.get(3) == Some(&3))
        .and_then(|i| i.result_id)
        .expect("a constant 3");
    let first = if opcode == op::CooperativeMatrixLoadTensorNV {
        6
    } else {
        4
    };
    let inst = m
        .instructions
        .iter_mut()
        .find(|i| i.opcode == opcode && i.words.get(first) == Some(&memory_access::Aligned))
        .expect("tensor op with Aligned");
    inst.words[first] = bit | memory_access::NonPrivatePointer;
    inst.words[first + 1] = scope;
    write_words(&m.header, &m.instructions)
}

#[test]
fn tensor_memory_operands_are_checked() {
    let base = cases("positive")
        .into_iter()
        .find(|c| c.path.ends_with("coop2-base.spvasm"))
        .expect("coop2-base");
    let text = std::fs::read_to_string(&base.path).unwrap();
    for (opcode, from, to, bit) in [
        (
            op::CooperativeMatrixLoadTensorNV,
            "%tv = OpCooperativeMatrixLoadTensorNV %matA %p %a %l1 None",
            "%tv = OpCooperativeMatrixLoadTensorNV %matA %p %a %l1 Aligned 4",
            memory_access::MakePointerAvailable,
        ),
        (
            op::CooperativeMatrixStoreTensorNV,
            "OpCooperativeMatrixStoreTensorNV %p %d %l1 None",
            "OpCooperativeMatrixStoreTensorNV %p %d %l1 Aligned 4",
            memory_access::MakePointerVisible,
        ),
    ] {
        let tmp = std::env::temp_dir().join(format!(
            "coopmat-val-memop-{}-{opcode}.spvasm",
            std::process::id()
        ));
        std::fs::write(&tmp, text.replacen(from, to, 1)).unwrap();
        let case = Case {
            path: tmp.clone(),
            headers: BTreeMap::new(),
        };
        let bytes = assemble(&case).unwrap();
        let _ = std::fs::remove_file(&tmp);
        // The Aligned form is valid; the patched one must be rejected.
        let ok = validate_bytes(&bytes, &ValidateOptions::default());
        assert!(!coopmat_val::has_errors(&ok), "{ok:?}");
        let words = patch_memory_operand(&bytes, opcode, bit);
        let m = Module::from_words(&words).unwrap();
        let d = validate(&m, &ValidateOptions::default());
        assert!(d.iter().any(|d| d.rule.id == rules::NV2_MEMOP.id), "{d:?}");
    }
}

/// GLSL sources under tests/val/glsl, compiled with glslangValidator (skipped when absent):
/// `// expect: RULE-ID` or `// expect: valid` on the first line. These are real compiler
/// output that spirv-val 2026.4 accepts.
#[test]
fn glsl_cases_compiled_with_glslang() {
    let Some(glslang) = tool("glslangValidator") else {
        return;
    };
    let dir = repo_root().join("tests/val/glsl");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "comp"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&f).unwrap();
        let expect = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// expect:"))
            .map(str::trim)
            .unwrap_or_else(|| panic!("{name}: no expect header"))
            .to_string();
        let out = std::env::temp_dir().join(format!(
            "coopmat-val-glsl-{}-{name}.spv",
            std::process::id()
        ));
        let r = Command::new(&glslang)
            .args(["--target-env", "vulkan1.3", "-V"])
            .arg(&f)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            r.status.success(),
            "{name}: glslang failed: {}",
            String::from_utf8_lossy(&r.stdout)
        );
        let bytes = std::fs::read(&out).unwrap();
        let _ = std::fs::remove_file(&out);
        let diags = validate_bytes(&bytes, &ValidateOptions::default());
        let errors: BTreeSet<&str> = diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.rule.id)
            .collect();
        if expect == "valid" {
            assert!(errors.is_empty(), "{name}: {errors:?}");
        } else {
            assert!(
                errors.contains(expect.as_str()),
                "{name}: expected {expect}, got {errors:?}"
            );
        }
    }
}

/// The repository root, from this crate's own manifest directory (crates/val).
fn repo_root() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
