//! The engine against the suite's references: every case generated for the engine's profile
//! (the H100's property list) at subgroup size 32, and for lavapipe's (8x8 matrices) at 8; the
//! modules valid for spirv-val too; a wrong expectation caught.

use coopmat_conformance::{Target, Verdict, cases, run_engine};

fn target(name: &str) -> Target {
    let profile = coopmat_val::Profile::builtin(name).expect("a built-in profile");
    let mut t = Target::from_profile(&profile);
    // The engine has every NV2 function whatever the profile says.
    t.coop2_functions = true;
    t.tensor_addressing = true;
    t
}

#[test]
fn the_engine_agrees_with_the_references() {
    for name in ["coopmat-engine", "lavapipe-26"] {
        // The engine saturates for every integer tuple.
        let t = target(name).with_saturating_everywhere();
        let all = cases(&t);
        let mut problems = Vec::new();
        let mut ran = 0;
        for c in &all {
            match t.refuses(c) {
                None => {}
                Some(Ok(why)) => {
                    problems.push(format!("{}: not for its own profile: {why}", c.name));
                    continue;
                }
                Some(Err(why)) => {
                    problems.push(format!("{}: invalid module: {why}", c.name));
                    continue;
                }
            }
            ran += 1;
            match run_engine(c, t.subgroup_size) {
                Verdict::Pass => {}
                v => problems.push(format!("{}: {v:?}", c.name)),
            }
        }
        eprintln!("{name}: {ran} cases run, {} problems", problems.len());
        assert!(ran > 100, "{name}: {ran} cases");
        assert!(
            all.iter().any(|c| c.name.ends_with("/saturate")),
            "saturating cases"
        );
        assert!(problems.is_empty(), "{name}:\n{}", problems.join("\n"));
    }
}

#[test]
fn a_wrong_expectation_is_reported_with_its_coordinates() {
    let t = target("coopmat-engine");
    let mut c = cases(&t)
        .into_iter()
        .find(|c| {
            c.name
                .starts_with("muladd/16x16x16/float16xfloat16+float32")
        })
        .expect("a float32 multiply-add");
    // Element (1, 2) of a 16-column float32 output.
    let at = (16 + 2) * 4;
    c.outputs[0].expected[at + 3] ^= 0x40;
    let Verdict::Fail(why) = run_engine(&c, t.subgroup_size) else {
        panic!("a corrupted expectation must fail")
    };
    assert!(why.contains("1 element(s) differ; (1,2)"), "{why}");
}

#[test]
fn every_module_validates_with_spirv_val() {
    if coopmat_testkit::peer_tool("spirv-val").is_none() {
        eprintln!("notice: spirv-val not found; skipping");
        return;
    }
    for name in ["coopmat-engine", "lavapipe-26"] {
        for c in cases(&target(name)) {
            let words = coopmat_conformance::assemble(&c).unwrap();
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            if let Some(Err(e)) = coopmat_testkit::spirv_val(&bytes, "vulkan1.3") {
                panic!("{}: {e}", c.name);
            }
        }
    }
}

#[test]
fn a_conversion_may_give_either_neighbour_and_nothing_else() {
    use coopmat_conformance::{Comp, Compare, Output, compare};
    // 1 + 2^-11 to float16: 0x3c00 (nearest even) or 0x3c01; 0x3bff is neither neighbour.
    let o = Output {
        binding: (0, 1),
        comp: Comp::F16,
        expected: 0x3c00u16.to_le_bytes().to_vec(),
        compare: Compare::Float { ulps: 0 },
        row_len: 1,
        alternative: Some(0x3c01u16.to_le_bytes().to_vec()),
    };
    assert_eq!(compare(&o, &0x3c00u16.to_le_bytes()), None);
    assert_eq!(compare(&o, &0x3c01u16.to_le_bytes()), None);
    assert!(compare(&o, &0x3bffu16.to_le_bytes()).is_some());
}
