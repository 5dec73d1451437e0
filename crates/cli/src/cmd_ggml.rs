//! `coopmat ggml-matmul`: run one of llama.cpp's `matmul_*_cm2` modules on the CPU engine as
//! ggml-vulkan dispatches it, and compare with the f64 reference.

use anyhow::{Context, Result, anyhow, bail};
use coopmat_exec::{DecodePolicy, Pipeline, Resources, SpecConstants};
use coopmat_ggml::dispatch::{BindingRole, MatmulParams, cm2_matmul_dispatch};
use coopmat_ggml::f16::{f16_to_f32, f32_to_f16};
use coopmat_ggml::{GgmlType, matmul};
use std::path::PathBuf;

/// Arguments of `coopmat ggml-matmul`.
#[derive(clap::Args)]
pub struct Args {
    /// The module: a `.spv` file, or a NAME looked up as `NAME.spv` in the corpus directory
    /// (`$COOPMAT_CORPUS_DIR`, else `corpus-cache/cyllama-vulkan-0.7.0/spv`).
    #[arg(long)]
    shader: String,
    /// Rows of A (weights) and columns of D.
    #[arg(long)]
    m: u32,
    /// Rows of B (tokens).
    #[arg(long)]
    n: u32,
    /// Shared dimension.
    #[arg(long)]
    k: u32,
    /// A type: `auto` (from the module name) or a ggml type name for `matmul_quant_*`.
    #[arg(long = "type", default_value = "auto")]
    ty: String,
    /// Seed of the generated weights and activations.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Rows of D checked against the f64 reference when M·N·K > 2^31 (evenly spaced).
    #[arg(long, default_value_t = 16)]
    check_rows: usize,
    /// Also write the dispatch to DIR, to replay it elsewhere: each input buffer as
    /// `SET_BINDING.bin`, the engine's output as `engine_d.bin`, and in `args.txt` the arguments
    /// of `coopmat run` / `gpu run` / `diff` that repeat it (buffer paths relative to DIR).
    #[arg(long, value_name = "DIR")]
    emit_dispatch: Option<PathBuf>,
    /// Dispatches to run (at least 1). The first is reported as before; with more, the others
    /// (warm: the pipeline and the engine's pooled storage already set up, as in a long-running
    /// application and in `test-backend-ops perf`, which times repeats after a warm-up run) are
    /// summarized by min/median/max, and each must give the first one's output bit for bit.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeat: u32,
    /// Engine options.
    #[command(flatten)]
    engine: crate::engine_args::EngineArgs,
}

/// Where `NAME.spv` is looked up.
pub fn corpus_dir() -> PathBuf {
    std::env::var_os("COOPMAT_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("corpus-cache/cyllama-vulkan-0.7.0/spv"))
}

/// xorshift64* in [-1, 1).
fn rng(state: &mut u64) -> f32 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    let x = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
    ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
}

/// User + system CPU seconds of this process so far (Linux /proc; 0 elsewhere).
fn process_cpu_seconds() -> f64 {
    let Ok(st) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesized command name: utime and stime are fields 14 and 15.
    let rest = st.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (t(11) + t(12)) / 100.0
}

/// GFLOP per CPU-second, or a note when the CPU time is below what `/proc` resolves (10 ms).
fn per_cpu_second(flops: f64, cpu: f64) -> String {
    if cpu < 0.02 {
        "CPU time too short to resolve".to_string()
    } else {
        format!("{:.3} GFLOP per CPU-second", flops / cpu / 1e9)
    }
}

/// Runs the command.
/// Refuses a shape whose matrices (the random inputs, their f64 copies, the buffers, the f64
/// reference and the output) would not fit the memory limit, before anything is allocated: about
/// 24 bytes an element of A, B and D, at their padded strides.
fn check_shape_memory(a: &Args, stride_a: u32, padded_n: u32) -> Result<()> {
    let (m, n, k) = (u64::from(a.m), u64::from(a.n), u64::from(a.k));
    let stride_a = u64::from(stride_a).max(k);
    let n_padded = u64::from(padded_n).max(n);
    let elements = m
        .checked_mul(stride_a)
        .and_then(|x| x.checked_add(n_padded.checked_mul(k)?))
        .and_then(|x| x.checked_add(m.checked_mul(n_padded)?));
    let limit = a.engine.options().memory_limit();
    match elements.and_then(|e| e.checked_mul(24)) {
        Some(bytes) if bytes <= limit => Ok(()),
        need => anyhow::bail!(
            "--m {} --n {} --k {}: the matrices need {} bytes, more than the memory limit of {limit} bytes (--max-memory)",
            a.m,
            a.n,
            a.k,
            need.map_or_else(|| "more than 2^64".to_string(), |b| b.to_string())
        ),
    }
}

