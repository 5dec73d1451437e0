#!/bin/bash
# The engine running llama.cpp's cm2 matmul shaders (`coopmat ggml-matmul`) against ggml's own
# CPU backend (`test-backend-ops perf -b CPU`) on MUL_MAT 4096x512x14336, alternating, ROUNDS
# rounds (default 3). Usage: scripts/bench-ggml-vs-cpu.sh [COOPMAT_BINARY] [ROUNDS] [TYPES...]
# Needs install-peers.sh --with-llama (test-backend-ops) and the corpus (cargo xtask corpus).
# Prints one line per run: who, type, wall GFLOP/s, and for the engine GFLOP per CPU-second and
# peak resident memory (/usr/bin/time); ggml's CPU backend keeps all its threads busy during
# the op, so its GFLOP per CPU-second is its wall figure over the thread count.
set -u
bin=${1:-target/release/coopmat}
rounds=${2:-3}
shift 2 2>/dev/null
types=${*:-f16 q4_0 q8_0 iq4_nl q4_k}
tbo=${TEST_BACKEND_OPS:-/opt/coopmat-peers/bin/test-backend-ops}
m=4096 n=512 k=14336
grep -m1 "model name" /proc/cpuinfo
grep -m1 flags /proc/cpuinfo | tr ' ' '\n' | grep -E "^(avx2|avx512f|fma|f16c)$" | tr '\n' ' '; echo
nproc; uptime; date -u
for round in $(seq "$rounds"); do
  for ty in $types; do
    case $ty in
      f16) shader=matmul_f16_cm2; extra="" ;;
      q4_0|q8_0) shader=matmul_quant_f16_cm2; extra="--type $ty" ;;
      *) shader=matmul_${ty}_f16_cm2; extra="" ;;
    esac
    out=$( { /usr/bin/time -f "peak_kb %M" "$bin" ggml-matmul --shader $shader $extra --m $m --n $n --k $k --threads 0; } 2>&1 )
    g=$(echo "$out" | grep -o "[0-9.]* GFLOP/s" | head -1)
    c=$(echo "$out" | grep -o "[0-9.]* GFLOP per CPU-second" | head -1)
    pk=$(echo "$out" | grep -o "peak_kb [0-9]*")
    ok=$(echo "$out" | grep -o "max error[^;]*" | head -1)
    echo "round $round engine $ty $g; $c; $pk; $ok"
    gty=$(echo "$ty" | sed 's/_k$/_K/')
    out=$( { /usr/bin/time -f "peak_kb %M" "$tbo" perf -o MUL_MAT -b CPU -p "type_a=$gty,type_b=f32,m=$m,n=$n,k=$k,bs=\[1,1\]" ; } 2>&1 )
    g=$(echo "$out" | grep "MUL_MAT(" | grep -o "[0-9.]* GFLOPS" | head -1)
    pk=$(echo "$out" | grep -o "peak_kb [0-9]*")
    echo "round $round ggml-cpu $ty $g; $pk"
  done
done
