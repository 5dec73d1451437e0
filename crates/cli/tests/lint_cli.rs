//! `coopmat lint` end to end: exit statuses, rule listing and explanation, levels from the
//! command line and from a coopmat-lint.toml found upward from the input.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../lint/tests/spvasm")
        .join(name)
}

fn lint(args: &[&str], input: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .arg("lint")
        .args(args)
        .arg(input)
        .output()
        .expect("runs coopmat");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn exit_status_follows_the_levels() {
    let bad = fixture("divergent_muladd.spvasm");
    let (code, text) = lint(&[], &bad);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("error[coopmat-divergent-control-flow]"),
        "{text}"
    );
    assert_eq!(lint(&["-W", "coopmat-divergent-control-flow"], &bad).0, 0);
    assert_eq!(
        lint(
            &["-W", "coopmat-divergent-control-flow", "--deny-warnings"],
            &bad
        )
        .0,
        1
    );
    assert_eq!(lint(&["-A", "coopmat-divergent-control-flow"], &bad).0, 0);
    assert_eq!(lint(&[], &fixture("uniform_muladd.spvasm")).0, 0);
    let (code, text) = lint(&["-D", "no-such-rule"], &bad);
    assert_eq!(code, 2);
    assert!(text.contains("unknown rule 'no-such-rule'"), "{text}");
}

#[test]
fn config_file_is_found_upward_from_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("shaders/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let input = sub.join("bad.spvasm");
    std::fs::copy(fixture("divergent_muladd.spvasm"), &input).unwrap();
    assert_eq!(lint(&[], &input).0, 2);
    std::fs::write(
        dir.path().join("coopmat-lint.toml"),
        "[rules]\ncoopmat-divergent-control-flow = \"warn\"\n",
    )
    .unwrap();
    let (code, text) = lint(&[], &input);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("warning[coopmat-divergent-control-flow]"),
        "{text}"
    );
    std::fs::write(
        dir.path().join("coopmat-lint.toml"),
        "[rules]\ncoopmat-divergent-control-flow = \"loud\"\n",
    )
    .unwrap();
    let (code, text) = lint(&[], &input);
    assert_eq!(code, 2);
    assert!(text.contains("coopmat-lint.toml"), "{text}");
}

#[test]
fn list_and_explain_name_every_rule() {
    let out = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .args(["lint", "--list-rules"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for r in coopmat_lint::RULES {
        assert!(text.contains(r.name), "{text}");
        let out = Command::new(env!("CARGO_BIN_EXE_coopmat"))
            .args(["lint", "--explain", r.name])
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains(r.explanation));
    }
}

#[test]
fn unparsable_input_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("junk.spv");
    std::fs::write(&f, b"\x03\x02\x23\x07garbage").unwrap();
    let (code, text) = lint(&[], &f);
    assert_eq!(code, 2);
    assert!(text.contains("junk.spv"), "{text}");
}

/// A directory holding a link to itself: `lint`, `info`, `val` and `amber` visit each file once.
#[cfg(unix)]
#[test]
fn directory_walks_visit_each_file_once_despite_symlink_cycles() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("d");
    std::fs::create_dir(&sub).unwrap();
    std::os::unix::fs::symlink(dir.path(), sub.join("loop")).unwrap();
    let asm = sub.join("m.spvasm");
    std::fs::copy(fixture("divergent_muladd.spvasm"), &asm).unwrap();
    let bin = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .arg("as")
        .arg(&asm)
        .arg("-o")
        .arg(sub.join("m.spv"))
        .status()
        .unwrap();
    assert!(bin.success());
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_coopmat"))
            .args(args)
            .arg(dir.path())
            .output()
            .expect("runs coopmat");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Two modules (m.spvasm and m.spv), one finding each.
    let findings: serde_json::Value =
        serde_json::from_str(&run(&["lint", "--format", "json"])).unwrap();
    assert_eq!(findings.as_array().unwrap().len(), 2, "{findings}");
    let infos: serde_json::Value = serde_json::from_str(&run(&["info", "--json"])).unwrap();
    assert_eq!(infos.as_array().unwrap().len(), 1, "{infos}");
    let val: serde_json::Value = serde_json::from_str(&run(&["val", "--json"])).unwrap();
    assert_eq!(val.as_array().unwrap().len(), 2, "{val}");
    std::fs::write(sub.join("t.amber"), "# nothing\n").unwrap();
    let amber = run(&["amber"]);
    assert_eq!(amber.matches("t.amber").count(), 1, "{amber}");
}
