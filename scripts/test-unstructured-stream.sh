#!/usr/bin/env bash
# Builds and runs the CPU test of the unstructured stream's encoder (no GPU, no Node):
#   bash scripts/test-unstructured-stream.sh [OUT_DIR]   (default /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp}
mkdir -p "$out"
g++ -std=c++17 -O2 -Wall -Wextra -Inative test/native/unstructured_stream_test.cc native/common/unstructured_stream.cc \
  -o "$out/unstructured_stream_test"
"$out/unstructured_stream_test"
