#!/usr/bin/env bash
# Where a workbench kernel's register spills sit: for each kernel whose mangled name matches
# PATTERN, the local-memory stores and loads (STL, LDL) of its SASS counted by the source line
# they come from (the workbenches are built with -lineinfo). Needs cuobjdump and nvdisasm (the
# GPU machine's CUDA toolkit; the build machine has neither). Run there:
#   bash scripts/gpu/probe/spills.sh BINARY PATTERN [MAX_LINES]
# e.g. bash scripts/gpu/probe/spills.sh "$GPU_TMP/gb/gemm_probe" 'Li256ELi3ELi1ELi1ELi1ELb0ELi128ELi[01]E'
# Prints per kernel: its name, then "count STL|LDL file:line" for its MAX_LINES (default 20)
# busiest lines.
set -euo pipefail
bin=${1:?binary} pattern=${2:?kernel name pattern} max=${3:-20}
for tool in cuobjdump nvdisasm; do
  command -v "$tool" >/dev/null || { echo "spills.sh: $tool not found (the GPU machine's CUDA toolkit has it)"; exit 1; }
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
(cd "$dir" && cuobjdump -xelf all "$bin" >/dev/null)
for cubin in "$dir"/*.cubin; do
  nvdisasm -g -c "$cubin" >"$cubin.sass" 2>/dev/null || continue
  # Function headers are ".text.<mangled>:" lines; line info is "//## File "...", line N".
  awk -v pat="$pattern" -v max="$max" '
    /^\.text\./ { fn = $1; sub(/^\.text\./, "", fn); sub(/:$/, "", fn); on = fn ~ pat; if (on) seen[fn] = 1; next }
    !on { next }
    /\/\/## File/ { f = $0; sub(/.*File "/, "", f); sub(/", line /, ":", f); sub(/[ ,].*/, "", f); where = f; next }
    /[^A-Z]STL[. ]/ { n[fn SUBSEP "STL " where]++ }
    /[^A-Z]LDL[. ]/ { n[fn SUBSEP "LDL " where]++ }
    END {
      for (fn in seen) {
        print fn
        m = 0
        for (k in n) { split(k, q, SUBSEP); if (q[1] == fn) rows[++m] = sprintf("%6d %s", n[k], q[2]) }
        if (m == 0) print "     0 spills"
        # the busiest lines first
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (rows[j] + 0 > rows[i] + 0) { t = rows[i]; rows[i] = rows[j]; rows[j] = t }
        for (i = 1; i <= m && i <= max; i++) print rows[i]
        delete rows
      }
    }' "$cubin.sass"
done
