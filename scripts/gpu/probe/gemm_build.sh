#!/usr/bin/env bash
# Builds the dense GEMM workbench (gemm_probe.cu) with nvcc for sm_90a (wgmma, setmaxnreg), with
# the engine's trace compiled in (SPARSE_GEMM_TRACE: the trace mode) and the hooks of programmatic
# dependent launch (SPARSE_GEMM_PDL: GEMM_PDL=1).
# Run from anywhere, here or on the GPU machine:
#   bash scripts/gpu/probe/gemm_build.sh [OUT_DIR]   (default .gpu)
# Writes OUT_DIR/gemm_probe, OUT_DIR/gemm_probe.regs.txt (registers and spills per kernel)
# and OUT_DIR/gemm_probe.ptxas.txt (ptxas's full report).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-.gpu}
mkdir -p "$out"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
# SP24=1: the 2:4 f16 variants alone (GEMM_PROBE_SP24 in gemm_probe.cu). GEMM_DEFS: more -D flags
# for an A/B of builds of gemm_engine.cuh's workbench switches (open: v64's
# "-DSPARSE_GEMM_EARLY_PREFETCH" and "-DSPARSE_GEMM_END_READ", not yet measured; v59-v60's
# "-DSPARSE_GEMM_SP_UNROLL2" and "-DSPARSE_GEMM_SS_RUN" are the engine's own since v61, v62's
# "-DSPARSE_GEMM_UN_UNROLL2" since v63, v61's "-DSPARSE_GEMM_EARLY_TEST" removed in v62).
extra=()
[ "${SP24:-0}" = 1 ] && extra+=(-DGEMM_PROBE_SP24)
for d in ${GEMM_DEFS:-}; do extra+=("$d"); done
"$NVCC" -std=c++17 -O3 -I. -Inative -DSPARSE_WITH_CUDA=1 -DSPARSE_GEMM_TRACE -DSPARSE_GEMM_PDL "${extra[@]}" -gencode arch=compute_90a,code=sm_90a \
  --expt-relaxed-constexpr -lineinfo -Xptxas -v scripts/gpu/probe/gemm_probe.cu native/common/sparse24.cc native/common/unstructured_stream.cc \
  -o "$out/gemm_probe" -ldl \
  2>"$out/gemm_probe.ptxas.txt" || { grep -v "^ptxas info" "$out/gemm_probe.ptxas.txt" | head -60; exit 1; }
# One line per kernel: its name, then registers and spills.
awk '/Compiling entry/ { split($0, q, "\047"); name = q[2] }
     /spill stores/ { spills = $5 " spill stores, " $9 " spill loads" }
     /Used [0-9]+ registers/ && name != "" { print name ": " $5 " registers, " spills; name = "" }' \
  "$out/gemm_probe.ptxas.txt" >"$out/gemm_probe.regs.txt"
cat "$out/gemm_probe.regs.txt"
echo "built $out/gemm_probe"
