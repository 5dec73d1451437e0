//! The disassembler against `spirv-dis` on hand-written and generated modules: friendly names,
//! number formatting, strings, enumerants, headers and every option combination.
//!
//! Expectations are produced at test time by the peer `spirv-dis` (SPIRV-Tools); without it the
//! tests print a notice and pass.

use coopmat_spirv::binary::{self, encode_string};
use coopmat_spirv::dis::{self, Options};
use coopmat_spirv::grammar::{capability, fp_encoding, op};
use std::path::{Path, PathBuf};

fn tool(name: &str, test: &str) -> Option<PathBuf> {
    let t = coopmat_testkit::peer_tool(name);
    if t.is_none() {
        eprintln!("{test}: skipping, peer tool {name} not found");
    }
    t
}

/// Runs a peer tool with `input` on stdin; returns stdout (panics on failure: the inputs here
/// are valid).
fn run(tool: &Path, args: &[&str], input: &[u8]) -> Vec<u8> {
    coopmat_testkit::run_tool(tool, args, input)
}

fn assemble(spirv_as: &Path, text: &str) -> Vec<u8> {
    run(
        spirv_as,
        &["--target-env", "spv1.6", "-o", "-", "-"],
        text.as_bytes(),
    )
}

fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The options a list of spirv-dis flags stands for.
fn options(flags: &[&str]) -> Options {
    let mut o = Options::default();
    for f in flags {
        assert!(o.set_spirv_dis_flag(f), "unknown flag {f}");
    }
    o
}

/// Compares our text with spirv-dis for a binary and flag set; on mismatch, reports the first
/// differing line.
fn compare(spirv_dis: &Path, bytes: &[u8], flags: &[&str]) {
    let mut args: Vec<&str> = flags.to_vec();
    args.push("-");
    let expected = run(spirv_dis, &args, bytes);
    let parsed = binary::parse_bytes(bytes).expect("parse");
    let mut ours = Vec::new();
    dis::disassemble_into(&parsed, &options(flags), &mut ours);
    if ours != expected {
        let e = String::from_utf8_lossy(&expected);
        let o = String::from_utf8_lossy(&ours);
        for (k, (a, b)) in e.lines().zip(o.lines()).enumerate() {
            assert_eq!(b, a, "line {} differs (flags {flags:?})", k + 1);
        }
        assert_eq!(
            o.lines().count(),
            e.lines().count(),
            "line counts differ (flags {flags:?})"
        );
        panic!("outputs differ (flags {flags:?})");
    }
}

