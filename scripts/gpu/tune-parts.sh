#!/usr/bin/env bash
# `sparse bench --tune` on the LLM shapes by parts, for a family's candidates (issue 25): the
# suite's three shapes and the three held out of it (14336 x 4096, 4096 x 14336, 6144 x 4096;
# weights seeded 29), f16, against dense cuBLAS, the family's variants of our SpMM timed per case. The
# shared body of scripts/gpu/ung-whole.sh (unstructured: ung, und) and s24g-tune.sh (2:4: s24g).
#   bash scripts/gpu/tune-parts.sh NAME PREFIX "PRUNE FLAGS" "OTHER FLAGS"
# PRUNE FLAGS say how the bench prunes the weights (--llm-sparsity for the suite, -s for the
# held-out files: written with SPARSITY_FLAG, which this script replaces by the one each part
# takes; or --pattern 2:4 for both), OTHER FLAGS the rest (--n ...). PARTS (default "suite
# heldout") as in the callers; BASELINE (default dense) the bench's --baseline (v54: dense,cusparselt
# puts cuSPARSELt beside every variant). Times only the variants whose names start with PREFIX (and the
# selection's pick). Writes $W/NAME-<part>.json, .err, and .txt (tune-report's candidates whose
# names start with PREFIX); prints the reports' geomean lines; the held-out
# weights go to a scratch folder outside $W (run.sh would pack them) and are removed after.
# Exit 1 when a bench or report failed, 2 for an unknown part.
set -uo pipefail
: "${W:?set by run.sh: run this through its sh task}"
name=${1:?NAME} prefix=${2:?PREFIX} prune=${3:?PRUNE FLAGS} other=${4:-}
PARTS=${PARTS:-suite heldout}
# --tune-only PREFIX: the family's variants and the selection's pick, not every variant of the
# matrix (v38: the whole list, prepared once per candidate, passed 285 s a part on 2:4).
common=(--dtype f16 --baseline "${BASELINE:-dense}" --tune --tune-only "$prefix" --no-tune-cache --tune-min-ms 10 --json)
rc=0
for part in $PARTS; do
  case $part in
    suite)
      # shellcheck disable=SC2086 # the flags are words
      node bin/run.js bench --suite llm ${prune//SPARSITY_FLAG/--llm-sparsity} $other "${common[@]}" \
        >"$W/$name-suite.json" 2>"$W/$name-suite.err" || rc=1
      ;;
    heldout)
      D=$(mktemp -d "/tmp/$name.XXXXXX")
      python3 scripts/gpu/stream24-weights.py "$D" 29 w14336x4096 w4096x14336 w6144x4096
      # shellcheck disable=SC2086
      node bin/run.js bench "$D/w14336x4096.npy" "$D/w4096x14336.npy" "$D/w6144x4096.npy" ${prune//SPARSITY_FLAG/-s} $other \
        "${common[@]}" >"$W/$name-heldout.json" 2>"$W/$name-heldout.err" || rc=1
      rm -rf "$D"
      ;;
    *)
      echo "tune-parts.sh: unknown part '$part' (suite or heldout)" >&2
      exit 2
      ;;
  esac
  node scripts/gpu/tune-report.mjs "$W/$name-$part.json" --candidates "$prefix" >"$W/$name-$part.txt" 2>&1 || rc=1
  grep -E 'geomean' "$W/$name-$part.txt"
done
exit $rc
