//! The rule registry: every rule has a stable id, the spec reference that decides, a summary,
//! and whether SPIRV-Tools 2026.4 checks it too (`spt: false` marks a gap we fill).

/// How a finding of a rule is reported unless the user says otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// An error: the module is invalid (every rule of the specifications) or, for a lint, a bug.
    Deny,
    /// A warning: legal, but probably not what was meant, or slow.
    Warn,
    /// Off unless asked for.
    Allow,
}

impl Level {
    /// The level's name as the command line spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Deny => "deny",
            Level::Warn => "warn",
            Level::Allow => "allow",
        }
    }
}

/// A validation rule.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// Stable id, e.g. `KHR-MulAdd-Shape`.
    pub id: &'static str,
    /// Where the rule comes from: extension or spec, and section or instruction.
    pub spec: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// Whether SPIRV-Tools 2026.4 checks this rule as well.
    pub spt: bool,
    /// The default level of its findings: `Deny` for every rule of the specifications (a
    /// violation makes the module invalid); lint rules (`coopmat lint`) may default lower.
    pub level: Level,
}

macro_rules! rules {
    (@level) => { Level::Deny };
    (@level $level:ident) => { Level::$level };
    ($($name:ident = $id:literal, $spt:literal, $spec:literal, $summary:literal $(, $level:ident)?;)*) => {
        $(
            #[doc = $summary]
            pub static $name: Rule = Rule {
                id: $id,
                spec: $spec,
                summary: $summary,
                spt: $spt,
                level: rules!(@level $($level)?),
            };
        )*
        /// Every rule, in registry order.
        pub static ALL: &[&Rule] = &[$(&$name),*];
    };
}

/// Finds a rule by id.
pub fn by_id(id: &str) -> Option<&'static Rule> {
    ALL.iter().copied().find(|r| r.id == id)
}

