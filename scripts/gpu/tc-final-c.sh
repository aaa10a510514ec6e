#!/usr/bin/env bash
# Issue 5, v4 final build, call C: the kernel tests and the DLMC SDDMM f16 bench after the
# last selection change (tensor-core SDDMM only on masks of at least 2048 x 2048).
set -uo pipefail
source scripts/gpu/setup.sh
mkdir -p ../shared/anchors && tar xJf .gpu/dlmc.tar.xz -C ../shared && cp .gpu/anchors.jsonl ../shared/anchors/dlmc_dev_h200.jsonl
date -u +"date %Y-%m-%dT%H:%MZ"
timeout 120 node --import tsx node_modules/mocha/bin/_mocha --no-config --timeout 0 test/kernels/kernels.test.ts \
  test/kernels/binding.test.ts test/kernels/tc-format.test.ts > $OUT/tests.txt 2>&1; echo "tests rc=$?"
grep -E "passing|failing|pending" $OUT/tests.txt
start=$(date +%s)
node bin/run.js bench --suite dlmc ../shared/dlmc --op sddmm --dtype f16 --compare .gpu/anchors.jsonl --max-reps 100 --min-ms 10 \
  --jsonl $OUT/dlmc-sddmm.jsonl --json > /dev/null 2> $OUT/dlmc-sddmm.err; echo "bench rc=$? $(( $(date +%s) - start )) s"
node -e '
const L=require("fs").readFileSync(process.env.OUT+"/dlmc-sddmm.jsonl","utf8").trim().split("\n").map(JSON.parse).filter(r=>r.status==="ok");
const g=a=>Math.exp(a.reduce((x,y)=>x+Math.log(y),0)/a.length);
console.log("cases",L.length,"tc",L.filter(r=>r.impls.ours.detail.includes("_tc_")).length,"vs cusparse",g(L.map(r=>r.speedup.cusparse)).toFixed(3),"vs cublas_f16",g(L.map(r=>r.speedup.cublas_f16)).toFixed(3))'
