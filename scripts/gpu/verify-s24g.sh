#!/usr/bin/env bash
# `sparse verify` with the 2:4 GEMM-engine variants forced (issue 25): each of VARIANTS (default:
# v53's 64-column tiles with their splits, and a 128-column one beside them) on three 2:4-pruned
# matrices of awkward shapes (1000 x 1000, 77 x 3008, 4096 x 1024), f16 and bf16, N = 128, 136,
# 200, 256, 1032: a float64 reference on fresh random B, the output poisoned first. Run on the GPU
# machine by run.sh's sh task:
#   GPU_DIR=.gpu/packNN bash scripts/gpu/run.sh sh 'bash scripts/gpu/verify-s24g.sh'
# Writes $W/verify_<variant>.json; prints a line per variant, then the failures' count (exit 1
# when any variant failed a case or did not run). The loop is scripts/gpu/verify-forced.sh's.
set -uo pipefail
: "${W:?set by run.sh: run this through its sh task}"
VARIANTS=${VARIANTS:-s24g_m128_n64_s12_sk2 s24g_m256_n64_s8_sk3 s24g_m128_n64_s12 s24g_m256_n64_s8_sk1 s24g_m128_n128_s6_sk3}
D=$(mktemp -d /tmp/verify-s24g.XXXXXX)
trap 'rm -rf "$D"' EXIT
python3 scripts/gpu/stream24-weights.py "$D" 31 p1000x1000 p77x3008 p4096x1024 || exit 1
bash scripts/gpu/verify-forced.sh 128,136,200,256,1032 "$VARIANTS" "$D/p1000x1000.npy" "$D/p77x3008.npy" "$D/p4096x1024.npy"
