//! The hostile-input suite: one test per class of the hostile-input report (memory isolation,
//! malformed modules, allocation, hangs, silent wrong results, unclear errors), each case run
//! through the `coopmat` binary and held to the specific error it must give. Every run must end
//! by itself within its time limit, without a panic (exit status 101) or a signal (an abort, a
//! stack overflow). Shaders are `.spvasm` under tests/hostile/ (assembled by coopmat itself, so
//! no peer tool is needed), with the GLSL they were compiled from beside them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one run of the binary gave.
struct Run {
    code: i32,
    text: String,
}

/// Runs `coopmat args` in `dir`, killed after `limit`; fails the test on a panic, a signal or the
/// time limit.
fn coopmat_in(dir: &Path, args: &[&str], limit: Duration) -> Run {
    let child = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting coopmat");
    let pid = child.id();
    // The output is drained while the command runs (a full pipe would stall it).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let out = match rx.recv_timeout(limit) {
        Ok(out) => out.expect("waiting for coopmat"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("coopmat {args:?} still ran after {limit:?}: a hang");
        }
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let Some(code) = out.status.code() else {
        panic!(
            "coopmat {args:?} was killed by a signal ({}):\n{text}",
            out.status
        );
    };
    assert_ne!(code, 101, "coopmat {args:?} panicked:\n{text}");
    Run { code, text }
}

/// A scratch directory holding the assembled fixtures.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Assembles tests/hostile/NAME.spvasm into NAME.spv here; returns the file name.
    fn module(&self, name: &str) -> String {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/hostile")
            .join(format!("{name}.spvasm"));
        let out = format!("{name}.spv");
        let r = self.run(&["as", src.to_str().unwrap(), "-o", &out]);
        assert_eq!(r.code, 0, "assembling {name}:\n{}", r.text);
        out
    }

    fn write(&self, name: &str, bytes: &[u8]) {
        std::fs::write(self.path(name), bytes).unwrap();
    }

    fn run(&self, args: &[&str]) -> Run {
        coopmat_in(self.dir.path(), args, Duration::from_secs(120))
    }

    /// Runs and expects exit status `code` and `needle` in the output.
    fn expect(&self, args: &[&str], code: i32, needle: &str) -> Run {
        let r = self.run(args);
        assert_eq!(r.code, code, "coopmat {args:?}:\n{}", r.text);
        assert!(
            r.text.contains(needle),
            "coopmat {args:?}: expected {needle:?} in:\n{}",
            r.text
        );
        r
    }
}

/// The isolation shader's buffers: a 4 KiB victim of 0x55 at 0:0, two 512-byte structs at 0:1;
/// push constants (i, j) index `t[i].v[j]`.
fn isolation_args<'a>(spv: &'a str, push: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        spv,
        "--buffer",
        "0:0=const:4096:0x55555555",
        "--buffer",
        "0:1=zeros:1024",
        "--push",
        push,
    ]
}

/// Class 1: an address reaches only the object it was derived from. Index 0x80000000 of an
/// array of 512-byte structs is -2^40 bytes: once exactly one object back, into the victim.
#[test]
fn memory_isolation_no_index_reaches_another_binding() {
    let s = Scratch::new();
    let spv = s.module("isolation");
    let i_min = "0x0000008000000000"; // i = 0x80000000, j = 0
    s.expect(&isolation_args(&spv, i_min), 2, "out-of-bounds access");
    // Robust access: the store is dropped; neither buffer changes.
    let mut args = isolation_args(&spv, i_min);
    args.extend([
        "--robust",
        "--out",
        "0:0=victim.bin",
        "--out",
        "0:1=target.bin",
    ]);
    s.expect(&args, 0, "ran 1 workgroups");
    let victim = std::fs::read(s.path("victim.bin")).unwrap();
    assert!(victim.len() == 4096 && victim.iter().all(|&b| b == 0x55));
    let target = std::fs::read(s.path("target.bin")).unwrap();
    assert!(
        target.iter().all(|&b| b == 0),
        "the robust store was dropped"
    );
    // In bounds (i = 1, j = 127: the last word) the store lands where it should.
    let mut args = isolation_args(&spv, "0x010000007f000000");
    args.extend(["--out", "0:0=victim.bin", "--out", "0:1=target.bin"]);
    s.expect(&args, 0, "ran 1 workgroups");
    let target = std::fs::read(s.path("target.bin")).unwrap();
    assert_eq!(&target[1020..], &0xdeadbeefu32.to_le_bytes());
    assert!(
        std::fs::read(s.path("victim.bin"))
            .unwrap()
            .iter()
            .all(|&b| b == 0x55)
    );
}

