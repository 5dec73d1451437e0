#!/usr/bin/env bash
# Times `coopmat dis` (release build) over the whole corpus in one process (`--batch`, output
# discarded and, separately, written to files), then once per module, against spirv-dis once
# per module; and counts byte-identical outputs in default and --raw-id modes.
# Usage: scripts/bench-dis.sh [CORPUS_DIR]   (default: $COOPMAT_CORPUS_DIR or
#        corpus-cache/cyllama-vulkan-0.7.0/spv). Peers: $COOPMAT_PEERS_BIN or /opt/coopmat-peers/bin.
# COOPMAT_BIN=path uses an already built coopmat binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-${COOPMAT_CORPUS_DIR:-corpus-cache/cyllama-vulkan-0.7.0/spv}}
peers=${COOPMAT_PEERS_BIN:-/opt/coopmat-peers/bin}
[ -d "$dir" ] || { echo "no corpus at $dir (run cargo xtask corpus)"; exit 1; }
n=$(ls "$dir"/*.spv | wc -l)
if [ -z "${COOPMAT_BIN:-}" ]; then
  cargo build --release -q -p coopmat
  COOPMAT_BIN=target/release/coopmat
fi
bin=$COOPMAT_BIN
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "corpus: $n modules in $dir; nproc $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== coopmat dis --batch (one process: read + parse + disassemble), output discarded"
for mode in "" "--raw-id"; do
  for run in 1 2 3; do
    /usr/bin/time -f "  coopmat dis --batch $mode: user %U s, sys %S s, wall %e s" "$bin" dis --batch $mode "$dir" 2>&1 | sed 's/^dis/  dis/'
  done
done

echo "== coopmat dis --batch, writing one .spvasm per module"
/usr/bin/time -f "  coopmat dis --batch -o DIR: user %U s, sys %S s, wall %e s" "$bin" dis --batch "$dir" -o "$tmp/ours" 2>&1
/usr/bin/time -f "  coopmat dis --batch --raw-id -o DIR: user %U s, sys %S s, wall %e s" "$bin" dis --batch --raw-id "$dir" -o "$tmp/ours-raw" 2>&1

echo "== coopmat dis, one process per module"
TIMEFORMAT="  coopmat dis x $n: wall %R s, user %U s, sys %S s"
time (for f in "$dir"/*.spv; do "$bin" dis "$f" -o /dev/null; done)

if [ -x "$peers/spirv-dis" ]; then
  echo "== spirv-dis, one process per module"
  mkdir -p "$tmp/ref" "$tmp/ref-raw"
  TIMEFORMAT="  spirv-dis x $n: wall %R s, user %U s, sys %S s"
  time (for f in "$dir"/*.spv; do b=$(basename "$f" .spv); "$peers/spirv-dis" "$f" -o "$tmp/ref/$b.spvasm"; done)
  for f in "$dir"/*.spv; do b=$(basename "$f" .spv); "$peers/spirv-dis" --raw-id "$f" -o "$tmp/ref-raw/$b.spvasm"; done
  for pair in "ref ours default" "ref-raw ours-raw --raw-id"; do
    set -- $pair
    same=0
    for f in "$tmp/$1"/*.spvasm; do cmp -s "$f" "$tmp/$2/$(basename "$f")" && same=$((same+1)); done
    echo "  byte-identical ($3): $same/$n"
  done
else
  echo "spirv-dis not found in $peers; skipped"
fi
