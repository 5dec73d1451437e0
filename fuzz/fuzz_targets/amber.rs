//! Fuzz target: AmberScript text (seeded with the compute scripts of ../shared/amber). The parser
//! must never panic or recurse without bound (10 000 nested REPEATs, unterminated blocks); bad
//! scripts only give a located error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = coopmat_amber::parse::parse(text) {
        // The line named must exist (1-based; one past the end for "unexpected end of script").
        assert!(e.line <= text.lines().count() + 1, "line {} of {}", e.line, text.lines().count());
    }
});