pub fn run(a: Args) -> Result<u8> {
    let path = if a.shader.ends_with(".spv") {
        PathBuf::from(&a.shader)
    } else {
        corpus_dir().join(format!("{}.spv", a.shader))
    };
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| anyhow!("bad shader path {}", path.display()))?
        .to_string();
    let bytes = crate::inputs::read_file(&path)?;
    let module = coopmat_spirv::Module::from_bytes(&bytes)
        .with_context(|| format!("parsing {}", path.display()))?;
    let policy: DecodePolicy = a.engine.decode_policy;
    let mut params = MatmulParams::new(a.m, a.n, a.k);
    params.subgroup_size = a.engine.subgroup_size;
    if a.ty != "auto" {
        params.quant_type = Some(
            GgmlType::from_shader_name(&a.ty).ok_or_else(|| anyhow!("unknown type {:?}", a.ty))?,
        );
    }
    let d = cm2_matmul_dispatch(&name, &params).map_err(|e| anyhow!("{e}"))?;
    check_shape_memory(&a, d.push_words[3], d.push_words[16])?;
    let (m, n, k) = (a.m as usize, a.n as usize, a.k as usize);
    let [_, _, _, stride_a, stride_b, stride_d] = [0, 1, 2, 3, 4, 5].map(|i| d.push_words[i]);
    let padded_n = d.push_words[16] as usize;
    let mut st = a.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    // Rows of D checked against the f64 reference: all of them, or for large problems an
    // evenly spaced sample (the check keeps 24 bytes an element of D it covers, within what
    // `check_shape_memory` allowed).
    let rows: Vec<usize> = if (m * n * k) as u64 <= 1 << 31 {
        (0..n).collect()
    } else {
        let step = n.div_ceil(a.check_rows.max(1));
        (0..n).step_by(step.max(1)).collect()
    };
    // A: M rows of stride_a elements, quantized row by row. Its values for the reference are
    // decoded again from these bytes, a row at a time (kept whole as f64 they were the
    // run's largest allocation: 470 MB at 4096 x 14336).
    let ty = d.a_type;
    let mut a_bytes = Vec::new();
    for _ in 0..m {
        let row: Vec<f32> = (0..stride_a as usize).map(|_| rng(&mut st)).collect();
        if ty == GgmlType::F16 {
            a_bytes.extend(row.iter().flat_map(|&x| f32_to_f16(x).to_le_bytes()));
        } else {
            a_bytes.extend(coopmat_ggml::quantize_row(ty, &row).map_err(|e| anyhow!("{e}"))?);
        }
    }
    // B: padded_N rows of stride_b f16 values; the checked rows' values kept for the reference.
    let mut b_bytes = Vec::new();
    let mut b_vals = Vec::with_capacity(rows.len() * k);
    let mut next_checked = rows.iter().peekable();
    for r in 0..padded_n.max(n) {
        let checked = next_checked.next_if_eq(&&r).is_some();
        for j in 0..stride_b as usize {
            let h = f32_to_f16(rng(&mut st));
            b_bytes.extend(h.to_le_bytes());
            if checked && j < k {
                b_vals.push(f16_to_f32(h) as f64);
            }
        }
    }
    let mut res = Resources::default();
    let mut d_key = (0, 0);
    let mut inputs: Vec<((u32, u32), Vec<u8>)> = Vec::new();
    for b in &d.bindings {
        let mut buf = match b.role {
            BindingRole::A => a_bytes.clone(),
            BindingRole::B => b_bytes.clone(),
            BindingRole::D => {
                d_key = (b.set, b.binding);
                Vec::new()
            }
        };
        if buf.len() < b.min_bytes as usize {
            buf.resize(b.min_bytes as usize, 0);
        }
        if a.emit_dispatch.is_some() {
            inputs.push(((b.set, b.binding), buf.clone()));
        }
        res.buffers.insert((b.set, b.binding), buf);
    }
    res.push_constants = d.push_constants.clone();
    let spec: SpecConstants = d.spec.iter().map(|(&k, &v)| (k, v)).collect();
    let opts = a.engine.options();
    let pipe = Pipeline::compile(&module, "", &spec, &opts).map_err(|e| anyhow!("{e}"))?;
    let cpu0 = process_cpu_seconds();
    let stats = pipe
        .dispatch(&mut res, d.groups)
        .map_err(|e| anyhow!("{e}"))?;
    let cpu = process_cpu_seconds() - cpu0;
    // Warm dispatches: (wall seconds, CPU seconds) each.
    let mut warm: Vec<(f64, f64)> = Vec::new();
    // `--profile-ops`: the last dispatch's (a warm one when there are several).
    let mut op_times = stats.op_times.clone();
    if a.repeat > 1 {
        let first = res.buffers[&d_key].clone();
        for r in 1..a.repeat {
            let cpu0 = process_cpu_seconds();
            let s = pipe
                .dispatch(&mut res, d.groups)
                .map_err(|e| anyhow!("{e}"))?;
            warm.push((s.elapsed.as_secs_f64(), process_cpu_seconds() - cpu0));
            op_times = s.op_times;
            if res.buffers[&d_key] != first {
                bail!(
                    "dispatch {} of {} gave another output than the first",
                    r + 1,
                    a.repeat
                );
            }
        }
    }
    if let Some(dir) = &a.emit_dispatch {
        emit_dispatch(dir, &d, &inputs, &res.buffers[&d_key], d_key)?;
    }
    // Reference: D[n][m] = Σ_k A[m][k]·B[n][k] in f64 (as coopmat_ggml::matmul::mul_mat), with
    // Σ|A·B| as the scale of the error. A's rows are decoded one at a time, each used for
    // every checked row of B; the results are kept in (row of B, row of A) order.
    let out_bytes = &res.buffers[&d_key];
    let (mut reference, mut out, mut rel) = (
        vec![0f64; rows.len() * m],
        vec![0f64; rows.len() * m],
        vec![0f64; rows.len() * m],
    );
    let a_row_bytes = a_bytes.len() / m.max(1);
    for mi in 0..m {
        let arow: Vec<f64> = a_reference_row(ty, &a_bytes[mi * a_row_bytes..][..a_row_bytes], k)?;
        for (ri, &ni) in rows.iter().enumerate() {
            let brow = &b_vals[ri * k..(ri + 1) * k];
            let (mut r, mut scale) = (0f64, 0f64);
            for (x, y) in arow.iter().zip(brow) {
                r += x * y;
                scale += (x * y).abs();
            }
            let o = (ni * stride_d as usize + mi) * 4;
            let v = f32::from_le_bytes(out_bytes[o..o + 4].try_into().unwrap()) as f64;
            let at = ri * m + mi;
            (reference[at], out[at]) = (r, v);
            rel[at] = (v - r).abs() / scale.max(f64::MIN_POSITIVE);
        }
    }
    let mut max_rel = 0f64;
    let mut worst = (0, 0);
    for (at, &x) in rel.iter().enumerate() {
        if x.is_nan() || x > max_rel {
            max_rel = x;
            worst = (rows[at / m], at % m);
        }
    }
    let nmse = matmul::nmse(&reference, &out);
    // A decoded to f16 (unit roundoff 2^-11, unless A is f16 already), f32 products of f16
    // values exact, K f32 additions (K·2^-24), final f32 rounding (2^-24).
    let u16r = if ty == GgmlType::F16 {
        0.0
    } else {
        2f64.powi(-11)
    };
    let tol = u16r + (k as f64 + 1.0) * 2f64.powi(-24);
    let secs = stats.elapsed.as_secs_f64();
    let flops = 2.0 * m as f64 * n as f64 * k as f64;
    outln!(
        "{name}: M={m} N={n} K={k} type={ty:?} variant={:?} aligned={} tile={:?} groups={:?} local={:?} policy={policy:?}{}",
        d.variant,
        d.aligned,
        d.tile,
        d.groups,
        d.local_size,
        if a.engine.check_decode {
            " check-decode"
        } else {
            ""
        }
    );
    outln!(
        "max error relative to sum|a*b|: {max_rel:.3e} at (n={}, m={}) (tolerance {tol:.3e}); NMSE {nmse:.3e}",
        worst.0,
        worst.1
    );
    let td = stats.decode_time.as_secs_f64();
    let tm = stats.muladd_time.as_secs_f64();
    let threads_used = if a.engine.threads == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    } else {
        a.engine.threads
    };
    let busy = secs * threads_used as f64;
    outln!(
        "time {secs:.3} s, {:.3} GFLOP/s; CPU {cpu:.2} s ({}); thread time: decode {:.1}%, MulAdd {:.1}%, rest {:.1}% ({threads_used} threads)",
        flops / secs / 1e9,
        per_cpu_second(flops, cpu),
        100.0 * td / busy,
        100.0 * tm / busy,
        100.0 * (busy - td - tm).max(0.0) / busy
    );
    if !warm.is_empty() {
        let mut walls: Vec<f64> = warm.iter().map(|w| w.0).collect();
        let mut cpus: Vec<f64> = warm.iter().map(|w| w.1).collect();
        walls.sort_by(f64::total_cmp);
        cpus.sort_by(f64::total_cmp);
        let (wmin, wmed, wmax) = (walls[0], walls[walls.len() / 2], walls[walls.len() - 1]);
        let cmed = cpus[cpus.len() / 2];
        outln!(
            "warm dispatches ({}, outputs identical to the first): time min {wmin:.3} / median {wmed:.3} / max {wmax:.3} s, {:.3} GFLOP/s at the median; CPU median {cmed:.2} s ({})",
            warm.len(),
            flops / wmed / 1e9,
            per_cpu_second(flops, cmed),
        );
    }
    if stats.tiles_stored > 0 {
        outln!(
            "decoded tiles: {} kept, {} reused (--tile-cache-mib)",
            stats.tiles_stored,
            stats.tiles_reused
        );
    }
    if stats.chained_muladds > 0 {
        outln!(
            "MulAdds chained into the next: {} (per subgroup)",
            stats.chained_muladds
        );
    }
    crate::engine_args::report_repeated_rows(stats.repeated_rows);
    let last = if a.repeat > 1 {
        "the last dispatch"
    } else {
        "the dispatch"
    };
    crate::engine_args::report_op_times(&op_times, last, a.engine.profile_instructions);
    if max_rel > tol || !max_rel.is_finite() {
        bail!("result outside tolerance: {max_rel:.3e} > {tol:.3e}");
    }
    Ok(0)
}

