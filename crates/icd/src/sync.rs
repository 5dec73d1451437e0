//! Queue submission, command execution and synchronization objects.
//!
//! A submit runs its command buffers at once, on the calling thread (the engine spreads each
//! dispatch's workgroups over its own worker threads), then signals its semaphores and fence.
//! So a thread that waits (vkWaitForFences, or ggml-vulkan spinning on vkGetFenceStatus) never
//! competes with queued work for a core: by the time vkQueueSubmit returns, the work is done.
//! Waits that depend on another thread (a timeline value signalled from the host later) block
//! on one condition variable that every signal notifies.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex};
use std::time::{Duration, Instant};

use coopmat_exec::{BoundResources, BufferView};
use vulkanalia_sys::{self as vk, Handle};

use crate::commands::{BoundSet, Cmd, CommandBuffer};
use crate::device::{Buffer, Device, Memory, Queue};
use crate::entry::{Fail, arg, guard, guard_void, out_ptr, slice};
use crate::objects;
use crate::pipeline::ComputePipeline;

/// A VkFence.
pub struct Fence {
    signaled: AtomicBool,
}

/// A VkSemaphore: binary (0/1) or timeline.
pub struct Semaphore {
    timeline: bool,
    value: AtomicU64,
}

/// A VkEvent.
pub struct Event {
    set: AtomicBool,
}

/// A VkQueryPool of timestamps.
pub struct QueryPool {
    results: Mutex<Vec<Option<u64>>>,
}

/// A VkDebugUtilsMessengerEXT (its callback lives in `entry::MESSENGERS`).
pub struct DebugMessenger;

/// Notified whenever a fence, semaphore or event changes.
static SIGNAL: LazyLock<(Mutex<()>, Condvar)> = LazyLock::new(|| (Mutex::new(()), Condvar::new()));
/// The clock timestamps count from (nanoseconds; timestampPeriod is 1).
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);
/// How long a submit waits for a semaphore that another thread has still to signal.
const SUBMIT_WAIT: Duration = Duration::from_secs(60);

fn notify() {
    let _g = SIGNAL.0.lock().unwrap_or_else(|e| e.into_inner());
    SIGNAL.1.notify_all();
}

/// Waits until `ready()` or the deadline; true when ready.
fn wait_until(deadline: Option<Instant>, ready: impl Fn() -> bool) -> bool {
    let mut g = SIGNAL.0.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if ready() {
            return true;
        }
        let left = match deadline {
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(l) if !l.is_zero() => l,
                _ => return false,
            },
            None => Duration::from_secs(1),
        };
        g = SIGNAL
            .1
            .wait_timeout(g, left)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

fn deadline(timeout_ns: u64) -> Option<Instant> {
    Instant::now().checked_add(Duration::from_nanos(timeout_ns))
}

fn device(h: vk::Device) -> Result<Arc<Device>, Fail> {
    objects::get_dispatchable::<Device>(h.as_raw())
}

fn lost(message: String) -> Fail {
    Fail::new(vk::Result::ERROR_DEVICE_LOST, message)
}

// ---------------------------------------------------------------------------------------------
// Execution.

/// What the commands of one submit have bound so far.
struct State {
    pipeline: Option<Arc<ComputePipeline>>,
    sets: Vec<Option<Arc<BoundSet>>>,
    push: [u8; 256],
}

/// A buffer range resolved for a dispatch: the memory (kept alive), word offset, bytes.
type Resolved = (Arc<Memory>, u64, u64);

fn resolve_slot(slot: &crate::pipeline::BufferSlot, what: &str) -> Result<Resolved, Fail> {
    let buffer =
        objects::get::<Buffer>(slot.buffer).map_err(|f| lost(format!("{what}: {}", f.message)))?;
    let range = if slot.range == vk::WHOLE_SIZE {
        buffer.size.saturating_sub(slot.offset)
    } else {
        slot.range
    };
    let (mem, off) = buffer.range(slot.offset, range, what)?;
    if !off.is_multiple_of(4) {
        return Err(lost(format!(
            "{what}: offset {} is not a multiple of 4 (minStorageBufferOffsetAlignment is 16)",
            slot.offset
        )));
    }
    Ok((mem, off, range))
}

fn view((m, off, bytes): &Resolved) -> Result<BufferView<'_>, Fail> {
    Ok(BufferView {
        words: m.words(*off, *bytes)?,
        bytes: *bytes,
    })
}

