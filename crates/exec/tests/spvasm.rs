//! Hand-written SPIR-V (assembled by coopmat's own assembler): specialization, fp8, call_function, errors.

mod common;
use common::*;
use coopmat_exec::{EngineOptions, Pipeline, Resources};

const SPEC: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpExecutionModeId %main LocalSizeId %lx %one %one
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %rt ArrayStride 4
               OpDecorate %S Block
               OpMemberDecorate %S 0 Offset 0
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
               OpDecorate %a SpecId 3
               OpDecorate %lx SpecId 4
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %v3uint = OpTypeVector %uint 3
        %one = OpConstant %uint 1
          %a = OpSpecConstant %uint 10
         %lx = OpSpecConstant %uint 4
         %b2 = OpSpecConstantOp %uint IMul %a %a
         %b3 = OpSpecConstantOp %uint IAdd %b2 %one
         %rt = OpTypeRuntimeArray %uint
          %S = OpTypeStruct %rt
       %ptrS = OpTypePointer StorageBuffer %S
       %ptru = OpTypePointer StorageBuffer %uint
      %ptrin = OpTypePointer Input %v3uint
        %gid = OpVariable %ptrin Input
        %buf = OpVariable %ptrS StorageBuffer
       %zero = OpConstant %uint 0
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3uint %gid
          %x = OpCompositeExtract %uint %g 0
          %p = OpAccessChain %ptru %buf %zero %x
          %v = OpIAdd %uint %b3 %x
               OpStore %p %v
               OpReturn
               OpFunctionEnd
"#;

#[test]
fn spec_constants_spec_constant_op_and_local_size_id() {
    let Some(m) = spvasm(SPEC) else {
        return;
    };
    for (a, lx) in [(None, None), (Some(7u64), Some(8u64))] {
        let mut spec = coopmat_exec::SpecConstants::new();
        if let Some(a) = a {
            spec.insert(3, a);
        }
        if let Some(lx) = lx {
            spec.insert(4, lx);
        }
        let p = Pipeline::compile(&m, "main", &spec, &EngineOptions::default()).unwrap();
        let lx = lx.unwrap_or(4) as u32;
        assert_eq!(p.local_size(), [lx, 1, 1]);
        let mut res = Resources::default();
        res.buffers.insert((0, 0), vec![0; 4 * 2 * lx as usize]);
        p.dispatch(&mut res, [2, 1, 1]).unwrap();
        let a = a.unwrap_or(10) as u32;
        let out = u32s(&res.buffers[&(0, 0)]);
        for (i, &v) in out.iter().enumerate() {
            assert_eq!(v, a * a + 1 + i as u32);
        }
    }
}

const FP8: &str = r#"
               OpCapability Shader
               OpCapability Float8EXT
               OpExtension "SPV_EXT_float8"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpExecutionMode %main LocalSize 64 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %rt ArrayStride 4
               OpDecorate %S Block
               OpMemberDecorate %S 0 Offset 0
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
       %e4m3 = OpTypeFloat 8 Float8E4M3EXT
       %e5m2 = OpTypeFloat 8 Float8E5M2EXT
      %v3uint = OpTypeVector %uint 3
         %rt = OpTypeRuntimeArray %float
          %S = OpTypeStruct %rt
       %ptrS = OpTypePointer StorageBuffer %S
       %ptrf = OpTypePointer StorageBuffer %float
      %ptrin = OpTypePointer Input %v3uint
        %gid = OpVariable %ptrin Input
        %buf = OpVariable %ptrS StorageBuffer
       %zero = OpConstant %uint 0
          %n = OpConstant %uint 1024
      %n2 = OpConstant %uint 2048
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3uint %gid
          %x = OpCompositeExtract %uint %g 0
          %p = OpAccessChain %ptrf %buf %zero %x
          %v = OpLoad %float %p
          %h = OpFConvert %e4m3 %v
          %r = OpFConvert %float %h
         %i1 = OpIAdd %uint %x %n
         %p1 = OpAccessChain %ptrf %buf %zero %i1
               OpStore %p1 %r
         %h2 = OpFConvert %e5m2 %v
         %r2 = OpFConvert %float %h2
         %i2 = OpIAdd %uint %x %n2
         %p2 = OpAccessChain %ptrf %buf %zero %i2
               OpStore %p2 %r2
               OpReturn
               OpFunctionEnd
