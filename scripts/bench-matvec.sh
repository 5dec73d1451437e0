#!/bin/bash
# llama.cpp's q4_0 matrix-vector shader (the corpus module mul_mat_vec_q4_0_f32_f32, specialization
# 32/2/1 as ggml-vulkan dispatches it for token generation) on the engine, m=4096 and k=14336:
# `coopmat run` of 2048 workgroups, ROUNDS rounds alternating
# with a BEFORE binary if given; prints the dispatch times and whether both wrote the same bytes.
# Weights and activations are repeated words: every q4_0 scale 1.0 (0x3c00), its quants 0x00 and
# 0x3c, activations 0.5; finite, as a model's are (random words would put NaNs in the sums).
# Usage: scripts/bench-matvec.sh [COOPMAT_BINARY] [ROUNDS] [THREADS] [BEFORE_BINARY]
# Needs the corpus (cargo xtask corpus).
set -eu
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/coopmat}") rounds=${2:-3} threads=${3:-1} before=${4:-}
[ -n "$before" ] && before=$(realpath "$before")
module=$(realpath corpus-cache/cyllama-vulkan-0.7.0/spv/mul_mat_vec_q4_0_f32_f32.spv)
m=4096 k=14336
# ncols, stride_a, stride_b, stride_d, batch strides of a, b, d, fusion flags, base workgroup y,
# ne02, ne12, broadcast2, broadcast3.
push=0x$(for v in $k $k $k $m $((m * k)) $k $m 0 0 1 1 1 1; do printf '%08x' "$v" | sed 's/\(..\)\(..\)\(..\)\(..\)/\4\3\2\1/'; done)
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
grep -m1 "model name" /proc/cpuinfo; date -u
run() {
  "$1" run "$module" --groups $((m / 2)),1,1 --spec 0=32 --spec 1=2 --spec 2=1 --push "$push" \
    --threads "$threads" --buffer 0:0=const:$((m * k / 32 * 18)):$((0x3c003c00)) --buffer 0:1=const:$((k * 4)):$((0x3f000000)) \
    --buffer 0:2=zeros:$((m * 4)) --buffer 0:3=zeros:$((m * 4)) --buffer 0:4=zeros:$((m * 4)) \
    --out "0:2=$dir/$2.bin" | grep -o 'in [0-9.]* ms' | grep -o '[0-9.]*'
}
for r in $(seq "$rounds"); do
  line="round $r: $(run "$bin" after) ms"
  if [ -n "$before" ]; then
    line="$line, before $(run "$before" before) ms"
    cmp -s "$dir/after.bin" "$dir/before.bin" && line="$line (same bytes)" || line="$line (BYTES DIFFER)"
  fi
  echo "$line"
done