rules! {
    // ---- core structure -------------------------------------------------------------------
    CORE_STRUCTURE = "Core-Structure", true, "SPIR-V 2.3 Physical Layout / 2.4 Logical Layout (function and block structure)", "the binary parses and functions/blocks are properly delimited (OpFunctionEnd, terminators, labels)";
    CORE_HEADER = "Core-Header", true, "SPIR-V 2.3 Physical Layout", "header: version known and within the target environment, id bound within the limit";
    CORE_LAYOUT = "Core-Layout-Order", true, "SPIR-V 2.4 Logical Layout of a Module", "instructions appear in the section order of the logical layout";
    CORE_MEMORY_MODEL = "Core-MemoryModel", true, "SPIR-V 2.4 Logical Layout of a Module / 3.4, 3.5", "exactly one OpMemoryModel; Vulkan requires Logical or PhysicalStorageBuffer64 addressing and GLSL450 or Vulkan";
    CORE_ID_DEFINED = "Core-Id-Defined", true, "SPIR-V 2.2.2 Types (Id) / 2.17 Universal Limits", "every id used is defined and below the bound";
    CORE_ID_FORWARD = "Core-Id-ForwardRef", true, "SPIR-V 2.4 Logical Layout (forward references)", "ids are defined before use outside functions, except where forward references are allowed";
    CORE_SSA_DOMINANCE = "Core-SSA-Dominance", true, "SPIR-V 2.16.1 Universal Validation Rules (definition dominates use)", "a use in a function is dominated by its definition (OpPhi: the parent block)";
    CORE_TYPE = "Core-Type", true, "SPIR-V 3.32.6 Type-Declaration Instructions", "type declarations are well formed (int/float widths, vector sizes, array lengths, pointers)";
    CORE_CONSTANT = "Core-Constant", true, "SPIR-V 3.32.7 Constant-Creation Instructions", "constants have a type of the right kind and constituents of the right types";
    CORE_OPERAND_TYPE = "Core-Operand-Type", true, "SPIR-V 2.2.2 / 3.32", "result type operands are types, value operands are values of a type";
    CORE_CAPABILITY = "Core-Capability", true, "SPIR-V 2.16.1 Universal Validation Rules (capabilities) / 3.31", "instructions and enumerants need one of their enabling capabilities to be declared";
    CORE_EXTENSION = "Core-Extension", true, "SPIR-V 2.16.1 Universal Validation Rules / 3.32.3 OpExtension", "instructions and enumerants enabled only by an extension need that extension declared";
    CORE_VERSION = "Core-Version", true, "SPIR-V 2.3 Physical Layout / 3.x requirements", "instructions and enumerants newer than the module's version need an enabling extension";
    CORE_DECORATION = "Core-Decoration-Target", true, "SPIR-V 3.32.2 Annotation Instructions", "decoration targets are defined ids; member decorations target struct types";
    CORE_FUNCTION_USE = "Core-Function-Use", true, "SPIR-V 2.16.1 (function ids) / OpFunctionCall", "function ids are used only where a function is expected; OpFunctionCall matches the callee";
    CORE_FUNCTION_TYPE = "Core-Function-Type", true, "SPIR-V 3.32.9 OpFunction, OpFunctionParameter", "OpFunction's type is an OpTypeFunction whose return and parameter types match";
    CORE_CFG_TARGET = "Core-CFG-Target", true, "SPIR-V 2.2.5 Control Flow / 3.32.17", "branch and merge targets are labels of blocks in the same function";
    CORE_CFG_MERGE = "Core-CFG-Merge", true, "SPIR-V 2.11 Structured Control Flow", "merge instructions precede a branch, merge blocks are used once, headers dominate their merge and continue targets";
    CORE_ENTRY_POINT = "Core-EntryPoint", true, "SPIR-V 3.32.5 OpEntryPoint / OpExecutionMode", "entry points name functions defined here; execution modes name entry points";
    CORE_EXTENDED_ARITH = "Core-ExtendedArith-Result", true, "SPIR-V 3.32.13 OpIAddCarry, OpISubBorrow, OpUMulExtended, OpSMulExtended", "the result type is a struct of two members of the operands' type (as an instruction and inside OpSpecConstantOp)";
    CORE_SPEC_OP_TYPES = "Core-SpecConstantOp-Types", true, "SPIR-V 3.32.7 OpSpecConstantOp (\"the same semantic as the instruction named by Opcode\") / 3.32.13-15 arithmetic, bit, relational and logical, composite instructions", "the operation inside OpSpecConstantOp obeys its instruction's type rules: operands of the result's component count and kind, a CompositeExtract's result the indexed member's type";
    CORE_EXT_IMPORT = "Core-ExtInstImport-Vulkan", true, "Vulkan spirvenv.adoc (extended instruction sets) / SPIR-V 3.32.10 OpExtInstImport", "Vulkan: an imported extended instruction set is GLSL.std.450 or a NonSemantic.* set";
    CORE_VK_SHADER = "Core-Vulkan-Env", true, "Vulkan spirvenv.adoc Validation Rules within a Module", "Vulkan modules declare Shader and use Logical/PhysicalStorageBuffer64 addressing";

    // ---- SPV_NV_cooperative_matrix -------------------------------------------------------
    NV_TYPE = "NV-Type", true, "SPV_NV_cooperative_matrix, OpTypeCooperativeMatrixNV", "component type is a scalar numerical type; Scope, Rows, Columns are 32-bit integer constants";
    NV_STORAGE = "NV-Storage", true, "SPV_NV_cooperative_matrix, Validation Rules", "cooperative matrix types may only be allocated in Function or Private storage";
    NV_LOAD = "NV-LoadStore", true, "SPV_NV_cooperative_matrix, OpCooperativeMatrixLoadNV / StoreNV", "pointer to scalar or vector, Stride an integer, ColumnMajor a boolean constant, object a cooperative matrix";
    NV_MULADD = "NV-MulAdd-Shape", true, "SPV_NV_cooperative_matrix, OpCooperativeMatrixMulAddNV", "A is MxK, B is KxN, C and Result are MxN with one scope";
    NV_LENGTH = "NV-Length", true, "SPV_NV_cooperative_matrix, OpCooperativeMatrixLengthNV", "result is a 32-bit integer and Type is a cooperative matrix type";

    // ---- SPV_KHR_cooperative_matrix ------------------------------------------------------
    KHR_TYPE_COMPONENT = "KHR-Type-Component", true, "SPV_KHR_cooperative_matrix, OpTypeCooperativeMatrixKHR", "'Component Type' must be a scalar numerical type";
    KHR_TYPE_OPERANDS = "KHR-Type-Operands", true, "SPV_KHR_cooperative_matrix, OpTypeCooperativeMatrixKHR", "Scope, Rows, Columns and Use must be constant instructions with scalar 32-bit integer type";
    KHR_TYPE_USE = "KHR-Type-Use", false, "SPV_KHR_cooperative_matrix, OpTypeCooperativeMatrixKHR ('Use' ... whose value is a Cooperative Matrix Use)", "a constant Use must be MatrixAKHR, MatrixBKHR or MatrixAccumulatorKHR";
    KHR_TYPE_SCOPE = "KHR-Type-Scope", true, "SPV_KHR_cooperative_matrix, OpTypeCooperativeMatrixKHR / Vulkan VUID-StandaloneSpirv-Scope-12243", "a constant Scope must be a valid Scope (Vulkan: Subgroup or Workgroup)";
    KHR_STORAGE = "KHR-Storage", true, "SPV_KHR_cooperative_matrix, Validation Rules", "cooperative matrix types, and types containing them, may only be allocated in Function or Private storage";
    KHR_LOAD_POINTER = "KHR-LoadStore-Pointer", true, "SPV_KHR_cooperative_matrix, OpCooperativeMatrixLoadKHR / StoreKHR ('Pointer')", "Pointer's type is an OpTypePointer whose pointee is a scalar or vector type";
    KHR_LOAD_STORAGE = "KHR-LoadStore-StorageClass", true, "Vulkan VUID-StandaloneSpirv-Pointer-08973", "Vulkan: Pointer's storage class is Workgroup, StorageBuffer or PhysicalStorageBuffer";
    KHR_LOAD_LAYOUT = "KHR-LoadStore-Layout", true, "SPV_KHR_cooperative_matrix, OpCooperativeMatrixLoadKHR ('MemoryLayout')", "MemoryLayout is a 32-bit integer constant holding a Cooperative Matrix Layout";
    KHR_LOAD_STRIDE = "KHR-LoadStore-Stride", true, "SPV_KHR_cooperative_matrix, Cooperative Matrix Layout (RowMajorKHR/ColumnMajorKHR)", "Stride is a scalar integer, required for RowMajor/ColumnMajor; a constant store stride is > 0";
    KHR_LOAD_TYPES = "KHR-LoadStore-Type", true, "SPV_KHR_cooperative_matrix, OpCooperativeMatrixLoadKHR / StoreKHR", "the loaded Result Type / stored Object is a cooperative matrix";
    KHR_LOAD_MEMOP = "KHR-LoadStore-MemoryOperand", true, "SPV_KHR_cooperative_matrix, Validation Rules (MakePointerAvailable/Visible)", "MakePointerAvailable is invalid on the load, MakePointerVisible on the store";
    KHR_MULADD_TYPES = "KHR-MulAdd-Types", true, "SPV_KHR_cooperative_matrix, OpCooperativeMatrixMulAddKHR", "A, B, C and Result Type are cooperative matrix types";
    KHR_MULADD_SHAPE = "KHR-MulAdd-Shape", true, "SPV_KHR_cooperative_matrix, OpCooperativeMatrixMulAddKHR", "A is MxK, B is KxN, C and Result are MxN";
    KHR_MULADD_USE = "KHR-MulAdd-Use", true, "SPV_KHR_cooperative_matrix, OpCooperativeMatrixMulAddKHR", "A has Use MatrixAKHR, B MatrixBKHR, C MatrixAccumulatorKHR";
    KHR_MULADD_RESULT_USE = "KHR-MulAdd-ResultUse", false, "SPV_KHR_cooperative_matrix, OpCooperativeMatrixMulAddKHR ('Result Type' ... whose 'Use' must be 'MatrixAccumulatorKHR')", "the Result Type's Use is MatrixAccumulatorKHR";
    KHR_MULADD_SCOPE = "KHR-MulAdd-Scope", true, "SPV_KHR_cooperative_matrix, OpCooperativeMatrixMulAddKHR", "A, B, C and Result Type have the same scope";
    KHR_MULADD_SIGNED = "KHR-MulAdd-SignedOperand", false, "SPV_KHR_cooperative_matrix, Validation Rules (Matrix*SignedComponentsKHR only with integer components)", "Matrix{A,B,C,Result}SignedComponentsKHR only on matrices with an integer component type";
    KHR_LENGTH = "KHR-Length", true, "SPV_KHR_cooperative_matrix, OpCooperativeMatrixLengthKHR", "Result Type is a 32-bit unsigned integer and Type is a cooperative matrix type";
    KHR_ARITH = "KHR-Arith", true, "SPV_KHR_cooperative_matrix, Modifications to the SPIR-V Specification (arithmetic instructions)", "arithmetic on cooperative matrices uses allowed opcodes and operands of the result's type";
    KHR_MATRIX_TIMES_SCALAR = "KHR-MatrixTimesScalar", true, "SPV_KHR_cooperative_matrix, OpMatrixTimesScalar", "the scalar has the matrix's component type";
    KHR_CONVERT = "KHR-Convert", true, "SPV_KHR_cooperative_matrix, conversion instructions", "conversions keep Scope, Rows, Columns and Use (coopmat2 ConversionsNV: Accumulator to A/B)";
    KHR_COMPOSITE = "KHR-Composite", true, "SPV_KHR_cooperative_matrix, OpCompositeConstruct / OpConstantComposite", "a cooperative matrix composite has exactly one constituent of the component type";
    KHR_EXTRACT = "KHR-Composite-Access", true, "SPV_KHR_cooperative_matrix, OpCompositeExtract / OpCompositeInsert", "component access into a cooperative matrix uses one index and the component type";
    KHR_VMM = "KHR-VulkanMemoryModel", true, "SPV_KHR_cooperative_matrix, Validation Rules (If CooperativeMatrixKHR is declared then VulkanMemoryModel ...)", "the Vulkan memory model is available (capability or SPIR-V 1.5+) when CooperativeMatrixKHR is declared in a shader";

    // ---- SPV_NV_cooperative_matrix2 ------------------------------------------------------
    NV2_LOAD_TENSOR = "NV2-LoadTensor", true, "SPV_NV_cooperative_matrix2, OpCooperativeMatrixLoadTensorNV", "Result Type a cooperative matrix, Object of the same type, Pointer a pointer, TensorLayout a tensor layout";
    NV2_STORE_TENSOR = "NV2-StoreTensor", true, "SPV_NV_cooperative_matrix2, OpCooperativeMatrixStoreTensorNV", "Object a cooperative matrix, TensorLayout a tensor layout, no DecodeFunc";
    NV2_TENSOR_VIEW = "NV2-TensorView-Operand", true, "SPV_NV_cooperative_matrix2, Tensor Addressing Operands (TensorView)", "the TensorView operand is a tensor view whose Dim matches the layout's";
    NV2_MEMOP = "NV2-Tensor-MemoryOperand", true, "SPV_NV_cooperative_matrix2, Validation Rules (MakePointerAvailable/Visible)", "MakePointerAvailable is invalid on LoadTensorNV, MakePointerVisible on StoreTensorNV";
    NV2_DECODE_FUNC = "NV2-Decode-Func", true, "SPV_NV_cooperative_matrix2, Tensor Addressing Operands (DecodeFunc)", "DecodeFunc is an OpFunction returning the result's component type, its first parameter a PhysicalStorageBuffer pointer";
    NV2_DECODE_PARAMS = "NV2-Decode-Params", false, "SPV_NV_cooperative_matrix2, Tensor Addressing Operands (DecodeFunc: parameters 2 and 3 are arrays of 32-bit integers ...)", "the decode function has exactly three parameters, the 2nd and 3rd arrays of 32-bit integers of length Dim";
    NV2_DECODE_STORAGE = "NV2-Decode-StorageClass", false, "SPV_NV_cooperative_matrix2, OpCooperativeMatrixLoadTensorNV (If DecodeFunc is present, Pointer must be PhysicalStorageBuffer or StorageBuffer)", "a decode load's Pointer is in StorageBuffer or PhysicalStorageBuffer";
    NV2_NO_TANGLED = "NV2-Callback-NoTangled", false, "SPV_NV_cooperative_matrix2, Validation Rules (tangled instructions in DecodeFunc, Func, CombineFunc)", "no tangled instruction in a DecodeFunc, DecodeVectorFunc, per-element Func or CombineFunc, nor anything they call";
    NV2_STORE_BLOCK = "NV2-StoreTensor-BlockSize", false, "SPV_NV_cooperative_matrix2, OpCooperativeMatrixStoreTensorNV (block size greater than one must not be used)", "a tensor layout with a constant block size above 1 is not used by StoreTensorNV";
    NV2_REDUCE = "NV2-Reduce", true, "SPV_NV_cooperative_matrix2, OpCooperativeMatrixReduceNV", "Result and Matrix are accumulators of one component type and scope with a shape fitting the reduce mode";
    NV2_REDUCE_FUNC = "NV2-Reduce-CombineFunc", true, "SPV_NV_cooperative_matrix2, OpCooperativeMatrixReduceNV ('CombineFunc')", "CombineFunc takes two parameters and returns, all of the component type";
    NV2_PER_ELEMENT = "NV2-PerElementOp", true, "SPV_NV_cooperative_matrix2, OpCooperativeMatrixPerElementOpNV", "Result Type equals Matrix's type; Func takes (row, col, element, operands...) and returns the component type";
    NV2_CONVERT_USE = "NV2-ConvertUse", true, "SPV_NV_cooperative_matrix2, OpCooperativeMatrixConvertNV", "converts an Accumulator to A or B keeping component type, scope and shape";
    NV2_TRANSPOSE = "NV2-Transpose", true, "SPV_NV_cooperative_matrix2, OpCooperativeMatrixTransposeNV", "Accumulator to B with the same scope and Rows and Columns swapped";
    NV2_TRANSPOSE_COMPONENT = "NV2-Transpose-Component", false, "SPV_NV_cooperative_matrix2, OpCooperativeMatrixTransposeNV / GLSL_NV_cooperative_matrix2 coopMatTransposeNV", "TransposeNV keeps the component type";
    NV2_WORKGROUP_SIZE = "NV2-WorkgroupScope-Size", true, "SPV_NV_cooperative_matrix2, Validation Rules (Scope Workgroup: workgroup size must be specified)", "with a Workgroup-scope matrix type the workgroup size is specified in the module";

    // ---- SPV_NV_tensor_addressing --------------------------------------------------------
    TA_LAYOUT_TYPE = "TA-LayoutType", true, "SPV_NV_tensor_addressing, OpTypeTensorLayoutNV", "Dim a 32-bit integer constant in 1..5, ClampMode a 32-bit integer constant holding a TensorClampMode";
    TA_VIEW_TYPE = "TA-ViewType", true, "SPV_NV_tensor_addressing, OpTypeTensorViewNV", "Dim in 1..5, HasDimensions a boolean constant, Dim permutation operands forming a permutation of [0,Dim)";
    TA_TYPE_CONST = "TA-Type-Constant", false, "SPV_NV_tensor_addressing, OpTypeTensorLayoutNV / OpTypeTensorViewNV (must be a constant instruction)", "Dim, ClampMode, HasDimensions and the permutation operands are constant instructions";
    TA_CREATE = "TA-Create", true, "SPV_NV_tensor_addressing, OpCreateTensorLayoutNV / OpCreateTensorViewNV", "Result Type is a tensor layout (view) type";
    TA_OPERANDS = "TA-Operand-Count", true, "SPV_NV_tensor_addressing, OpTensorLayoutSet*/Slice, OpTensorViewSet*", "the number of operands matches the dimension (Slice: 2xDim, Clip: 4, ClampValue: 1)";
    TA_OPERAND_TYPES = "TA-Operand-Type", true, "SPV_NV_tensor_addressing, OpTensorLayoutSet*/Slice, OpTensorViewSet*", "operands are scalar 32-bit integers and the input object has the Result Type";

    // ---- SPV_NV_cooperative_matrix_decode_vector ----------------------------------------
    DV_REQUIRES_DECODE = "DV-RequiresDecodeFunc", true, "SPV_NV_cooperative_matrix_decode_vector, Tensor Addressing Operands (DecodeVectorFunc)", "DecodeVectorFunc is used only together with DecodeFunc";
    DV_RETURN = "DV-ReturnType", true, "SPV_NV_cooperative_matrix_decode_vector, Tensor Addressing Operands (DecodeVectorFunc)", "the vector decode function returns a vector of 2, 4 or 8 of the result's component type";
    DV_PARAMS = "DV-Params", false, "SPV_NV_cooperative_matrix_decode_vector, Tensor Addressing Operands (DecodeVectorFunc parameters as for DecodeFunc)", "DecodeVectorFunc has the DecodeFunc parameter shape (PSB pointer, two arrays of Dim 32-bit integers)";
    DV_BLOCK_MULTIPLE = "DV-BlockSize-Multiple", false, "SPV_NV_cooperative_matrix_decode_vector, Semantics / VUID-RuntimeSpirv-OpCooperativeMatrixLoadTensorNV-12429", "a constant blockSize[Dim-1] is a multiple of the DecodeVectorFunc width";

    // ---- SPV_QCOM_cooperative_matrix_conversion -----------------------------------------
    QCOM_BITCAST_ARRAY = "QCOM-BitCastArray", true, "SPV_QCOM_cooperative_matrix_conversion, OpBitCastArrayQCOM", "arrays of 32-bit int, fp32 or fp16 elements with equal total size";
    QCOM_CONSTRUCT = "QCOM-Construct", true, "SPV_QCOM_cooperative_matrix_conversion, OpCompositeConstructCoopMatQCOM", "Subgroup-scope matrix built from a per-invocation array of the component type or uint32 with the length the Use requires";
    QCOM_EXTRACT = "QCOM-Extract", true, "SPV_QCOM_cooperative_matrix_conversion, OpCompositeExtractCoopMatQCOM", "the inverse of construct: array length and element type follow the matrix Use";
    QCOM_SUB_ARRAY = "QCOM-ExtractSubArray", true, "SPV_QCOM_cooperative_matrix_conversion, OpExtractSubArrayQCOM", "result an array of the source's element type (i32, u32, f32, f16), Start Index a 32-bit integer";

    // ---- SPV_NV_cooperative_vector ------------------------------------------------------
    CV_TYPE = "CV-Type", true, "SPV_NV_cooperative_vector, OpTypeCooperativeVectorNV", "component type scalar numerical, Component Count a 32-bit integer constant";
    CV_LOAD_STORE = "CV-LoadStore", true, "SPV_NV_cooperative_vector, OpCooperativeVectorLoadNV / StoreNV", "pointer into an array in Workgroup, StorageBuffer, PhysicalStorageBuffer or CrossWorkgroup; 32-bit Offset; cooperative vector object";
    CV_MATMUL = "CV-MatrixMul", true, "SPV_NV_cooperative_vector, OpCooperativeVectorMatrixMulNV / MulAddNV", "cooperative vector Result and Input, Matrix/Bias pointers, 32-bit offsets and constant interpretations, K and layout";
    CV_ACCUMULATE = "CV-Accumulate", true, "SPV_NV_cooperative_vector, OpCooperativeVectorOuterProductAccumulateNV / ReduceSumAccumulateNV", "cooperative vector operands, pointer in an allowed storage class, 32-bit Offset";

    // ---- Vulkan device profile ----------------------------------------------------------
    VK_TYPE = "VK-Profile-Type", true, "Vulkan VUID-RuntimeSpirv-OpTypeCooperativeMatrixKHR-10163 / 10165", "each cooperative matrix type matches a supported (or flexible-dimension) entry for its Use";
    VK_MULADD = "VK-Profile-MulAdd", true, "Vulkan VUID-RuntimeSpirv-OpCooperativeMatrixMulAddKHR-10060 / 10166", "each MulAdd matches a supported (M,N,K,A,B,C,Result,saturating,scope) tuple";
    VK_SIGNED = "VK-Profile-Signedness", true, "Vulkan VUID-RuntimeSpirv-OpCooperativeMatrixMulAddKHR-10060 (SignedComponents iff SINT)", "Matrix*SignedComponents is set iff the matching profile type is signed";
    VK_SATURATING = "VK-Profile-Saturating", true, "Vulkan VUID-RuntimeSpirv-OpCooperativeMatrixMulAddKHR-10060 (saturatingAccumulation)", "SaturatingAccumulation only where the matching entry supports it";
    VK_SCOPE = "VK-Profile-Scope", true, "Vulkan VUID-RuntimeSpirv-cooperativeMatrixWorkgroupScope-10164", "Workgroup scope only when the device supports it";
    VK_LOCAL_SIZE = "VK-Profile-LocalSize", false, "Vulkan VUID-VkPipelineShaderStageCreateInfo-module-08987 / -10169", "local size X a multiple of the subgroup size; for Workgroup scope the total a power-of-two multiple and within the maximum";
    VK_STAGE = "VK-Profile-Stage", false, "Vulkan VUID-RuntimeSpirv-cooperativeMatrixSupportedStages-08985", "cooperative matrices only in supported stages";
    VK_ALIGNMENT = "VK-Profile-Alignment", false, "Vulkan VUID-RuntimeSpirv-OpCooperativeMatrixLoadKHR-08986", "constant Stride (in bytes) aligned to min(16, natural row/column size)";
    VK_FLEX_MAX = "VK-Profile-FlexMaxDimension", false, "Vulkan VUID-RuntimeSpirv-cooperativeMatrixFlexibleDimensionsMaxDimension-10167", "flexible dimensions do not exceed the maximum";
    VK_COOPVEC_COMBINATION = "VK-Profile-CoopVecCombination", false, "Vulkan VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10089", "each cooperative-vector matrix-vector product matches a VkCooperativeVectorPropertiesNV entry (input type, interpretations, result type, transpose)";
    VK_COOPVEC_TYPE = "VK-Profile-CoopVecType", false, "Vulkan VUID-RuntimeSpirv-maxCooperativeVectorComponents-10094 / OpTypeCooperativeVector-10095", "cooperative vectors on a device that has them, with at most maxCooperativeVectorComponents components of a type the device lists";
    VK_COOPVEC_TRAINING = "VK-Profile-CoopVecTraining", false, "Vulkan VUID-RuntimeSpirv-OpCooperativeVectorReduceSumAccumulateNV-10092 / OuterProductAccumulateNV-10093", "training accumulations only with cooperativeVectorTraining and the f16/f32 accumulation the device supports";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_validity_rules_deny() {
        let mut seen = std::collections::HashSet::new();
        for r in ALL {
            assert!(seen.insert(r.id), "duplicate rule id {}", r.id);
            assert_eq!(by_id(r.id), Some(*r));
            // Every rule registered so far comes from a specification's validity rules.
            assert_eq!(r.level, Level::Deny, "{}", r.id);
        }
    }
}
