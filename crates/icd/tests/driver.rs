//! The driver's entry points called in-process, as the Vulkan loader would call them: a KHR
//! cooperative-matrix multiply recorded, submitted and read back through mapped memory;
//! misuse of the API answered with errors; create/destroy cycles that leave no objects behind.
//! (The loader path itself is tested in `loader.rs`.)

use std::ffi::{CStr, c_void};
use std::ptr::{null, null_mut};

use coopmat_icd::{lookup, objects};
use vulkanalia_sys::{self as vk, Handle};

/// The entry point `name` as its PFN type.
macro_rules! pfn {
    ($name:literal, $ty:ident) => {
        entry::<vk::$ty>($name)
    };
}

/// The driver's function `name` cast to `F`, its PFN type.
fn entry<F: Copy>(name: &[u8]) -> F {
    let f = lookup(name)
        .and_then(|(_, f)| f)
        .unwrap_or_else(|| panic!("the driver lacks {}", String::from_utf8_lossy(name)));
    assert_eq!(size_of::<F>(), size_of::<unsafe extern "system" fn()>());
    // SAFETY: the table hands out each function under its own name and `F` is that name's
    // PFN type (the table checks the signature at compile time); both are function pointers.
    unsafe { std::mem::transmute_copy::<unsafe extern "system" fn(), F>(&f) }
}

/// The KHR GEMM of `examples/khr_coopmat_gemm.amber` (C += A·B, 16×16 f16 tiles, f32 C, B
/// column-major), assembled from the example's SPIR-V text.
fn gemm_module() -> Vec<u32> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/khr_coopmat_gemm.amber"
    ))
    .unwrap();
    let start = text.find("; SPIR-V").unwrap();
    let end = start + text[start..].find("\nEND").unwrap();
    coopmat_spirv::asm::assemble(&text[start..end], &Default::default()).unwrap()
}

struct Setup {
    instance: vk::Instance,
    device: vk::Device,
    queue: vk::Queue,
}

fn setup() -> Setup {
    let create_instance = pfn!(b"vkCreateInstance", PFN_vkCreateInstance);
    let enumerate = pfn!(
        b"vkEnumeratePhysicalDevices",
        PFN_vkEnumeratePhysicalDevices
    );
    let create_device = pfn!(b"vkCreateDevice", PFN_vkCreateDevice);
    let get_queue = pfn!(b"vkGetDeviceQueue", PFN_vkGetDeviceQueue);
    let mut instance = vk::Instance::null();
    let info = vk::InstanceCreateInfo::default();
    // SAFETY: valid create info and output pointer.
    assert_eq!(
        unsafe { create_instance(&info, null(), &mut instance) },
        vk::Result::SUCCESS
    );
    let (mut n, mut pd) = (1u32, vk::PhysicalDevice::null());
    // SAFETY: room for one handle.
    assert_eq!(
        unsafe { enumerate(instance, &mut n, &mut pd) },
        vk::Result::SUCCESS
    );
    let prio = 1.0f32;
    let qi = vk::DeviceQueueCreateInfo {
        queue_family_index: 0,
        queue_count: 1,
        queue_priorities: &prio,
        ..Default::default()
    };
    let di = vk::DeviceCreateInfo {
        queue_create_info_count: 1,
        queue_create_infos: &qi,
        ..Default::default()
    };
    let mut device = vk::Device::null();
    // SAFETY: valid create info.
    assert_eq!(
        unsafe { create_device(pd, &di, null(), &mut device) },
        vk::Result::SUCCESS
    );
    let mut queue = vk::Queue::null();
    // SAFETY: queue 0 of family 0 exists.
    unsafe { get_queue(device, 0, 0, &mut queue) };
    Setup {
        instance,
        device,
        queue,
    }
}

fn teardown(s: Setup) {
    let destroy_device = pfn!(b"vkDestroyDevice", PFN_vkDestroyDevice);
    let destroy_instance = pfn!(b"vkDestroyInstance", PFN_vkDestroyInstance);
    // SAFETY: handles from `setup`.
    unsafe {
        destroy_device(s.device, null());
        destroy_instance(s.instance, null());
    }
}

/// A host-visible buffer of `size` bytes with its memory and mapping.
fn buffer(dev: vk::Device, size: u64) -> (vk::Buffer, vk::DeviceMemory, *mut u8) {
    let create = pfn!(b"vkCreateBuffer", PFN_vkCreateBuffer);
    let alloc = pfn!(b"vkAllocateMemory", PFN_vkAllocateMemory);
    let bind = pfn!(b"vkBindBufferMemory", PFN_vkBindBufferMemory);
    let map = pfn!(b"vkMapMemory", PFN_vkMapMemory);
    let (mut b, mut m, mut p) = (
        vk::Buffer::null(),
        vk::DeviceMemory::null(),
        null_mut::<c_void>(),
    );
    let bi = vk::BufferCreateInfo {
        size,
        usage: vk::BufferUsageFlags::STORAGE_BUFFER,
        ..Default::default()
    };
    let ai = vk::MemoryAllocateInfo {
        allocation_size: size,
        memory_type_index: 0,
        ..Default::default()
    };
    // SAFETY: valid infos and output pointers.
    unsafe {
        assert_eq!(create(dev, &bi, null(), &mut b), vk::Result::SUCCESS);
        assert_eq!(alloc(dev, &ai, null(), &mut m), vk::Result::SUCCESS);
        assert_eq!(bind(dev, b, m, 0), vk::Result::SUCCESS);
        assert_eq!(
            map(dev, m, 0, size, vk::MemoryMapFlags::empty(), &mut p),
            vk::Result::SUCCESS
        );
    }
    (b, m, p as *mut u8)
}

