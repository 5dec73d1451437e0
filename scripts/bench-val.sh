#!/usr/bin/env bash
# Times `coopmat val` over the whole corpus in one process (release build) against spirv-val
# run once per module (and coopmat val once per module, like for like), both with --target-env vulkan1.3, and checks both accept every module.
# Usage: scripts/bench-val.sh [CORPUS_DIR]   (default: $COOPMAT_CORPUS_DIR or
#        corpus-cache/cyllama-vulkan-0.7.0/spv). Peers: $COOPMAT_PEERS_BIN or /opt/coopmat-peers/bin.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-${COOPMAT_CORPUS_DIR:-corpus-cache/cyllama-vulkan-0.7.0/spv}}
peers=${COOPMAT_PEERS_BIN:-/opt/coopmat-peers/bin}
[ -d "$dir" ] || { echo "no corpus at $dir (run cargo xtask corpus)"; exit 1; }
n=$(ls "$dir"/*.spv | wc -l)
cargo build --release -q -p coopmat -p coopmat-val --example val_bench
echo "corpus: $n modules in $dir; nproc $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== coopmat val, one process (parse + validate), release"
/usr/bin/time -f "coopmat val: user %U s, sys %S s, wall %e s" target/release/coopmat val -q --target-env vulkan1.3 "$dir" > /tmp/coopmat-val-bench.txt || true
echo "coopmat: $(grep -c ': valid' /tmp/coopmat-val-bench.txt)/$n valid"
target/release/examples/val_bench "$dir"
echo "== coopmat val, one process per module"
start=$(date +%s.%N); ok=0
for f in "$dir"/*.spv; do target/release/coopmat val -q --target-env vulkan1.3 "$f" > /dev/null && ok=$((ok+1)); done
end=$(date +%s.%N)
echo "coopmat val: $ok/$n valid, wall $(echo "$end - $start" | bc) s"
if [ -x "$peers/spirv-val" ]; then
  echo "== spirv-val, one process per module"
  start=$(date +%s.%N); ok=0
  for f in "$dir"/*.spv; do "$peers/spirv-val" --target-env vulkan1.3 "$f" && ok=$((ok+1)); done
  end=$(date +%s.%N)
  echo "spirv-val: $ok/$n valid, wall $(echo "$end - $start" | bc) s"
else
  echo "spirv-val not found in $peers; skipped"
fi
