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
# (run.sh would pack them) and are removed after.
set -uo pipefail
: "${W:?set by run.sh: run this through its sh task}"
NS=${NS:-128,256,1024,2048}
PARTS=${PARTS:-suite heldout}
rc=0
reports=()
for part in $PARTS; do
  case $part in
    suite)
      node bin/run.js bench --suite llm --pattern 2:4 --n "$NS" --dtype f16 --baseline dense \
        --tune --no-tune-cache --tune-min-ms 10 --json >"$W/s24g-suite.json" 2>"$W/s24g-suite.err" || rc=1
      ;;
    heldout)
      D=$(mktemp -d /tmp/s24g-tune.XXXXXX)
      python3 scripts/gpu/stream24-weights.py "$D" 29 w14336x4096 w4096x14336 w6144x4096
      node bin/run.js bench "$D/w14336x4096.npy" "$D/w4096x14336.npy" "$D/w6144x4096.npy" --pattern 2:4 --n "$NS" \
        --dtype f16 --baseline dense --tune --no-tune-cache --tune-min-ms 10 --json \
        >"$W/s24g-heldout.json" 2>"$W/s24g-heldout.err" || rc=1
      rm -rf "$D"
      ;;
    *)
      echo "s24g-tune.sh: unknown part '$part' (suite or heldout)" >&2
      exit 2
      ;;
  esac
  node scripts/gpu/tune-report.mjs "$W/s24g-$part.json" --candidates s24g >"$W/s24g-$part.txt" 2>&1 || rc=1
  grep -E 'geomean' "$W/s24g-$part.txt"
  reports+=("$W/s24g-$part.json")
done
python3 scripts/gpu/s24g-fit.py "${reports[@]}" >"$W/s24g-fit.txt" 2>&1 || rc=1
grep -E '^(held out|x cuBLAS|PARAMS)' "$W/s24g-fit.txt"
exit $rc
