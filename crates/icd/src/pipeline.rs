//! Shader modules, compute pipelines and their caches, descriptor set layouts, pools and sets,
//! pipeline layouts, samplers.
//!
//! A shader module is parsed and validated by coopmat-val when it is created (an invalid module
//! is refused with the validator's first error); a compute pipeline is the engine's compiled
//! program for one entry point with its specialization constants and subgroup size.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use coopmat_exec::{EngineOptions, SpecConstants};
use coopmat_spirv::module::Module;
use rustc_hash::FxHashMap;
use vulkanalia_sys::{self as vk, Handle};

use crate::device::Device;
use crate::entry::{Fail, arg, guard, guard_void, name_bytes, out_ptr, slice};
use crate::instance::{SUBGROUP_SIZE, VENDOR_ID, properties};
use crate::objects;

/// A VkShaderModule: the parsed module.
pub struct ShaderModule {
    /// The module.
    pub module: Arc<Module>,
}

/// One binding of a descriptor set layout.
#[derive(Clone, Copy, Debug)]
pub struct LayoutBinding {
    /// Binding number.
    pub binding: u32,
    /// Descriptor type.
    pub ty: vk::DescriptorType,
    /// Array size.
    pub count: u32,
}

/// A VkDescriptorSetLayout.
pub struct DescriptorSetLayout {
    /// Bindings sorted by number.
    pub bindings: Vec<LayoutBinding>,
}

impl DescriptorSetLayout {
    /// The binding numbered `b`.
    pub fn binding(&self, b: u32) -> Option<&LayoutBinding> {
        self.bindings.iter().find(|x| x.binding == b)
    }
}

/// A VkPipelineLayout.
pub struct PipelineLayout {
    /// Set layouts by set number.
    pub sets: Vec<Arc<DescriptorSetLayout>>,
}

/// A buffer descriptor: a buffer handle (resolved when the command runs) and a range.
#[derive(Clone, Copy, Debug)]
pub struct BufferSlot {
    /// The VkBuffer handle.
    pub buffer: u64,
    /// Byte offset.
    pub offset: u64,
    /// Bytes, or VK_WHOLE_SIZE.
    pub range: u64,
    /// Descriptor type it was written as.
    pub ty: vk::DescriptorType,
}

/// A VkDescriptorSet.
pub struct DescriptorSet {
    /// Its layout.
    pub layout: Arc<DescriptorSetLayout>,
    /// Written descriptors by (binding, array element).
    pub slots: Mutex<FxHashMap<(u32, u32), BufferSlot>>,
}

/// A VkDescriptorPool: the sets allocated from it.
pub struct DescriptorPool {
    sets: Mutex<Vec<u64>>,
}

/// A VkPipeline (compute).
pub struct ComputePipeline {
    /// The engine's compiled program.
    pub engine: coopmat_exec::Pipeline,
    /// The local size, for messages.
    pub local_size: [u32; 3],
    /// The pipeline's name in `COOPMAT_ICD_PROFILE`'s report (empty when profiling is off).
    pub label: String,
    /// With `COOPMAT_ICD_OBSERVE_UNIFORMITY`: the module's hash, under which its observations
    /// are merged.
    pub observed_module: Option<u64>,
}

/// A VkPipelineCache (the engine compiles fast enough that nothing is cached).
pub struct PipelineCache;

/// A VkSampler (no image support: accepted so that layouts naming one can be created).
pub struct Sampler;

fn device(h: vk::Device) -> Result<Arc<Device>, Fail> {
    objects::get_dispatchable::<Device>(h.as_raw())
}

/// Whether shader modules are validated (`COOPMAT_ICD_VALIDATE=0` turns it off).
fn validate_modules() -> bool {
    std::env::var("COOPMAT_ICD_VALIDATE").map_or(true, |v| v != "0")
}

