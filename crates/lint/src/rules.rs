//! The rule table: a stable name, a default level, a summary and the explanation that quotes the
//! specification sentence the rule rests on (`coopmat lint --explain RULE`).

use serde::Serialize;

/// How a finding is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// A bug: the module breaks a rule of the specifications (exit status 2).
    Deny,
    /// Probably not what was meant, or slow (exit status 1 with `--deny-warnings`).
    Warn,
    /// Worth knowing; never changes the exit status.
    Info,
    /// Not reported.
    Allow,
}

impl Level {
    /// The name as the command line and the outputs spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Deny => "deny",
            Level::Warn => "warn",
            Level::Info => "info",
            Level::Allow => "allow",
        }
    }

    /// Parses `deny`, `warn`, `info` or `allow`.
    pub fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "deny" => Level::Deny,
            "warn" => Level::Warn,
            "info" => Level::Info,
            "allow" => Level::Allow,
            _ => return None,
        })
    }
}

/// A lint rule.
#[derive(Debug)]
pub struct Rule {
    /// Stable name, e.g. `coopmat-nonuniform-operand`.
    pub name: &'static str,
    /// Level unless configured.
    pub default: Level,
    /// One line.
    pub summary: &'static str,
    /// One paragraph, quoting the specification.
    pub explanation: &'static str,
}

/// `coopmat-nonuniform-operand`.
pub static NONUNIFORM_OPERAND: Rule = Rule {
    name: "coopmat-nonuniform-operand",
    default: Level::Deny,
    summary: "an operand of a cooperative-matrix instruction is not uniform within the matrix's scope",
    explanation: "SPV_KHR_cooperative_matrix, OpCooperativeMatrixLoadKHR/StoreKHR/MulAddKHR: \"All the operands to this instruction must be dynamically uniform within every instance of the Scope of the cooperative matrix.\" SPV_NV_cooperative_matrix2 says the same of OpCooperativeMatrixLoadTensorNV, StoreTensorNV, ReduceNV, PerElementOpNV, ConvertNV and TransposeNV, and the arithmetic, conversion and construction instructions on matrices are tangled in the same way. A pointer, stride, layout, tensor layout or matrix that differs between the invocations of one subgroup (or workgroup, for Workgroup-scope matrices) makes the result undefined. The finding names the operand and shows how its value comes to vary: the chain ends at a built-in such as LocalInvocationId, a memory read, or a branch whose condition varies.",
};

/// `coopmat-divergent-control-flow`.
pub static DIVERGENT_CONTROL_FLOW: Rule = Rule {
    name: "coopmat-divergent-control-flow",
    default: Level::Deny,
    summary: "a cooperative-matrix instruction is reached in control flow that is not uniform at its scope",
    explanation: "SPV_KHR_cooperative_matrix, OpTypeCooperativeMatrixKHR: \"All dynamic instances of an instruction with an operand or result of this type must be executed such that all the invocations in the Scope instance are active or none of them are.\" An instruction inside an if whose condition varies within the scope, in a loop some invocations have left, or after an early return taken by some invocations breaks this: the chain shows the branch. Elements of a matrix may be read and written in non-uniform control flow (issue 11 of the extension): those instructions are not reported.",
};

/// `coopvec-nonuniform-matrix-operand`.
pub static COOPVEC_NONUNIFORM_MATRIX_OPERAND: Rule = Rule {
    name: "coopvec-nonuniform-matrix-operand",
    default: Level::Warn,
    summary: "a matrix operand of a cooperative-vector multiply or accumulate diverges within the subgroup (serialized execution)",
    explanation: "SPV_NV_cooperative_vector: \"cooperative vectors don't require a fully occupied subgroup or uniform control flow\", so this is no bug. But implementations run the matrix-vector product on the tensor units once per distinct matrix operand tuple in the subgroup: a Matrix, MatrixOffset, MatrixStride, MatrixInterpretation, MemoryLayout, Transpose, Bias, BiasOffset or BiasInterpretation operand of OpCooperativeVectorMatrixMulNV or MatrixMulAddNV (or the Pointer, Offset and layout operands of OuterProductAccumulateNV and ReduceSumAccumulateNV) that differs between invocations serializes the subgroup. This is the SPIR-V form of the HLSL linter rule coopvec-non-uniform-matrix-handle; unlike a text match, it follows the value through arithmetic, variables and branches.",
};

