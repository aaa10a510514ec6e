#!/usr/bin/env bash
# The GEMM engine's unstructured families under `sparse bench --tune` (issue 25): every variant of
# ung (the pair stream) and und (A stored dense) beside the selection's and dense cuBLAS, with the
# same cold-L2 events, in one run. Written in v34 for the whole-tile variants ung _w1 / _w2,
# which v35 measured slower everywhere and removed; its runs set und's rule (gemm_plan.h).
# PARTS (default "suite heldout"): the suite's three LLM shapes, and the three held out of it
# (14336 x 4096, 4096 x 14336, 6144 x 4096), magnitude-pruned to SPARSITY (default 50, 70, 90 %),
# f16, at NS (default 256, where issue 25's floor is). A part takes a minute or two. Run on the GPU
# machine by run.sh's sh task, which sets W and the tree:
#   GPU_DIR=.gpu/pNN bash scripts/gpu/run.sh sh 'PARTS=suite bash scripts/gpu/ung-whole.sh'
# Writes $W/ung-whole-<part>.json and .txt (the candidates of families ung and und, A stored
# dense, by case, then per candidate the geomean of the selection's time over its own); the
# held-out weights go to a scratch folder outside $W (run.sh would pack them) and are removed
# after.
set -uo pipefail
: "${W:?set by run.sh: run this through its sh task}"
SPARSITY=${SPARSITY:-0.5,0.7,0.9}
NS=${NS:-256}
PARTS=${PARTS:-suite heldout}
rc=0
for part in $PARTS; do
  case $part in
    suite)
      node bin/run.js bench --suite llm --llm-sparsity "$SPARSITY" --n "$NS" --dtype f16 --baseline dense \
        --tune --no-tune-cache --tune-min-ms 10 --json >"$W/ung-whole-suite.json" 2>"$W/ung-whole-suite.err" || rc=1
      ;;
    heldout)
      D=$(mktemp -d /tmp/ung-whole.XXXXXX)
      python3 scripts/gpu/stream24-weights.py "$D" 29 w14336x4096 w4096x14336 w6144x4096
      node bin/run.js bench "$D/w14336x4096.npy" "$D/w4096x14336.npy" "$D/w6144x4096.npy" -s "$SPARSITY" --n "$NS" \
        --dtype f16 --baseline dense --tune --no-tune-cache --tune-min-ms 10 --json \
        >"$W/ung-whole-heldout.json" 2>"$W/ung-whole-heldout.err" || rc=1
      rm -rf "$D"
      ;;
    *)
      echo "ung-whole.sh: unknown part '$part' (suite or heldout)" >&2
      exit 2
      ;;
  esac
  node scripts/gpu/tune-report.mjs "$W/ung-whole-$part.json" --candidates un >"$W/ung-whole-$part.txt" 2>&1 || rc=1
  grep -E 'geomean' "$W/ung-whole-$part.txt"
done
exit $rc
