#!/usr/bin/env bash
# Builds the unstructured scatter workbench (unst_probe.cu + one object per ring capacity, in
# parallel) with nvcc for sm_90a. Run from anywhere, here or on the GPU machine:
#   bash scripts/gpu/probe/unst_build.sh [OUT_DIR]   (default .gpu)
# Writes OUT_DIR/unst_probe and OUT_DIR/unst_probe.regs.txt (registers and spills per kernel).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-.gpu}
mkdir -p "$out/unst_obj"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
flags=(-std=c++17 -O3 -I. -Inative -DSPARSE_WITH_CUDA=1 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -lineinfo -Xptxas -v)
pids=()
for g in 0 1 2 3 4; do
  "$NVCC" "${flags[@]}" -DGROUP=$g -c scripts/gpu/probe/unst_variants.cu -o "$out/unst_obj/group$g.o" 2>"$out/unst_obj/group$g.ptxas.txt" &
  pids+=($!)
done
"$NVCC" "${flags[@]}" -c scripts/gpu/probe/unst_probe.cu -o "$out/unst_obj/main.o" 2>"$out/unst_obj/main.ptxas.txt" &
pids+=($!)
g++ -std=c++17 -O2 -Inative -c native/common/unstructured_stream.cc -o "$out/unst_obj/unstructured_stream.o" &
pids+=($!)
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
if [ $rc != 0 ]; then
  grep -h -B2 -A3 error "$out"/unst_obj/*.ptxas.txt | head -60
  exit 1
fi
"$NVCC" -gencode arch=compute_90a,code=sm_90a "$out"/unst_obj/*.o -o "$out/unst_probe" -ldl
grep -h -E "Compiling entry|spill|Used [0-9]+ registers" "$out"/unst_obj/group*.ptxas.txt | paste - - - |
  sed -E 's/ptxas info *: //g' >"$out/unst_probe.regs.txt" || true
if grep -q -E "[1-9][0-9]* bytes spill" "$out/unst_probe.regs.txt"; then echo "warning: spills (see $out/unst_probe.regs.txt)"; fi
echo "built $out/unst_probe"