/// `coopmat-workgroup-size-vs-subgroup`.
pub static WORKGROUP_SIZE_VS_SUBGROUP: Rule = Rule {
    name: "coopmat-workgroup-size-vs-subgroup",
    default: Level::Warn,
    summary: "a module with Subgroup-scope cooperative matrices has a workgroup size that is not a multiple of the subgroup size (32, or the profile's), so its last subgroup is partial",
    explanation: "SPV_KHR_cooperative_matrix, OpTypeCooperativeMatrixKHR: \"All dynamic instances of an instruction with an operand or result of this type must be executed such that all the invocations in the Scope instance are active or none of them are.\" A workgroup whose invocation count is not a multiple of the subgroup size has a last subgroup with inactive invocations, so every Subgroup-scope matrix instruction it executes breaks this rule. The check uses the subgroup size of `--profile` when one is given, otherwise 32, the subgroup size of the devices that expose cooperative matrices today (NVIDIA; also the smallest of AMD's wave32/wave64), and a workgroup size stated with plain constants; sizes given by specialization constants are not checked.",
};

/// `coopmat-tangled-in-callback`.
pub static TANGLED_IN_CALLBACK: Rule = Rule {
    name: "coopmat-tangled-in-callback",
    default: Level::Deny,
    summary: "a tangled instruction (cooperative matrix, group or subgroup operation, control barrier) in a function the implementation calls per element (DecodeFunc, CombineFunc, PerElementOp Func) or in a function it calls",
    explanation: "SPV_NV_cooperative_matrix2 (and SPV_NV_tensor_addressing for DecodeFunc): the functions used as DecodeFunc, as the CombineFunc of OpCooperativeMatrixReduceNV and as the Func of OpCooperativeMatrixPerElementOpNV \"must not contain any tangled instructions\", nor may anything they call directly or indirectly. The implementation calls them per element, in no defined grouping of invocations, so an instruction that needs the invocations of a scope to run together has no meaning there. The finding names the instruction and the instruction that makes its function a callback.",
};

/// `coopvec-layout-and-alignment`.
pub static COOPVEC_LAYOUT_AND_ALIGNMENT: Rule = Rule {
    name: "coopvec-layout-and-alignment",
    default: Level::Deny,
    summary: "a constant offset, stride, layout or transpose of a cooperative-vector instruction breaks the Vulkan alignment and layout rules",
    explanation: "Vulkan, Runtime SPIR-V Validation: \"For OpCooperativeVectorLoadNV and OpCooperativeVectorStoreNV instructions, the Pointer and Offset must be aligned to 16 bytes\" (VUID-RuntimeSpirv-OpCooperativeVectorLoadNV-10099); \"the Matrix and MatrixOffset must be aligned to 64 bytes\" (-10097); \"the Bias and BiasOffset must be aligned to 16 bytes\" (-10098); \"for OpCooperativeVectorMatrixMulNV and OpCooperativeVectorMatrixMulAddNV instructions using non-optimal layouts, the Stride operand must be aligned to 16 bytes\" (-10096); ReduceSumAccumulateNV's Pointer and Offset 16 bytes (-10100), OuterProductAccumulateNV's 64 bytes (-10101) and only in the training-optimal layout (-10093); an E4M3 or E5M2 MatrixInterpretation needs an optimal layout (-10090); and SPV_NV_cooperative_vector: \"Transposing is not supported for the RowMajorNV/ColumnMajorNV layouts.\" The rule checks the operands that are constants (offsets and strides computed at run time are the engine's to check: it reports a misaligned address naming the invocation).",
};

/// `coopmat-store-stride-overlap`.
pub static STORE_STRIDE_OVERLAP: Rule = Rule {
    name: "coopmat-store-stride-overlap",
    default: Level::Warn,
    summary: "a cooperative-matrix store whose constant stride is shorter than a row (column-major: a column), so the rows it writes overlap; a tensor store whose layout has a block size above 1",
    explanation: "SPV_KHR_cooperative_matrix, OpCooperativeMatrixStoreKHR: \"Stride is the number of elements in the array pointed to by Pointer between the first component of consecutive rows (or columns)\". With a stride below the length of a row, consecutive rows share memory: different invocations write different elements to the same addresses, and the spec does not say which value remains. Loads with such strides are legal (they read the same data twice) and are not reported. The rule checks stores whose stride, layout and matrix size are constants (KHR and NV). It also reports OpCooperativeMatrixStoreTensorNV with a tensor layout whose block size can be above 1 in some dimension (SPV_NV_cooperative_matrix2: \"a block size larger than 1 must not be used with OpCooperativeMatrixStoreTensorNV because it will lead to data races\").",
};

