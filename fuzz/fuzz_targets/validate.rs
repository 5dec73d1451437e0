//! Fuzz target: validate arbitrary bytes (seeded with real modules, so libFuzzer's mutations
//! produce mostly well-formed but subtly broken SPIR-V). The validator must never panic, under
//! a plain environment and with a device profile; invalid input only yields diagnostics.
#![no_main]

use coopmat_val::{Profile, TargetEnv, ValidateOptions, validate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(module) = coopmat_spirv::Module::from_bytes(data) else {
        return;
    };
    let plain = ValidateOptions { target_env: TargetEnv::Vulkan(3), profile: None };
    let _ = validate(&module, &plain);
    let h100 = ValidateOptions {
        target_env: TargetEnv::Spv(6),
        profile: Profile::builtin("nvidia-h100-580"),
    };
    let _ = validate(&module, &h100);
});
