#!/bin/bash
# Runs every FLASH_ATTN_EXT case of test-backend-ops -b Vulkan0 in 16 shards (one per core) for up to $1 s.
tar xJf target/llama-bundle.tar.xz -C /tmp
filters=(
 'hsk=64,hsv=64,.*type_K=f16' 'hsk=64,hsv=64,.*type_K=q' 'hsk=64,hsv=64,.*type_K=(bf|f32|iq)'
 'hsk=72,hsv=72,.*type_K=f16' 'hsk=72,hsv=72,.*type_K=(q|bf|f32|iq)'
 'hsk=128,hsv=128,.*type_K=f16' 'hsk=128,hsv=128,.*type_K=(q|bf|f32|iq)'
 'hsk=40,' 'hsk=(80|96),' 'hsk=192,' 'hsk=256,' 'hsk=320,' 'hsk=512,' 'hsk=576,'
 'hsk=(128,hsv=(64|96)|64,hsv=(128|72)|65,|72,hsv=64),' )
k=0
for f in "${filters[@]}"; do
  k=$((k+1))
  timeout $1 /tmp/llama-bundle/run.sh test-backend-ops -b Vulkan0 -o FLASH_ATTN_EXT -p "$f" > $OUT/shard$k.log 2>&1 &
done
wait
nproc > $OUT/nproc
