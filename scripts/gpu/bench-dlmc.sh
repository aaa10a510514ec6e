#!/usr/bin/env bash
# The issue-4 device run (the first DLMC bench), in one call (carry .gpu-bench, made by:
#   GPU_DIR=.gpu-bench SPARSE_ADDON_BUILD=<addon> bash scripts/gpu/pack.sh
#   tar cJf .gpu-bench/dlmc.tar.xz -C ../shared dlmc; cp ../shared/anchors/dlmc_dev_h200.jsonl .gpu-bench/anchors.jsonl)
# 1. checks the enum values libs.h declares by hand against the real cuBLAS/cuSPARSE headers;
# 2. smoke-tests the harness on the Transformer 0.9 matrices (all dtypes, both ops);
# 3. runs the DLMC suite with all baselines in fp32 and fp16, compared with the anchors.
# 4. (LLM_FLAGS set) a slice of the LLM suite, e.g. LLM_FLAGS="--n 16 --llm-sparsity 0.7,0.9 --dtype f16".
# Everything lands in $OUT (8 files at most). SUITE_FLAGS adds flags to the suite run;
# SKIP_SUITE=1 stops after 2. Pipe the whole output into $OUT/log.txt.
set -uo pipefail
export GPU_DIR=${GPU_DIR:-.gpu-bench}
source scripts/gpu/setup.sh
OUT=${OUT:-/tmp/bench-out}
mkdir -p "$OUT" /tmp/suite
tar -xJf "$GPU_DIR/dlmc.tar.xz" -C /tmp/suite
ANCHORS=$GPU_DIR/anchors.jsonl
date -u +"date %Y-%m-%dT%H:%MZ"

echo "== 1. enum values"
g++ -std=c++17 -DSPARSE_WITH_CUDA=1 -Inative -I/usr/local/cuda/include scripts/gpu/check-enums.cc -o /tmp/check-enums \
  && /tmp/check-enums > "$OUT/enums.txt"; rc=$?
cat "$OUT/enums.txt"
[ $rc -eq 0 ] || { echo "enum check failed (rc $rc): stopping"; exit 1; }

echo "== 2. smoke"
node bin/run.js bench /tmp/suite/dlmc/transformer/magnitude_pruning/0.9 --n 256 --op all --dtype all \
  --reps 10 --min-ms 5 --compare "$ANCHORS" --json > "$OUT/smoke.json"
echo "smoke rc=$?"
node scripts/gpu/bench-report.mjs "$OUT/smoke.json" --cases || exit 1
[ "${SKIP_SUITE:-0}" = 1 ] && exit 0

echo "== 3. DLMC suite"
start=$(date +%s)
timeout "${SUITE_TIMEOUT:-420}" node bin/run.js bench --suite dlmc /tmp/suite/dlmc --json --plot "$OUT/bench-dlmc.svg" \
  --jsonl "$OUT/dlmc.jsonl" --compare "$ANCHORS" ${SUITE_FLAGS:-} > "$OUT/dlmc.json"
echo "suite rc=$? in $(( $(date +%s) - start )) s (flags: ${SUITE_FLAGS:-defaults})"
node scripts/gpu/bench-report.mjs "$OUT/dlmc.json" > "$OUT/summary.txt"

if [ -n "${LLM_FLAGS:-}" ]; then
  echo "== 4. LLM suite slice: $LLM_FLAGS"
  start=$(date +%s)
  timeout 120 node bin/run.js bench --suite llm $LLM_FLAGS --json > "$OUT/llm.json"
  echo "llm rc=$? in $(( $(date +%s) - start )) s"
  node scripts/gpu/bench-report.mjs "$OUT/llm.json" --cases
fi
cat "$OUT/summary.txt"