/// Class 2: malformed modules (some of which passed the validator) are errors naming the place,
/// from the validator and from `run`; output into a closed pipe is not a panic.
#[test]
fn malformed_modules_are_errors_not_panics() {
    let s = Scratch::new();
    let sc = s.module("storage_class_unknown");
    s.expect(
        &["run", &sc],
        2,
        "storage class 99, which SPIR-V does not define",
    );
    s.expect(&["val", &sc], 1, "unknown StorageClass value 99");
    // OpSpecConstantOp operations whose types do not check (spirv-val rejects both too).
    let ex = s.module("spec_op_extract_type");
    s.expect(
        &["val", "--target-env", "vulkan1.3", &ex],
        1,
        "error[Core-SpecConstantOp-Types]: OpSpecConstantOp OpCompositeExtract: the result type %float is not the type of the member",
    );
    let mul = s.module("spec_op_imul_type");
    s.expect(
        &["val", "--target-env", "vulkan1.3", &mul],
        1,
        "OpSpecConstantOp OpIMul: operand",
    );
    // debugPrintf with a precision of 70000 digits (beyond Rust's formatter): printed, bounded.
    let pf = s.module("printf_prec");
    let r = s.expect(&["run", &pf], 0, "ran 1 workgroups");
    assert!(r.text.lines().all(|l| l.len() < 70_000), "bounded output");
    // A closed standard output ends the command quietly.
    let mut child = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .args(["dis", &sc])
        .current_dir(s.dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.code().is_some_and(|c| c != 101), "{out:?}");
}

