//! Assembler syntax corner cases, each compared with `spirv-as` (success or failure, and the
//! words when both succeed), error places and rendering, and robustness on arbitrary input.

use coopmat_spirv::asm::{AsmOptions, TargetEnv, assemble, assemble_bytes};
use proptest::prelude::*;
use std::process::Command;

/// Inputs whose handling by `spirv-as` is easy to get wrong.
const CASES: &[&str] = &[
    "OpCapability Shader OpMemoryModel Logical GLSL450",
    "OpCapability 1",
    "OpCapability !1",
    "OpMemoryModel Logical,GLSL450",
    "!0x00020011 !1",
    "!0x00030011 %a \"abc\" OpNop",
    "OpName %a \"a\\\"b\\\\c\\d\"",
    "OpName %a \"a\"b\"c\"",
    "OpName %a abc",
    "OpName %a 123",
    "%a=OpTypeVoid",
    "%a = OpNop",
    "OpTypeVoid",
    "OpLoopMerge %a %b Unroll|DontUnroll",
    "OpLoopMerge %a %b Unroll | DontUnroll",
    "OpLoopMerge %a %b MinIterations|DependencyLength 3 4",
    "OpLoopMerge %a %b 3",
    "OpStore %a %b Aligned 4 OpNop",
    "OpStore %a %b !2 4",
    "OpStore %a !2 %b 4 \"x\" -1 1.1",
    "OpStore %a !2 0x10",
    "OpStore %a %b Opx",
    "OpStore %a %b Volatile %c = OpUndef %b",
    "OpStore %a OpNop",
    "OpEntryPoint GLCompute %main \"main\" %a Opx",
    "OpDecorate %a Location 010",
    "OpDecorate %a Location -1",
    "%x = OpPhi %t %a",
    "OpGroupMemberDecorate %a %b",
    "%a.b = OpTypeVoid",
    "%0x3 = OpTypeVoid\n%a = OpTypeVoid",
    "%05 = OpTypeVoid\n%5 = OpTypeVoid\n%x = OpTypeVoid",
    "%4294967294 = OpTypeVoid",
    "%0 = OpTypeVoid",
    "; comment %3\nOpName %b \"%2\"\n%a = OpTypeVoid\n%2 = OpTypeVoid",
    "%t = OpTypeInt 16 1\n%c = OpConstant %t 0x8000",
    "%t = OpTypeInt 16 1\n%c = OpConstant %t -0x8001",
    "%t = OpTypeInt 64 1\n%c = OpConstant %t 9223372036854775808",
    "%t = OpTypeInt 8 0\n%c = OpConstant %t 08",
    "%t = OpTypeFloat 32\n%c = OpConstant %t 0x1.ffffff8p+0",
    "%t = OpTypeFloat 32\n%c = OpConstant %t 0x1P+2",
    "%t = OpTypeFloat 32\n%c = OpConstant %t 1e40",
    "%t = OpTypeFloat 32\n%c = OpConstant %t +1.5",
    "%t = OpTypeFloat 16\n%c = OpConstant %t 65520",
    "%t = OpTypeFloat 16\n%c = OpConstant %t 70000",
    "%t = OpTypeFloat 8 Float8E4M3EXT\n%c = OpConstant %t 300",
    "%t = OpTypeFloat 8 Float8E4M3EXT\n%c = OpConstant %t 1.4e-45",
    "%t = OpTypeFloat 32 BFloat16KHR",
    "%t = OpTypeFloat 6 Float6E2M3EXT\n%c = OpConstant %t 0x1.8p-1\n%d = OpConstant %t 4",
    "%t = OpTypeFloat 6 Float6E3M2EXT\n%c = OpConstant %t -0x1.8p-3\n%d = OpConstant %t 29",
    "%t = OpTypeFloat 4 Float4E2M1EXT\n%c = OpConstant %t 0x1p-1\n%d = OpConstant %t 5.9",
    "%t = OpTypeFloat 8 Float8UnsignedE8M0EXT\n%c = OpConstant %t 1.17549435e-38",
    "%t = OpTypeFloat 8 MXInt8EXT\n%c = OpConstant %t -1.984375\n%d = OpConstant %t -2",
    "%t = OpTypeFloat 24\n%c = OpConstant %t 1",
    "%t = OpTypeFloat 32\n%t = OpTypeFloat 64",
    "%v = OpTypeVoid\n%c = OpConstant %v 1",
    "%u = OpTypeInt 32 0\n%a = OpConstant %u 3\nOpSwitch %a %b -1 %c",
    "%u = OpTypeInt 64 0\n%a = OpUndef %u\nOpSwitch %a %b 0x100000000 %c",
    "%g = OpExtInstImport \"GLSL.std.450\"\n%x = OpExtInst %f %g 46 %a %b %c",
    "%g = OpExtInstImport \"GLSL.std.450\"\n%x = OpExtInst %f %g FMix %a %b %c",
    "%g = OpExtInstImport \"NonSemantic.Foo\"\n%x = OpExtInst %f %g 3 %a %b",
    "%g = OpExtInstImport \"NonSemantic.Foo\"\n%x = OpExtInst %f %g 3 %a 5",
    "%g = OpExtInstImport \"Foo.bar\"",
    "%u = OpTypeInt 32 0\n%x = OpSpecConstantOp %u IAdd %a %b",
    "%u = OpTypeInt 32 0\n%x = OpSpecConstantOp %u Load %a",
    "%x = OpCooperativeMatrixReduceNV %a %b Row|Column %c",
    "OpCapability CooperativeMatrixReductionsNV",
    "; Version: 1.3\nOpCapability Shader",
    "; Version: 1.03\n; Version: 1.2\nOpCapability Shader",
    "OpCapability Shader\n; Version: 1.3",
    "OpNop\u{0}OpNop",
];

