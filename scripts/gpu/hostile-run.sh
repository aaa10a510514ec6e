#!/usr/bin/env bash
# Issue 6 on the GPU machine, one call (carry .gpu made by scripts/gpu/pack.sh, plus
# .gpu/dlmc.tar.xz): corrupt CSR files under compute-sanitizer memcheck must end in a clean
# one-line error (exit 1) with no device memory fault; SIGINT/SIGTERM during a `bench` suite
# must exit 130/143, leave no output file and no process holding GPU memory.
set -uo pipefail
export GPU_DIR=${GPU_DIR:-.gpu}
source scripts/gpu/setup.sh
OUT=${OUT:-/tmp/hostile-out}
H=/tmp/hostile; mkdir -p "$OUT" "$H" /tmp/suite
tar -xJf "$GPU_DIR/dlmc.tar.xz" -C /tmp/suite
printf '2, 3, 2\n0 1 2\n0 7\n' > $H/col-past-k.smtx
printf '3, 4, 3\n0 2 1 3\n0 1 2\n' > $H/offsets-not-monotone.smtx
printf '2, 4, 3\n0 2 3\n1 1 0\n' > $H/duplicate-column.smtx
python3 - "$H" <<'PY'
import sys, numpy as np, scipy.sparse as sp
h = sys.argv[1]
m = sp.random(64, 96, density=0.1, format='csr', random_state=0, dtype=np.float32)
def save(name, indices=None, indptr=None, shape=None, rows=None):
    arrs = dict(data=m.data, indices=m.indices if indices is None else indices,
                indptr=m.indptr if indptr is None else indptr,
                shape=np.array(m.shape if shape is None else shape), format=np.array('csr'))
    if rows is not None: arrs['row_indices'] = rows
    np.savez(f'{h}/{name}.npz', **arrs)
i = m.indices.copy(); i[5] = 1000; save('index-past-k', indices=i)
i = m.indices.copy(); i[7] = -3; save('negative-index', indices=i)
p = m.indptr.copy(); p[-1] += 50; save('indptr-past-nnz', indptr=p)
save('shape-lies', shape=(64, 8))
save('row-order-not-a-permutation', rows=np.zeros(64, dtype=np.int32))
PY
echo "== corrupt inputs under compute-sanitizer memcheck"
for f in $H/*.smtx $H/*.npz; do
  for cmd in "verify $f --device cuda --op all --dtype all" "bench $f --n 64 --dtype f32,f16 --reps 5 --min-ms 1"; do
    compute-sanitizer --tool memcheck --error-exitcode 99 node bin/run.js $cmd > $H/out.txt 2> $H/err.txt; rc=$?
    san=$(grep -E "ERROR SUMMARY" $H/out.txt $H/err.txt | sed 's/.*ERROR SUMMARY/ERROR SUMMARY/' | head -1)
    echo "$(basename $f) ${cmd%% *}: rc=$rc | $(grep -v '^=========' $H/err.txt | head -1) | $san"
  done
done
echo "== SIGINT / SIGTERM during a bench suite"
for sig in INT TERM; do
  rm -f $H/suite.jsonl $H/suite.csv
  node bin/run.js bench --suite dlmc /tmp/suite/dlmc --op spmm --dtype f32,f16 --jsonl $H/suite.jsonl --csv $H/suite.csv > $H/s.out 2> $H/s.err &
  pid=$!; sleep 12
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | sed 's/^/  during: /'
  kill -$sig $pid; wait $pid; rc=$?; sleep 1
  echo "SIG$sig: rc=$rc stderr: $(tail -1 $H/s.err) | outputs left: $(ls $H | grep -c 'suite') | GPU apps after: $(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)"
done
