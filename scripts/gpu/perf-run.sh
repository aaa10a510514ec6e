#!/usr/bin/env bash
# The issue-5 kernel tuning run (tests, variant sweep, DLMC bench). Carry .gpu. Writes logs under $OUT.
set -uo pipefail
source scripts/gpu/setup.sh
mkdir -p ../shared && tar xJf .gpu/dlmc.tar.xz -C ../shared
date -u +"date %Y-%m-%dT%H:%MZ"
M="node --import tsx node_modules/mocha/bin/_mocha --no-config --timeout 0"
STAGE=${STAGE:-1}
echo "== kernel tests (CUDA)"
$M test/kernels/kernels.test.ts test/kernels/binding.test.ts 2>&1 | tee $OUT/tests.txt | grep -E "passing|failing|pending|skipping|^\s+[0-9]+\) " | head -40
echo "== variant sweep"
start=$(date +%s)
SPARSE_SPMM_SWEEP=$OUT/variants.jsonl timeout 200 $M test/kernels/spmm-variants.sweep.test.ts 2>&1 | tail -8
echo "sweep $(( $(date +%s) - start )) s"
echo "== DLMC bench spmm f32,f16"
start=$(date +%s)
timeout 240 node bin/run.js bench --suite dlmc ../shared/dlmc --op spmm --dtype f32,f16 --compare ../shared/anchors/dlmc_dev_h200.jsonl \
  --jsonl $OUT/dlmc.jsonl --max-reps 100 --min-ms 10 --json > $OUT/dlmc.json 2> $OUT/dlmc.err
echo "bench rc=$? $(( $(date +%s) - start )) s"
echo "== LLM N=16"
start=$(date +%s)
timeout 150 node bin/run.js bench --suite llm --n 16 --llm-sparsity 0.7,0.9 --dtype f32,f16,bf16 --max-reps 100 --min-ms 10 --jsonl $OUT/llm.jsonl --json > $OUT/llm.json 2> $OUT/llm.err
echo "llm rc=$? $(( $(date +%s) - start )) s"
node -e '
const fs=require("fs");for(const f of ["dlmc","llm"]){let L=[];try{L=fs.readFileSync(process.env.OUT+"/"+f+".jsonl","utf8").trim().split("\n").map(JSON.parse)}catch(e){continue}
const g={};for(const r of L){if(r.status!=="ok")continue;const k=r.op+" "+r.dtype;for(const [b,s] of Object.entries(r.speedup||{})){(g[k+" vs "+b]??=[]).push(Math.log(s))}}
for(const [k,v] of Object.entries(g))console.log(f,k,v.length,Math.exp(v.reduce((a,b)=>a+b,0)/v.length).toFixed(3))}
for(const r of (fs.existsSync(process.env.OUT+"/llm.jsonl")?fs.readFileSync(process.env.OUT+"/llm.jsonl","utf8").trim().split("\n").map(JSON.parse):[]))console.log(r.m+"x"+r.k,r.sparsity,r.dtype,(r.ms?.median*1000).toFixed(1),"us",JSON.stringify(r.baselines),r.impls?.ours?.detail)
'
