//! Engine benchmarks: `cargo run --release -p coopmat-exec --example bench -- [gemm|arith] [N] [threads]`.
//!
//! gemm: bench/gemm.comp (f16 × f16 → f32, 16×16×16 KHR cooperative-matrix tiles, shared-memory
//! staging) on N×N×N (default 1024), checked against an f64 reference on sampled rows; prints
//! GFLOP/s. arith: bench/arith.comp (a long dependent integer/float chain per invocation);
//! prints lane-instructions per second. Needs glslangValidator and spirv-opt
//! (/opt/coopmat-peers/bin or PATH).

use coopmat_exec::{EngineOptions, Pipeline, Resources};
use half::f16;
use std::process::Command;

fn compile(name: &str) -> coopmat_spirv::Module {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/bench");
    let glslang =
        coopmat_testkit::peer_tool("glslangValidator").expect("glslangValidator not found");
    let opt = coopmat_testkit::peer_tool("spirv-opt").expect("spirv-opt not found");
    let out = std::env::temp_dir().join(format!("coopmat-bench-{name}-{}.spv", std::process::id()));
    let st = Command::new(glslang)
        .args(["-V", "--target-env", "vulkan1.3", "-o"])
        .arg(&out)
        .arg(format!("{dir}/{name}.comp"))
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stdout)
    );
    let st = Command::new(opt)
        .arg("-O")
        .arg(&out)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    coopmat_spirv::Module::from_bytes(&std::fs::read(&out).unwrap()).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map(String::as_str).unwrap_or("gemm");
    let threads: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(0);
    let opts = EngineOptions {
        threads,
        ..Default::default()
    };
    match what {
        "gemm" => {
            let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1024);
            let m = compile("gemm");
            let spec = [(0u32, n as u64)].into_iter().collect();
            let p = Pipeline::compile(&m, "main", &spec, &opts).unwrap();
            let mut s = 12345u64;
            let mut rnd = || {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                f16::from_f32(((s % 2001) as f32 - 1000.0) / 1024.0)
            };
            let a: Vec<f16> = (0..n * n).map(|_| rnd()).collect();
            let b: Vec<f16> = (0..n * n).map(|_| rnd()).collect();
            let hb = |v: &[f16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
            let mut res = Resources::default();
            res.buffers.insert((0, 0), hb(&a));
            res.buffers.insert((0, 1), hb(&b));
            res.buffers.insert((0, 2), vec![0; 4 * n * n]);
            let g = (n / 128) as u32;
            // Optional repetitions (4th argument) for steadier numbers on a busy machine.
            let reps: u32 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1);
            let cpu0 = cpu_time();
            let mut st = p.dispatch(&mut res, [g, g, 1]).unwrap();
            for _ in 1..reps {
                let s2 = p.dispatch(&mut res, [g, g, 1]).unwrap();
                st.elapsed += s2.elapsed;
                st.muladd_flops += s2.muladd_flops;
            }
            let cpu = cpu_time() - cpu0;
            let c: Vec<f32> = res.buffers[&(0, 2)]
                .chunks(4)
                .map(|x| f32::from_le_bytes(x.try_into().unwrap()))
                .collect();
            let mut worst = 0f64;
            for i in (0..n).step_by(97) {
                for j in 0..n {
                    let (mut r, mut mag) = (0f64, 0f64);
                    for k in 0..n {
                        let p = a[i * n + k].to_f64() * b[k * n + j].to_f64();
                        r += p;
                        mag += p.abs();
                    }
                    let e = (c[i * n + j] as f64 - r).abs() / (mag * 2f64.powi(-24));
                    worst = worst.max(e);
                }
            }
            let check = std::env::var_os("COOPMAT_BENCH_NOCHECK").is_none();
            assert!(
                !check || worst <= (n + 1) as f64,
                "GEMM result off by {worst} ulps of the magnitude"
            );
            let secs = st.elapsed.as_secs_f64();
            println!(
                "gemm {n}^3 f16xf16->f32: {:.3} s wall, {:.2} GFLOP/s; {:.2} s CPU, {:.2} GFLOP per CPU-second ({} workgroups, {} lane-instructions, threads={}); max error {worst:.1} x 2^-24 x sum|a*b|",
                secs,
                st.muladd_flops as f64 / secs / 1e9,
                cpu,
                st.muladd_flops as f64 / cpu.max(0.01) / 1e9,
                st.workgroups,
                st.lane_instructions,
                if threads == 0 {
                    rayon_threads()
                } else {
                    threads
                }
            );
        }
        _ => {
            let groups: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(256);
            let m = compile("arith");
            let p = Pipeline::compile(&m, "main", &Default::default(), &opts).unwrap();
            let mut res = Resources::default();
            res.buffers
                .insert((0, 0), vec![0; 4 * 256 * groups as usize]);
            let cpu0 = cpu_time();
            let st = p.dispatch(&mut res, [groups, 1, 1]).unwrap();
            let cpu = cpu_time() - cpu0;
            let secs = st.elapsed.as_secs_f64();
            println!(
                "arith: {} lane-instructions in {:.3} s wall = {:.1} M lane-instructions/s; {:.2} s CPU = {:.1} M per CPU-second ({} batch instructions, {} invocations)",
                st.lane_instructions,
                secs,
                st.lane_instructions as f64 / secs / 1e6,
                cpu,
                st.lane_instructions as f64 / cpu.max(0.01) / 1e6,
                st.instructions,
                st.invocations
            );
        }
    }
}

/// CPU time (user + system) of this process so far, from /proc/self/stat (Linux), in seconds.
fn cpu_time() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = s.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 (utime, stime) are at 11 and 12 after the command name; 100 ticks/s.
    (t(11) + t(12)) / 100.0
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