const NAMES: &str = r#"
OpCapability Shader
OpCapability Kernel
OpCapability Float16
OpCapability Float64
OpCapability Int64
OpCapability Int16
OpCapability Int8
OpCapability CooperativeMatrixKHR
OpCapability PhysicalStorageBufferAddresses
OpCapability Pipes
OpCapability DeviceEnqueue
OpCapability PipeStorage
OpCapability NamedBarrier
OpCapability UntypedPointersKHR
OpCapability CooperativeMatrixNV
OpCapability TensorAddressingNV
OpExtension "SPV_KHR_cooperative_matrix"
%glsl = OpExtInstImport "GLSL.std.450"
OpMemoryModel PhysicalStorageBuffer64 GLSL450
OpEntryPoint GLCompute %main "main" %gid %lid
OpExecutionMode %main LocalSize 64 1 1
OpName %main "ma in.x"
OpName %s "S"
OpName %s2 "S"
OpName %s3 "S_0"
OpName %u8 "12"
OpName %e "é"
OpName %empty ""
OpName %lid "first"
OpName %lid "second"
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %lid BuiltIn LocalInvocationId
OpDecorate %wgs BuiltIn WorkgroupSize
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u8 = OpTypeInt 8 0
%i8 = OpTypeInt 8 1
%u16 = OpTypeInt 16 0
%i16 = OpTypeInt 16 1
%u32 = OpTypeInt 32 0
%i32 = OpTypeInt 32 1
%u64 = OpTypeInt 64 0
%i64 = OpTypeInt 64 1
%f16 = OpTypeFloat 16
%f32 = OpTypeFloat 32
%f64 = OpTypeFloat 64
%bool = OpTypeBool
%v3u = OpTypeVector %u32 3
%v4h = OpTypeVector %f16 4
%m4 = OpTypeMatrix %v4h 4
%c2 = OpConstant %u32 2
%c16 = OpConstant %u32 16
%c3 = OpConstant %u32 3
%wgs = OpConstantComposite %v3u %c16 %c2 %c2
%arr = OpTypeArray %u32 %c2
%arr2 = OpTypeArray %arr %c16
%rt = OpTypeRuntimeArray %v4h
%rt2 = OpTypeRuntimeArray %v4h
%s = OpTypeStruct %rt
%s2 = OpTypeStruct %u32
%s3 = OpTypeStruct %u32
%s4 = OpTypeStruct %u32
%e = OpTypeStruct %f32
%empty = OpTypeStruct %i32
%fwd = OpTypePointer PhysicalStorageBuffer %later
%later = OpTypeStruct %u32 %fwd
%ps = OpTypePointer PhysicalStorageBuffer %s
%pw = OpTypePointer Workgroup %arr2
%pin = OpTypePointer Input %v3u
%gid = OpVariable %pin Input
%lid = OpVariable %pin Input
%cm = OpTypeCooperativeMatrixKHR %f16 %c3 %c16 %c16 %c2
%cmnv = OpTypeCooperativeMatrixNV %f32 %c3 %c16 %c16
%tl = OpTypeTensorLayoutNV %c2 %c2
%op = OpTypeOpaque "my.opaque"
%ev = OpTypeEvent
%dev = OpTypeDeviceEvent
%rid = OpTypeReserveId
%q = OpTypeQueue
%pipe = OpTypePipe ReadOnly
%pst = OpTypePipeStorage
%nb = OpTypeNamedBarrier
%up = OpTypeUntypedPointerKHR Workgroup
%t = OpConstantTrue %bool
%fa = OpConstantFalse %bool
%n = OpConstantNull %u32
%sp = OpSpecConstant %u32 7
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
"#;

#[test]
fn friendly_names_match_spirv_dis() {
    let (Some(sa), Some(sd)) = (
        tool("spirv-as", "friendly_names"),
        tool("spirv-dis", "friendly_names"),
    ) else {
        return;
    };
    let bytes = assemble(&sa, NAMES);
    compare(&sd, &bytes, &[]);
    compare(&sd, &bytes, &["--raw-id"]);
    compare(&sd, &bytes, &["--comment"]);
}

