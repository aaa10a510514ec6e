#!/usr/bin/env bash
# B padded to the 2:4 streaming engine's box before each launch (issue 23, v43: SPARSE_S24E_PAD,
# docs/stream-engine.md "v43"), checked and timed against B read as it is, in one sh task:
# `verify` forced to each engine variant with SPARSE_S24E_PAD=all (every N 9-63 narrower than
# its box padded) on three 2:4-pruned matrices (1000 x 1000, 77 x 3008, 4096 x 1024), f16 and
# bf16, N = 9, 13, 17, 24, 29, 33, 40, 48, 56, 57, 63; then the bench of the suite's three shapes
# and two held out of every fit (14336 x 4096, 6144 x 4096), f16, N = 13, 24, 29, 33, 40, 48, 56,
# 63, 64, with SPARSE_S24E_PAD=all and =off (the selection's variant each time), and a table of
# the padded time over the unpadded one by N (events and graph). Run on the GPU machine by
# run.sh's sh task, which sets W (its output folder) and the tree:
#   GPU_DIR=.gpu/packNN TASK_TIMEOUT=400 bash scripts/gpu/run.sh sh 'bash scripts/gpu/stream24-pad.sh'
# NS=... sets the bench's N; VERIFY_VARIANTS= (empty) leaves the verify out; HELDOUT='MxK ...' the
# held-out shapes (default 14336x4096 6144x4096), SUITE=0 leaves the suite's out; MODES='A B ...' the
# modes compared (default 'off all': a table of each later mode's time over A's), values of the
# variable AB_VAR (default SPARSE_S24E_PAD; e.g. AB_VAR=SPARSE_S24E_PAD_PDL MODES='off on' times the
# copy kernel under PDL against without, B padded by the default rule; AB_VAR=SPARSE_S24E_L2_AHEAD
# MODES='0 2 8' the L2 prefetch distances, v46).
# The held-out shapes are timed one at a time, every mode in turn (v47), so that a run cut by its
# time limit keeps whole A/B pairs; the suite is one bench per mode. A mode may not be named twice.
# Writes $W/verify_pad_<variant>.json, $W/pad_<mode>_<suite|heldout>.jsonl / .txt and $W/pad.txt (the table);
# the weights go to a scratch folder outside $W and are removed after.
set -uo pipefail
: "${W:?set by run.sh: run this through its sh task}"
D=$(mktemp -d /tmp/stream24-pad.XXXXXX)
trap 'rm -rf "$D"' EXIT
read -r -a HELD <<<"${HELDOUT:-14336x4096 6144x4096}"
read -r -a MODE_AB <<<"${MODES:-off all}"
AB=${AB_VAR:-SPARSE_S24E_PAD}
# Each mode's files are named after it: a repeated word would overwrite the first's (v47 lost a
# call to "0 1 0"); a repeat of a value is written differently ("0 1 00": atoi reads 00 as 0).
if [ "$(printf '%s\n' "${MODE_AB[@]}" | sort | uniq -d)" != "" ]; then
  echo "stream24-pad.sh: MODES names a mode twice ($MODES); write a repeat differently, e.g. 0 and 00" >&2
  exit 2
fi
python3 scripts/gpu/stream24-weights.py "$D" 30 p1000x1000 p77x3008 p4096x1024 "${HELD[@]/#/w}"
rc=0
for v in ${VERIFY_VARIANTS-s24e_w8_k256 s24e_w4_k256}; do
  SPARSE_S24E_PAD=all SPARSE_SPMM_VARIANT=$v node bin/run.js verify "$D/p1000x1000.npy" "$D/p77x3008.npy" "$D/p4096x1024.npy" \
    --op spmm --dtype f16,bf16 --n 9,13,17,24,29,33,40,48,56,57,63 --device cuda --json \
    >"$W/verify_pad_$v.json" 2>"$W/verify_pad_$v.err" || rc=1
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], 'verify padded', d['passed'], 'passed', d['failed'], 'failed')" \
    "$W/verify_pad_$v.json" "$v" || rc=1
