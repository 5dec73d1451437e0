//! Unit tests on hand-written modules (the lint crate tests GLSL through glslang).

use super::*;
use coopmat_spirv::asm::{AsmOptions, assemble};

fn module(body: &str) -> Module {
    let src = format!(
        "OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\" %lid %wid
OpExecutionMode %main LocalSize 64 1 1
OpDecorate %lid BuiltIn LocalInvocationId
OpDecorate %wid BuiltIn WorkgroupId
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%v3 = OpTypeVector %uint 3
%pin = OpTypePointer Input %v3
%pin1 = OpTypePointer Input %uint
%pf = OpTypePointer Function %uint
%lid = OpVariable %pin Input
%wid = OpVariable %pin Input
%u0 = OpConstant %uint 0
%u1 = OpConstant %uint 1
%u5 = OpConstant %uint 5
{body}"
    );
    let words = assemble(&src, &AsmOptions::default()).expect("assembles");
    Module::from_words(&words).expect("parses")
}

fn id(m: &Module, name: &str) -> u32 {
    (0..m.header.bound)
        .find(|&i| m.name(i).as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no %{name}"))
}

#[test]
fn builtins_seed_their_levels_per_component() {
    let m = module(
        "OpName %x \"x\"
OpName %y \"y\"
OpName %w \"w\"
%main = OpFunction %void None %fn
%e = OpLabel
%l = OpLoad %v3 %lid
%x = OpCompositeExtract %uint %l 0
%y = OpCompositeExtract %uint %l 1
%pw = OpAccessChain %pin1 %wid %u0
%w = OpLoad %uint %pw
OpReturn
OpFunctionEnd
",
    );
    let a = Analysis::run(&m);
    assert_eq!(a.value(id(&m, "x")), Level::Divergent);
    // local_size.y is 1: LocalInvocationId.y is always 0.
    assert_eq!(a.value(id(&m, "y")), Level::Constant);
    assert_eq!(a.value(id(&m, "w")), Level::Workgroup);
}

#[test]
fn divergent_branch_makes_control_and_phi_divergent_until_the_merge() {
    let m = module(
        "OpName %then \"then\"
OpName %merge \"merge\"
OpName %p \"p\"
%main = OpFunction %void None %fn
%e = OpLabel
%l = OpLoad %v3 %lid
%x = OpCompositeExtract %uint %l 0
%c = OpULessThan %bool %x %u5
OpSelectionMerge %merge None
OpBranchConditional %c %then %merge
%then = OpLabel
OpBranch %merge
%merge = OpLabel
%p = OpPhi %uint %u1 %then %u0 %e
OpReturn
OpFunctionEnd
",
    );
    let a = Analysis::run(&m);
    assert_eq!(a.control(id(&m, "then")), Level::Divergent);
    assert_eq!(a.control(id(&m, "merge")), Level::Constant);
    assert_eq!(a.value(id(&m, "p")), Level::Divergent);
    let chain = a.explain_value(id(&m, "p"), id(&m, "merge"));
    assert!(
        chain
            .last()
            .is_some_and(|s| s.note.contains("LocalInvocationId")),
        "{chain:#?}"
    );
}

#[test]
fn uniform_branch_keeps_everything_uniform() {
    let m = module(
        "OpName %then \"then\"
OpName %p \"p\"
%main = OpFunction %void None %fn
%e = OpLabel
%pw = OpAccessChain %pin1 %wid %u0
%w = OpLoad %uint %pw
%c = OpULessThan %bool %w %u5
OpSelectionMerge %merge None
OpBranchConditional %c %then %merge
%then = OpLabel
OpBranch %merge
%merge = OpLabel
%p = OpPhi %uint %u1 %then %u0 %e
OpReturn
OpFunctionEnd
",
    );
    let a = Analysis::run(&m);
    assert_eq!(a.control(id(&m, "then")), Level::Workgroup);
    assert_eq!(a.value(id(&m, "p")), Level::Workgroup);
}

#[test]
fn values_leaving_a_loop_with_a_divergent_exit_are_divergent() {
    let m = module(
        "OpName %i \"i\"
OpName %after \"after\"
OpName %body \"body\"
%main = OpFunction %void None %fn
%e = OpLabel
%l = OpLoad %v3 %lid
%x = OpCompositeExtract %uint %l 0
OpBranch %head
%head = OpLabel
%i = OpPhi %uint %u0 %e %next %cont
%c = OpULessThan %bool %i %x
OpLoopMerge %after %cont None
OpBranchConditional %c %body %after
%body = OpLabel
OpBranch %cont
%cont = OpLabel
%next = OpIAdd %uint %i %u1
OpBranch %head
%after = OpLabel
%use = OpIAdd %uint %i %u1
OpReturn
OpFunctionEnd
",
    );
    let a = Analysis::run(&m);
    let (i, after) = (id(&m, "i"), id(&m, "after"));
    // Inside the loop the active invocations agree on i; after it they do not.
    assert_eq!(a.value(i), Level::Constant);
    assert_eq!(a.value_at(i, id(&m, "body")), Level::Constant);
    assert_eq!(a.value_at(i, after), Level::Divergent);
    assert_eq!(a.control(id(&m, "body")), Level::Divergent);
    assert_eq!(a.control(after), Level::Constant);
}

#[test]
fn function_variables_merge_their_stores() {
    let m = module(
        "OpName %v \"v\"
OpName %r \"r\"
OpName %r0 \"r0\"
%main = OpFunction %void None %fn
%e = OpLabel
%v = OpVariable %pf Function
%v0 = OpVariable %pf Function
OpStore %v %u0
OpStore %v0 %u5
%l = OpLoad %v3 %lid
%x = OpCompositeExtract %uint %l 0
%c = OpULessThan %bool %x %u5
OpSelectionMerge %merge None
OpBranchConditional %c %then %merge
%then = OpLabel
OpStore %v %u1
OpBranch %merge
%merge = OpLabel
%r = OpLoad %uint %v
%r0 = OpLoad %uint %v0
OpReturn
OpFunctionEnd
",
    );
    let a = Analysis::run(&m);
    assert_eq!(a.value(id(&m, "r")), Level::Divergent);
    assert_eq!(a.value(id(&m, "r0")), Level::Constant);
}

#[test]
fn divergent_early_return_makes_the_rest_divergent() {
    let m = module(
        "OpName %rest \"rest\"
%main = OpFunction %void None %fn
%e = OpLabel
%l = OpLoad %v3 %lid
%x = OpCompositeExtract %uint %l 0
%c = OpULessThan %bool %x %u5
OpSelectionMerge %rest None
OpBranchConditional %c %ret %rest
%ret = OpLabel
OpReturn
%rest = OpLabel
OpReturn
OpFunctionEnd
",
    );
    let a = Analysis::run(&m);
    assert_eq!(a.control(id(&m, "rest")), Level::Divergent);
}

#[test]
fn parameters_take_their_arguments_levels() {
    let m = module(
        "OpName %r \"r\"
OpName %q \"q\"
%fu = OpTypeFunction %uint %uint
%main = OpFunction %void None %fn
%e = OpLabel
%l = OpLoad %v3 %lid
%x = OpCompositeExtract %uint %l 0
%r = OpFunctionCall %uint %f %x
OpReturn
OpFunctionEnd
%f = OpFunction %uint None %fu
%p = OpFunctionParameter %uint
%fe = OpLabel
%q = OpIAdd %uint %p %u1
OpReturnValue %q
OpFunctionEnd
",
    );
    let a = Analysis::run(&m);
    assert_eq!(a.value(id(&m, "q")), Level::Divergent);
    assert_eq!(a.value(id(&m, "r")), Level::Divergent);
}

/// Within one call whose parameters have given levels: what depends only on the uniform one
/// is uniform, what the divergent one reaches is divergent, and so are values behind a branch
/// on it that meet in a phi; `in_call` of a non-function is None.
#[test]
fn one_call_takes_the_given_parameter_levels() {
    let m = module(
        "OpName %s \"s\"
OpName %t \"t\"
OpName %j \"j\"
OpName %f \"f\"
%fu = OpTypeFunction %uint %uint %uint
%main = OpFunction %void None %fn
%e = OpLabel
OpReturn
OpFunctionEnd
%f = OpFunction %uint None %fu
%p = OpFunctionParameter %uint
%k = OpFunctionParameter %uint
%fe = OpLabel
%s = OpIMul %uint %k %u5
%t = OpIAdd %uint %p %s
%c = OpULessThan %bool %p %u5
OpSelectionMerge %m None
OpBranchConditional %c %a %m
%a = OpLabel
OpBranch %m
%m = OpLabel
%j = OpPhi %uint %s %a %u1 %fe
OpReturnValue %j
OpFunctionEnd
",
    );
    let a = Analysis::run(&m);
    let f = id(&m, "f");
    let call = a
        .in_call(f, &[Level::Divergent, Level::Uniform])
        .expect("a function");
    assert_eq!(call.value(id(&m, "s")), Level::Uniform);
    assert_eq!(call.value(id(&m, "t")), Level::Divergent);
    assert_eq!(call.value(id(&m, "j")), Level::Divergent);
    // Parameters past the given levels are divergent.
    let short = a.in_call(f, &[Level::Uniform]).expect("a function");
    assert_eq!(short.value(id(&m, "s")), Level::Divergent);
    let both = a
        .in_call(f, &[Level::Uniform, Level::Constant])
        .expect("a function");
    assert!(both.value(id(&m, "j")) <= Level::Uniform);
    assert!(a.in_call(id(&m, "s"), &[]).is_none());
}

#[test]
fn elements_of_a_splat_are_uniform_and_of_a_product_divergent() {
    let m = module(
        "OpName %s \"s\"
OpName %d \"d\"
%float = OpTypeFloat 32
%u3 = OpConstant %uint 3
%u2 = OpConstant %uint 2
%u16 = OpConstant %uint 16
%f1 = OpConstant %float 1
%mc = OpTypeCooperativeMatrixKHR %float %u3 %u16 %u16 %u2
%main = OpFunction %void None %fn
%e = OpLabel
%splat = OpCompositeConstruct %mc %f1
%s = OpCompositeExtract %float %splat 0
%prod = OpCooperativeMatrixMulAddKHR %mc %splat %splat %splat
%d = OpCompositeExtract %float %prod 0
OpReturn
OpFunctionEnd
",
    );
    let a = Analysis::run(&m);
    assert_eq!(a.value(id(&m, "s")), Level::Constant);
    assert_eq!(a.value(id(&m, "d")), Level::Divergent);
}

/// What a lane reads of a matrix by the element-to-invocation mapping: its components'
/// coordinates are divergent even for a constant matrix and index; its share as an array
/// (SPV_QCOM_cooperative_matrix_conversion) is the same in every lane for a splat, divergent for a
/// matrix whose elements may differ.
#[test]
fn lane_dependent_matrix_reads_are_divergent() {
    let m = module(
        "OpName %c \"c\"
OpName %s \"s\"
OpName %d \"d\"
%float = OpTypeFloat 32
%u3 = OpConstant %uint 3
%u2 = OpConstant %uint 2
%u8 = OpConstant %uint 8
%u16 = OpConstant %uint 16
%f1 = OpConstant %float 1
%mc = OpTypeCooperativeMatrixKHR %float %u3 %u16 %u16 %u2
%v2 = OpTypeVector %uint 2
%arr = OpTypeArray %float %u8
%main = OpFunction %void None %fn
%e = OpLabel
%splat = OpCompositeConstruct %mc %f1
%c = OpCooperativeMatrixGetCoordinateEXT %v2 %splat %u0
%s = OpCompositeExtractCoopMatQCOM %arr %splat
%prod = OpCooperativeMatrixMulAddKHR %mc %splat %splat %splat
%d = OpCompositeExtractCoopMatQCOM %arr %prod
OpReturn
OpFunctionEnd
",
    );
    let a = Analysis::run(&m);
    assert_eq!(a.value(id(&m, "c")), Level::Divergent);
    assert_eq!(a.value(id(&m, "s")), Level::Constant);
    assert_eq!(a.value(id(&m, "d")), Level::Divergent);
}

#[test]
fn each_call_gets_the_result_of_its_own_context() {
    let m = module(
        "OpName %ru \"ru\"
OpName %rd \"rd\"
OpName %vu \"vu\"
%fu = OpTypeFunction %uint %pf
%main = OpFunction %void None %fn
%e = OpLabel
%tu = OpVariable %pf Function
%td = OpVariable %pf Function
%l = OpLoad %v3 %lid
%x = OpCompositeExtract %uint %l 0
OpStore %td %x
OpStore %tu %u5
%rd = OpFunctionCall %uint %f %td
%ru = OpFunctionCall %uint %f %tu
%vu = OpLoad %uint %tu
OpReturn
OpFunctionEnd
%f = OpFunction %uint None %fu
%p = OpFunctionParameter %pf
%fe = OpLabel
%q = OpLoad %uint %p
%q1 = OpIAdd %uint %q %u1
OpStore %p %u1
OpReturnValue %q1
OpFunctionEnd
",
    );
    let a = Analysis::run(&m);
    // Pointer parameters: each call reads its own argument's variable.
    assert_eq!(a.value(id(&m, "rd")), Level::Divergent);
    assert_eq!(a.value(id(&m, "ru")), Level::Constant);
    assert_eq!(a.value(id(&m, "vu")), Level::Constant);
}

/// Found by the soundness check over test-backend-ops (`scripts/icd-observe-shards.sh`): an
/// exclusive scan of a ballot's bits was taken for a subgroup-uniform count.
#[test]
fn ballot_bit_count_scans_are_divergent_and_reductions_uniform() {
    let src = "OpCapability Shader
OpCapability GroupNonUniformBallot
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\" %lid
OpExecutionMode %main LocalSize 64 1 1
OpDecorate %lid BuiltIn LocalInvocationIndex
OpName %scan \"scan\"
OpName %iscan \"iscan\"
OpName %total \"total\"
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%v4 = OpTypeVector %uint 4
%pin = OpTypePointer Input %uint
%lid = OpVariable %pin Input
%u1 = OpConstant %uint 1
%u3 = OpConstant %uint 3
%main = OpFunction %void None %fn
%e = OpLabel
%l = OpLoad %uint %lid
%bit = OpBitwiseAnd %uint %l %u1
%odd = OpIEqual %bool %bit %u1
%b = OpGroupNonUniformBallot %v4 %u3 %odd
%scan = OpGroupNonUniformBallotBitCount %uint %u3 ExclusiveScan %b
%iscan = OpGroupNonUniformBallotBitCount %uint %u3 InclusiveScan %b
%total = OpGroupNonUniformBallotBitCount %uint %u3 Reduce %b
OpReturn
OpFunctionEnd
";
    let m = Module::from_words(&assemble(src, &AsmOptions::default()).unwrap()).unwrap();
    let a = Analysis::run(&m);
    assert_eq!(a.value(id(&m, "scan")), Level::Divergent);
    assert_eq!(a.value(id(&m, "iscan")), Level::Divergent);
    assert_eq!(a.value(id(&m, "total")), Level::Subgroup);
}
