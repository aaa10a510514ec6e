#!/usr/bin/env bash
# Prepares .gpu/ (ignored by git) for a run on the GPU machine, which has no Node.js and
# no package registry: the Node binary, node_modules (less the build-only packages), the
# compiled JS and the built addon, each xz-compressed. Carry `.gpu` with the device call
# and start the command there with `source scripts/gpu/setup.sh`.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .gpu
[ -f .gpu/node.xz ] || xz -T2 -c "$(command -v node)" > .gpu/node.xz
npm run build >/dev/null
[ -f build/Release/sparse.node ] || { echo "build/Release/sparse.node missing: run npm install (or npx node-gyp rebuild)" >&2; exit 1; }
# NOTE: typescript, the AWS SDK (pulled in by the oclif packager) and type packages are
# build-time only; the tests run through tsx, which brings its own esbuild.
tar -cJf .gpu/modules.tar.xz --exclude='node_modules/typescript' --exclude='node_modules/@aws-sdk' \
  --exclude='node_modules/@smithy' --exclude='node_modules/@inquirer' --exclude='node_modules/@types' \
  --exclude='node_modules/oclif' node_modules
tar -cJf .gpu/app.tar.xz dist build/Release/sparse.node
du -sh .gpu/*