done
NS=${NS:-13,24,29,33,40,48,56,63,64}
WHATS=(heldout)
[ "${SUITE:-1}" = 0 ] || WHATS=(suite heldout)
HELD_FILES=()
for s in "${HELD[@]}"; do HELD_FILES+=("$D/w$s.npy"); done
# One bench per mode on the suite, then per held-out shape every mode in turn (appended to the
# mode's files): a run cut by its time limit still holds every mode of the shapes it finished.
bench() {  # bench MODE WHAT SOURCE...
  local mode=$1 what=$2
  shift 2
  env "$AB=$mode" node bin/run.js bench "$@" --n "$NS" --pattern 2:4 --dtype f16 --baseline dense \
    --max-reps 60 --min-ms 6 --jsonl "$W/pad_bench.jsonl" >"$W/pad_bench.txt" 2>&1 || rc=1
  cat "$W/pad_bench.jsonl" >>"$W/pad_${mode}_$what.jsonl" 2>/dev/null
  cat "$W/pad_bench.txt" >>"$W/pad_${mode}_$what.txt"
  rm -f "$W/pad_bench.jsonl" "$W/pad_bench.txt"
}
for mode in "${MODE_AB[@]}"; do
  for what in "${WHATS[@]}"; do : >"$W/pad_${mode}_$what.jsonl"; : >"$W/pad_${mode}_$what.txt"; done
done
for what in "${WHATS[@]}"; do
  if [ "$what" = suite ]; then
    for mode in "${MODE_AB[@]}"; do bench "$mode" suite --suite llm; done
  else
    for f in "${HELD_FILES[@]}"; do
      for mode in "${MODE_AB[@]}"; do bench "$mode" heldout "$f"; done
    done
  fi
done
python3 - "$W" "$AB" "${MODE_AB[@]}" >"$W/pad.txt" <<'PY' || rc=1
import json, math, os, sys
w, AB, mode_a, modes_b = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def load(mode):
    out = {}
    for what in ('suite', 'heldout'):
        path = f'{w}/pad_{mode}_{what}.jsonl'
        if not os.path.exists(path):
            continue
        for line in open(path):
            r = json.loads(line)
            if r.get('status') == 'ok' and r.get('dtype') == 'f16':
                o = r['impls']['ours']
                out[(r['m'], r['k'], r['n'])] = (o['ms']['median'], o.get('graphMsPerLaunch'), r['impls']['cublas_f16']['ms']['median'], r.get('variant'))
    return out
base = load(mode_a)
gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')
for mode_b in modes_b:
    other = load(mode_b)
    a, b = mode_a[:6], mode_b[:6]
    print(f'{mode_b} against {mode_a} ({AB}): the time of {mode_b} over that of {mode_a}')
    print(f"{'shape':>12} {'N':>3} | {a + ' us':>9} {b + ' us':>9} {'ratio':>7} | {'graph':>7} | x cuBLAS {a} / {b} | variants")
    byn = {}
    for key in sorted(base):
        if key not in other:
            continue
        (eo, go, c, vo), (ep, gp, _, vp) = base[key], other[key]
        g = gp / go if go and gp else float('nan')
        byn.setdefault(key[2], []).append((ep / eo, g))
        print(f"{key[0]}x{key[1]:<6} {key[2]:>3} | {eo*1e3:9.1f} {ep*1e3:9.1f} {ep/eo:7.3f} | {g:7.3f} | {c/eo:5.2f} / {c/ep:5.2f} | {vo} / {vp}")
    print(f'{mode_b} / {mode_a} by N (geomean over shapes; below 1: {mode_b} faster):')
    for n in sorted(byn):
        print(f"  N = {n:>2}: events {gm([e for e, _ in byn[n]]):.3f}, graph {gm([g for _, g in byn[n] if g == g]):.3f}")
    allv = [e for v in byn.values() for e, _ in v]
    allg = [g for v in byn.values() for _, g in v if g == g]
    print(f"  all: events {gm(allv):.3f}, graph {gm(allg):.3f} ({len(allv)} cells)")
PY
cat "$W/pad.txt"
exit $rc
