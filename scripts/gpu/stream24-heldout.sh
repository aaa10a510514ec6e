#!/usr/bin/env bash
# The 2:4 streaming engine's held-out checks (issue 23; v18-v27): `verify` forced to each engine
# variant (s24e_w8_k256, s24e_w4_k256) on three 2:4-pruned matrices (1000 x 1000, 77 x 3008,
# 4096 x 1024), f16 and bf16, N = 1, 5, 8, 13, 24, 29, 40, 48, 56, 63, 64; then the bench on the shapes held
# out of the selection rules' fit (14336 x 4096, 4096 x 14336, 6144 x 4096), f16, N 1-64, against
# dense cuBLAS and cuSPARSELt. Run on the GPU machine by run.sh's sh task, which sets W (its
# output folder) and the tree:
#   GPU_DIR=.gpu/packNN bash scripts/gpu/run.sh sh 'bash scripts/gpu/stream24-heldout.sh'
# Writes $W/verify_<variant>.json (`sparse verify --json`), $W/heldout.jsonl and heldout.txt;
# the weights go to a scratch folder outside $W (run.sh would pack them) and are removed after.
set -uo pipefail
: "${W:?set by run.sh: run this through its sh task}"
D=$(mktemp -d /tmp/stream24-heldout.XXXXXX)
trap 'rm -rf "$D"' EXIT
python3 scripts/gpu/stream24-weights.py "$D" 27 w14336x4096 w4096x14336 w6144x4096 p1000x1000 p77x3008 p4096x1024
rc=0
bash scripts/gpu/verify-forced.sh 1,5,8,13,24,29,40,48,56,63,64 "s24e_w8_k256 s24e_w4_k256" \
  "$D/p1000x1000.npy" "$D/p77x3008.npy" "$D/p4096x1024.npy" || rc=1
node bin/run.js bench "$D/w14336x4096.npy" "$D/w4096x14336.npy" "$D/w6144x4096.npy" --n 1,8,16,32,64 --pattern 2:4 \
  --dtype f16 --baseline dense,cusparselt --max-reps 100 --min-ms 10 --jsonl "$W/heldout.jsonl" >"$W/heldout.txt" 2>&1 || rc=1
grep -m3 -E "geomean|cases ok" "$W/heldout.txt"
exit $rc
