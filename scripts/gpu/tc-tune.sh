#!/usr/bin/env bash
# Issue 5, v4: `sparse bench --tune` on LLM layers in f16 (the tensor-core variants are
# candidates too), then the same cases again from the cache.
set -uo pipefail
source scripts/gpu/setup.sh > /dev/null
date -u +"date %Y-%m-%dT%H:%MZ"
for pass in tune cached; do
  start=$(date +%s)
  extra=""; [ $pass = tune ] && extra="--tune"
  node bin/run.js bench --suite llm --n 16,64 --llm-sparsity 0.7,0.9 --dtype f16 --baseline dense $extra \
    --tune-cache $OUT/tune.json --tune-min-ms 5 --max-reps 40 --min-ms 5 --jsonl $OUT/$pass.jsonl --json > /dev/null 2> $OUT/$pass.err
  echo "$pass rc=$? $(( $(date +%s) - start )) s"
done
node -e '
const fs=require("fs");const rd=f=>fs.readFileSync(process.env.OUT+"/"+f,"utf8").trim().split("\n").map(JSON.parse);
for(const r of rd("tune.jsonl"))console.log(r.file,"n"+r.n,(r.ms.median*1e3).toFixed(1),"us dense",(r.baselines.cublas_f16*1e3).toFixed(1),r.impls.ours.detail.split(/[,;]/)[0],JSON.stringify(r.tune||r.variantSource||""))
for(const r of rd("cached.jsonl"))console.log("cached",r.file,"n"+r.n,(r.ms.median*1e3).toFixed(1),r.impls.ours.detail.split(/[,;]/)[0],r.variantSource||"")'
