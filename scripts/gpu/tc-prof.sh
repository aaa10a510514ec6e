#!/usr/bin/env bash
# Issue 5, v4: Nsight Compute stall breakdown of one launch of each tensor-core kernel.
set -uo pipefail
source scripts/gpu/setup.sh > /dev/null
R=smsp__average_warps_issue_stalled
MET=gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_shared_ld.sum
for s in barrier long_scoreboard short_scoreboard mio_throttle math_pipe_throttle wait lg_throttle membar dispatch_stall not_selected selected tex_throttle drain imc_miss no_instruction misc branch_resolving sleeping; do MET=$MET,${R}_${s}_per_issue_active.ratio; done
timeout 200 ncu --metrics $MET -k regex:"SpmmTc|SddmmTc" node scripts/gpu/tc-prof.mjs tc_w4_s2_p3 > $OUT/ncu.txt 2>&1; echo "ncu rc=$?"
grep -E "SpmmTc|SddmmTc|duration|inst_executed|warps_active|hmma|lsu|bank|stalled" $OUT/ncu.txt | sed 's/smsp__average_warps_issue_stalled_//' | head -120
