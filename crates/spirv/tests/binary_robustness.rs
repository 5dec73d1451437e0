//! Robustness of the binary reader against the real-shader corpus and damaged input:
//! every corpus module must round-trip word for word, and truncated or mutated modules must
//! give `Ok` or a `ParseError` whose offset lies within the input, never a panic.

use coopmat_spirv::binary::{self, ParseError, ParsedBinary};
use coopmat_spirv::grammar::op;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// SplitMix64: a small seeded generator so failures reproduce without a `rand` dependency.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn words_of(bytes: &[u8]) -> Vec<u32> {
    binary::words_from_bytes(bytes)
        .expect("corpus module has a valid magic")
        .0
}

/// Parses `words`, turning a panic into a test failure that names the case, and checks the
/// error offset. An offset equal to the length means "at the end of the input".
fn parse_checked(words: &[u32], case: &str) -> Result<ParsedBinary, ParseError> {
    let result = catch_unwind(AssertUnwindSafe(|| binary::parse_words(words)))
        .unwrap_or_else(|_| panic!("parse_words panicked on {case}"));
    if let Err(e) = &result {
        assert!(
            e.offset <= words.len(),
            "{case}: error offset {} beyond {} words ({e})",
            e.offset,
            words.len()
        );
    }
    result
}

/// Picks a handful of small, varied modules (cooperative-matrix ones included) for the
/// truncation and mutation tests, which are quadratic in module size.
fn sample(mods: &[(String, Vec<u8>)]) -> Vec<(String, Vec<u32>)> {
    let wanted = [
        "_cm2",
        "_cm1",
        "cm2",
        "coopmat",
        "add_f32",
        "soft_max",
        "rms_norm",
        "rope_norm",
    ];
    let mut picked: Vec<(String, Vec<u32>)> = Vec::new();
    for key in wanted {
        let best = mods
            .iter()
            .filter(|(n, _)| n.contains(key) && !picked.iter().any(|(p, _)| p == n))
            .min_by_key(|(_, b)| b.len());
        if let Some((n, b)) = best {
            picked.push((n.clone(), words_of(b)));
        }
    }
    picked
}