pub(crate) unsafe extern "system" fn create_shader_module(
    dev: vk::Device,
    info: *const vk::ShaderModuleCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::ShaderModule,
) -> vk::Result {
    guard("vkCreateShaderModule", || {
        device(dev)?;
        // SAFETY: the application's create info.
        let info = unsafe { arg(info, "pCreateInfo") }?;
        if info.code_size == 0 || info.code_size % 4 != 0 || info.code.is_null() {
            return Err(Fail::new(
                vk::Result::ERROR_INVALID_SHADER_NV,
                format!(
                    "codeSize {} is not a positive multiple of 4 (or pCode is NULL)",
                    info.code_size
                ),
            ));
        }
        // SAFETY: pCode points at codeSize bytes (read as bytes: no alignment assumed).
        let bytes = unsafe { std::slice::from_raw_parts(info.code as *const u8, info.code_size) };
        let invalid = |m: String| Fail::new(vk::Result::ERROR_INVALID_SHADER_NV, m);
        let module = Module::from_bytes(bytes)
            .map_err(|e| invalid(format!("the SPIR-V cannot be read: {e}")))?;
        if validate_modules() {
            let diags = coopmat_val::validate(&module, &coopmat_val::ValidateOptions::default());
            if let Some(d) = diags
                .iter()
                .find(|d| d.severity == coopmat_val::Severity::Error)
            {
                let at = d
                    .inst
                    .map(|i| format!(" (instruction {i})"))
                    .unwrap_or_default();
                return Err(invalid(format!(
                    "the module is invalid: [{}] {}{at}; set COOPMAT_ICD_VALIDATE=0 to run it anyway",
                    d.rule_id(),
                    d.message
                )));
            }
        }
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pShaderModule") }?;
        *out = vk::ShaderModule::from_raw(objects::insert(ShaderModule {
            module: Arc::new(module),
        }));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_shader_module(
    dev: vk::Device,
    m: vk::ShaderModule,
    _alloc: *const vk::AllocationCallbacks,
) {
    crate::device::destroy::<ShaderModule>("vkDestroyShaderModule", dev, m.as_raw())
}

/// Specialization constants from a VkSpecializationInfo (each entry's bytes, zero-extended).
///
/// # Safety
/// `info` must be NULL or a valid VkSpecializationInfo.
unsafe fn spec_constants(info: *const vk::SpecializationInfo) -> Result<SpecConstants, Fail> {
    let mut out = SpecConstants::default();
    // SAFETY: the caller's contract.
    let Some(info) = (unsafe { info.as_ref() }) else {
        return Ok(out);
    };
    // SAFETY: the map entries and data of a valid VkSpecializationInfo.
    let entries = unsafe { slice(info.map_entries, info.map_entry_count, "pMapEntries") }?;
    let data: &[u8] = if info.data_size == 0 {
        &[]
    } else {
        // SAFETY: as above.
        unsafe { slice(info.data as *const u8, info.data_size as u32, "pData") }?
    };
    for e in entries {
        let start = e.offset as usize;
        let bytes = data.get(start..start.saturating_add(e.size)).filter(|b| b.len() <= 8).ok_or_else(|| {
            Fail::usage(format!(
                "specialization constant {}: bytes {}..+{} are outside the {}-byte data (or wider than 8)",
                e.constant_id, e.offset, e.size, data.len()
            ))
        })?;
        let mut v = [0u8; 8];
        v[..bytes.len()].copy_from_slice(bytes);
        out.insert(e.constant_id, u64::from_le_bytes(v));
    }
    Ok(out)
}

fn compile(dev: &Device, info: &vk::ComputePipelineCreateInfo) -> Result<ComputePipeline, Fail> {
    let stage = &info.stage;
    let sm = objects::get::<ShaderModule>(stage.module.as_raw())?;
    // SAFETY: the stage's entry point name is a NUL-terminated string.
    let name = String::from_utf8_lossy(unsafe { name_bytes(stage.name) }).into_owned();
    // SAFETY: the stage's optional specialization info.
    let spec = unsafe { spec_constants(stage.specialization_info) }?;
    let mut subgroup_size = SUBGROUP_SIZE;
    let mut next = stage.next as *const vk::BaseInStructure;
    while !next.is_null() {
        // SAFETY: the application's pNext chain of input structures.
        unsafe {
            if (*next).s_type
                == vk::StructureType::PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO
            {
                subgroup_size = (*(next
                    as *const vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo))
                    .required_subgroup_size;
            }
            next = (*next).next;
        }
    }
    let options = EngineOptions {
        subgroup_size,
        robust: dev.robust,
        observe_uniformity: crate::uniformity::dir().is_some(),
        ..Default::default()
    };
    let engine =
        coopmat_exec::Pipeline::compile(&sm.module, &name, &spec, &options).map_err(|e| {
            Fail::new(
                vk::Result::ERROR_UNKNOWN,
                format!("entry point '{name}': {e}"),
            )
        })?;
    let label = if crate::profile::enabled() {
        crate::profile::label(&sm.module, &name, engine.local_size(), &spec)
    } else {
        String::new()
    };
    let observed_module = crate::uniformity::dir().map(|_| {
        let hash = crate::uniformity::module_hash(&sm.module);
        crate::uniformity::register(&sm.module, hash);
        hash
    });
    Ok(ComputePipeline {
        local_size: engine.local_size(),
        engine,
        label,
        observed_module,
    })
}

pub(crate) unsafe extern "system" fn create_compute_pipelines(
    dev: vk::Device,
    _cache: vk::PipelineCache,
    count: u32,
    infos: *const vk::ComputePipelineCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Pipeline,
) -> vk::Result {
    guard("vkCreateComputePipelines", || {
        let d = device(dev)?;
        // SAFETY: the application's arrays.
        let infos = unsafe { slice(infos, count, "pCreateInfos") }?;
        if out.is_null() && count > 0 {
            return Err(Fail::usage("pPipelines is NULL"));
        }
        let mut result = vk::Result::SUCCESS;
        for (i, info) in infos.iter().enumerate() {
            let h = match compile(&d, info) {
                Ok(p) => objects::insert(p),
                Err(f) => {
                    crate::entry::report("vkCreateComputePipelines", &f.message);
                    result = f.result;
                    0
                }
            };
            // SAFETY: `out` has `count` elements.
            unsafe { out.add(i).write(vk::Pipeline::from_raw(h)) };
        }
        Ok(result)
    })
}

pub(crate) unsafe extern "system" fn destroy_pipeline(
    dev: vk::Device,
    p: vk::Pipeline,
    _alloc: *const vk::AllocationCallbacks,
) {
    crate::device::destroy::<ComputePipeline>("vkDestroyPipeline", dev, p.as_raw())
}

pub(crate) unsafe extern "system" fn create_pipeline_cache(
    dev: vk::Device,
    _info: *const vk::PipelineCacheCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::PipelineCache,
) -> vk::Result {
    guard("vkCreatePipelineCache", || {
        device(dev)?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pPipelineCache") }?;
        *out = vk::PipelineCache::from_raw(objects::insert(PipelineCache));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_pipeline_cache(
    dev: vk::Device,
    c: vk::PipelineCache,
    _alloc: *const vk::AllocationCallbacks,
) {
    crate::device::destroy::<PipelineCache>("vkDestroyPipelineCache", dev, c.as_raw())
}

pub(crate) unsafe extern "system" fn get_pipeline_cache_data(
    dev: vk::Device,
    c: vk::PipelineCache,
    size: *mut usize,
    data: *mut c_void,
) -> vk::Result {
    guard("vkGetPipelineCacheData", || {
        device(dev)?;
        objects::get::<PipelineCache>(c.as_raw())?;
        // The header every cache starts with (VkPipelineCacheHeaderVersionOne), no payload.
        let mut header = Vec::with_capacity(32);
        header.extend_from_slice(&32u32.to_le_bytes());
        header.extend_from_slice(&1u32.to_le_bytes());
        header.extend_from_slice(&VENDOR_ID.to_le_bytes());
        header.extend_from_slice(&properties().device_id.to_le_bytes());
        header.extend_from_slice(&properties().pipeline_cache_uuid.0);
        // SAFETY: the size pointer from the application.
        let size = unsafe { out_ptr(size, "pDataSize") }?;
        if data.is_null() {
            *size = header.len();
            return Ok(vk::Result::SUCCESS);
        }
        if *size < header.len() {
            *size = 0;
            return Ok(vk::Result::INCOMPLETE);
        }
        // SAFETY: `data` has room for `*size` ≥ 32 bytes.
        unsafe { std::ptr::copy_nonoverlapping(header.as_ptr(), data as *mut u8, header.len()) };
        *size = header.len();
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn merge_pipeline_caches(
    dev: vk::Device,
    _dst: vk::PipelineCache,
    _count: u32,
    _src: *const vk::PipelineCache,
) -> vk::Result {
    guard("vkMergePipelineCaches", || {
        device(dev).map(|_| vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn create_descriptor_set_layout(
    dev: vk::Device,
    info: *const vk::DescriptorSetLayoutCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::DescriptorSetLayout,
) -> vk::Result {
    guard("vkCreateDescriptorSetLayout", || {
        device(dev)?;
        // SAFETY: the application's create info and its bindings.
        let info = unsafe { arg(info, "pCreateInfo") }?;
        // SAFETY: as above.
        let bindings = unsafe { slice(info.bindings, info.binding_count, "pBindings") }?;
        let mut list: Vec<LayoutBinding> = bindings
            .iter()
            .map(|b| LayoutBinding {
                binding: b.binding,
                ty: b.descriptor_type,
                count: b.descriptor_count,
            })
            .collect();
        list.sort_by_key(|b| b.binding);
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pSetLayout") }?;
        *out = vk::DescriptorSetLayout::from_raw(objects::insert(DescriptorSetLayout {
            bindings: list,
        }));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_descriptor_set_layout(
    dev: vk::Device,
    l: vk::DescriptorSetLayout,
    _alloc: *const vk::AllocationCallbacks,
) {
    crate::device::destroy::<DescriptorSetLayout>("vkDestroyDescriptorSetLayout", dev, l.as_raw())
}

pub(crate) unsafe extern "system" fn create_pipeline_layout(
    dev: vk::Device,
    info: *const vk::PipelineLayoutCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::PipelineLayout,
) -> vk::Result {
    guard("vkCreatePipelineLayout", || {
        device(dev)?;
        // SAFETY: the application's create info and its arrays.
        let info = unsafe { arg(info, "pCreateInfo") }?;
        // SAFETY: as above.
        let layouts = unsafe { slice(info.set_layouts, info.set_layout_count, "pSetLayouts") }?;
        // SAFETY: as above.
        let ranges = unsafe {
            slice(
                info.push_constant_ranges,
                info.push_constant_range_count,
                "pPushConstantRanges",
            )
        }?;
        if let Some(r) = ranges
            .iter()
            .find(|r| r.offset as u64 + r.size as u64 > 256)
        {
            return Err(Fail::usage(format!(
                "push constant range {}..+{} passes maxPushConstantsSize (256)",
                r.offset, r.size
            )));
        }
        let sets = layouts
            .iter()
            .map(|l| objects::get::<DescriptorSetLayout>(l.as_raw()))
            .collect::<Result<Vec<_>, _>>()?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pPipelineLayout") }?;
        *out = vk::PipelineLayout::from_raw(objects::insert(PipelineLayout { sets }));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_pipeline_layout(
    dev: vk::Device,
    l: vk::PipelineLayout,
    _alloc: *const vk::AllocationCallbacks,
) {
    crate::device::destroy::<PipelineLayout>("vkDestroyPipelineLayout", dev, l.as_raw())
}

pub(crate) unsafe extern "system" fn create_descriptor_pool(
    dev: vk::Device,
    info: *const vk::DescriptorPoolCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::DescriptorPool,
) -> vk::Result {
    guard("vkCreateDescriptorPool", || {
        device(dev)?;
        // SAFETY: the application's create info.
        unsafe { arg(info, "pCreateInfo") }?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pDescriptorPool") }?;
        *out = vk::DescriptorPool::from_raw(objects::insert(DescriptorPool {
            sets: Mutex::new(Vec::new()),
        }));
        Ok(vk::Result::SUCCESS)
    })
}

fn free_pool_sets(pool: &DescriptorPool) -> Result<(), Fail> {
    let sets = std::mem::take(&mut *pool.sets.lock().unwrap_or_else(|e| e.into_inner()));
    for s in sets {
        objects::remove::<DescriptorSet>(s)?;
    }
    Ok(())
}

pub(crate) unsafe extern "system" fn destroy_descriptor_pool(
    dev: vk::Device,
    p: vk::DescriptorPool,
    _alloc: *const vk::AllocationCallbacks,
) {
    guard_void("vkDestroyDescriptorPool", || {
        device(dev)?;
        if let Some(pool) = objects::remove::<DescriptorPool>(p.as_raw())? {
            free_pool_sets(&pool)?;
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn reset_descriptor_pool(
    dev: vk::Device,
    p: vk::DescriptorPool,
    _flags: vk::DescriptorPoolResetFlags,
) -> vk::Result {
    guard("vkResetDescriptorPool", || {
        device(dev)?;
        free_pool_sets(&*objects::get::<DescriptorPool>(p.as_raw())?)?;
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn allocate_descriptor_sets(
    dev: vk::Device,
    info: *const vk::DescriptorSetAllocateInfo,
    out: *mut vk::DescriptorSet,
) -> vk::Result {
    guard("vkAllocateDescriptorSets", || {
        device(dev)?;
        // SAFETY: the application's allocate info and its layouts.
        let info = unsafe { arg(info, "pAllocateInfo") }?;
        let pool = objects::get::<DescriptorPool>(info.descriptor_pool.as_raw())?;
        // SAFETY: as above.
        let layouts = unsafe { slice(info.set_layouts, info.descriptor_set_count, "pSetLayouts") }?;
        let layouts = layouts
            .iter()
            .map(|l| objects::get::<DescriptorSetLayout>(l.as_raw()))
            .collect::<Result<Vec<_>, _>>()?;
        if out.is_null() && !layouts.is_empty() {
            return Err(Fail::usage("pDescriptorSets is NULL"));
        }
        let mut sets = pool.sets.lock().unwrap_or_else(|e| e.into_inner());
        for (i, layout) in layouts.into_iter().enumerate() {
            let h = objects::insert(DescriptorSet {
                layout,
                slots: Mutex::new(FxHashMap::default()),
            });
            sets.push(h);
            // SAFETY: `out` has descriptorSetCount elements.
            unsafe { out.add(i).write(vk::DescriptorSet::from_raw(h)) };
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn free_descriptor_sets(
    dev: vk::Device,
    p: vk::DescriptorPool,
    count: u32,
    sets: *const vk::DescriptorSet,
) -> vk::Result {
    guard("vkFreeDescriptorSets", || {
        device(dev)?;
        let pool = objects::get::<DescriptorPool>(p.as_raw())?;
        // SAFETY: the application's array.
        let sets = unsafe { slice(sets, count, "pDescriptorSets") }?;
        let mut owned = pool.sets.lock().unwrap_or_else(|e| e.into_inner());
        for s in sets {
            objects::remove::<DescriptorSet>(s.as_raw())?;
            owned.retain(|&h| h != s.as_raw());
        }
        Ok(vk::Result::SUCCESS)
    })
}

/// The (binding, element) that `i` descriptors after (binding, element) land on: updates run
/// over into the following bindings (VkWriteDescriptorSet, "consecutive binding updates").
fn advance(
    layout: &DescriptorSetLayout,
    mut binding: u32,
    mut elem: u32,
    i: u32,
) -> Result<(u32, u32), Fail> {
    let mut left = i;
    loop {
        let b = layout.binding(binding).ok_or_else(|| {
            Fail::usage(format!(
                "descriptor update reaches binding {binding}, which the layout lacks"
            ))
        })?;
        if elem + left < b.count {
            return Ok((binding, elem + left));
        }
        left -= b.count.saturating_sub(elem);
        elem = 0;
        binding = layout
            .bindings
            .iter()
            .map(|x| x.binding)
            .find(|&x| x > binding)
            .ok_or_else(|| Fail::usage("descriptor update runs past the layout's last binding"))?;
    }
}

pub(crate) unsafe extern "system" fn update_descriptor_sets(
    dev: vk::Device,
    write_count: u32,
    writes: *const vk::WriteDescriptorSet,
    copy_count: u32,
    copies: *const vk::CopyDescriptorSet,
) {
    guard_void("vkUpdateDescriptorSets", || {
        device(dev)?;
        // SAFETY: the application's arrays.
        for w in unsafe { slice(writes, write_count, "pDescriptorWrites") }? {
            let set = objects::get::<DescriptorSet>(w.dst_set.as_raw())?;
            use vk::DescriptorType as T;
            let is_buffer = matches!(
                w.descriptor_type,
                T::STORAGE_BUFFER
                    | T::UNIFORM_BUFFER
                    | T::STORAGE_BUFFER_DYNAMIC
                    | T::UNIFORM_BUFFER_DYNAMIC
            );
            if !is_buffer {
                return Err(Fail::new(
                    vk::Result::ERROR_FEATURE_NOT_PRESENT,
                    format!(
                        "descriptor type {:?} is not supported: coopmat has buffers only",
                        w.descriptor_type
                    ),
                ));
            }
            // SAFETY: as above.
            let infos = unsafe { slice(w.buffer_info, w.descriptor_count, "pBufferInfo") }?;
            let mut slots = set.slots.lock().unwrap_or_else(|e| e.into_inner());
            for (i, bi) in infos.iter().enumerate() {
                let key = advance(&set.layout, w.dst_binding, w.dst_array_element, i as u32)?;
                slots.insert(
                    key,
                    BufferSlot {
                        buffer: bi.buffer.as_raw(),
                        offset: bi.offset,
                        range: bi.range,
                        ty: w.descriptor_type,
                    },
                );
            }
        }
        // SAFETY: as above.
        for c in unsafe { slice(copies, copy_count, "pDescriptorCopies") }? {
            let src = objects::get::<DescriptorSet>(c.src_set.as_raw())?;
            let dst = objects::get::<DescriptorSet>(c.dst_set.as_raw())?;
            let taken: Vec<_> = {
                let s = src.slots.lock().unwrap_or_else(|e| e.into_inner());
                (0..c.descriptor_count)
                    .map(|i| {
                        let k = advance(&src.layout, c.src_binding, c.src_array_element, i)?;
                        Ok(s.get(&k).copied())
                    })
                    .collect::<Result<_, Fail>>()?
            };
            let mut d = dst.slots.lock().unwrap_or_else(|e| e.into_inner());
            for (i, slot) in taken.into_iter().enumerate() {
                let k = advance(&dst.layout, c.dst_binding, c.dst_array_element, i as u32)?;
                match slot {
                    Some(s) => d.insert(k, s),
                    None => d.remove(&k),
                };
            }
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn create_sampler(
    dev: vk::Device,
    _info: *const vk::SamplerCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Sampler,
) -> vk::Result {
    guard("vkCreateSampler", || {
        device(dev)?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pSampler") }?;
        *out = vk::Sampler::from_raw(objects::insert(Sampler));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_sampler(
    dev: vk::Device,
    s: vk::Sampler,
    _alloc: *const vk::AllocationCallbacks,
) {
    crate::device::destroy::<Sampler>("vkDestroySampler", dev, s.as_raw())
}
