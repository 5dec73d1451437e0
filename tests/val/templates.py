"""Base modules for the validator's test cases (see gen_cases.py). Each is valid under
spirv-val 2026.4 --target-env vulkan1.3; placeholders {CAPS} {EXTS} {MODES} {DECOR} {TYPES}
{VARS} {BODY} {DECBODY} {FUNCS} take a case's additions."""

COOP2 = r"""               OpCapability Shader
               OpCapability Float16
               OpCapability Int8
               OpCapability StorageBuffer16BitAccess
               OpCapability StorageBuffer8BitAccess
               OpCapability VulkanMemoryModel
               OpCapability PhysicalStorageBufferAddresses
               OpCapability CooperativeMatrixKHR
               OpCapability CooperativeMatrixReductionsNV
               OpCapability CooperativeMatrixConversionsNV
               OpCapability CooperativeMatrixPerElementOperationsNV
               OpCapability CooperativeMatrixTensorAddressingNV
               OpCapability CooperativeMatrixBlockLoadsNV
               OpCapability TensorAddressingNV
               OpCapability CooperativeMatrixDecodeVectorNV
{CAPS}
               OpExtension "SPV_KHR_cooperative_matrix"
               OpExtension "SPV_NV_cooperative_matrix2"
               OpExtension "SPV_NV_tensor_addressing"
               OpExtension "SPV_NV_cooperative_matrix_decode_vector"
{EXTS}
               OpMemoryModel PhysicalStorageBuffer64 Vulkan
               OpEntryPoint GLCompute %main "main" %buf
               OpExecutionMode %main LocalSize 32 1 1
{MODES}
               OpDecorate %rta ArrayStride 2
               OpMemberDecorate %blk 0 Offset 0
               OpDecorate %blk Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
               OpMemberDecorate %psbs 0 Offset 0
               OpDecorate %psbs Block
{DECOR}
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
      %float = OpTypeFloat 32
       %half = OpTypeFloat 16
      %uchar = OpTypeInt 8 0
     %v2half = OpTypeVector %half 2
     %v4half = OpTypeVector %half 4
         %u0 = OpConstant %uint 0
         %u1 = OpConstant %uint 1
         %u2 = OpConstant %uint 2
         %u3 = OpConstant %uint 3
         %u4 = OpConstant %uint 4
         %u8 = OpConstant %uint 8
        %u16 = OpConstant %uint 16
        %u32 = OpConstant %uint 32
      %false = OpConstantFalse %bool
       %true = OpConstantTrue %bool
         %h1 = OpConstant %half 1
       %v4h1 = OpConstantComposite %v4half %h1 %h1 %h1 %h1
        %rta = OpTypeRuntimeArray %half
        %blk = OpTypeStruct %rta
       %pbuf = OpTypePointer StorageBuffer %blk
        %buf = OpVariable %pbuf StorageBuffer
         %ph = OpTypePointer StorageBuffer %half
       %matA = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u16 %u0
       %matB = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u16 %u1
       %matC = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u16 %u2
    %layout2 = OpTypeTensorLayoutNV %u2 %u0
      %view2 = OpTypeTensorViewNV %u2 %false %u0 %u1
       %psbs = OpTypeStruct %half
       %ppsb = OpTypePointer PhysicalStorageBuffer %psbs
       %arr2 = OpTypeArray %uint %u2
      %decfn = OpTypeFunction %half %ppsb %arr2 %arr2
     %decvfn = OpTypeFunction %v4half %ppsb %arr2 %arr2
     %combfn = OpTypeFunction %half %half %half
       %pefn = OpTypeFunction %half %uint %uint %half
{TYPES}
       %main = OpFunction %void None %fn
      %entry = OpLabel
{VARS}
          %p = OpAccessChain %ph %buf %u0 %u0
          %a = OpCooperativeMatrixLoadKHR %matA %p %u0 %u16
          %b = OpCooperativeMatrixLoadKHR %matB %p %u0 %u16
          %c = OpCooperativeMatrixLoadKHR %matC %p %u0 %u16
          %d = OpCooperativeMatrixMulAddKHR %matC %a %b %c
               OpCooperativeMatrixStoreKHR %p %d %u0 %u16
         %l0 = OpCreateTensorLayoutNV %layout2
         %l1 = OpTensorLayoutSetDimensionNV %layout2 %l0 %u16 %u16
         %l2 = OpTensorLayoutSetBlockSizeNV %layout2 %l1 %u1 %u4
          %t = OpCooperativeMatrixLoadTensorNV %matA %p %a %l2 None DecodeFunc|DecodeVectorFunc %dec %decv
         %v0 = OpCreateTensorViewNV %view2
         %v1 = OpTensorViewSetDimensionNV %view2 %v0 %u16 %u16
         %tv = OpCooperativeMatrixLoadTensorNV %matA %p %a %l1 None TensorView %v1
               OpCooperativeMatrixStoreTensorNV %p %d %l1 None None
          %r = OpCooperativeMatrixReduceNV %matC %d Row|Column %comb
         %pe = OpCooperativeMatrixPerElementOpNV %matC %d %pef
         %cu = OpCooperativeMatrixConvertNV %matA %d
         %tr = OpCooperativeMatrixTransposeNV %matB %d
{BODY}
               OpReturn
               OpFunctionEnd
        %dec = OpFunction %half None %decfn
        %dp0 = OpFunctionParameter %ppsb
        %dp1 = OpFunctionParameter %arr2
        %dp2 = OpFunctionParameter %arr2
         %dl = OpLabel
{DECBODY}
               OpReturnValue %h1
               OpFunctionEnd
       %decv = OpFunction %v4half None %decvfn
        %vp0 = OpFunctionParameter %ppsb
        %vp1 = OpFunctionParameter %arr2
        %vp2 = OpFunctionParameter %arr2
         %vl = OpLabel
               OpReturnValue %v4h1
               OpFunctionEnd
       %comb = OpFunction %half None %combfn
         %cx = OpFunctionParameter %half
         %cy = OpFunctionParameter %half
         %cl = OpLabel
         %cs = OpFAdd %half %cx %cy
               OpReturnValue %cs
               OpFunctionEnd
        %pef = OpFunction %half None %pefn
       %prow = OpFunctionParameter %uint
       %pcol = OpFunctionParameter %uint
      %pelem = OpFunctionParameter %half
         %pl = OpLabel
               OpReturnValue %pelem
               OpFunctionEnd
{FUNCS}
"""

