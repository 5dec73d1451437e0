//! Links the driver library with `-z nodelete`: the Vulkan loader unloads a driver when its last
//! instance is destroyed, but the engine's worker threads (kept between dispatches) stay parked in
//! this library's code; unmapping it under them is undefined behaviour.

fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    }
}