fn dispatch(st: &State, base: [u32; 3], groups: [u32; 3]) -> Result<(), Fail> {
    let p = st
        .pipeline
        .as_ref()
        .ok_or_else(|| lost("vkCmdDispatch with no compute pipeline bound".into()))?;
    if groups.contains(&0) {
        return Ok(());
    }
    // Resolve every binding the entry point uses (keeping the memory alive), then lend the
    // engine views of it.
    let mut singles: Vec<((u32, u32), Resolved)> = Vec::new();
    let mut arrays: Vec<((u32, u32), Vec<Resolved>)> = Vec::new();
    for b in p.engine.bindings() {
        let what = format!("descriptor (set {}, binding {})", b.set, b.binding);
        let set = st
            .sets
            .get(b.set as usize)
            .and_then(|s| s.as_ref())
            .ok_or_else(|| {
                lost(format!(
                    "{what}: no descriptor set is bound at set {}",
                    b.set
                ))
            })?;
        if b.count == 1 {
            let slot = set
                .get(&(b.binding, 0))
                .ok_or_else(|| lost(format!("{what} was never written")))?;
            singles.push(((b.set, b.binding), resolve_slot(slot, &what)?));
        } else {
            // A fixed-size array needs every element; a runtime array the written prefix.
            let n = if b.count == 0 {
                (0..)
                    .take_while(|e| set.contains_key(&(b.binding, *e)))
                    .count() as u32
            } else {
                b.count
            };
            let mut elems = Vec::with_capacity(n as usize);
            for e in 0..n {
                let w = format!("{what}[{e}]");
                let slot = set
                    .get(&(b.binding, e))
                    .ok_or_else(|| lost(format!("{w} was never written")))?;
                elems.push(resolve_slot(slot, &w)?);
            }
            arrays.push(((b.set, b.binding), elems));
        }
    }
    let mut res = BoundResources {
        push_constants: &st.push,
        ..Default::default()
    };
    for (k, r) in &singles {
        res.buffers.insert(*k, view(r)?);
    }
    for (k, rs) in &arrays {
        res.buffer_arrays
            .insert(*k, rs.iter().map(view).collect::<Result<_, _>>()?);
    }
    // Every live allocation is reachable through its device address.
    let live = crate::device::live_memory();
    for (slot, m) in &live {
        res.addressable.insert(
            *slot,
            BufferView {
                words: m.words(0, m.capacity())?,
                bytes: m.size,
            },
        );
    }
    let stats = p.engine.dispatch_bound(&res, groups, base).map_err(|e| {
        lost(format!(
            "dispatch of a {:?} workgroup grid (local size {:?}): {e}",
            groups, p.local_size
        ))
    })?;
    if crate::profile::enabled() {
        crate::profile::record(&p.label, &stats);
    }
    if let Some(hash) = p.observed_module {
        crate::uniformity::record(hash, &p.engine);
    }
    Ok(())
}

/// Byte range of a buffer as a raw pointer, checked.
fn buffer_ptr(
    buffer: u64,
    offset: u64,
    len: u64,
    what: &str,
) -> Result<(Arc<Memory>, *mut u8), Fail> {
    let b = objects::get::<Buffer>(buffer).map_err(|f| lost(format!("{what}: {}", f.message)))?;
    let (m, off) = b.range(offset, len, what)?;
    let p = m.ptr(off)?;
    Ok((m, p))
}