/// Records and submits the GEMM over buffers a, b, c; returns the submit's result.
fn run_gemm(s: &Setup, bufs: [vk::Buffer; 3]) -> vk::Result {
    run_compute(s, &gemm_module(), &bufs, &[], [1, 1, 1])
}

/// Records and submits one dispatch of `words` with `bufs` at bindings 0.. of set 0 and
/// `push` as push constants; returns the submit's result.
fn run_compute(
    s: &Setup,
    words: &[u32],
    bufs: &[vk::Buffer],
    push: &[u8],
    groups: [u32; 3],
) -> vk::Result {
    let dispatch = |cb: vk::CommandBuffer, _: vk::PipelineLayout| {
        // SAFETY: a command buffer in the recording state.
        unsafe { pfn!(b"vkCmdDispatch", PFN_vkCmdDispatch)(cb, groups[0], groups[1], groups[2]) };
    };
    record_and_submit(s, words, bufs, push, &dispatch)
}

/// Creates the pipeline for `words` with `bufs` at bindings 0.. of set 0, records binding it,
/// the push constants, then `record`'s commands; submits and waits. Returns the submit's result.
fn record_and_submit(
    s: &Setup,
    words: &[u32],
    bufs: &[vk::Buffer],
    push: &[u8],
    record: &dyn Fn(vk::CommandBuffer, vk::PipelineLayout),
) -> vk::Result {
    let dev = s.device;
    let nb = bufs.len() as u32;
    let mut module = vk::ShaderModule::null();
    let smi = vk::ShaderModuleCreateInfo {
        code_size: words.len() * 4,
        code: words.as_ptr(),
        ..Default::default()
    };
    let bindings: Vec<vk::DescriptorSetLayoutBinding> = (0..nb)
        .map(|i| vk::DescriptorSetLayoutBinding {
            binding: i,
            descriptor_type: vk::DescriptorType::STORAGE_BUFFER,
            descriptor_count: 1,
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            immutable_samplers: null(),
        })
        .collect();
    let dsli = vk::DescriptorSetLayoutCreateInfo {
        binding_count: nb,
        bindings: bindings.as_ptr(),
        ..Default::default()
    };
    let mut dsl = vk::DescriptorSetLayout::null();
    let mut layout = vk::PipelineLayout::null();
    let mut pipeline = vk::Pipeline::null();
    let mut pool = vk::DescriptorPool::null();
    let mut set = vk::DescriptorSet::null();
    let mut cpool = vk::CommandPool::null();
    let mut cb = vk::CommandBuffer::null();
    let mut fence = vk::Fence::null();
    let entry = c"main";
    // SAFETY: every call gets valid infos and output pointers, in the order Vulkan requires.
    unsafe {
        assert_eq!(
            pfn!(b"vkCreateShaderModule", PFN_vkCreateShaderModule)(dev, &smi, null(), &mut module),
            vk::Result::SUCCESS
        );
        assert_eq!(
            pfn!(
                b"vkCreateDescriptorSetLayout",
                PFN_vkCreateDescriptorSetLayout
            )(dev, &dsli, null(), &mut dsl),
            vk::Result::SUCCESS
        );
        let range = vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: push.len() as u32,
        };
        let pli = vk::PipelineLayoutCreateInfo {
            set_layout_count: 1,
            set_layouts: &dsl,
            push_constant_range_count: (!push.is_empty()) as u32,
            push_constant_ranges: &range,
            ..Default::default()
        };
        assert_eq!(
            pfn!(b"vkCreatePipelineLayout", PFN_vkCreatePipelineLayout)(
                dev,
                &pli,
                null(),
                &mut layout
            ),
            vk::Result::SUCCESS
        );
        let cpi = vk::ComputePipelineCreateInfo {
            stage: vk::PipelineShaderStageCreateInfo {
                stage: vk::ShaderStageFlags::COMPUTE,
                module,
                name: entry.as_ptr(),
                ..Default::default()
            },
            layout,
            ..Default::default()
        };
        assert_eq!(
            pfn!(b"vkCreateComputePipelines", PFN_vkCreateComputePipelines)(
                dev,
                vk::PipelineCache::null(),
                1,
                &cpi,
                null(),
                &mut pipeline
            ),
            vk::Result::SUCCESS
        );
        let size = vk::DescriptorPoolSize {
            type_: vk::DescriptorType::STORAGE_BUFFER,
            descriptor_count: nb,
        };
        let dpi = vk::DescriptorPoolCreateInfo {
            max_sets: 1,
            pool_size_count: 1,
            pool_sizes: &size,
            ..Default::default()
        };
        assert_eq!(
            pfn!(b"vkCreateDescriptorPool", PFN_vkCreateDescriptorPool)(
                dev,
                &dpi,
                null(),
                &mut pool
            ),
            vk::Result::SUCCESS
        );
        let dsai = vk::DescriptorSetAllocateInfo {
            descriptor_pool: pool,
            descriptor_set_count: 1,
            set_layouts: &dsl,
            ..Default::default()
        };
        assert_eq!(
            pfn!(b"vkAllocateDescriptorSets", PFN_vkAllocateDescriptorSets)(dev, &dsai, &mut set),
            vk::Result::SUCCESS
        );
        // One write of three consecutive bindings (it runs over from binding 0 to 1 and 2).
        let infos: Vec<vk::DescriptorBufferInfo> = bufs
            .iter()
            .map(|&b| vk::DescriptorBufferInfo {
                buffer: b,
                offset: 0,
                range: vk::WHOLE_SIZE,
            })
            .collect();
        let write = vk::WriteDescriptorSet {
            dst_set: set,
            dst_binding: 0,
            descriptor_count: nb,
            descriptor_type: vk::DescriptorType::STORAGE_BUFFER,
            buffer_info: infos.as_ptr(),
            ..Default::default()
        };
        pfn!(b"vkUpdateDescriptorSets", PFN_vkUpdateDescriptorSets)(dev, 1, &write, 0, null());
        let cpci = vk::CommandPoolCreateInfo::default();
        assert_eq!(
            pfn!(b"vkCreateCommandPool", PFN_vkCreateCommandPool)(dev, &cpci, null(), &mut cpool),
            vk::Result::SUCCESS
        );
        let cbai = vk::CommandBufferAllocateInfo {
            command_pool: cpool,
            level: vk::CommandBufferLevel::PRIMARY,
            command_buffer_count: 1,
            ..Default::default()
        };
        assert_eq!(
            pfn!(b"vkAllocateCommandBuffers", PFN_vkAllocateCommandBuffers)(dev, &cbai, &mut cb),
            vk::Result::SUCCESS
        );
        let begin = vk::CommandBufferBeginInfo::default();
        assert_eq!(
            pfn!(b"vkBeginCommandBuffer", PFN_vkBeginCommandBuffer)(cb, &begin),
            vk::Result::SUCCESS
        );
        pfn!(b"vkCmdBindPipeline", PFN_vkCmdBindPipeline)(
            cb,
            vk::PipelineBindPoint::COMPUTE,
            pipeline,
        );
        pfn!(b"vkCmdBindDescriptorSets", PFN_vkCmdBindDescriptorSets)(
            cb,
            vk::PipelineBindPoint::COMPUTE,
            layout,
            0,
            1,
            &set,
            0,
            null(),
        );
        if !push.is_empty() {
            pfn!(b"vkCmdPushConstants", PFN_vkCmdPushConstants)(
                cb,
                layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                push.len() as u32,
                push.as_ptr() as *const c_void,
            );
        }
        record(cb, layout);
        assert_eq!(
            pfn!(b"vkEndCommandBuffer", PFN_vkEndCommandBuffer)(cb),
            vk::Result::SUCCESS
        );
        let fci = vk::FenceCreateInfo::default();
        assert_eq!(
            pfn!(b"vkCreateFence", PFN_vkCreateFence)(dev, &fci, null(), &mut fence),
            vk::Result::SUCCESS
        );
        let si = vk::SubmitInfo {
            command_buffer_count: 1,
            command_buffers: &cb,
            ..Default::default()
        };
        let r = pfn!(b"vkQueueSubmit", PFN_vkQueueSubmit)(s.queue, 1, &si, fence);
        assert_eq!(
            pfn!(b"vkWaitForFences", PFN_vkWaitForFences)(dev, 1, &fence, vk::TRUE, u64::MAX),
            vk::Result::SUCCESS
        );
        pfn!(b"vkDestroyFence", PFN_vkDestroyFence)(dev, fence, null());
        pfn!(b"vkDestroyCommandPool", PFN_vkDestroyCommandPool)(dev, cpool, null());
        pfn!(b"vkDestroyDescriptorPool", PFN_vkDestroyDescriptorPool)(dev, pool, null());
        pfn!(b"vkDestroyPipeline", PFN_vkDestroyPipeline)(dev, pipeline, null());
        pfn!(b"vkDestroyPipelineLayout", PFN_vkDestroyPipelineLayout)(dev, layout, null());
        pfn!(
            b"vkDestroyDescriptorSetLayout",
            PFN_vkDestroyDescriptorSetLayout
        )(dev, dsl, null());
        pfn!(b"vkDestroyShaderModule", PFN_vkDestroyShaderModule)(dev, module, null());
        r
    }
}

