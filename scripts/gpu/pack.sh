#!/usr/bin/env bash
# Prepares .gpu/ (ignored by git) for a run on the GPU machine, which has no Node.js and
# no package registry: the Node binary, node_modules (less the build-only packages), the
# compiled JS and the built addon, each xz-compressed. Carry `.gpu` with the device call
# and start the command there with `source scripts/gpu/setup.sh`.
# GPU_DIR (default .gpu) names the folder, so that several runs prepared at once can pack apart
# (e.g. GPU_DIR=.gpu-bench, then `GPU_DIR=.gpu-bench source scripts/gpu/setup.sh` there);
# SPARSE_ADDON_BUILD takes the addon from another build folder (packed as build/Release).
set -euo pipefail
cd "$(dirname "$0")/../.."
GPU_DIR=${GPU_DIR:-.gpu}
ADDON=${SPARSE_ADDON_BUILD:-build/Release/sparse.node}
mkdir -p "$GPU_DIR"
[ -f "$GPU_DIR/node.xz" ] || xz -T2 -c "$(command -v node)" > "$GPU_DIR/node.xz"
npm run build >/dev/null
[ -f "$ADDON" ] || { echo "$ADDON missing: run npm install (or npx node-gyp rebuild)" >&2; exit 1; }
# NOTE: typescript, the AWS SDK (pulled in by the oclif packager) and type packages are
# build-time only; the tests run through tsx, which brings its own esbuild.
tar -cJf "$GPU_DIR/modules.tar.xz" --exclude='node_modules/typescript' --exclude='node_modules/@aws-sdk' \
  --exclude='node_modules/@smithy' --exclude='node_modules/@inquirer' --exclude='node_modules/@types' \
  --exclude='node_modules/oclif' node_modules
stage=$(mktemp -d)
mkdir -p "$stage/build/Release" && cp "$ADDON" "$stage/build/Release/sparse.node"
tar -cJf "$GPU_DIR/app.tar.xz" dist -C "$stage" build/Release/sparse.node
rm -rf "$stage"
du -sh "$GPU_DIR"/*
