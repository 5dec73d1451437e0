//! The instance, the one physical device, and every query about it: properties, features,
//! limits, queue families, memory, extensions and the cooperative matrix/vector tables.
//!
//! Values come from two places: what the engine implements (features, subgroup operations,
//! limits), and the `coopmat-engine` device profile of coopmat-val (matrix shapes, flexible
//! dimensions, cooperative-vector combinations), so `coopmat val --profile coopmat-engine`
//! checks a module against exactly what this driver reports. The values llama.cpp's ggml-vulkan
//! needs for its cm2 path are listed in `shared/vulkan/ICD-FACTS.md` section 7.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, LazyLock};

use coopmat_val::Profile;
use vulkanalia_sys::{self as vk, Handle};

use crate::entry::{
    Fail, MESSENGERS, Messenger, arg, guard, guard_void, name_bytes, out_ptr, slice, write_list,
};
use crate::objects;

/// The Vulkan version the driver implements (1.3, patch level of the headers it was written
/// against).
pub const API_VERSION: u32 = (1 << 22) | (3 << 12) | 290;
/// The engine's subgroup size (ggml-vulkan's tuning assumes 32, as on NVIDIA).
pub const SUBGROUP_SIZE: u32 = 32;
/// Vendor id: deliberately not a PCI vendor and not a registered Khronos id, so that no
/// application applies another vendor's tuning or workarounds.
pub const VENDOR_ID: u32 = 0x0001_C0DE;
/// Bytes of workgroup (shared) memory a pipeline may declare (NVIDIA's default, which
/// ggml-vulkan's cm2 tiles are sized for).
pub const MAX_SHARED_MEMORY: u32 = 49152;
/// Largest single allocation and buffer: the engine addresses objects below 2^39 bytes; the
/// host's memory is the practical bound.
pub const MAX_ALLOCATION: u64 = 1 << 38;

/// A VkInstance.
pub struct Instance {
    /// The instance's physical device handle.
    pub physical: usize,
}

/// The VkPhysicalDevice (one per instance).
pub struct PhysicalDevice;

/// Instance extensions (name, spec version).
const INSTANCE_EXTENSIONS: &[(&str, u32)] = &[
    ("VK_KHR_get_physical_device_properties2", 2),
    ("VK_KHR_external_memory_capabilities", 1),
    ("VK_KHR_external_semaphore_capabilities", 1),
    ("VK_KHR_external_fence_capabilities", 1),
    ("VK_KHR_device_group_creation", 1),
    ("VK_EXT_debug_utils", 2),
];

/// Device extensions (name, spec version). Extensions promoted to core are listed too:
/// applications (ggml-vulkan among them) look for the names.
pub const DEVICE_EXTENSIONS: &[(&str, u32)] = &[
    ("VK_KHR_16bit_storage", 1),
    ("VK_KHR_8bit_storage", 1),
    ("VK_KHR_shader_float16_int8", 1),
    ("VK_KHR_storage_buffer_storage_class", 1),
    ("VK_KHR_variable_pointers", 1),
    ("VK_KHR_maintenance1", 2),
    ("VK_KHR_maintenance2", 1),
    ("VK_KHR_maintenance3", 1),
    ("VK_KHR_maintenance4", 2),
    ("VK_KHR_get_memory_requirements2", 1),
    ("VK_KHR_dedicated_allocation", 3),
    ("VK_KHR_bind_memory2", 1),
    ("VK_KHR_buffer_device_address", 1),
    ("VK_KHR_vulkan_memory_model", 3),
    ("VK_KHR_timeline_semaphore", 2),
    ("VK_KHR_synchronization2", 1),
    ("VK_KHR_spirv_1_4", 1),
    ("VK_KHR_shader_float_controls", 4),
    ("VK_KHR_shader_non_semantic_info", 1),
    ("VK_KHR_shader_subgroup_extended_types", 1),
    ("VK_KHR_uniform_buffer_standard_layout", 1),
    ("VK_EXT_scalar_block_layout", 1),
    ("VK_EXT_subgroup_size_control", 2),
    ("VK_EXT_host_query_reset", 1),
    ("VK_EXT_memory_budget", 1),
    ("VK_KHR_shader_bfloat16", 1),
    ("VK_KHR_shader_integer_dot_product", 1),
    ("VK_KHR_cooperative_matrix", 2),
    ("VK_NV_cooperative_matrix", 1),
    ("VK_NV_cooperative_matrix2", 1),
    ("VK_NV_cooperative_matrix_decode_vector", 1),
    ("VK_QCOM_cooperative_matrix_conversion", 1),
    ("VK_NV_cooperative_vector", 4),
];

/// sType of VkPhysicalDeviceCooperativeMatrixDecodeVectorFeaturesNV (extension 690: not in
/// vulkanalia-sys 0.35).
pub const STYPE_DECODE_VECTOR_FEATURES: i32 = 1_000_689_000;

/// VkPhysicalDeviceCooperativeMatrixDecodeVectorFeaturesNV.
#[repr(C)]
pub struct DecodeVectorFeatures {
    /// sType.
    pub s_type: vk::StructureType,
    /// pNext.
    pub next: *mut c_void,
    /// cooperativeMatrixDecodeVector.
    pub cooperative_matrix_decode_vector: vk::Bool32,
}

/// The profile the driver reports (built into coopmat-val).
pub static PROFILE: LazyLock<Profile> = LazyLock::new(|| {
    Profile::builtin("coopmat-engine").expect("the coopmat-engine profile is built in and parses")
});

/// The device type: `COOPMAT_ICD_DEVICE_TYPE` = cpu (default), integrated, discrete, virtual or
/// other. ggml-vulkan skips CPU devices unless `GGML_VK_VISIBLE_DEVICES` names them.
pub fn device_type() -> vk::PhysicalDeviceType {
    match std::env::var("COOPMAT_ICD_DEVICE_TYPE").as_deref() {
        Ok("integrated") => vk::PhysicalDeviceType::INTEGRATED_GPU,
        Ok("discrete") => vk::PhysicalDeviceType::DISCRETE_GPU,
        Ok("virtual") => vk::PhysicalDeviceType::VIRTUAL_GPU,
        Ok("other") => vk::PhysicalDeviceType::OTHER,
        _ => vk::PhysicalDeviceType::CPU,
    }
}

