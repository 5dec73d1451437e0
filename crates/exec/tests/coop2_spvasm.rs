//! Hand-written SPIR-V (assembled with coopmat_spirv::asm) for SPV_EXT_cooperative_matrix_maintenance1,
//! which glslang cannot emit: OpCooperativeMatrixGetCoordinateEXT and OpCooperativeMatrixConvertUseEXT
//! with the CooperativeMatrixTransposeEXT decoration. Expected values are computed in the test.

use coopmat_exec::{EngineOptions, Pipeline, Resources};

/// A 16x8 f32 Accumulator (subgroup scope, 32 lanes: Length 4) loaded row-major from buffer 0;
/// every lane writes (row, col) of each of its 4 components to buffer 1 at (lane*4 + i)*2, and
/// the transposed B (8x16) is stored row-major to buffer 2.
const SRC: &str = r#"
               OpCapability Shader
               OpCapability VulkanMemoryModel
               OpCapability CooperativeMatrixKHR
               OpCapability CooperativeMatrixConversionsEXT
               OpCapability CooperativeMatrixGetCoordinateEXT
               OpExtension "SPV_KHR_cooperative_matrix"
               OpExtension "SPV_EXT_cooperative_matrix_maintenance1"
               OpMemoryModel Logical Vulkan
               OpEntryPoint GLCompute %main "main" %lid
               OpExecutionMode %main LocalSize 32 1 1
               OpDecorate %lid BuiltIn LocalInvocationIndex
               OpDecorate %rt ArrayStride 4
               OpDecorate %S Block
               OpMemberDecorate %S 0 Offset 0
               OpDecorate %in DescriptorSet 0
               OpDecorate %in Binding 0
               OpDecorate %co DescriptorSet 0
               OpDecorate %co Binding 1
               OpDecorate %tr DescriptorSet 0
               OpDecorate %tr Binding 2
               OpDecorate %bt CooperativeMatrixTransposeEXT
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
      %float = OpTypeFloat 32
      %v2int = OpTypeVector %int 2
         %rt = OpTypeRuntimeArray %float
          %S = OpTypeStruct %rt
       %ptrS = OpTypePointer StorageBuffer %S
       %ptrf = OpTypePointer StorageBuffer %float
      %ptrin = OpTypePointer Input %uint
        %lid = OpVariable %ptrin Input
         %in = OpVariable %ptrS StorageBuffer
         %co = OpVariable %ptrS StorageBuffer
         %tr = OpVariable %ptrS StorageBuffer
       %zero = OpConstant %uint 0
      %izero = OpConstant %int 0
       %ione = OpConstant %int 1
       %four = OpConstant %int 4
        %two = OpConstant %uint 2
         %u1 = OpConstant %uint 1
         %u3 = OpConstant %uint 3
        %u16 = OpConstant %uint 16
         %u8 = OpConstant %uint 8
        %acc = OpConstant %uint 2
         %ub = OpConstant %uint 1
        %row = OpConstant %uint 0
        %MAc = OpTypeCooperativeMatrixKHR %float %u3 %u16 %u8 %acc
        %MBt = OpTypeCooperativeMatrixKHR %float %u3 %u8 %u16 %ub
       %bool = OpTypeBool
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %l = OpLoad %uint %lid
         %p0 = OpAccessChain %ptrf %in %zero %zero
          %m = OpCooperativeMatrixLoadKHR %MAc %p0 %row %u8
         %bt = OpCooperativeMatrixConvertUseEXT %MBt %m
         %q0 = OpAccessChain %ptrf %tr %zero %zero
               OpCooperativeMatrixStoreKHR %q0 %bt %row %u16
               OpBranch %loop
       %loop = OpLabel
          %i = OpPhi %int %izero %entry %inext %body
               OpLoopMerge %done %body None
               OpBranch %head
       %head = OpLabel
         %lt = OpSLessThan %bool %i %four
               OpBranchConditional %lt %body %done
       %body = OpLabel
         %rc = OpCooperativeMatrixGetCoordinateEXT %v2int %m %i
          %r = OpCompositeExtract %int %rc 0
          %c = OpCompositeExtract %int %rc 1
         %l4 = OpIMul %uint %l %u8
         %iu = OpBitcast %uint %i
         %i2 = OpIMul %uint %iu %two
        %off = OpIAdd %uint %l4 %i2
         %pr = OpAccessChain %ptrf %co %zero %off
         %rf = OpConvertSToF %float %r
               OpStore %pr %rf
       %off1 = OpIAdd %uint %off %u1
         %pc = OpAccessChain %ptrf %co %zero %off1
         %cf = OpConvertSToF %float %c
               OpStore %pc %cf
      %inext = OpIAdd %int %i %ione
               OpBranch %loop
       %done = OpLabel
               OpReturn
               OpFunctionEnd
"#;

#[test]
fn get_coordinate_and_transposing_convert_use() {
    let words = coopmat_spirv::asm::assemble(SRC, &Default::default()).unwrap();
    let m = coopmat_spirv::Module::from_words(&words).unwrap();
    let p = Pipeline::compile(&m, "", &Default::default(), &EngineOptions::default()).unwrap();
    let a: Vec<f32> = (0..128).map(|i| i as f32 * 1.5 - 20.0).collect();
    let mut r = Resources::default();
    r.buffers
        .insert((0, 0), a.iter().flat_map(|x| x.to_le_bytes()).collect());
    r.buffers.insert((0, 1), vec![0; 256 * 4]);
    r.buffers.insert((0, 2), vec![0; 128 * 4]);
    p.dispatch(&mut r, [1, 1, 1]).unwrap();
    let f = |k: (u32, u32)| -> Vec<f32> {
        r.buffers[&k]
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let (co, tr) = (f((0, 1)), f((0, 2)));
    // Transpose: B[c][r] = A[r][c].
    for rr in 0..16 {
        for cc in 0..8 {
            assert_eq!(tr[cc * 16 + rr], a[rr * 8 + cc], "B ({cc},{rr})");
        }
    }
    // Every element is named exactly once by some (lane, component), and GetCoordinate
    // agrees with what OpCompositeExtract of that component holds (the engine's mapping:
    // element l + 32 i in row-major order).
    let mut seen = [false; 128];
    for l in 0..32usize {
        for i in 0..4usize {
            let (row, col) = (co[(l * 4 + i) * 2], co[(l * 4 + i) * 2 + 1]);
            assert!((0.0..16.0).contains(&row) && (0.0..8.0).contains(&col));
            let e = row as usize * 8 + col as usize;
            assert!(!seen[e], "element {e} named twice");
            seen[e] = true;
            assert_eq!(e, l + 32 * i, "lane {l} component {i}");
        }
    }
}
