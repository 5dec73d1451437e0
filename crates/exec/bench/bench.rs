//! Engine benchmarks: `cargo run --release -p coopmat-exec --example bench -- [gemm|arith] [N] [threads]`.
//!
//! gemm: bench/gemm.comp (f16 × f16 → f32, 16×16×16 KHR cooperative-matrix tiles, shared-memory
//! staging) on N×N×N (default 1024), checked against an f64 reference on sampled rows; prints
//! GFLOP/s. arith: bench/arith.comp (a long dependent integer/float chain per invocation);
//! prints lane-instructions per second. muladd: bench/muladd.comp (the GEMM's 4x4 tile step
//! without staging, `bench muladd GROUPS THREADS REPS`): the MulAdd path alone. mlp: tests/coopvec/mlp.comp (16 -> 32 -> 32 -> 8, f16,
//! ReLU, cooperative-vector products) on N workgroups of 64 invocations (default 1024: 2^16
//! MLPs), checked against f64 on sampled invocations; prints MLPs per second and the share of
//! CPU time in the native product kernels. Needs glslangValidator and spirv-opt
//! (/opt/coopmat-peers/bin or PATH), or COOPMAT_BENCH_SPV_DIR with the modules compiled elsewhere.
//! `COOPMAT_BENCH_PROFILE=1` times every op (`EngineOptions::profile_ops`) and prints the gemm's
//! op times of its last dispatch by op kind (`=instructions`: a line per SPIR-V instruction).

use coopmat_exec::{EngineOptions, Pipeline, Resources};
use half::f16;
use std::process::Command;

fn compile(name: &str) -> coopmat_spirv::Module {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/bench");
    compile_file(name, &format!("{dir}/{name}.comp"))
}

fn compile_file(name: &str, path: &str) -> coopmat_spirv::Module {
    // A machine without the peer tools (a lent GPU host, say) reads modules compiled elsewhere:
    // COOPMAT_BENCH_SPV_DIR holds `{name}.spv`, as this function would have written it.
    if let Some(dir) = std::env::var_os("COOPMAT_BENCH_SPV_DIR") {
        let file = std::path::Path::new(&dir).join(format!("{name}.spv"));
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        return coopmat_spirv::Module::from_bytes(&bytes).unwrap();
    }
    let opt = coopmat_testkit::peer_tool("spirv-opt").expect("spirv-opt not found");
    let dir = coopmat_testkit::scratch_dir("bench");
    let out = dir.path().join(format!("{name}.spv"));
    let spv = coopmat_testkit::glslang(std::path::Path::new(path), &[])
        .expect("glslangValidator not found");
    std::fs::write(&out, spv).unwrap();
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
        profile_ops: std::env::var_os("COOPMAT_BENCH_PROFILE").is_some(),
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
                st.op_times = s2.op_times;
            }
            if !st.op_times.is_empty() {
                // By op kind, or a line per instruction with COOPMAT_BENCH_PROFILE=instructions.
                let by_instruction =
                    std::env::var("COOPMAT_BENCH_PROFILE").is_ok_and(|v| v == "instructions");
                let times = if by_instruction {
                    st.op_times
                } else {
                    coopmat_exec::OpTime::by_kind(&st.op_times)
                };
                println!("{}", coopmat_exec::OpTime::table(&times));
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
        "muladd" => {
            let groups: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(64);
            let reps: u64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(256);
            let m = compile("muladd");
            let spec = [(0u32, reps)].into_iter().collect();
            let p = Pipeline::compile(&m, "main", &spec, &opts).unwrap();
            // Small values (multiples of 2^-10 in [-1/8, 1/8]) keep every sum finite.
            let a: Vec<u8> = (0..2048u32)
                .flat_map(|i| f16::from_f32(((i * 37 % 257) as f32 - 128.0) / 1024.0).to_le_bytes())
                .collect();
            let mut res = Resources::default();
            res.buffers.insert((0, 0), a);
            res.buffers
                .insert((0, 1), vec![0; 4 * 256 * 16 * groups as usize]);
            let cpu0 = cpu_time();
            let st = p.dispatch(&mut res, [groups, 1, 1]).unwrap();
            let cpu = cpu_time() - cpu0;
            let secs = st.elapsed.as_secs_f64();
            println!(
                "muladd 16x16x16 f16xf16->f32, {groups} subgroups x {reps} x 16 tiles: {secs:.3} s wall, {:.2} GFLOP/s; {cpu:.2} s CPU, {:.2} GFLOP per CPU-second (threads={})",
                st.muladd_flops as f64 / secs / 1e9,
                st.muladd_flops as f64 / cpu.max(0.01) / 1e9,
                if threads == 0 {
                    rayon_threads()
                } else {
                    threads
                }
            );
        }
        "mlp" => mlp(
            args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1024),
            &opts,
        ),
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

