#!/usr/bin/env bash
# Engine benchmarks (release build). Usage: crates/exec/bench/run.sh [N]
#  (a) lane-instructions/s on bench/arith.comp
#  (b) KHR cooperative-matrix GEMM (bench/gemm.comp, f16 x f16 -> f32, 16x16x16 tiles,
#      shared-memory staging) on N^3 (default 1024), 1 and 2 threads, checked against f64
#  (c) peak RSS of the GEMM through `coopmat run` (/usr/bin/time -v)
# Needs glslangValidator and spirv-opt (/opt/coopmat-peers/bin or PATH).
set -euo pipefail
cd "$(dirname "$0")/../../.."
N=${1:-1024}
PEERS=/opt/coopmat-peers/bin
export PATH="$PEERS:$PATH"
cargo build --release -q -p coopmat-exec --example bench
cargo build --release -q -p coopmat
B=target/release/examples/bench
echo "== (a) arith"; $B arith 256 1; $B arith 256 2
echo "== (b) gemm ${N}^3"; $B gemm "$N" 1 3; $B gemm "$N" 2 3
echo "== (c) peak RSS of coopmat run (gemm ${N}^3, 2 threads)"
TMP=$(mktemp -d)
glslangValidator -V --target-env vulkan1.3 -o "$TMP/gemm.spv" crates/exec/bench/gemm.comp >/dev/null
spirv-opt -O "$TMP/gemm.spv" -o "$TMP/gemm.spv"
G=$((N / 128)); HB=$((N * N * 2)); CB=$((N * N * 4))
/usr/bin/time -v target/release/coopmat run "$TMP/gemm.spv" --spec 0="$N" --groups "$G,$G,1" \
  --buffer 0:0=const:$HB:0x3c003c00 --buffer 0:1=const:$HB:0x38003800 --buffer 0:2=zeros:$CB \
  --threads 2 2>&1 | grep -E "^ran|Maximum resident|Elapsed"
rm -rf "$TMP"
