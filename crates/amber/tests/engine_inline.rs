//! End-to-end runs of small inline scripts on `coopmat-exec` (SPIR-V assembly, so no GLSL compiler is needed).

use coopmat_amber::{ExecEngine, Outcome};
use std::path::Path;

/// `b[i] = float(a[i] + ADD + pc.base) * SCALE` with local size, ADD and SCALE from spec constants.
const SHADER: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %arr_f ArrayStride 4
               OpDecorate %Out BufferBlock
               OpMemberDecorate %Out 0 Offset 0
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 1
               OpDecorate %arr_i ArrayStride 4
               OpDecorate %In BufferBlock
               OpMemberDecorate %In 0 Offset 0
               OpDecorate %in DescriptorSet 0
               OpDecorate %in Binding 0
               OpDecorate %add SpecId 1
               OpDecorate %P Block
               OpMemberDecorate %P 0 Offset 0
               OpDecorate %scale SpecId 2
               OpDecorate %lsx SpecId 0
               OpDecorate %wgsize BuiltIn WorkgroupSize
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %v3u = OpTypeVector %uint 3
   %ptr_in3 = OpTypePointer Input %v3u
        %gid = OpVariable %ptr_in3 Input
     %uint_0 = OpConstant %uint 0
   %ptr_in1 = OpTypePointer Input %uint
      %float = OpTypeFloat 32
      %arr_f = OpTypeRuntimeArray %float
        %Out = OpTypeStruct %arr_f
    %ptr_Out = OpTypePointer Uniform %Out
        %out = OpVariable %ptr_Out Uniform
        %int = OpTypeInt 32 1
      %int_0 = OpConstant %int 0
      %arr_i = OpTypeRuntimeArray %int
         %In = OpTypeStruct %arr_i
     %ptr_In = OpTypePointer Uniform %In
         %in = OpVariable %ptr_In Uniform
    %ptr_u_i = OpTypePointer Uniform %int
        %add = OpSpecConstant %int 0
          %P = OpTypeStruct %int
      %ptr_P = OpTypePointer PushConstant %P
         %pc = OpVariable %ptr_P PushConstant
   %ptr_pc_i = OpTypePointer PushConstant %int
      %scale = OpSpecConstant %float 1
    %ptr_u_f = OpTypePointer Uniform %float
        %lsx = OpSpecConstant %uint 1
     %uint_1 = OpConstant %uint 1
     %wgsize = OpSpecConstantComposite %v3u %lsx %uint_1 %uint_1
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %gp = OpAccessChain %ptr_in1 %gid %uint_0
          %i = OpLoad %uint %gp
         %ap = OpAccessChain %ptr_u_i %in %int_0 %i
          %a = OpLoad %int %ap
         %s1 = OpIAdd %int %a %add
         %bp = OpAccessChain %ptr_pc_i %pc %int_0
       %base = OpLoad %int %bp
         %s2 = OpIAdd %int %s1 %base
          %f = OpConvertSToF %float %s2
          %r = OpFMul %float %f %scale
         %op = OpAccessChain %ptr_u_f %out %int_0 %i
               OpStore %op %r
               OpReturn
               OpFunctionEnd
"#;

fn script(add: i32, scale: f32, base: i32, expect: &str) -> String {
    format!(
        "#!amber\nSHADER compute s SPIRV-ASM\n{SHADER}END\n\
         BUFFER a DATA_TYPE int32 SIZE 8 SERIES_FROM -3 INC_BY 1\n\
         BUFFER b DATA_TYPE float SIZE 12 FILL -1\n\
         BUFFER pc DATA_TYPE int32 DATA {base} END\n\
         PIPELINE compute p\n  ATTACH s \\\n    SPECIALIZE 0 AS uint32 4 \\\n    SPECIALIZE 1 AS int32 {add} \\\n    \
         SPECIALIZE 2 AS float {scale}\n  \
         BIND BUFFER a AS storage DESCRIPTOR_SET 0 BINDING 0\n  \
         BIND BUFFER b AS storage_dynamic DESCRIPTOR_SET 0 BINDING 1 OFFSET 16\n  \
         BIND BUFFER pc AS push_constant\nEND\n\
         RUN p 2 1 1\n{expect}\n"
    )
}

