#!/usr/bin/env bash
# Issue 5, v4 final build, call A (correctness): CUDA kernel tests and the tensor-core
# format tests, compute-sanitizer memcheck and racecheck on them, and the DLMC verify sweep
# (every dev-subset problem at the paper's N, SpMM and SDDMM, f32/f16/bf16).
set -uo pipefail
source scripts/gpu/setup.sh
mkdir -p ../shared && tar xJf .gpu/dlmc.tar.xz -C ../shared
date -u +"date %Y-%m-%dT%H:%MZ"
M="node --import tsx node_modules/mocha/bin/_mocha --no-config --timeout 0"
T="test/kernels/kernels.test.ts test/kernels/binding.test.ts test/kernels/tc-format.test.ts"
echo "== kernel tests (CUDA)"
timeout 120 $M $T > $OUT/tests.txt 2>&1; echo "tests rc=$?"
grep -E "passing|failing|pending" $OUT/tests.txt | head -5
grep -A12 -E "^\s+[0-9]+\) " $OUT/tests.txt | head -40
echo "== compute-sanitizer memcheck"
start=$(date +%s)
timeout 200 compute-sanitizer --tool memcheck --leak-check full $M test/kernels/kernels.test.ts > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$? $(( $(date +%s) - start )) s"
grep -E "ERROR SUMMARY|LEAK SUMMARY|passing|failing" $OUT/memcheck.txt | head
echo "== compute-sanitizer racecheck (every SpMM variant, tensor-core SDDMM)"
start=$(date +%s)
timeout 150 compute-sanitizer --tool racecheck $M test/kernels/kernels.test.ts --grep "every kernel variant|tensor-core" > $OUT/racecheck.txt 2>&1; echo "racecheck rc=$? $(( $(date +%s) - start )) s"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|passing|failing" $OUT/racecheck.txt | head
echo "== DLMC verify sweep"
start=$(date +%s)
SPARSE_DLMC_SWEEP=cuda SPARSE_DLMC_SWEEP_OUT=$OUT/sweep.jsonl timeout 200 $M test/verify/dlmc-sweep.test.ts > $OUT/sweep.txt 2>&1; echo "sweep rc=$? $(( $(date +%s) - start )) s"
grep -E "cases|FAILED|passing|failing" $OUT/sweep.txt | head -20
