//! binary -> `coopmat dis` -> `coopmat as` -> binary over the real-shader corpus, in process.
//!
//! With `--raw-id` text and preserved numeric ids the words must come back identical, except the
//! header's generator word: the assembler writes its own generator id (SPIRV-Tools Assembler,
//! tool 7), as spirv-as does. With friendly names the assembler renumbers ids in order of first
//! appearance (as spirv-as does), so that mode is checked one step later: the binary assembled
//! from friendly text must survive dis -> as unchanged.

use coopmat_spirv::asm::{self, AsmOptions};
use coopmat_spirv::binary;
use coopmat_spirv::dis::{self, Options};

fn dis_text(words: &[u32], raw_id: bool) -> String {
    let parsed = binary::parse_words(words).expect("parse");
    dis::disassemble(
        &parsed,
        &Options {
            raw_id,
            ..Options::default()
        },
    )
}

#[test]
fn corpus_round_trips_through_dis_and_as() {
    let mods = coopmat_testkit::corpus_or_notice("corpus_round_trips_through_dis_and_as");
    let (mut raw_same, mut friendly_same) = (0, 0);
    for (name, bytes) in &mods {
        let (words, _) = binary::words_from_bytes(bytes).unwrap();
        let raw = dis_text(&words, true);
        let opts = AsmOptions {
            preserve_numeric_ids: true,
            ..AsmOptions::default()
        };
        let back = asm::assemble(&raw, &opts).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(back.len(), words.len(), "{name}: length differs");
        assert_eq!(back[2], asm::GENERATOR, "{name}: generator word");
        let differing: Vec<usize> = (0..words.len())
            .filter(|&i| i != 2 && back[i] != words[i])
            .collect();
        assert!(
            differing.is_empty(),
            "{name}: raw-id round trip differs at words {:?}",
            &differing[..differing.len().min(8)]
        );
        raw_same += 1;

        let friendly = dis_text(&words, false);
        let renumbered = asm::assemble(&friendly, &AsmOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let again = asm::assemble(&dis_text(&renumbered, false), &AsmOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert!(
            again == renumbered,
            "{name}: friendly-name round trip is not a fixed point"
        );
        friendly_same += 1;
    }
    if !mods.is_empty() {
        eprintln!(
            "dis -> as: raw-id {raw_same}/{n} word-identical (generator word aside); friendly {friendly_same}/{n} fixed points",
            n = mods.len()
        );
    }
}
