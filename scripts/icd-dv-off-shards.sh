#!/bin/bash
# test-backend-ops -b Vulkan0 on the coopmat driver, on the lent machine's 16 cores (target/llama-bundle.tar.xz
# carried): MUL_MAT, MUL_MAT_ID and FLASH_ATTN_EXT with GGML_VK_DISABLE_COOPMAT2_DECODE_VECTOR=1 (ggml's plain
# NV_coopmat2 path), and TOP_K and LIGHTNING_INDEXER, in 15 shards of up to $1 s. Per-shard counts in $OUT/summary.txt,
# the logs as $OUT/logs.tar.gz.
tar xJf target/llama-bundle.tar.xz -C /tmp
shards=(
 "dv0|MUL_MAT|type_a=(f16|bf16|f32)," "dv0|MUL_MAT|type_a=q" "dv0|MUL_MAT|type_a=[^fbq]"
 "dv0|MUL_MAT_ID|type_a=q" "dv0|MUL_MAT_ID|type_a=[^q]"
 "dv0|FLASH_ATTN_EXT|hsk=64,hsv=64," "dv0|FLASH_ATTN_EXT|hsk=128,hsv=128,.*type_K=f16"
 "dv0|FLASH_ATTN_EXT|hsk=128,hsv=128,.*type_K=[^f]" "dv0|FLASH_ATTN_EXT|hsk=(40|72|80|96),"
 "dv0|FLASH_ATTN_EXT|hsk=(192|256)," "dv0|FLASH_ATTN_EXT|hsk=(320|512|576),"
 "dv1|TOP_K|ne=\[[0-9]{1,3}," "dv1|TOP_K|ne=\[[0-9]{4,}," "dv1|LIGHTNING_INDEXER|type_K=f32" "dv1|LIGHTNING_INDEXER|type_K=[^f]|type_K=f16"
)
mkdir -p /tmp/logs; k=0
for s in "${shards[@]}"; do
  k=$((k+1)); IFS='|' read -r dv op pat <<<"$s"
  env_dv=(); [ "$dv" = dv0 ] && env_dv=(GGML_VK_DISABLE_COOPMAT2_DECODE_VECTOR=1)
  env "${env_dv[@]}" timeout "$1" /tmp/llama-bundle/run.sh test-backend-ops -b Vulkan0 -o "$op" -p "$pat" \
    > /tmp/logs/shard$k.log 2>&1 &
done
wait
for k in $(seq 1 $k); do
  f=/tmp/logs/shard$k.log
  echo "shard $k (${shards[$((k-1))]}): ok $(grep -c 'OK' $f) fail $(grep -c 'FAIL' $f) not-supported $(grep -c 'not supported' $f); $(grep -m1 -o 'matrix cores: [A-Za-z0-9_]*' $f); last: $(tail -1 $f | tr -d '\033' | cut -c1-80)"
done > $OUT/summary.txt
tar czf $OUT/logs.tar.gz -C /tmp logs
