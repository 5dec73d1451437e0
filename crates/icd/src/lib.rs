//! coopmat's Vulkan driver: a compute-only Vulkan 1.3 ICD that runs every dispatch on the
//! coopmat engine, with VK_KHR_cooperative_matrix, VK_NV_cooperative_matrix,
//! VK_NV_cooperative_matrix2, VK_NV_cooperative_matrix_decode_vector,
//! VK_QCOM_cooperative_matrix_conversion and VK_NV_cooperative_vector.
//!
//! The Vulkan loader finds the library through a manifest (`cargo xtask icd` writes both) and
//! talks to it through the three exported `vk_icd*` functions (Loader-Driver Interface,
//! version 7); every other entry point is handed out by name from [`entry_points!`]'s table.
//!
//! Layers: `entry` (errors, panic guard, name table helpers) · `objects` (handles and the
//! object table) · `instance` (instance, physical device and its queries) · `device` (device,
//! queue, memory, buffers) · `pipeline` (shader modules, pipelines, descriptors) ·
//! `commands` (recording) · `sync` (submission, execution, fences, semaphores, events,
//! queries).

pub mod commands;
pub mod device;
pub mod entry;
pub mod instance;
pub mod objects;
pub mod pipeline;
mod profile;
pub mod sync;
mod uniformity;

use std::ffi::c_char;

use vulkanalia_sys as vk;

use crate::entry::name_bytes;

/// The loader-driver interface version this driver speaks (vk_icd.h).
pub const LOADER_INTERFACE_VERSION: u32 = 7;

/// Where an entry point may be returned from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Level {
    /// vkGetInstanceProcAddr with a NULL instance.
    Global,
    /// Instance-level functions.
    Instance,
    /// Functions whose first parameter is a VkPhysicalDevice.
    Physical,
    /// Functions whose first parameter is a VkDevice, VkQueue or VkCommandBuffer.
    Device,
}

macro_rules! entry_points {
    ($($level:ident $name:literal => $f:path : $pfn:ident,)*) => {
        /// The entry point named `name` and its level (None for a name the driver lacks).
        pub fn lookup(name: &[u8]) -> Option<(Level, vk::PFN_vkVoidFunction)> {
            match name {
                $(
                    $name => {
                        // The PFN type checks the function's signature at compile time.
                        let f: vk::$pfn = $f;
                        // SAFETY: a function pointer is handed out as PFN_vkVoidFunction, as
                        // Vulkan prescribes; the caller casts it back to `$pfn`.
                        Some((Level::$level, Some(unsafe {
                            std::mem::transmute::<vk::$pfn, unsafe extern "system" fn()>(f)
                        })))
                    }
                )*
                _ => None,
            }
        }

        /// Every entry point name (for tests).
        pub const ENTRY_POINT_NAMES: &[&[u8]] = &[$($name),*];
    };
}

