//! Devices, queues, memory and buffers.
//!
//! Memory is host memory the engine reads and writes in place: a dispatch sees each bound
//! buffer as a slice of `AtomicU32` words of its allocation (`Memory::words`), so a mapped
//! pointer, a copy command and a shader all touch the same bytes, and bindings that alias
//! behave as on a GPU.

use std::alloc::Layout;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, LazyLock, Mutex, Weak};

use vulkanalia_sys::{self as vk, Handle};

use crate::entry::{Fail, arg, guard, guard_value, guard_void, out_ptr, slice};
use crate::instance::{DEVICE_EXTENSIONS, MAX_ALLOCATION, PhysicalDevice, check_extensions};
use crate::objects;

/// Alignment of every allocation and of buffers in memory (≥ the offset alignments reported).
pub const MEMORY_ALIGNMENT: u64 = 256;

/// Live allocations by address slot (the engine's `BoundResources::addressable`): every
/// dispatch can reach each of them through its device address. Freed slots are reused, so the
/// slot numbers stay as small as the number of live allocations.
#[derive(Default)]
struct Slots {
    live: std::collections::BTreeMap<u64, Weak<Memory>>,
    free: Vec<u64>,
    next: u64,
}

static SLOTS: LazyLock<Mutex<Slots>> = LazyLock::new(Mutex::default);

fn slots() -> std::sync::MutexGuard<'static, Slots> {
    SLOTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every live allocation with its slot.
pub fn live_memory() -> Vec<(u64, Arc<Memory>)> {
    slots()
        .live
        .iter()
        .filter_map(|(&s, w)| w.upgrade().map(|m| (s, m)))
        .collect()
}

/// A VkDevice.
pub struct Device {
    /// The device's one queue.
    pub queue: usize,
    /// robustBufferAccess was enabled: out-of-bounds accesses read 0 and drop stores instead
    /// of failing the submit.
    pub robust: bool,
}

/// A VkQueue.
pub struct Queue {
    /// Held while a submission runs (vkQueueWaitIdle waits for it).
    pub busy: Mutex<()>,
    /// The device's robustness setting.
    pub robust: bool,
}

/// A VkDeviceMemory: zeroed host memory, aligned to [`MEMORY_ALIGNMENT`].
pub struct Memory {
    ptr: NonNull<u8>,
    layout: Layout,
    /// The size the application asked for.
    pub size: u64,
    /// The device address of byte 0.
    pub address: u64,
    /// The address slot (see `live_memory`).
    pub slot: u64,
}

// SAFETY: the memory is a plain heap block owned by this object; the engine accesses it only
// through `AtomicU32` words and copies go through raw pointers under the queue's lock, as
// Vulkan's external synchronization rules require of the application for its own accesses.
unsafe impl Send for Memory {}
// SAFETY: as above.
unsafe impl Sync for Memory {}