/// The MLP benchmark (see the crate header).
fn mlp(groups: u32, opts: &EngineOptions) {
    use coopmat_exec::coopvec::{
        ComponentType, MatrixLayout, MatrixSide, convert_matrix, converted_size,
    };
    let dims = [(32usize, 16usize), (32, 32), (8, 32)];
    let mut s = 777u64;
    let mut rnd = |scale: f64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        f16::from_f64(((s % 2001) as f64 - 1000.0) / 1000.0 * scale).to_f64()
    };
    let side = |layout| MatrixSide {
        ty: ComponentType::F16,
        layout,
        stride: 0,
    };
    let mut buffer = Vec::new();
    let mut defines = String::new();
    let mut layers = Vec::new();
    for (n, &(rows, cols)) in dims.iter().enumerate() {
        let w: Vec<f64> = (0..rows * cols)
            .map(|_| rnd((2.0 / cols as f64).sqrt()))
            .collect();
        let b: Vec<f64> = (0..rows).map(|_| rnd(0.1)).collect();
        let src: Vec<u8> = w
            .iter()
            .flat_map(|v| f16::from_f64(*v).to_le_bytes())
            .collect();
        let opt = side(MatrixLayout::InferencingOptimal);
        let at = buffer.len();
        buffer.resize(
            at + converted_size(rows as u32, cols as u32, opt).unwrap() as usize,
            0,
        );
        convert_matrix(
            rows as u32,
            cols as u32,
            side(MatrixLayout::RowMajor),
            &src,
            opt,
            &mut buffer[at..],
        )
        .unwrap();
        defines += &format!("-DW{}={at} ", n + 1);
        let at = buffer.len();
        buffer.extend(b.iter().flat_map(|v| f16::from_f64(*v).to_le_bytes()));
        buffer.resize(buffer.len().next_multiple_of(64), 0);
        defines += &format!("-DB{}={at} ", n + 1);
        layers.push((rows, cols, w, b));
    }
    // glslang takes the offsets as -D options: a copy of the shader with them as #defines.
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/coopvec/mlp.comp"
    ))
    .unwrap();
    let head: String = defines
        .split_whitespace()
        .map(|d| format!("#define {}\n", d.trim_start_matches("-D").replace('=', " ")))
        .collect();
    let dir = coopmat_testkit::scratch_dir("bench-mlp");
    let path = dir.path().join("mlp.comp");
    std::fs::write(
        &path,
        src.replacen("#version 460\n", &format!("#version 460\n{head}"), 1),
    )
    .unwrap();
    let m = compile_file("mlp", path.to_str().unwrap());
    let p = Pipeline::compile(&m, "main", &Default::default(), opts).unwrap();
    let inv = groups as usize * 64;
    let x: Vec<f64> = (0..inv * 16).map(|_| rnd(1.0)).collect();
    let mut res = Resources::default();
    res.buffers.insert(
        (0, 0),
        x.iter()
            .flat_map(|v| f16::from_f64(*v).to_le_bytes())
            .collect(),
    );
    res.buffers.insert((0, 1), buffer);
    res.buffers.insert((0, 2), vec![0; inv * 16]);
    let cpu0 = cpu_time();
    let st = p.dispatch(&mut res, [groups, 1, 1]).unwrap();
    let cpu = cpu_time() - cpu0;
    let out = &res.buffers[&(0, 2)];
    let mut checked = 0;
    for i in (0..inv).step_by(997) {
        let mut v: Vec<f64> = x[i * 16..(i + 1) * 16].to_vec();
        let mut va: Vec<f64> = v.iter().map(|t| t.abs()).collect();
        for (n, (rows, cols, w, b)) in layers.iter().enumerate() {
            let nv: Vec<f64> = (0..*rows)
                .map(|j| {
                    let y = (0..*cols).map(|k| w[j * cols + k] * v[k]).sum::<f64>() + b[j];
                    if n < 2 { y.max(0.0) } else { y }
                })
                .collect();
            va = (0..*rows)
                .map(|j| {
                    (0..*cols)
                        .map(|k| (w[j * cols + k] * va[k]).abs())
                        .sum::<f64>()
                        + b[j].abs()
                })
                .collect();
            v = nv;
        }
        for j in 0..8 {
            let got = f16::from_le_bytes([out[i * 16 + 2 * j], out[i * 16 + 2 * j + 1]]).to_f64();
            let tol = 3.0 * (2f64.powi(-11) + 32.0 * 2f64.powi(-24)) * va[j] + 3.0 * 2f64.powi(-24);
            assert!(
                (got - v[j]).abs() <= tol,
                "MLP {i} output {j}: {got} vs {}",
                v[j]
            );
        }
        checked += 1;
    }
    let secs = st.elapsed.as_secs_f64();
    println!(
        "mlp 16-32-32-8 f16 x {inv}: {secs:.3} s wall = {:.2} M MLPs/s, {:.2} GFLOP/s in products; {cpu:.2} s CPU = {:.2} M MLPs per CPU-second; products {:.3} s = {:.0} % of CPU time (threads={}, {checked} MLPs checked against f64)",
        inv as f64 / secs / 1e6,
        st.muladd_flops as f64 / secs / 1e9,
        inv as f64 / cpu.max(0.01) / 1e6,
        st.muladd_time.as_secs_f64(),
        100.0 * st.muladd_time.as_secs_f64() / cpu.max(0.01),
        if opts.threads == 0 {
            rayon_threads()
        } else {
            opts.threads
        },
    );
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