fn run_command(st: &mut State, cmd: &Cmd) -> Result<(), Fail> {
    match cmd {
        Cmd::BindPipeline(h) => {
            st.pipeline = Some(objects::get::<ComputePipeline>(*h).map_err(|f| lost(f.message))?);
        }
        Cmd::BindSets { first, sets } => {
            for (i, s) in sets.iter().enumerate() {
                let n = *first as usize + i;
                if st.sets.len() <= n {
                    st.sets.resize(n + 1, None);
                }
                st.sets[n] = Some(s.clone());
            }
        }
        Cmd::Push { offset, bytes } => {
            st.push[*offset as usize..*offset as usize + bytes.len()].copy_from_slice(bytes);
        }
        Cmd::Dispatch { base, groups } => dispatch(st, *base, *groups)?,
        Cmd::DispatchIndirect { buffer, offset } => {
            let (m, p) = buffer_ptr(*buffer, *offset, 12, "vkCmdDispatchIndirect")?;
            let mut g = [0u32; 3];
            for (k, gk) in g.iter_mut().enumerate() {
                // SAFETY: 12 bytes at `p` were checked to lie inside the buffer; unaligned read.
                *gk = unsafe { (p.add(4 * k) as *const u32).read_unaligned() };
            }
            drop(m);
            dispatch(st, [0; 3], g)?;
        }
        Cmd::Copy { src, dst, regions } => {
            for &(so, d_off, n) in regions {
                let (_ms, ps) = buffer_ptr(*src, so, n, "vkCmdCopyBuffer source")?;
                let (_md, pd) = buffer_ptr(*dst, d_off, n, "vkCmdCopyBuffer destination")?;
                // SAFETY: both ranges were checked against their buffers and allocations, the
                // memory is kept alive by `_ms`/`_md`; `copy` allows overlap.
                unsafe { std::ptr::copy(ps, pd, n as usize) };
            }
        }
        Cmd::Fill {
            dst,
            offset,
            size,
            data,
        } => {
            let b = objects::get::<Buffer>(*dst).map_err(|f| lost(f.message))?;
            let n = if *size == vk::WHOLE_SIZE {
                b.size.saturating_sub(*offset) / 4 * 4
            } else {
                *size
            };
            let (_m, p) = buffer_ptr(*dst, *offset, n, "vkCmdFillBuffer")?;
            let bytes = data.to_le_bytes();
            for i in 0..n as usize {
                // SAFETY: `n` bytes at `p` were checked to lie inside the buffer.
                unsafe { p.add(i).write(bytes[i % 4]) };
            }
        }
        Cmd::Update { dst, offset, bytes } => {
            let (_m, p) = buffer_ptr(*dst, *offset, bytes.len() as u64, "vkCmdUpdateBuffer")?;
            // SAFETY: the range was checked; the source is our own vector.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        }
        Cmd::Event { event, set } => {
            let e = objects::get::<Event>(*event).map_err(|f| lost(f.message))?;
            e.set.store(*set, Ordering::SeqCst);
            notify();
        }
        Cmd::Timestamp { pool, query } => {
            let p = objects::get::<QueryPool>(*pool).map_err(|f| lost(f.message))?;
            let mut r = p.results.lock().unwrap_or_else(|e| e.into_inner());
            let slot = r
                .get_mut(*query as usize)
                .ok_or_else(|| lost(format!("query {query} is outside the pool")))?;
            *slot = Some(EPOCH.elapsed().as_nanos() as u64);
        }
        Cmd::ResetQueries { pool, first, count } => reset_queries(*pool, *first, *count)?,
    }
    Ok(())
}

fn reset_queries(pool: u64, first: u32, count: u32) -> Result<(), Fail> {
    let p = objects::get::<QueryPool>(pool)?;
    let mut r = p.results.lock().unwrap_or_else(|e| e.into_inner());
    let end = first as usize + count as usize;
    if end > r.len() {
        return Err(Fail::usage(format!(
            "queries {first}..{end} pass the pool's {}",
            r.len()
        )));
    }
    r[first as usize..end].fill(None);
    Ok(())
}

fn execute(cb: u64) -> Result<(), Fail> {
    let cb = objects::get_dispatchable::<CommandBuffer>(cb as usize)?;
    let commands = {
        let r = cb.recording.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = &r.error {
            return Err(lost(format!(
                "a command buffer with a recording error was submitted: {e}"
            )));
        }
        r.commands.clone()
    };
    let mut st = State {
        pipeline: None,
        sets: Vec::new(),
        push: [0; 256],
    };
    for c in &commands {
        run_command(&mut st, c)?;
    }
    Ok(())
}

/// One batch of a submit, in either synchronization version's terms.
struct Batch {
    waits: Vec<(u64, u64)>,
    command_buffers: Vec<u64>,
    signals: Vec<(u64, u64)>,
}

fn wait_semaphore(h: u64, value: u64) -> Result<(), Fail> {
    let s = objects::get::<Semaphore>(h)?;
    let need = if s.timeline { value } else { 1 };
    if !wait_until(Instant::now().checked_add(SUBMIT_WAIT), || {
        s.value.load(Ordering::SeqCst) >= need
    }) {
        return Err(lost(format!(
            "a submit waited {}s for VkSemaphore {h:#x} to reach {need}; nothing signalled it",
            SUBMIT_WAIT.as_secs()
        )));
    }
    if !s.timeline {
        s.value.store(0, Ordering::SeqCst);
    }
    Ok(())
}

fn signal_semaphore(h: u64, value: u64) -> Result<(), Fail> {
    let s = objects::get::<Semaphore>(h)?;
    s.value
        .store(if s.timeline { value } else { 1 }, Ordering::SeqCst);
    notify();
    Ok(())
}

fn submit(queue: vk::Queue, batches: Vec<Batch>, fence: vk::Fence) -> Result<vk::Result, Fail> {
    let q = objects::get_dispatchable::<Queue>(queue.as_raw())?;
    let fence = if fence.is_null() {
        None
    } else {
        Some(objects::get::<Fence>(fence.as_raw())?)
    };
    let _busy = q.busy.lock().unwrap_or_else(|e| e.into_inner());
    let mut outcome = Ok(vk::Result::SUCCESS);
    for b in &batches {
        let run = || -> Result<(), Fail> {
            for &(s, v) in &b.waits {
                wait_semaphore(s, v)?;
            }
            for &cb in &b.command_buffers {
                execute(cb)?;
            }
            Ok(())
        };
        if let Err(f) = run() {
            outcome = Err(f);
            break;
        }
        for &(s, v) in &b.signals {
            signal_semaphore(s, v)?;
        }
    }
    // The fence is signalled even after a failure, so that a waiting application sees the
    // error from vkQueueSubmit rather than hanging.
    if let Some(f) = fence {
        f.signaled.store(true, Ordering::SeqCst);
        notify();
    }
    outcome
}

pub(crate) unsafe extern "system" fn queue_submit(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo,
    fence: vk::Fence,
) -> vk::Result {
    guard("vkQueueSubmit", || {
        // SAFETY: the application's array.
        let submits = unsafe { slice(submits, count, "pSubmits") }?;
        let mut batches = Vec::with_capacity(submits.len());
        for s in submits {
            let (mut wait_values, mut signal_values): (&[u64], &[u64]) = (&[], &[]);
            let mut next = s.next as *const vk::BaseInStructure;
            while !next.is_null() {
                // SAFETY: the application's pNext chain.
                unsafe {
                    if (*next).s_type == vk::StructureType::TIMELINE_SEMAPHORE_SUBMIT_INFO {
                        let t = &*(next as *const vk::TimelineSemaphoreSubmitInfo);
                        wait_values = slice(
                            t.wait_semaphore_values,
                            t.wait_semaphore_value_count,
                            "pWaitSemaphoreValues",
                        )?;
                        signal_values = slice(
                            t.signal_semaphore_values,
                            t.signal_semaphore_value_count,
                            "pSignalSemaphoreValues",
                        )?;
                    }
                    next = (*next).next;
                }
            }
            // SAFETY: the submit's arrays.
            let waits =
                unsafe { slice(s.wait_semaphores, s.wait_semaphore_count, "pWaitSemaphores") }?;
            // SAFETY: as above.
            let cbs =
                unsafe { slice(s.command_buffers, s.command_buffer_count, "pCommandBuffers") }?;
            // SAFETY: as above.
            let signals = unsafe {
                slice(
                    s.signal_semaphores,
                    s.signal_semaphore_count,
                    "pSignalSemaphores",
                )
            }?;
            batches.push(Batch {
                waits: waits
                    .iter()
                    .enumerate()
                    .map(|(i, w)| (w.as_raw(), wait_values.get(i).copied().unwrap_or(0)))
                    .collect(),
                command_buffers: cbs.iter().map(|c| c.as_raw() as u64).collect(),
                signals: signals
                    .iter()
                    .enumerate()
                    .map(|(i, w)| (w.as_raw(), signal_values.get(i).copied().unwrap_or(0)))
                    .collect(),
            });
        }
        submit(queue, batches, fence)
    })
}

pub(crate) unsafe extern "system" fn queue_submit2(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2,
    fence: vk::Fence,
) -> vk::Result {
    guard("vkQueueSubmit2", || {
        // SAFETY: the application's array.
        let submits = unsafe { slice(submits, count, "pSubmits") }?;
        let mut batches = Vec::with_capacity(submits.len());
        for s in submits {
            // SAFETY: the submit's arrays.
            let waits = unsafe {
                slice(
                    s.wait_semaphore_infos,
                    s.wait_semaphore_info_count,
                    "pWaitSemaphoreInfos",
                )
            }?;
            // SAFETY: as above.
            let cbs = unsafe {
                slice(
                    s.command_buffer_infos,
                    s.command_buffer_info_count,
                    "pCommandBufferInfos",
                )
            }?;
            // SAFETY: as above.
            let signals = unsafe {
                slice(
                    s.signal_semaphore_infos,
                    s.signal_semaphore_info_count,
                    "pSignalSemaphoreInfos",
                )
            }?;
            batches.push(Batch {
                waits: waits
                    .iter()
                    .map(|w| (w.semaphore.as_raw(), w.value))
                    .collect(),
                command_buffers: cbs
                    .iter()
                    .map(|c| c.command_buffer.as_raw() as u64)
                    .collect(),
                signals: signals
                    .iter()
                    .map(|w| (w.semaphore.as_raw(), w.value))
                    .collect(),
            });
        }
        submit(queue, batches, fence)
    })
}

pub(crate) unsafe extern "system" fn queue_wait_idle(queue: vk::Queue) -> vk::Result {
    guard("vkQueueWaitIdle", || {
        let q = objects::get_dispatchable::<Queue>(queue.as_raw())?;
        drop(q.busy.lock().unwrap_or_else(|e| e.into_inner()));
        Ok(vk::Result::SUCCESS)
    })
}

// ---------------------------------------------------------------------------------------------
// Fences.

pub(crate) unsafe extern "system" fn create_fence(
    dev: vk::Device,
    info: *const vk::FenceCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Fence,
) -> vk::Result {
    guard("vkCreateFence", || {
        device(dev)?;
        // SAFETY: the application's create info.
        let info = unsafe { arg(info, "pCreateInfo") }?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pFence") }?;
        *out = vk::Fence::from_raw(objects::insert(Fence {
            signaled: AtomicBool::new(info.flags.contains(vk::FenceCreateFlags::SIGNALED)),
        }));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_fence(
    dev: vk::Device,
    f: vk::Fence,
    _alloc: *const vk::AllocationCallbacks,
) {
    crate::device::destroy::<Fence>("vkDestroyFence", dev, f.as_raw())
}

pub(crate) unsafe extern "system" fn reset_fences(
    dev: vk::Device,
    count: u32,
    fences: *const vk::Fence,
) -> vk::Result {
    guard("vkResetFences", || {
        device(dev)?;
        // SAFETY: the application's array.
        for f in unsafe { slice(fences, count, "pFences") }? {
            objects::get::<Fence>(f.as_raw())?
                .signaled
                .store(false, Ordering::SeqCst);
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn get_fence_status(dev: vk::Device, f: vk::Fence) -> vk::Result {
    guard("vkGetFenceStatus", || {
        device(dev)?;
        Ok(
            if objects::get::<Fence>(f.as_raw())?
                .signaled
                .load(Ordering::SeqCst)
            {
                vk::Result::SUCCESS
            } else {
                vk::Result::NOT_READY
            },
        )
    })
}

pub(crate) unsafe extern "system" fn wait_for_fences(
    dev: vk::Device,
    count: u32,
    fences: *const vk::Fence,
    wait_all: vk::Bool32,
    timeout: u64,
) -> vk::Result {
    guard("vkWaitForFences", || {
        device(dev)?;
        // SAFETY: the application's array.
        let fences = unsafe { slice(fences, count, "pFences") }?
            .iter()
            .map(|f| objects::get::<Fence>(f.as_raw()))
            .collect::<Result<Vec<_>, _>>()?;
        let ready = || {
            let mut it = fences.iter().map(|f| f.signaled.load(Ordering::SeqCst));
            if wait_all != 0 {
                it.all(|s| s)
            } else {
                it.any(|s| s)
            }
        };
        Ok(if wait_until(deadline(timeout), ready) {
            vk::Result::SUCCESS
        } else {
            vk::Result::TIMEOUT
        })
    })
}

// ---------------------------------------------------------------------------------------------
// Semaphores.

pub(crate) unsafe extern "system" fn create_semaphore(
    dev: vk::Device,
    info: *const vk::SemaphoreCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Semaphore,
) -> vk::Result {
    guard("vkCreateSemaphore", || {
        device(dev)?;
        // SAFETY: the application's create info.
        let info = unsafe { arg(info, "pCreateInfo") }?;
        let (mut timeline, mut initial) = (false, 0);
        let mut next = info.next as *const vk::BaseInStructure;
        while !next.is_null() {
            // SAFETY: the application's pNext chain.
            unsafe {
                if (*next).s_type == vk::StructureType::SEMAPHORE_TYPE_CREATE_INFO {
                    let t = &*(next as *const vk::SemaphoreTypeCreateInfo);
                    timeline = t.semaphore_type == vk::SemaphoreType::TIMELINE;
                    initial = if timeline { t.initial_value } else { 0 };
                }
                next = (*next).next;
            }
        }
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pSemaphore") }?;
        *out = vk::Semaphore::from_raw(objects::insert(Semaphore {
            timeline,
            value: AtomicU64::new(initial),
        }));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_semaphore(
    dev: vk::Device,
    s: vk::Semaphore,
    _alloc: *const vk::AllocationCallbacks,
) {
    crate::device::destroy::<Semaphore>("vkDestroySemaphore", dev, s.as_raw())
}

pub(crate) unsafe extern "system" fn get_semaphore_counter_value(
    dev: vk::Device,
    s: vk::Semaphore,
    out: *mut u64,
) -> vk::Result {
    guard("vkGetSemaphoreCounterValue", || {
        device(dev)?;
        let s = objects::get::<Semaphore>(s.as_raw())?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pValue") }?;
        *out = s.value.load(Ordering::SeqCst);
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn wait_semaphores(
    dev: vk::Device,
    info: *const vk::SemaphoreWaitInfo,
    timeout: u64,
) -> vk::Result {
    guard("vkWaitSemaphores", || {
        device(dev)?;
        // SAFETY: the application's info and its arrays.
        let info = unsafe { arg(info, "pWaitInfo") }?;
        // SAFETY: as above.
        let sems = unsafe { slice(info.semaphores, info.semaphore_count, "pSemaphores") }?;
        // SAFETY: as above.
        let values = unsafe { slice(info.values, info.semaphore_count, "pValues") }?;
        let sems = sems
            .iter()
            .map(|s| objects::get::<Semaphore>(s.as_raw()))
            .collect::<Result<Vec<_>, _>>()?;
        let any = info.flags.contains(vk::SemaphoreWaitFlags::ANY);
        let ready = || {
            let mut it = sems
                .iter()
                .zip(values)
                .map(|(s, v)| s.value.load(Ordering::SeqCst) >= *v);
            if any { it.any(|b| b) } else { it.all(|b| b) }
        };
        Ok(if wait_until(deadline(timeout), ready) {
            vk::Result::SUCCESS
        } else {
            vk::Result::TIMEOUT
        })
    })
}

pub(crate) unsafe extern "system" fn signal_semaphore_host(
    dev: vk::Device,
    info: *const vk::SemaphoreSignalInfo,
) -> vk::Result {
    guard("vkSignalSemaphore", || {
        device(dev)?;
        // SAFETY: the application's info.
        let info = unsafe { arg(info, "pSignalInfo") }?;
        signal_semaphore(info.semaphore.as_raw(), info.value)?;
        Ok(vk::Result::SUCCESS)
    })
}

// ---------------------------------------------------------------------------------------------
// Events.

pub(crate) unsafe extern "system" fn create_event(
    dev: vk::Device,
    _info: *const vk::EventCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Event,
) -> vk::Result {
    guard("vkCreateEvent", || {
        device(dev)?;
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pEvent") }?;
        *out = vk::Event::from_raw(objects::insert(Event {
            set: AtomicBool::new(false),
        }));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_event(
    dev: vk::Device,
    e: vk::Event,
    _alloc: *const vk::AllocationCallbacks,
) {
    crate::device::destroy::<Event>("vkDestroyEvent", dev, e.as_raw())
}

pub(crate) unsafe extern "system" fn get_event_status(dev: vk::Device, e: vk::Event) -> vk::Result {
    guard("vkGetEventStatus", || {
        device(dev)?;
        Ok(
            if objects::get::<Event>(e.as_raw())?
                .set
                .load(Ordering::SeqCst)
            {
                vk::Result::EVENT_SET
            } else {
                vk::Result::EVENT_RESET
            },
        )
    })
}

fn host_event(dev: vk::Device, e: vk::Event, set: bool) -> Result<vk::Result, Fail> {
    device(dev)?;
    objects::get::<Event>(e.as_raw())?
        .set
        .store(set, Ordering::SeqCst);
    notify();
    Ok(vk::Result::SUCCESS)
}

pub(crate) unsafe extern "system" fn set_event(dev: vk::Device, e: vk::Event) -> vk::Result {
    guard("vkSetEvent", || host_event(dev, e, true))
}

pub(crate) unsafe extern "system" fn reset_event(dev: vk::Device, e: vk::Event) -> vk::Result {
    guard("vkResetEvent", || host_event(dev, e, false))
}

// ---------------------------------------------------------------------------------------------
// Queries.

pub(crate) unsafe extern "system" fn create_query_pool(
    dev: vk::Device,
    info: *const vk::QueryPoolCreateInfo,
    _alloc: *const vk::AllocationCallbacks,
    out: *mut vk::QueryPool,
) -> vk::Result {
    guard("vkCreateQueryPool", || {
        device(dev)?;
        // SAFETY: the application's create info.
        let info = unsafe { arg(info, "pCreateInfo") }?;
        if info.query_type != vk::QueryType::TIMESTAMP {
            return Err(Fail::new(
                vk::Result::ERROR_FEATURE_NOT_PRESENT,
                format!(
                    "query type {:?}: only timestamp queries exist",
                    info.query_type
                ),
            ));
        }
        if info.query_count > 1 << 20 {
            return Err(Fail::new(
                vk::Result::ERROR_OUT_OF_HOST_MEMORY,
                format!(
                    "{} queries are more than the driver keeps (2^20)",
                    info.query_count
                ),
            ));
        }
        // SAFETY: output pointer from the application.
        let out = unsafe { out_ptr(out, "pQueryPool") }?;
        *out = vk::QueryPool::from_raw(objects::insert(QueryPool {
            results: Mutex::new(vec![None; info.query_count as usize]),
        }));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_query_pool(
    dev: vk::Device,
    p: vk::QueryPool,
    _alloc: *const vk::AllocationCallbacks,
) {
    crate::device::destroy::<QueryPool>("vkDestroyQueryPool", dev, p.as_raw())
}

pub(crate) unsafe extern "system" fn reset_query_pool(
    dev: vk::Device,
    p: vk::QueryPool,
    first: u32,
    count: u32,
) {
    guard_void("vkResetQueryPool", || {
        device(dev)?;
        reset_queries(p.as_raw(), first, count)
    })
}

pub(crate) unsafe extern "system" fn get_query_pool_results(
    dev: vk::Device,
    p: vk::QueryPool,
    first: u32,
    count: u32,
    size: usize,
    data: *mut std::ffi::c_void,
    stride: vk::DeviceSize,
    flags: vk::QueryResultFlags,
) -> vk::Result {
    guard("vkGetQueryPoolResults", || {
        device(dev)?;
        let pool = objects::get::<QueryPool>(p.as_raw())?;
        let r = pool.results.lock().unwrap_or_else(|e| e.into_inner());
        let wide = flags.contains(vk::QueryResultFlags::_64);
        let avail = flags.contains(vk::QueryResultFlags::WITH_AVAILABILITY);
        let width = if wide { 8 } else { 4 };
        let per = width * (1 + avail as u64);
        let end = first as usize + count as usize;
        if end > r.len() {
            return Err(Fail::usage(format!(
                "queries {first}..{end} pass the pool's {}",
                r.len()
            )));
        }
        if count > 0 && (stride < per || (count as u64 - 1) * stride + per > size as u64) {
            return Err(Fail::usage(format!(
                "{count} results of {per} bytes at stride {stride} do not fit in {size} bytes"
            )));
        }
        let mut all = true;
        for (i, q) in r[first as usize..end].iter().enumerate() {
            let at = i as u64 * stride;
            let put = |k: u64, v: u64| {
                // SAFETY: the record at `at` of `per` bytes lies inside `data`'s `size` bytes
                // (checked above); unaligned writes.
                unsafe {
                    let p = (data as *mut u8).add((at + k * width) as usize);
                    if wide {
                        (p as *mut u64).write_unaligned(v)
                    } else {
                        (p as *mut u32).write_unaligned(v as u32)
                    }
                }
            };
            match q {
                Some(t) => put(0, *t),
                None => {
                    all = false;
                    if flags.contains(vk::QueryResultFlags::PARTIAL) {
                        put(0, 0);
                    }
                }
            }
            if avail {
                put(1, q.is_some() as u64);
            }
        }
        Ok(if all {
            vk::Result::SUCCESS
        } else {
            vk::Result::NOT_READY
        })
    })
}