fn expected(add: i32, scale: f32, base: i32) -> String {
    // Computed here, independently of the engine: 4 untouched words, then 8 results at byte 16.
    let vals: Vec<String> = (0..8)
        .map(|i| (((i - 3 + add + base) as f32) * scale).to_string())
        .collect();
    format!(
        "EXPECT b IDX 0 EQ -1 -1 -1 -1\nEXPECT b IDX 16 EQ {}",
        vals.join(" ")
    )
}

#[test]
fn spec_constants_push_constants_and_dynamic_offsets() {
    let engine = ExecEngine::default();
    let (add, scale, base) = (-5, 0.5, 2);
    let r = coopmat_amber::runner::run_text(
        &engine,
        &script(add, scale, base, &expected(add, scale, base)),
        Path::new("."),
    );
    assert_eq!(r.outcome, Outcome::Pass);
    assert_eq!((r.runs, r.expects), (1, 2));
    assert!(r.lane_instructions > 0);
}

#[test]
fn wrong_expectations_fail_with_the_place() {
    let engine = ExecEngine::default();
    let bad = script(1, 1.0, 0, "EXPECT b IDX 16 EQ 0 0");
    let Outcome::Fail(why) = coopmat_amber::runner::run_text(&engine, &bad, Path::new(".")).outcome
    else {
        panic!("expected a failure")
    };
    // (-3 + 1) * 1.0 = -2 at byte 16, (-2 + 1) = -1 at byte 20.
    assert!(
        why.contains("byte 16: expected EQ 0, got -2")
            && why.contains("byte 20: expected EQ 0, got -1"),
        "{why}"
    );
}

#[test]
fn engine_errors_fail_and_name_the_run() {
    // Entry point that does not exist.
    let src = script(0, 1.0, 0, "").replace("ATTACH s \\", "ATTACH s ENTRY_POINT nope \\");
    let Outcome::Fail(why) =
        coopmat_amber::runner::run_text(&ExecEngine::default(), &src, Path::new(".")).outcome
    else {
        panic!("expected a failure")
    };
    assert!(why.contains("pipeline p") && why.contains("nope"), "{why}");
}

/// A script under crates/amber/scripts.
fn shipped(name: &str) -> (String, std::path::PathBuf) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name);
    (std::fs::read_to_string(&path).unwrap(), path)
}

fn outcome(text: &str) -> Outcome {
    coopmat_amber::runner::run_text(&ExecEngine::default(), text, Path::new(".")).outcome
}

#[test]
fn opencl_kernel_arguments_follow_the_clspv_reflection_of_a_spirv_shader() {
    let (text, path) = shipped("opencl_kernel_args_spirv.amber");
    assert_eq!(
        coopmat_amber::run_file(&ExecEngine::default(), &path).outcome,
        Outcome::Pass
    );
    // A wrong expectation fails (the values come from SET KERNEL: 3 * in - 2).
    let wrong = text.replace("EQ 1 4 7 10", "EQ 1 4 7 11");
    assert!(matches!(outcome(&wrong), Outcome::Fail(w) if w.contains("expected EQ 11, got 10")));
    // Without the reflection instructions nothing says where the arguments live.
    let stripped: String = text
        .lines()
        .filter(|l| !l.contains("OpExtInst "))
        .map(|l| format!("{l}\n"))
        .collect();
    let Outcome::Fail(why) = outcome(&stripped) else {
        panic!("expected a failure")
    };
    assert!(why.contains("no clspv reflection"), "{why}");
    // An argument the kernel does not have.
    let unknown = text.replace("ARG_NAME slope", "ARG_NAME gradient");
    assert!(
        matches!(outcome(&unknown), Outcome::Fail(w) if w.contains("no argument Name(\"gradient\")"))
    );
}

#[test]
fn vkscript_buffers_push_constants_and_probes() {
    let (text, path) = shipped("vkscript_compute.vkscript");
    assert_eq!(
        coopmat_amber::run_file(&ExecEngine::default(), &path).outcome,
        Outcome::Pass
    );
    let wrong = text.replace("== 3.5 6.25", "== 3.5 6.5");
    assert!(matches!(outcome(&wrong), Outcome::Fail(w) if w.contains("expected EQ 6.5, got 6.25")));
    // The tolerance applies to `~=` only.
    let tight = text.replace("tolerance 0.1\n", "tolerance 0.01\n");
    assert!(matches!(outcome(&tight), Outcome::Fail(_)));
}

