#!/usr/bin/env bash
# Call 3 (final version): CUDA kernel tests, DLMC verify sweep, DLMC SpMM bench (f32, f16) vs anchors, LLM N=16.
set -uo pipefail
source scripts/gpu/setup.sh
mkdir -p ../shared && tar xJf .gpu/dlmc.tar.xz -C ../shared
date -u +"date %Y-%m-%dT%H:%MZ"
M="node --import tsx node_modules/mocha/bin/_mocha --no-config --timeout 0"
echo "== kernel tests (CUDA)"
$M test/kernels/kernels.test.ts test/kernels/binding.test.ts > $OUT/tests.txt 2>&1; echo "tests rc=$?"
grep -E "passing|failing|pending|^\s+[0-9]+\) " $OUT/tests.txt | head -20
echo "== DLMC verify sweep"
SPARSE_DLMC_SWEEP=cuda timeout 150 $M test/verify/dlmc-sweep.test.ts 2>&1 | grep -E "cases|FAILED|passing|failing" | head -20
echo "== DLMC bench spmm f32,f16"
start=$(date +%s)
timeout 200 node bin/run.js bench --suite dlmc ../shared/dlmc --op spmm --dtype f32,f16 --compare ../shared/anchors/dlmc_dev_h200.jsonl \
  --jsonl $OUT/dlmc.jsonl --max-reps 100 --min-ms 10 --json > /dev/null 2> $OUT/dlmc.err
echo "bench rc=$? $(( $(date +%s) - start )) s"
echo "== LLM N=16"
start=$(date +%s)
timeout 120 node bin/run.js bench --suite llm --n 16 --llm-sparsity 0.5,0.7,0.9,0.95 --dtype f32,f16,bf16 --max-reps 100 --min-ms 10 --jsonl $OUT/llm.jsonl --json > /dev/null 2> $OUT/llm.err
echo "llm rc=$? $(( $(date +%s) - start )) s"
node -e '
const fs=require("fs");for(const f of ["dlmc","llm"]){let L=[];try{L=fs.readFileSync(process.env.OUT+"/"+f+".jsonl","utf8").trim().split("\n").map(JSON.parse)}catch(e){continue}
const g={};for(const r of L){if(r.status!=="ok")continue;const k=r.op+" "+r.dtype;for(const [b,s] of Object.entries(r.speedup||{})){(g[k+" vs "+b]??=[]).push(Math.log(s))}}
for(const [k,v] of Object.entries(g))console.log(f,k,v.length,Math.exp(v.reduce((a,b)=>a+b,0)/v.length).toFixed(3))}'
