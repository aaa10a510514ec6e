#!/usr/bin/env bash
# One device call that records the final figures of a session (carry .gpu):
#   bash scripts/gpu/pack.sh
#   tar cJf .gpu/dlmc.tar.xz -C ../shared dlmc && cp ../shared/anchors/dlmc_dev_h200.jsonl .gpu/anchors.jsonl
# 1. `sparse bench --tune` on an LLM slice and the Transformer 0.9 matrices, then the cache
#    read back by a later run, and --no-tune-cache;
# 2. the DLMC suite with DEFAULT timing settings, all baselines, fp32 and fp16, SpMM and
#    SDDMM, with --json --plot and --compare against Sputnik's anchors (issue 4's run).
set -uo pipefail
export GPU_DIR=${GPU_DIR:-.gpu}
source scripts/gpu/setup.sh
OUT=${OUT:-/tmp/final-out}
mkdir -p "$OUT" /tmp/suite
tar -xJf "$GPU_DIR/dlmc.tar.xz" -C /tmp/suite
ANCHORS=$GPU_DIR/anchors.jsonl
T09=/tmp/suite/dlmc/transformer/magnitude_pruning/0.9
CACHE=/tmp/tune-cache/tune.json
FAST="--reps 20 --min-ms 20"
rep() { node scripts/gpu/tune-report.mjs "$@"; }
date -u +"date %Y-%m-%dT%H:%MZ"

echo "== 1. --tune"
s=$(date +%s)
timeout 150 node bin/run.js bench --suite llm --n 16 --llm-sparsity 0.7,0.9 --dtype f32,f16 --baseline dense \
  --tune --tune-cache "$CACHE" $FAST --json > "$OUT/tune-llm.json"; echo "rc=$? in $(( $(date +%s) - s )) s"
rep "$OUT/tune-llm.json"
s=$(date +%s)
timeout 90 node bin/run.js bench "$T09" --n 256 --dtype f32,f16 --tune --tune-cache "$CACHE" $FAST --json > "$OUT/tune-t09.json"
echo "rc=$? in $(( $(date +%s) - s )) s"
rep "$OUT/tune-t09.json"
echo "-- cache file:"; head -c 1500 "$CACHE"; echo
timeout 60 node bin/run.js bench "$T09" --n 256 --dtype f32,f16 --tune-cache "$CACHE" $FAST --json > "$OUT/cached-t09.json"; echo "rc=$?"
rep "$OUT/cached-t09.json" --expect cache
timeout 60 node bin/run.js bench "$T09" --n 256 --dtype f32 --no-tune-cache $FAST --json > /tmp/nocache.json; echo "rc=$?"
rep /tmp/nocache.json --expect heuristic

echo "== 2. DLMC suite, default timing settings"
s=$(date +%s)
timeout "${SUITE_TIMEOUT:-400}" node bin/run.js bench --suite dlmc /tmp/suite/dlmc --json --plot "$OUT/bench-dlmc.svg" \
  --jsonl "$OUT/dlmc.jsonl" --compare "$ANCHORS" > "$OUT/dlmc.json"
echo "suite rc=$? in $(( $(date +%s) - s )) s (default settings)"
node scripts/gpu/bench-report.mjs "$OUT/dlmc.json" > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