fn free(dev: vk::Device, b: vk::Buffer, m: vk::DeviceMemory) {
    // SAFETY: handles created by `buffer`.
    unsafe {
        pfn!(b"vkDestroyBuffer", PFN_vkDestroyBuffer)(dev, b, null());
        pfn!(b"vkFreeMemory", PFN_vkFreeMemory)(dev, m, null());
    }
}

#[test]
fn a_cooperative_matrix_gemm_runs_through_the_driver() {
    let s = setup();
    let (ba, ma, pa) = buffer(s.device, 512);
    let (bb, mb, pb) = buffer(s.device, 512);
    let (bc, mc, pc) = buffer(s.device, 1024);
    // Small integers: every product and sum is exact in f16 inputs and f32 accumulation.
    let a = |r: usize, k: usize| ((r * 3 + k) % 7) as f32 - 3.0;
    let b = |k: usize, c: usize| ((k + 2 * c) % 5) as f32 - 2.0;
    for r in 0..16 {
        for k in 0..16 {
            // SAFETY: mapped buffers of 512 bytes = 256 halves; A row-major, B column-major.
            unsafe {
                (pa as *mut u16)
                    .add(r * 16 + k)
                    .write(half::f16::from_f32(a(r, k)).to_bits());
                (pb as *mut u16)
                    .add(r * 16 + k)
                    .write(half::f16::from_f32(b(k, r)).to_bits());
                (pc as *mut f32).add(r * 16 + k).write(1.0);
            }
        }
    }
    assert_eq!(run_gemm(&s, [ba, bb, bc]), vk::Result::SUCCESS);
    for r in 0..16 {
        for c in 0..16 {
            let want = 1.0 + (0..16).map(|k| a(r, k) * b(k, c)).sum::<f32>();
            // SAFETY: mapped C, 256 floats.
            let got = unsafe { (pc as *const f32).add(r * 16 + c).read() };
            assert_eq!(got, want, "C[{r}][{c}]");
        }
    }
    for (b, m) in [(ba, ma), (bb, mb), (bc, mc)] {
        free(s.device, b, m);
    }
    teardown(s);
}