#[test]
fn corpus_round_trips_word_for_word() {
    let mods = coopmat_testkit::corpus_or_notice("corpus_round_trips_word_for_word");
    if mods.is_empty() {
        return;
    }
    let mut ok = 0;
    let mut failures = Vec::new();
    for (name, bytes) in &mods {
        let words = words_of(bytes);
        match binary::parse_bytes(bytes) {
            Ok(p) if binary::write_words(&p.header, &p.instructions) == words => ok += 1,
            Ok(_) => failures.push(format!("{name}: written words differ")),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    eprintln!(
        "round trip: {ok}/{} corpus modules word-identical",
        mods.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures, first: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
}

#[test]
fn corpus_reads_the_same_in_big_endian() {
    // Byte order is detected from the magic (SPIR-V spec 3.1): a byte-swapped module must give
    // the same words and instructions.
    let mods = coopmat_testkit::corpus_or_notice("corpus_reads_the_same_in_big_endian");
    for (name, bytes) in mods.iter().step_by(7) {
        let little = binary::parse_bytes(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let swapped: Vec<u8> = bytes
            .chunks_exact(4)
            .flat_map(|c| [c[3], c[2], c[1], c[0]])
            .collect();
        let big =
            binary::parse_bytes(&swapped).unwrap_or_else(|e| panic!("{name} (big-endian): {e}"));
        assert_eq!(big.endian, binary::Endian::Big, "{name}");
        assert_eq!(big.instructions, little.instructions, "{name}");
        let words = binary::write_words(&big.header, &big.instructions);
        assert_eq!(
            binary::bytes_from_words(&words, binary::Endian::Big),
            swapped,
            "{name}"
        );
    }
}

#[test]
fn corpus_parses_without_diagnostics() {
    // Everything in the corpus is known to the grammar: a diagnostic means a table gap.
    let mods = coopmat_testkit::corpus_or_notice("corpus_parses_without_diagnostics");
    for (name, bytes) in &mods {
        let p = binary::parse_bytes(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            p.diagnostics.is_empty(),
            "{name}: {:?}",
            p.diagnostics.first()
        );
    }
}

#[test]
fn truncation_at_every_word_boundary() {
    let mods = coopmat_testkit::corpus_or_notice("truncation_at_every_word_boundary");
    let mut cases = 0;
    for (name, words) in sample(&mods) {
        // Instruction boundaries: a cut there leaves a valid (shorter) module.
        let full = parse_checked(&words, &name).expect("sample module parses");
        let boundaries: Vec<usize> = full.instructions.iter().map(|i| i.offset).collect();
        for len in 0..words.len() {
            let case = format!("{name} truncated to {len} words");
            let result = parse_checked(&words[..len], &case);
            let at_boundary = len == binary::HEADER_WORDS || boundaries.contains(&len);
            assert_eq!(result.is_ok(), at_boundary, "{case}: {:?}", result.err());
            cases += 1;
        }
        // Byte-level truncation goes through the size check of `parse_bytes`.
        let bytes = binary::bytes_from_words(&words, binary::Endian::Little);
        for len in [1, 3, 5, 21, bytes.len() - 1] {
            let e = binary::parse_bytes(&bytes[..len]).expect_err("odd length is an error");
            assert!(
                e.offset <= len / 4,
                "{name} cut to {len} bytes: offset {}",
                e.offset
            );
        }
    }
    eprintln!("truncation: {cases} cases");
    if !mods.is_empty() {
        assert!(cases > 1000, "too few truncation cases ({cases})");
    }
}

#[test]
fn random_word_flips_never_panic() {
    let mods = coopmat_testkit::corpus_or_notice("random_word_flips_never_panic");
    let mut rng = SplitMix(0x5eed_c00f_3a7b_0001);
    let (mut ok, mut errs, mut cases) = (0usize, 0usize, 0usize);
    for (name, words) in sample(&mods) {
        for round in 0..500 {
            let mut w = words.clone();
            // One to three words replaced; half of them by values likely to hit limits.
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(w.len());
                let r = rng.next() as u32;
                w[at] = match rng.below(6) {
                    0 => r,
                    1 => w[at] ^ (1 << (r % 32)),
                    2 => w[at] & 0xffff | (r % 8) << 16, // small word counts
                    3 => [0, 1, u32::MAX, 0xffff, 0x8000_0000][r as usize % 5],
                    4 => w[at].wrapping_add(r % 5).wrapping_sub(2),
                    _ => w[at] & 0xffff_0000 | (r % 6000), // another opcode, same length
                };
            }
            let case = format!("{name} mutation round {round}");
            match parse_checked(&w, &case) {
                Ok(p) => {
                    // Whatever parses must still write back exactly.
                    assert_eq!(binary::write_words(&p.header, &p.instructions), w, "{case}");
                    ok += 1;
                }
                Err(_) => errs += 1,
            }
            cases += 1;
        }
    }
    eprintln!("mutation: {cases} cases, {ok} parsed, {errs} errors");
}

/// Whether spirv-dis accepts a binary (None when it is not installed).
fn spirv_dis_accepts(words: &[u32]) -> Option<bool> {
    let tool = coopmat_testkit::peer_tool("spirv-dis")?;
    let path = std::env::temp_dir().join(format!(
        "coopmat-robust-{}-{}.spv",
        std::process::id(),
        words.len()
    ));
    std::fs::write(
        &path,
        binary::bytes_from_words(words, binary::Endian::Little),
    )
    .ok()?;
    let ok = std::process::Command::new(tool)
        .arg(&path)
        .output()
        .ok()?
        .status
        .success();
    let _ = std::fs::remove_file(&path);
    Some(ok)
}

#[test]
fn phi_with_an_odd_operand_count_is_read_like_spirv_tools() {
    // Found by the `assemble` fuzz target: spirv-as assembles `OpPhi %t %a %b %c` and
    // spirv-dis prints it (SPIRV-Tools reads `PairIdRefIdRef*` as an id list); the reader
    // must accept what the reference disassembler accepts.
    let body = [
        4 << 16 | op::TypeInt as u32,
        1,
        32,
        0,
        4 << 16 | op::Constant as u32,
        1,
        2,
        7,
    ];
    for ids in [2usize, 3, 4] {
        let mut w = vec![binary::MAGIC, 0x0001_0000, 0, 4, 0];
        w.extend_from_slice(&body);
        w.push(((3 + ids) as u32) << 16 | op::Phi as u32);
        w.extend_from_slice(&[1, 3]);
        w.extend(std::iter::repeat_n(2, ids));
        let ours = binary::parse_words(&w);
        if let Some(reference) = spirv_dis_accepts(&w) {
            assert_eq!(
                ours.is_ok(),
                reference,
                "OpPhi with {ids} ids: {:?}",
                ours.err()
            );
        }
        let p = ours.unwrap_or_else(|e| panic!("OpPhi with {ids} ids: {e}"));
        assert_eq!(binary::write_words(&p.header, &p.instructions), w);
    }
}

/// The same mutations as `random_word_flips_never_panic`, checked against spirv-dis: whatever
/// the reference disassembler reads, the reader must read too (it may accept more: unknown
/// enumerants are kept raw). Slow (one spirv-dis run per case), so run on demand:
/// `cargo test -p coopmat-spirv --test binary_robustness -- --ignored`.
#[test]
#[ignore]
fn mutations_read_by_spirv_dis_are_read_by_us() {
    let mods = coopmat_testkit::corpus_or_notice("mutations_read_by_spirv_dis_are_read_by_us");
    if coopmat_testkit::peer_tool("spirv-dis").is_none() {
        eprintln!("skipping: spirv-dis not found");
        return;
    }
    let mut rng = SplitMix(0x5eed_c00f_3a7b_0002);
    let (mut both, mut only_ours, mut neither, mut only_dis) = (0, 0, 0, Vec::new());
    let mut bound_only = 0;
    for (name, words) in sample(&mods) {
        for round in 0..150 {
            let mut w = words.clone();
            let at = HEADER + rng.below(w.len() - HEADER);
            let r = rng.next() as u32;
            w[at] = match rng.below(3) {
                0 => r,
                1 => w[at] ^ (1 << (r % 32)),
                _ => w[at] & 0xffff | (r % 8) << 16,
            };
            let ours = binary::parse_words(&w).is_ok();
            match (ours, spirv_dis_accepts(&w).unwrap_or(ours)) {
                (true, true) => both += 1,
                (true, false) => only_ours += 1,
                (false, false) => neither += 1,
                // SPIRV-Tools' binary parser leaves the id bound to the validator; the reader
                // checks it (a deliberate difference, counted apart).
                (false, true)
                    if binary::parse_words(&w).is_err_and(|e| e.message.contains("id bound")) =>
                {
                    bound_only += 1
                }
                (false, true) => only_dis.push(format!(
                    "{name} round {round}: {:?}",
                    binary::parse_words(&w).err()
                )),
            }
        }
    }
    eprintln!(
        "agreement with spirv-dis: both read {both}, only we read {only_ours}, neither {neither}, only spirv-dis {} (+{bound_only} ids beyond the bound)",
        only_dis.len()
    );
    // Group by message with the numbers taken out.
    let mut kinds = std::collections::BTreeMap::new();
    for m in &only_dis {
        let key: String = m
            .split("message: ")
            .nth(1)
            .unwrap_or(m)
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .collect();
        *kinds.entry(key).or_insert(0) += 1;
    }
    assert!(
        only_dis.is_empty(),
        "{kinds:#?}\n{:#?}",
        &only_dis[..only_dis.len().min(3)]
    );
}

const HEADER: usize = binary::HEADER_WORDS;