/// Class 3: every size derived from input is checked before anything is allocated.
#[test]
fn sizes_from_input_are_checked_before_allocation() {
    let s = Scratch::new();
    let m = s.module("matrix_columns");
    s.expect(
        &["run", &m],
        2,
        "is 4 GiB or more: more than the engine's limit for one type",
    );
    // A Private array of 2^28 words in each of 64 invocations: 64 GiB.
    let p = s.module("private_big");
    s.expect(
        &[
            "run",
            &p,
            "--buffer",
            "0:0=zeros:64",
            "--max-memory",
            "1000000000",
        ],
        2,
        "more than the memory limit of 1000000000 bytes",
    );
    // A Workgroup array sized by a specialization constant: 0xF0000000 words.
    let w = s.module("shared_spec");
    s.expect(
        &[
            "run",
            &w,
            "--buffer",
            "0:0=zeros:128",
            "--spec",
            "0=0xF0000000",
        ],
        2,
        "is 4 GiB or more",
    );
    // A push-constant block 4 GiB long (its member at offset 0xFFFF0000).
    let pc = s.module("push_huge");
    s.expect(
        &["run", &pc],
        2,
        "the push-constant block is 4294901764 bytes: more than the engine's 65536",
    );
    s.expect(
        &["run", &w, "--buffer", "0:0=zeros:1000000000000000"],
        2,
        "more than the engine's buffer limit",
    );
    // Amber: a buffer far beyond the limit, and 10 000 nested REPEAT blocks.
    s.write(
        "big.amber",
        b"#!amber\nBUFFER a DATA_TYPE mat4x4<double> SIZE 100000000000 FILL 0\nEXPECT a IDX 0 EQ 0\n",
    );
    s.expect(&["amber", "big.amber"], 1, "exceed the 4 GiB limit");
    let nested = format!(
        "#!amber\n{}{}",
        "REPEAT 1\n".repeat(10_000),
        "END\n".repeat(10_000)
    );
    s.write("nested.amber", nested.as_bytes());
    s.expect(
        &["amber", "nested.amber"],
        1,
        "REPEAT nested more than 64 deep",
    );
    // ggml-matmul with M = 10^9 (past the 32-bit push constants) and 10^8 (past the memory
    // limit): errors, not panics or allocations (needs the corpus's module).
    let corpus = coopmat_testkit_corpus().join("matmul_f16_cm2.spv");
    if corpus.is_file() {
        s.expect(
            &[
                "ggml-matmul",
                "--shader",
                corpus.to_str().unwrap(),
                "--m",
                "1000000000",
                "--n",
                "16",
                "--k",
                "16",
            ],
            2,
            "A has 16000000000 elements (1000000000 rows of 16), more than the 32-bit push constants can address",
        );
        s.expect(
            &[
                "ggml-matmul",
                "--shader",
                corpus.to_str().unwrap(),
                "--m",
                "100000000",
                "--n",
                "16",
                "--k",
                "16",
                // A limit of its own: the machine's (half its memory) may be larger than 77 GB.
                "--max-memory",
                "1073741824",
            ],
            2,
            "--m 100000000 --n 16 --k 16: the matrices need 76800006144 bytes, more than the memory limit of 1073741824 bytes",
        );
        // Warm dispatches: each must repeat the first's output; 0 dispatches is refused.
        let shape = ["--m", "64", "--n", "64", "--k", "64"];
        let with = |extra: &[&'static str]| {
            let mut a = vec!["ggml-matmul", "--shader", corpus.to_str().unwrap()];
            a.extend(shape);
            a.extend(extra);
            a
        };
        s.expect(
            &with(&["--repeat", "3"]),
            0,
            "warm dispatches (2, outputs identical to the first): time min",
        );
        s.expect(&with(&["--repeat", "0"]), 2, "--repeat");
        // Quantized A: the reference decodes A's rows from the bytes the engine reads.
        for (module, extra) in [
            ("matmul_quant_f16_cm2.spv", &["--type", "q4_0"][..]),
            ("matmul_q4_k_f16_cm2.spv", &[][..]),
        ] {
            let path = coopmat_testkit_corpus().join(module);
            let mut a = vec!["ggml-matmul", "--shader", path.to_str().unwrap()];
            a.extend(["--m", "48", "--n", "24", "--k", "512"]);
            a.extend(extra);
            s.expect(&a, 0, "max error relative to sum|a*b|");
        }
    } else {
        eprintln!("notice: no corpus (cargo xtask corpus): ggml-matmul's shape limit not checked");
    }
}

/// The corpus directory (`COOPMAT_CORPUS_DIR` or the repository's corpus-cache).
fn coopmat_testkit_corpus() -> PathBuf {
    std::env::var_os("COOPMAT_CORPUS_DIR").map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../corpus-cache/cyllama-vulkan-0.7.0/spv")
        },
        PathBuf::from,
    )
}