/// Bytes of the host's memory (`MemTotal`, or `MemAvailable` when `available`), 8 GiB when
/// /proc/meminfo cannot be read.
pub fn host_memory(available: bool) -> u64 {
    let key = if available {
        "MemAvailable:"
    } else {
        "MemTotal:"
    };
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(8 << 30)
}

fn bool32(b: bool) -> vk::Bool32 {
    b as vk::Bool32
}

fn uuid(tag: u8) -> vk::ByteArray<16> {
    let mut u = *b"coopmat-engine\0\0";
    u[15] = tag;
    vk::ByteArray(u)
}

fn limits() -> vk::PhysicalDeviceLimits {
    vk::PhysicalDeviceLimits {
        max_uniform_buffer_range: u32::MAX,
        max_storage_buffer_range: u32::MAX,
        max_push_constants_size: 256,
        max_memory_allocation_count: 1 << 20,
        max_sampler_allocation_count: 4000,
        buffer_image_granularity: 1,
        max_bound_descriptor_sets: 8,
        max_per_stage_descriptor_samplers: 0,
        max_per_stage_descriptor_uniform_buffers: 1 << 16,
        max_per_stage_descriptor_storage_buffers: 1 << 16,
        max_per_stage_resources: 1 << 17,
        max_descriptor_set_uniform_buffers: 1 << 16,
        max_descriptor_set_uniform_buffers_dynamic: 16,
        max_descriptor_set_storage_buffers: 1 << 16,
        max_descriptor_set_storage_buffers_dynamic: 16,
        max_compute_shared_memory_size: MAX_SHARED_MEMORY,
        max_compute_work_group_count: [u32::MAX; 3],
        max_compute_work_group_invocations: 1024,
        max_compute_work_group_size: [1024, 1024, 64],
        timestamp_compute_and_graphics: vk::FALSE,
        timestamp_period: 1.0,
        discrete_queue_priorities: 2,
        min_memory_map_alignment: 64,
        min_texel_buffer_offset_alignment: 16,
        min_uniform_buffer_offset_alignment: 16,
        min_storage_buffer_offset_alignment: 16,
        optimal_buffer_copy_offset_alignment: 1,
        optimal_buffer_copy_row_pitch_alignment: 1,
        non_coherent_atom_size: 1,
        ..Default::default()
    }
}

/// VkPhysicalDeviceProperties.
pub fn properties() -> vk::PhysicalDeviceProperties {
    let name = format!("coopmat engine {} (CPU)", env!("CARGO_PKG_VERSION"));
    vk::PhysicalDeviceProperties {
        api_version: API_VERSION,
        driver_version: 1 << 12, // 0.1.0
        vendor_id: VENDOR_ID,
        device_id: 1,
        device_type: device_type(),
        device_name: vk::StringArray::from_bytes(name.as_bytes()),
        pipeline_cache_uuid: uuid(b'P'),
        limits: limits(),
        sparse_properties: vk::PhysicalDeviceSparseProperties::default(),
    }
}

/// VkPhysicalDeviceFeatures: compute-relevant features only.
pub fn features() -> vk::PhysicalDeviceFeatures {
    vk::PhysicalDeviceFeatures {
        robust_buffer_access: vk::TRUE,
        shader_float64: vk::TRUE,
        shader_int64: vk::TRUE,
        shader_int16: vk::TRUE,
        shader_uniform_buffer_array_dynamic_indexing: vk::TRUE,
        shader_storage_buffer_array_dynamic_indexing: vk::TRUE,
        ..Default::default()
    }
}

fn subgroup_operations() -> vk::SubgroupFeatureFlags {
    use vk::SubgroupFeatureFlags as S;
    S::BASIC
        | S::VOTE
        | S::ARITHMETIC
        | S::BALLOT
        | S::SHUFFLE
        | S::SHUFFLE_RELATIVE
        | S::CLUSTERED
        | S::QUAD
}

/// Overwrites the output structure at `p` with `value`, keeping the application's pNext.
///
/// # Safety
/// `p` must point at a writable structure of type `T` (its sType says so).
unsafe fn answer<T>(p: *mut vk::BaseOutStructure, value: T) {
    // SAFETY: every Vulkan output structure begins with sType and pNext
    // (VkBaseOutStructure); the caller matched the sType to `T`.
    unsafe {
        let next = (*p).next;
        let s_type = (*p).s_type;
        std::ptr::write(p as *mut T, value);
        (*p).next = next;
        (*p).s_type = s_type;
    }
}

