//! `COOPMAT_ICD_PROFILE=1`: time spent per pipeline, printed to stderr when the device is
//! destroyed or the process exits, so that an application's slow shaders can be found (and, with
//! `COOPMAT_ICD_PROFILE_DIR=DIR`, their modules written as `DIR/<hash>.spv` for `coopmat dis`).

use std::collections::HashMap;
use std::hash::Hasher;
use std::sync::{LazyLock, Mutex, OnceLock};
use std::time::Duration;

/// Whether profiling is on (read once).
pub(crate) fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("COOPMAT_ICD_PROFILE").is_ok_and(|v| !v.is_empty() && v != "0")
    })
}

/// A pipeline's name in the report: the module's hash, size and entry point, local size and
/// specialization constants (one module is many pipelines in ggml). The module is written to
/// `COOPMAT_ICD_PROFILE_DIR` when that is set.
pub(crate) fn label(
    module: &coopmat_spirv::Module,
    entry: &str,
    local_size: [u32; 3],
    spec: &coopmat_exec::SpecConstants,
) -> String {
    let words = module.to_words();
    let mut h = rustc_hash::FxHasher::default();
    for w in &words {
        h.write_u32(*w);
    }
    let hash = h.finish();
    if let Ok(dir) = std::env::var("COOPMAT_ICD_PROFILE_DIR") {
        let path = std::path::Path::new(&dir).join(format!("{hash:016x}.spv"));
        let bytes =
            coopmat_spirv::binary::bytes_from_words(&words, coopmat_spirv::binary::Endian::Little);
        if let Err(e) = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, bytes)) {
            eprintln!("coopmat-icd: profile: cannot write {}: {e}", path.display());
        }
    }
    let mut spec: Vec<_> = spec.iter().collect();
    spec.sort();
    let spec: Vec<String> = spec.iter().map(|(id, v)| format!("{id}={v}")).collect();
    format!(
        "{hash:016x} ({} words) '{entry}' local {:?} spec [{}]",
        words.len(),
        local_size,
        spec.join(",")
    )
}

#[derive(Default, Clone)]
struct Entry {
    dispatches: u64,
    workgroups: u64,
    lane_instructions: u64,
    time: Duration,
}

static TABLE: LazyLock<Mutex<HashMap<String, Entry>>> = LazyLock::new(Default::default);

unsafe extern "C" {
    /// C's atexit (the C library every Vulkan application links).
    fn atexit(f: extern "C" fn()) -> std::ffi::c_int;
}

extern "C" fn report_at_exit() {
    report();
}

/// Adds one dispatch of pipeline `label`.
pub(crate) fn record(label: &str, stats: &coopmat_exec::DispatchStats) {
    // Applications often exit without destroying the device: report at exit too.
    static AT_EXIT: std::sync::Once = std::sync::Once::new();
    // SAFETY: registering a function without arguments that only locks a mutex and prints;
    // atexit has no other precondition.
    AT_EXIT.call_once(|| unsafe {
        atexit(report_at_exit);
    });
    let mut t = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let e = t.entry(label.to_string()).or_default();
    e.dispatches += 1;
    e.workgroups += stats.workgroups;
    e.lane_instructions += stats.lane_instructions;
    e.time += stats.elapsed;
    // A long-running application (a server, a benchmark loop) also gets the table so far.
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let every = every();
    if every > 0
        && (COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1).is_multiple_of(every)
    {
        let rows: Vec<(String, Entry)> = t.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        drop(t);
        print_table(rows);
    }
}

/// `COOPMAT_ICD_PROFILE_EVERY=N`: the table so far after every N dispatches (0: only at the
/// end).
fn every() -> u64 {
    static N: OnceLock<u64> = OnceLock::new();
    *N.get_or_init(|| {
        std::env::var("COOPMAT_ICD_PROFILE_EVERY")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    })
}

/// Prints the table (largest time first) and clears it.
pub(crate) fn report() {
    let rows: Vec<(String, Entry)> = TABLE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .drain()
        .collect();
    print_table(rows);
}

fn print_table(mut rows: Vec<(String, Entry)>) {
    if rows.is_empty() {
        return;
    }
    let total: Duration = rows.iter().map(|e| e.1.time).sum();
    rows.sort_by_key(|r| std::cmp::Reverse(r.1.time));
    eprintln!(
        "coopmat-icd profile: {:.3} s in {} pipelines",
        total.as_secs_f64(),
        rows.len()
    );
    eprintln!("  share     time s  dispatches  workgroups  lane-instr  pipeline");
    for (label, e) in rows {
        eprintln!(
            "  {:5.1} %  {:8.3}  {:10}  {:10}  {:10.3e}  {label}",
            100.0 * e.time.as_secs_f64() / total.as_secs_f64().max(1e-12),
            e.time.as_secs_f64(),
            e.dispatches,
            e.workgroups,
            e.lane_instructions as f64
        );
    }
}
