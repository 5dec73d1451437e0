//! Fuzz target: every `coopmat lower` rewrite on arbitrary bytes (seeded with the corpus's
//! cooperative-matrix modules and the repository's test shaders). A rewrite must never panic:
//! it refuses with a reason or returns a module, which must serialize and parse back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(module) = coopmat_spirv::Module::from_bytes(data) else {
        return;
    };
    let check = |m: &coopmat_spirv::Module| {
        let words = m.to_words();
        coopmat_spirv::Module::from_words(&words).expect("a rewritten module parses back");
    };
    let mut m = module.clone();
    if coopmat_lower::strip_decode_vector(&mut m).is_ok() {
        check(&m);
    }
    let mut m = module.clone();
    if coopmat_lower::nv_to_khr(&mut m).is_ok() {
        check(&m);
    }
    let mut m = module.clone();
    if coopmat_lower::qcom_to_khr(&mut m).is_ok() {
        check(&m);
    }
    let mut m = module;
    if coopmat_lower::coop2_to_khr(&mut m).is_ok() {
        check(&m);
    }
});
