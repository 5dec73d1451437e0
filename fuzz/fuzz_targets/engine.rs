//! Fuzz target: the engine on mutated modules (seeded with small corpus shaders and the repo's
//! cooperative-matrix tests). What coopmat-val accepts is compiled and dispatched on one
//! workgroup with zeroed buffers, under an instruction budget and a 256 MiB memory limit: the
//! engine must never panic, abort or hang, only return results or located errors.
#![no_main]

use coopmat_exec::{EngineOptions, Pipeline, Resources};
use coopmat_val::{Severity, TargetEnv, ValidateOptions, validate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(module) = coopmat_spirv::Module::from_bytes(data) else {
        return;
    };
    let opts = ValidateOptions { target_env: TargetEnv::Vulkan(3), profile: None };
    if validate(&module, &opts).iter().any(|d| d.severity == Severity::Error) {
        return;
    }
    let engine = EngineOptions {
        threads: 1,
        instruction_budget: 200_000,
        max_memory: 256 << 20,
        printf: false,
        ..Default::default()
    };
    let Ok(pipeline) = Pipeline::compile(&module, "", &Default::default(), &engine) else {
        return;
    };
    let mut resources = Resources::default();
    for b in pipeline.bindings() {
        if b.count == 1 {
            resources.buffers.insert((b.set, b.binding), vec![0; b.min_size.min(1 << 20) + 256]);
        }
    }
    resources.push_constants = vec![0; 256];
    let _ = pipeline.dispatch(&mut resources, [1, 1, 1]);
});