NV1 = r"""               OpCapability Shader
               OpCapability Float16
               OpCapability StorageBuffer16BitAccess
               OpCapability VulkanMemoryModel
               OpCapability CooperativeMatrixNV
{CAPS}
               OpExtension "SPV_NV_cooperative_matrix"
{EXTS}
               OpMemoryModel Logical Vulkan
               OpEntryPoint GLCompute %main "main" %buf
               OpExecutionMode %main LocalSize 32 1 1
               OpDecorate %rta ArrayStride 2
               OpMemberDecorate %blk 0 Offset 0
               OpDecorate %blk Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
{DECOR}
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
       %half = OpTypeFloat 16
      %float = OpTypeFloat 32
         %u0 = OpConstant %uint 0
         %u3 = OpConstant %uint 3
         %u8 = OpConstant %uint 8
        %u16 = OpConstant %uint 16
      %false = OpConstantFalse %bool
        %rta = OpTypeRuntimeArray %half
        %blk = OpTypeStruct %rta
       %pbuf = OpTypePointer StorageBuffer %blk
        %buf = OpVariable %pbuf StorageBuffer
         %ph = OpTypePointer StorageBuffer %half
        %nvm = OpTypeCooperativeMatrixNV %half %u3 %u16 %u16
{TYPES}
       %main = OpFunction %void None %fn
      %entry = OpLabel
{VARS}
          %p = OpAccessChain %ph %buf %u0 %u0
          %a = OpCooperativeMatrixLoadNV %nvm %p %u16 %false
          %d = OpCooperativeMatrixMulAddNV %nvm %a %a %a
          %n = OpCooperativeMatrixLengthNV %uint %nvm
               OpCooperativeMatrixStoreNV %p %d %u16 %false
{BODY}
               OpReturn
               OpFunctionEnd
{FUNCS}
"""

