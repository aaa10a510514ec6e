#!/usr/bin/env bash
# The 2:4 streaming engine on stream-K plans (issue 23; v28): more row blocks than resident
# blocks, where the addon loads a range's last partner's sums ahead (Args::prefetch). `verify`
# forced to each engine variant (s24e_w8_k256, s24e_w4_k256) on two 2:4-pruned matrices whose
# plans are stream-K for both (20480 x 1024, 17408 x 2048), f16 and bf16, N = 1, 8, 13, 40, 64;
# then the bench of 28672 x 4096 and 20480 x 4096, f16, N 1-64, against dense cuBLAS and
# cuSPARSELt.
# Run on the GPU machine by run.sh's sh task, which sets W (its output folder) and the tree:
#   GPU_DIR=.gpu/packNN bash scripts/gpu/run.sh sh 'bash scripts/gpu/stream24-streamk.sh'
# Writes $W/verify_sk_<variant>.json, $W/streamk.jsonl and streamk.txt; the weights go to a
# scratch folder outside $W and are removed after.
set -uo pipefail
: "${W:?set by run.sh: run this through its sh task}"
D=$(mktemp -d /tmp/streamk.XXXXXX)
trap 'rm -rf "$D"' EXIT
python3 scripts/gpu/stream24-weights.py "$D" 28 p20480x1024 p17408x2048 w28672x4096 w20480x4096
rc=0
for v in s24e_w8_k256 s24e_w4_k256; do
  SPARSE_SPMM_VARIANT=$v node bin/run.js verify "$D/p20480x1024.npy" "$D/p17408x2048.npy" \
    --op spmm --dtype f16,bf16 --n 1,8,13,40,64 --device cuda --json >"$W/verify_sk_$v.json" 2>"$W/verify_sk_$v.err" || rc=1
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], 'verify stream-K', d['passed'], 'passed', d['failed'], 'failed')" \
    "$W/verify_sk_$v.json" "$v" || rc=1
done
node bin/run.js bench "$D/w28672x4096.npy" "$D/w20480x4096.npy" --n 1,8,16,32,64 --pattern 2:4 \
  --dtype f16 --baseline dense,cusparselt --max-reps 100 --min-ms 10 --jsonl "$W/streamk.jsonl" >"$W/streamk.txt" 2>&1 || rc=1
grep -m3 -E "geomean|cases ok" "$W/streamk.txt"
exit $rc