"#;

/// All finite values of an 8-bit format, from the OFP8 definition.
fn fp8_values(mbits: u32, bias: i32, ieee: bool) -> Vec<f64> {
    let mut v = Vec::new();
    for e in 0..(1 << (7 - mbits)) {
        for m in 0..(1 << mbits) {
            let emax = (1 << (7 - mbits)) - 1;
            if e == emax && (ieee || m == (1 << mbits) - 1) {
                continue;
            }
            let x = if e == 0 {
                m as f64 * 2f64.powi(1 - bias - mbits as i32)
            } else {
                (1.0 + m as f64 / (1 << mbits) as f64) * 2f64.powi(e - bias)
            };
            v.push(x);
        }
    }
    v
}

/// Round to nearest, ties to the value with an even mantissa (even index in the sorted list).
fn round_fp8(x: f64, vals: &[f64]) -> f64 {
    let a = x.abs();
    let mut best = 0;
    for (i, &v) in vals.iter().enumerate() {
        let (d, db) = ((v - a).abs(), (vals[best] - a).abs());
        if d < db || (d == db && i % 2 == 0) {
            best = i;
        }
    }
    vals[best].copysign(x)
}

#[test]
fn fp8_conversions_round_to_nearest_even() {
    let Some(m) = spvasm(FP8) else {
        return;
    };
    let e4 = fp8_values(3, 7, false);
    let e5 = fp8_values(2, 15, true);
    let mut rng = Rng(77);
    let inp: Vec<f32> = (0..1024)
        .map(|i| match i % 3 {
            0 => (rng.below(20000) as f32 - 10000.0) / 64.0,
            1 => (rng.below(2000) as f32 - 1000.0) / 4096.0,
            _ => rng.below(400) as f32 - 200.0,
        })
        .collect();
    let mut data = bytes_f32(&inp);
    data.resize(4 * 3072, 0);
    let mut res = Resources::default();
    res.buffers.insert((0, 0), data);
    run(&m, &mut res, [16, 1, 1], &EngineOptions::default());
    let out = f32s(&res.buffers[&(0, 0)]);
    for i in 0..1024 {
        let x = inp[i] as f64;
        // In range for both formats here (|x| <= 448 for E4M3 inputs below 448).
        if x.abs() <= 448.0 {
            assert_eq!(out[1024 + i] as f64, round_fp8(x, &e4), "e4m3 of {x}");
        }
        assert_eq!(out[2048 + i] as f64, round_fp8(x, &e5), "e5m2 of {x}");
    }
}

const CALL: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
               OpName %f "f"
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
        %ffn = OpTypeFunction %float %float %uint
       %bool = OpTypeBool
     %float1 = OpConstant %float 1
      %uint3 = OpConstant %uint 3
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
          %f = OpFunction %float None %ffn
          %x = OpFunctionParameter %float
          %k = OpFunctionParameter %uint
         %fb = OpLabel
         %kf = OpConvertUToF %float %k
         %xk = OpFMul %float %x %kf
          %c = OpULessThan %bool %k %uint3
               OpSelectionMerge %m None
               OpBranchConditional %c %small %m
      %small = OpLabel
         %y1 = OpFAdd %float %xk %float1
               OpReturnValue %y1
          %m = OpLabel
               OpReturnValue %xk
               OpFunctionEnd
"#;