/// A small deterministic generator (xorshift) for bit patterns.
struct Bits(u64);
impl Bits {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Builds a module with one float type per encoding and many constants of each, from raw bits
/// (random patterns plus the edge cases: zeros, subnormals, infinities, NaNs, extremes).
fn number_module() -> Vec<u32> {
    let mut w = vec![binary::MAGIC, 0x0001_0600, 0, 0, 0];
    let mut next_id = 1u32;
    let mut id = || {
        let i = next_id;
        next_id += 1;
        i
    };
    let inst = |w: &mut Vec<u32>, opcode: u16, operands: &[u32]| {
        w.push(((operands.len() as u32 + 1) << 16) | opcode as u32);
        w.extend_from_slice(operands);
    };
    for cap in [
        capability::Shader,
        capability::Float16,
        capability::Float64,
        capability::Int64,
        capability::Int16,
        capability::Int8,
        capability::BFloat16TypeKHR,
        capability::Float8EXT,
    ] {
        inst(&mut w, op::Capability, &[cap]);
    }
    inst(&mut w, op::MemoryModel, &[0, 1]);
    let mut rng = Bits(0x9e37_79b9_7f4a_7c15);
    // (width, encoding, signedness for ints) and the edge-case bit patterns of each type.
    let ints: [(u32, u32); 6] = [(8, 0), (16, 1), (32, 0), (32, 1), (64, 0), (64, 1)];
    for (width, signed) in ints {
        let t = id();
        inst(&mut w, op::TypeInt, &[t, width, signed]);
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        let mut values = vec![0u64, 1, mask, mask >> 1, (mask >> 1) + 1];
        values.extend((0..40).map(|_| rng.next() >> (rng.next() % 64)));
        for v in values {
            let mut v = v & mask;
            if signed == 1 && width < 64 && v >> (width - 1) & 1 == 1 {
                v |= !mask; // sign-extend, as the spec requires
            }
            let c = id();
            if width == 64 {
                inst(&mut w, op::Constant, &[t, c, v as u32, (v >> 32) as u32]);
            } else {
                inst(&mut w, op::Constant, &[t, c, v as u32]);
            }
        }
    }
    let floats: [(u32, Option<u32>); 11] = [
        (16, None),
        (32, None),
        (64, None),
        (16, Some(fp_encoding::BFloat16KHR)),
        (8, Some(fp_encoding::Float8E4M3EXT)),
        (8, Some(fp_encoding::Float8E5M2EXT)),
        (8, Some(fp_encoding::Float8UnsignedE8M0EXT)),
        (8, Some(fp_encoding::MXInt8EXT)),
        (6, Some(fp_encoding::Float6E2M3EXT)),
        (6, Some(fp_encoding::Float6E3M2EXT)),
        (4, Some(fp_encoding::Float4E2M1EXT)),
    ];
    for (width, enc) in floats {
        let t = id();
        match enc {
            Some(e) => inst(&mut w, op::TypeFloat, &[t, width, e]),
            None => inst(&mut w, op::TypeFloat, &[t, width]),
        }
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        let mut values: Vec<u64> = match width {
            // Every pattern of the small formats.
            4..=8 => (0..=mask).collect(),
            16 => vec![
                0, 0x8000, 1, 0x3ff, 0x400, 0x3c00, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x3555,
            ],
            32 => vec![
                0,
                0x8000_0000,
                1,
                0x007f_ffff,
                0x0080_0000,
                0x3f80_0000,
                0x3dcc_cccd,
                0x7f7f_ffff,
                0x7f80_0000,
                0xff80_0000,
                0x7fc0_0000,
                0x7f80_0001,
                0x4b80_0000,
                0x4e6e_6b28,
                0x3851_b717,
                0x4980_0001,
            ],
            _ => vec![
                0,
                1 << 63,
                1,
                0x000f_ffff_ffff_ffff,
                0x0010_0000_0000_0000,
                0x3ff0_0000_0000_0000,
                0x3fb9_9999_9999_999a,
                0x7fef_ffff_ffff_ffff,
                0x7ff0_0000_0000_0000,
                0x7ff8_0000_0000_0000,
                0x4415_af1d_78b5_8c40,
            ],
        };
        if width >= 16 {
            values.extend((0..300).map(|_| rng.next()));
        }
        for v in values {
            let v = v & mask;
            let c = id();
            if width == 64 {
                inst(&mut w, op::Constant, &[t, c, v as u32, (v >> 32) as u32]);
            } else {
                inst(&mut w, op::Constant, &[t, c, v as u32]);
            }
        }
    }
    w[3] = next_id;
    w
}

#[test]
fn numbers_match_spirv_dis() {
    let Some(sd) = tool("spirv-dis", "numbers") else {
        return;
    };
    let bytes = words_to_bytes(&number_module());
    compare(&sd, &bytes, &[]);
    compare(&sd, &bytes, &["--raw-id"]);
}

const CONTROL: &str = r#"
OpCapability Shader
OpCapability Int64
OpCapability Float16
%glsl = OpExtInstImport "GLSL.std.450"
%ns = OpExtInstImport "NonSemantic.Unknown.Thing"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "ma\"i\\n" %gid
OpExecutionMode %main LocalSize 8 8 1
OpSource GLSL 450 %file "void main() {\n  \"x\" \\ y\n}\n"
%file = OpString "dir/fi le.comp"
OpSourceExtension "GL_EXT_x"
OpName %main "main"
OpName %acc "acc"
OpMemberName %blk 0 "data"
OpModuleProcessed "client vulkan100"
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %blk Block
OpMemberDecorate %blk 0 Offset 0
OpDecorate %rt ArrayStride 4
OpDecorate %buf DescriptorSet 0
OpDecorate %buf Binding 1
OpDecorate %buf NonWritable
OpDecorate %sum NoContraction
OpDecorate %spec SpecId 3
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%i32 = OpTypeInt 32 1
%i64 = OpTypeInt 64 1
%f32 = OpTypeFloat 32
%f16 = OpTypeFloat 16
%bool = OpTypeBool
%v3u = OpTypeVector %u32 3
%pin = OpTypePointer Input %v3u
%gid = OpVariable %pin Input
%rt = OpTypeRuntimeArray %f32
%blk = OpTypeStruct %rt
%pbuf = OpTypePointer StorageBuffer %blk
%buf = OpVariable %pbuf StorageBuffer
%pf = OpTypePointer Function %f32
%psf = OpTypePointer StorageBuffer %f32
%c0 = OpConstant %u32 0
%c1 = OpConstant %u32 1
%i0 = OpConstant %i32 0
%cn = OpConstant %i32 -7
%l64 = OpConstant %i64 -5000000000
%f1 = OpConstant %f32 1.5
%h1 = OpConstant %f16 -0.5
%spec = OpSpecConstant %u32 4
%sop = OpSpecConstantOp %u32 IAdd %spec %c1
%sop2 = OpSpecConstantOp %bool ULessThan %spec %c1
%main = OpFunction %void Inline|Pure %fn
%entry = OpLabel
%acc = OpVariable %pf Function
OpStore %acc %f1 Volatile|Aligned 4
%id = OpLoad %v3u %gid
%x = OpCompositeExtract %u32 %id 0
OpBranch %header
%header = OpLabel
%i = OpPhi %u32 %c0 %entry %inext %cont
%cond = OpULessThan %bool %i %sop
OpLoopMerge %exit %cont Unroll|DependencyLength 4
OpBranchConditional %cond %body %exit
%body = OpLabel
%xi = OpBitcast %i32 %x
OpSelectionMerge %sw_merge None
OpSwitch %xi %default 1 %case1 -2 %case2 3 %case1
%case2 = OpLabel
OpBranch %sw_merge
%default = OpLabel
%big = OpSConvert %i64 %xi
OpSelectionMerge %inner None
OpSwitch %big %inner -5000000000 %case64
%case64 = OpLabel
OpBranch %inner
%inner = OpLabel
OpBranch %sw_merge
%case1 = OpLabel
%p = OpAccessChain %psf %buf %i0 %x
%v = OpLoad %f32 %p Aligned 4
%s = OpExtInst %f32 %glsl Sqrt %v
%sum = OpFAdd %f32 %s %v
%dbg = OpExtInst %void %ns 17 %sum %x
OpStore %acc %sum MakePointerAvailable|NonPrivatePointer %c1
%brk = OpFOrdLessThan %bool %sum %f1
OpSelectionMerge %if_merge None
OpBranchConditional %brk %if_true %if_merge
%if_true = OpLabel
OpBranch %exit
%if_merge = OpLabel
OpBranch %sw_merge
%sw_merge = OpLabel
OpBranch %cont
%cont = OpLabel
%inext = OpIAdd %u32 %i %c1
OpBranch %header
%exit = OpLabel
OpReturn
OpFunctionEnd
"#;

#[test]
fn strings_enums_and_control_flow_match_spirv_dis() {
    let (Some(sa), Some(sd)) = (tool("spirv-as", "control"), tool("spirv-dis", "control")) else {
        return;
    };
    let bytes = assemble(&sa, CONTROL);
    compare(&sd, &bytes, &[]);
    compare(&sd, &bytes, &["--raw-id"]);
}

#[test]
fn every_option_combination_matches_spirv_dis() {
    let (Some(sa), Some(sd)) = (tool("spirv-as", "options"), tool("spirv-dis", "options")) else {
        return;
    };
    let bytes = assemble(&sa, CONTROL);
    let flags = [
        "--no-header",
        "--no-indent",
        "--raw-id",
        "--offsets",
        "--color",
        "--comment",
        "--nested-indent",
        "--reorder-blocks",
    ];
    for mask in 0u32..(1 << flags.len()) {
        let set: Vec<&str> = flags
            .iter()
            .enumerate()
            .filter(|(k, _)| mask >> k & 1 == 1)
            .map(|(_, f)| *f)
            .collect();
        compare(&sd, &bytes, &set);
    }
}

#[test]
fn headers_match_spirv_dis() {
    let Some(sd) = tool("spirv-dis", "headers") else {
        return;
    };
    let mut tools: Vec<u32> = (0..64).collect();
    tools.extend([0x100, 0xffff]);
    for t in tools {
        for (version, misc, bound, schema) in
            [(0x0001_0000, 7, 1, 0), (0x0001_0600, 0xffff, 0x40_0000, 0)]
        {
            let words = [binary::MAGIC, version, (t << 16) | misc, bound, schema];
            compare(&sd, &words_to_bytes(&words), &[]);
        }
    }
    // Big-endian input disassembles the same.
    let mut w = vec![binary::MAGIC, 0x0001_0300, 8 << 16 | 11, 2, 0];
    w.extend([2 << 16 | op::Capability as u32, capability::Shader]);
    let mut s = Vec::new();
    encode_string("x", &mut s);
    let be: Vec<u8> = w.iter().flat_map(|x| x.to_be_bytes()).collect();
    compare(&sd, &be, &[]);
}

#[test]
fn unknown_opcodes_match_spirv_dis() {
    let Some(sd) = tool("spirv-dis", "unknown_opcodes") else {
        return;
    };
    let words = [
        binary::MAGIC,
        0x0001_0000,
        0,
        5,
        0,
        2 << 16 | op::Capability as u32,
        capability::Shader,
        4 << 16 | 0xfff0,
        7,
        8,
        9,
        1 << 16 | 0xfff1,
    ];
    let bytes = words_to_bytes(&words);
    compare(&sd, &bytes, &["--handle-unknown-opcodes"]);
    compare(
        &sd,
        &bytes,
        &["--handle-unknown-opcodes", "--raw-id", "--no-indent"],
    );
}

#[test]
fn disassemble_returns_the_same_text_as_disassemble_into() {
    let bytes = words_to_bytes(&number_module());
    let parsed = binary::parse_bytes(&bytes).unwrap();
    let mut v = Vec::new();
    dis::disassemble_into(&parsed, &Options::default(), &mut v);
    assert_eq!(
        dis::disassemble(&parsed, &Options::default()).as_bytes(),
        &v[..]
    );
}

/// Randomly mutated modules either fail to parse (with an error) or disassemble without
/// panicking, in every mode.
#[test]
fn mutated_modules_never_panic() {
    let mut bases = vec![number_module()];
    if let Some(sa) = coopmat_testkit::peer_tool("spirv-as") {
        let bytes = assemble(&sa, CONTROL);
        bases.push(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        );
    }
    let mut rng = Bits(0x1234_5678_9abc_def1);
    let modes = [
        Options::default(),
        Options {
            raw_id: true,
            offsets: true,
            comment: true,
            color: true,
            ..Options::default()
        },
        Options {
            nested_indent: true,
            reorder_blocks: true,
            comment: true,
            ..Options::default()
        },
    ];
    let mut parsed_ok = 0;
    // COOPMAT_DIS_FUZZ_ITERS scales this up for a longer run.
    let iters: usize = std::env::var("COOPMAT_DIS_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    for k in 0..iters {
        let mut w = bases[k % bases.len()].clone();
        for _ in 0..1 + rng.next() % 4 {
            let i = 5 + (rng.next() as usize) % (w.len() - 5);
            w[i] = match rng.next() % 4 {
                0 => rng.next() as u32,
                1 => w[i] ^ (1 << (rng.next() % 32)),
                2 => (rng.next() % 64) as u32,
                _ => w[i].wrapping_add(1),
            };
        }
        if let Ok(p) = binary::parse_words(&w) {
            parsed_ok += 1;
            for o in &modes {
                let _ = dis::disassemble(&p, o);
            }
        }
    }
    assert!(parsed_ok > 0);
}
