#!/usr/bin/env bash
# Issue 5, v4c: two strips per warp in the tensor-core SpMM (variants "_r2", since reverted:
# slower, BENCHMARKS.md): CUDA kernel tests (every variant) and the SpMM variant sweep on the
# LLM layers (f16, N = 8..64). Runs against whatever build is packed.
set -uo pipefail
source scripts/gpu/setup.sh
date -u +"date %Y-%m-%dT%H:%MZ"
M="node --import tsx node_modules/mocha/bin/_mocha --no-config --timeout 0"
timeout 120 $M test/kernels/kernels.test.ts test/kernels/binding.test.ts test/kernels/tc-format.test.ts > $OUT/tests.txt 2>&1; echo "tests rc=$?"
grep -E "passing|failing|pending" $OUT/tests.txt | head -5
grep -A12 -E "^\s+[0-9]+\) " $OUT/tests.txt | head -30
start=$(date +%s)
SPARSE_SPMM_SWEEP=$OUT/variants.jsonl SPARSE_SPMM_SWEEP_SET=llm SPARSE_SPMM_SWEEP_NS=8,16,32,64 SPARSE_SPMM_SWEEP_DTYPES=f16 \
  timeout 200 $M test/kernels/spmm-variants.sweep.test.ts 2>&1 | grep -E "problems|rows in|passing|failing|Error" | head
echo "sweep $(( $(date +%s) - start )) s"
