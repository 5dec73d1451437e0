//! Times parsing and validation of every `.spv` under a directory in one process:
//! `cargo run --release -p coopmat-val --example bench -- DIR`.

use coopmat_spirv::Module;
use coopmat_val::{ValidateOptions, has_errors, validate};
use std::time::{Duration, Instant};

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "corpus-cache/cyllama-vulkan-0.7.0/spv".into());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "spv"))
        .collect();
    files.sort();
    let blobs: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(f).expect("read"))
        .collect();
    let opts = ValidateOptions::default();
    let (mut parse, mut val) = (Duration::ZERO, Duration::ZERO);
    let mut invalid = 0;
    let total = Instant::now();
    for b in &blobs {
        let t = Instant::now();
        let m = Module::from_bytes(b).expect("parse");
        parse += t.elapsed();
        let t = Instant::now();
        let d = validate(&m, &opts);
        val += t.elapsed();
        invalid += has_errors(&d) as usize;
    }
    println!(
        "{} modules, {} invalid; parse {:.3} s, validate {:.3} s, total {:.3} s",
        blobs.len(),
        invalid,
        parse.as_secs_f64(),
        val.as_secs_f64(),
        total.elapsed().as_secs_f64()
    );
}
