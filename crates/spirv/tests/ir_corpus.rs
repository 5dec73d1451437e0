//! Every corpus module builds the IR, writes back word-identically, and its indexes agree with
//! the instruction list.

use coopmat_spirv::Module;
use coopmat_spirv::grammar::op;
use coopmat_spirv::module::Section;

#[test]
fn corpus_modules_round_trip_through_the_ir() {
    let mods = coopmat_testkit::corpus_or_notice("corpus_modules_round_trip_through_the_ir");
    let mut identical = 0;
    for (name, bytes) in &mods {
        let module = Module::from_bytes(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            module.to_bytes(module.endian),
            *bytes,
            "{name}: IR write-back differs"
        );
        // Every entry point names a defined function, and every function's blocks end in a terminator.
        for ep in module.entry_points() {
            let f = ep.word(1).unwrap();
            assert!(
                module.function(f).is_some(),
                "{name}: entry point %{f} is not a function"
            );
        }
        for f in module.functions() {
            for b in &f.blocks {
                let last = &module.instructions[b.body.end - 1];
                assert!(
                    coopmat_spirv::module::is_terminator(last.opcode),
                    "{name}: block %{} unterminated",
                    b.id
                );
                assert_eq!(module.instructions[b.label].opcode, op::Label);
            }
        }
        // Sections never go backwards in a valid module.
        let sections: Vec<Section> = (0..module.instructions.len())
            .map(|i| module.section(i))
            .collect();
        assert!(
            sections.windows(2).all(|w| w[0] <= w[1]),
            "{name}: sections out of order"
        );
        identical += 1;
    }
    if !mods.is_empty() {
        eprintln!("IR round trip: {identical}/{} word-identical", mods.len());
        assert_eq!(identical, mods.len());
    }
}
