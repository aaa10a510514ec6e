#!/usr/bin/env bash
# The 2:4 GEMM-engine family (s24g) under `sparse bench --tune` (issue 25, v37): every s24g
# variant's time beside the selection's and dense cuBLAS, for scripts/gpu/s24g-fit.py, which fits
# a model of the tile shape on them and checks it held out by shape.
# PARTS (default "suite heldout"): the suite's three LLM shapes pruned 2:4, and the three held out
# of it (14336 x 4096, 4096 x 14336, 6144 x 4096), f16, at NS (default 128,256,1024,2048). Run on
# the GPU machine by run.sh's sh task, which sets W and the tree:
#   GPU_DIR=.gpu/pNN bash scripts/gpu/run.sh sh 'bash scripts/gpu/s24g-tune.sh'
# Writes $W/s24g-<part>.json and .txt (tune-report's candidates of s24g by case), then the fit's
# report over every part, $W/s24g-fit.txt; the held-out weights go to a scratch folder outside $W
# (run.sh would pack them) and are removed after. The parts are scripts/gpu/tune-parts.sh's.
set -uo pipefail
: "${W:?set by run.sh: run this through its sh task}"
NS=${NS:-128,256,1024,2048}
PARTS=${PARTS:-suite heldout}
bash scripts/gpu/tune-parts.sh s24g s24g "--pattern 2:4" "--n $NS"
rc=$?
[ "$rc" = 2 ] && exit 2
reports=()
for part in $PARTS; do reports+=("$W/s24g-$part.json"); done
python3 scripts/gpu/s24g-fit.py "${reports[@]}" >"$W/s24g-fit.txt" 2>&1 || rc=1
grep -E '^(held out|x cuBLAS|in the bench|PARAMS)' "$W/s24g-fit.txt"
exit $rc