entry_points! {
    Global b"vkGetInstanceProcAddr" => get_instance_proc_addr: PFN_vkGetInstanceProcAddr,
    Global b"vkEnumerateInstanceVersion" => instance::enumerate_instance_version: PFN_vkEnumerateInstanceVersion,
    Global b"vkEnumerateInstanceExtensionProperties" => instance::enumerate_instance_extension_properties: PFN_vkEnumerateInstanceExtensionProperties,
    Global b"vkCreateInstance" => instance::create_instance: PFN_vkCreateInstance,
    Instance b"vkDestroyInstance" => instance::destroy_instance: PFN_vkDestroyInstance,
    Instance b"vkEnumeratePhysicalDevices" => instance::enumerate_physical_devices: PFN_vkEnumeratePhysicalDevices,
    Instance b"vkEnumeratePhysicalDeviceGroups" => instance::enumerate_physical_device_groups: PFN_vkEnumeratePhysicalDeviceGroups,
    Instance b"vkEnumeratePhysicalDeviceGroupsKHR" => instance::enumerate_physical_device_groups: PFN_vkEnumeratePhysicalDeviceGroups,
    Instance b"vkGetDeviceProcAddr" => get_device_proc_addr: PFN_vkGetDeviceProcAddr,
    Instance b"vkCreateDebugUtilsMessengerEXT" => instance::create_debug_utils_messenger: PFN_vkCreateDebugUtilsMessengerEXT,
    Instance b"vkDestroyDebugUtilsMessengerEXT" => instance::destroy_debug_utils_messenger: PFN_vkDestroyDebugUtilsMessengerEXT,
    Physical b"vkGetPhysicalDeviceProperties" => instance::get_physical_device_properties: PFN_vkGetPhysicalDeviceProperties,
    Physical b"vkGetPhysicalDeviceProperties2" => instance::get_physical_device_properties2: PFN_vkGetPhysicalDeviceProperties2,
    Physical b"vkGetPhysicalDeviceProperties2KHR" => instance::get_physical_device_properties2: PFN_vkGetPhysicalDeviceProperties2,
    Physical b"vkGetPhysicalDeviceFeatures" => instance::get_physical_device_features: PFN_vkGetPhysicalDeviceFeatures,
    Physical b"vkGetPhysicalDeviceFeatures2" => instance::get_physical_device_features2: PFN_vkGetPhysicalDeviceFeatures2,
    Physical b"vkGetPhysicalDeviceFeatures2KHR" => instance::get_physical_device_features2: PFN_vkGetPhysicalDeviceFeatures2,
    Physical b"vkGetPhysicalDeviceQueueFamilyProperties" => instance::get_physical_device_queue_family_properties: PFN_vkGetPhysicalDeviceQueueFamilyProperties,
    Physical b"vkGetPhysicalDeviceQueueFamilyProperties2" => instance::get_physical_device_queue_family_properties2: PFN_vkGetPhysicalDeviceQueueFamilyProperties2,
    Physical b"vkGetPhysicalDeviceQueueFamilyProperties2KHR" => instance::get_physical_device_queue_family_properties2: PFN_vkGetPhysicalDeviceQueueFamilyProperties2,
    Physical b"vkGetPhysicalDeviceMemoryProperties" => instance::get_physical_device_memory_properties: PFN_vkGetPhysicalDeviceMemoryProperties,
    Physical b"vkGetPhysicalDeviceMemoryProperties2" => instance::get_physical_device_memory_properties2: PFN_vkGetPhysicalDeviceMemoryProperties2,
    Physical b"vkGetPhysicalDeviceMemoryProperties2KHR" => instance::get_physical_device_memory_properties2: PFN_vkGetPhysicalDeviceMemoryProperties2,
    Physical b"vkGetPhysicalDeviceFormatProperties" => instance::get_physical_device_format_properties: PFN_vkGetPhysicalDeviceFormatProperties,
    Physical b"vkGetPhysicalDeviceFormatProperties2" => instance::get_physical_device_format_properties2: PFN_vkGetPhysicalDeviceFormatProperties2,
    Physical b"vkGetPhysicalDeviceFormatProperties2KHR" => instance::get_physical_device_format_properties2: PFN_vkGetPhysicalDeviceFormatProperties2,
    Physical b"vkGetPhysicalDeviceImageFormatProperties" => instance::get_physical_device_image_format_properties: PFN_vkGetPhysicalDeviceImageFormatProperties,
    Physical b"vkGetPhysicalDeviceImageFormatProperties2" => instance::get_physical_device_image_format_properties2: PFN_vkGetPhysicalDeviceImageFormatProperties2,
    Physical b"vkGetPhysicalDeviceImageFormatProperties2KHR" => instance::get_physical_device_image_format_properties2: PFN_vkGetPhysicalDeviceImageFormatProperties2,
    Physical b"vkGetPhysicalDeviceSparseImageFormatProperties" => instance::get_physical_device_sparse_image_format_properties: PFN_vkGetPhysicalDeviceSparseImageFormatProperties,
    Physical b"vkGetPhysicalDeviceSparseImageFormatProperties2" => instance::get_physical_device_sparse_image_format_properties2: PFN_vkGetPhysicalDeviceSparseImageFormatProperties2,
    Physical b"vkGetPhysicalDeviceExternalBufferProperties" => instance::get_physical_device_external_buffer_properties: PFN_vkGetPhysicalDeviceExternalBufferProperties,
    Physical b"vkGetPhysicalDeviceExternalBufferPropertiesKHR" => instance::get_physical_device_external_buffer_properties: PFN_vkGetPhysicalDeviceExternalBufferProperties,
    Physical b"vkGetPhysicalDeviceExternalSemaphoreProperties" => instance::get_physical_device_external_semaphore_properties: PFN_vkGetPhysicalDeviceExternalSemaphoreProperties,
    Physical b"vkGetPhysicalDeviceExternalSemaphorePropertiesKHR" => instance::get_physical_device_external_semaphore_properties: PFN_vkGetPhysicalDeviceExternalSemaphoreProperties,
    Physical b"vkGetPhysicalDeviceExternalFenceProperties" => instance::get_physical_device_external_fence_properties: PFN_vkGetPhysicalDeviceExternalFenceProperties,
    Physical b"vkGetPhysicalDeviceExternalFencePropertiesKHR" => instance::get_physical_device_external_fence_properties: PFN_vkGetPhysicalDeviceExternalFenceProperties,
    Physical b"vkGetPhysicalDeviceToolProperties" => instance::get_physical_device_tool_properties: PFN_vkGetPhysicalDeviceToolProperties,
    Physical b"vkEnumerateDeviceExtensionProperties" => instance::enumerate_device_extension_properties: PFN_vkEnumerateDeviceExtensionProperties,
    Physical b"vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR" => instance::get_cooperative_matrix_properties_khr: PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR,
    Physical b"vkGetPhysicalDeviceCooperativeMatrixPropertiesNV" => instance::get_cooperative_matrix_properties_nv: PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV,
    Physical b"vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV" => instance::get_cooperative_matrix_flexible_dimensions_properties_nv: PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV,
    Physical b"vkGetPhysicalDeviceCooperativeVectorPropertiesNV" => instance::get_cooperative_vector_properties_nv: PFN_vkGetPhysicalDeviceCooperativeVectorPropertiesNV,
    Physical b"vkCreateDevice" => device::create_device: PFN_vkCreateDevice,
    Device b"vkDestroyDevice" => device::destroy_device: PFN_vkDestroyDevice,
    Device b"vkGetDeviceQueue" => device::get_device_queue: PFN_vkGetDeviceQueue,
    Device b"vkGetDeviceQueue2" => device::get_device_queue2: PFN_vkGetDeviceQueue2,
    Device b"vkDeviceWaitIdle" => device::device_wait_idle: PFN_vkDeviceWaitIdle,
    Device b"vkAllocateMemory" => device::allocate_memory: PFN_vkAllocateMemory,
    Device b"vkFreeMemory" => device::free_memory: PFN_vkFreeMemory,
    Device b"vkMapMemory" => device::map_memory: PFN_vkMapMemory,
    Device b"vkUnmapMemory" => device::unmap_memory: PFN_vkUnmapMemory,
    Device b"vkFlushMappedMemoryRanges" => device::flush_mapped_memory_ranges: PFN_vkFlushMappedMemoryRanges,
    Device b"vkInvalidateMappedMemoryRanges" => device::invalidate_mapped_memory_ranges: PFN_vkInvalidateMappedMemoryRanges,
    Device b"vkGetDeviceMemoryCommitment" => device::get_device_memory_commitment: PFN_vkGetDeviceMemoryCommitment,
    Device b"vkCreateBuffer" => device::create_buffer: PFN_vkCreateBuffer,
    Device b"vkDestroyBuffer" => device::destroy_buffer: PFN_vkDestroyBuffer,
    Device b"vkGetBufferMemoryRequirements" => device::get_buffer_memory_requirements: PFN_vkGetBufferMemoryRequirements,
    Device b"vkGetBufferMemoryRequirements2" => device::get_buffer_memory_requirements2: PFN_vkGetBufferMemoryRequirements2,
    Device b"vkGetBufferMemoryRequirements2KHR" => device::get_buffer_memory_requirements2: PFN_vkGetBufferMemoryRequirements2,
    Device b"vkGetDeviceBufferMemoryRequirements" => device::get_device_buffer_memory_requirements: PFN_vkGetDeviceBufferMemoryRequirements,
    Device b"vkGetDeviceBufferMemoryRequirementsKHR" => device::get_device_buffer_memory_requirements: PFN_vkGetDeviceBufferMemoryRequirements,
    Device b"vkBindBufferMemory" => device::bind_buffer_memory: PFN_vkBindBufferMemory,
    Device b"vkBindBufferMemory2" => device::bind_buffer_memory2: PFN_vkBindBufferMemory2,
    Device b"vkBindBufferMemory2KHR" => device::bind_buffer_memory2: PFN_vkBindBufferMemory2,
    Device b"vkGetBufferDeviceAddress" => device::get_buffer_device_address: PFN_vkGetBufferDeviceAddress,
    Device b"vkGetBufferDeviceAddressKHR" => device::get_buffer_device_address: PFN_vkGetBufferDeviceAddress,
    Device b"vkGetBufferDeviceAddressEXT" => device::get_buffer_device_address: PFN_vkGetBufferDeviceAddress,
    Device b"vkGetBufferOpaqueCaptureAddress" => device::get_buffer_opaque_capture_address: PFN_vkGetBufferOpaqueCaptureAddress,
    Device b"vkGetDeviceMemoryOpaqueCaptureAddress" => device::get_device_memory_opaque_capture_address: PFN_vkGetDeviceMemoryOpaqueCaptureAddress,
    Device b"vkCreateShaderModule" => pipeline::create_shader_module: PFN_vkCreateShaderModule,
    Device b"vkDestroyShaderModule" => pipeline::destroy_shader_module: PFN_vkDestroyShaderModule,
    Device b"vkCreateComputePipelines" => pipeline::create_compute_pipelines: PFN_vkCreateComputePipelines,
    Device b"vkDestroyPipeline" => pipeline::destroy_pipeline: PFN_vkDestroyPipeline,
    Device b"vkCreatePipelineCache" => pipeline::create_pipeline_cache: PFN_vkCreatePipelineCache,
    Device b"vkDestroyPipelineCache" => pipeline::destroy_pipeline_cache: PFN_vkDestroyPipelineCache,
    Device b"vkGetPipelineCacheData" => pipeline::get_pipeline_cache_data: PFN_vkGetPipelineCacheData,
    Device b"vkMergePipelineCaches" => pipeline::merge_pipeline_caches: PFN_vkMergePipelineCaches,
    Device b"vkCreatePipelineLayout" => pipeline::create_pipeline_layout: PFN_vkCreatePipelineLayout,
    Device b"vkDestroyPipelineLayout" => pipeline::destroy_pipeline_layout: PFN_vkDestroyPipelineLayout,
    Device b"vkCreateDescriptorSetLayout" => pipeline::create_descriptor_set_layout: PFN_vkCreateDescriptorSetLayout,
    Device b"vkDestroyDescriptorSetLayout" => pipeline::destroy_descriptor_set_layout: PFN_vkDestroyDescriptorSetLayout,
    Device b"vkCreateDescriptorPool" => pipeline::create_descriptor_pool: PFN_vkCreateDescriptorPool,
    Device b"vkDestroyDescriptorPool" => pipeline::destroy_descriptor_pool: PFN_vkDestroyDescriptorPool,
    Device b"vkResetDescriptorPool" => pipeline::reset_descriptor_pool: PFN_vkResetDescriptorPool,
    Device b"vkAllocateDescriptorSets" => pipeline::allocate_descriptor_sets: PFN_vkAllocateDescriptorSets,
    Device b"vkFreeDescriptorSets" => pipeline::free_descriptor_sets: PFN_vkFreeDescriptorSets,
    Device b"vkUpdateDescriptorSets" => pipeline::update_descriptor_sets: PFN_vkUpdateDescriptorSets,
    Device b"vkCreateSampler" => pipeline::create_sampler: PFN_vkCreateSampler,
    Device b"vkDestroySampler" => pipeline::destroy_sampler: PFN_vkDestroySampler,
    Device b"vkCreateCommandPool" => commands::create_command_pool: PFN_vkCreateCommandPool,
    Device b"vkDestroyCommandPool" => commands::destroy_command_pool: PFN_vkDestroyCommandPool,
    Device b"vkResetCommandPool" => commands::reset_command_pool: PFN_vkResetCommandPool,
    Device b"vkTrimCommandPool" => commands::trim_command_pool: PFN_vkTrimCommandPool,
    Device b"vkTrimCommandPoolKHR" => commands::trim_command_pool: PFN_vkTrimCommandPool,
    Device b"vkAllocateCommandBuffers" => commands::allocate_command_buffers: PFN_vkAllocateCommandBuffers,
    Device b"vkFreeCommandBuffers" => commands::free_command_buffers: PFN_vkFreeCommandBuffers,
    Device b"vkBeginCommandBuffer" => commands::begin_command_buffer: PFN_vkBeginCommandBuffer,
    Device b"vkEndCommandBuffer" => commands::end_command_buffer: PFN_vkEndCommandBuffer,
    Device b"vkResetCommandBuffer" => commands::reset_command_buffer: PFN_vkResetCommandBuffer,
    Device b"vkCmdBindPipeline" => commands::cmd_bind_pipeline: PFN_vkCmdBindPipeline,
    Device b"vkCmdBindDescriptorSets" => commands::cmd_bind_descriptor_sets: PFN_vkCmdBindDescriptorSets,
    Device b"vkCmdPushConstants" => commands::cmd_push_constants: PFN_vkCmdPushConstants,
    Device b"vkCmdDispatch" => commands::cmd_dispatch: PFN_vkCmdDispatch,
    Device b"vkCmdDispatchBase" => commands::cmd_dispatch_base: PFN_vkCmdDispatchBase,
    Device b"vkCmdDispatchBaseKHR" => commands::cmd_dispatch_base: PFN_vkCmdDispatchBase,
    Device b"vkCmdDispatchIndirect" => commands::cmd_dispatch_indirect: PFN_vkCmdDispatchIndirect,
    Device b"vkCmdCopyBuffer" => commands::cmd_copy_buffer: PFN_vkCmdCopyBuffer,
    Device b"vkCmdCopyBuffer2" => commands::cmd_copy_buffer2: PFN_vkCmdCopyBuffer2,
    Device b"vkCmdCopyBuffer2KHR" => commands::cmd_copy_buffer2: PFN_vkCmdCopyBuffer2,
    Device b"vkCmdFillBuffer" => commands::cmd_fill_buffer: PFN_vkCmdFillBuffer,
    Device b"vkCmdUpdateBuffer" => commands::cmd_update_buffer: PFN_vkCmdUpdateBuffer,
    Device b"vkCmdPipelineBarrier" => commands::cmd_pipeline_barrier: PFN_vkCmdPipelineBarrier,
    Device b"vkCmdPipelineBarrier2" => commands::cmd_pipeline_barrier2: PFN_vkCmdPipelineBarrier2,
    Device b"vkCmdPipelineBarrier2KHR" => commands::cmd_pipeline_barrier2: PFN_vkCmdPipelineBarrier2,
    Device b"vkCmdSetEvent" => commands::cmd_set_event: PFN_vkCmdSetEvent,
    Device b"vkCmdSetEvent2" => commands::cmd_set_event2: PFN_vkCmdSetEvent2,
    Device b"vkCmdSetEvent2KHR" => commands::cmd_set_event2: PFN_vkCmdSetEvent2,
    Device b"vkCmdResetEvent" => commands::cmd_reset_event: PFN_vkCmdResetEvent,
    Device b"vkCmdResetEvent2" => commands::cmd_reset_event2: PFN_vkCmdResetEvent2,
    Device b"vkCmdResetEvent2KHR" => commands::cmd_reset_event2: PFN_vkCmdResetEvent2,
    Device b"vkCmdWaitEvents" => commands::cmd_wait_events: PFN_vkCmdWaitEvents,
    Device b"vkCmdWaitEvents2" => commands::cmd_wait_events2: PFN_vkCmdWaitEvents2,
    Device b"vkCmdWaitEvents2KHR" => commands::cmd_wait_events2: PFN_vkCmdWaitEvents2,
    Device b"vkCmdWriteTimestamp" => commands::cmd_write_timestamp: PFN_vkCmdWriteTimestamp,
    Device b"vkCmdWriteTimestamp2" => commands::cmd_write_timestamp2: PFN_vkCmdWriteTimestamp2,
    Device b"vkCmdWriteTimestamp2KHR" => commands::cmd_write_timestamp2: PFN_vkCmdWriteTimestamp2,
    Device b"vkCmdResetQueryPool" => commands::cmd_reset_query_pool: PFN_vkCmdResetQueryPool,
    Device b"vkQueueSubmit" => sync::queue_submit: PFN_vkQueueSubmit,
    Device b"vkQueueSubmit2" => sync::queue_submit2: PFN_vkQueueSubmit2,
    Device b"vkQueueSubmit2KHR" => sync::queue_submit2: PFN_vkQueueSubmit2,
    Device b"vkQueueWaitIdle" => sync::queue_wait_idle: PFN_vkQueueWaitIdle,
    Device b"vkCreateFence" => sync::create_fence: PFN_vkCreateFence,
    Device b"vkDestroyFence" => sync::destroy_fence: PFN_vkDestroyFence,
    Device b"vkResetFences" => sync::reset_fences: PFN_vkResetFences,
    Device b"vkGetFenceStatus" => sync::get_fence_status: PFN_vkGetFenceStatus,
    Device b"vkWaitForFences" => sync::wait_for_fences: PFN_vkWaitForFences,
    Device b"vkCreateSemaphore" => sync::create_semaphore: PFN_vkCreateSemaphore,
    Device b"vkDestroySemaphore" => sync::destroy_semaphore: PFN_vkDestroySemaphore,
    Device b"vkGetSemaphoreCounterValue" => sync::get_semaphore_counter_value: PFN_vkGetSemaphoreCounterValue,
    Device b"vkGetSemaphoreCounterValueKHR" => sync::get_semaphore_counter_value: PFN_vkGetSemaphoreCounterValue,
    Device b"vkWaitSemaphores" => sync::wait_semaphores: PFN_vkWaitSemaphores,
    Device b"vkWaitSemaphoresKHR" => sync::wait_semaphores: PFN_vkWaitSemaphores,
    Device b"vkSignalSemaphore" => sync::signal_semaphore_host: PFN_vkSignalSemaphore,
    Device b"vkSignalSemaphoreKHR" => sync::signal_semaphore_host: PFN_vkSignalSemaphore,
    Device b"vkCreateEvent" => sync::create_event: PFN_vkCreateEvent,
    Device b"vkDestroyEvent" => sync::destroy_event: PFN_vkDestroyEvent,
    Device b"vkGetEventStatus" => sync::get_event_status: PFN_vkGetEventStatus,
    Device b"vkSetEvent" => sync::set_event: PFN_vkSetEvent,
    Device b"vkResetEvent" => sync::reset_event: PFN_vkResetEvent,
    Device b"vkCreateQueryPool" => sync::create_query_pool: PFN_vkCreateQueryPool,
    Device b"vkDestroyQueryPool" => sync::destroy_query_pool: PFN_vkDestroyQueryPool,
    Device b"vkResetQueryPool" => sync::reset_query_pool: PFN_vkResetQueryPool,
    Device b"vkResetQueryPoolEXT" => sync::reset_query_pool: PFN_vkResetQueryPool,
    Device b"vkGetQueryPoolResults" => sync::get_query_pool_results: PFN_vkGetQueryPoolResults,
}