/// Answers every feature structure the driver knows in a VkPhysicalDeviceFeatures2 chain
/// (unknown ones are left alone, as the spec requires).
///
/// # Safety
/// `next` must be a valid pNext chain of output structures.
pub unsafe fn answer_features(mut next: *mut vk::BaseOutStructure) {
    use vk::StructureType as S;
    while !next.is_null() {
        // SAFETY: the chain's contract; each arm writes the structure its sType names.
        unsafe {
            match (*next).s_type {
                S::PHYSICAL_DEVICE_VULKAN_1_1_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceVulkan11Features {
                        storage_buffer_16bit_access: vk::TRUE,
                        uniform_and_storage_buffer_16bit_access: vk::TRUE,
                        storage_push_constant16: vk::TRUE,
                        variable_pointers_storage_buffer: vk::TRUE,
                        variable_pointers: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceVulkan12Features {
                        storage_buffer_8bit_access: vk::TRUE,
                        uniform_and_storage_buffer_8bit_access: vk::TRUE,
                        storage_push_constant8: vk::TRUE,
                        shader_float16: vk::TRUE,
                        shader_int8: vk::TRUE,
                        shader_storage_buffer_array_non_uniform_indexing: vk::TRUE,
                        shader_uniform_buffer_array_non_uniform_indexing: vk::TRUE,
                        runtime_descriptor_array: vk::TRUE,
                        scalar_block_layout: vk::TRUE,
                        uniform_buffer_standard_layout: vk::TRUE,
                        shader_subgroup_extended_types: vk::TRUE,
                        host_query_reset: vk::TRUE,
                        timeline_semaphore: vk::TRUE,
                        buffer_device_address: vk::TRUE,
                        vulkan_memory_model: vk::TRUE,
                        vulkan_memory_model_device_scope: vk::TRUE,
                        vulkan_memory_model_availability_visibility_chains: vk::TRUE,
                        subgroup_broadcast_dynamic_id: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_VULKAN_1_3_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceVulkan13Features {
                        pipeline_creation_cache_control: vk::TRUE,
                        subgroup_size_control: vk::TRUE,
                        compute_full_subgroups: vk::TRUE,
                        synchronization2: vk::TRUE,
                        shader_zero_initialize_workgroup_memory: vk::TRUE,
                        shader_integer_dot_product: vk::TRUE,
                        maintenance4: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES => answer(
                    next,
                    vk::PhysicalDevice16BitStorageFeatures {
                        storage_buffer_16bit_access: vk::TRUE,
                        uniform_and_storage_buffer_16bit_access: vk::TRUE,
                        storage_push_constant16: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES => answer(
                    next,
                    vk::PhysicalDevice8BitStorageFeatures {
                        storage_buffer_8bit_access: vk::TRUE,
                        uniform_and_storage_buffer_8bit_access: vk::TRUE,
                        storage_push_constant8: vk::TRUE,
                        ..Default::default()
                    },
                ),
                // The engine runs OpSDot and its family (expanded into integer multiply-adds);
                // the properties say no form is accelerated, which is the truth on a CPU.
                S::PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceShaderIntegerDotProductFeatures {
                        shader_integer_dot_product: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceShaderFloat16Int8Features {
                        shader_float16: vk::TRUE,
                        shader_int8: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_VARIABLE_POINTERS_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceVariablePointersFeatures {
                        variable_pointers_storage_buffer: vk::TRUE,
                        variable_pointers: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceBufferDeviceAddressFeatures {
                        buffer_device_address: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceVulkanMemoryModelFeatures {
                        vulkan_memory_model: vk::TRUE,
                        vulkan_memory_model_device_scope: vk::TRUE,
                        vulkan_memory_model_availability_visibility_chains: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceTimelineSemaphoreFeatures {
                        timeline_semaphore: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceHostQueryResetFeatures {
                        host_query_reset: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_SCALAR_BLOCK_LAYOUT_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceScalarBlockLayoutFeatures {
                        scalar_block_layout: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_UNIFORM_BUFFER_STANDARD_LAYOUT_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceUniformBufferStandardLayoutFeatures {
                        uniform_buffer_standard_layout: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_SHADER_SUBGROUP_EXTENDED_TYPES_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceShaderSubgroupExtendedTypesFeatures {
                        shader_subgroup_extended_types: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceSubgroupSizeControlFeatures {
                        subgroup_size_control: vk::TRUE,
                        compute_full_subgroups: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceSynchronization2Features {
                        synchronization2: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceMaintenance4Features {
                        maintenance4: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_PIPELINE_CREATION_CACHE_CONTROL_FEATURES => answer(
                    next,
                    vk::PhysicalDevicePipelineCreationCacheControlFeatures {
                        pipeline_creation_cache_control: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_ZERO_INITIALIZE_WORKGROUP_MEMORY_FEATURES => answer(
                    next,
                    vk::PhysicalDeviceZeroInitializeWorkgroupMemoryFeatures {
                        shader_zero_initialize_workgroup_memory: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR => answer(
                    next,
                    vk::PhysicalDeviceShaderBfloat16FeaturesKHR {
                        shader_b_float16_type: vk::TRUE,
                        shader_b_float16_cooperative_matrix: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR => answer(
                    next,
                    vk::PhysicalDeviceCooperativeMatrixFeaturesKHR {
                        cooperative_matrix: vk::TRUE,
                        cooperative_matrix_robust_buffer_access: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV => answer(
                    next,
                    vk::PhysicalDeviceCooperativeMatrixFeaturesNV {
                        cooperative_matrix: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV => {
                    let f = &PROFILE.features;
                    answer(
                        next,
                        vk::PhysicalDeviceCooperativeMatrix2FeaturesNV {
                            cooperative_matrix_workgroup_scope: f.workgroup_scope,
                            cooperative_matrix_flexible_dimensions: f.flexible_dimensions,
                            cooperative_matrix_reductions: f.reductions,
                            cooperative_matrix_conversions: f.conversions,
                            cooperative_matrix_per_element_operations: f.per_element_operations,
                            cooperative_matrix_tensor_addressing: f.tensor_addressing,
                            cooperative_matrix_block_loads: f.block_loads,
                            ..Default::default()
                        },
                    )
                }
                S::PHYSICAL_DEVICE_COOPERATIVE_MATRIX_CONVERSION_FEATURES_QCOM => answer(
                    next,
                    vk::PhysicalDeviceCooperativeMatrixConversionFeaturesQCOM {
                        cooperative_matrix_conversion: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_COOPERATIVE_VECTOR_FEATURES_NV => answer(
                    next,
                    vk::PhysicalDeviceCooperativeVectorFeaturesNV {
                        cooperative_vector: vk::TRUE,
                        cooperative_vector_training: bool32(
                            PROFILE
                                .cooperative_vector
                                .as_ref()
                                .is_some_and(|c| c.training),
                        ),
                        ..Default::default()
                    },
                ),
                s if s.as_raw() == STYPE_DECODE_VECTOR_FEATURES => {
                    let p = next as *mut DecodeVectorFeatures;
                    (*p).cooperative_matrix_decode_vector = vk::TRUE;
                }
                _ => {}
            }
            next = (*next).next;
        }
    }
}

/// Answers every property structure the driver knows in a VkPhysicalDeviceProperties2 chain.
///
/// # Safety
/// `next` must be a valid pNext chain of output structures.
pub unsafe fn answer_properties(mut next: *mut vk::BaseOutStructure) {
    use vk::StructureType as S;
    let ops = subgroup_operations();
    let driver_name = vk::StringArray::from_bytes(b"coopmat");
    let driver_info = vk::StringArray::from_bytes(
        format!("coopmat-icd {} (CPU engine)", env!("CARGO_PKG_VERSION")).as_bytes(),
    );
    let lanes = 1024;
    while !next.is_null() {
        // SAFETY: the chain's contract; each arm writes the structure its sType names.
        unsafe {
            match (*next).s_type {
                S::PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES => answer(
                    next,
                    vk::PhysicalDeviceVulkan11Properties {
                        device_uuid: uuid(b'D'),
                        driver_uuid: uuid(b'R'),
                        subgroup_size: SUBGROUP_SIZE,
                        subgroup_supported_stages: vk::ShaderStageFlags::COMPUTE,
                        subgroup_supported_operations: ops,
                        max_per_set_descriptors: 1 << 16,
                        max_memory_allocation_size: MAX_ALLOCATION,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES => answer(
                    next,
                    vk::PhysicalDeviceVulkan12Properties {
                        driver_id: vk::DriverId::from_raw(0),
                        driver_name,
                        driver_info,
                        denorm_behavior_independence: vk::ShaderFloatControlsIndependence::ALL,
                        rounding_mode_independence: vk::ShaderFloatControlsIndependence::ALL,
                        shader_signed_zero_inf_nan_preserve_float16: vk::TRUE,
                        shader_signed_zero_inf_nan_preserve_float32: vk::TRUE,
                        shader_signed_zero_inf_nan_preserve_float64: vk::TRUE,
                        shader_denorm_preserve_float16: vk::TRUE,
                        shader_denorm_preserve_float32: vk::TRUE,
                        shader_denorm_preserve_float64: vk::TRUE,
                        shader_rounding_mode_rte_float16: vk::TRUE,
                        shader_rounding_mode_rte_float32: vk::TRUE,
                        shader_rounding_mode_rte_float64: vk::TRUE,
                        max_timeline_semaphore_value_difference: u64::MAX,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES => answer(
                    next,
                    vk::PhysicalDeviceVulkan13Properties {
                        min_subgroup_size: SUBGROUP_SIZE,
                        max_subgroup_size: SUBGROUP_SIZE,
                        max_compute_workgroup_subgroups: lanes / SUBGROUP_SIZE,
                        required_subgroup_size_stages: vk::ShaderStageFlags::COMPUTE,
                        max_buffer_size: MAX_ALLOCATION,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_SUBGROUP_PROPERTIES => answer(
                    next,
                    vk::PhysicalDeviceSubgroupProperties {
                        subgroup_size: SUBGROUP_SIZE,
                        supported_stages: vk::ShaderStageFlags::COMPUTE,
                        supported_operations: ops,
                        quad_operations_in_all_stages: vk::FALSE,
                        ..Default::default()
                    },
                ),
                // Every integer dot product form is supported, none accelerated: all fields false.
                S::PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES => answer(
                    next,
                    vk::PhysicalDeviceShaderIntegerDotProductProperties::default(),
                ),
                S::PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES => answer(
                    next,
                    vk::PhysicalDeviceSubgroupSizeControlProperties {
                        min_subgroup_size: SUBGROUP_SIZE,
                        max_subgroup_size: SUBGROUP_SIZE,
                        max_compute_workgroup_subgroups: lanes / SUBGROUP_SIZE,
                        required_subgroup_size_stages: vk::ShaderStageFlags::COMPUTE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_DRIVER_PROPERTIES => answer(
                    next,
                    vk::PhysicalDeviceDriverProperties {
                        driver_id: vk::DriverId::from_raw(0),
                        driver_name,
                        driver_info,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_ID_PROPERTIES => answer(
                    next,
                    vk::PhysicalDeviceIDProperties {
                        device_uuid: uuid(b'D'),
                        driver_uuid: uuid(b'R'),
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES => answer(
                    next,
                    vk::PhysicalDeviceMaintenance3Properties {
                        max_per_set_descriptors: 1 << 16,
                        max_memory_allocation_size: MAX_ALLOCATION,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES => answer(
                    next,
                    vk::PhysicalDeviceMaintenance4Properties {
                        max_buffer_size: MAX_ALLOCATION,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES => answer(
                    next,
                    vk::PhysicalDeviceFloatControlsProperties {
                        denorm_behavior_independence: vk::ShaderFloatControlsIndependence::ALL,
                        rounding_mode_independence: vk::ShaderFloatControlsIndependence::ALL,
                        shader_signed_zero_inf_nan_preserve_float16: vk::TRUE,
                        shader_signed_zero_inf_nan_preserve_float32: vk::TRUE,
                        shader_signed_zero_inf_nan_preserve_float64: vk::TRUE,
                        shader_denorm_preserve_float16: vk::TRUE,
                        shader_denorm_preserve_float32: vk::TRUE,
                        shader_denorm_preserve_float64: vk::TRUE,
                        shader_rounding_mode_rte_float16: vk::TRUE,
                        shader_rounding_mode_rte_float32: vk::TRUE,
                        shader_rounding_mode_rte_float64: vk::TRUE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_PROPERTIES => answer(
                    next,
                    vk::PhysicalDeviceTimelineSemaphoreProperties {
                        max_timeline_semaphore_value_difference: u64::MAX,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR => answer(
                    next,
                    vk::PhysicalDeviceCooperativeMatrixPropertiesKHR {
                        cooperative_matrix_supported_stages: vk::ShaderStageFlags::COMPUTE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_NV => answer(
                    next,
                    vk::PhysicalDeviceCooperativeMatrixPropertiesNV {
                        cooperative_matrix_supported_stages: vk::ShaderStageFlags::COMPUTE,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV => answer(
                    next,
                    vk::PhysicalDeviceCooperativeMatrix2PropertiesNV {
                        cooperative_matrix_workgroup_scope_max_workgroup_size: PROFILE
                            .workgroup_scope_max_workgroup_size,
                        cooperative_matrix_flexible_dimensions_max_dimension: PROFILE
                            .flexible_dimensions_max_dimension,
                        cooperative_matrix_workgroup_scope_reserved_shared_memory: PROFILE
                            .workgroup_scope_reserved_shared_memory,
                        ..Default::default()
                    },
                ),
                S::PHYSICAL_DEVICE_COOPERATIVE_VECTOR_PROPERTIES_NV => {
                    let cv = PROFILE.cooperative_vector.as_ref();
                    answer(
                        next,
                        vk::PhysicalDeviceCooperativeVectorPropertiesNV {
                            cooperative_vector_supported_stages: vk::ShaderStageFlags::COMPUTE,
                            cooperative_vector_training_float16_accumulation: bool32(
                                cv.is_some_and(|c| c.training),
                            ),
                            cooperative_vector_training_float32_accumulation: vk::FALSE,
                            max_cooperative_vector_components: cv
                                .map(|c| c.max_components)
                                .unwrap_or(0),
                            ..Default::default()
                        },
                    )
                }
                _ => {}
            }
            next = (*next).next;
        }
    }
}

/// VkComponentTypeKHR of a profile's component name.
pub fn component_type(name: &str) -> Option<vk::ComponentTypeKHR> {
    use vk::ComponentTypeKHR as C;
    Some(match name {
        "float16" => C::FLOAT16,
        "float32" => C::FLOAT32,
        "float64" => C::FLOAT64,
        "sint8" => C::SINT8,
        "sint16" => C::SINT16,
        "sint32" => C::SINT32,
        "sint64" => C::SINT64,
        "uint8" => C::UINT8,
        "uint16" => C::UINT16,
        "uint32" => C::UINT32,
        "uint64" => C::UINT64,
        "bfloat16" => C::BFLOAT16,
        "sint8-packed" => C::SINT8_PACKED_NV,
        "uint8-packed" => C::UINT8_PACKED_NV,
        "e4m3" => C::FLOAT8_E4M3_EXT,
        "e5m2" => C::FLOAT8_E5M2_EXT,
        _ => return None,
    })
}

fn scope(name: &str) -> vk::ScopeKHR {
    if name == "workgroup" {
        vk::ScopeKHR::WORKGROUP
    } else {
        vk::ScopeKHR::SUBGROUP
    }
}

fn physical(handle: vk::PhysicalDevice) -> Result<Arc<PhysicalDevice>, Fail> {
    objects::get_dispatchable::<PhysicalDevice>(handle.as_raw())
}

// ---------------------------------------------------------------------------------------------
// Entry points.

pub(crate) unsafe extern "system" fn enumerate_instance_version(version: *mut u32) -> vk::Result {
    guard("vkEnumerateInstanceVersion", || {
        // SAFETY: output pointer from the application.
        let v = unsafe { out_ptr(version, "pApiVersion") }?;
        *v = API_VERSION;
        Ok(vk::Result::SUCCESS)
    })
}

fn extension_properties(list: &[(&str, u32)]) -> Vec<vk::ExtensionProperties> {
    list.iter()
        .map(|(n, v)| vk::ExtensionProperties {
            extension_name: vk::StringArray::from_bytes(n.as_bytes()),
            spec_version: *v,
        })
        .collect()
}

pub(crate) unsafe extern "system" fn enumerate_instance_extension_properties(
    layer: *const c_char,
    count: *mut u32,
    out: *mut vk::ExtensionProperties,
) -> vk::Result {
    guard("vkEnumerateInstanceExtensionProperties", || {
        if !layer.is_null() {
            return Ok(vk::Result::ERROR_LAYER_NOT_PRESENT);
        }
        // SAFETY: the two-call idiom's pointers from the application.
        unsafe { write_list(&extension_properties(INSTANCE_EXTENSIONS), count, out) }
    })
}

pub(crate) unsafe extern "system" fn enumerate_device_extension_properties(
    pd: vk::PhysicalDevice,
    layer: *const c_char,
    count: *mut u32,
    out: *mut vk::ExtensionProperties,
) -> vk::Result {
    guard("vkEnumerateDeviceExtensionProperties", || {
        physical(pd)?;
        if !layer.is_null() {
            return Ok(vk::Result::ERROR_LAYER_NOT_PRESENT);
        }
        // SAFETY: the two-call idiom's pointers from the application.
        unsafe { write_list(&extension_properties(DEVICE_EXTENSIONS), count, out) }
    })
}

/// Checks that every enabled extension is one of `known`.
///
/// # Safety
/// `names` must point at `count` NUL-terminated strings.
pub unsafe fn check_extensions(
    names: *const *const c_char,
    count: u32,
    known: &[(&str, u32)],
) -> Result<(), Fail> {
    // SAFETY: the caller's contract.
    for &n in unsafe { slice(names, count, "ppEnabledExtensionNames") }? {
        // SAFETY: each entry is a NUL-terminated string.
        let name = unsafe { name_bytes(n) };
        if !known.iter().any(|(k, _)| k.as_bytes() == name) {
            return Err(Fail::new(
                vk::Result::ERROR_EXTENSION_NOT_PRESENT,
                format!(
                    "extension {} is not supported by coopmat",
                    String::from_utf8_lossy(name)
                ),
            ));
        }
    }
    Ok(())
}

pub(crate) unsafe extern "system" fn create_instance(
    info: *const vk::InstanceCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Instance,
) -> vk::Result {
    guard("vkCreateInstance", || {
        // SAFETY: the application's create info.
        let info = unsafe { arg(info, "pCreateInfo") }?;
        // SAFETY: the names array of the create info.
        unsafe {
            check_extensions(
                info.enabled_extension_names,
                info.enabled_extension_count,
                INSTANCE_EXTENSIONS,
            )
        }?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pInstance") }?;
        let physical = objects::insert_dispatchable(Arc::new(PhysicalDevice));
        let inst = objects::insert_dispatchable(Arc::new(Instance { physical }));
        *out = vk::Instance::from_raw(inst);
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_instance(
    instance: vk::Instance,
    _alloc: *const vk::AllocationCallbacks,
) {
    guard_void("vkDestroyInstance", || {
        if let Some(inst) = objects::remove_dispatchable::<Instance>(instance.as_raw())? {
            objects::remove_dispatchable::<PhysicalDevice>(inst.physical)?;
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn enumerate_physical_devices(
    instance: vk::Instance,
    count: *mut u32,
    out: *mut vk::PhysicalDevice,
) -> vk::Result {
    guard("vkEnumeratePhysicalDevices", || {
        let inst = objects::get_dispatchable::<Instance>(instance.as_raw())?;
        // SAFETY: the two-call idiom's pointers from the application.
        unsafe { write_list(&[vk::PhysicalDevice::from_raw(inst.physical)], count, out) }
    })
}

pub(crate) unsafe extern "system" fn enumerate_physical_device_groups(
    instance: vk::Instance,
    count: *mut u32,
    out: *mut vk::PhysicalDeviceGroupProperties,
) -> vk::Result {
    guard("vkEnumeratePhysicalDeviceGroups", || {
        let inst = objects::get_dispatchable::<Instance>(instance.as_raw())?;
        // SAFETY: the count pointer from the application.
        let n = unsafe { out_ptr(count, "pCount") }?;
        if out.is_null() {
            *n = 1;
            return Ok(vk::Result::SUCCESS);
        }
        if *n == 0 {
            return Ok(vk::Result::INCOMPLETE);
        }
        *n = 1;
        // SAFETY: the application's array has room for one element; its sType and pNext are
        // the application's and are kept.
        unsafe {
            let g = &mut *out;
            g.physical_device_count = 1;
            g.physical_devices[0] = vk::PhysicalDevice::from_raw(inst.physical);
            g.subset_allocation = vk::FALSE;
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_properties(
    pd: vk::PhysicalDevice,
    out: *mut vk::PhysicalDeviceProperties,
) {
    guard_void("vkGetPhysicalDeviceProperties", || {
        physical(pd)?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pProperties") }?;
        *out = properties();
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_properties2(
    pd: vk::PhysicalDevice,
    out: *mut vk::PhysicalDeviceProperties2,
) {
    guard_void("vkGetPhysicalDeviceProperties2", || {
        physical(pd)?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pProperties") }?;
        out.properties = properties();
        // SAFETY: the application's pNext chain.
        unsafe { answer_properties(out.next as *mut vk::BaseOutStructure) };
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_features(
    pd: vk::PhysicalDevice,
    out: *mut vk::PhysicalDeviceFeatures,
) {
    guard_void("vkGetPhysicalDeviceFeatures", || {
        physical(pd)?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pFeatures") }?;
        *out = features();
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_features2(
    pd: vk::PhysicalDevice,
    out: *mut vk::PhysicalDeviceFeatures2,
) {
    guard_void("vkGetPhysicalDeviceFeatures2", || {
        physical(pd)?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pFeatures") }?;
        out.features = features();
        // SAFETY: the application's pNext chain.
        unsafe { answer_features(out.next as *mut vk::BaseOutStructure) };
        Ok(())
    })
}

fn queue_family() -> vk::QueueFamilyProperties {
    vk::QueueFamilyProperties {
        queue_flags: vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
        queue_count: 1,
        timestamp_valid_bits: 64,
        min_image_transfer_granularity: vk::Extent3D {
            width: 1,
            height: 1,
            depth: 1,
        },
    }
}

pub(crate) unsafe extern "system" fn get_physical_device_queue_family_properties(
    pd: vk::PhysicalDevice,
    count: *mut u32,
    out: *mut vk::QueueFamilyProperties,
) {
    guard_void("vkGetPhysicalDeviceQueueFamilyProperties", || {
        physical(pd)?;
        // SAFETY: the two-call idiom's pointers from the application.
        unsafe { write_list(&[queue_family()], count, out) }.map(|_| ())
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_queue_family_properties2(
    pd: vk::PhysicalDevice,
    count: *mut u32,
    out: *mut vk::QueueFamilyProperties2,
) {
    guard_void("vkGetPhysicalDeviceQueueFamilyProperties2", || {
        physical(pd)?;
        // SAFETY: the count pointer from the application.
        let n = unsafe { out_ptr(count, "pCount") }?;
        if out.is_null() {
            *n = 1;
        } else if *n >= 1 {
            *n = 1;
            // SAFETY: room for one element; the application's sType/pNext are kept.
            unsafe { (*out).queue_family_properties = queue_family() };
        }
        Ok(())
    })
}

fn memory_properties() -> vk::PhysicalDeviceMemoryProperties {
    let mut p = vk::PhysicalDeviceMemoryProperties {
        memory_type_count: 1,
        memory_heap_count: 1,
        ..Default::default()
    };
    p.memory_types[0] = vk::MemoryType {
        property_flags: vk::MemoryPropertyFlags::DEVICE_LOCAL
            | vk::MemoryPropertyFlags::HOST_VISIBLE
            | vk::MemoryPropertyFlags::HOST_COHERENT
            | vk::MemoryPropertyFlags::HOST_CACHED,
        heap_index: 0,
    };
    p.memory_heaps[0] = vk::MemoryHeap {
        size: host_memory(false),
        flags: vk::MemoryHeapFlags::DEVICE_LOCAL,
    };
    p
}

pub(crate) unsafe extern "system" fn get_physical_device_memory_properties(
    pd: vk::PhysicalDevice,
    out: *mut vk::PhysicalDeviceMemoryProperties,
) {
    guard_void("vkGetPhysicalDeviceMemoryProperties", || {
        physical(pd)?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pMemoryProperties") }?;
        *out = memory_properties();
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_memory_properties2(
    pd: vk::PhysicalDevice,
    out: *mut vk::PhysicalDeviceMemoryProperties2,
) {
    guard_void("vkGetPhysicalDeviceMemoryProperties2", || {
        physical(pd)?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pMemoryProperties") }?;
        out.memory_properties = memory_properties();
        let mut next = out.next as *mut vk::BaseOutStructure;
        while !next.is_null() {
            // SAFETY: the application's pNext chain; the budget structure is written whole.
            unsafe {
                if (*next).s_type == vk::StructureType::PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT
                {
                    let mut b = vk::PhysicalDeviceMemoryBudgetPropertiesEXT::default();
                    let total = host_memory(false);
                    let avail = host_memory(true);
                    b.heap_budget[0] = avail;
                    b.heap_usage[0] = total.saturating_sub(avail);
                    answer(next, b);
                }
                next = (*next).next;
            }
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_format_properties(
    pd: vk::PhysicalDevice,
    _format: vk::Format,
    out: *mut vk::FormatProperties,
) {
    guard_void("vkGetPhysicalDeviceFormatProperties", || {
        physical(pd)?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pFormatProperties") }?;
        // A compute-only driver without images or texel buffers: no format has features.
        *out = vk::FormatProperties::default();
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_format_properties2(
    pd: vk::PhysicalDevice,
    _format: vk::Format,
    out: *mut vk::FormatProperties2,
) {
    guard_void("vkGetPhysicalDeviceFormatProperties2", || {
        physical(pd)?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pFormatProperties") }?;
        out.format_properties = vk::FormatProperties::default();
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_image_format_properties(
    pd: vk::PhysicalDevice,
    _format: vk::Format,
    _ty: vk::ImageType,
    _tiling: vk::ImageTiling,
    _usage: vk::ImageUsageFlags,
    _flags: vk::ImageCreateFlags,
    _out: *mut vk::ImageFormatProperties,
) -> vk::Result {
    guard("vkGetPhysicalDeviceImageFormatProperties", || {
        physical(pd)?;
        Ok(vk::Result::ERROR_FORMAT_NOT_SUPPORTED)
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_image_format_properties2(
    pd: vk::PhysicalDevice,
    _info: *const vk::PhysicalDeviceImageFormatInfo2,
    _out: *mut vk::ImageFormatProperties2,
) -> vk::Result {
    guard("vkGetPhysicalDeviceImageFormatProperties2", || {
        physical(pd)?;
        Ok(vk::Result::ERROR_FORMAT_NOT_SUPPORTED)
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_sparse_image_format_properties(
    _pd: vk::PhysicalDevice,
    _format: vk::Format,
    _ty: vk::ImageType,
    _samples: vk::SampleCountFlags,
    _usage: vk::ImageUsageFlags,
    _tiling: vk::ImageTiling,
    count: *mut u32,
    _out: *mut vk::SparseImageFormatProperties,
) {
    guard_void("vkGetPhysicalDeviceSparseImageFormatProperties", || {
        // SAFETY: the count pointer from the application.
        if let Some(n) = unsafe { count.as_mut() } {
            *n = 0;
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_sparse_image_format_properties2(
    _pd: vk::PhysicalDevice,
    _info: *const vk::PhysicalDeviceSparseImageFormatInfo2,
    count: *mut u32,
    _out: *mut vk::SparseImageFormatProperties2,
) {
    guard_void("vkGetPhysicalDeviceSparseImageFormatProperties2", || {
        // SAFETY: the count pointer from the application.
        if let Some(n) = unsafe { count.as_mut() } {
            *n = 0;
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_external_buffer_properties(
    _pd: vk::PhysicalDevice,
    _info: *const vk::PhysicalDeviceExternalBufferInfo,
    out: *mut vk::ExternalBufferProperties,
) {
    guard_void("vkGetPhysicalDeviceExternalBufferProperties", || {
        // SAFETY: output pointer from the application; no external handle type is supported.
        if let Some(o) = unsafe { out.as_mut() } {
            o.external_memory_properties = vk::ExternalMemoryProperties::default();
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_external_semaphore_properties(
    _pd: vk::PhysicalDevice,
    _info: *const vk::PhysicalDeviceExternalSemaphoreInfo,
    out: *mut vk::ExternalSemaphoreProperties,
) {
    guard_void("vkGetPhysicalDeviceExternalSemaphoreProperties", || {
        // SAFETY: output pointer from the application; no external handle type is supported.
        if let Some(o) = unsafe { out.as_mut() } {
            o.export_from_imported_handle_types = Default::default();
            o.compatible_handle_types = Default::default();
            o.external_semaphore_features = Default::default();
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_external_fence_properties(
    _pd: vk::PhysicalDevice,
    _info: *const vk::PhysicalDeviceExternalFenceInfo,
    out: *mut vk::ExternalFenceProperties,
) {
    guard_void("vkGetPhysicalDeviceExternalFenceProperties", || {
        // SAFETY: output pointer from the application; no external handle type is supported.
        if let Some(o) = unsafe { out.as_mut() } {
            o.export_from_imported_handle_types = Default::default();
            o.compatible_handle_types = Default::default();
            o.external_fence_features = Default::default();
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_physical_device_tool_properties(
    _pd: vk::PhysicalDevice,
    count: *mut u32,
    _out: *mut vk::PhysicalDeviceToolProperties,
) -> vk::Result {
    guard("vkGetPhysicalDeviceToolProperties", || {
        // SAFETY: the count pointer from the application.
        if let Some(n) = unsafe { count.as_mut() } {
            *n = 0;
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn get_cooperative_matrix_properties_khr(
    pd: vk::PhysicalDevice,
    count: *mut u32,
    out: *mut vk::CooperativeMatrixPropertiesKHR,
) -> vk::Result {
    guard("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", || {
        physical(pd)?;
        let list: Vec<vk::CooperativeMatrixPropertiesKHR> = PROFILE
            .cooperative_matrix
            .iter()
            .filter_map(|e| {
                Some(vk::CooperativeMatrixPropertiesKHR {
                    m_size: e.m,
                    n_size: e.n,
                    k_size: e.k,
                    a_type: component_type(&e.a)?,
                    b_type: component_type(&e.b)?,
                    c_type: component_type(&e.c)?,
                    result_type: component_type(&e.result)?,
                    saturating_accumulation: bool32(e.saturating),
                    scope: scope(&e.scope),
                    ..Default::default()
                })
            })
            .collect();
        // SAFETY: the two-call idiom's pointers; each element keeps the application's sType
        // and pNext (written by `write_structs`).
        unsafe { write_structs(&list, count, out) }
    })
}

pub(crate) unsafe extern "system" fn get_cooperative_matrix_properties_nv(
    pd: vk::PhysicalDevice,
    count: *mut u32,
    out: *mut vk::CooperativeMatrixPropertiesNV,
) -> vk::Result {
    guard("vkGetPhysicalDeviceCooperativeMatrixPropertiesNV", || {
        physical(pd)?;
        // SPV_NV_cooperative_matrix has no bfloat16, saturation or workgroup scope.
        let list: Vec<vk::CooperativeMatrixPropertiesNV> = PROFILE
            .cooperative_matrix
            .iter()
            .filter(|e| e.scope == "subgroup" && !e.saturating && e.a != "bfloat16")
            .filter_map(|e| {
                let t =
                    |n: &str| component_type(n).map(|c| vk::ComponentTypeNV::from_raw(c.as_raw()));
                Some(vk::CooperativeMatrixPropertiesNV {
                    m_size: e.m,
                    n_size: e.n,
                    k_size: e.k,
                    a_type: t(&e.a)?,
                    b_type: t(&e.b)?,
                    c_type: t(&e.c)?,
                    d_type: t(&e.result)?,
                    scope: vk::ScopeNV::from_raw(vk::ScopeKHR::SUBGROUP.as_raw()),
                    ..Default::default()
                })
            })
            .collect();
        // SAFETY: as above.
        unsafe { write_structs(&list, count, out) }
    })
}

pub(crate) unsafe extern "system" fn get_cooperative_matrix_flexible_dimensions_properties_nv(
    pd: vk::PhysicalDevice,
    count: *mut u32,
    out: *mut vk::CooperativeMatrixFlexibleDimensionsPropertiesNV,
) -> vk::Result {
    guard(
        "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV",
        || {
            physical(pd)?;
            let list: Vec<vk::CooperativeMatrixFlexibleDimensionsPropertiesNV> = PROFILE
                .flexible_dimensions
                .iter()
                .filter_map(|e| {
                    Some(vk::CooperativeMatrixFlexibleDimensionsPropertiesNV {
                        m_granularity: e.m,
                        n_granularity: e.n,
                        k_granularity: e.k,
                        a_type: component_type(&e.a)?,
                        b_type: component_type(&e.b)?,
                        c_type: component_type(&e.c)?,
                        result_type: component_type(&e.result)?,
                        saturating_accumulation: bool32(e.saturating),
                        scope: scope(&e.scope),
                        workgroup_invocations: e.workgroup_invocations,
                        ..Default::default()
                    })
                })
                .collect();
            // SAFETY: as above.
            unsafe { write_structs(&list, count, out) }
        },
    )
}

pub(crate) unsafe extern "system" fn get_cooperative_vector_properties_nv(
    pd: vk::PhysicalDevice,
    count: *mut u32,
    out: *mut vk::CooperativeVectorPropertiesNV,
) -> vk::Result {
    guard("vkGetPhysicalDeviceCooperativeVectorPropertiesNV", || {
        physical(pd)?;
        let list: Vec<vk::CooperativeVectorPropertiesNV> = PROFILE
            .cooperative_vector
            .iter()
            .flat_map(|c| &c.combinations)
            .filter_map(|e| {
                Some(vk::CooperativeVectorPropertiesNV {
                    input_type: component_type(&e.input_type)?,
                    input_interpretation: component_type(&e.input_interpretation)?,
                    matrix_interpretation: component_type(&e.matrix_interpretation)?,
                    bias_interpretation: component_type(&e.bias_interpretation)?,
                    result_type: component_type(&e.result_type)?,
                    transpose: bool32(e.transpose),
                    ..Default::default()
                })
            })
            .collect();
        // SAFETY: as above.
        unsafe { write_structs(&list, count, out) }
    })
}

/// [`crate::entry::write_list`] for output structures that carry the application's sType and
/// pNext.
///
/// # Safety
/// As `write_list`; each element of `out` starts like VkBaseOutStructure.
unsafe fn write_structs<T>(items: &[T], count: *mut u32, out: *mut T) -> Result<vk::Result, Fail> {
    // SAFETY: the caller's contract; `answer` keeps sType and pNext; `T` is plain data.
    unsafe {
        crate::entry::write_each(items, count, out, |dst, it| {
            answer(dst as *mut vk::BaseOutStructure, std::ptr::read(it))
        })
    }
}

pub(crate) unsafe extern "system" fn create_debug_utils_messenger(
    instance: vk::Instance,
    info: *const vk::DebugUtilsMessengerCreateInfoEXT,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::DebugUtilsMessengerEXT,
) -> vk::Result {
    guard("vkCreateDebugUtilsMessengerEXT", || {
        objects::get_dispatchable::<Instance>(instance.as_raw())?;
        // SAFETY: the application's create info.
        let info = unsafe { arg(info, "pCreateInfo") }?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pMessenger") }?;
        let h = objects::insert(crate::sync::DebugMessenger);
        MESSENGERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Messenger {
                handle: h,
                severity: info.message_severity,
                callback: info.user_callback,
                user_data: info.user_data as usize,
            });
        *out = vk::DebugUtilsMessengerEXT::from_raw(h);
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_debug_utils_messenger(
    _instance: vk::Instance,
    messenger: vk::DebugUtilsMessengerEXT,
    _alloc: *const vk::AllocationCallbacks,
) {
    guard_void("vkDestroyDebugUtilsMessengerEXT", || {
        objects::remove::<crate::sync::DebugMessenger>(messenger.as_raw())?;
        MESSENGERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|m| m.handle != messenger.as_raw());
        Ok(())
    })
}
