//! Command pools and command buffers: commands are recorded as a list and replayed by the
//! queue at submit (`sync::execute`), as Mesa's lavapipe does.
//!
//! Recording never fails the application's void `vkCmd*` call: an error (a destroyed handle,
//! a bad argument) is reported at once, remembered, and returned by vkEndCommandBuffer and by
//! any submit of that command buffer.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use vulkanalia_sys::{self as vk, Handle};

use crate::device::Device;
use crate::entry::{Fail, arg, guard, guard_void, out_ptr, report, slice};
use crate::objects;
use crate::pipeline::{BufferSlot, DescriptorSet, PipelineLayout};

/// Descriptors of one bound set, as they were when it was bound: (binding, element) -> slot
/// with its dynamic offset applied.
pub type BoundSet = rustc_hash::FxHashMap<(u32, u32), BufferSlot>;

/// One recorded command.
#[derive(Clone, Debug)]
pub enum Cmd {
    /// vkCmdBindPipeline (compute).
    BindPipeline(u64),
    /// vkCmdBindDescriptorSets: sets from `first`, snapshotted at record time.
    BindSets {
        /// First set number.
        first: u32,
        /// The sets' descriptors.
        sets: Vec<Arc<BoundSet>>,
    },
    /// vkCmdPushConstants.
    Push {
        /// Byte offset.
        offset: u32,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// vkCmdDispatch / vkCmdDispatchBase.
    Dispatch {
        /// First workgroup id.
        base: [u32; 3],
        /// Workgroup counts.
        groups: [u32; 3],
    },
    /// vkCmdDispatchIndirect: the counts are read from the buffer when the command runs.
    DispatchIndirect {
        /// The VkBuffer.
        buffer: u64,
        /// Byte offset of the VkDispatchIndirectCommand.
        offset: u64,
    },
    /// vkCmdCopyBuffer(2).
    Copy {
        /// Source VkBuffer.
        src: u64,
        /// Destination VkBuffer.
        dst: u64,
        /// (source offset, destination offset, bytes).
        regions: Vec<(u64, u64, u64)>,
    },
    /// vkCmdFillBuffer.
    Fill {
        /// The VkBuffer.
        dst: u64,
        /// Byte offset.
        offset: u64,
        /// Bytes, or VK_WHOLE_SIZE.
        size: u64,
        /// The word repeated.
        data: u32,
    },
    /// vkCmdUpdateBuffer.
    Update {
        /// The VkBuffer.
        dst: u64,
        /// Byte offset.
        offset: u64,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// vkCmdSetEvent(2) / vkCmdResetEvent(2).
    Event {
        /// The VkEvent.
        event: u64,
        /// Set (true) or reset.
        set: bool,
    },
    /// vkCmdWriteTimestamp(2).
    Timestamp {
        /// The VkQueryPool.
        pool: u64,
        /// Query index.
        query: u32,
    },
    /// vkCmdResetQueryPool.
    ResetQueries {
        /// The VkQueryPool.
        pool: u64,
        /// First query.
        first: u32,
        /// Queries.
        count: u32,
    },
}

/// What a command buffer holds.
#[derive(Default)]
pub struct Recording {
    /// Commands in order.
    pub commands: Vec<Cmd>,
    /// The first recording error.
    pub error: Option<String>,
}

/// A VkCommandBuffer.
pub struct CommandBuffer {
    /// The pool's handle.
    pub pool: u64,
    /// The recorded commands.
    pub recording: Mutex<Recording>,
}

/// A VkCommandPool: the command buffers allocated from it.
pub struct CommandPool {
    buffers: Mutex<Vec<usize>>,
}

fn device(h: vk::Device) -> Result<Arc<Device>, Fail> {
    objects::get_dispatchable::<Device>(h.as_raw())
}

pub(crate) unsafe extern "system" fn create_command_pool(
    dev: vk::Device,
    info: *const vk::CommandPoolCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::CommandPool,
) -> vk::Result {
    guard("vkCreateCommandPool", || {
        device(dev)?;
        // SAFETY: the application's create info.
        let info = unsafe { arg(info, "pCreateInfo") }?;
        if info.queue_family_index != 0 {
            return Err(Fail::usage(format!(
                "queue family {} does not exist",
                info.queue_family_index
            )));
        }
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pCommandPool") }?;
        *out = vk::CommandPool::from_raw(objects::insert(CommandPool {
            buffers: Mutex::new(Vec::new()),
        }));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_command_pool(
    dev: vk::Device,
    pool: vk::CommandPool,
    _alloc: *const vk::AllocationCallbacks,
) {
    guard_void("vkDestroyCommandPool", || {
        device(dev)?;
        if let Some(p) = objects::remove::<CommandPool>(pool.as_raw())? {
            for cb in std::mem::take(&mut *p.buffers.lock().unwrap_or_else(|e| e.into_inner())) {
                objects::remove_dispatchable::<CommandBuffer>(cb)?;
            }
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn reset_command_pool(
    dev: vk::Device,
    pool: vk::CommandPool,
    _flags: vk::CommandPoolResetFlags,
) -> vk::Result {
    guard("vkResetCommandPool", || {
        device(dev)?;
        let p = objects::get::<CommandPool>(pool.as_raw())?;
        for &cb in p.buffers.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let cb = objects::get_dispatchable::<CommandBuffer>(cb)?;
            *cb.recording.lock().unwrap_or_else(|e| e.into_inner()) = Recording::default();
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn trim_command_pool(
    _dev: vk::Device,
    _pool: vk::CommandPool,
    _flags: vk::CommandPoolTrimFlags,
) {
}

pub(crate) unsafe extern "system" fn allocate_command_buffers(
    dev: vk::Device,
    info: *const vk::CommandBufferAllocateInfo,
    out: *mut vk::CommandBuffer,
) -> vk::Result {
    guard("vkAllocateCommandBuffers", || {
        device(dev)?;
        // SAFETY: the application's allocate info.
        let info = unsafe { arg(info, "pAllocateInfo") }?;
        let pool_h = info.command_pool.as_raw();
        let pool = objects::get::<CommandPool>(pool_h)?;
        if out.is_null() && info.command_buffer_count > 0 {
            return Err(Fail::usage("pCommandBuffers is NULL"));
        }
        let mut list = pool.buffers.lock().unwrap_or_else(|e| e.into_inner());
        for i in 0..info.command_buffer_count as usize {
            let h = objects::insert_dispatchable(Arc::new(CommandBuffer {
                pool: pool_h,
                recording: Mutex::new(Recording::default()),
            }));
            list.push(h);
            // SAFETY: `out` has commandBufferCount elements.
            unsafe { out.add(i).write(vk::CommandBuffer::from_raw(h)) };
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn free_command_buffers(
    dev: vk::Device,
    pool: vk::CommandPool,
    count: u32,
    bufs: *const vk::CommandBuffer,
) {
    guard_void("vkFreeCommandBuffers", || {
        device(dev)?;
        let p = objects::get::<CommandPool>(pool.as_raw())?;
        // SAFETY: the application's array.
        let bufs = unsafe { slice(bufs, count, "pCommandBuffers") }?;
        let mut list = p.buffers.lock().unwrap_or_else(|e| e.into_inner());
        for b in bufs {
            if b.as_raw() == 0 {
                continue;
            }
            objects::remove_dispatchable::<CommandBuffer>(b.as_raw())?;
            list.retain(|&h| h != b.as_raw());
        }
        Ok(())
    })
}

fn command_buffer(cb: vk::CommandBuffer) -> Result<Arc<CommandBuffer>, Fail> {
    objects::get_dispatchable::<CommandBuffer>(cb.as_raw())
}

pub(crate) unsafe extern "system" fn begin_command_buffer(
    cb: vk::CommandBuffer,
    _info: *const vk::CommandBufferBeginInfo,
) -> vk::Result {
    guard("vkBeginCommandBuffer", || {
        let cb = command_buffer(cb)?;
        *cb.recording.lock().unwrap_or_else(|e| e.into_inner()) = Recording::default();
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn end_command_buffer(cb: vk::CommandBuffer) -> vk::Result {
    guard("vkEndCommandBuffer", || {
        let cb = command_buffer(cb)?;
        let r = cb.recording.lock().unwrap_or_else(|e| e.into_inner());
        match &r.error {
            Some(e) => Err(Fail::usage(format!(
                "the command buffer recorded an error: {e}"
            ))),
            None => Ok(vk::Result::SUCCESS),
        }
    })
}

pub(crate) unsafe extern "system" fn reset_command_buffer(
    cb: vk::CommandBuffer,
    _flags: vk::CommandBufferResetFlags,
) -> vk::Result {
    // SAFETY: forwarded.
    unsafe { begin_command_buffer(cb, std::ptr::null()) }
}

/// Records the command `make` builds, or remembers its error.
fn record(function: &str, cb: vk::CommandBuffer, make: impl FnOnce() -> Result<Cmd, Fail>) {
    guard_void(function, || {
        let cb = command_buffer(cb)?;
        let cmd = make();
        let mut r = cb.recording.lock().unwrap_or_else(|e| e.into_inner());
        match cmd {
            Ok(c) => r.commands.push(c),
            Err(f) => {
                report(function, &f.message);
                r.error.get_or_insert(format!("{function}: {}", f.message));
            }
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn cmd_bind_pipeline(
    cb: vk::CommandBuffer,
    bind_point: vk::PipelineBindPoint,
    pipeline: vk::Pipeline,
) {
    record("vkCmdBindPipeline", cb, || {
        if bind_point != vk::PipelineBindPoint::COMPUTE {
            return Err(Fail::usage("only the compute bind point exists"));
        }
        objects::get::<crate::pipeline::ComputePipeline>(pipeline.as_raw())?;
        Ok(Cmd::BindPipeline(pipeline.as_raw()))
    })
}

pub(crate) unsafe extern "system" fn cmd_bind_descriptor_sets(
    cb: vk::CommandBuffer,
    bind_point: vk::PipelineBindPoint,
    layout: vk::PipelineLayout,
    first: u32,
    count: u32,
    sets: *const vk::DescriptorSet,
    dyn_count: u32,
    dyn_offsets: *const u32,
) {
    record("vkCmdBindDescriptorSets", cb, || {
        if bind_point != vk::PipelineBindPoint::COMPUTE {
            return Err(Fail::usage("only the compute bind point exists"));
        }
        objects::get::<PipelineLayout>(layout.as_raw())?;
        // SAFETY: the application's arrays.
        let sets = unsafe { slice(sets, count, "pDescriptorSets") }?;
        // SAFETY: as above.
        let dyn_offsets = unsafe { slice(dyn_offsets, dyn_count, "pDynamicOffsets") }?;
        let mut dyn_iter = dyn_offsets.iter();
        let mut bound = Vec::with_capacity(sets.len());
        for s in sets {
            let set = objects::get::<DescriptorSet>(s.as_raw())?;
            let mut snapshot = set.slots.lock().unwrap_or_else(|e| e.into_inner()).clone();
            // Dynamic offsets apply in binding order, then array element order.
            for b in &set.layout.bindings {
                if matches!(
                    b.ty,
                    vk::DescriptorType::STORAGE_BUFFER_DYNAMIC
                        | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
                ) {
                    for e in 0..b.count {
                        let off = *dyn_iter.next().ok_or_else(|| {
                            Fail::usage("fewer dynamic offsets than dynamic descriptors")
                        })?;
                        if let Some(slot) = snapshot.get_mut(&(b.binding, e)) {
                            slot.offset += off as u64;
                        }
                    }
                }
            }
            bound.push(Arc::new(snapshot));
        }
        Ok(Cmd::BindSets { first, sets: bound })
    })
}

pub(crate) unsafe extern "system" fn cmd_push_constants(
    cb: vk::CommandBuffer,
    layout: vk::PipelineLayout,
    _stages: vk::ShaderStageFlags,
    offset: u32,
    size: u32,
    values: *const c_void,
) {
    record("vkCmdPushConstants", cb, || {
        objects::get::<PipelineLayout>(layout.as_raw())?;
        if offset as u64 + size as u64 > 256 {
            return Err(Fail::usage(format!(
                "push constants {offset}..+{size} pass maxPushConstantsSize (256)"
            )));
        }
        // SAFETY: `values` points at `size` bytes.
        let bytes = unsafe { slice(values as *const u8, size, "pValues") }?.to_vec();
        Ok(Cmd::Push { offset, bytes })
    })
}

pub(crate) unsafe extern "system" fn cmd_dispatch(cb: vk::CommandBuffer, x: u32, y: u32, z: u32) {
    record("vkCmdDispatch", cb, || {
        Ok(Cmd::Dispatch {
            base: [0; 3],
            groups: [x, y, z],
        })
    })
}

pub(crate) unsafe extern "system" fn cmd_dispatch_base(
    cb: vk::CommandBuffer,
    bx: u32,
    by: u32,
    bz: u32,
    x: u32,
    y: u32,
    z: u32,
) {
    record("vkCmdDispatchBase", cb, || {
        Ok(Cmd::Dispatch {
            base: [bx, by, bz],
            groups: [x, y, z],
        })
    })
}

pub(crate) unsafe extern "system" fn cmd_dispatch_indirect(
    cb: vk::CommandBuffer,
    buffer: vk::Buffer,
    offset: vk::DeviceSize,
) {
    record("vkCmdDispatchIndirect", cb, || {
        Ok(Cmd::DispatchIndirect {
            buffer: buffer.as_raw(),
            offset,
        })
    })
}

pub(crate) unsafe extern "system" fn cmd_copy_buffer(
    cb: vk::CommandBuffer,
    src: vk::Buffer,
    dst: vk::Buffer,
    count: u32,
    regions: *const vk::BufferCopy,
) {
    record("vkCmdCopyBuffer", cb, || {
        // SAFETY: the application's array.
        let regions = unsafe { slice(regions, count, "pRegions") }?;
        Ok(Cmd::Copy {
            src: src.as_raw(),
            dst: dst.as_raw(),
            regions: regions
                .iter()
                .map(|r| (r.src_offset, r.dst_offset, r.size))
                .collect(),
        })
    })
}

pub(crate) unsafe extern "system" fn cmd_copy_buffer2(
    cb: vk::CommandBuffer,
    info: *const vk::CopyBufferInfo2,
) {
    record("vkCmdCopyBuffer2", cb, || {
        // SAFETY: the application's info and its regions.
        let info = unsafe { arg(info, "pCopyBufferInfo") }?;
        // SAFETY: as above.
        let regions = unsafe { slice(info.regions, info.region_count, "pRegions") }?;
        Ok(Cmd::Copy {
            src: info.src_buffer.as_raw(),
            dst: info.dst_buffer.as_raw(),
            regions: regions
                .iter()
                .map(|r| (r.src_offset, r.dst_offset, r.size))
                .collect(),
        })
    })
}

pub(crate) unsafe extern "system" fn cmd_fill_buffer(
    cb: vk::CommandBuffer,
    dst: vk::Buffer,
    offset: vk::DeviceSize,
    size: vk::DeviceSize,
    data: u32,
) {
    record("vkCmdFillBuffer", cb, || {
        Ok(Cmd::Fill {
            dst: dst.as_raw(),
            offset,
            size,
            data,
        })
    })
}

pub(crate) unsafe extern "system" fn cmd_update_buffer(
    cb: vk::CommandBuffer,
    dst: vk::Buffer,
    offset: vk::DeviceSize,
    size: vk::DeviceSize,
    data: *const c_void,
) {
    record("vkCmdUpdateBuffer", cb, || {
        if size > 65536 {
            return Err(Fail::usage(format!("dataSize {size} is above 65536")));
        }
        // SAFETY: `data` points at `size` bytes.
        let bytes = unsafe { slice(data as *const u8, size as u32, "pData") }?.to_vec();
        Ok(Cmd::Update {
            dst: dst.as_raw(),
            offset,
            bytes,
        })
    })
}

/// Barriers order nothing here: commands run one after another, each to completion.
pub(crate) unsafe extern "system" fn cmd_pipeline_barrier(
    cb: vk::CommandBuffer,
    _src: vk::PipelineStageFlags,
    _dst: vk::PipelineStageFlags,
    _dep: vk::DependencyFlags,
    _mc: u32,
    _m: *const vk::MemoryBarrier,
    _bc: u32,
    _b: *const vk::BufferMemoryBarrier,
    _ic: u32,
    _i: *const vk::ImageMemoryBarrier,
) {
    guard_void("vkCmdPipelineBarrier", || command_buffer(cb).map(|_| ()))
}

pub(crate) unsafe extern "system" fn cmd_pipeline_barrier2(
    cb: vk::CommandBuffer,
    _dep: *const vk::DependencyInfo,
) {
    guard_void("vkCmdPipelineBarrier2", || command_buffer(cb).map(|_| ()))
}

pub(crate) unsafe extern "system" fn cmd_set_event(
    cb: vk::CommandBuffer,
    event: vk::Event,
    _stage: vk::PipelineStageFlags,
) {
    record("vkCmdSetEvent", cb, || {
        Ok(Cmd::Event {
            event: event.as_raw(),
            set: true,
        })
    })
}

pub(crate) unsafe extern "system" fn cmd_set_event2(
    cb: vk::CommandBuffer,
    event: vk::Event,
    _dep: *const vk::DependencyInfo,
) {
    record("vkCmdSetEvent2", cb, || {
        Ok(Cmd::Event {
            event: event.as_raw(),
            set: true,
        })
    })
}

pub(crate) unsafe extern "system" fn cmd_reset_event(
    cb: vk::CommandBuffer,
    event: vk::Event,
    _stage: vk::PipelineStageFlags,
) {
    record("vkCmdResetEvent", cb, || {
        Ok(Cmd::Event {
            event: event.as_raw(),
            set: false,
        })
    })
}

pub(crate) unsafe extern "system" fn cmd_reset_event2(
    cb: vk::CommandBuffer,
    event: vk::Event,
    _stage: vk::PipelineStageFlags2,
) {
    record("vkCmdResetEvent2", cb, || {
        Ok(Cmd::Event {
            event: event.as_raw(),
            set: false,
        })
    })
}

/// Waiting on an event inside a queue: the commands before it have completed already.
pub(crate) unsafe extern "system" fn cmd_wait_events(
    cb: vk::CommandBuffer,
    _count: u32,
    _events: *const vk::Event,
    _src: vk::PipelineStageFlags,
    _dst: vk::PipelineStageFlags,
    _mc: u32,
    _m: *const vk::MemoryBarrier,
    _bc: u32,
    _b: *const vk::BufferMemoryBarrier,
    _ic: u32,
    _i: *const vk::ImageMemoryBarrier,
) {
    guard_void("vkCmdWaitEvents", || command_buffer(cb).map(|_| ()))
}

pub(crate) unsafe extern "system" fn cmd_wait_events2(
    cb: vk::CommandBuffer,
    _count: u32,
    _events: *const vk::Event,
    _deps: *const vk::DependencyInfo,
) {
    guard_void("vkCmdWaitEvents2", || command_buffer(cb).map(|_| ()))
}

pub(crate) unsafe extern "system" fn cmd_write_timestamp(
    cb: vk::CommandBuffer,
    _stage: vk::PipelineStageFlags,
    pool: vk::QueryPool,
    query: u32,
) {
    record("vkCmdWriteTimestamp", cb, || {
        Ok(Cmd::Timestamp {
            pool: pool.as_raw(),
            query,
        })
    })
}

pub(crate) unsafe extern "system" fn cmd_write_timestamp2(
    cb: vk::CommandBuffer,
    _stage: vk::PipelineStageFlags2,
    pool: vk::QueryPool,
    query: u32,
) {
    record("vkCmdWriteTimestamp2", cb, || {
        Ok(Cmd::Timestamp {
            pool: pool.as_raw(),
            query,
        })
    })
}

pub(crate) unsafe extern "system" fn cmd_reset_query_pool(
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    first: u32,
    count: u32,
) {
    record("vkCmdResetQueryPool", cb, || {
        Ok(Cmd::ResetQueries {
            pool: pool.as_raw(),
            first,
            count,
        })
    })
}