#[test]
fn misuse_gets_errors_not_crashes() {
    let s = setup();
    let dev = s.device;
    // Unknown names give NULL at every level.
    assert!(lookup(b"vkCreateGraphicsPipelines").is_none());
    // SAFETY: the name is a NUL-terminated string.
    let f =
        unsafe { coopmat_icd::vk_icdGetInstanceProcAddr(s.instance, c"vkNoSuchFunction".as_ptr()) };
    assert!(f.is_none());
    // A module that parses but is invalid (it uses cooperative matrices without declaring the
    // capability) is refused with the validator's words.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/khr_coopmat_gemm.amber"
    ))
    .unwrap();
    let start = text.find("; SPIR-V").unwrap();
    let end = start + text[start..].find("\nEND").unwrap();
    let broken = text[start..end].replace("OpCapability CooperativeMatrixKHR", "");
    let bad = coopmat_spirv::asm::assemble(&broken, &Default::default()).unwrap();
    let smi = vk::ShaderModuleCreateInfo {
        code_size: bad.len() * 4,
        code: bad.as_ptr(),
        ..Default::default()
    };
    let mut module = vk::ShaderModule::null();
    // SAFETY: valid pointers; the module is invalid.
    let r = unsafe {
        pfn!(b"vkCreateShaderModule", PFN_vkCreateShaderModule)(dev, &smi, null(), &mut module)
    };
    assert_eq!(r, vk::Result::ERROR_INVALID_SHADER_NV);
    let garbage = [0x0723_0203u32, 0x0001_0600, 0, 1, 0, 0xffff_ffff];
    let smi = vk::ShaderModuleCreateInfo {
        code_size: 24,
        code: garbage.as_ptr(),
        ..Default::default()
    };
    // SAFETY: valid pointers to 24 bytes of garbage.
    let r = unsafe {
        pfn!(b"vkCreateShaderModule", PFN_vkCreateShaderModule)(dev, &smi, null(), &mut module)
    };
    assert_eq!(r, vk::Result::ERROR_INVALID_SHADER_NV);
    // NULL create info, NULL output pointers.
    // SAFETY: the driver must refuse NULL rather than read through it.
    let r = unsafe { pfn!(b"vkCreateBuffer", PFN_vkCreateBuffer)(dev, null(), null(), null_mut()) };
    assert_ne!(r, vk::Result::SUCCESS);
    // A buffer destroyed after its descriptor was written: the submit fails, nothing crashes.
    let (ba, ma, _) = buffer(dev, 512);
    let (bb, mb, _) = buffer(dev, 512);
    let (bc, mc, _) = buffer(dev, 1024);
    // SAFETY: destroying a buffer the next submit still names is the misuse under test.
    unsafe { pfn!(b"vkDestroyBuffer", PFN_vkDestroyBuffer)(dev, bb, null()) };
    assert_eq!(run_gemm(&s, [ba, bb, bc]), vk::Result::ERROR_DEVICE_LOST);
    // A buffer too small for the shader's 16×16 tile: an error naming the binding, not a read
    // past the allocation.
    let (bs, ms, _) = buffer(dev, 64);
    assert_eq!(run_gemm(&s, [ba, bs, bc]), vk::Result::ERROR_DEVICE_LOST);
    // Destroying twice or destroying a handle of another kind is refused, not a double free.
    // SAFETY: misuse under test.
    unsafe {
        pfn!(b"vkDestroyBuffer", PFN_vkDestroyBuffer)(dev, bb, null());
        pfn!(b"vkDestroyBuffer", PFN_vkDestroyBuffer)(
            dev,
            vk::Buffer::from_raw(ma.as_raw()),
            null(),
        );
    }
    // A huge allocation is an error.
    let ai = vk::MemoryAllocateInfo {
        allocation_size: u64::MAX,
        memory_type_index: 0,
        ..Default::default()
    };
    let mut m = vk::DeviceMemory::null();
    // SAFETY: valid pointers.
    let r = unsafe { pfn!(b"vkAllocateMemory", PFN_vkAllocateMemory)(dev, &ai, null(), &mut m) };
    assert_eq!(r, vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
    free(dev, ba, ma);
    free(dev, bc, mc);
    free(dev, bs, ms);
    // SAFETY: the memory of the destroyed buffer.
    unsafe { pfn!(b"vkFreeMemory", PFN_vkFreeMemory)(dev, mb, null()) };
    teardown(s);
}

