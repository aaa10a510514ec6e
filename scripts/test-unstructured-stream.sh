#!/usr/bin/env bash
# Builds and runs the CPU test of the unstructured stream's encoder (no GPU, no Node), and builds
# and checks its timing program:
#   bash scripts/test-unstructured-stream.sh [OUT_DIR]   (default /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp}
mkdir -p "$out"
g++ -std=c++17 -O2 -Wall -Wextra -pthread -Inative test/native/unstructured_stream_test.cc native/common/unstructured_stream.cc \
  -o "$out/unstructured_stream_test"
"$out/unstructured_stream_test"
# The encoder's timing program (scripts/bench-unstructured-stream.sh) on a small matrix: it builds,
# and its builds on 1, 2 and the hardware's threads agree.
g++ -std=c++17 -O2 -Wall -Wextra -pthread -Inative test/native/unstructured_stream_bench.cc native/common/unstructured_stream.cc \
  -o "$out/unstructured_stream_bench"
"$out/unstructured_stream_bench" 300 1000 0.3 >/dev/null
echo "encoder timing program: builds agree"