/// Class 4: nothing a user feeds makes a command run without end.
#[test]
fn inputs_that_hung_now_end() {
    let s = Scratch::new();
    let iso = s.module("isolation");
    // A directory containing a symbolic link to its own parent: each file is visited once.
    std::fs::create_dir_all(s.path("tree/a")).unwrap();
    std::os::unix::fs::symlink("..", s.path("tree/a/loop")).unwrap();
    std::fs::copy(s.path(&iso), s.path("tree/a/m.spv")).unwrap();
    let r = s.expect(&["info", "tree"], 0, "GLCompute");
    assert_eq!(
        r.text.matches("entry point: GLCompute").count(),
        1,
        "{}",
        r.text
    );
    s.expect(&["val", "tree"], 0, "");
    s.expect(&["amber", "tree"], 0, "0 passed, 0 failed, 0 skipped");
    // An .npy header nested 40 deep (exponential in the crate's parser before).
    let mut header = format!(
        "{{'descr': '<u4', 'fortran_order': False, 'shape': {}{}, }}",
        "(".repeat(40),
        ")".repeat(40)
    );
    header.push_str(&" ".repeat((64 - (10 + header.len() + 1) % 64) % 64));
    header.push('\n');
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    npy.extend((header.len() as u16).to_le_bytes());
    npy.extend(header.as_bytes());
    s.write("nested.npy", &npy);
    s.expect(
        &["run", &iso, "--buffer", "0:0=nested.npy"],
        2,
        "header nested deeper than 8",
    );
    s.expect(
        &["run", &iso, "--threads", "10000"],
        2,
        "10000 is more than 1024",
    );
    // A loop of 10^8 16x16x16 multiply-adds under a budget of 2·10^7 lane-instructions: the
    // budget counts a cooperative op by its work, so this stops at once.
    let mm = s.module("muladd_loop");
    let start = Instant::now();
    s.expect(
        &[
            "run",
            &mm,
            "--buffer",
            "0:0=zeros:1024",
            "--budget",
            "20000000",
        ],
        2,
        "instruction budget of 20000000 lane-instructions exceeded",
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    // Devices are refused rather than read until memory runs out.
    s.expect(
        &["run", "/dev/zero"],
        2,
        "/dev/zero: a device or socket, not a file",
    );
    s.expect(&["dis", "/dev/zero"], 2, "not a file");
}

/// Class 5: results are right or the command fails; nothing is silently truncated, wrapped,
/// ignored or replaced.
#[test]
fn no_silent_wrong_results() {
    let s = Scratch::new();
    let iso = s.module("isolation");
    // 65536 x 65536 workgroups: the count is not wrapped to 0 (the first workgroup runs and
    // its out-of-bounds store is reported).
    let mut args = isolation_args(&iso, "0x0000008000000000");
    args.extend(["--groups", "65536,65536,1"]);
    s.expect(&args, 2, "workgroup (0, 0, 0)");
    // A Fortran-ordered 2x3 .npy is read in C order; a header whose shape disagrees with the
    // data is refused.
    let copy = s.module("copy");
    let npy = |fortran: bool, shape: &str, data: &[u32]| {
        let mut h = format!(
            "{{'descr': '<u4', 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        h.push_str(&" ".repeat((64 - (10 + h.len() + 1) % 64) % 64));
        h.push('\n');
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        f.extend((h.len() as u16).to_le_bytes());
        f.extend(h.as_bytes());
        for v in data {
            f.extend(v.to_le_bytes());
        }
        f
    };
    s.write("f.npy", &npy(true, "(2, 3)", &[1, 4, 2, 5, 3, 6]));
    let out = [
        "run",
        &copy,
        "--buffer",
        "0:0=f.npy",
        "--buffer",
        "0:1=zeros:24",
        "--out",
        "0:1=o.bin",
    ];
    s.expect(&out, 0, "ran 1 workgroups");
    let o = std::fs::read(s.path("o.bin")).unwrap();
    let words: Vec<u32> = o
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words, [1, 2, 3, 4, 5, 6], "C order");
    s.write("f.npy", &npy(false, "(2, 4)", &[1, 2, 3, 4, 5, 6]));
    s.expect(&out, 2, "f.npy: not a usable .npy file");
    // Values wider than their target: a 32-bit specialization constant, a const: word.
    let w = s.module("shared_spec");
    s.expect(
        &[
            "run",
            &w,
            "--buffer",
            "0:0=zeros:128",
            "--spec",
            "0=0x100000000",
        ],
        2,
        "is 32 bits wide; the value 0x100000000 does not fit",
    );
    s.expect(
        &["run", &w, "--buffer", "0:0=const:128:0x100000000"],
        2,
        "0x100000000 does not fit in 32 bits",
    );
    // Exactly three workgroup counts; one --buffer per binding.
    s.expect(
        &["run", &w, "--groups", "1,1"],
        2,
        "expected X,Y,Z (three counts), got 2",
    );
    s.expect(&["run", &w, "--groups", "1,1,1,1"], 2, "got 4");
    s.expect(
        &[
            "run",
            &w,
            "--buffer",
            "0:0=zeros:128",
            "--buffer",
            "0:0=zeros:128",
        ],
        2,
        "binding 0:0 is given twice",
    );
    // Amber: a NaN tolerance, a broken shader no pipeline uses, a missing data file.
    s.write(
        "nan.amber",
        b"#!amber\nBUFFER a DATA_TYPE float DATA 1.0 END\nEXPECT a IDX 0 TOLERANCE nan EQ 2.0\n",
    );
    s.expect(
        &["amber", "nan.amber"],
        1,
        "TOLERANCE NaN is not a finite, non-negative number",
    );
    s.write(
        "broken.amber",
        b"#!amber\nSHADER compute unused SPIRV-ASM\nOpCapability Shader\nOpNotAnInstruction\nEND\nBUFFER a DATA_TYPE uint32 DATA 1 END\nEXPECT a IDX 0 EQ 1\n",
    );
    s.expect(
        &["amber", "broken.amber"],
        1,
        "FAIL broken.amber: line 2: shader unused",
    );
    s.write(
        "missing.amber",
        b"#!amber\nBUFFER a DATA_TYPE uint32 SIZE 4 FILE TEXT absent.txt\nEXPECT a IDX 0 EQ 1\n",
    );
    s.expect(
        &["amber", "missing.amber"],
        1,
        "absent.txt: No such file or directory",
    );
}

/// Class 6: errors say what is wrong and where: the option, the path, the instruction.
#[test]
fn errors_name_the_option_the_path_and_the_place() {
    let s = Scratch::new();
    let iso = s.module("isolation");
    // An out-of-bounds index is reported as such, with the instruction and invocation.
    s.expect(
        &isolation_args(&iso, "0x0200000000000000"),
        2,
        "out-of-bounds access (4 bytes at address 0x20000000400: object 2, offset 1024) (at OpStore in function main, workgroup (0, 0, 0), local invocation (0, 0, 0))",
    );
    s.expect(
        &["run", &iso, "--push", "nofile"],
        2,
        "--push \"nofile\" (a file; hex bytes start with 0x): reading nofile: No such file or directory",
    );
    s.expect(
        &["run", &iso, "--spec", "x=1"],
        2,
        "--spec \"x=1\": the id \"x\"",
    );
    s.expect(
        &["run", &iso, "--buffer", "0:0=const:64:0x100000000"],
        2,
        "--buffer \"0:0=const:64:0x100000000\": the word",
    );
    s.expect(
        &["val", "no-such-module.spv"],
        2,
        "no-such-module.spv: No such file or directory",
    );
    s.expect(
        &["run", &iso, "--entry", ""],
        2,
        "an entry point name cannot be empty",
    );
    let mut args = isolation_args(&iso, "0x0000000000000000");
    args.extend(["--entry", "nowhere"]);
    s.expect(&args, 2, "no GLCompute entry point named \"nowhere\"");
    // Standard input is read like a file (bounded) and its errors name it.
    let mut child = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .args(["dis", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&[0xAB; 1 << 16])
        .unwrap();
    let out = child.wait_with_output().unwrap();
    // As spirv-dis: a module that does not parse is exit status 1, with the place.
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("<stdin>: word 0: invalid magic number 0xabababab"),
        "{err}"
    );
}
