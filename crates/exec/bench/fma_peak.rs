//! Measures this machine's f32 fused-multiply-add peak, the yardstick for the GEMM benchmark:
//! `cargo run --release -p coopmat-exec --example fma_peak [THREADS] [SECONDS]`.
//!
//! Each thread runs 12 independent accumulator chains of 16-lane (AVX-512) or 8-lane (AVX2)
//! FMAs, enough to cover the FMA latency on current x86 cores; a FLOP is one multiply or add.

use std::time::Instant;

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn chains_avx512(iters: u64) -> f32 {
    use std::arch::x86_64::*;
    // Register-only intrinsics are safe inside a function with the feature enabled.
    let a = _mm512_set1_ps(0.999_999);
    let b = _mm512_set1_ps(1e-7);
    let mut acc = [_mm512_set1_ps(1.0); 12];
    for _ in 0..iters {
        for x in acc.iter_mut() {
            *x = _mm512_fmadd_ps(*x, a, b);
        }
    }
    let mut sum = _mm512_setzero_ps();
    for x in acc {
        sum = _mm512_add_ps(sum, x);
    }
    _mm512_reduce_add_ps(sum)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn chains_avx2(iters: u64) -> f32 {
    use std::arch::x86_64::*;
    let a = _mm256_set1_ps(0.999_999);
    let b = _mm256_set1_ps(1e-7);
    let mut acc = [_mm256_set1_ps(1.0); 12];
    for _ in 0..iters {
        for x in acc.iter_mut() {
            *x = _mm256_fmadd_ps(*x, a, b);
        }
    }
    let mut sum = _mm256_setzero_ps();
    for x in acc {
        sum = _mm256_add_ps(sum, x);
    }
    let mut out = [0f32; 8];
    // SAFETY: `out` holds 8 f32s, exactly what one unaligned 256-bit store writes.
    unsafe { _mm256_storeu_ps(out.as_mut_ptr(), sum) };
    out.iter().sum()
}

/// Runs `iters` iterations; returns (FLOPs, checksum).
fn run(iters: u64) -> (f64, f32) {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the feature was detected at run time.
            return (iters as f64 * 12.0 * 16.0 * 2.0, unsafe {
                chains_avx512(iters)
            });
        }
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            // SAFETY: the features were detected at run time.
            return (iters as f64 * 12.0 * 8.0 * 2.0, unsafe {
                chains_avx2(iters)
            });
        }
    }
    let mut acc = [1f32; 12];
    for _ in 0..iters {
        for x in acc.iter_mut() {
            *x = x.mul_add(0.999_999, 1e-7);
        }
    }
    (iters as f64 * 12.0 * 2.0, acc.iter().sum())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2);
    let seconds: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    // Calibrate one thread, then run all threads for about `seconds`.
    let t = Instant::now();
    run(10_000_000);
    let per_iter = t.elapsed().as_secs_f64() / 10_000_000.0;
    let iters = (seconds / per_iter) as u64;
    let start = Instant::now();
    let results: Vec<(f64, f32)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|_| s.spawn(move || run(iters))).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    let elapsed = start.elapsed().as_secs_f64();
    let total: f64 = results.iter().map(|r| r.0).sum();
    let checksum: f32 = results.iter().map(|r| r.1).sum();
    println!(
        "fma peak: {threads} threads, {elapsed:.2} s, {:.1} GFLOP/s (checksum {checksum:.3})",
        total / elapsed / 1e9
    );
}
