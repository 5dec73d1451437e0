#!/bin/bash
# The divergence analysis's soundness check over llama.cpp's own dispatches: test-backend-ops -b Vulkan0 on the
# coopmat driver with COOPMAT_ICD_OBSERVE_UNIFORMITY, in 16 shards (one per core) of up to $1 s each, on the lent
# machine (target/llama-bundle.tar.xz carried). The observations come back as $OUT/obs.tar.gz; then, here:
#   tar xzf obs.tar.gz -C /tmp && cargo run --release -p coopmat-icd --example uniformity-report -- /tmp/obs
tar xJf target/llama-bundle.tar.xz -C /tmp
rm -rf /tmp/obs; mkdir -p /tmp/obs
shards=(
 "FLASH_ATTN_EXT|hsk=64,hsv=64,.*type_K=f16" "FLASH_ATTN_EXT|hsk=128,hsv=128,.*type_K=q"
 "FLASH_ATTN_EXT|(hsk=576|hsk=128,hsv=128,.*type_K=(bf|f32|iq))"
 "MUL_MAT|type_a=(f16|bf16|f32)," "MUL_MAT|type_a=q" "MUL_MAT|type_a=[^fbq]" "MUL_MAT_ID|"
 "IM2COL_3D,IM2COL|" "CONV_2D|" "ROPE,ROPE_BACK,SET_ROWS|" "TOP_K,CPY,GET_ROWS,POOL_1D|"
 "SOFT_MAX,CONCAT,LIGHTNING_INDEXER,CONV_3D,POOL_2D|"
 "CONV_TRANSPOSE_1D,ADD,MUL,SUB,DIV,CONT,OUT_PROD,NORM,ARGSORT,RMS_NORM,PAD,ADD_ID,COL2IM_1D,L2_NORM|"
 "SWIGLU,SOFT_MAX_BACK,REGLU,GEGLU_QUICK,GEGLU_ERF,GEGLU,UPSCALE,REPEAT,SWIGLU_OAI,CUMSUM,TRUNC,ROUND,FLOOR,CEIL,SET,DSV4_HC_COMB,SUM_ROWS,RMS_NORM_BACK,REPEAT_BACK,MEAN,DUP,DSV4_HC_POST,CONV_1D_DW,TANH,SWIGLU_CLAMP|"
 "STEP,SOFTPLUS,SILU,SIGMOID,SGN,RELU,NEG,HARDSWISH,HARDSIGMOID,GELU_QUICK,GELU_ERF,GELU,EXPM1,EXP,ELU,CONV_TRANSPOSE_2D,CONV_2D_DW,CLAMP,ABS,SUM,FILL,ARGMAX,SQRT,SQR,SIN,LOG,LEAKY_RELU,DSV4_HC_PRE,COS,ACC,XIELU,TRI,SCALE,GET_ROWS_BACK,DIAG_MASK_INF,DIAG,ROLL,PAD_REFLECT_1D,GROUP_NORM,CROSS_ENTROPY_LOSS_BACK,CROSS_ENTROPY_LOSS,COUNT_EQUAL,ARANGE,TIMESTEP_EMBEDDING,SILU_BACK,OPT_STEP_SGD,OPT_STEP_ADAMW|"
 "MUL_MAT_HADAMARD,MUL_MAT_W4A8,MUL_MAT_W4A4,MUL_MAT_ID_W4A8,MUL_MAT_ID_W4A4,SSM_CONV,GATED_DELTA_NET,SSM_SCAN,RWKV_WKV7,RWKV_WKV6,GATED_LINEAR_ATTN,SOLVE_TRI|"
)
k=0
for s in "${shards[@]}"; do
  k=$((k+1)); ops=${s%%|*}; pat=${s#*|}
  args=(-b Vulkan0 -o "$ops"); [ -n "$pat" ] && args+=(-p "$pat")
  COOPMAT_ICD_OBSERVE_UNIFORMITY=/tmp/obs timeout "$1" /tmp/llama-bundle/run.sh test-backend-ops "${args[@]}" \
    > /tmp/shard$k.log 2>&1 &
done
wait
for k in $(seq 1 $k); do echo "== shard $k: ${shards[$((k-1))]}"; grep -cE "OK|FAIL" /tmp/shard$k.log; grep -E "FAIL|Failed" /tmp/shard$k.log | head -3; tail -2 /tmp/shard$k.log; done > $OUT/shards.txt
tar czf $OUT/obs.tar.gz -C /tmp obs
