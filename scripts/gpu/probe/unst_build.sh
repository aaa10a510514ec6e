#!/usr/bin/env bash
# Builds the unstructured workbench (unst_probe.cu + one object per decode kind and ring
# capacity, nproc at a time) with nvcc for sm_90a. Run from anywhere, here or on the GPU machine:
#   bash scripts/gpu/probe/unst_build.sh [OUT_DIR]   (default .gpu)
# Writes OUT_DIR/unst_probe and OUT_DIR/unst_probe.regs.txt (registers and spills per kernel);
# stops if ptxas reports a spill or serialised wgmma. UNST_ONLY="10 12 15" builds only those
# kinds' groups (the others as empty stubs: their kinds then have no variants). Kinds 28, 30 and
# 31 (two blocks per SM at N = 64: their N = 64 kernels spill 24-32 bytes, as measured in v25)
# are built only when UNST_ONLY names them, and their spills do not stop the build.
# UNST_EXTRA_FLAGS adds nvcc flags to every object, e.g. -DSPARSE_ENGINE_SMEM_TRACE (the stage
# trace in shared memory, the lean kinds traced too: `stages` on unpr, unrowp).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-.gpu}
mkdir -p "$out/unst_obj"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
export NVCC out
flags="-std=c++17 -O3 -I. -Inative -DSPARSE_WITH_CUDA=1 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -lineinfo -Xptxas -v ${UNST_EXTRA_FLAGS:-}"
export flags
rm -f "$out"/unst_obj/*
spilling="28 30 31"  # opt-in kinds whose spills are known (above)
jobs=()
for kg in 0_{0..4} 1_{0..4} 2_{0..4} 3_{0..4} 4_{2..4} 5_{1..4} 6_{0..4} 7_{0..4} 8_{1..4} 9_{0..4} 10_{0..4} 11_{0..4} 12_{1..3} 13_{1..3} {14..19}_{1..3} {20..21}_{0..3} {22..31}_{1..3} {32..34}_{1..4}; do  # (kind, capacity group): unst_variants.h
  kind=${kg%_*} lean= stub=
  { [ "$kind" = 12 ] || { [ "$kind" -ge 14 ] && [ "$kind" -le 24 ]; }; } && lean=-DSPARSE_ENGINE_LEAN  # (unst_variants.h)
  if [ -n "${UNST_ONLY:-}" ] && ! [[ " $UNST_ONLY " == *" $kind "* ]]; then stub=-DUNST_STUB; fi
  if [[ " $spilling " == *" $kind "* ]] && ! [[ " ${UNST_ONLY:-} " == *" $kind "* ]]; then stub=-DUNST_STUB; fi
  jobs+=("group$kg -DKIND=$kind -DGROUP=${kg#*_} $lean $stub scripts/gpu/probe/unst_variants.cu")
done
jobs+=("main -DMAIN scripts/gpu/probe/unst_probe.cu")
rc=0
printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -I{} bash -c 'set -- {}; n=$1; shift; src=${@: -1}; def=("${@:1:$#-1}");
  $NVCC $flags "${def[@]}" -c "$src" -o "$out/unst_obj/$n.o" 2>"$out/unst_obj/$n.ptxas.txt"' || rc=1
g++ -std=c++17 -O2 -pthread -Inative -c native/common/unstructured_stream.cc -o "$out/unst_obj/unstructured_stream.o" || rc=1
if [ $rc != 0 ]; then
  grep -h -B2 -A3 error "$out"/unst_obj/*.ptxas.txt | head -60
  exit 1
fi
"$NVCC" -gencode arch=compute_90a,code=sm_90a "$out"/unst_obj/*.o -o "$out/unst_probe" -ldl
grep -h -E "Compiling entry|spill|Used [0-9]+ registers" "$out"/unst_obj/group*.ptxas.txt | paste - - - |
  sed -E 's/ptxas info *: //g' >"$out/unst_probe.regs.txt" || true
checked=()
for f in "$out"/unst_obj/group*.ptxas.txt; do
  kind=$(basename "$f" .ptxas.txt)
  kind=${kind#group}
  [[ " $spilling " == *" ${kind%_*} "* ]] || checked+=("$f")
done
if grep -q -E "[1-9][0-9]* bytes spill" "${checked[@]}"; then
  echo "error: spills (see $out/unst_probe.regs.txt)"
  exit 1
fi
if grep -q -i "serializ" "$out"/unst_obj/*.ptxas.txt; then
  grep -h -i "serializ" "$out"/unst_obj/*.ptxas.txt | sort -u | head
  echo "error: ptxas serialises wgmma"; exit 1
fi
echo "built $out/unst_probe"
