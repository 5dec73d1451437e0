#!/bin/bash
# Runs the layout-cost variants on a Vulkan device: bench/layout/run.sh COOPMAT SPV_DIR [GROUPS]
# Prints one line per variant: name and the GPU time of the timed dispatches.
set -u
coopmat=$1; dir=$2; groups=${3:-2112}
for spv in "$dir"/*.spv; do
  name=$(basename "$spv" .spv)
  out=$("$coopmat" gpu run "$spv" --groups "$groups,1,1" --buffer 0:0=random:1048576:1 \
        --buffer 0:1=zeros:$((groups * 4 * 256 * 4)) --repeat 20 2>&1)
  echo "$name $(echo "$out" | grep -o '[0-9.]* ms between timestamps')"
done
