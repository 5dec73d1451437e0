#!/bin/bash
# The engine running llama.cpp's cm2 matmul shaders (`coopmat ggml-matmul`) against ggml's own
# CPU backend (`test-backend-ops perf -b CPU`) on MUL_MAT 4096x512x14336, alternating, ROUNDS
# rounds (default 3). Usage: scripts/bench-ggml-vs-cpu.sh [COOPMAT_BINARY] [ROUNDS] [TYPES...]
# Needs install-peers.sh --with-llama (test-backend-ops) and the corpus (cargo xtask corpus).
# Prints one line per run: who, type, wall GFLOP/s, and for the engine GFLOP per CPU-second and
# peak resident memory (/usr/bin/time); ggml's CPU backend keeps all its threads busy during
# the op, so its GFLOP per CPU-second is its wall figure over the thread count. The engine runs
# REPEAT dispatches (default 4): the first, and the median of the others ("warm": set up as in
# a long-running application, which is how test-backend-ops times ggml, after a warm-up run).
# BEFORE=BINARY adds a run of another build after each engine run (a before/after comparison).
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
repeat=${REPEAT:-4}
engine() { # who binary shader extra
  out=$( { /usr/bin/time -f "peak_kb %M" "$2" ggml-matmul --shader "$3" $4 --m $m --n $n --k $k --threads 0 --repeat "$repeat"; } 2>&1 )
  g=$(echo "$out" | grep -m1 -o "^time [0-9.]* s, [0-9.]* GFLOP/s" | grep -o "[0-9.]* GFLOP/s")
  c=$(echo "$out" | grep -o "[0-9.]* GFLOP per CPU-second" | head -1)
  w=$(echo "$out" | grep -o "[0-9.]* GFLOP/s at the median")
  wc=$(echo "$out" | grep "^warm dispatches" | grep -o "[0-9.]* GFLOP per CPU-second")
  pk=$(echo "$out" | grep -o "peak_kb [0-9]*")
  ok=$(echo "$out" | grep -o "max error[^;]*" | head -1)
  echo "round $round $1 $ty first $g; $c; warm ${w:-none}; ${wc:-}; $pk; $ok"
}
for round in $(seq "$rounds"); do
  for ty in $types; do
    case $ty in
      f16) shader=matmul_f16_cm2; extra="" ;;
      q4_0|q8_0) shader=matmul_quant_f16_cm2; extra="--type $ty" ;;
      *) shader=matmul_${ty}_f16_cm2; extra="" ;;
    esac
    engine engine "$bin" $shader "$extra"
    [ -n "${BEFORE:-}" ] && engine before "$BEFORE" $shader "$extra"
    gty=$(echo "$ty" | sed 's/_k$/_K/')
    out=$( { /usr/bin/time -f "peak_kb %M" "$tbo" perf -o MUL_MAT -b CPU -p "type_a=$gty,type_b=f32,m=$m,n=$n,k=$k,bs=\[1,1\]" ; } 2>&1 )
    g=$(echo "$out" | grep "MUL_MAT(" | grep -o "[0-9.]* GFLOPS" | head -1)
    pk=$(echo "$out" | grep -o "peak_kb [0-9]*")
    echo "round $round ggml-cpu $ty $g; $pk"
  done
done
