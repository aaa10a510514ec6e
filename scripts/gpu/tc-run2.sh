#!/usr/bin/env bash
# Issue 5, v4 call 2: tensor-core kernels on 16 x 128 tiles (SpMM) and with prefetched
# indices (SDDMM): CUDA kernel tests, the SpMM sweep on the LLM layers (f16, N = 8..64),
# the attention SDDMM suite (tensor cores against SIMT, same baselines), and a DLMC
# SDDMM f16 A/B.
set -uo pipefail
source scripts/gpu/setup.sh
mkdir -p ../shared && tar xJf .gpu/dlmc.tar.xz -C ../shared
date -u +"date %Y-%m-%dT%H:%MZ"
M="node --import tsx node_modules/mocha/bin/_mocha --no-config --timeout 0"
echo "== kernel tests (CUDA)"
timeout 200 $M test/kernels/kernels.test.ts test/kernels/binding.test.ts > $OUT/tests.txt 2>&1; echo "tests rc=$?"
grep -E "passing|failing|pending" $OUT/tests.txt | head -5
grep -A12 -E "^\s+[0-9]+\) " $OUT/tests.txt | head -40
echo "== SpMM variant sweep, LLM f16 N=8,16,32,64"
start=$(date +%s)
SPARSE_SPMM_SWEEP=$OUT/variants.jsonl SPARSE_SPMM_SWEEP_SET=llm SPARSE_SPMM_SWEEP_NS=8,16,32,64 SPARSE_SPMM_SWEEP_DTYPES=f16 \
  timeout 170 $M test/kernels/spmm-variants.sweep.test.ts 2>&1 | grep -E "problems|rows in|passing|failing|Error" | head
echo "sweep $(( $(date +%s) - start )) s"
echo "== attention SDDMM: tc and simt"
for v in auto simt; do
  start=$(date +%s)
  SPARSE_SDDMM_VARIANT=$v timeout 100 node bin/run.js bench --suite attention --attention-sparsity 0.5,0.7,0.9,0.95,0.98 --dtype f16 \
    --max-reps 30 --min-ms 3 --jsonl $OUT/att-$v.jsonl --json > /dev/null 2> $OUT/att-$v.err
  echo "att $v rc=$? $(( $(date +%s) - start )) s"
done
