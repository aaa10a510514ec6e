#!/usr/bin/env bash
# The held-out check of the 2:4 selection rules (native/common/stream_plan.h): each kernel
# forced on random weights pruned 2:4, f16, CUDA events, cuBLAS f16 in the same run.
#   rows: s24e_w8_k256, s24e_w4_k256 and the selection (auto) at N = 8, 16, 32, 64, or at
#         ROWS_NS (Stream24Rows64: 64- or 128-row blocks);
#   sel:  the selection (auto), the mma.sp kernel (s24_w4_m1_s8) and both engine variants at
#         N = 1 and 8 (Stream24Wins: the engine or the mma.sp kernel at N <= 8).
# Run on the GPU machine by run.sh's sh task, which sets W (its output folder) and the tree:
#   ROWS="7168x2048 6144x3072" SEL="3584x2048 4608x2048" bash scripts/gpu/run.sh sh 'bash scripts/gpu/stream24-rules.sh'
# Writes $W/rows_<variant>.json and $W/sel_<variant>.json (`sparse bench --json`); the weights
# go to a scratch folder outside $W (run.sh would pack them) and are removed after.
set -euo pipefail
: "${W:?set by run.sh: run this through its sh task}"
ROWS=${ROWS:-} SEL=${SEL:-} ROWS_NS=${ROWS_NS:-8,16,32,64}
D=$(mktemp -d /tmp/stream24-rules.XXXXXX)
trap 'rm -rf "$D"' EXIT
files() { local out=() s; for s in "$@"; do out+=("$D/w$s.npy"); done; echo "${out[@]}"; }
# shellcheck disable=SC2086
python3 - $ROWS $SEL <<PY
import sys, numpy as np
r = np.random.default_rng(20)
for s in dict.fromkeys(sys.argv[1:]):
    m, k = map(int, s.split('x'))
    np.save('$D/w%s.npy' % s, r.standard_normal((m, k)).astype(np.float32))
PY
B=(--pattern 2:4 --dtype f16 --max-reps 100 --min-ms 10 --baseline dense --json)
if [ -n "$ROWS" ]; then
  for v in s24e_w8_k256 s24e_w4_k256 auto; do
    # shellcheck disable=SC2046
    rc=0; SPARSE_SPMM_VARIANT=$v timeout 150 node bin/run.js bench $(files $ROWS) --n "$ROWS_NS" "${B[@]}" >"$W/rows_$v.json" 2>"$W/rows_$v.err" || rc=$?
    echo "rows $v rc=$rc"
  done
fi
if [ -n "$SEL" ]; then
  for v in auto s24_w4_m1_s8 s24e_w8_k256 s24e_w4_k256; do
    # shellcheck disable=SC2046
    rc=0; SPARSE_SPMM_VARIANT=$v timeout 120 node bin/run.js bench $(files $SEL) --n 1,8 "${B[@]}" >"$W/sel_$v.json" 2>"$W/sel_$v.err" || rc=$?
    echo "sel $v rc=$rc"
  done
fi
