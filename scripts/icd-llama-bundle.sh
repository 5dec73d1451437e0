#!/usr/bin/env bash
# Packs llama.cpp's test programs (from the install-peers chroot), their libraries (Debian's glibc and Vulkan loader
# included) and the coopmat driver into target/llama-bundle.tar.xz, to run on a machine without the chroot, e.g. the
# lent device machine's 16 cores: `tar xJf llama-bundle.tar.xz; llama-bundle/run.sh test-backend-ops -b Vulkan0`.
# run.sh starts each program through the bundled ld.so, so nothing of the host's userland is used.
set -euo pipefail
R=${COOPMAT_PEERS_ROOT:-/opt/coopmat-peers/root}
T=$R/usr/libexec/x86_64-linux-gnu/llama.cpp-tests
L=$R/usr/lib/x86_64-linux-gnu
repo=$(cd "$(dirname "$0")/.." && pwd)
B=$repo/target/llama-bundle
[ -x "$T/test-backend-ops" ] || { echo "llama.cpp's tests are not installed: run install-peers.sh --with-llama" >&2; exit 2; }
rm -rf "$B"; mkdir -p "$B/lib" "$B/icd"
(cd "$repo" && cargo xtask icd --root "$B/icd" >/dev/null)
strip "$B/icd/libcoopmat_icd.so"
cp -L "$T/test-backend-ops" "$T/test-llama-archs" "$B/"
for f in libggml.so.0 libggml-base.so.0 libllama.so.0 libllama-common.so.0 libstdc++.so.6 libm.so.6 libc.so.6 \
  libgcc_s.so.1 libgomp.so.1 libvulkan.so.1 libssl.so.3 libcrypto.so.3 libz.so.1 libzstd.so.1; do
  cp -L "$L/$f" "$B/lib/"
done
cp -L "$R/lib64/ld-linux-x86-64.so.2" "$B/lib/"
# ggml looks for its backends beside the executable, which under ld.so is lib/ itself.
cp "$L"/ggml/backends0/libggml-{vulkan,cpu-x64,cpu-haswell,cpu-skylakex,cpu-icelake,cpu-sapphirerapids,cpu-zen4}.so "$B/lib/"
cat >"$B/run.sh" <<'RUN'
#!/bin/bash
# run.sh PROGRAM ARGS: a bundled llama.cpp program on the bundled coopmat driver.
here=$(cd "$(dirname "$0")" && pwd)
prog=$1; shift
cd "$here/lib"
exec env VK_DRIVER_FILES="$here/icd/coopmat_icd.json" GGML_VK_VISIBLE_DEVICES=0 \
  "$here/lib/ld-linux-x86-64.so.2" --library-path "$here/lib" "$here/$prog" "$@"
RUN
chmod +x "$B/run.sh"
tar -C "$repo/target" -cJf "$repo/target/llama-bundle.tar.xz" llama-bundle
ls -la "$repo/target/llama-bundle.tar.xz"
