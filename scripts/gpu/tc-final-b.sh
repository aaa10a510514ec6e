#!/usr/bin/env bash
# Issue 5, v4 final build, call B (argument 1: the DLMC verify sweep, then performance of
# the LLM and attention suites; 2: the DLMC bench). Performance at default settings of each suite but the
# repetition limits): LLM layers at N = 16 and 64, the attention SDDMM suite, and the DLMC
# subset (SpMM and SDDMM, f32 and f16) against the anchors.
set -uo pipefail
source scripts/gpu/setup.sh
mkdir -p ../shared/anchors && tar xJf .gpu/dlmc.tar.xz -C ../shared && cp .gpu/anchors.jsonl ../shared/anchors/dlmc_dev_h200.jsonl
date -u +"date %Y-%m-%dT%H:%MZ"
run() { local name=$1; shift; local start=$(date +%s)
  node bin/run.js bench "$@" --jsonl $OUT/$name.jsonl --json > /dev/null 2> $OUT/$name.err
  echo "$name rc=$? $(( $(date +%s) - start )) s"; }
PART=${1:-1}
if [ "$PART" = 1 ]; then
echo "== DLMC verify sweep"
start=$(date +%s)
SPARSE_DLMC_SWEEP=cuda SPARSE_DLMC_SWEEP_OUT=$OUT/sweep.jsonl timeout 240 node --import tsx node_modules/mocha/bin/_mocha --no-config --timeout 0 test/verify/dlmc-sweep.test.ts > $OUT/sweep.txt 2>&1; echo "sweep rc=$? $(( $(date +%s) - start )) s"
grep -E "cases|FAILED|passing|failing" $OUT/sweep.txt | head -20
run llm --suite llm --n 16,64 --llm-sparsity 0.5,0.7,0.9,0.95 --dtype f32,f16,bf16 --max-reps 60 --min-ms 5
run attention --suite attention --attention-sparsity 0.5,0.7,0.9,0.95 --max-reps 40 --min-ms 5
else
run dlmc --suite dlmc ../shared/dlmc --compare .gpu/anchors.jsonl --max-reps 100 --min-ms 10 --plot $OUT/dlmc.svg
fi
node -e '
const fs=require("fs");for(const f of ["llm","attention","dlmc"]){let L=[];try{L=fs.readFileSync(process.env.OUT+"/"+f+".jsonl","utf8").trim().split("\n").map(JSON.parse)}catch(e){continue}
const g={};let bad=0;for(const r of L){if(r.status!=="ok"){bad++;continue}const k=r.op+" "+r.dtype;for(const [b,s] of Object.entries(r.speedup||{})){(g[k+" vs "+b]??=[]).push(Math.log(s))}}
console.log(f,"cases",L.length,"not ok",bad);for(const [k,v] of Object.entries(g))console.log(" ",k,v.length,Math.exp(v.reduce((a,b)=>a+b,0)/v.length).toFixed(3))}'