#[test]
fn call_function_runs_one_lane_per_element() {
    let Some(m) = spvasm(CALL) else {
        return;
    };
    let p = Pipeline::compile(&m, "main", &Default::default(), &EngineOptions::default()).unwrap();
    let fid = m
        .instructions
        .iter()
        .find(|i| i.opcode == coopmat_spirv::grammar::op::Name)
        .and_then(|i| i.word(0))
        .unwrap();
    let lanes = 2500;
    let xs: Vec<u64> = (0..lanes)
        .map(|i| (i as f32 * 0.5).to_bits() as u64)
        .collect();
    let ks: Vec<u64> = (0..lanes).map(|i| (i % 7) as u64).collect();
    let out = p
        .call_function(fid, &[&xs, &ks], lanes, &mut Resources::default())
        .unwrap();
    for (i, &o) in out.iter().enumerate() {
        let x = i as f32 * 0.5;
        let k = (i % 7) as u32;
        let want = if k < 3 {
            x * k as f32 + 1.0
        } else {
            x * k as f32
        };
        assert_eq!(f32::from_bits(o as u32), want, "lane {i}");
    }
}

#[test]
fn arm_blocked_layouts_are_reported_unsupported() {
    let Some(m) = glsl(
        r#"#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B { float b[]; };
void main() {
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, b, 0, 16, 0x106a);
    coopMatStore(m, b, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}"#,
    ) else {
        return;
    };
    let p = Pipeline::compile(&m, "main", &Default::default(), &EngineOptions::default()).unwrap();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 1024]);
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, coopmat_exec::ErrorKind::Unsupported, "{e}");
}

/// OpGroup* with Workgroup scope (the Groups capability, outside Vulkan's environment but run
/// by the engine): one group of all 48 invocations of a 12×4 workgroup, across two subgroups.
const WG_GROUPS: &str = r#"
               OpCapability Shader
               OpCapability Groups
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %lid %lidx
               OpExecutionMode %main LocalSize 12 4 1
               OpDecorate %lid BuiltIn LocalInvocationId
               OpDecorate %lidx BuiltIn LocalInvocationIndex
               OpDecorate %rt ArrayStride 4
               OpDecorate %S Block
               OpMemberDecorate %S 0 Offset 0
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
       %bool = OpTypeBool
     %v3uint = OpTypeVector %uint 3
     %v2uint = OpTypeVector %uint 2
         %u0 = OpConstant %uint 0
         %u1 = OpConstant %uint 1
         %u2 = OpConstant %uint 2
         %u3 = OpConstant %uint 3
         %u5 = OpConstant %uint 5
        %u48 = OpConstant %uint 48
        %u40 = OpConstant %uint 40
        %wgs = OpConstant %uint 2
       %bid3 = OpConstantComposite %v3uint %u5 %u2 %u0
       %bid2 = OpConstantComposite %v2uint %u3 %u1
         %rt = OpTypeRuntimeArray %uint
          %S = OpTypeStruct %rt
        %pSB = OpTypePointer StorageBuffer %S
      %pUint = OpTypePointer StorageBuffer %uint
     %pIn3 = OpTypePointer Input %v3uint
     %pIn1 = OpTypePointer Input %uint
        %buf = OpVariable %pSB StorageBuffer
        %lid = OpVariable %pIn3 Input
       %lidx = OpVariable %pIn1 Input
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %i = OpLoad %uint %lidx
        %id3 = OpLoad %v3uint %lid
          %v = OpIMul %uint %i %u3
        %sum = OpGroupIAdd %uint %wgs Reduce %v
       %scan = OpGroupIAdd %uint %wgs InclusiveScan %v
        %max = OpGroupUMax %uint %wgs Reduce %i
         %b3 = OpGroupBroadcast %uint %wgs %v %bid3
         %b2 = OpGroupBroadcast %uint %wgs %v %bid2
        %big = OpUGreaterThan %bool %i %u40
        %any = OpGroupAny %bool %wgs %big
        %all = OpGroupAll %bool %wgs %big
       %anyu = OpSelect %uint %any %u1 %u0
       %allu = OpSelect %uint %all %u1 %u0
       %base = OpIMul %uint %i %u5
          %p0 = OpAccessChain %pUint %buf %u0 %base
               OpStore %p0 %sum
         %o1 = OpIAdd %uint %base %u1
          %p1 = OpAccessChain %pUint %buf %u0 %o1
               OpStore %p1 %scan
         %o2 = OpIAdd %uint %base %u2
          %p2 = OpAccessChain %pUint %buf %u0 %o2
               OpStore %p2 %max
         %o3 = OpIAdd %uint %base %u3
          %p3 = OpAccessChain %pUint %buf %u0 %o3
         %bb = OpIAdd %uint %b3 %b2
         %ab = OpIAdd %uint %anyu %allu
        %ab2 = OpIMul %uint %ab %u48
        %bab = OpIAdd %uint %bb %ab2
               OpStore %p3 %bab
               OpReturn
               OpFunctionEnd
