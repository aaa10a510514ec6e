#!/usr/bin/env bash
# Issue 5, v4 final build, call B (performance, default settings of each suite but the
# repetition limits): LLM layers at N = 16 and 64, the attention SDDMM suite, and the DLMC
# subset (SpMM and SDDMM, f32 and f16) against the anchors.
set -uo pipefail
source scripts/gpu/setup.sh
mkdir -p ../shared && tar xJf .gpu/dlmc.tar.xz -C ../shared
date -u +"date %Y-%m-%dT%H:%MZ"
run() { local name=$1; shift; local start=$(date +%s)
  node bin/run.js bench "$@" --jsonl $OUT/$name.jsonl --json > /dev/null 2> $OUT/$name.err
  echo "$name rc=$? $(( $(date +%s) - start )) s"; }
run llm --suite llm --n 16,64 --llm-sparsity 0.5,0.7,0.9,0.95 --dtype f32,f16,bf16 --max-reps 60 --min-ms 5
run attention --suite attention --attention-sparsity 0.5,0.7,0.9,0.95 --max-reps 40 --min-ms 5
run dlmc --suite dlmc ../shared/dlmc --compare .gpu/anchors.jsonl --max-reps 100 --min-ms 10 --plot $OUT/dlmc.svg
node -e '
const fs=require("fs");for(const f of ["llm","attention","dlmc"]){let L=[];try{L=fs.readFileSync(process.env.OUT+"/"+f+".jsonl","utf8").trim().split("\n").map(JSON.parse)}catch(e){continue}
const g={};let bad=0;for(const r of L){if(r.status!=="ok"){bad++;continue}const k=r.op+" "+r.dtype;for(const [b,s] of Object.entries(r.speedup||{})){(g[k+" vs "+b]??=[]).push(Math.log(s))}}
console.log(f,"cases",L.length,"not ok",bad);for(const [k,v] of Object.entries(g))console.log(" ",k,v.length,Math.exp(v.reduce((a,b)=>a+b,0)/v.length).toFixed(3))}'