/// `coopmat-unsupported-configuration`.
pub static UNSUPPORTED_CONFIGURATION: Rule = Rule {
    name: "coopmat-unsupported-configuration",
    default: Level::Deny,
    summary: "with --profile: a cooperative matrix or vector configuration the device does not support (types, shapes, MulAdd tuples, scopes, workgroup sizes, cooperative-vector combinations)",
    explanation: "Vulkan, Runtime SPIR-V Validation: a cooperative matrix type must match an entry of vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR (VUID-RuntimeSpirv-OpTypeCooperativeMatrixKHR-10163), a MulAdd a supported (M, N, K, A, B, C, Result, saturating, scope) tuple (-10060), a cooperative-vector product an entry of vkGetPhysicalDeviceCooperativeVectorPropertiesNV (VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10089), and so on. With --profile NAME (a built-in such as nvidia-h100-580 or lavapipe-26, or a profile JSON) the linter runs the validator's device-profile rules and reports each as a finding naming the rule it broke; without a profile the rule is silent.",
};

/// `coopmat-decode-vector-block-size`.
pub static DECODE_VECTOR_BLOCK_SIZE: Rule = Rule {
    name: "coopmat-decode-vector-block-size",
    default: Level::Deny,
    summary: "a tensor load with a DecodeVectorFunc of V components whose tensor layout's innermost block size can be a number that is not a multiple of V (1 when never set)",
    explanation: "SPV_NV_cooperative_matrix_decode_vector, OpCooperativeMatrixLoadTensorNV: \"The behavior of OpCooperativeMatrixLoadTensorNV is undefined when DecodeVectorFunc is invoked if the following requirement is not satisfied: blockSize[LDim-1] must be a multiple of V\" (and Vulkan, VUID-RuntimeSpirv-OpCooperativeMatrixLoadTensorNV-12429). The implementation chooses at each load whether to call DecodeVectorFunc, so a wrong block size breaks on some drivers and not others. A tensor layout's block size is 1 in every dimension until OpTensorLayoutSetBlockSizeNV sets it, a common way to break the rule. The rule follows the layout back through the layout instructions, variables, phis and calls, and reports every block size that can reach the load (a specialization constant by its default value), with the instruction that sets it.",
};

/// `coopmat-decode-vector-opportunity`.
pub static DECODE_VECTOR_OPPORTUNITY: Rule = Rule {
    name: "coopmat-decode-vector-opportunity",
    default: Level::Info,
    summary: "a tensor load with a scalar DecodeFunc only, whose every innermost block size allows a DecodeVectorFunc of 2, 4 or 8 components",
    explanation: "SPV_NV_cooperative_matrix_decode_vector, overview: \"Most quantized weight formats are naturally unpacked in groups (e.g. several nibbles or bits out of the same packed word), so calling the decode function once per element makes the implementation redo that unpack work for every element that shares a packed source.\" A DecodeVectorFunc returning V components (V = 2, 4 or 8, with blockSize[LDim-1] a multiple of V) lets the implementation decode V block-adjacent elements per call. The rule names the largest V that every block size reaching the load allows; it is a suggestion for devices that expose VK_NV_cooperative_matrix_decode_vector (the DecodeFunc stays: it is required, and the implementation picks either).",
};

