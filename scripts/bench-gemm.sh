#!/bin/bash
# The KHR GEMM benchmark (crates/exec/bench/gemm.comp) against the FMA peak measured in the same
# run: ROUNDS rounds, each `fma_peak THREADS 1` then `bench gemm N THREADS REPS` (and a BEFORE
# bench binary, if given, right after), then min/median/max of each and the medians' ratio to
# the peak's median. The issue's target is a ratio, so both numbers come from the same minutes.
# Usage: scripts/bench-gemm.sh [N] [THREADS] [REPS] [ROUNDS] [BEFORE_BENCH]
#   e.g. scripts/bench-gemm.sh 1024 2 10 4; scripts/bench-gemm.sh 4096 2 1 2
# Needs glslangValidator and spirv-opt (install-peers.sh), as the bench example does.
set -eu
n=${1:-1024} threads=${2:-2} reps=${3:-10} rounds=${4:-3} before=${5:-}
cd "$(dirname "$0")/.."
export PATH=/opt/coopmat-peers/bin:$PATH
cargo build --release -q -p coopmat-exec --example bench --example fma_peak
bench=target/release/examples/bench peak=target/release/examples/fma_peak
grep -m1 "model name" /proc/cpuinfo
echo "cpu family $(grep -m1 'cpu family' /proc/cpuinfo | grep -o '[0-9]*$'), model $(grep -m1 '^model\s' /proc/cpuinfo | grep -o '[0-9]*$')"
grep -m1 flags /proc/cpuinfo | tr ' ' '\n' | grep -E "^(avx2|avx512f|avx512bw|avx512vl|fma|f16c)$" | tr '\n' ' '; echo
echo "$(nproc) CPUs; $(uptime)"; date -u
gflops() { grep -o "[0-9.]* GFLOP/s" | head -1 | cut -d' ' -f1; }
p=() a=() b=()
for r in $(seq "$rounds"); do
  p+=("$($peak "$threads" 1 | gflops)")
  a+=("$($bench gemm "$n" "$threads" "$reps" | gflops)")
  line="round $r: fma_peak ${p[-1]}, gemm ${a[-1]}"
  if [ -n "$before" ]; then
    b+=("$($before gemm "$n" "$threads" "$reps" | gflops)")
    line="$line, before ${b[-1]}"
  fi
  echo "$line GFLOP/s"
done
stats() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "min %.2f median %.2f max %.2f", v[1], m, v[NR]}'; }
median() { stats "$@" | awk '{print $4}'; }
# A set of runs against the peak: its min/median/max and its median as a share of the peak's.
against_peak() { echo "$(stats "$@")  = $(awk -v g="$(median "$@")" -v q="$(median "${p[@]}")" 'BEGIN {printf "%.1f", 100 * g / q}') % of the peak's median"; }
echo "gemm ${n}^3, $threads threads, $reps reps, $rounds rounds"
echo "fma_peak: $(stats "${p[@]}")"
echo "gemm:     $(against_peak "${a[@]}")"
if [ -n "$before" ]; then
  echo "before:   $(against_peak "${b[@]}")"
fi