"#;

#[test]
fn workgroup_scope_group_operations_span_the_whole_workgroup() {
    let Some(m) = spvasm(WG_GROUPS) else {
        return;
    };
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 48 * 5 * 4]);
    run(&m, &mut res, [1, 1, 1], &EngineOptions::default());
    let out = u32s(&res.buffers[&(0, 0)]);
    let total: u32 = (0..48).map(|i| 3 * i).sum();
    for i in 0..48u32 {
        let o = &out[i as usize * 5..i as usize * 5 + 4];
        let scan: u32 = (0..=i).map(|j| 3 * j).sum();
        // Broadcasts from (5, 2, 0) = lane 29 and (3, 1) = lane 15; some but not all i > 40.
        let b = 3 * 29 + 3 * 15 + 48;
        assert_eq!(o, &[total, scan, 47, b], "invocation {i}");
    }
    // Reached by only some invocations: an error naming it, not a partial reduction.
    let divergent = WG_GROUPS.replace(
        "        %u40 = OpConstant %uint 40\n",
        "        %u40 = OpConstant %uint 40\n        %u20 = OpConstant %uint 20\n",
    );
    let body_start = divergent.find("        %sum = ").unwrap();
    let divergent = format!(
        "{}{}",
        &divergent[..body_start],
        "          %c = OpULessThan %bool %i %u20\n               OpSelectionMerge %m None\n               OpBranchConditional %c %t %m\n          %t = OpLabel\n        %sum = OpGroupIAdd %uint %wgs Reduce %v\n         %p0 = OpAccessChain %pUint %buf %u0 %i\n               OpStore %p0 %sum\n               OpBranch %m\n          %m = OpLabel\n               OpReturn\n               OpFunctionEnd\n"
    );
    let m = spvasm(&divergent).unwrap();
    let p = Pipeline::compile(&m, "main", &Default::default(), &EngineOptions::default()).unwrap();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 48 * 5 * 4]);
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert!(
        e.to_string()
            .contains("Workgroup-scope group operation is reached by only some invocations"),
        "{e}"
    );
    assert!(e.to_string().contains("OpGroupIAdd"), "{e}");
}

/// The start of the KHR cooperative-matrix test modules below: one storage buffer of floats
/// (`%buf`, runtime array `%rt` in block `%S`), 32 invocations, the scalar types.
macro_rules! khr_tile_prelude {
    () => {
        r#"
               OpCapability Shader
               OpCapability CooperativeMatrixKHR
               OpCapability VulkanMemoryModel
               OpExtension "SPV_KHR_cooperative_matrix"
               OpExtension "SPV_KHR_vulkan_memory_model"
               OpMemoryModel Logical Vulkan
               OpEntryPoint GLCompute %main "main" %buf
               OpExecutionMode %main LocalSize 32 1 1
               OpDecorate %rt ArrayStride 4
               OpDecorate %S Block
               OpMemberDecorate %S 0 Offset 0
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
       %bool = OpTypeBool
"#
    };
}

