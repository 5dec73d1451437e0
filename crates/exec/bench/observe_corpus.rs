//! The divergence analysis's soundness check over every module of a directory that the engine
//! can run on its own: each GLCompute module is dispatched on 2 workgroups with random buffers
//! (64 KiB or the binding's static size, whichever is larger), push constants of small random
//! integers (so that loops over sizes stay short), robust buffer access and an instruction
//! budget, while the engine records which values the invocations of a subgroup saw differ.
//! Observations of a run the budget stopped are kept (they are what ran).
//!
//! `cargo run --release -p coopmat-exec --example observe-corpus -- DIR`

use coopmat_analysis::Analysis;
use coopmat_exec::{EngineOptions, Pipeline, Resources, SpecConstants};
use coopmat_spirv::Module;
use coopmat_spirv::grammar::execution_model;

/// A small deterministic generator (xorshift64*), so that runs repeat.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

#[derive(Default)]
struct Totals {
    modules: usize,
    completed: usize,
    stopped: usize,
    not_run: usize,
    values: usize,
    violations: usize,
    observed_uniform: usize,
    called_divergent: usize,
}

fn main() -> anyhow::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: observe-corpus DIR"))?;
    let mut paths: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "spv"))
        .collect();
    paths.sort();
    let mut t = Totals::default();
    let mut not_run: std::collections::BTreeMap<String, usize> = Default::default();
    for path in &paths {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let Ok(m) = Module::from_bytes(&std::fs::read(path)?) else {
            continue;
        };
        let Some(entry) = m
            .entry_points()
            .find(|e| e.word(0) == Some(execution_model::GLCompute))
            .and_then(|e| e.string(2))
        else {
            continue;
        };
        t.modules += 1;
        let options = EngineOptions {
            observe_uniformity: true,
            robust: true,
            instruction_budget: 3_000_000,
            printf: false,
            threads: 2,
            ..EngineOptions::default()
        };
        let pipe = match Pipeline::compile(&m, &entry, &SpecConstants::new(), &options) {
            Ok(p) => p,
            Err(e) => {
                t.not_run += 1;
                *not_run.entry(reason(&e.to_string())).or_default() += 1;
                continue;
            }
        };
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ name.len() as u64);
        let mut res = Resources::default();
        for b in pipe.bindings() {
            let size = b.min_size.max(64 << 10);
            if b.count == 1 {
                res.buffers.insert((b.set, b.binding), rng.bytes(size));
            } else {
                let n = b.count.max(1) as usize;
                res.buffer_arrays.insert(
                    (b.set, b.binding),
                    (0..n).map(|_| rng.bytes(size)).collect(),
                );
            }
        }
        res.push_constants = (0..pipe.push_constant_size().div_ceil(4))
            .flat_map(|_| (1 + rng.next() % 64).to_le_bytes().into_iter().take(4))
            .take(pipe.push_constant_size())
            .collect();
        let status = match pipe.dispatch(&mut res, [2, 1, 1]) {
            Ok(_) => {
                t.completed += 1;
                "completed"
            }
            Err(e) => {
                t.stopped += 1;
                *not_run
                    .entry(format!("stopped: {}", reason(&e.to_string())))
                    .or_default() += 1;
                "stopped"
            }
        };
        let c = Analysis::run(&m).check_observed(&pipe.observed_uniformity());
        println!(
            "{name}: {status}, {} values, {} violations {:?}, {} of {} observed uniform called divergent",
            c.values,
            c.violations.len(),
            c.violations,
            c.called_divergent,
            c.observed_uniform
        );
        t.values += c.values;
        t.violations += c.violations.len();
        t.observed_uniform += c.observed_uniform;
        t.called_divergent += c.called_divergent;
    }
    println!(
        "{} GLCompute modules: {} ran to completion, {} stopped (budget or error; observations kept), {} not run",
        t.modules, t.completed, t.stopped, t.not_run
    );
    println!(
        "values observed {}, violations {}, observed uniform {} of which called divergent {}",
        t.values, t.violations, t.observed_uniform, t.called_divergent
    );
    for (r, n) in not_run {
        println!("  {n:5}  {r}");
    }
    Ok(())
}

/// An error message without its numbers, to group them.
fn reason(msg: &str) -> String {
    let short: String = msg.chars().take(90).collect();
    short
        .split(|c: char| c.is_ascii_digit())
        .collect::<Vec<_>>()
        .join("#")
}
