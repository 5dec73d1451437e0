//! `coopmat run` with bad arguments: each is an error naming the argument (exit status 2), never
//! an abort, whatever the size or text asked for.

use std::process::Command;

/// A module that assembles without peer tools: one storage buffer, one store.
const SHADER: &str = r#"
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %rt ArrayStride 4
OpDecorate %S Block
OpMemberDecorate %S 0 Offset 0
OpDecorate %buf DescriptorSet 0
OpDecorate %buf Binding 0
OpDecorate %c SpecId 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%u0 = OpConstant %uint 0
%c = OpSpecConstant %uint 7
%rt = OpTypeRuntimeArray %uint
%S = OpTypeStruct %rt
%pS = OpTypePointer StorageBuffer %S
%pu = OpTypePointer StorageBuffer %uint
%buf = OpVariable %pS StorageBuffer
%main = OpFunction %void None %fn
%l = OpLabel
%p = OpAccessChain %pu %buf %u0 %u0
OpStore %p %c
OpReturn
OpFunctionEnd
"#;

/// [`SHADER`] assembled by `coopmat as` into `dir`: the module's path.
fn assembled(dir: &std::path::Path) -> std::path::PathBuf {
    let (asm, spv) = (dir.join("s.spvasm"), dir.join("s.spv"));
    std::fs::write(&asm, SHADER).unwrap();
    let st = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .args(["as", asm.to_str().unwrap(), "-o", spv.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    spv
}

#[test]
fn bad_arguments_are_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let spv = assembled(dir.path());
    let spv = spv.to_str().unwrap();
    let cases: [(&[&str], &str); 12] = [
        (
            &["--buffer", "0:0=zeros:99999999999999"],
            "more than the engine's buffer limit",
        ),
        (
            &["--buffer", "0:0=random:18446744073709551615:1"],
            "more than the engine's buffer limit",
        ),
        (&["--buffer", "0:0=zeros:x"], "the size in \"zeros:x\""),
        (
            &["--buffer", "0:0=zeros:16", "--spec", "1=zz"],
            "--spec \"1=zz\": the value \"zz\"",
        ),
        (
            &["--buffer", "0:0=zeros:16", "--spec", "q=1"],
            "--spec \"q=1\": the id \"q\"",
        ),
        (
            &["--buffer", "0:0=zeros:16", "--push", "0xzz"],
            "\"zz\" is not a hex byte",
        ),
        (
            &["--buffer", "0:0=zeros:16", "--groups", "1,x"],
            "expected X,Y,Z",
        ),
        (
            &["--buffer", "0:0=zeros:16", "--groups", "1,1"],
            "expected X,Y,Z (three counts), got 2",
        ),
        (
            &["--buffer", "0:0=zeros:16", "--groups", "1,1,1,1"],
            "got 4",
        ),
        (
            &["--buffer", "0:0=zeros:16", "--buffer", "0:0=zeros:32"],
            "binding 0:0 is given twice",
        ),
        (
            &["--buffer", "0:0=zeros:16", "--push", "no-such-file"],
            "--push \"no-such-file\" (a file; hex bytes start with 0x)",
        ),
        (
            &["--buffer", "0:0=zeros:16", "--spec", "1=0x100000000"],
            "the value 0x100000000 does not fit",
        ),
    ];
    for (args, want) in cases {
        let o = Command::new(env!("CARGO_BIN_EXE_coopmat"))
            .arg("run")
            .arg(spv)
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // And the good form runs: the spec constant lands in the buffer.
    let out = dir.path().join("o.bin");
    let o = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .args(["run", spv, "--buffer", "0:0=zeros:16", "--spec", "1=42"])
        .arg("--out")
        .arg(format!("0:0={}", out.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(&std::fs::read(out).unwrap()[..4], &42u32.to_le_bytes());
}

/// Output into a closed pipe (`coopmat ... | head -1` after head has exited) ends the command
/// quietly: no panic (exit status 101), whichever command prints.
#[test]
fn a_closed_standard_output_is_not_a_panic() {
    let amber = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/khr_coopmat_gemm.amber"
    );
    for args in [vec!["amber", amber], vec!["--help"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_coopmat"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Close the read end before the command writes.
        drop(child.stdout.take());
        let status = child.wait().unwrap();
        assert_ne!(status.code(), Some(101), "{args:?}: {status:?}");
    }
}

/// `--profile-ops` prints the dispatch's op table (the module's one store among its rows,
/// counted once a batch), by op kind; `--profile-instructions` a row per instruction, named;
/// without either nothing of the kind is printed.
#[test]
fn profile_ops_prints_each_op_of_the_dispatch() {
    let dir = tempfile::tempdir().unwrap();
    let spv = assembled(dir.path());
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_coopmat"))
            .args(["run", spv.to_str().unwrap(), "--buffer", "0:0=zeros:16"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let plain = run(&[]);
    assert!(!plain.contains("op times"), "{plain}");
    let profiled = run(&["--profile-ops", "--threads", "1"]);
    assert!(profiled.contains("op times (the dispatch;"), "{profiled}");
    let store = profiled
        .lines()
        .find(|l| l.trim_end().ends_with(": Store"))
        .unwrap_or_else(|| panic!("no Store row: {profiled}"));
    // share, ms, calls, ns/call, function: op — one workgroup, one batch, one store.
    assert_eq!(store.split_whitespace().nth(2), Some("1"), "{store}");
    assert!(
        !profiled.contains("(Op"),
        "instructions named by kind: {profiled}"
    );
    // By instruction: each row names the instruction its op was compiled from.
    let by_instruction = run(&["--profile-instructions", "--threads", "1"]);
    assert!(
        by_instruction
            .lines()
            .any(|l| l.trim_end().ends_with(": Store  (OpStore)")),
        "{by_instruction}"
    );
    assert!(
        by_instruction.contains("= OpAccessChain)"),
        "{by_instruction}"
    );
}
