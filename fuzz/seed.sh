#!/bin/sh
# Seeds the fuzz corpora from the real-shader corpus (run `cargo xtask corpus` first).
#   read_binary: every module under 8 KiB plus the ten smallest KHR and NV cooperative ones.
#   validate:    the same binaries as read_binary.
#   assemble:    spirv-dis text (friendly names, and --raw-id with the preserve-ids flag byte)
#                of the 80 smallest modules and 20 smallest cooperative ones, under 60 KB each.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
spv=${COOPMAT_CORPUS_DIR:-$here/../corpus-cache/cyllama-vulkan-0.7.0/spv}
dis=${COOPMAT_PEERS_BIN:-/opt/coopmat-peers/bin}/spirv-dis
mkdir -p "$here/corpus/read_binary" "$here/corpus/assemble"
cd "$spv"
cp $(find . -size -8k -name '*.spv') "$here/corpus/read_binary/"
for ext in SPV_NV_cooperative_matrix2 SPV_KHR_cooperative_matrix; do
    cp $(grep -l "$ext" ./*.spv | xargs ls -S | tail -10) "$here/corpus/read_binary/"
done
coop=$(grep -l -E "SPV_NV_cooperative_matrix2|SPV_KHR_cooperative_matrix" ./*.spv | xargs ls -S | tail -20)
for f in $(ls -S | tail -80) $coop; do
    for p in 0 1; do
        if [ $p = 1 ]; then "$dis" --raw-id "$f" > /tmp/coopmat-seed.txt; else "$dis" "$f" > /tmp/coopmat-seed.txt; fi
        [ "$(stat -c %s /tmp/coopmat-seed.txt)" -lt 60000 ] || continue
        { printf "\\00$p"; cat /tmp/coopmat-seed.txt; } > "$here/corpus/assemble/$(basename "$f" .spv)_$p.txt"
    done
done
rm -f /tmp/coopmat-seed.txt
# validate: the same binaries as read_binary.
mkdir -p "$here/corpus/validate"
cp "$here"/corpus/read_binary/* "$here/corpus/validate/"
echo "seeds: $(ls "$here/corpus/read_binary" | wc -l) binaries, $(ls "$here/corpus/assemble" | wc -l) texts"