#[test]
fn create_destroy_cycles_leave_nothing_behind() {
    // Every cycle creates and destroys three buffers with their memory and, through `run_gemm`, a
    // shader module, descriptor set layout, pipeline layout, pipeline, descriptor pool and set,
    // command pool and buffer and a fence, and runs the GEMM: the object tables and the resident
    // memory must not grow with the number of cycles.
    let s = setup();
    let cycle = |i: u64| {
        let (ba, ma, pa) = buffer(s.device, 512 + i);
        let (bb, mb, pb) = buffer(s.device, 512);
        let (bc, mc, _) = buffer(s.device, 1024);
        // SAFETY: mapped memory of at least 512 bytes each.
        unsafe {
            pa.write_bytes(0x3c, 512);
            pb.write_bytes(0x3c, 512);
        }
        assert_eq!(run_gemm(&s, [ba, bb, bc]), vk::Result::SUCCESS);
        free(s.device, ba, ma);
        free(s.device, bb, mb);
        free(s.device, bc, mc);
    };
    // Warm up allocator pools and thread-local caches before measuring.
    (0..50).for_each(cycle);
    let (objects_before, rss_before) = (objects::live_objects(), resident_bytes());
    (0..1000).for_each(cycle);
    let (objects_after, rss_after) = (objects::live_objects(), resident_bytes());
    // Parallel tests may hold a few objects at either moment; a leak would be ≥ 12 000 objects.
    assert!(
        objects_after < objects_before + 100,
        "{objects_before} objects before, {objects_after} after 1000 cycles"
    );
    // A leaked pipeline or buffer per cycle would add well over 1000 × 32 KiB.
    let growth = rss_after.saturating_sub(rss_before);
    assert!(
        growth < 32 << 20,
        "resident memory grew by {growth} bytes over 1000 cycles ({rss_before} → {rss_after})"
    );
    teardown(s);
}

/// The process's resident set in bytes (Linux `/proc/self/statm`, pages of 4 KiB).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