/// Phis that read each other on the same edge (`a, b = b, a`): SPIR-V 2.2.5 makes them a
/// parallel copy, so every incoming value is read before any phi is written. Scalars and
/// cooperative matrices, and an accumulator whose tile moves into its phi without a copy
/// (`Edge::movable`) in the same loop.
const PHI_SWAP: &str = concat!(
    khr_tile_prelude!(),
    r#"     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_3 = OpConstant %uint 3
    %uint_16 = OpConstant %uint 16
   %uint_256 = OpConstant %uint 256
   %uint_512 = OpConstant %uint 512
   %uint_768 = OpConstant %uint 768
   %uint_769 = OpConstant %uint 769
    %float_0 = OpConstant %float 0
    %float_1 = OpConstant %float 1
    %float_2 = OpConstant %float 2
         %mt = OpTypeCooperativeMatrixKHR %float %uint_3 %uint_16 %uint_16 %uint_2
      %mzero = OpConstantComposite %mt %float_0
        %mA0 = OpConstantComposite %mt %float_1
        %mB0 = OpConstantComposite %mt %float_2
         %rt = OpTypeRuntimeArray %float
          %S = OpTypeStruct %rt
       %ptrS = OpTypePointer StorageBuffer %S
       %ptrf = OpTypePointer StorageBuffer %float
        %buf = OpVariable %ptrS StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpBranch %header
     %header = OpLabel
          %i = OpPhi %uint %uint_0 %entry %inext %cont
          %a = OpPhi %uint %uint_1 %entry %b %cont
          %b = OpPhi %uint %uint_2 %entry %a %cont
         %ma = OpPhi %mt %mA0 %entry %mb %cont
         %mb = OpPhi %mt %mB0 %entry %ma %cont
        %acc = OpPhi %mt %mzero %entry %acc2 %cont
         %lt = OpULessThan %bool %i %uint_3
               OpLoopMerge %merge %cont None
               OpBranchConditional %lt %body %merge
       %body = OpLabel
       %acc2 = OpFAdd %mt %acc %ma
               OpBranch %cont
       %cont = OpLabel
      %inext = OpIAdd %uint %i %uint_1
               OpBranch %header
      %merge = OpLabel
         %p0 = OpAccessChain %ptrf %buf %uint_0 %uint_0
               OpCooperativeMatrixStoreKHR %p0 %ma %uint_0 %uint_16
         %p1 = OpAccessChain %ptrf %buf %uint_0 %uint_256
               OpCooperativeMatrixStoreKHR %p1 %mb %uint_0 %uint_16
         %p2 = OpAccessChain %ptrf %buf %uint_0 %uint_512
               OpCooperativeMatrixStoreKHR %p2 %acc %uint_0 %uint_16
         %af = OpConvertUToF %float %a
         %bf = OpConvertUToF %float %b
         %p3 = OpAccessChain %ptrf %buf %uint_0 %uint_768
               OpStore %p3 %af
         %p4 = OpAccessChain %ptrf %buf %uint_0 %uint_769
               OpStore %p4 %bf
               OpReturn
               OpFunctionEnd
"#
);

#[test]
fn phis_of_one_edge_are_a_parallel_copy() {
    let Some(m) = spvasm(PHI_SWAP) else {
        return;
    };
    let p = Pipeline::compile(&m, "main", &Default::default(), &EngineOptions::default()).unwrap();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 4 * 770]);
    p.dispatch(&mut res, [1, 1, 1]).unwrap();
    let out = f32s(&res.buffers[&(0, 0)]);
    // Three trips: (a, b) = (1, 2) -> (2, 1) -> (1, 2) -> (2, 1); acc = 1 + 2 + 1.
    assert!(out[..256].iter().all(|&x| x == 2.0), "ma {:?}", &out[..4]);
    assert!(
        out[256..512].iter().all(|&x| x == 1.0),
        "mb {:?}",
        &out[256..260]
    );
    assert!(
        out[512..768].iter().all(|&x| x == 4.0),
        "acc {:?}",
        &out[512..516]
    );
    assert_eq!(&out[768..770], &[2.0, 1.0]);
}

