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
# after. The parts are scripts/gpu/tune-parts.sh's.
set -uo pipefail
: "${W:?set by run.sh: run this through its sh task}"
SPARSITY=${SPARSITY:-0.5,0.7,0.9}
NS=${NS:-256}
exec bash scripts/gpu/tune-parts.sh ung-whole un "SPARSITY_FLAG $SPARSITY" "--n $NS"