#[test]
fn the_device_reports_what_ggml_vulkan_needs_for_its_cm2_path() {
    // ICD-FACTS.md section 7: the extensions by name, all seven cm2 features, decode vector,
    // flexible dimensions at 128 and 256 invocations, maxDimension ≥ 512.
    let s = setup();
    let enumerate = pfn!(
        b"vkEnumeratePhysicalDevices",
        PFN_vkEnumeratePhysicalDevices
    );
    let (mut n, mut pd) = (1u32, vk::PhysicalDevice::null());
    // SAFETY: room for one handle.
    unsafe { enumerate(s.instance, &mut n, &mut pd) };
    let ext = pfn!(
        b"vkEnumerateDeviceExtensionProperties",
        PFN_vkEnumerateDeviceExtensionProperties
    );
    let mut count = 0u32;
    // SAFETY: the two-call idiom.
    unsafe { ext(pd, null(), &mut count, null_mut()) };
    let mut props = vec![vk::ExtensionProperties::default(); count as usize];
    // SAFETY: room for `count` elements.
    unsafe { ext(pd, null(), &mut count, props.as_mut_ptr()) };
    let names: Vec<String> = props
        .iter()
        // SAFETY: extension names are NUL-terminated.
        .map(|p| {
            unsafe { CStr::from_ptr(p.extension_name.as_ptr()) }
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for e in [
        "VK_KHR_cooperative_matrix",
        "VK_NV_cooperative_matrix",
        "VK_NV_cooperative_matrix2",
        "VK_NV_cooperative_matrix_decode_vector",
        "VK_QCOM_cooperative_matrix_conversion",
        "VK_NV_cooperative_vector",
        "VK_KHR_16bit_storage",
        "VK_EXT_subgroup_size_control",
    ] {
        assert!(names.iter().any(|n| n == e), "{e} missing from {names:?}");
    }
    // Features: an uninitialised Vulkan11 struct (as ggml passes) gets every member written.
    let mut dv = coopmat_icd::instance::DecodeVectorFeatures {
        s_type: vk::StructureType::from_raw(coopmat_icd::instance::STYPE_DECODE_VECTOR_FEATURES),
        next: null_mut(),
        cooperative_matrix_decode_vector: 0,
    };
    let mut cm2 = vk::PhysicalDeviceCooperativeMatrix2FeaturesNV {
        next: &mut dv as *mut _ as *mut c_void,
        ..Default::default()
    };
    let mut v11 = vk::PhysicalDeviceVulkan11Features {
        next: &mut cm2 as *mut _ as *mut c_void,
        multiview: 0xdead_beef,
        ..Default::default()
    };
    let mut f2 = vk::PhysicalDeviceFeatures2 {
        next: &mut v11 as *mut _ as *mut c_void,
        ..Default::default()
    };
    // SAFETY: a valid chain.
    unsafe {
        pfn!(
            b"vkGetPhysicalDeviceFeatures2",
            PFN_vkGetPhysicalDeviceFeatures2
        )(pd, &mut f2)
    };
    assert_eq!(v11.storage_buffer_16bit_access, vk::TRUE);
    assert_eq!(v11.multiview, vk::FALSE, "every member is written");
    assert_eq!(v11.next, &mut cm2 as *mut _ as *mut c_void, "pNext is kept");
    for f in [
        cm2.cooperative_matrix_workgroup_scope,
        cm2.cooperative_matrix_flexible_dimensions,
        cm2.cooperative_matrix_reductions,
        cm2.cooperative_matrix_conversions,
        cm2.cooperative_matrix_per_element_operations,
        cm2.cooperative_matrix_tensor_addressing,
        cm2.cooperative_matrix_block_loads,
        dv.cooperative_matrix_decode_vector,
    ] {
        assert_eq!(f, vk::TRUE);
    }
    let flex = pfn!(
        b"vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV",
        PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV
    );
    let mut count = 0u32;
    // SAFETY: the two-call idiom.
    unsafe { flex(pd, &mut count, null_mut()) };
    let mut list =
        vec![vk::CooperativeMatrixFlexibleDimensionsPropertiesNV::default(); count as usize];
    // SAFETY: room for `count` elements.
    unsafe { flex(pd, &mut count, list.as_mut_ptr()) };
    for inv in [128, 256] {
        for c in [vk::ComponentTypeKHR::FLOAT16, vk::ComponentTypeKHR::FLOAT32] {
            assert!(
                list.iter().any(|e| e.workgroup_invocations == inv
                    && e.scope == vk::ScopeKHR::WORKGROUP
                    && e.a_type == vk::ComponentTypeKHR::FLOAT16
                    && e.c_type == c
                    && e.result_type == c),
                "no workgroup entry for {inv} invocations, C = {c:?}"
            );
        }
    }
    let mut cm2p = vk::PhysicalDeviceCooperativeMatrix2PropertiesNV::default();
    let mut p2 = vk::PhysicalDeviceProperties2 {
        next: &mut cm2p as *mut _ as *mut c_void,
        ..Default::default()
    };
    // SAFETY: a valid chain.
    unsafe {
        pfn!(
            b"vkGetPhysicalDeviceProperties2",
            PFN_vkGetPhysicalDeviceProperties2
        )(pd, &mut p2)
    };
    assert!(cm2p.cooperative_matrix_flexible_dimensions_max_dimension >= 512);
    assert_eq!(p2.properties.limits.max_push_constants_size, 256);
    assert_eq!(p2.properties.limits.max_storage_buffer_range, u32::MAX);
    teardown(s);
}

/// tests/shaders/bda.comp as SPIR-V words; None (with a notice) without glslang.
fn bda_words() -> Option<Vec<u32>> {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/shaders/bda.comp");
    let Some(bytes) = coopmat_testkit::glslang(std::path::Path::new(src), &[]) else {
        eprintln!("notice: glslangValidator absent; skipping");
        return None;
    };
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

#[test]
fn device_addresses_from_push_constants_reach_unbound_memory() {
    let Some(words) = bda_words() else {
        return;
    };
    let s = setup();
    let n = 256usize;
    let (bsrc, msrc, psrc) = buffer(s.device, 4 * n as u64);
    let (bdst, mdst, pdst) = buffer(s.device, 4 * n as u64);
    let (bmark, mmark, pmark) = buffer(s.device, 4 * n as u64);
    for i in 0..n {
        // SAFETY: mapped buffer of n floats.
        unsafe { (psrc as *mut f32).add(i).write(i as f32) };
    }
    let address = |b: vk::Buffer| {
        let info = vk::BufferDeviceAddressInfo {
            buffer: b,
            ..Default::default()
        };
        // SAFETY: a bound buffer.
        unsafe { pfn!(b"vkGetBufferDeviceAddress", PFN_vkGetBufferDeviceAddress)(s.device, &info) }
    };
    let (a_src, a_dst) = (address(bsrc), address(bdst));
    assert!(a_src != 0 && a_dst != 0 && a_src != a_dst);
    let mut push = a_src.to_le_bytes().to_vec();
    push.extend_from_slice(&a_dst.to_le_bytes());
    assert_eq!(
        run_compute(&s, &words, &[bmark], &push, [4, 1, 1]),
        vk::Result::SUCCESS
    );
    for i in 0..n {
        // SAFETY: mapped buffers of n elements.
        let (d, m) = unsafe {
            (
                (pdst as *const f32).add(i).read(),
                (pmark as *const u32).add(i).read(),
            )
        };
        assert_eq!(d, i as f32 * 2.0 + 1.0, "dst[{i}]");
        assert_eq!(m, i as u32, "marks[{i}]");
    }
    // An address past the allocation is an out-of-bounds error, not a write elsewhere.
    let mut push = a_src.to_le_bytes().to_vec();
    push.extend_from_slice(&(a_dst + 4 * n as u64 - 8).to_le_bytes());
    assert_eq!(
        run_compute(&s, &words, &[bmark], &push, [4, 1, 1]),
        vk::Result::ERROR_DEVICE_LOST
    );
    for (b, m) in [(bsrc, msrc), (bdst, mdst), (bmark, mmark)] {
        free(s.device, b, m);
    }
    teardown(s);
}

#[test]
fn dispatch_base_indirect_transfers_events_and_timestamps() {
    let Some(words) = bda_words() else {
        return;
    };
    let s = setup();
    let dev = s.device;
    let n = 512usize;
    let (bsrc, msrc, psrc) = buffer(dev, 4 * n as u64);
    let (bdst, mdst, pdst) = buffer(dev, 4 * n as u64);
    let (bmark, mmark, pmark) = buffer(dev, 4 * n as u64);
    let (bind, mind, pind) = buffer(dev, 64);
    for i in 0..n {
        // SAFETY: mapped buffer of n floats.
        unsafe { (psrc as *mut f32).add(i).write(i as f32) };
    }
    // SAFETY: 64 mapped bytes: the indirect command (2, 1, 1) at offset 16.
    unsafe { (pind as *mut [u32; 3]).byte_add(16).write([2, 1, 1]) };
    let address = |b: vk::Buffer| {
        let info = vk::BufferDeviceAddressInfo {
            buffer: b,
            ..Default::default()
        };
        // SAFETY: a bound buffer.
        unsafe { pfn!(b"vkGetBufferDeviceAddress", PFN_vkGetBufferDeviceAddress)(dev, &info) }
    };
    let mut push = address(bsrc).to_le_bytes().to_vec();
    push.extend_from_slice(&address(bdst).to_le_bytes());
    let (mut event, mut pool) = (vk::Event::null(), vk::QueryPool::null());
    let qpi = vk::QueryPoolCreateInfo {
        query_type: vk::QueryType::TIMESTAMP,
        query_count: 2,
        ..Default::default()
    };
    // SAFETY: valid infos and output pointers.
    unsafe {
        let ei = vk::EventCreateInfo::default();
        assert_eq!(
            pfn!(b"vkCreateEvent", PFN_vkCreateEvent)(dev, &ei, null(), &mut event),
            vk::Result::SUCCESS
        );
        assert_eq!(
            pfn!(b"vkCreateQueryPool", PFN_vkCreateQueryPool)(dev, &qpi, null(), &mut pool),
            vk::Result::SUCCESS
        );
        pfn!(b"vkResetQueryPool", PFN_vkResetQueryPool)(dev, pool, 0, 2);
    }
    let record = |cb: vk::CommandBuffer, _: vk::PipelineLayout| {
        let stage = vk::PipelineStageFlags::ALL_COMMANDS;
        // SAFETY: a command buffer in the recording state; every handle is alive.
        unsafe {
            pfn!(b"vkCmdWriteTimestamp", PFN_vkCmdWriteTimestamp)(cb, stage, pool, 0);
            // Marks: all 0xffffffff, then words 200..204 from the command buffer itself.
            pfn!(b"vkCmdFillBuffer", PFN_vkCmdFillBuffer)(cb, bmark, 0, vk::WHOLE_SIZE, u32::MAX);
            let upd = [7u32, 7, 7, 7];
            pfn!(b"vkCmdUpdateBuffer", PFN_vkCmdUpdateBuffer)(
                cb,
                bmark,
                800,
                16,
                upd.as_ptr() as *const c_void,
            );
            // Workgroups 4 and 5 (invocations 256..384) by base, 0 and 1 by the indirect command.
            pfn!(b"vkCmdDispatchBase", PFN_vkCmdDispatchBase)(cb, 4, 0, 0, 2, 1, 1);
            pfn!(b"vkCmdDispatchIndirect", PFN_vkCmdDispatchIndirect)(cb, bind, 16);
            // Copy dst[256..260] over dst[0..4] (the later command sees the earlier's writes).
            let region = vk::BufferCopy {
                src_offset: 1024,
                dst_offset: 0,
                size: 16,
            };
            pfn!(b"vkCmdCopyBuffer", PFN_vkCmdCopyBuffer)(cb, bdst, bdst, 1, &region);
            pfn!(b"vkCmdSetEvent", PFN_vkCmdSetEvent)(cb, event, stage);
            pfn!(b"vkCmdWriteTimestamp", PFN_vkCmdWriteTimestamp)(cb, stage, pool, 1);
        }
    };
    assert_eq!(
        record_and_submit(&s, &words, &[bmark], &push, &record),
        vk::Result::SUCCESS
    );
    let f = |i: usize| i as f32 * 2.0 + 1.0;
    for i in 0..n {
        // SAFETY: mapped buffers of n elements.
        let (d, m) = unsafe {
            (
                (pdst as *const f32).add(i).read(),
                (pmark as *const u32).add(i).read(),
            )
        };
        let (want_d, want_m) = match i {
            0..4 => (f(256 + i), i as u32),
            4..128 => (f(i), i as u32),
            200..204 => (0.0, 7),
            256..384 => (f(i), i as u32),
            _ => (0.0, u32::MAX),
        };
        assert_eq!(d, want_d, "dst[{i}]");
        assert_eq!(m, want_m, "marks[{i}]");
    }
    // SAFETY: valid handles and a 32-byte result array.
    unsafe {
        assert_eq!(
            pfn!(b"vkGetEventStatus", PFN_vkGetEventStatus)(dev, event),
            vk::Result::EVENT_SET
        );
        let mut ts = [0u64; 2];
        let r = pfn!(b"vkGetQueryPoolResults", PFN_vkGetQueryPoolResults)(
            dev,
            pool,
            0,
            2,
            16,
            ts.as_mut_ptr() as *mut c_void,
            8,
            vk::QueryResultFlags::_64 | vk::QueryResultFlags::WAIT,
        );
        assert_eq!(r, vk::Result::SUCCESS);
        assert!(ts[1] >= ts[0] && ts[0] > 0, "timestamps {ts:?}");
        pfn!(b"vkDestroyEvent", PFN_vkDestroyEvent)(dev, event, null());
        pfn!(b"vkDestroyQueryPool", PFN_vkDestroyQueryPool)(dev, pool, null());
    }
    for (b, m) in [(bsrc, msrc), (bdst, mdst), (bmark, mmark), (bind, mind)] {
        free(dev, b, m);
    }
    teardown(s);
}

#[test]
fn timeline_semaphores_signal_and_wait() {
    let s = setup();
    let dev = s.device;
    let mut ty = vk::SemaphoreTypeCreateInfo {
        semaphore_type: vk::SemaphoreType::TIMELINE,
        initial_value: 3,
        ..Default::default()
    };
    let si = vk::SemaphoreCreateInfo {
        next: &mut ty as *mut _ as *const c_void,
        ..Default::default()
    };
    let mut sem = vk::Semaphore::null();
    // SAFETY: valid infos and handles.
    unsafe {
        assert_eq!(
            pfn!(b"vkCreateSemaphore", PFN_vkCreateSemaphore)(dev, &si, null(), &mut sem),
            vk::Result::SUCCESS
        );
        let mut v = 0;
        pfn!(
            b"vkGetSemaphoreCounterValue",
            PFN_vkGetSemaphoreCounterValue
        )(dev, sem, &mut v);
        assert_eq!(v, 3);
        let want = 5u64;
        let wi = vk::SemaphoreWaitInfo {
            semaphore_count: 1,
            semaphores: &sem,
            values: &want,
            ..Default::default()
        };
        let wait = pfn!(b"vkWaitSemaphores", PFN_vkWaitSemaphores);
        assert_eq!(wait(dev, &wi, 1_000_000), vk::Result::TIMEOUT);
        // Another thread signals while this one waits.
        let raw = sem.as_raw();
        let dev_raw = dev.as_raw();
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            let sig = vk::SemaphoreSignalInfo {
                semaphore: vk::Semaphore::from_raw(raw),
                value: 5,
                ..Default::default()
            };
            // (Inside the enclosing unsafe block: the semaphore and device outlive the
            // thread, which is joined below.)
            pfn!(b"vkSignalSemaphore", PFN_vkSignalSemaphore)(vk::Device::from_raw(dev_raw), &sig)
        });
        assert_eq!(wait(dev, &wi, 10_000_000_000), vk::Result::SUCCESS);
        assert_eq!(t.join().unwrap(), vk::Result::SUCCESS);
        pfn!(b"vkDestroySemaphore", PFN_vkDestroySemaphore)(dev, sem, null());
    }
    teardown(s);
}