fn spirv_as(text: impl AsRef<[u8]>, flags: &[&str]) -> Option<Option<Vec<u32>>> {
    let tool = coopmat_testkit::peer_tool("spirv-as")?;
    let dir = coopmat_testkit::scratch_dir("asm-syntax");
    let (src, dst) = (dir.path().join("t.spvasm"), dir.path().join("t.spv"));
    std::fs::write(&src, text.as_ref()).unwrap();
    let out = Command::new(tool)
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&dst)
        .output()
        .unwrap();
    if !out.status.success() {
        return Some(None);
    }
    let bytes = std::fs::read(&dst).unwrap();
    Some(Some(
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    ))
}

#[test]
fn corner_cases_match_spirv_as() {
    if coopmat_testkit::peer_tool("spirv-as").is_none() {
        eprintln!("corner_cases_match_spirv_as: skipping, spirv-as not found");
        return;
    }
    let sets: [(&[&str], AsmOptions); 2] = [
        (&[], AsmOptions::default()),
        (
            &["--preserve-numeric-ids"],
            AsmOptions {
                preserve_numeric_ids: true,
                ..AsmOptions::default()
            },
        ),
    ];
    for case in CASES {
        for (flags, options) in &sets {
            let theirs = spirv_as(case, flags).unwrap();
            let ours = assemble(case, options);
            match (&ours, &theirs) {
                (Ok(a), Some(b)) => assert_eq!(a, b, "{case:?} {flags:?}"),
                (Err(_), None) => {}
                (Ok(_), None) => {
                    panic!("{case:?} {flags:?}: spirv-as rejects it, coopmat accepts it")
                }
                (Err(e), Some(_)) => {
                    panic!("{case:?} {flags:?}: spirv-as accepts it, coopmat says {e}")
                }
            }
        }
    }
}

#[test]
fn target_envs_match_spirv_as() {
    if coopmat_testkit::peer_tool("spirv-as").is_none() {
        eprintln!("target_envs_match_spirv_as: skipping, spirv-as not found");
        return;
    }
    let text = "; Version: 1.2\nOpCapability Shader";
    for name in TargetEnv::names() {
        let theirs = spirv_as(text, &["--target-env", name]).unwrap().unwrap();
        let ours = assemble(
            text,
            &AsmOptions {
                target_env: TargetEnv::from_name(name),
                ..AsmOptions::default()
            },
        );
        assert_eq!(ours.unwrap(), theirs, "{name}");
    }
}

