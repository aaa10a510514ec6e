#!/usr/bin/env bash
# The lead's device check of `sparse bench --tune` and of the SDDMM dense baseline's operand
# order, in one call (about 4-6 minutes). Prepare here:
#   bash scripts/gpu/pack.sh
#   tar cJf .gpu/dlmc.tar.xz -C ../shared dlmc/transformer/magnitude_pruning/0.9
# then run with carry [".gpu"] (ignored by git):
#   bash scripts/gpu/tune-run.sh 2>&1 | tail -c 11000
# 1. SDDMM order: Transformer 0.9 at N = 64 and 256, f32/f16: each cuBLAS baseline's detail
#    names the order it kept and the trial times; ours' relErr against cublas_f32/_f16 must
#    stay small whichever order the reference used (the transposed read-back is right).
# 2. --tune on an LLM slice (N = 16, 0.7/0.9, f32/f16) and Transformer 0.9 at N = 256, saving
#    to a fresh cache; 3. the same runs without --tune: every case must say
#    variantSource 'cache' and run the cached winner; 4. --no-tune-cache: 'heuristic'.
set -uo pipefail
export GPU_DIR=${GPU_DIR:-.gpu}
source scripts/gpu/setup.sh
OUT=${OUT:-/tmp/tune-out}
mkdir -p "$OUT" /tmp/suite
tar -xJf "$GPU_DIR/dlmc.tar.xz" -C /tmp/suite
T09=/tmp/suite/dlmc/transformer/magnitude_pruning/0.9
CACHE=/tmp/tune-cache/tune.json
FAST="--reps 20 --min-ms 20"
rep() { node scripts/gpu/tune-report.mjs "$@"; }

echo "== 1. SDDMM dense baseline: operand order"
node bin/run.js bench "$T09" --n 64,256 --op sddmm --dtype f32,f16 $FAST --json > "$OUT/sddmm-order.json"; echo "rc=$?"
rep "$OUT/sddmm-order.json" --sddmm

echo "== 2. --tune"
s=$(date +%s)
timeout 300 node bin/run.js bench --suite llm --n 16 --llm-sparsity 0.7,0.9 --dtype f32,f16 --baseline dense \
  --tune --tune-cache "$CACHE" $FAST --json > "$OUT/tune-llm.json"; echo "rc=$? in $(( $(date +%s) - s )) s"
rep "$OUT/tune-llm.json"
s=$(date +%s)
node bin/run.js bench "$T09" --n 256 --dtype f32,f16 --tune --tune-cache "$CACHE" $FAST --json > "$OUT/tune-t09.json"
echo "rc=$? in $(( $(date +%s) - s )) s"
rep "$OUT/tune-t09.json"
cp "$CACHE" "$OUT/tune-cache.json"

echo "== 3. later runs read the cache"
node bin/run.js bench "$T09" --n 256 --dtype f32,f16 --tune-cache "$CACHE" $FAST --json > "$OUT/cached-t09.json"; echo "rc=$?"
rep "$OUT/cached-t09.json" --expect cache
node bin/run.js bench "$T09" --n 256 --dtype f32 --tune-cache "$CACHE" $FAST --no-table 2>&1 | head -8

echo "== 4. --no-tune-cache"
node bin/run.js bench "$T09" --n 256 --dtype f32 --no-tune-cache $FAST --json > "$OUT/nocache-t09.json"; echo "rc=$?"
rep "$OUT/nocache-t09.json" --expect heuristic
