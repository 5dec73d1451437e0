#!/usr/bin/env bash
# Runs llama.cpp's own programs on the coopmat Vulkan driver (crates/icd).
#
# Needs the peers with llama.cpp: `sudo bash ../shared/tools/install-peers.sh --with-llama` (Debian sid's
# b11669 test-backend-ops, test-llama-archs, llama-bench, llama-quantize in the chroot /opt/coopmat-peers/root).
# The driver and its manifest are built and copied into the chroot (the programs load it from there).
#
# Usage: scripts/icd-llama.sh quick            ADD, MUL_MAT q4_0 (both cm2 modes in CI), test-llama-archs -a llama -b Vulkan0 (the CI subset)
#        scripts/icd-llama.sh ops [OP...]      test-backend-ops -b Vulkan0 for each OP (default MUL_MAT MUL_MAT_ID FLASH_ATTN_EXT)
#        scripts/icd-llama.sh archs            test-llama-archs -s 1 (every architecture)
#        scripts/icd-llama.sh bench            llama-bench on a tiny q4_0 model: the driver, lavapipe, ggml's CPU backend
#        scripts/icd-llama.sh run PROGRAM ARGS any program inside the chroot with the driver selected
# Environment passed through: GGML_VK_DISABLE_COOPMAT2_DECODE_VECTOR, GGML_VK_DISABLE_COOPMAT2, COOPMAT_ICD_*.
set -euo pipefail
R=${COOPMAT_PEERS_ROOT:-/opt/coopmat-peers/root}
T=/usr/libexec/x86_64-linux-gnu/llama.cpp-tests
repo=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$R$T/test-backend-ops" ] || { echo "llama.cpp's tests are not installed: run install-peers.sh --with-llama" >&2; exit 2; }
(cd "$repo" && cargo xtask icd --root "$R/opt/coopmat-icd" >/dev/null)
mountpoint -q "$R/proc" || mount -t proc proc "$R/proc"
mountpoint -q "$R/dev" || mount --bind /dev "$R/dev"
passthrough=()
for v in $(env | grep -oE '^(GGML_VK_[A-Z0-9_]+|COOPMAT_ICD_[A-Z_]+)=' | tr -d =); do passthrough+=("$v=${!v}"); done
in_root() { chroot "$R" env GGML_VK_VISIBLE_DEVICES=0 "${passthrough[@]}" "$@"; }
driver() { in_root VK_DRIVER_FILES=/opt/coopmat-icd/coopmat_icd.json "$@"; }
lavapipe() { in_root VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.json "$@"; }
case "${1:-quick}" in
quick)
  driver $T/test-backend-ops -b Vulkan0 -o ADD
  driver $T/test-backend-ops -b Vulkan0 -o MUL_MAT -p type_a=q4_0,type_b=f32,m=16,n=9,k=256
  driver $T/test-llama-archs -a llama -s 1 -b Vulkan0 ;;
ops)
  shift; ops=("$@"); [ ${#ops[@]} -gt 0 ] || ops=(MUL_MAT MUL_MAT_ID FLASH_ATTN_EXT)
  for op in "${ops[@]}"; do driver $T/test-backend-ops -b Vulkan0 -o "$op"; done ;;
archs)
  driver $T/test-llama-archs -s 1 ;;
bench)
  in_root rm -rf /tmp/coopmat-models; in_root mkdir -p /tmp/coopmat-models
  driver $T/test-llama-archs -a llama -s 1 -o /tmp/coopmat-models >/dev/null
  in_root llama-quantize /tmp/coopmat-models/llama-dense.gguf /tmp/coopmat-models/llama-q4_0.gguf q4_0 >/dev/null
  m=/tmp/coopmat-models/llama-q4_0.gguf
  lscpu | grep -E "Model name|^CPU\(s\)|Flags" | sed 's/Flags:.*\(avx512f\).*/Flags: ... avx512f .../' || true
  echo "== coopmat driver"; driver llama-bench -m $m -ngl 99 -p 64 -n 16 -r 3
  echo "== lavapipe"; lavapipe llama-bench -m $m -ngl 99 -p 64 -n 16 -r 3
  echo "== ggml CPU backend"; in_root llama-bench -m $m -ngl 0 -dev none -p 64 -n 16 -r 3 ;;
run)
  shift; driver "$@" ;;
*)
  sed -n 2,13p "$0"; exit 2 ;;
esac