#[test]
fn bytes_that_are_not_utf8_go_into_strings_as_they_are() {
    let text: &[u8] = b"OpName %a \"\xff\xfe \\\xc3\"\nOpName %b \xff\n";
    let ours = assemble_bytes(&text[..text.len() - 13], &AsmOptions::default()).unwrap();
    assert!(assemble_bytes(text, &AsmOptions::default()).is_err());
    if let Some(theirs) = spirv_as(&text[..text.len() - 13], &[]) {
        assert_eq!(Some(ours), theirs);
        assert_eq!(spirv_as(text, &[]).unwrap(), None);
    }
}

#[test]
fn errors_name_line_and_column() {
    let text = "OpCapability Shader\n  OpMemoryModel Logical Foo\n";
    let e = assemble(text, &AsmOptions::default()).unwrap_err();
    assert_eq!((e.line, e.column), (2, 25));
    assert_eq!(
        e.render("x.spvasm", text),
        format!(
            "x.spvasm:2:25: error: {}\n  OpMemoryModel Logical Foo\n                        ^\n",
            e.message
        )
    );
    // At the end of the text.
    let e = assemble("OpName %a", &AsmOptions::default()).unwrap_err();
    assert_eq!((e.line, e.column), (1, 10));
    // Columns count characters, not bytes.
    let e = assemble("OpName %é \"x\"", &AsmOptions::default()).unwrap_err();
    assert_eq!((e.line, e.column), (1, 8));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
        let _ = assemble(&text, &AsmOptions::default());
        let _ = assemble(&text, &AsmOptions { preserve_numeric_ids: true, ..AsmOptions::default() });
    }

    #[test]
    fn never_panics_on_token_soup(words in proptest::collection::vec(prop_oneof![
        Just("OpCapability"), Just("Shader"), Just("%a"), Just("%1"), Just("="), Just("OpTypeInt"),
        Just("OpTypeFloat"), Just("OpConstant"), Just("OpSwitch"), Just("OpExtInst"), Just("OpExtInstImport"),
        Just("\"GLSL.std.450\""), Just("\"NonSemantic.X\""), Just("FMix"), Just("16"), Just("-1"), Just("0x1p+3"),
        Just("!3"), Just("!"), Just("Aligned|Volatile"), Just("|"), Just("OpStore"), Just("OpSpecConstantOp"),
        Just("IAdd"), Just("OpCooperativeMatrixLoadTensorNV"), Just("TensorView|DecodeFunc"), Just("\"s\\\"\""),
        Just("BFloat16KHR"), Just("Float8E4M3EXT"), Just("8"), Just("32"), Just("64"), Just("1.5"), Just(";"),
        Just("\n"), Just(","), Just("%4294967295"), Just("OpPhi"), Just("OpDecorate"), Just("SpecId"),
    ], 0..40)) {
        let text = words.join(" ");
        let _ = assemble(&text, &AsmOptions::default());
        let _ = assemble(&text, &AsmOptions { preserve_numeric_ids: true, ..AsmOptions::default() });
    }
}

/// A small deterministic generator (xorshift) for literal spellings.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn hex_float(r: &mut Rng) -> String {
    let mut s = String::from(r.pick(&["", "-"]));
    s += r.pick(&["0x", "0X"]);
    for _ in 0..r.below(3) {
        s += r.pick(&["0", "1", "3", "8", "a", "F", "c"]);
    }
    if r.below(5) > 0 {
        s.push('.');
        for _ in 0..r.below(18) {
            s += r.pick(&["0", "1", "7", "8", "9", "b", "E", "f", "0"]);
        }
    }
    s += r.pick(&["p", "p", "p", "P", ""]);
    s += r.pick(&["", "+", "-", "-"]);
    s += r.pick(&[
        "0", "1", "2", "3", "7", "8", "9", "14", "15", "16", "17", "24", "25", "126", "127", "128",
        "129", "149", "150", "1022", "1023", "1024", "1074", "1075", "40000", "99999",
    ]);
    s
}

