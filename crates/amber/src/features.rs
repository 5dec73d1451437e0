//! Vulkan device features and extensions that `DEVICE_FEATURE` / `DEVICE_EXTENSION` may ask for, and whether the
//! CPU engine (`coopmat-exec`) honours them. Kept here, next to the runner, because the engine exports no such
//! list: each entry names what the engine does that makes it true. A script asking for anything not listed is
//! skipped with the name.

/// Device features the engine supports (Amber spelling: `Struct.member` or a core `VkPhysicalDeviceFeatures`
/// member).
pub const SUPPORTED_FEATURES: &[&str] = &[
    // Scalar widths: the engine executes Int8/Int16/Int64/Float16/Float64 arithmetic natively.
    "shaderInt16",
    "shaderInt64",
    "shaderFloat64",
    "Float16Int8Features.shaderFloat16",
    "Float16Int8Features.shaderInt8",
    // 8/16-bit loads and stores: buffers are plain byte arrays.
    "Storage16BitFeatures.storageBuffer16BitAccess",
    "Storage16BitFeatures.uniformAndStorageBuffer16BitAccess",
    "Storage16BitFeatures.storagePushConstant16",
    "Storage8BitFeatures.storageBuffer8BitAccess",
    "Storage8BitFeatures.uniformAndStorageBuffer8BitAccess",
    "Storage8BitFeatures.storagePushConstant8",
    // Memory model: invocations of a workgroup run in lock-step batches, memory is sequentially consistent.
    "VulkanMemoryModelFeatures.vulkanMemoryModel",
    "VulkanMemoryModelFeatures.vulkanMemoryModelDeviceScope",
    // Workgroup variables with null initialisers are zeroed.
    "ZeroInitializeWorkgroupMemoryFeatures.shaderZeroInitializeWorkgroupMemory",
    // The subgroup size is an engine option; a workgroup whose x size is a multiple of it has only full
    // subgroups (checked per pipeline when FULLY_POPULATED is on).
    "SubgroupSizeControl.subgroupSizeControl",
    "SubgroupSizeControl.computeFullSubgroups",
    // The engine's robust mode (Vulkan's robust buffer access results); a script asking for the
    // feature runs with it on.
    "robustBufferAccess",
    // Pointers are 64-bit addresses held in registers like any value: selected, phi'd, passed to
    // functions and offset with OpPtrAccessChain, into storage buffers and workgroup memory.
    "VariablePointerFeatures.variablePointersStorageBuffer",
    "VariablePointerFeatures.variablePointers",
    // Every subgroup operation class runs in compute shaders (the engine has no other stage).
    "SubgroupSupportedOperations.basic",
    "SubgroupSupportedOperations.vote",
    "SubgroupSupportedOperations.arithmetic",
    "SubgroupSupportedOperations.ballot",
    "SubgroupSupportedOperations.shuffle",
    "SubgroupSupportedOperations.shuffleRelative",
    "SubgroupSupportedOperations.clustered",
    "SubgroupSupportedOperations.quad",
    "SubgroupSupportedStages.compute",
    // Physical storage buffer pointers are engine addresses (device addresses of bound buffers).
    "BufferDeviceAddressFeatures.bufferDeviceAddress",
    // Cooperative matrices: the engine's own family.
    "CooperativeMatrixFeaturesKHR.cooperativeMatrix",
    // OpTypeVector of any component count (LongVectorEXT): vectors are columns of registers.
    "ShaderLongVectorFeaturesEXT.longVector",
];

/// Device properties the engine has (`DEVICE_PROPERTY Struct.member`): what its arithmetic does.
pub const SUPPORTED_PROPERTIES: &[&str] = &[
    // Float arithmetic is IEEE 754 in Rust's f32/f64 and the `half` crate's f16: signed zeros,
    // infinities and NaNs come out as the operations define them, and denormals are kept.
    "FloatControlsProperties.shaderSignedZeroInfNanPreserveFloat16",
    "FloatControlsProperties.shaderSignedZeroInfNanPreserveFloat32",
    "FloatControlsProperties.shaderSignedZeroInfNanPreserveFloat64",
    "FloatControlsProperties.shaderDenormPreserveFloat16",
    "FloatControlsProperties.shaderDenormPreserveFloat32",
    "FloatControlsProperties.shaderDenormPreserveFloat64",
];

/// Device extensions the engine supports.
pub const SUPPORTED_EXTENSIONS: &[&str] = &[
    "VK_KHR_storage_buffer_storage_class",
    "VK_KHR_16bit_storage",
    "VK_KHR_8bit_storage",
    "VK_KHR_shader_float16_int8",
    "VK_KHR_vulkan_memory_model",
    "VK_KHR_zero_initialize_workgroup_memory",
    "VK_KHR_workgroup_memory_explicit_layout",
    "VK_KHR_spirv_1_4",
    "VK_KHR_shader_subgroup_uniform_control_flow",
    "VK_EXT_subgroup_size_control",
    "VK_KHR_cooperative_matrix",
    "VK_KHR_shader_integer_dot_product",
    "VK_KHR_variable_pointers",
    "VK_KHR_buffer_device_address",
    "VK_KHR_shader_float_controls",
    "VK_KHR_get_physical_device_properties2",
    // Arrays of buffer descriptors, sized and runtime-sized, indexed non-uniformly (one engine
    // object per element, an error outside the bound count).
    "VK_EXT_descriptor_indexing",
    "VK_EXT_shader_long_vector",
];

/// True if the engine honours device feature `name`.
pub fn feature_supported(name: &str) -> bool {
    SUPPORTED_FEATURES.contains(&name)
}

/// True if the engine has device property `name`.
pub fn property_supported(name: &str) -> bool {
    SUPPORTED_PROPERTIES.contains(&name)
}

/// True if the engine honours device extension `name`.
pub fn extension_supported(name: &str) -> bool {
    SUPPORTED_EXTENSIONS.contains(&name)
}