QCOM = r"""               OpCapability Shader
               OpCapability Float16
               OpCapability Int8
               OpCapability VulkanMemoryModel
               OpCapability CooperativeMatrixConversionQCOM
{CAPS}
               OpExtension "SPV_KHR_cooperative_matrix"
               OpExtension "SPV_QCOM_cooperative_matrix_conversion"
{EXTS}
               OpMemoryModel Logical Vulkan
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 32 1 1
{DECOR}
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
      %float = OpTypeFloat 32
       %half = OpTypeFloat 16
      %uchar = OpTypeInt 8 0
         %u0 = OpConstant %uint 0
         %u1 = OpConstant %uint 1
         %u2 = OpConstant %uint 2
         %u3 = OpConstant %uint 3
         %u8 = OpConstant %uint 8
        %u16 = OpConstant %uint 16
        %u32 = OpConstant %uint 32
         %i0 = OpConstant %int 0
      %arrh16 = OpTypeArray %half %u16
       %arrh8 = OpTypeArray %half %u8
      %arru8 = OpTypeArray %uint %u8
     %parrh16 = OpTypePointer Function %arrh16
       %matA = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u16 %u0
       %matB = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u16 %u1
       %matC = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u16 %u2
{TYPES}
       %main = OpFunction %void None %fn
      %entry = OpLabel
        %var = OpVariable %parrh16 Function
{VARS}
        %arr = OpLoad %arrh16 %var
         %ma = OpCompositeConstructCoopMatQCOM %matA %arr
         %mb = OpCompositeConstructCoopMatQCOM %matB %arr
         %mc = OpCompositeConstructCoopMatQCOM %matC %arr
         %ea = OpCompositeExtractCoopMatQCOM %arrh16 %ma
         %eb = OpCompositeExtractCoopMatQCOM %arrh16 %mb
         %ec = OpCompositeExtractCoopMatQCOM %arrh16 %mc
         %sa = OpExtractSubArrayQCOM %arrh8 %arr %u0
         %bc = OpBitCastArrayQCOM %arru8 %arr
{BODY}
               OpReturn
               OpFunctionEnd
{FUNCS}
"""

COOPVEC = r"""               OpCapability Shader
               OpCapability Float16
               OpCapability StorageBuffer16BitAccess
               OpCapability VulkanMemoryModel
               OpCapability CooperativeVectorNV
               OpCapability CooperativeVectorTrainingNV
{CAPS}
               OpExtension "SPV_NV_cooperative_vector"
{EXTS}
               OpMemoryModel Logical Vulkan
               OpEntryPoint GLCompute %main "main" %buf
               OpExecutionMode %main LocalSize 32 1 1
               OpDecorate %rta ArrayStride 2
               OpMemberDecorate %blk 0 Offset 0
               OpDecorate %blk Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
{DECOR}
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
       %half = OpTypeFloat 16
         %u0 = OpConstant %uint 0
         %u4 = OpConstant %uint 4
         %u8 = OpConstant %uint 8
      %false = OpConstantFalse %bool
        %rta = OpTypeRuntimeArray %half
        %blk = OpTypeStruct %rta
       %pbuf = OpTypePointer StorageBuffer %blk
        %buf = OpVariable %pbuf StorageBuffer
       %prta = OpTypePointer StorageBuffer %rta
         %cv = OpTypeCooperativeVectorNV %half %u4
{TYPES}
       %main = OpFunction %void None %fn
      %entry = OpLabel
{VARS}
         %pa = OpAccessChain %prta %buf %u0
          %x = OpCooperativeVectorLoadNV %cv %pa %u0
          %y = OpCooperativeVectorMatrixMulNV %cv %x %u0 %pa %u0 %u0 %u4 %u4 %u0 %false %u8
               OpCooperativeVectorStoreNV %pa %u0 %y
               OpCooperativeVectorOuterProductAccumulateNV %pa %u0 %x %x %u0 %u0 %u8
               OpCooperativeVectorReduceSumAccumulateNV %pa %u0 %x
{BODY}
               OpReturn
               OpFunctionEnd
{FUNCS}
"""

# A plain compute shader for core-structure cases.
CORE = r"""               OpCapability Shader
{CAPS}
{EXTS}
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 32 1 1
{DECOR}
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
      %float = OpTypeFloat 32
         %u0 = OpConstant %uint 0
         %u1 = OpConstant %uint 1
      %true = OpConstantTrue %bool
{TYPES}
       %main = OpFunction %void None %fn
      %entry = OpLabel
{VARS}
{BODY}
               OpReturn
               OpFunctionEnd
{FUNCS}
"""

TEMPLATES = {"coop2": COOP2, "nv1": NV1, "qcom": QCOM, "coopvec": COOPVEC, "core": CORE}


def render(template, parts=None, subs=()):
    text = TEMPLATES[template]
    for old, new in subs:
        if old not in text:
            raise ValueError(f"substitution target not found: {old!r}")
        text = text.replace(old, new, 1)
    parts = parts or {}
    for key in ["CAPS", "EXTS", "MODES", "DECOR", "TYPES", "VARS", "BODY", "DECBODY", "FUNCS"]:
        text = text.replace("{" + key + "}\n", parts.get(key, "").rstrip("\n") + ("\n" if parts.get(key) else ""))
    return text
