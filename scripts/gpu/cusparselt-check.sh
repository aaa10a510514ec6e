#!/usr/bin/env bash
# Builds and runs the cuSPARSELt self-check (scripts/gpu/cusparselt-check.cc) on the GPU
# machine, from the repository root:   bash scripts/gpu/cusparselt-check.sh
# Needs g++ and the CUDA toolkit (CUDA_HOME, default /usr/local/cuda); no Node, no addon.
# When the cuSPARSELt wheel's header is found (next to the library, or by Python), the check
# also compares libs.h's enum values and opaque struct size with it. Prints which library
# file was loaded, its version, and one line per check; exit status 0 all passed, 1 a check
# failed, 2 the library or the GPU is missing. $OUT, when set, receives the output.
set -uo pipefail
CUDA=${CUDA_HOME:-/usr/local/cuda}
BIN=${TMPDIR:-/tmp}/cusparselt-check
SRC=(scripts/gpu/cusparselt-check.cc native/bench/libs.cc)
FLAGS=(-std=c++17 -O2 -Wall -DSPARSE_WITH_CUDA=1 -Inative -I"$CUDA/include")
LIBS=("$CUDA/lib64/libcudart_static.a" -ldl -lrt -lpthread)

# The wheel's include folder: beside SPARSE_CUSPARSELT_PATH, else where Python finds the wheel.
include=""
if [ -n "${SPARSE_CUSPARSELT_PATH:-}" ]; then
  d=$SPARSE_CUSPARSELT_PATH; [ -d "$d" ] || d=$(dirname "$d")
  [ -f "$d/../include/cusparseLt.h" ] && include="$d/../include"
fi
if [ -z "$include" ]; then
  root=$(python3 -c 'import importlib.util as u; s = u.find_spec("nvidia.cusparselt"); print(list(s.submodule_search_locations)[0])' 2>/dev/null)
  [ -n "$root" ] && [ -f "$root/include/cusparseLt.h" ] && include="$root/include"
fi

built=0
if [ -n "$include" ] && g++ "${FLAGS[@]}" -DSPARSE_WITH_CUSPARSELT_H=1 -I"$include" "${SRC[@]}" "${LIBS[@]}" -o "$BIN"; then
  echo "built with the header in $include"
  built=1
elif g++ "${FLAGS[@]}" "${SRC[@]}" "${LIBS[@]}" -o "$BIN"; then
  echo "built without cusparseLt.h${include:+ (the build with $include failed)}: enum values checked by the products only"
  built=1
fi
[ $built -eq 1 ] || { echo "build failed"; exit 1; }

if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  "$BIN" | tee "$OUT/cusparselt-check.txt"
else
  "$BIN"
fi