fn decimal(r: &mut Rng) -> String {
    let sign = r.pick(&["", "-", "+"]);
    let body = r.pick(&[
        "0",
        "1",
        "1.5",
        "0.1",
        "3",
        "7.5",
        "8",
        "28",
        "6",
        "4",
        "0.5",
        "0.125",
        "448",
        "449",
        "256",
        "240",
        "57344",
        "61440",
        "65504",
        "65520",
        "65536",
        "100000",
        "6e-8",
        "1e-8",
        "1e-40",
        "1e-45",
        "7e-46",
        "3.4028235e38",
        "3.4028236e38",
        "1.17549435e-38",
        "2.2250738585072014e-308",
        "4.9e-324",
        "1e308",
        "1.7976931348623159e308",
        "0.0019",
        "0.003",
        "1.984375",
        "2",
        "0.015625",
        ".5",
        "5.",
        "1e",
        "e5",
        "1E5",
        "inf",
        "nan",
        "1..2",
        "0x1p3",
    ]);
    format!("{sign}{body}")
}

fn integer(r: &mut Rng) -> String {
    let sign = r.pick(&["", "-", "+", ""]);
    let body = r.pick(&[
        "0",
        "1",
        "010",
        "08",
        "0x",
        "0xff",
        "0x80",
        "0x7f",
        "0x8000",
        "0xffff",
        "0x10000",
        "0x7fffffff",
        "0x80000000",
        "0xffffffff",
        "0x100000000",
        "0x8000000000000000",
        "0xffffffffffffffff",
        "127",
        "128",
        "255",
        "256",
        "32767",
        "32768",
        "65535",
        "65536",
        "2147483647",
        "2147483648",
        "4294967295",
        "4294967296",
        "9223372036854775807",
        "9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
        "1.0",
        "1e3",
    ]);
    format!("{sign}{body}")
}

#[test]
fn typed_literals_match_spirv_as() {
    if coopmat_testkit::peer_tool("spirv-as").is_none() {
        eprintln!("typed_literals_match_spirv_as: skipping, spirv-as not found");
        return;
    }
    let types = [
        "OpTypeFloat 16",
        "OpTypeFloat 32",
        "OpTypeFloat 64",
        "OpTypeFloat 16 BFloat16KHR",
        "OpTypeFloat 8 Float8E4M3EXT",
        "OpTypeFloat 8 Float8E5M2EXT",
        "OpTypeFloat 6 Float6E2M3EXT",
        "OpTypeFloat 6 Float6E3M2EXT",
        "OpTypeFloat 4 Float4E2M1EXT",
        "OpTypeFloat 8 Float8UnsignedE8M0EXT",
        "OpTypeFloat 8 MXInt8EXT",
        "OpTypeInt 8 1",
        "OpTypeInt 8 0",
        "OpTypeInt 16 1",
        "OpTypeInt 32 1",
        "OpTypeInt 32 0",
        "OpTypeInt 64 1",
        "OpTypeInt 64 0",
    ];
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    for _ in 0..400 {
        let ty = types[r.below(types.len())];
        let value = if ty.starts_with("OpTypeInt") {
            integer(&mut r)
        } else if r.below(3) == 0 {
            decimal(&mut r)
        } else {
            hex_float(&mut r)
        };
        let text =
            format!("%t = {ty}\n%c = OpConstant %t {value}\n%s = OpSpecConstant %t {value}\n");
        let theirs = spirv_as(&text, &[]).unwrap();
        let ours = assemble(&text, &AsmOptions::default()).ok();
        assert_eq!(ours, theirs, "{ty} {value}");
        checked += 1;
    }
    eprintln!("{checked} typed literals identical to spirv-as");
}