impl Memory {
    fn new(size: u64) -> Result<Arc<Memory>, Fail> {
        let oom = || {
            Fail::new(
                vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
                format!("cannot allocate {size} bytes"),
            )
        };
        if size == 0 || size > MAX_ALLOCATION {
            return Err(Fail::new(
                vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
                format!("allocation size {size} is not in 1..={MAX_ALLOCATION}"),
            ));
        }
        let bytes = size.next_multiple_of(MEMORY_ALIGNMENT);
        let layout = Layout::from_size_align(bytes as usize, MEMORY_ALIGNMENT as usize)
            .map_err(|_| oom())?;
        // SAFETY: `layout` has a nonzero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) }).ok_or_else(oom)?;
        let mut sl = slots();
        let slot = match sl.free.pop() {
            Some(s) => s,
            None => {
                sl.next += 1;
                sl.next - 1
            }
        };
        if slot > coopmat_exec::MAX_ADDRESSABLE_SLOT {
            sl.free.push(slot);
            // SAFETY: allocated just above with this layout.
            unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) };
            return Err(Fail::new(
                vk::Result::ERROR_TOO_MANY_OBJECTS,
                "more live allocations than the engine can address",
            ));
        }
        let mem = Arc::new(Memory {
            ptr,
            layout,
            size,
            address: coopmat_exec::addressable_base(slot),
            slot,
        });
        sl.live.insert(slot, Arc::downgrade(&mem));
        Ok(mem)
    }

    /// The allocation's bytes (rounded up to [`MEMORY_ALIGNMENT`]).
    pub fn capacity(&self) -> u64 {
        self.layout.size() as u64
    }

    /// A pointer to byte `offset` (checked against the capacity).
    pub fn ptr(&self, offset: u64) -> Result<*mut u8, Fail> {
        if offset > self.capacity() {
            return Err(Fail::usage(format!(
                "offset {offset} is past the end of a {}-byte allocation",
                self.size
            )));
        }
        // SAFETY: `offset` is within the allocation (or one past its end).
        Ok(unsafe { self.ptr.as_ptr().add(offset as usize) })
    }

    /// Bytes `offset .. offset + bytes` as 32-bit words (the last one may extend past `bytes`
    /// but stays inside the allocation). `offset` must be a multiple of 4.
    pub fn words(&self, offset: u64, bytes: u64) -> Result<&[AtomicU32], Fail> {
        let end = offset.checked_add(bytes.next_multiple_of(4));
        if !offset.is_multiple_of(4) || end.is_none_or(|e| e > self.capacity()) {
            return Err(Fail::new(
                vk::Result::ERROR_DEVICE_LOST,
                format!(
                    "bytes {offset}..+{bytes} are not a word-aligned range of a {}-byte allocation",
                    self.size
                ),
            ));
        }
        // SAFETY: the range is inside the allocation and 4-aligned (the allocation is
        // 256-aligned); `AtomicU32` has the layout of `u32`, and every access the engine makes
        // through it is atomic, so concurrent workgroups may share it.
        Ok(unsafe {
            std::slice::from_raw_parts(
                self.ptr.as_ptr().add(offset as usize) as *const AtomicU32,
                (bytes.div_ceil(4)) as usize,
            )
        })
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        let mut sl = slots();
        sl.live.remove(&self.slot);
        sl.free.push(self.slot);
        drop(sl);
        // SAFETY: allocated in `Memory::new` with this layout; dropped once.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// A VkBuffer: a size and, once bound, a place in a memory object.
pub struct Buffer {
    /// Bytes.
    pub size: u64,
    /// The memory and offset bound by vkBindBufferMemory.
    pub bound: Mutex<Option<(Arc<Memory>, u64)>>,
}

impl Buffer {
    /// The memory and the offset of byte `offset .. offset + len` of the buffer, checked.
    pub fn range(&self, offset: u64, len: u64, what: &str) -> Result<(Arc<Memory>, u64), Fail> {
        let lost = |m: String| Fail::new(vk::Result::ERROR_DEVICE_LOST, m);
        if offset.checked_add(len).is_none_or(|e| e > self.size) {
            return Err(lost(format!(
                "{what}: bytes {offset}..+{len} are outside the {}-byte buffer",
                self.size
            )));
        }
        let bound = self.bound.lock().unwrap_or_else(|e| e.into_inner());
        let (mem, base) = bound
            .as_ref()
            .ok_or_else(|| lost(format!("{what}: the buffer has no memory bound")))?;
        Ok((mem.clone(), base + offset))
    }
}

fn device(h: vk::Device) -> Result<Arc<Device>, Fail> {
    objects::get_dispatchable::<Device>(h.as_raw())
}

/// The body of the vkDestroy* entry points of plain objects: checks the device, then removes
/// the object (VK_NULL_HANDLE is a no-op; a destroyed or foreign handle an error).
pub(crate) fn destroy<T: objects::Kind>(function: &str, dev: vk::Device, handle: u64) {
    guard_void(function, || {
        device(dev)?;
        objects::remove::<T>(handle)?;
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Entry points.

pub(crate) unsafe extern "system" fn create_device(
    pd: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Device,
) -> vk::Result {
    guard("vkCreateDevice", || {
        objects::get_dispatchable::<PhysicalDevice>(pd.as_raw())?;
        // SAFETY: the application's create info and the arrays it points at.
        let info = unsafe { arg(info, "pCreateInfo") }?;
        // SAFETY: as above.
        unsafe {
            check_extensions(
                info.enabled_extension_names,
                info.enabled_extension_count,
                DEVICE_EXTENSIONS,
            )
        }?;
        // SAFETY: as above.
        let queues = unsafe {
            slice(
                info.queue_create_infos,
                info.queue_create_info_count,
                "pQueueCreateInfos",
            )
        }?;
        for q in queues {
            if q.queue_family_index != 0 || q.queue_count > 1 {
                return Err(Fail::new(
                    vk::Result::ERROR_INITIALIZATION_FAILED,
                    format!(
                        "queue family {} with {} queues requested; the device has family 0 with 1 queue",
                        q.queue_family_index, q.queue_count
                    ),
                ));
            }
        }
        // robustBufferAccess from pEnabledFeatures or a VkPhysicalDeviceFeatures2 in the chain.
        // SAFETY: optional pointer from the application.
        let mut robust =
            unsafe { info.enabled_features.as_ref() }.is_some_and(|f| f.robust_buffer_access != 0);
        let mut next = info.next as *const vk::BaseInStructure;
        while !next.is_null() {
            // SAFETY: the application's pNext chain of input structures.
            unsafe {
                if (*next).s_type == vk::StructureType::PHYSICAL_DEVICE_FEATURES_2 {
                    robust |= (*(next as *const vk::PhysicalDeviceFeatures2))
                        .features
                        .robust_buffer_access
                        != 0;
                }
                next = (*next).next;
            }
        }
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pDevice") }?;
        let queue = objects::insert_dispatchable(Arc::new(Queue {
            busy: Mutex::new(()),
            robust,
        }));
        *out = vk::Device::from_raw(objects::insert_dispatchable(Arc::new(Device {
            queue,
            robust,
        })));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_device(
    dev: vk::Device,
    _alloc: *const vk::AllocationCallbacks,
) {
    guard_void("vkDestroyDevice", || {
        if let Some(d) = objects::remove_dispatchable::<Device>(dev.as_raw())? {
            objects::remove_dispatchable::<Queue>(d.queue)?;
            crate::uniformity::write();
            if crate::profile::enabled() {
                crate::profile::report();
            }
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_device_queue(
    dev: vk::Device,
    family: u32,
    index: u32,
    out: *mut vk::Queue,
) {
    guard_void("vkGetDeviceQueue", || {
        let d = device(dev)?;
        if family != 0 || index != 0 {
            return Err(Fail::usage(format!(
                "queue {index} of family {family} does not exist"
            )));
        }
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pQueue") }?;
        *out = vk::Queue::from_raw(d.queue);
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_device_queue2(
    dev: vk::Device,
    info: *const vk::DeviceQueueInfo2,
    out: *mut vk::Queue,
) {
    guard_void("vkGetDeviceQueue2", || {
        // SAFETY: the application's info.
        let info = unsafe { arg(info, "pQueueInfo") }?;
        // SAFETY: forwarded pointers.
        unsafe { get_device_queue(dev, info.queue_family_index, info.queue_index, out) };
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn device_wait_idle(dev: vk::Device) -> vk::Result {
    guard("vkDeviceWaitIdle", || {
        let d = device(dev)?;
        let q = objects::get_dispatchable::<Queue>(d.queue)?;
        drop(q.busy.lock().unwrap_or_else(|e| e.into_inner()));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn allocate_memory(
    dev: vk::Device,
    info: *const vk::MemoryAllocateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::DeviceMemory,
) -> vk::Result {
    guard("vkAllocateMemory", || {
        device(dev)?;
        // SAFETY: the application's allocate info.
        let info = unsafe { arg(info, "pAllocateInfo") }?;
        if info.memory_type_index != 0 {
            return Err(Fail::usage(format!(
                "memory type {} does not exist (the device has type 0)",
                info.memory_type_index
            )));
        }
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pMemory") }?;
        let mem = Memory::new(info.allocation_size)?;
        *out = vk::DeviceMemory::from_raw(objects::insert_arc(mem));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn free_memory(
    dev: vk::Device,
    mem: vk::DeviceMemory,
    _alloc: *const vk::AllocationCallbacks,
) {
    guard_void("vkFreeMemory", || {
        device(dev)?;
        // Buffers still bound keep the block alive (their Arc) until they are destroyed, so a
        // command that still uses one cannot touch freed memory.
        objects::remove::<Memory>(mem.as_raw())?;
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn map_memory(
    dev: vk::Device,
    mem: vk::DeviceMemory,
    offset: vk::DeviceSize,
    _size: vk::DeviceSize,
    _flags: vk::MemoryMapFlags,
    out: *mut *mut c_void,
) -> vk::Result {
    guard("vkMapMemory", || {
        device(dev)?;
        let m = objects::get::<Memory>(mem.as_raw())?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "ppData") }?;
        if offset >= m.size {
            return Err(Fail::new(
                vk::Result::ERROR_MEMORY_MAP_FAILED,
                format!(
                    "offset {offset} is not inside the {}-byte allocation",
                    m.size
                ),
            ));
        }
        *out = m.ptr(offset)? as *mut c_void;
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn unmap_memory(dev: vk::Device, mem: vk::DeviceMemory) {
    guard_void("vkUnmapMemory", || {
        device(dev)?;
        objects::get::<Memory>(mem.as_raw())?;
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn flush_mapped_memory_ranges(
    dev: vk::Device,
    _count: u32,
    _ranges: *const vk::MappedMemoryRange,
) -> vk::Result {
    // The memory is coherent: nothing to flush or invalidate.
    guard("vkFlushMappedMemoryRanges", || {
        device(dev).map(|_| vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn invalidate_mapped_memory_ranges(
    dev: vk::Device,
    _count: u32,
    _ranges: *const vk::MappedMemoryRange,
) -> vk::Result {
    guard("vkInvalidateMappedMemoryRanges", || {
        device(dev).map(|_| vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn create_buffer(
    dev: vk::Device,
    info: *const vk::BufferCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Buffer,
) -> vk::Result {
    guard("vkCreateBuffer", || {
        device(dev)?;
        // SAFETY: the application's create info.
        let info = unsafe { arg(info, "pCreateInfo") }?;
        if info.size == 0 || info.size > MAX_ALLOCATION {
            return Err(Fail::new(
                vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
                format!("buffer size {} is not in 1..={MAX_ALLOCATION}", info.size),
            ));
        }
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pBuffer") }?;
        *out = vk::Buffer::from_raw(objects::insert(Buffer {
            size: info.size,
            bound: Mutex::new(None),
        }));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_buffer(
    dev: vk::Device,
    buffer: vk::Buffer,
    _alloc: *const vk::AllocationCallbacks,
) {
    crate::device::destroy::<Buffer>("vkDestroyBuffer", dev, buffer.as_raw())
}

fn requirements(size: u64) -> vk::MemoryRequirements {
    vk::MemoryRequirements {
        size: size.next_multiple_of(4),
        alignment: MEMORY_ALIGNMENT,
        memory_type_bits: 1,
    }
}

pub(crate) unsafe extern "system" fn get_buffer_memory_requirements(
    dev: vk::Device,
    buffer: vk::Buffer,
    out: *mut vk::MemoryRequirements,
) {
    guard_void("vkGetBufferMemoryRequirements", || {
        device(dev)?;
        let b = objects::get::<Buffer>(buffer.as_raw())?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pMemoryRequirements") }?;
        *out = requirements(b.size);
        Ok(())
    })
}

/// Writes requirements into a VkMemoryRequirements2 and its VkMemoryDedicatedRequirements.
///
/// # Safety
/// `out` must point at a VkMemoryRequirements2 with a valid chain.
unsafe fn write_requirements2(size: u64, out: *mut vk::MemoryRequirements2) -> Result<(), Fail> {
    // SAFETY: the caller's contract.
    let out = unsafe { out_ptr(out, "pMemoryRequirements") }?;
    out.memory_requirements = requirements(size);
    let mut next = out.next as *mut vk::BaseOutStructure;
    while !next.is_null() {
        // SAFETY: the application's pNext chain.
        unsafe {
            if (*next).s_type == vk::StructureType::MEMORY_DEDICATED_REQUIREMENTS {
                let d = next as *mut vk::MemoryDedicatedRequirements;
                (*d).prefers_dedicated_allocation = vk::FALSE;
                (*d).requires_dedicated_allocation = vk::FALSE;
            }
            next = (*next).next;
        }
    }
    Ok(())
}

pub(crate) unsafe extern "system" fn get_buffer_memory_requirements2(
    dev: vk::Device,
    info: *const vk::BufferMemoryRequirementsInfo2,
    out: *mut vk::MemoryRequirements2,
) {
    guard_void("vkGetBufferMemoryRequirements2", || {
        device(dev)?;
        // SAFETY: the application's info.
        let info = unsafe { arg(info, "pInfo") }?;
        let b = objects::get::<Buffer>(info.buffer.as_raw())?;
        // SAFETY: output structure from the application.
        unsafe { write_requirements2(b.size, out) }
    })
}

pub(crate) unsafe extern "system" fn get_device_buffer_memory_requirements(
    dev: vk::Device,
    info: *const vk::DeviceBufferMemoryRequirements,
    out: *mut vk::MemoryRequirements2,
) {
    guard_void("vkGetDeviceBufferMemoryRequirements", || {
        device(dev)?;
        // SAFETY: the application's info and its create info.
        let info = unsafe { arg(info, "pInfo") }?;
        // SAFETY: as above.
        let create = unsafe { arg(info.create_info, "pCreateInfo") }?;
        // SAFETY: output structure from the application.
        unsafe { write_requirements2(create.size, out) }
    })
}

fn bind(buffer: u64, memory: u64, offset: u64) -> Result<(), Fail> {
    let b = objects::get::<Buffer>(buffer)?;
    let m = objects::get::<Memory>(memory)?;
    if !offset.is_multiple_of(MEMORY_ALIGNMENT)
        || offset
            .checked_add(b.size)
            .is_none_or(|e| e > m.size.next_multiple_of(4))
    {
        return Err(Fail::usage(format!(
            "a {}-byte buffer cannot be bound at offset {offset} of a {}-byte allocation (alignment {MEMORY_ALIGNMENT})",
            b.size, m.size
        )));
    }
    let mut bound = b.bound.lock().unwrap_or_else(|e| e.into_inner());
    if bound.is_some() {
        return Err(Fail::usage("the buffer already has memory bound"));
    }
    *bound = Some((m, offset));
    Ok(())
}

pub(crate) unsafe extern "system" fn bind_buffer_memory(
    dev: vk::Device,
    buffer: vk::Buffer,
    mem: vk::DeviceMemory,
    offset: vk::DeviceSize,
) -> vk::Result {
    guard("vkBindBufferMemory", || {
        device(dev)?;
        bind(buffer.as_raw(), mem.as_raw(), offset)?;
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn bind_buffer_memory2(
    dev: vk::Device,
    count: u32,
    infos: *const vk::BindBufferMemoryInfo,
) -> vk::Result {
    guard("vkBindBufferMemory2", || {
        device(dev)?;
        // SAFETY: the application's array.
        for i in unsafe { slice(infos, count, "pBindInfos") }? {
            bind(i.buffer.as_raw(), i.memory.as_raw(), i.memory_offset)?;
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn get_buffer_device_address(
    dev: vk::Device,
    info: *const vk::BufferDeviceAddressInfo,
) -> vk::DeviceAddress {
    guard_value("vkGetBufferDeviceAddress", 0, || {
        device(dev)?;
        // SAFETY: the application's info.
        let info = unsafe { arg(info, "pInfo") }?;
        let b = objects::get::<Buffer>(info.buffer.as_raw())?;
        let bound = b.bound.lock().unwrap_or_else(|e| e.into_inner());
        let (m, off) = bound
            .as_ref()
            .ok_or_else(|| Fail::usage("the buffer has no memory bound"))?;
        Ok(m.address + off)
    })
}

pub(crate) unsafe extern "system" fn get_buffer_opaque_capture_address(
    _dev: vk::Device,
    _info: *const vk::BufferDeviceAddressInfo,
) -> u64 {
    0
}

pub(crate) unsafe extern "system" fn get_device_memory_opaque_capture_address(
    _dev: vk::Device,
    _info: *const vk::DeviceMemoryOpaqueCaptureAddressInfo,
) -> u64 {
    0
}

pub(crate) unsafe extern "system" fn get_device_memory_commitment(
    _dev: vk::Device,
    mem: vk::DeviceMemory,
    out: *mut vk::DeviceSize,
) {
    guard_void("vkGetDeviceMemoryCommitment", || {
        let m = objects::get::<Memory>(mem.as_raw())?;
        // SAFETY: output pointer from the application.
        if let Some(o) = unsafe { out.as_mut() } {
            *o = m.size;
        }
        Ok(())
    })
}
