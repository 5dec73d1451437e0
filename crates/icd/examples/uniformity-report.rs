//! Merges what `COOPMAT_ICD_OBSERVE_UNIFORMITY=DIR` recorded (over any number of processes) and
//! checks the divergence analysis against it: per module, the values observed, the violations
//! (a value the analysis calls uniform within a subgroup that some subgroup saw differ; target
//! 0) and the precision (values observed uniform that the analysis calls divergent).
//!
//! `cargo run --release -p coopmat-icd --example uniformity-report -- DIR [CORPUS_DIR]`: with a
//! corpus directory, modules byte-identical to a corpus module are named by its file.

use coopmat_analysis::Analysis;
use coopmat_spirv::Module;
use std::collections::{BTreeMap, HashMap};
use std::hash::Hasher;
use std::path::Path;

fn hash_words(words: &[u32]) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    for w in words {
        h.write_u32(*w);
    }
    h.finish()
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: uniformity-report DIR [CORPUS_DIR]"))?;
    let corpus: HashMap<u64, String> = match args.next() {
        Some(c) => std::fs::read_dir(&c)?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let bytes = std::fs::read(e.path()).ok()?;
                let m = Module::from_bytes(&bytes).ok()?;
                Some((
                    hash_words(&m.to_words()),
                    e.file_name().to_string_lossy().into_owned(),
                ))
            })
            .collect(),
        None => HashMap::new(),
    };
    // hash -> merged observations
    let mut seen: BTreeMap<String, BTreeMap<u32, bool>> = BTreeMap::new();
    for e in std::fs::read_dir(&dir)? {
        let path = e?.path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let Some(hash) = name.strip_suffix(".obs").and_then(|n| n.split('.').next()) else {
            continue;
        };
        let text = std::fs::read_to_string(&path)?;
        let m = seen.entry(hash.to_string()).or_default();
        for line in text.lines() {
            let mut it = line.split(' ');
            let (Some(id), Some(d)) = (it.next(), it.next()) else {
                anyhow::bail!("{}: malformed line '{line}'", path.display());
            };
            *m.entry(id.parse()?).or_insert(false) |= d == "1";
        }
    }
    println!("| module | values observed | violations | observed uniform, called divergent |");
    println!("|---|---:|---:|---:|");
    let (mut values, mut violations, mut uniform, mut called) = (0, 0, 0, 0);
    let mut in_corpus = 0;
    for (hash, obs) in &seen {
        let bytes = std::fs::read(Path::new(&dir).join(format!("{hash}.spv")))?;
        let module = Module::from_bytes(&bytes)?;
        let observed: Vec<(u32, bool)> = obs.iter().map(|(&i, &d)| (i, d)).collect();
        let c = Analysis::run(&module).check_observed(&observed);
        let name = match corpus.get(&hash_words(&module.to_words())) {
            Some(n) => {
                in_corpus += 1;
                n.clone()
            }
            None => format!("{hash} (not in the corpus)"),
        };
        println!(
            "| {name} | {} | {} | {} of {} |",
            c.values,
            c.violations.len(),
            c.called_divergent,
            c.observed_uniform
        );
        if !c.violations.is_empty() {
            eprintln!("{name}: violations at ids {:?}", c.violations);
        }
        values += c.values;
        violations += c.violations.len();
        uniform += c.observed_uniform;
        called += c.called_divergent;
    }
    println!(
        "| **{} modules ({in_corpus} byte-identical to a corpus module)** | {values} | {violations} | {called} of {uniform} |",
        seen.len()
    );
    Ok(())
}
