#!/usr/bin/env bash
# Times the unstructured stream's encoder on the host (no GPU, no Node):
#   bash scripts/bench-unstructured-stream.sh [REV] [M K DENSITY]
# REV (a commit, or "-" for the working tree, the default): the encoder to time; one from before
# v34 (no threads argument) is timed serially. Builds under /tmp.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:--}
shift || true
out=$(mktemp -d /tmp/unst-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
src=native/common/unstructured_stream.cc
flags=()
if [ "$rev" != "-" ]; then
  mkdir -p "$out/tree/common"
  git show "$rev:native/common/unstructured_stream.cc" > "$out/unstructured_stream.cc"
  git show "$rev:native/common/unstructured_stream.h" > "$out/tree/common/unstructured_stream.h"
  src=$out/unstructured_stream.cc
  flags=(-I"$out/tree")
  grep -q 'int threads' "$out/tree/common/unstructured_stream.h" || flags+=(-DENCODER_SERIAL)
fi
g++ -std=c++17 -O2 -pthread "${flags[@]}" -Inative test/native/unstructured_stream_bench.cc "$src" -o "$out/bench"
"$out/bench" "$@"