/// A loop carries a tile through a header phi and replaces it on odd trips only: on the branch
/// that keeps it, the header phi passes to the join's phi. Nothing reads it again before the
/// header redefines it, so its storage may move into the join's phi; in the second module the
/// join also reads it, and in the third a second phi of the join takes it too, so it must be
/// copied. (All: t = 1, 2, 2, 3, 3, 4 over six trips.)
const PHI_CARRIED_TILE: &str = concat!(
    khr_tile_prelude!(),
    r#"     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_3 = OpConstant %uint 3
     %uint_6 = OpConstant %uint 6
    %uint_16 = OpConstant %uint 16
   %uint_256 = OpConstant %uint 256
    %float_0 = OpConstant %float 0
    %float_1 = OpConstant %float 1
         %mt = OpTypeCooperativeMatrixKHR %float %uint_3 %uint_16 %uint_16 %uint_2
      %mzero = OpConstantComposite %mt %float_0
       %mone = OpConstantComposite %mt %float_1
         %rt = OpTypeRuntimeArray %float
          %S = OpTypeStruct %rt
       %ptrS = OpTypePointer StorageBuffer %S
       %ptrf = OpTypePointer StorageBuffer %float
        %buf = OpVariable %ptrS StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpBranch %header
     %header = OpLabel
          %i = OpPhi %uint %uint_0 %entry %inext %cont
          %t = OpPhi %mt %mone %entry %tn %cont
        %acc = OpPhi %mt %mzero %entry %acc2 %cont
         %lt = OpULessThan %bool %i %uint_6
               OpLoopMerge %merge %cont None
               OpBranchConditional %lt %body %merge
       %body = OpLabel
        %bit = OpBitwiseAnd %uint %i %uint_1
        %odd = OpIEqual %bool %bit %uint_1
               OpSelectionMerge %join None
               OpBranchConditional %odd %reload %join
     %reload = OpLabel
         %tl = OpFAdd %mt %t %mone
               OpBranch %join
       %join = OpLabel
         %tn = OpPhi %mt %t %body %tl %reload
SECOND
       %acc1 = OpFAdd %mt %acc %tn
       %acc2 = OpFAdd %mt %acc1 LAST
               OpBranch %cont
       %cont = OpLabel
      %inext = OpIAdd %uint %i %uint_1
               OpBranch %header
      %merge = OpLabel
         %p0 = OpAccessChain %ptrf %buf %uint_0 %uint_0
               OpCooperativeMatrixStoreKHR %p0 %acc %uint_0 %uint_16
         %p1 = OpAccessChain %ptrf %buf %uint_0 %uint_256
               OpCooperativeMatrixStoreKHR %p1 %t %uint_0 %uint_16
               OpReturn
               OpFunctionEnd
"#
);

#[test]
fn header_phis_dead_on_a_branch_move_and_live_ones_are_copied() {
    // LAST: %mzero (t not read after the join) or %t (read after it); or a second join phi
    // taking the same values as %tn on both edges (each edge passes its value to two phis,
    // so it is copied to both: acc = 2·(1 + 2 + 2 + 3 + 3 + 4)).
    let second = "%tn2 = OpPhi %mt %t %body %tl %reload";
    for (last, extra, want_acc) in [
        ("%mzero", "", 15.0),
        ("%t", "", 27.0),
        ("%tn2", second, 30.0),
    ] {
        let text = PHI_CARRIED_TILE
            .replace("LAST", last)
            .replace("SECOND", extra);
        let Some(m) = spvasm(&text) else {
            return;
        };
        // One workgroup a batch: every lane takes the edge, as the move needs.
        let options = EngineOptions {
            pack_workgroups: false,
            ..Default::default()
        };
        let p = Pipeline::compile(&m, "main", &Default::default(), &options).unwrap();
        let mut res = Resources::default();
        res.buffers.insert((0, 0), vec![0; 4 * 512]);
        p.dispatch(&mut res, [1, 1, 1]).unwrap();
        let out = f32s(&res.buffers[&(0, 0)]);
        assert!(
            out[..256].iter().all(|&x| x == want_acc),
            "{last}: acc {:?}",
            &out[..4]
        );
        assert!(
            out[256..512].iter().all(|&x| x == 4.0),
            "{last}: t {:?}",
            &out[256..260]
        );
    }
}

