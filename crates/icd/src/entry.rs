//! Errors, panic safety, and the table of entry points the loader asks for by name.
//!
//! Every entry point runs its body inside [`guard`]: an error is reported (stderr and the
//! instance's debug messengers) and becomes the function's `VkResult`; a panic is caught
//! before it can unwind into the application (which would abort it) and becomes
//! `VK_ERROR_UNKNOWN`.

use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use vulkanalia_sys as vk;

/// Why an entry point failed: the `VkResult` it returns and a message for the developer.
#[derive(Debug)]
pub struct Fail {
    /// The result code returned to the application.
    pub result: vk::Result,
    /// What went wrong, naming the object or argument.
    pub message: String,
}

impl Fail {
    /// A failure with `result`.
    pub fn new(result: vk::Result, message: impl Into<String>) -> Fail {
        Fail {
            result,
            message: message.into(),
        }
    }

    /// A misused handle (VK_ERROR_UNKNOWN: the spec leaves invalid usage undefined; we refuse).
    pub fn handle(kind: &str, handle: u64, what: &str) -> Fail {
        Fail::new(
            vk::Result::ERROR_UNKNOWN,
            format!("{kind} {handle:#x} {what}"),
        )
    }

    /// Invalid usage of the API: the named argument is wrong.
    pub fn usage(message: impl Into<String>) -> Fail {
        Fail::new(vk::Result::ERROR_UNKNOWN, message)
    }
}

/// A registered VK_EXT_debug_utils messenger.
pub struct Messenger {
    pub(crate) handle: u64,
    pub(crate) severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    pub(crate) callback: vk::PFN_vkDebugUtilsMessengerCallbackEXT,
    pub(crate) user_data: usize,
}

/// Messengers of every instance (the driver has one physical device; messages are not tied to
/// an instance).
pub static MESSENGERS: Mutex<Vec<Messenger>> = Mutex::new(Vec::new());

/// Reports an error: to stderr (unless `COOPMAT_ICD_QUIET` is set) and to every debug
/// messenger that accepts errors.
pub fn report(function: &str, message: &str) {
    let text = format!("coopmat-icd: {function}: {message}");
    if std::env::var_os("COOPMAT_ICD_QUIET").is_none() {
        eprintln!("{text}");
    }
    let Ok(c) = CString::new(text.replace('\0', " ")) else {
        return;
    };
    let id = CString::new(function).unwrap_or_default();
    let data = vk::DebugUtilsMessengerCallbackDataEXT {
        message_id_name: id.as_ptr(),
        message: c.as_ptr(),
        ..Default::default()
    };
    let list = MESSENGERS.lock().unwrap_or_else(|e| e.into_inner());
    for m in list.iter() {
        if m.severity
            .contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
            && let Some(cb) = m.callback
        {
            // SAFETY: the application registered `cb` with vkCreateDebugUtilsMessengerEXT for
            // exactly this call shape; `data` and its strings live until it returns.
            unsafe {
                cb(
                    vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
                    vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION,
                    &data,
                    m.user_data as *mut _,
                )
            };
        }
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

/// Runs an entry point's body: errors are reported and returned as `VkResult`, panics caught.
pub fn guard(function: &str, body: impl FnOnce() -> Result<vk::Result, Fail>) -> vk::Result {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(r)) => r,
        Ok(Err(f)) => {
            report(function, &f.message);
            f.result
        }
        Err(p) => {
            report(function, &format!("internal error: {}", panic_text(&*p)));
            vk::Result::ERROR_UNKNOWN
        }
    }
}

/// [`guard`] for entry points that return a value: `fallback` on error or panic.
pub fn guard_value<R>(function: &str, fallback: R, body: impl FnOnce() -> Result<R, Fail>) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(r)) => r,
        Ok(Err(f)) => {
            report(function, &f.message);
            fallback
        }
        Err(p) => {
            report(function, &format!("internal error: {}", panic_text(&*p)));
            fallback
        }
    }
}

/// [`guard`] for entry points that return nothing.
pub fn guard_void(function: &str, body: impl FnOnce() -> Result<(), Fail>) {
    guard_value(function, (), body)
}

/// `ptr` as a reference, or an error naming `what` when it is NULL.
///
/// # Safety
/// `ptr` must be NULL or point at a valid `T` for the returned lifetime (the Vulkan calling
/// contract for a non-optional input pointer).
pub unsafe fn arg<'a, T>(ptr: *const T, what: &str) -> Result<&'a T, Fail> {
    // SAFETY: the caller's contract.
    unsafe { ptr.as_ref() }.ok_or_else(|| Fail::usage(format!("{what} is NULL")))
}

/// `ptr` as a mutable reference (an output parameter), or an error naming `what` when NULL.
///
/// # Safety
/// `ptr` must be NULL or point at a writable `T` for the returned lifetime.
pub unsafe fn out_ptr<'a, T>(ptr: *mut T, what: &str) -> Result<&'a mut T, Fail> {
    // SAFETY: the caller's contract.
    unsafe { ptr.as_mut() }.ok_or_else(|| Fail::usage(format!("{what} is NULL")))
}

/// `len` elements at `ptr` (empty for a count of 0), or an error when `ptr` is NULL with a
/// nonzero count.
///
/// # Safety
/// When `len > 0`, `ptr` must point at `len` valid elements (the Vulkan calling contract).
pub unsafe fn slice<'a, T>(ptr: *const T, len: u32, what: &str) -> Result<&'a [T], Fail> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Fail::usage(format!("{what} is NULL with a count of {len}")));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len as usize) })
}

/// Writes a list through Vulkan's two-call idiom (count query, then fill): `VK_INCOMPLETE`
/// when the application's array is shorter than the list.
///
/// # Safety
/// `count` must be valid; `out`, when not NULL, must have room for `*count` elements.
pub unsafe fn write_list<T: Copy>(
    items: &[T],
    count: *mut u32,
    out: *mut T,
) -> Result<vk::Result, Fail> {
    // SAFETY: the caller's contract; plain copies.
    unsafe { write_each(items, count, out, |dst, it| dst.write(*it)) }
}

/// [`write_list`] with `put` writing each element (e.g. keeping the application's sType and
/// pNext).
///
/// # Safety
/// As [`write_list`]; `put` receives a pointer to a valid element slot.
pub unsafe fn write_each<T>(
    items: &[T],
    count: *mut u32,
    out: *mut T,
    put: impl Fn(*mut T, &T),
) -> Result<vk::Result, Fail> {
    // SAFETY: the caller's contract.
    let count = unsafe { out_ptr(count, "the count pointer") }?;
    if out.is_null() {
        *count = items.len() as u32;
        return Ok(vk::Result::SUCCESS);
    }
    let n = (*count as usize).min(items.len());
    for (i, it) in items.iter().take(n).enumerate() {
        // SAFETY: `i < *count`, the room the application declared.
        put(unsafe { out.add(i) }, it);
    }
    *count = n as u32;
    Ok(if n < items.len() {
        vk::Result::INCOMPLETE
    } else {
        vk::Result::SUCCESS
    })
}

/// A NUL-terminated name as bytes without the NUL (empty for NULL).
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string.
pub unsafe fn name_bytes<'a>(name: *const c_char) -> &'a [u8] {
    if name.is_null() {
        return b"";
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(name) }.to_bytes()
}
