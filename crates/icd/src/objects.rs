//! Handles and the object table.
//!
//! Every Vulkan object lives in one process-wide table behind a mutex, keyed by its handle, so
//! a handle the application destroyed (or never had) is an error naming it, never a dangling
//! pointer. Non-dispatchable handles are counters that are never reused. Dispatchable handles
//! (instance, physical device, device, queue, command buffer) must be pointers whose first
//! word the loader owns (Loader-Driver Interface, "Driver Dispatchable Object Creation"): each
//! is a small box holding `ICD_LOADER_MAGIC` at creation, and the table is keyed by its address;
//! the driver never reads through it.

use crate::entry::Fail;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use rustc_hash::FxHashMap;

/// The value the loader checks in the first word of a dispatchable object (vk_icd.h).
pub const ICD_LOADER_MAGIC: usize = 0x01CD_C0DE;

/// What a dispatchable handle points at: the loader's word and nothing else.
#[repr(C)]
struct LoaderSlot {
    loader_data: usize,
}

macro_rules! object_kinds {
    ($($variant:ident($ty:ty) = $name:literal,)*) => {
        /// One object of the table.
        #[derive(Clone)]
        pub enum Obj {
            $(
                #[doc = $name]
                $variant(Arc<$ty>),
            )*
        }

        $(
            impl Kind for $ty {
                const NAME: &'static str = $name;
                fn of(obj: &Obj) -> Option<Arc<Self>> {
                    if let Obj::$variant(x) = obj { Some(x.clone()) } else { None }
                }
                fn wrap(self: Arc<Self>) -> Obj {
                    Obj::$variant(self)
                }
            }
        )*
    };
}

/// A type of object the table holds.
pub trait Kind: Sized {
    /// The Vulkan type name, for messages.
    const NAME: &'static str;
    /// The object if `obj` is one of this kind.
    fn of(obj: &Obj) -> Option<Arc<Self>>;
    /// The table entry for `self`.
    fn wrap(self: Arc<Self>) -> Obj;
}

use crate::commands::{CommandBuffer, CommandPool};
use crate::device::{Buffer, Device, Memory, Queue};
use crate::instance::{Instance, PhysicalDevice};
use crate::pipeline::{
    ComputePipeline, DescriptorPool, DescriptorSet, DescriptorSetLayout, PipelineCache,
    PipelineLayout, Sampler, ShaderModule,
};
use crate::sync::{DebugMessenger, Event, Fence, QueryPool, Semaphore};

object_kinds! {
    Instance(Instance) = "VkInstance",
    PhysicalDevice(PhysicalDevice) = "VkPhysicalDevice",
    Device(Device) = "VkDevice",
    Queue(Queue) = "VkQueue",
    CommandBuffer(CommandBuffer) = "VkCommandBuffer",
    CommandPool(CommandPool) = "VkCommandPool",
    Memory(Memory) = "VkDeviceMemory",
    Buffer(Buffer) = "VkBuffer",
    ShaderModule(ShaderModule) = "VkShaderModule",
    PipelineLayout(PipelineLayout) = "VkPipelineLayout",
    PipelineCache(PipelineCache) = "VkPipelineCache",
    Pipeline(ComputePipeline) = "VkPipeline",
    DescriptorSetLayout(DescriptorSetLayout) = "VkDescriptorSetLayout",
    DescriptorPool(DescriptorPool) = "VkDescriptorPool",
    DescriptorSet(DescriptorSet) = "VkDescriptorSet",
    Sampler(Sampler) = "VkSampler",
    Fence(Fence) = "VkFence",
    Semaphore(Semaphore) = "VkSemaphore",
    Event(Event) = "VkEvent",
    QueryPool(QueryPool) = "VkQueryPool",
    DebugMessenger(DebugMessenger) = "VkDebugUtilsMessengerEXT",
}

#[derive(Default)]
struct Table {
    next: u64,
    objects: FxHashMap<u64, Obj>,
    dispatchable: FxHashMap<usize, Obj>,
}

static TABLE: LazyLock<Mutex<Table>> = LazyLock::new(Mutex::default);

fn table() -> MutexGuard<'static, Table> {
    // A panic while the table was locked left it consistent (every update is one map call).
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Adds a non-dispatchable object; returns its handle.
pub fn insert<T: Kind>(obj: T) -> u64 {
    insert_arc(Arc::new(obj))
}

/// [`insert`] for an object already shared.
pub fn insert_arc<T: Kind>(obj: Arc<T>) -> u64 {
    let mut t = table();
    t.next += 1;
    let h = t.next;
    t.objects.insert(h, obj.wrap());
    h
}

/// Adds a dispatchable object; returns its handle (a pointer the loader writes into).
pub fn insert_dispatchable<T: Kind>(obj: Arc<T>) -> usize {
    let slot = Box::into_raw(Box::new(LoaderSlot {
        loader_data: ICD_LOADER_MAGIC,
    })) as usize;
    table().dispatchable.insert(slot, obj.wrap());
    slot
}

/// The object of kind `T` behind a non-dispatchable handle.
pub fn get<T: Kind>(handle: u64) -> Result<Arc<T>, Fail> {
    let t = table();
    match t.objects.get(&handle) {
        Some(o) => {
            T::of(o).ok_or_else(|| Fail::handle(T::NAME, handle, "names another kind of object"))
        }
        None if handle == 0 => Err(Fail::handle(T::NAME, handle, "is VK_NULL_HANDLE")),
        None => Err(Fail::handle(
            T::NAME,
            handle,
            "was destroyed or never created",
        )),
    }
}

/// The object of kind `T` behind a dispatchable handle.
pub fn get_dispatchable<T: Kind>(handle: usize) -> Result<Arc<T>, Fail> {
    let t = table();
    match t.dispatchable.get(&handle) {
        Some(o) => T::of(o)
            .ok_or_else(|| Fail::handle(T::NAME, handle as u64, "names another kind of object")),
        None if handle == 0 => Err(Fail::handle(T::NAME, 0, "is NULL")),
        None => Err(Fail::handle(
            T::NAME,
            handle as u64,
            "was destroyed or never created",
        )),
    }
}

/// Removes a non-dispatchable object of kind `T` (VK_NULL_HANDLE is a no-op, as the spec allows).
pub fn remove<T: Kind>(handle: u64) -> Result<Option<Arc<T>>, Fail> {
    if handle == 0 {
        return Ok(None);
    }
    let obj = get::<T>(handle)?;
    table().objects.remove(&handle);
    Ok(Some(obj))
}

/// Removes a dispatchable object of kind `T` and frees its loader slot.
pub fn remove_dispatchable<T: Kind>(handle: usize) -> Result<Option<Arc<T>>, Fail> {
    if handle == 0 {
        return Ok(None);
    }
    let obj = get_dispatchable::<T>(handle)?;
    if table().dispatchable.remove(&handle).is_some() {
        // SAFETY: `handle` came from `Box::into_raw` in `insert_dispatchable` and was in the
        // table until the line above, so this is the one place that frees it.
        drop(unsafe { Box::from_raw(handle as *mut LoaderSlot) });
    }
    Ok(Some(obj))
}

/// Objects in the table (for the leak test).
pub fn live_objects() -> usize {
    let t = table();
    t.objects.len() + t.dispatchable.len()
}