/// A loop-invariant instruction the engine refuses (a bitcast between sizes) and one that uses
/// it stay in their loop when the code motion would move them: their error is raised only if the
/// loop body runs, as for any refused instruction.
#[test]
fn refused_invariants_stay_in_their_loop() {
    let Some(m) = spvasm(
        r#"
               OpCapability Shader
               OpCapability Int64
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 4 1 1
               OpDecorate %S Block
               OpMemberDecorate %S 0 Offset 0
               OpMemberDecorate %S 1 Offset 8
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
       %bool = OpTypeBool
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_5 = OpConstant %uint 5
    %ulong_0 = OpConstant %ulong 0
    %ulong_1 = OpConstant %ulong 1
          %S = OpTypeStruct %uint %ulong
       %ptrS = OpTypePointer StorageBuffer %S
       %ptru = OpTypePointer StorageBuffer %uint
       %ptrl = OpTypePointer StorageBuffer %ulong
        %buf = OpVariable %ptrS StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %pn = OpAccessChain %ptru %buf %uint_0
          %n = OpLoad %uint %pn
          %x = OpIAdd %uint %n %uint_5
               OpBranch %header
     %header = OpLabel
          %i = OpPhi %uint %uint_0 %entry %inext %cont
        %acc = OpPhi %ulong %ulong_0 %entry %acc2 %cont
         %lt = OpULessThan %bool %i %n
               OpLoopMerge %merge %cont None
               OpBranchConditional %lt %body %merge
       %body = OpLabel
        %bad = OpBitcast %ulong %x
        %use = OpIAdd %ulong %bad %ulong_1
       %acc2 = OpIAdd %ulong %acc %use
               OpBranch %cont
       %cont = OpLabel
      %inext = OpIAdd %uint %i %uint_1
               OpBranch %header
      %merge = OpLabel
         %po = OpAccessChain %ptrl %buf %uint_1
               OpStore %po %acc
               OpReturn
               OpFunctionEnd
"#,
    ) else {
        return;
    };
    let p = Pipeline::compile(&m, "main", &Default::default(), &EngineOptions::default()).unwrap();
    let mut res = Resources::default();
    let mut buf = vec![0u8; 16];
    buf[8..16].copy_from_slice(&7u64.to_le_bytes());
    res.buffers.insert((0, 0), buf.clone());
    // No trip: the refused bitcast is never reached.
    p.dispatch(&mut res, [1, 1, 1]).unwrap();
    assert_eq!(&res.buffers[&(0, 0)][8..16], &0u64.to_le_bytes());
    // Two trips: it is, and its error names it.
    buf[0..4].copy_from_slice(&2u32.to_le_bytes());
    res.buffers.insert((0, 0), buf);
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert!(e.to_string().contains("OpBitcast"), "{e}");
}

