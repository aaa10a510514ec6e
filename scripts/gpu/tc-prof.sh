#!/usr/bin/env bash
# Issue 5, v4: Nsight Compute on one launch of each tensor-core kernel, and their SASS.
set -uo pipefail
source scripts/gpu/setup.sh > /dev/null
which ncu cuobjdump
cuobjdump -sass build/Release/sparse.node > /tmp/all.sass 2>&1
awk '/Function : .*SpmmTcKernelILNS_5DTypeE1ELi8ELi2ELi4E/{p=1} p{print} p&&/EXIT/{n++} p&&/Function : /&&!/SpmmTcKernelILNS_5DTypeE1ELi8ELi2ELi4E/{exit}' /tmp/all.sass | head -1500 > $OUT/sass_spmm.txt
awk '/Function : .*SddmmTcKernelILNS_5DTypeE1ELi8ELi4E/{p=1} p&&/Function : /&&!/SddmmTcKernelILNS_5DTypeE1ELi8ELi4E/{exit} p{print}' /tmp/all.sass | head -1500 > $OUT/sass_sddmm.txt
wc -l $OUT/*.txt
timeout 240 ncu --set full -k regex:"SpmmTc|SddmmTc" -c 2 node scripts/gpu/tc-prof.mjs > $OUT/ncu.txt 2>&1; echo "ncu rc=$?"
grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|Stall|Achieved Occupancy|Registers Per|Theoretical Occ|Block Limit|L2 Hit|DRAM Throughput|Memory Throughput|Compute \(SM\)" $OUT/ncu.txt | head -60