/// The first `k` values of one row of A (its `bytes`, stored as type `ty`), as the reference
/// multiplies them: f16 values widened, quantized blocks dequantized as ggml does. (f16 is
/// widened here rather than by `dequantize_row`, whose one-element f16 blocks would cost an
/// allocation per value: 58 million at 4096 x 14336.)
fn a_reference_row(ty: GgmlType, bytes: &[u8], k: usize) -> Result<Vec<f64>> {
    let mut vals: Vec<f64> = if ty == GgmlType::F16 {
        bytes
            .chunks_exact(2)
            .map(|h| f16_to_f32(u16::from_le_bytes([h[0], h[1]])) as f64)
            .collect()
    } else {
        let deq = coopmat_ggml::dequantize_row(ty, bytes).map_err(|e| anyhow!("{e}"))?;
        deq.iter().map(|&x| x as f64).collect()
    };
    if vals.len() < k {
        bail!("a row of A holds {} values, fewer than K = {k}", vals.len());
    }
    vals.truncate(k);
    Ok(vals)
}

/// Writes `--emit-dispatch`'s files (see [`Args`]).
fn emit_dispatch(
    dir: &std::path::Path,
    d: &coopmat_ggml::dispatch::Dispatch,
    inputs: &[((u32, u32), Vec<u8>)],
    engine_d: &[u8],
    d_key: (u32, u32),
) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).with_context(|| format!("writing {}", p.display()))
    };
    let [x, y, z] = d.groups;
    let mut args = vec![format!("--groups {x},{y},{z}")];
    for ((set, binding), bytes) in inputs {
        let name = format!("{set}_{binding}.bin");
        write(&name, bytes)?;
        args.push(format!("--buffer {set}:{binding}=raw:{name}"));
    }
    let push: String = d
        .push_constants
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    args.push(format!("--push 0x{push}"));
    for (id, v) in &d.spec {
        args.push(format!("--spec {id}={v}"));
    }
    write("engine_d.bin", engine_d)?;
    args.push(format!("--compare {}:{}:f32", d_key.0, d_key.1));
    write("args.txt", (args.join(" ") + "\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row of A decoded for the reference holds the values the row's bytes encode: f16
    /// halves widened, quantized blocks as `dequantize_row` gives them, cut to K; a row
    /// shorter than K is an error, not a short reference.
    #[test]
    fn a_reference_row_decodes_the_stored_row() {
        let x: Vec<f32> = (0..64).map(|i| (i as f32 - 20.5) / 7.0).collect();
        let halves: Vec<u8> = x
            .iter()
            .flat_map(|&v| f32_to_f16(v).to_le_bytes())
            .collect();
        let got = a_reference_row(GgmlType::F16, &halves, 40).unwrap();
        let want: Vec<f64> = x[..40]
            .iter()
            .map(|&v| f16_to_f32(f32_to_f16(v)) as f64)
            .collect();
        assert_eq!(got, want);
        for ty in [GgmlType::Q4_0, GgmlType::Q8_0] {
            let q = coopmat_ggml::quantize_row(ty, &x).unwrap();
            let deq = coopmat_ggml::dequantize_row(ty, &q).unwrap();
            let got = a_reference_row(ty, &q, 48).unwrap();
            let want: Vec<f64> = deq[..48].iter().map(|&v| v as f64).collect();
            assert_eq!(got, want, "{ty:?}");
        }
        let err = a_reference_row(GgmlType::F16, &halves, 65).unwrap_err();
        assert!(err.to_string().contains("fewer than K = 65"), "{err}");
    }
}
