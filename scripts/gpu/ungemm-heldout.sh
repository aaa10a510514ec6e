#!/usr/bin/env bash
# The unstructured GEMM-engine family's held-out bench (issue 25, step 3; v29): the LLM shapes
# held out of the suite (14336 x 4096, 4096 x 14336, 6144 x 4096), magnitude-pruned by the bench
# to 50, 70, 90 and 95 %, f16, N = 256, 1024, 2048, against dense cuBLAS. Run on the GPU machine
# by run.sh's sh task, which sets W (its output folder) and the tree:
#   GPU_DIR=.gpu/packNN bash scripts/gpu/run.sh sh 'bash scripts/gpu/ungemm-heldout.sh'
# Writes $W/heldout.jsonl and heldout.txt; the weights go to a scratch folder outside $W (run.sh
# would pack them) and are removed after.
set -uo pipefail
: "${W:?set by run.sh: run this through its sh task}"
D=$(mktemp -d /tmp/ungemm-heldout.XXXXXX)
trap 'rm -rf "$D"' EXIT
python3 scripts/gpu/stream24-weights.py "$D" 29 w14336x4096 w4096x14336 w6144x4096
rc=0
node bin/run.js bench "$D/w14336x4096.npy" "$D/w4096x14336.npy" "$D/w6144x4096.npy" -s 0.5,0.7,0.9,0.95 \
  --n 256,1024,2048 --dtype f16 --baseline dense --max-reps 50 --min-ms 10 --jsonl "$W/heldout.jsonl" \
  >"$W/heldout.txt" 2>&1 || rc=1
grep -m3 -E "geomean|cases ok" "$W/heldout.txt"
exit $rc