/// `coopmat-qcom-subgroup-requirements`.
pub static QCOM_SUBGROUP_REQUIREMENTS: Rule = Rule {
    name: "coopmat-qcom-subgroup-requirements",
    default: Level::Deny,
    summary: "a QCOM cooperative construct or extract whose rows (columns for Use B) outnumber the invocations of a subgroup; with --profile, a subgroup size the extension does not allow",
    explanation: "SPV_QCOM_cooperative_matrix_conversion, OpCompositeConstructCoopMatQCOM: \"The array from invocation with SubgroupLocalInvocationID i goes to the i-th row of the resulting cooperative matrix if the cooperative matrix object's Use is MatrixAKHR or MatrixAccumulatorKHR and to the i-th column if MatrixBKHR\"; its Rows (Columns) \"must be one of the supported cooperative matrix row sizes that are less than or equal to SubgroupSize\", and \"SubgroupSize must be a power of 2. For non power of two SubgroupSize, the behaviors are undefined.\" OpCompositeExtractCoopMatQCOM distributes rows or columns the same way. A workgroup with fewer invocations than the matrix has rows can have no such subgroup; with --profile the device's subgroup size is checked too, and (GLSL_QCOM_cooperative_matrix_conversion) an accumulator's NumCols must be the subgroup size, half or a quarter of it.",
};

/// `coopmat-mapping-dependence`.
pub static MAPPING_DEPENDENCE: Rule = Rule {
    name: "coopmat-mapping-dependence",
    default: Level::Warn,
    summary: "code that reads or writes cooperative-matrix components as if it knew which (row, column) each index of each invocation holds",
    explanation: "SPV_KHR_cooperative_matrix, \"Cooperative Matrix\": \"A cooperative matrix is a composite with an implementation-dependent number of components ... The mapping of components to invocations and indexes is implementation-dependent.\" Component-wise code that treats every component alike (m[i] = f(m[i]) with f the same for all) is portable; code that singles a component out is not. The rule reports: a constant index into a matrix whose components may differ (m[0] reads some unknown element; a splat such as a full reduction is fine); a write of one constant component; a component written with a value computed from its own index or from the invocation's identity (LocalInvocationId, LocalInvocationIndex, GlobalInvocationId, SubgroupLocalInvocationId); a component of one matrix type set from the same index of another type (an A or B matrix and an accumulator need not share a mapping); and a component written to memory at an address computed from its index. OpCooperativeMatrixGetCoordinateEXT (SPV_EXT_cooperative_matrix_maintenance1), a cooperative store, or a per-element operation (OpCooperativeMatrixPerElementOpNV, which receives the row and column) are the portable ways.",
};

/// `coopmat-layout-for-use`.
pub static LAYOUT_FOR_USE: Rule = Rule {
    name: "coopmat-layout-for-use",
    default: Level::Warn,
    summary: "with --profile: a cooperative-matrix load in a memory layout the device was measured to load slowly for the matrix's Use and type, or a blocked-interleaved (Arm) layout the device lacks",
    explanation: "SPV_KHR_cooperative_matrix lets any matrix be loaded row- or column-major (\"MemoryLayout specifies how matrix elements are laid out in memory\"), but the hardware's register layout is fixed per Use, so one of the two is a transposing load. On the lent H100 (NVIDIA 580) loading a Use A matrix column-major took 141 % (float16) and 163 % (sint8) of the row-major time, while Use B showed no preference (103-104 %): bench/layout/ measures it, and the profile's layout_costs record it (the rule reports costs of 120 % and more). Storing the data in the layout the Use prefers, or transposing once into shared memory, avoids it. SPV_ARM_cooperative_matrix_layouts' RowBlockedInterleavedARM and ColumnBlockedInterleavedARM need VK_ARM_cooperative_matrix_layouts, which the profile says whether the device exposes. Silent without --profile.",
};

/// Every rule, in table order.
pub static RULES: &[&Rule] = &[
    &NONUNIFORM_OPERAND,
    &DIVERGENT_CONTROL_FLOW,
    &COOPVEC_NONUNIFORM_MATRIX_OPERAND,
    &WORKGROUP_SIZE_VS_SUBGROUP,
    &TANGLED_IN_CALLBACK,
    &COOPVEC_LAYOUT_AND_ALIGNMENT,
    &STORE_STRIDE_OVERLAP,
    &UNSUPPORTED_CONFIGURATION,
    &DECODE_VECTOR_BLOCK_SIZE,
    &DECODE_VECTOR_OPPORTUNITY,
    &QCOM_SUBGROUP_REQUIREMENTS,
    &MAPPING_DEPENDENCE,
    &LAYOUT_FOR_USE,
];

/// Finds a rule by name.
pub fn by_name(name: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|r| r.name == name)
}
