#!/usr/bin/env bash
# Call 2: the variant sweep (timing every variant per problem) and compute-sanitizer on the CUDA kernel tests.
set -uo pipefail
source scripts/gpu/setup.sh >/dev/null
mkdir -p ../shared && tar xJf .gpu/dlmc.tar.xz -C ../shared
M="node --import tsx node_modules/mocha/bin/_mocha --no-config --timeout 0"
echo "== variant sweep"
SPARSE_SPMM_SWEEP=$OUT/variants.jsonl timeout 200 $M test/kernels/spmm-variants.sweep.test.ts 2>&1 | tail -6
echo "== memcheck"
start=$(date +%s)
timeout 170 compute-sanitizer --tool memcheck --leak-check full $M test/kernels/kernels.test.ts > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$? $(( $(date +%s) - start )) s"
grep -E "passing|failing|ERROR SUMMARY|LEAK SUMMARY" $OUT/memcheck.txt
echo "== racecheck"
start=$(date +%s)
timeout 170 compute-sanitizer --tool racecheck --racecheck-report all $M test/kernels/kernels.test.ts > $OUT/racecheck.txt 2>&1; echo "racecheck rc=$? $(( $(date +%s) - start )) s"
grep -E "passing|failing|RACECHECK SUMMARY|ERROR SUMMARY" $OUT/racecheck.txt