/// `b[i] = a[i]` for 6 invocations over an array of 16-byte elements (std140 `float[]`, a
/// `R32G32B32A32_SFLOAT` texel holds one): what the Amber data types lay out where.
const COPY: &str = r#"#!amber
SHADER compute s SPIRV-ASM
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpExecutionMode %main LocalSize 6 1 1
               OpDecorate %gid BuiltIn LocalInvocationId
               OpDecorate %arr ArrayStride 4
               OpDecorate %B BufferBlock
               OpMemberDecorate %B 0 Offset 0
               OpDecorate %a DescriptorSet 0
               OpDecorate %a Binding 0
               OpDecorate %b DescriptorSet 0
               OpDecorate %b Binding 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
       %v3u = OpTypeVector %uint 3
     %uint_0 = OpConstant %uint 0
        %arr = OpTypeRuntimeArray %float
          %B = OpTypeStruct %arr
         %pB = OpTypePointer Uniform %B
       %pgid = OpTypePointer Input %v3u
        %pin = OpTypePointer Input %uint
         %pf = OpTypePointer Uniform %float
          %a = OpVariable %pB Uniform
          %b = OpVariable %pB Uniform
        %gid = OpVariable %pgid Input
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %ip = OpAccessChain %pin %gid %uint_0
          %i = OpLoad %uint %ip
         %ap = OpAccessChain %pf %a %uint_0 %i
          %v = OpLoad %float %ap
         %bp = OpAccessChain %pf %b %uint_0 %i
               OpStore %bp %v
               OpReturn
               OpFunctionEnd
END
BUFFER a DATA_TYPE TYPE DATA VALUES END
BUFFER b DATA_TYPE float SIZE 6 FILL 0
PIPELINE compute p
  ATTACH s
  BIND BUFFER a AS storage DESCRIPTOR_SET 0 BINDING 0
  BIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 1
END
RUN p 1 1 1
EXPECT b IDX 0 EQ EXPECTED
"#;

#[test]
fn formats_and_array_types_lay_data_out_as_amber_does() {
    let run = |ty: &str, values: &str, expected: &str| {
        outcome(
            &COPY
                .replace("TYPE DATA VALUES", &format!("{ty} DATA {values}"))
                .replace("EXPECTED", expected),
        )
    };
    // A format's texels are packed: three floats, no padding.
    assert_eq!(
        run("R32G32B32_SFLOAT", "1 2 3 4 5 6", "1 2 3 4 5 6"),
        Outcome::Pass
    );
    // std430 float[] is packed too; std140 float[] pads every element to 16 bytes.
    assert_eq!(
        run("float[] STD430", "1 2 3 4 5 6", "1 2 3 4 5 6"),
        Outcome::Pass
    );
    assert_eq!(run("float[] STD140", "7 8", "7 0 0 0 8 0"), Outcome::Pass);
    // A plain float under std140 (not an array) is not padded, as in Amber.
    assert_eq!(
        run("float STD140", "1 2 3 4 5 6", "1 2 3 4 5 6"),
        Outcome::Pass
    );
    // vec3 elements are padded to four components outside formats.
    assert_eq!(
        run("vec3<float>", "1 2 3 4 5 6", "1 2 3 0 4 5"),
        Outcome::Pass
    );
}

#[test]
fn robust_buffer_access_is_the_engine_robust_mode() {
    // Invocation 5 reads a[5] of a 4-float buffer: an error, or 0 with robustBufferAccess.
    let script = COPY
        .replace("TYPE DATA VALUES", "float DATA 1 2 3 4")
        .replace("EXPECTED", "1 2 3 4 0 0");
    let Outcome::Fail(why) = outcome(&script) else {
        panic!("an out-of-bounds read without robustness is an error")
    };
    assert!(why.contains("out-of-bounds access"), "{why}");
    let robust = format!(
        "#!amber\nDEVICE_FEATURE robustBufferAccess\n{}",
        &script[8..]
    );
    assert_eq!(outcome(&robust), Outcome::Pass);
}
