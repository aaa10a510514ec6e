#!/usr/bin/env bash
# Builds the streaming-kernel probe (stream_probe.cu) for sm_90 with the static CUDA runtime.
set -euo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p .gpu
nvcc -std=c++17 -O3 -Inative -DSPARSE_WITH_CUDA=1 -gencode arch=compute_90,code=sm_90 --expt-relaxed-constexpr \
  -lineinfo -Xptxas -v scripts/gpu/probe/stream_probe.cu -o .gpu/stream_probe -ldl 2> .gpu/stream_probe.ptxas.txt || {
  cat .gpu/stream_probe.ptxas.txt; exit 1; }
grep -E "spill|Used [0-9]+ registers" .gpu/stream_probe.ptxas.txt | sort | uniq -c | sort -rn | head -20
