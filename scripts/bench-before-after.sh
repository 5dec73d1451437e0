#!/bin/bash
# Alternating before/after runs of the KHR GEMM benchmark and the four ggml-matmul shapes of
# BENCHMARKS.md, 3 rounds. Usage: scripts/bench-before-after.sh BEFORE_DIR AFTER_DIR, each dir
# holding a release `coopmat` binary and the `bench` example (target/release/examples/bench)
# built from the two commits. Run from the repo root (ggml-matmul finds the corpus there).
set -u
before=${1:?before dir}
after=${2:?after dir}
grep -m1 "model name" /proc/cpuinfo; grep -m1 flags /proc/cpuinfo | tr ' ' '\n' | grep -E "^(avx2|avx512f|fma|f16c)$" | tr '\n' ' '; echo; uptime
for round in 1 2 3; do
  for who in baseline after; do
    if [ $who = baseline ]; then b=$before; else b=$after; fi
    g=$($b/bench gemm 1024 2 10 2>&1 | grep -o "[0-9.]* GFLOP/s" | head -1)
    echo "round $round $who gemm1024 $g"
    for s in "matmul_iq4_nl_f16_cm2 1024 1024 1024" "matmul_f16_cm2 1024 1024 1024" "matmul_iq4_nl_f16_cm2 4096 512 14336" "matmul_f16_cm2 4096 512 14336"; do
      set -- $s
      r=$($b/coopmat ggml-matmul --shader $1 --m $2 --n $3 --k $4 --threads 2 2>&1 | grep -o "[0-9.]* GFLOP/s" | head -1)
      echo "round $round $who $1 $2x$3x$4 $r"
    done
  done
done
