#!/usr/bin/env bash
# Builds the streaming-engine workbench (engine_probe.cu + one object per variant group) with
# nvcc for sm_90a (the wgmma variants need it), the groups in parallel. Run from the repository root, here or on the GPU
# machine:  bash scripts/gpu/probe/engine_build.sh [OUT_DIR]   (default .gpu)
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-.gpu}
mkdir -p "$out/obj"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
# ENGINE_EXTRA_FLAGS adds nvcc flags to every object, e.g. -DSPARSE_ENGINE_SMEM_TRACE (the stage
# trace in shared memory instead of a global store a stamp; stream_engine.cuh).
flags=(-std=c++17 -O3 -I. -Inative -DSPARSE_WITH_CUDA=1 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -lineinfo -Xptxas -v)
# shellcheck disable=SC2206
[ -n "${ENGINE_EXTRA_FLAGS:-}" ] && flags+=(${ENGINE_EXTRA_FLAGS})
pids=()
for g in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do
  "$NVCC" "${flags[@]}" -DGROUP=$g -c scripts/gpu/probe/engine_variants.cu -o "$out/obj/group$g.o" 2>"$out/obj/group$g.ptxas.txt" &
  pids+=($!)
done
"$NVCC" "${flags[@]}" -c scripts/gpu/probe/engine_probe.cu -o "$out/obj/main.o" 2>"$out/obj/main.ptxas.txt" &
pids+=($!)
g++ -std=c++17 -O2 -Inative -c native/common/sparse24.cc -o "$out/obj/sparse24.o" &
pids+=($!)
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
if [ $rc != 0 ]; then
  grep -h -B2 -A3 error "$out"/obj/*.ptxas.txt | head -60
  exit 1
fi
"$NVCC" -gencode arch=compute_90a,code=sm_90a "$out"/obj/*.o -o "$out/engine_probe" -ldl
grep -h -E "Compiling entry|spill|Used [0-9]+ registers" "$out"/obj/group*.ptxas.txt | paste - - - 2>/dev/null | sed -E 's/ptxas info *: //g' | awk '{print}' | head -80 >"$out/engine_probe.regs.txt" || true
echo "built $out/engine_probe"