/// Loads of promoted Function variables. `%v` is stored once before the loop: its loads read
/// the variable's registers (no copy). `%w` is stored after it is loaded in the same block and
/// `%u` in a later block of the same iteration: their loads are copies, since the loaded value
/// is used after the store (`x`, `ux` would otherwise read the stored values), and so is the
/// load after the loop, followed by a store in its block; the last load of `%w` reads its final
/// value.
#[test]
fn loads_of_variables_stored_later_keep_the_loaded_value() {
    let Some(m) = spvasm(
        r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %lid
               OpExecutionMode %main LocalSize 4 1 1
               OpDecorate %lid BuiltIn LocalInvocationId
               OpDecorate %rt ArrayStride 4
               OpDecorate %S Block
               OpMemberDecorate %S 0 Offset 0
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
       %bool = OpTypeBool
     %v3uint = OpTypeVector %uint 3
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_3 = OpConstant %uint 3
     %uint_7 = OpConstant %uint 7
   %uint_100 = OpConstant %uint 100
  %uint_1000 = OpConstant %uint 1000
  %uint_2000 = OpConstant %uint 2000
         %rt = OpTypeRuntimeArray %uint
          %S = OpTypeStruct %rt
       %ptrS = OpTypePointer StorageBuffer %S
       %ptru = OpTypePointer StorageBuffer %uint
      %ptrFu = OpTypePointer Function %uint
      %ptrin = OpTypePointer Input %v3uint
        %lid = OpVariable %ptrin Input
        %buf = OpVariable %ptrS StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %v = OpVariable %ptrFu Function
          %w = OpVariable %ptrFu Function
          %u = OpVariable %ptrFu Function
         %l3 = OpLoad %v3uint %lid
          %l = OpCompositeExtract %uint %l3 0
               OpStore %v %uint_7
               OpStore %w %l
               OpStore %u %uint_100
               OpBranch %header
     %header = OpLabel
          %i = OpPhi %uint %uint_0 %entry %inext %cont
         %lt = OpULessThan %bool %i %uint_3
               OpLoopMerge %merge %cont None
               OpBranchConditional %lt %body %merge
       %body = OpLabel
          %x = OpLoad %uint %w
          %y = OpLoad %uint %v
         %ux = OpLoad %uint %u
         %x1 = OpIAdd %uint %x %y
               OpStore %w %x1
         %xs = OpIMul %uint %x %uint_1000
         %o1 = OpIAdd %uint %xs %ux
         %k4 = OpIMul %uint %i %uint_3
        %row = OpIAdd %uint %k4 %uint_1
        %idx = OpIMul %uint %row %uint_3
        %at0 = OpIAdd %uint %idx %l
         %p1 = OpAccessChain %ptru %buf %uint_0 %at0
               OpStore %p1 %o1
               OpBranch %later
      %later = OpLabel
        %ux1 = OpIAdd %uint %ux %uint_1
               OpStore %u %ux1
        %ou2 = OpIAdd %uint %ux %y
        %at2 = OpIAdd %uint %at0 %uint_1000
         %p2 = OpAccessChain %ptru %buf %uint_0 %at2
               OpStore %p2 %ou2
               OpBranch %cont
       %cont = OpLabel
      %inext = OpIAdd %uint %i %uint_1
               OpBranch %header
      %merge = OpLabel
          %z = OpLoad %uint %w
         %z7 = OpIAdd %uint %z %uint_7
               OpStore %w %z7
        %atz = OpIAdd %uint %l %uint_2000
         %pz = OpAccessChain %ptru %buf %uint_0 %atz
               OpStore %pz %z
         %z2 = OpLoad %uint %w
       %atz2 = OpIAdd %uint %atz %uint_7
        %pz2 = OpAccessChain %ptru %buf %uint_0 %atz2
               OpStore %pz2 %z2
               OpReturn
               OpFunctionEnd
"#,
    ) else {
        return;
    };
    let p = Pipeline::compile(&m, "main", &Default::default(), &EngineOptions::default()).unwrap();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 4 * 2048]);
    p.dispatch(&mut res, [1, 1, 1]).unwrap();
    let out = u32s(&res.buffers[&(0, 0)]);
    for l in 0..4u32 {
        // w: l, l + 7, l + 14 at the loads of the three trips; l + 21 after the loop.
        assert_eq!(out[2000 + l as usize], l + 21, "lane {l} after the loop");
        assert_eq!(out[2007 + l as usize], l + 28, "lane {l} at the end");
        for i in 0..3u32 {
            let at = ((3 * i + 1) * 3 + l) as usize;
            assert_eq!(out[at], (l + 7 * i) * 1000 + 100 + i, "lane {l} trip {i}");
            assert_eq!(out[at + 1000], 100 + i + 7, "lane {l} trip {i}, u");
        }
    }
}

/// A store to a built-in input (which SPIR-V forbids: Input memory is read-only) is an error that
/// names the store, not a value the next workgroups of the batch would read: a batch writes the
/// built-ins that do not depend on the workgroup once and keeps them.
#[test]
fn a_store_to_a_built_in_input_is_refused() {
    let src = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %lid
               OpExecutionMode %main LocalSize 8 1 1
               OpDecorate %lid BuiltIn LocalInvocationId
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
     %v3uint = OpTypeVector %uint 3
      %ptrin = OpTypePointer Input %v3uint
        %lid = OpVariable %ptrin Input
        %big = OpConstant %uint 1000
        %vec = OpConstantComposite %v3uint %big %big %big
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpStore %lid %vec
               OpReturn
               OpFunctionEnd
"#;
    let Some(m) = spvasm(src) else {
        return;
    };
    let p = Pipeline::compile(&m, "main", &Default::default(), &EngineOptions::default()).unwrap();
    let mut res = Resources::default();
    let e = p.dispatch(&mut res, [4, 1, 1]).unwrap_err();
    assert!(e.place.contains("OpStore"), "{e}");
}
