//! Inputs the `lower` fuzz target found, each now refused with a reason instead of a panic or a
//! rewrite of unbounded size.

use coopmat_lower::{LowerError, qcom_to_khr, strip_decode_vector};
use coopmat_spirv::Module;

fn module(text: &str) -> Module {
    let words = coopmat_spirv::asm::assemble(text, &Default::default()).unwrap();
    Module::from_words(&words).unwrap()
}

const QCOM: &str = r#"
               OpCapability Shader
               OpCapability Float16
               OpCapability CooperativeMatrixKHR
               OpCapability CooperativeMatrixConversionQCOM
               OpExtension "SPV_KHR_cooperative_matrix"
               OpExtension "SPV_QCOM_cooperative_matrix_conversion"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 64 1 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %half = OpTypeFloat 16
       %uint = OpTypeInt 32 0
   %Subgroup = OpConstant %uint 3
         %u0 = OpConstant %uint 0
        %u16 = OpConstant %uint 16
        %len = OpConstant %uint LEN
        %arr = OpTypeArray %uint %len
       %matA = OpTypeCooperativeMatrixKHR %half %Subgroup %u16 %u16 %u0
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %w = OpUndef %arr
          %m = OpCompositeConstructCoopMatQCOM %matA %w
               OpReturn
               OpFunctionEnd
"#;

/// An array of 2^31 elements made qcom-to-khr emit an instruction per element (a libFuzzer
/// timeout); the extension's arrays have at most 256 bytes.
#[test]
fn a_huge_qcom_array_is_refused() {
    let mut m = module(&QCOM.replace("LEN", "2147483648"));
    match qcom_to_khr(&mut m) {
        Err(LowerError::Refused(why)) => assert!(why.contains("2147483648 elements"), "{why}"),
        other => panic!("{other:?}"),
    }
    // The same module with the 8 words a packed 16x16 float16 row takes is lowered.
    let mut m = module(&QCOM.replace("LEN", "8"));
    assert!(qcom_to_khr(&mut m).is_ok());
}

/// A tensor load whose TensorAddressingOperands name DecodeVectorFunc without its id made
/// strip-decode-vector index past the instruction (a panic).
#[test]
fn a_decode_vector_bit_without_its_operand_is_refused() {
    let text = r#"
               OpCapability Shader
               OpCapability CooperativeMatrixKHR
               OpCapability CooperativeMatrixTensorAddressingNV
               OpCapability TensorAddressingNV
               OpExtension "SPV_KHR_cooperative_matrix"
               OpExtension "SPV_NV_cooperative_matrix2"
               OpExtension "SPV_NV_tensor_addressing"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 32 1 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %float = OpTypeFloat 32
       %uint = OpTypeInt 32 0
         %u2 = OpConstant %uint 2
         %u3 = OpConstant %uint 3
         %u0 = OpConstant %uint 0
        %u16 = OpConstant %uint 16
         %tl = OpTypeTensorLayoutNV %u2 %u0
        %mat = OpTypeCooperativeMatrixKHR %float %u3 %u16 %u16 %u2
        %arr = OpTypeRuntimeArray %float
        %blk = OpTypeStruct %arr
       %pblk = OpTypePointer StorageBuffer %blk
        %pel = OpTypePointer StorageBuffer %float
        %buf = OpVariable %pblk StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %l = OpCreateTensorLayoutNV %tl
          %o = OpUndef %mat
          %p = OpAccessChain %pel %buf %u0 %u0
          %x = OpCooperativeMatrixLoadTensorNV %mat %p %o %l None None
               OpReturn
               OpFunctionEnd
"#;
    let mut m = module(text);
    // Set the DecodeVectorFunc bit (0x4) in the last word, the TensorAddressingOperands mask,
    // without adding its operand.
    let load = m
        .instructions
        .iter_mut()
        .find(|i| i.opcode == coopmat_spirv::grammar::op::CooperativeMatrixLoadTensorNV)
        .unwrap();
    *load.words.last_mut().unwrap() = 0x4;
    match strip_decode_vector(&mut m) {
        Err(LowerError::Refused(why)) => assert!(why.contains("without its operand"), "{why}"),
        other => panic!("{other:?}"),
    }
}
