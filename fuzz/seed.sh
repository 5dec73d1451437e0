#!/bin/sh
# Seeds the fuzz corpora from the real-shader corpus (run `cargo xtask corpus` first).
#   read_binary: every module under 8 KiB plus the ten smallest KHR and NV cooperative ones.
#   validate:    the same binaries as read_binary.
#   assemble:    spirv-dis text (friendly names, and --raw-id with the preserve-ids flag byte)
#                of the 80 smallest modules and 20 smallest cooperative ones, under 60 KB each.
#   engine:      the read_binary binaries plus the repository's test shaders (.spv under crates/).
#   amber:       the compute scripts of ../shared/amber under 16 KiB and the repository's examples.
#   npy:         small arrays of every dtype, both orders, version 1 and 2 headers (made here).
#   lower:       the cooperative-matrix binaries of read_binary, the repository's test shaders, and the
#                coop2-to-khr test GEMM (crates/lower/tests/coop2) compiled by glslang when present.
#   cli:         command lines (NUL-separated) with a file `f` after two NULs: every command but gpu,
#                diff and ggml-matmul, on a small module, its text, an .npy array and an Amber script.
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
# engine: the same binaries and the repository's compiled test shaders.
mkdir -p "$here/corpus/engine"
cp "$here"/corpus/read_binary/* "$here/corpus/engine/"
find "$here/../crates" -name '*.spv' -size -64k -exec cp {} "$here/corpus/engine/" \;
# amber: the shared CTS/Amber compute scripts and the examples.
mkdir -p "$here/corpus/amber"
amber=${COOPMAT_AMBER_DIR:-$here/../../shared/amber}
[ -d "$amber" ] && find "$amber" -name '*.amber' -size -16k -exec cp {} "$here/corpus/amber/" \;
cp "$here"/../examples/*.amber "$here/corpus/amber/"
# npy: every dtype numpy writes for numbers, C and Fortran order, header versions 1 and 2.
mkdir -p "$here/corpus/npy"
python3 - "$here/corpus/npy" <<'PY'
import struct, sys
out = sys.argv[1]
for descr, size in [("|u1", 1), ("|i1", 1), ("<u2", 2), (">i2", 2), ("<f2", 2), ("<u4", 4), ("<i4", 4),
                    ("<f4", 4), (">f4", 4), ("<u8", 8), ("<i8", 8), ("<f8", 8), ("|b1", 1), ("<c8", 8)]:
    for fortran in (False, True):
        for version in (1, 2):
            shape = (2, 3) if descr != "<f8" else (2, 1, 3)
            n = 1
            for d in shape:
                n *= d
            header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
            fixed = 10 if version == 1 else 12
            header += " " * (-(fixed + len(header) + 1) % 64) + "\n"
            length = struct.pack("<H" if version == 1 else "<I", len(header))
            data = bytes((i * 7 + 1) & 0xFF for i in range(n * size))
            name = "%s_%s_v%d.npy" % (descr.replace("<", "le").replace(">", "be").replace("|", ""), "F" if fortran else "C", version)
            open("%s/%s" % (out, name), "wb").write(b"\x93NUMPY" + bytes([version, 0]) + length + header.encode() + data)
PY
# lower: cooperative-matrix modules (the rewrites return at once on anything else), including the
# engine corpus's grown ones.
mkdir -p "$here/corpus/lower"
cp $(grep -l -E "SPV_NV_cooperative_matrix|SPV_KHR_cooperative_matrix|SPV_QCOM" "$here"/corpus/engine/*) "$here/corpus/lower/"
glslang=${COOPMAT_PEERS_BIN:-/opt/coopmat-peers/bin}/glslangValidator
if [ -x "$glslang" ]; then
    for c in "$here"/../crates/exec/tests/coop2/*.comp; do
        "$glslang" -V --target-env vulkan1.3 -DV=4 -DBS=4 -o "$here/corpus/lower/$(basename "$c" .comp).spv" "$c" > /dev/null || true
    done
    cat "$here"/../crates/lower/tests/coop2/header.glsl "$here"/../crates/lower/tests/coop2/gemm.glsl > /tmp/coopmat-seed.comp
    "$glslang" -V --target-env vulkan1.3 -o "$here/corpus/lower/tensor_gemm.spv" /tmp/coopmat-seed.comp > /dev/null || true
    rm -f /tmp/coopmat-seed.comp
fi
# cli: command lines of every sandboxed command, with a module, its text, an array or a script as `f`.
mkdir -p "$here/corpus/cli"
small=$(ls -S "$here"/corpus/read_binary/*.spv | tail -1)
coopmod=$(grep -l SPV_KHR_cooperative_matrix "$here"/corpus/read_binary/*.spv | xargs ls -S | tail -1)
"$dis" "$coopmod" > /tmp/coopmat-seed.spvasm
npy=$(ls "$here"/corpus/npy/leu4_C_v1.npy)
seed() { name=$1; file=$2; shift 2; { printf '%s' "$1"; shift; for a in "$@"; do printf '\000%s' "$a"; done; printf '\000\000'; cat "$file"; } > "$here/corpus/cli/$name"; }
seed dis "$coopmod" dis f
seed dis_raw "$small" dis --raw-id --offsets --comment f
seed dis_nested "$coopmod" dis --nested-indent --reorder-blocks f -o out.spvasm
seed as /tmp/coopmat-seed.spvasm as f -o out.spv
seed info "$coopmod" info --json f
seed val "$coopmod" val --target-env vulkan1.3 --profile nvidia-h100-580 f
seed lint "$coopmod" lint --format sarif f
seed lint_json "$coopmod" lint --format json -W coopmat-nonuniform-operand f
seed lower "$coopmod" lower f -o out.spv --pass nv-to-khr
[ -f "$here/corpus/lower/tensor_gemm.spv" ] && seed lower_coop2 "$here/corpus/lower/tensor_gemm.spv" lower f -o out.spv --pass coop2-to-khr --pass strip-decode-vector
seed run "$small" run f --groups 1,1,1 --buffer 0:0=zeros:256 --buffer 0:1=const:64:7 --spec 0=4 --push 0x01000000
seed run_npy "$npy" run f --groups 2,1,1 --buffer 0:0=f.npy --out 0:0=o.npy:u32
seed run_rand "$small" run f --buffer 0:0=random:1024:9 --buffer 1:0[0]=zeros:16 --buffer 1:0[1]=zeros:16 --robust
seed coopvec "$npy" coopvec-convert f.npy -o w.bin --dst-type float16 --dst-layout inferencing-optimal
seed amber "$here/../examples/khr_coopmat_gemm.amber" amber f
seed amber_dir "$here/../examples/khr_coopmat_gemm.amber" amber -v .
rm -f /tmp/coopmat-seed.spvasm
echo "seeds: $(ls "$here/corpus/read_binary" | wc -l) binaries, $(ls "$here/corpus/assemble" | wc -l) texts, $(ls "$here/corpus/engine" | wc -l) engine modules, $(ls "$here/corpus/amber" | wc -l) scripts, $(ls "$here/corpus/npy" | wc -l) arrays, $(ls "$here/corpus/lower" | wc -l) lowering inputs, $(ls "$here/corpus/cli" | wc -l) command lines"
