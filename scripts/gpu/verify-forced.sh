#!/usr/bin/env bash
# `sparse verify` of SpMM with each variant forced (SPARSE_SPMM_VARIANT) on the given .npy
# matrices, f16 and bf16, at the N listed: a float64 reference on fresh random B, the output
# poisoned first. The shared loop of verify-s24g.sh (issue 25) and stream24-heldout.sh (issue 23).
# Run on the GPU machine under run.sh's sh task (which sets W):
#   bash scripts/gpu/verify-forced.sh NS "VARIANT..." FILE...
# Writes $W/verify_<variant>.json and .err; prints "<variant> rc=<rc> <p> passed <f> failed" a
# line per variant (or "no report: ..."), then "failures: <count>". Exit 1 when any variant failed
# a case or did not run, 2 for bad usage.
set -uo pipefail
: "${W:?set by run.sh: run this through its sh task}"
[ $# -ge 3 ] || { echo "usage: verify-forced.sh NS \"VARIANT...\" FILE..." >&2; exit 2; }
ns=$1 variants=$2
shift 2
fails=0
for v in $variants; do
  SPARSE_SPMM_VARIANT=$v node bin/run.js verify "$@" --op spmm --dtype f16,bf16 --n "$ns" --device cuda --json \
    >"$W/verify_$v.json" 2>"$W/verify_$v.err"
  rc=$?
  line=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['passed'], 'passed', d['failed'], 'failed')" \
    "$W/verify_$v.json" 2>/dev/null) || line="no report: $(head -c 300 "$W/verify_$v.err")"
  echo "$v rc=$rc $line"
  [ $rc -eq 0 ] || fails=$((fails + 1))
done
echo "failures: $fails"
[ $fails -eq 0 ]
