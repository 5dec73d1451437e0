//! Fuzz target: parse arbitrary bytes as SPIR-V; whatever parses must write back to the same
//! words and reparse to the same instructions.
#![no_main]

use coopmat_spirv::binary::{self, ParseError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let words_in = data.len() / 4;
    let parsed = match binary::parse_bytes(data) {
        Ok(p) => p,
        Err(ParseError { offset, .. }) => {
            assert!(
                offset <= words_in,
                "error offset {offset} beyond {words_in} words"
            );
            return;
        }
    };
    let (words, _) = binary::words_from_bytes(data).expect("parsed input converts to words");
    let written = binary::write_words(&parsed.header, &parsed.instructions);
    assert_eq!(written, words, "write(parse(x)) != x");
    let again = binary::parse_words(&written).expect("written module reparses");
    assert_eq!(again.instructions, parsed.instructions);
    assert_eq!(again.diagnostics, parsed.diagnostics);
});
