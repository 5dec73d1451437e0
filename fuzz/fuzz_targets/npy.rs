//! Fuzz target: `.npy` files (seeded with small valid arrays of every dtype and both orders).
//! `coopmat::npy::to_c_order` must never panic, hang on a nested header, or return data whose
//! length differs from what the header declares.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(out) = coopmat::npy::to_c_order(data) {
        // Accepted data is exactly the file's payload, reordered: never longer than the input.
        assert!(out.len() <= data.len());
    }
});
