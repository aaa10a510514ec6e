#!/usr/bin/env bash
# Issue 25: the 2:4 GEMM engine (s24g) and cuSPARSELt's kernel under Nsight Compute on the same
# problems, side by side (docs/gemm-engine.md "v53"). Run on the GPU machine by run.sh's sh task:
#   GPU_DIR=.gpu/pNN bash scripts/gpu/run.sh sh 'bash scripts/gpu/s24g-ncu.sh'
# CASES (default "4096x4096:256 11008x4096:1024") are MxK:N, f16. For each case the bench runs
# once without ncu, for cuSPARSELt's searched algorithm id (its detail), which the runs under ncu
# then pin (SPARSE_CUSPARSELT_ALG: no search there, whose hundreds of launches ncu would slow
# and so change its choice; v53's first version profiled whatever the disturbed search chose).
# For each library the bench then runs under ncu twice: first every launch of the kernel (ours:
# GemmKernel; cuSPARSELt: its sparse GEMM) with its duration only, to count them; then --set full
# on the last launch but one (the timed loop's). Writes $W/<case>_<lib>.launches.csv (duration in
# ns, then the name, of every launch), $W/<case>_<lib>.details.txt (ncu's details page) and
# $W/<case>.jsonl (the plain run), and prints a few lines of each, then the pair side by side
# (scripts/gpu/s24g-ncu-pair.py). NCU_SOURCE=1 (v59) also writes $W/<case>_<lib>.sass.csv, the
# source page of the same profile: each SASS instruction with its executions and its warp-state
# samples by stall reason, summed up by scripts/gpu/sass-stalls.py (where in the loop each kernel
# waits: for data at an mbarrier, or for the tensor cores).
set -uo pipefail
: "${W:?set by run.sh: run this through its sh task}"
CASES=${CASES:-"4096x4096:256 11008x4096:1024"}
D=$(mktemp -d /tmp/s24g-ncu.XXXXXX)
trap 'rm -rf "$D"' EXIT
shapes=()
for c in $CASES; do shapes+=("w${c%%:*}"); done
python3 scripts/gpu/stream24-weights.py "$D" 25 $(printf '%s\n' "${shapes[@]}" | sort -u) || exit 1
BENCH=(--pattern 2:4 --dtype f16 --reps 10 --max-reps 10 --min-ms 0 --warmup 2)
rc=0
for c in $CASES; do
  shape=${c%%:*} n=${c##*:}
  node bin/run.js bench "$D/w$shape.npy" --n "$n" --baseline cusparselt "${BENCH[@]}" --jsonl "$W/${shape}_n$n.jsonl" \
    >"$W/${shape}_n$n.bench.txt" 2>&1 || rc=1
  alg=$(python3 -c "import json,re,sys; c=json.loads(open(sys.argv[1]).readline()); d=c['impls']['cusparselt']['detail']; print(re.search(r'algorithm (\d+)', d).group(1))" "$W/${shape}_n$n.jsonl") ||
    { echo "${shape}_n$n: no cuSPARSELt algorithm in the plain run"; rc=1; continue; }
  echo "${shape}_n$n: cuSPARSELt's search chose algorithm $alg (pinned under ncu)"
  export SPARSE_CUSPARSELT_ALG=$alg
  for lib in ours cusparselt; do
    if [ $lib = ours ]; then re=GemmKernel base=none; else re=sparse_gemm base=cusparselt; fi
    tag=${shape}_n${n}_$lib
    ncu --metrics gpu__time_duration.sum -k "regex:$re" --csv --print-summary none --log-file "$D/count.csv" \
      node bin/run.js bench "$D/w$shape.npy" --n "$n" --baseline "$base" "${BENCH[@]}" \
      >"$W/$tag.count.log" 2>&1 || rc=1
    python3 - "$D/count.csv" "$W/$tag.launches.csv" <<'EOF'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5 and not r[0].startswith('==')]
head, body = rows[0], rows[1:]
name, value = head.index('Kernel Name'), head.index('Metric Value')
with open(sys.argv[2], 'w') as f:
    for r in body:
        # ncu writes the value with thousands separators (21,088)
        f.write(f'{r[value].replace(",", "")},{r[name]}\n')
EOF
    total=$(wc -l <"$W/$tag.launches.csv")
    echo "$tag: $total launches of /$re/; last: $(tail -1 "$W/$tag.launches.csv" | cut -c1-160)"
    [ "$total" -ge 2 ] || { rc=1; continue; }
    ncu --set full --clock-control none -k "regex:$re" --launch-skip $((total - 2)) --launch-count 1 \
      -o "$D/$tag" node bin/run.js bench "$D/w$shape.npy" --n "$n" --baseline "$base" "${BENCH[@]}" \
      >"$W/$tag.ncu.log" 2>&1 || rc=1
    ncu --import "$D/$tag.ncu-rep" --page details --print-details all --print-summary none >"$W/$tag.details.txt" 2>&1 || rc=1
    if [ "${NCU_SOURCE:-0}" = 1 ]; then
      ncu --import "$D/$tag.ncu-rep" --page source --print-source sass --csv >"$W/$tag.sass.csv" 2>&1 || rc=1
      python3 scripts/gpu/sass-stalls.py "$W/$tag.sass.csv" --top 6 || rc=1
    fi
    grep -E '^ +(Duration|SM Frequency|DRAM Throughput|Compute \(SM\) Throughput|SM: Pipe Tensor|L1/TEX Cache Throughput|Warp Cycles Per Issued|Registers Per Thread|Grid Size|Block Size|Cluster Size|Dynamic Shared)' \
      "$W/$tag.details.txt" | sort -u | sed 's/^ */  /'
  done
  unset SPARSE_CUSPARSELT_ALG
  # Side by side (v58's reading, by hand before): the work each kernel gives the tensor and the
  # shared-memory pipes, and how much of its SM active cycles they are busy.
  python3 scripts/gpu/s24g-ncu-pair.py "$W/${shape}_n${n}_ours.details.txt" "$W/${shape}_n${n}_cusparselt.details.txt" || rc=1
done
exit $rc