/// vkGetInstanceProcAddr: global functions with a NULL instance, every function otherwise.
unsafe extern "system" fn get_instance_proc_addr(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    entry::guard_value("vkGetInstanceProcAddr", None, || {
        // SAFETY: the name is a NUL-terminated string (the loader's or the application's).
        let name = unsafe { name_bytes(name) };
        Ok(match lookup(name) {
            Some((level, f)) if level == Level::Global || instance != vk::Instance::default() => f,
            _ => None,
        })
    })
}

/// vkGetDeviceProcAddr: device-level functions only; NULL for every other name.
unsafe extern "system" fn get_device_proc_addr(
    _device: vk::Device,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    entry::guard_value("vkGetDeviceProcAddr", None, || {
        // SAFETY: the name is a NUL-terminated string.
        let name = unsafe { name_bytes(name) };
        Ok(match lookup(name) {
            Some((Level::Device, f)) => f,
            _ => None,
        })
    })
}

/// Loader-Driver Interface: agree on the interface version (min of the loader's and ours).
///
/// # Safety
/// `version` must be NULL or point at a writable u32 (the loader's contract).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn vk_icdNegotiateLoaderICDInterfaceVersion(
    version: *mut u32,
) -> vk::Result {
    entry::guard("vk_icdNegotiateLoaderICDInterfaceVersion", || {
        // SAFETY: the loader's pointer.
        let v = unsafe { version.as_mut() }
            .ok_or_else(|| entry::Fail::usage("pSupportedVersion is NULL"))?;
        if *v < 5 {
            // Vulkan 1.1+ drivers need interface 5 or later (the loader checks the API version).
            return Ok(vk::Result::ERROR_INCOMPATIBLE_DRIVER);
        }
        *v = (*v).min(LOADER_INTERFACE_VERSION);
        Ok(vk::Result::SUCCESS)
    })
}

