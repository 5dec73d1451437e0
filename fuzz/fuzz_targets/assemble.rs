//! Fuzz target: assemble arbitrary text. The assembler must return words or an error that
//! points into the text, never panic; what it assembles must be a binary that the reader
//! accepts and writes back unchanged.
#![no_main]

use coopmat_spirv::asm::{self, AsmOptions};
use coopmat_spirv::binary;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the options, the rest is the text.
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let options = AsmOptions {
        preserve_numeric_ids: flags & 1 != 0,
        ..AsmOptions::default()
    };
    match asm::assemble(text, &options) {
        Err(e) => assert!(
            e.offset <= text.len(),
            "error offset {} beyond {} bytes",
            e.offset,
            text.len()
        ),
        Ok(words) => {
            let parsed = match binary::parse_words(&words) {
                Ok(p) => p,
                // With numeric ids preserved, `%0` becomes id 0 (spirv-as does the same); the
                // reader rejects that, as spirv-dis does.
                Err(e) if options.preserve_numeric_ids && e.message.ends_with("is id 0") => return,
                // `!<number>` emits a raw word (as in spirv-as): any binary can be written.
                Err(_) if text.contains('!') => return,
                Err(e) => panic!("assembled binary does not parse: {e}"),
            };
            assert_eq!(
                binary::write_words(&parsed.header, &parsed.instructions),
                words
            );
        }
    }
});
