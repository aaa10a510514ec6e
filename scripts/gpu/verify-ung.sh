#!/usr/bin/env bash
# `sparse verify` with the unstructured GEMM-engine variants forced (issue 25; v30): each of
# VARIANTS (default: the selection's decompositions of both tile widths) on five DLMC matrices of
# awkward shapes (64 x 147, 1000 x 2048, 2048 x 512 at 70 %, 512 x 2048 at 98 %, a 50 % projection),
# f16 and bf16, N = 128, 136, 256, 1032: a float64 reference, the output poisoned first. Run on
# the GPU machine by run.sh's sh task from a pack with the DLMC subset:
#   GPU_DIR=.gpu/packNN bash scripts/gpu/run.sh sh 'bash scripts/gpu/verify-ung.sh'
# FILES (paths, space-separated) replaces the matrices: the `und` variants need K a multiple of 8,
# which the 64 x 147 one is not (v36: VARIANTS="und_n256_sk3 und_n128_sk3 und_n256 und_n128"
# with the other four).
# Prints a line per variant and matrix, then the failures' count (exit 1 when any).
set -uo pipefail
D=${SHARED:-../shared}/dlmc
VARIANTS=${VARIANTS:-ung_n256_sk3 ung_n128_sk3 ung_n256_sk1 ung_n128 ung_n256_sk2}
DEFAULT_FILES="$D/rn50/magnitude_pruning/0.9/initial_conv.smtx $D/rn50/magnitude_pruning/0.9/final_dense.smtx
  $D/transformer/magnitude_pruning/0.7/body_decoder_layer_0_ffn_conv1_fully_connected.smtx
  $(echo "$D"/transformer/magnitude_pruning/0.98/*ffn_conv2*.smtx)
  $D/rn50/magnitude_pruning/0.5/bottleneck_projection_block_group_projection_block_group1.smtx"
fails=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for v in $VARIANTS; do
  for f in ${FILES:-$DEFAULT_FILES}; do
    SPARSE_SPMM_VARIANT=$v node bin/run.js verify "$f" --op spmm --n 128,136,256,1032 --dtype f16,bf16 --device cuda >"$out" 2>&1
    rc=$?
    echo "$v $(basename "$f") rc=$rc $(grep -E 'cases passed|FAIL' "$out" | tail -1)"
    [ $rc -eq 0 ] || { fails=$((fails + 1)); tail -5 "$out"; }
  done
done
echo "verify-ung failures: $fails"
[ $fails -eq 0 ]
