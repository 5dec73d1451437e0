#!/bin/bash
# The conformance suite's GPU side on the lent machine (one command, sharded so each call stays
# short): `coopmat conformance --device gpu --profile PROFILE --shard I/N` through the NVIDIA driver.
# Carry .devrun (target/release/coopmat, stripped, copied there) and .gl (the Vulkan loader debs of
# the device README). Usage on the lent machine: scripts/conformance-gpu.sh nvidia-h100-580 0/1
# Here, with lavapipe: sid-run target/release/coopmat conformance --device gpu --profile lavapipe-26
set -u
profile=${1:-nvidia-h100-580}; shard=${2:-0/1}
if [ -d .gl ]; then for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
.devrun/coopmat conformance --device gpu --profile "$profile" --shard "$shard"
