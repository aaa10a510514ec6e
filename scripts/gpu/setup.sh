# Sourced at the start of a device command (see scripts/gpu/pack.sh): unpacks Node to /tmp,
# node_modules, dist/ and the addon into the working tree, and puts `node` on the PATH.
# GPU_DIR (default .gpu): the folder pack.sh filled.
GPU_DIR=${GPU_DIR:-.gpu}
xz -dc "$GPU_DIR/node.xz" > /tmp/node && chmod +x /tmp/node && export PATH=/tmp:$PATH
tar -xJf "$GPU_DIR/modules.tar.xz" && tar -xJf "$GPU_DIR/app.tar.xz"
export SPARSE_BIN="node $PWD/bin/run.js"
node --version && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
