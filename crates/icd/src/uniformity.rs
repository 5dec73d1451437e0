//! `COOPMAT_ICD_OBSERVE_UNIFORMITY=DIR`: every pipeline runs with the engine's uniformity
//! observation (per SSA value: did the active invocations of some subgroup ever hold different
//! values), and at exit each module's observations are written to `DIR` for the divergence
//! analysis's soundness check: `DIR/<hash>.spv` (the module) and `DIR/<hash>.<pid>.obs` (one line
//! per value: `id differs`, 0 or 1, merged over every pipeline and dispatch of this process).
//! `cargo run -p coopmat-icd --example uniformity-report -- DIR` merges processes and compares.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hasher;
use std::sync::{LazyLock, Mutex, OnceLock};

/// The directory, when observation is on (read once).
pub(crate) fn dir() -> Option<&'static str> {
    static DIR: OnceLock<Option<String>> = OnceLock::new();
    DIR.get_or_init(|| {
        std::env::var("COOPMAT_ICD_OBSERVE_UNIFORMITY")
            .ok()
            .filter(|d| !d.is_empty())
    })
    .as_deref()
}

/// A module's hash: the name of its files.
pub(crate) fn module_hash(module: &coopmat_spirv::Module) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    for w in module.to_words() {
        h.write_u32(w);
    }
    h.finish()
}

/// Observations by module hash, merged (a value differs if it differed anywhere).
static SEEN: LazyLock<Mutex<HashMap<u64, BTreeMap<u32, bool>>>> = LazyLock::new(Default::default);

unsafe extern "C" {
    /// C's atexit (the C library every Vulkan application links).
    fn atexit(f: extern "C" fn()) -> std::ffi::c_int;
}

extern "C" fn write_at_exit() {
    write();
}

/// Writes the module once, when its first pipeline is created.
pub(crate) fn register(module: &coopmat_spirv::Module, hash: u64) {
    static AT_EXIT: std::sync::Once = std::sync::Once::new();
    // SAFETY: registering a function without arguments that only locks a mutex and writes
    // files; atexit has no other precondition.
    AT_EXIT.call_once(|| unsafe {
        atexit(write_at_exit);
    });
    let Some(dir) = dir() else { return };
    let path = std::path::Path::new(dir).join(format!("{hash:016x}.spv"));
    if path.exists() {
        return;
    }
    let bytes = coopmat_spirv::binary::bytes_from_words(
        &module.to_words(),
        coopmat_spirv::binary::Endian::Little,
    );
    if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, bytes)) {
        eprintln!(
            "coopmat-icd: observe uniformity: cannot write {}: {e}",
            path.display()
        );
    }
}

/// When the observations were last written: they are also written every few seconds, since a
/// process stopped by a signal (a time limit) never reaches its exit handlers.
static LAST_WRITE: LazyLock<Mutex<std::time::Instant>> =
    LazyLock::new(|| Mutex::new(std::time::Instant::now()));

/// How often the observations are written while the process runs.
const WRITE_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Merges what a pipeline of module `hash` has observed so far.
pub(crate) fn record(hash: u64, engine: &coopmat_exec::Pipeline) {
    let observed = engine.observed_uniformity();
    {
        let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
        let m = seen.entry(hash).or_default();
        for (id, differs) in observed {
            *m.entry(id).or_insert(false) |= differs;
        }
    }
    let due = {
        let mut last = LAST_WRITE.lock().unwrap_or_else(|e| e.into_inner());
        let due = last.elapsed() >= WRITE_EVERY;
        if due {
            *last = std::time::Instant::now();
        }
        due
    };
    if due {
        write();
    }
}

/// Writes this process's observations (called at exit, when a device is destroyed and every few
/// seconds).
pub(crate) fn write() {
    let Some(dir) = dir() else { return };
    let seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    for (hash, values) in seen.iter() {
        let text: String = values
            .iter()
            .map(|(id, d)| format!("{id} {}\n", u8::from(*d)))
            .collect();
        let path = std::path::Path::new(dir).join(format!("{hash:016x}.{pid}.obs"));
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!(
                "coopmat-icd: observe uniformity: cannot write {}: {e}",
                path.display()
            );
        }
    }
}