/// Loader-Driver Interface: every entry point by name (the three `vk_icd*` functions too).
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn vk_icdGetInstanceProcAddr(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    // SAFETY: as the caller's contract.
    let bytes = unsafe { name_bytes(name) };
    match bytes {
        b"vk_icdNegotiateLoaderICDInterfaceVersion" => {
            let f: unsafe extern "system" fn(*mut u32) -> vk::Result =
                vk_icdNegotiateLoaderICDInterfaceVersion;
            // SAFETY: handed out as a void function; the loader casts it back.
            Some(unsafe {
                std::mem::transmute::<
                    unsafe extern "system" fn(*mut u32) -> vk::Result,
                    unsafe extern "system" fn(),
                >(f)
            })
        }
        b"vk_icdGetPhysicalDeviceProcAddr" => {
            let f: vk::PFN_vkGetInstanceProcAddr = vk_icdGetPhysicalDeviceProcAddr;
            // SAFETY: as above.
            Some(unsafe {
                std::mem::transmute::<vk::PFN_vkGetInstanceProcAddr, unsafe extern "system" fn()>(f)
            })
        }
        b"vk_icdGetInstanceProcAddr" => {
            let f: vk::PFN_vkGetInstanceProcAddr = vk_icdGetInstanceProcAddr;
            // SAFETY: as above.
            Some(unsafe {
                std::mem::transmute::<vk::PFN_vkGetInstanceProcAddr, unsafe extern "system" fn()>(f)
            })
        }
        // SAFETY: forwarded.
        _ => unsafe { get_instance_proc_addr(instance, name) },
    }
}

/// Loader-Driver Interface: functions whose first parameter is a VkPhysicalDevice; NULL for
/// anything else (so the loader can route physical-device functions it does not know).
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn vk_icdGetPhysicalDeviceProcAddr(
    _instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    // SAFETY: as the caller's contract.
    let bytes = unsafe { name_bytes(name) };
    match lookup(bytes) {
        Some((Level::Physical, f)) => f,
        _ => None,
    }
}
