#!/usr/bin/env bash
# Issue 5, v4 call 1: correctness of the tensor-core kernels (CUDA kernel tests), the SpMM
# variant sweep on the LLM layers (f16, N = 8..64), and the attention SDDMM suite with the
# tensor-core kernel against the SIMT one (SPARSE_SDDMM_VARIANT=simt), same baselines.
set -uo pipefail
source scripts/gpu/setup.sh
mkdir -p ../shared && tar xJf .gpu/dlmc.tar.xz -C ../shared
date -u +"date %Y-%m-%dT%H:%MZ"
M="node --import tsx node_modules/mocha/bin/_mocha --no-config --timeout 0"
echo "== kernel tests (CUDA)"
start=$(date +%s)
timeout 200 $M test/kernels/kernels.test.ts test/kernels/binding.test.ts > $OUT/tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - start )) s"
grep -E "passing|failing|pending" $OUT/tests.txt | head -5
grep -A12 -E "^\s+[0-9]+\) " $OUT/tests.txt | head -60
echo "== attention SDDMM: tc (default) and simt"
for v in auto simt; do
  start=$(date +%s)
  SPARSE_SDDMM_VARIANT=$v timeout 150 node bin/run.js bench --suite attention --attention-sparsity 0.7,0.9,0.95 \
    --max-reps 50 --min-ms 5 --jsonl $OUT/att-$v.jsonl --json > /dev/null 2> $OUT/att-$v.err
  echo "att $v rc=$? $(( $(date +%s) - start )) s"; tail -2 $OUT/att-$v.err
done
echo "== SpMM variant sweep, LLM f16 N=8,16,32,64"
start=$(date +%s)
SPARSE_SPMM_SWEEP=$OUT/variants.jsonl SPARSE_SPMM_SWEEP_SET=llm SPARSE_SPMM_SWEEP_NS=8,16,32,64 SPARSE_SPMM_SWEEP_DTYPES=f16 \
  timeout 170 $M test/kernels/spmm-variants.sweep.test.ts 2>&1 | grep -E "problems|rows in|passing|failing|Error" | head
echo "sweep $(( $(date +%s) - start )) s"
