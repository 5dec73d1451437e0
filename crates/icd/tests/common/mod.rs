//! What the tests that load the built driver through a Vulkan loader share.

use std::path::PathBuf;

/// target/<profile>, from this test binary's path (target/<profile>/deps/<test>-…).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// The built driver library, or None with a notice when it is absent. `cargo xtask test` builds
/// it; in CI a missing library is a broken setup, not a skip, and fails.
pub fn driver_library() -> Option<PathBuf> {
    let lib = profile_dir().join("libcoopmat_icd.so");
    if lib.exists() {
        return Some(lib);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} not built (cargo xtask test builds it)",
        lib.display()
    );
    eprintln!("notice: {} not built; skipping", lib.display());
    None
}
