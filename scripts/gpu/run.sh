#!/usr/bin/env bash
# The GPU runner: packs here, runs there. Reference: docs/gpu-runs.md.
#
#   bash scripts/gpu/run.sh pack [DATASET...] [-- TASK [ARGS]...]     here (the build machine)
#   bash scripts/gpu/run.sh TASK [ARGS] [TASK [ARGS]]...              there (the GPU machine)
#
# The GPU machine has no Node.js and no npm. `pack` writes everything a run needs into the
# ignored folder $GPU_DIR (default .gpu), xz-compressed: the Node binary, node_modules (less
# the build-only packages), dist/ and the built addon, and the data sets named (folders or
# files under ../shared, e.g. dlmc, anchors, dlmc/transformer/magnitude_pruning/0.9). It
# prints the carry list and the device command. There, the first task unpacks them (once per
# pack: a warm machine keeps what it unpacked), then each task writes its logs and JSON into
# $GPU_TMP/<task>/, packs them as $OUT/<task>.tar.xz, and adds a few lines to
# $OUT/summary.txt, which is printed last. A word that is a task name starts the next task.
#
# Tasks: test verify-dlmc bench-dlmc bench-llm bench-attention bench tune sweep sanitize profile
# enums probe engine gemm unst sh (engine, gemm and unst alone need no pack: they build their
# workbenches there, or unst runs the one built here). Environment variables set before run.sh reach every task (e.g.
# SPARSE_SDDMM_VARIANT=simt for an A/B run; TASK_TIMEOUT=S overrides each step's limit).
# Exit status: 0 when every task succeeded, 1 when one failed (the others still ran),
# 2 for bad usage (unknown task, too many tasks, a missing data set), 3 when the packed
# files are missing or do not unpack.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
GPU_DIR=${GPU_DIR:-.gpu}
SHARED=${SHARED:-$ROOT/../shared}
GPU_TMP=${GPU_TMP:-/tmp/sparse-gpu}
TASKS=(test verify-dlmc bench-dlmc bench-llm bench-attention bench tune sweep sanitize profile enums probe engine gemm unst sh)
# $OUT brings back at most 8 files: one archive per task and summary.txt.
MAX_TASKS=7
CARRY_LIMIT=$((64 * 1024 * 1024))
OUT_FILE_LIMIT=${OUT_FILE_LIMIT:-$((16 * 1024 * 1024))}
# A task's input files (weights it wrote for a bench or verify): left out of an archive over the limit.
INPUT_FILES=('*.npy' '*.npz' '*.safetensors' '*.pt' '*.bin')
ANCHORS_FILE=anchors/dlmc_dev_h200.jsonl
# The tests that run kernels or the harness on the GPU (the others skip nothing there).
KERNEL_TESTS=(test/kernels/kernels.test.ts test/kernels/binding.test.ts test/kernels/binding-args.test.ts
  test/kernels/tc-format.test.ts test/bench/native-binding.test.ts test/verify/verify.test.ts
  test/commands/verify.test.ts test/kernels/pdl.test.ts test/kernels/pad.test.ts)

die() {
  local code=$1
  shift
  echo "run.sh: $*" >&2
  exit "$code"
}

is_task() {
  local t
  for t in "${TASKS[@]}"; do [ "$t" = "$1" ] && return 0; done
  return 1
}

usage() {
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

# =======================================================================================
# Here: pack

bytes_of() { stat -c %s "$1"; }

pack() {
  local datasets=() tasks=()
  while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then
      shift
      tasks=("$@")
      break
    fi
    datasets+=("$1")
    shift
  done
  [ ${#tasks[@]} -gt 0 ] || tasks=(test)
  is_task "${tasks[0]}" || die 2 "after --: expected a task (${TASKS[*]}), got '${tasks[0]}'"
  local d need_anchors=0
  for d in "${datasets[@]}"; do
    d=${d%/}
    case "$d" in /* | *..*) die 2 "data set '$d': name a folder or file under $SHARED (e.g. dlmc, anchors)" ;; esac
    [ -e "$SHARED/$d" ] || die 2 "data set '$d' not found: $SHARED/$d does not exist"
    case "$d" in dlmc | dlmc/*) need_anchors=1 ;; esac
  done
  # The DLMC tasks match problems to the anchors file: bring it along with any DLMC data.
  if [ $need_anchors = 1 ] && [ -f "$SHARED/$ANCHORS_FILE" ]; then
    local has=0
    for d in "${datasets[@]}"; do case "${d%/}" in anchors | "$ANCHORS_FILE") has=1 ;; esac; done
    [ $has = 1 ] || datasets+=("$ANCHORS_FILE")
  fi

  command -v xz >/dev/null || die 3 "xz is missing (apt-get install xz-utils)"
  local addon=${SPARSE_ADDON_BUILD:-build/Release/sparse.node}
  [ -f "$addon" ] || die 3 "$addon is missing: run npm ci (or npx node-gyp rebuild --nodedir=/usr)"
  echo "== building the TypeScript (npm run build)"
  npm run build >/dev/null || die 3 "npm run build failed"
  # A run on the GPU machine with an addon built without nvcc would only time the CPU.
  SPARSE_ADDON="$ROOT/$addon" node -e "
    import('./dist/kernels/binding.js').then(({cudaInfo}) => {
      if (!cudaInfo().built) { console.error('run.sh: $addon was built without CUDA (nvcc missing or SPARSE_NO_CUDA set): rebuild it with nvcc on the PATH'); process.exit(3) }
    })" || exit 3

  mkdir -p "$GPU_DIR"
  local version
  version=$(node --version)
  if [ ! -f "$GPU_DIR/node.xz" ] || [ "$(cat "$GPU_DIR/node.version" 2>/dev/null)" != "$version" ]; then
    echo "== compressing node $version (once; about a minute)"
    xz -T2 -c "$(command -v node)" >"$GPU_DIR/node.xz.tmp" && mv "$GPU_DIR/node.xz.tmp" "$GPU_DIR/node.xz"
    echo "$version" >"$GPU_DIR/node.version"
  fi
  echo "== node_modules"
  # NOTE: typescript, oclif (the packager, with the AWS SDK it pulls in) and the type
  # packages are build-time only. mocha, chai and tsx stay: the tests run there through tsx.
  tar -cJf "$GPU_DIR/modules.tar.xz" --exclude='node_modules/typescript' --exclude='node_modules/@aws-sdk' \
    --exclude='node_modules/@smithy' --exclude='node_modules/@inquirer' --exclude='node_modules/@types' \
    --exclude='node_modules/oclif' --exclude='node_modules/.cache' node_modules
  echo "== dist/ and the addon"
  local stage
  stage=$(mktemp -d)
  mkdir -p "$stage/build/Release" && cp "$addon" "$stage/build/Release/sparse.node"
  local manifest=()
  [ -f oclif.manifest.json ] && manifest=(oclif.manifest.json)
  tar -cJf "$GPU_DIR/app.tar.xz" dist "${manifest[@]}" -C "$stage" build/Release/sparse.node
  rm -rf "$stage"
  rm -f "$GPU_DIR/data.tar.xz"
  if [ ${#datasets[@]} -gt 0 ]; then
    echo "== data sets: ${datasets[*]}"
    # -h: follow links (../shared may be one).
    tar -chJf "$GPU_DIR/data.tar.xz" -C "$SHARED" "${datasets[@]%/}"
  fi
  # The commit packed (the GPU machine's copy of the tree has no .git), for the summary.
  echo "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- 2>/dev/null || echo '+uncommitted changes')" >"$GPU_DIR/commit"
  # The stamp tells the GPU machine whether what it unpacked last is this pack.
  (cd "$GPU_DIR" && cat ./*.xz | sha256sum | cut -c1-16) >"$GPU_DIR/stamp"

  local total=0 f
  for f in "$GPU_DIR"/*; do total=$((total + $(bytes_of "$f"))); done
  du -h "$GPU_DIR"/* | sed 's/^/  /'
  echo "  total $((total / 1024 / 1024)) MiB of the 64 MiB a device call may carry"
  [ $total -le $CARRY_LIMIT ] || die 3 "$GPU_DIR holds $total bytes, over the 64 MiB carry limit: pack fewer data sets"
  echo
  echo "carry: [\"$GPU_DIR\"]"
  local cmd="bash scripts/gpu/run.sh" w
  [ "$GPU_DIR" = .gpu ] || cmd="GPU_DIR=$GPU_DIR $cmd"
  for w in "${tasks[@]}"; do cmd+=" $(printf '%q' "$w")"; done
  echo "command: $cmd"
}

# =======================================================================================
# There: unpack, then the tasks

NODE=""

setup() {
  local stamp
  for f in node.xz modules.tar.xz app.tar.xz stamp; do
    [ -f "$GPU_DIR/$f" ] || die 3 "$GPU_DIR/$f is missing: run 'bash scripts/gpu/run.sh pack' here and carry [\"$GPU_DIR\"]"
  done
  stamp=$(cat "$GPU_DIR/stamp")
  mkdir -p "$GPU_TMP/bin"
  if [ -n "${SPARSE_GPU_NODE:-}" ]; then
    # A Node already on the machine (also how the runner is tried without a GPU machine).
    ln -sf "$SPARSE_GPU_NODE" "$GPU_TMP/bin/node"
  elif [ "$(cat "$GPU_TMP/stamp" 2>/dev/null)" != "$stamp" ] || [ ! -x "$GPU_TMP/bin/node" ]; then
    xz -dc "$GPU_DIR/node.xz" >"$GPU_TMP/bin/node" && chmod +x "$GPU_TMP/bin/node" || die 3 "could not unpack $GPU_DIR/node.xz"
  fi
  export PATH="$GPU_TMP/bin:$PATH"
  NODE="$GPU_TMP/bin/node"
  if [ "$(cat "$GPU_TMP/stamp" 2>/dev/null)" != "$stamp" ] || [ ! -d node_modules ] || [ ! -d dist ]; then
    rm -rf node_modules dist build/Release
    tar -xJf "$GPU_DIR/modules.tar.xz" && tar -xJf "$GPU_DIR/app.tar.xz" || die 3 "could not unpack $GPU_DIR/modules.tar.xz or app.tar.xz"
    if [ -f "$GPU_DIR/data.tar.xz" ]; then
      mkdir -p "$SHARED" && tar -xJf "$GPU_DIR/data.tar.xz" -C "$SHARED" || die 3 "could not unpack $GPU_DIR/data.tar.xz into $SHARED"
    fi
    echo "$stamp" >"$GPU_TMP/stamp"
  fi
}

# --- helpers shared by the tasks ---------------------------------------------------------

W=""      # the running task's folder
LABEL=""  # the running task's name in $OUT (test, bench-llm, bench-llm-2, ...)
SUMMARY=""

note() { echo "$*" | tee -a "$SUMMARY"; }

# step SECONDS NAME CMD...: runs CMD with a time limit, its stdout in $W/NAME.log and its
# stderr in $W/NAME.err (removed when empty); returns its exit status (124: timed out).
step() {
  local limit=$1 name=$2
  shift 2
  local start=$SECONDS rc
  timeout "$limit" "$@" >"$W/$name.log" 2>"$W/$name.err"
  rc=$?
  [ $rc = 124 ] && echo "(timed out after $limit s)" >>"$W/$name.err"
  [ -s "$W/$name.err" ] || rm -f "$W/$name.err"
  echo "  $name: rc=$rc in $((SECONDS - start)) s"
  return $rc
}

# Both streams of a step, for searching.
outputs() { cat "$W/$1.log" "$W/$1.err" 2>/dev/null; }

# mocha's closing counts in a step's output.
mocha_counts() {
  local text p f s
  text=$(outputs "$1")
  p=$(grep -Eo '^ +[0-9]+ passing' <<<"$text" | grep -Eo '[0-9]+' | tail -1)
  f=$(grep -Eo '^ +[0-9]+ failing' <<<"$text" | grep -Eo '[0-9]+' | tail -1)
  s=$(grep -Eo '^ +[0-9]+ pending' <<<"$text" | grep -Eo '[0-9]+' | tail -1)
  echo "${p:-0} passing, ${f:-0} failing, ${s:-0} pending"
}

need_data() {
  local p
  for p in "$@"; do
    [ -e "$SHARED/$p" ] || { note "  needs $SHARED/$p: pack it (bash scripts/gpu/run.sh pack dlmc)"; return 2; }
  done
}

task_timeout() { echo "${TASK_TIMEOUT:-$1}"; }

# Runs `sparse bench ARGS --json` into $W/NAME.json (+ .jsonl), then the short report.
bench_into() {
  local name=$1 a
  shift
  # NOTE: figures from this machine are GPU figures: --device cuda (exit 3 without a usable GPU)
  # unless the flags name a device; bench's default, auto, would quietly fall back to the CPU.
  local device=(--device cuda)
  for a in "$@"; do case $a in --device | --device=*) device=() ;; esac; done
  step "$(task_timeout 420)" "$name" "$NODE" bin/run.js bench "$@" "${device[@]}" --jsonl "$W/$name.jsonl" --json
  local rc=$?
  # stdout is the report object (or, on an error, the {error} object).
  mv "$W/$name.log" "$W/$name.json"
  "$NODE" scripts/gpu/bench-report.mjs "$W/$name.json" --cases >"$W/$name.report.txt" 2>&1
  "$NODE" scripts/gpu/bench-report.mjs "$W/$name.json" --brief 2>&1 | sed 's/^/  /' | tee -a "$SUMMARY"
  return $rc
}

# --- the tasks ---------------------------------------------------------------------------

# test [FILES...] [MOCHA FLAGS...]: the GPU tests (default: KERNEL_TESTS); 'all' = the whole suite.
task_test() {
  local files=() flags=() a
  for a in "$@"; do
    if [ "$a" = all ]; then files=(test); elif [ -e "$a" ]; then files+=("$a"); else flags+=("$a"); fi
  done
  [ ${#files[@]} -gt 0 ] || files=("${KERNEL_TESTS[@]}")
  [ "${files[0]}" = test ] && files=(--recursive test --extension test.ts)
  step "$(task_timeout 300)" tests node_modules/.bin/mocha --no-config -n import=tsx -n no-warnings --timeout 0 "${files[@]}" "${flags[@]}"
  local rc=$?
  note "  $(mocha_counts tests)"
  outputs tests | grep -A8 -E '^ +[0-9]+\) ' | head -30 | sed 's/^/  /' | tee -a "$SUMMARY"
  return $rc
}

# verify-dlmc: `verify` on every DLMC dev-subset problem at the paper's N, every op and dtype.
task_verify_dlmc() {
  need_data dlmc "$ANCHORS_FILE" || return 2
  SPARSE_DLMC_SWEEP=cuda SPARSE_DLMC_SWEEP_OUT="$W/sweep.jsonl" \
    step "$(task_timeout 300)" sweep node_modules/.bin/mocha --no-config -n import=tsx -n no-warnings --timeout 0 test/verify/dlmc-sweep.test.ts "$@"
  local rc=$?
  note "  $(mocha_counts sweep)"
  outputs sweep | grep -E 'cases|FAILED' | head -10 | sed 's/^/  /' | tee -a "$SUMMARY"
  return $rc
}

# bench-dlmc [FLAGS]: the paper's suite against the anchors, with the plot.
task_bench_dlmc() {
  need_data dlmc "$ANCHORS_FILE" || return 2
  bench_into dlmc --suite dlmc "$SHARED/dlmc" --compare "$SHARED/$ANCHORS_FILE" --plot "$W/dlmc.svg" "$@"
}

# bench-llm [FLAGS]: the LLM-shaped suite.
task_bench_llm() { bench_into llm --suite llm "$@"; }

# bench-attention [FLAGS]: the attention-shaped SDDMM suite.
task_bench_attention() { bench_into attention --suite attention "$@"; }

# bench INPUTS/FLAGS...: any `sparse bench` run (paths under ../shared as given there).
task_bench() {
  [ $# -gt 0 ] || { note "  bench needs arguments, e.g. bench ../shared/dlmc/transformer --n 256"; return 2; }
  bench_into bench "$@"
}

# tune [FLAGS]: --tune into a fresh cache, the same cases read back from it (every SpMM case
# must say 'cache'), then --no-tune-cache ('heuristic'). FLAGS replace the default LLM slice.
task_tune() {
  local cases=(--suite llm --n 16 --llm-sparsity 0.7,0.9 --dtype f32,f16 --baseline dense)
  [ $# -gt 0 ] && cases=("$@")
  local fast=(--reps 20 --min-ms 20) cache="$W/tune-cache.json" rc=0
  step "$(task_timeout 300)" tuned "$NODE" bin/run.js bench "${cases[@]}" "${fast[@]}" --tune --tune-cache "$cache" --json || rc=1
  mv "$W/tuned.log" "$W/tuned.json"
  step "$(task_timeout 150)" cached "$NODE" bin/run.js bench "${cases[@]}" "${fast[@]}" --tune-cache "$cache" --json || rc=1
  mv "$W/cached.log" "$W/cached.json"
  step "$(task_timeout 150)" nocache "$NODE" bin/run.js bench "${cases[@]}" "${fast[@]}" --no-tune-cache --json || rc=1
  mv "$W/nocache.log" "$W/nocache.json"
  "$NODE" scripts/gpu/tune-report.mjs "$W/tuned.json" >"$W/tuned.report.txt" 2>&1
  "$NODE" scripts/gpu/tune-report.mjs "$W/cached.json" --expect cache >"$W/cached.report.txt" 2>&1 || rc=1
  "$NODE" scripts/gpu/tune-report.mjs "$W/nocache.json" --expect heuristic >"$W/nocache.report.txt" 2>&1 || rc=1
  grep -m1 '^tune:' "$W/tuned.report.txt" | cut -c1-400 | sed 's/^/  tuned /' | tee -a "$SUMMARY"
  for f in cached nocache; do
    note "  $f: $(grep -c -E ' (cache|heuristic|tuned|forced) ' "$W/$f.report.txt") SpMM cases"
    grep -E 'SpMM cases without|FAILED' "$W/$f.report.txt" | head -3 | sed 's/^/    /' | tee -a "$SUMMARY"
  done
  return $rc
}

# sweep [MOCHA FLAGS]: every CUDA SpMM kernel variant timed on each problem (the data behind
# the selection in native/cuda/spmm/); SPARSE_SPMM_SWEEP_SET/_NS/_DTYPES narrow it.
task_sweep() {
  SPARSE_SPMM_SWEEP="$W/variants.jsonl" \
    step "$(task_timeout 300)" sweep node_modules/.bin/mocha --no-config -n import=tsx -n no-warnings --timeout 0 test/kernels/spmm-variants.sweep.test.ts "$@"
  local rc=$?
  note "  $(mocha_counts sweep); $( [ -f "$W/variants.jsonl" ] && wc -l <"$W/variants.jsonl" || echo 0) rows in variants.jsonl"
  return $rc
}

# sanitize [MOCHA FLAGS]: compute-sanitizer memcheck (with leak check) on the kernel tests,
# racecheck on the shared-memory kernels (every SpMM variant, the tensor-core kernels).
task_sanitize() {
  local mocha=("$NODE" --import tsx node_modules/mocha/bin/_mocha --no-config --timeout 0)
  local rc=0
  # NOTE: _mocha, not .bin/mocha: the latter re-spawns Node for its -n flags, and the
  # sanitizer reports are clearer for one process.
  step "$(task_timeout 300)" memcheck compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 \
    "${mocha[@]}" test/kernels/kernels.test.ts "$@" || rc=1
  step "$(task_timeout 300)" racecheck compute-sanitizer --tool racecheck --error-exitcode 99 \
    "${mocha[@]}" test/kernels/kernels.test.ts --grep "${RACECHECK_GREP:-every kernel variant|tensor-core}" "$@" || rc=1
  for f in memcheck racecheck; do
    note "  $f: $(outputs $f | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY' | sed 's/^=* *//' | tr '\n' ' ')| $(mocha_counts $f)"
  done
  return $rc
}

# profile CASE [NCU FLAGS]: Nsight Compute on one launch of one case (see profile-case.mjs),
# at the GPU's own clocks (--clock-control none, as in the timed runs).
task_profile() {
  local case=${1:-spmm:f16:4096x4096@0.9:16}
  [ $# -gt 0 ] && shift
  local flags=("$@")
  [ ${#flags[@]} -gt 0 ] || flags=(--set full)
  step "$(task_timeout 300)" ncu ncu --clock-control none -k 'regex:^(Spmm|Sddmm)' --launch-skip 1 --launch-count 1 \
    -o "$W/profile" "${flags[@]}" "$NODE" scripts/gpu/profile-case.mjs "$case" --launches 2
  local rc=$?
  [ -f "$W/profile.ncu-rep" ] && ncu --import "$W/profile.ncu-rep" --print-summary none >"$W/profile.txt" 2>&1
  outputs ncu | grep -m1 '^case ' | cut -c1-200 | sed 's/^/  /' | tee -a "$SUMMARY"
  grep -hE '^\s*(Spmm|Sddmm)\w*Kernel|Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per Thread' \
    "$W/profile.txt" 2>/dev/null | head -12 | sed 's/^ */  /' | tee -a "$SUMMARY"
  return $rc
}

# enums: the enum values native/ declares by hand for cuBLAS/cuSPARSE (the build machines
# have no headers for them) against the real headers of the GPU machine.
task_enums() {
  step "$(task_timeout 120)" build g++ -std=c++17 -DSPARSE_WITH_CUDA=1 -Inative -I/usr/local/cuda/include \
    scripts/gpu/check-enums.cc -o "$W/check-enums" || { note "  check-enums.cc did not compile (see build.log)"; return 1; }
  step 60 enums "$W/check-enums"
  local rc=$?
  rm -f "$W/check-enums"
  note "  $(grep -c ' ok$' "$W/enums.log") ok, $(grep -c MISMATCH "$W/enums.log") mismatched"
  return $rc
}

# probe [ARGS]: the streaming-kernel workbench built here by scripts/gpu/probe/build.sh into
# $GPU_DIR/stream_probe (default: check; e.g. `probe time bitmap`).
task_probe() {
  [ -x "$GPU_DIR/stream_probe" ] || { note "  needs $GPU_DIR/stream_probe: build it here with bash scripts/gpu/probe/build.sh, then pack"; return 2; }
  [ $# -gt 0 ] || set -- check
  step "$(task_timeout 300)" probe "$GPU_DIR/stream_probe" "$@"
  local rc=$?
  outputs probe | tail -15 | sed 's/^/  /' | tee -a "$SUMMARY"
  return $rc
}

# Whether MODE is one of MODES for workbench task TASK (says so in the summary if not).
workbench_mode() {
  local task=$1 mode=$2 modes=$3
  case " $modes " in *" $mode "*) return 0 ;; esac
  note "  $task: unknown mode '$mode' (modes: $modes)"
  return 2
}

# NAME=VALUE words right after a workbench task's MODE set the workbench's environment for that
# task alone: `mode_envs TASK MODE ARGS...` puts them in ENVS and the rest in ARGS, and fails (2)
# on one after the mode's other arguments (the workbench would read it as an argument and ignore
# it: v26's `unst stages … UNST_FIXUP=2` ran without it).
mode_envs() {
  local task=$1 mode=$2 word
  shift 2
  ENVS=() ARGS=()
  while [ $# -gt 0 ] && [[ $1 =~ ^[A-Z_][A-Z0-9_]*= ]]; do ENVS+=("$1") && shift; done
  for word in "$@"; do
    if [[ $word =~ ^[A-Z_][A-Z0-9_]*= ]]; then
      note "  $task: '$word' comes after the mode's arguments: NAME=VALUE words go right after the mode ($task $mode $word ...)"
      return 2
    fi
  done
  ARGS=("$@")
}

# Unpacks $GPU_DIR/BINARY.xz (a workbench built here and carried) into DIR/BINARY, unless the
# one there is newer.
unpack_workbench() {
  local dir=$1 binary=$2
  mkdir -p "$dir"
  [ -x "$dir/$binary" ] && [ "$dir/$binary" -nt "$GPU_DIR/$binary.xz" ] ||
    { xz -dc "$GPU_DIR/$binary.xz" >"$dir/$binary" && chmod +x "$dir/$binary"; }
}

# Builds a workbench with BUILD_SCRIPT into DIR (nvcc for sm_90a, on the GPU machine) unless
# DIR/BINARY is there from the same SOURCES (their checksum is kept in DIR/stamp); the build
# report BINARY.regs.txt goes into the task's folder.
build_workbench() {
  local dir=$1 binary=$2 script=$3 stamp
  shift 3
  stamp=$(cat "$@" 2>/dev/null | md5sum | cut -c1-32)
  [ -x "$dir/$binary" ] && [ "$(cat "$dir/stamp" 2>/dev/null)" = "$stamp" ] && return 0
  step "$(task_timeout 300)" build bash "$script" "$dir" || {
    outputs build | tail -20 | sed 's/^/  /' | tee -a "$SUMMARY"
    return 1
  }
  echo "$stamp" >"$dir/stamp"
  cp "$dir/$binary.regs.txt" "$W/" 2>/dev/null
  return 0
}

# engine MODE [ARGS]: the streaming engine's workbench (scripts/gpu/probe/engine_probe.cu;
# docs/stream-engine.md): $GPU_DIR/engine_probe.xz where it was built here and carried (bash
# scripts/gpu/probe/engine_build.sh DIR; xz -c DIR/engine_probe > $GPU_DIR/engine_probe.xz), else
# built on the GPU machine with nvcc for sm_90a into $GPU_TMP/eb (again only when its sources
# changed), then run. MODE: the workbench's own (check, checksmall, list,
# time FILTER [MxK ...], timeall FILTER [MxK ...], one|trace|stages VARIANT M K N, launch), or
#   memcheck            checksmall under compute-sanitizer memcheck
#   ncu VARIANT M K N   Nsight Compute --set full on the variant's second launch (clocks left
#                       alone): the details page, and the source page (SASS with its stall
#                       samples) as $W/sass.csv.xz; NCU_OPTS adds words (--warp-sampling-interval 0)
# NS, VARIANTS, ENGINE_FIXUP, ENGINE_PDL, ENGINE_CLUSTER, ENGINE_ROTATE, ENGINE_PUSH, ENGINE_PREFETCH and
# TIMER_FLUSH set before run.sh reach the workbench; NAME=VALUE words right after MODE set them
# for this task alone (as gemm's and unst's: `engine time NS=64 ENGINE_B_TMA=1 s24_f16 4096x4096`;
# until v41 they were taken for the mode's arguments).
ENGINE_MODES="check checksmall list time timeall one trace stages launch memcheck ncu"
task_engine() {
  local mode=${1:-check} eb=$GPU_TMP/eb rc
  [ $# -gt 0 ] && shift
  workbench_mode engine "$mode" "$ENGINE_MODES" || return 2
  mode_envs engine "$mode" "$@" || return 2
  set -- "${ARGS[@]}"
  if [ -f "$GPU_DIR/engine_probe.xz" ]; then
    unpack_workbench "$eb" engine_probe || return 3
  else
    build_workbench "$eb" engine_probe scripts/gpu/probe/engine_build.sh native/cuda/spmm/*.cuh native/cuda/spmm/*.h \
      native/common/sparse24.* native/common/stream_plan.h scripts/gpu/probe/engine_* scripts/gpu/probe/probe_util.h \
      scripts/gpu/probe/stage_report.h || return 1
  fi
  case $mode in
    memcheck) step "$(task_timeout 300)" memcheck env "${ENVS[@]}" compute-sanitizer --tool memcheck "$eb/engine_probe" checksmall ;;
    ncu) ncu_full StreamKernel env "${ENVS[@]}" "$eb/engine_probe" one "$@" ;;
    *) step "$(task_timeout 300)" "$mode" env "${ENVS[@]}" "$eb/engine_probe" "$mode" "$@" ;;
  esac
  rc=$?
  case $mode in
    memcheck) outputs memcheck | grep -E 'ERROR SUMMARY|^check:|FAIL' | head -5 | sed 's/^/  /' | tee -a "$SUMMARY" ;;
    ncu) ncu_summary 'Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Warp Cycles Per Issued|Stall No Instruction|Stall IMC Miss' ;;
    *) outputs "$mode" | tail -40 | sed 's/^/  /' | tee -a "$SUMMARY" ;;
  esac
  return $rc
}

# ncu_full KERNEL_REGEX CMD...: Nsight Compute --set full on the second launch of a kernel whose
# name matches (clocks left alone), as step "ncu": the details page into $W/details.txt and the
# source page (SASS with its stall samples) as CSV, xz-compressed, into $W/sass.csv.xz.
ncu_full() {
  local kernel=$1
  shift
  # shellcheck disable=SC2086 # NCU_OPTS: extra ncu words (e.g. --warp-sampling-interval 0)
  step "$(task_timeout 300)" ncu ncu --set full --import-source yes --clock-control none ${NCU_OPTS:-} -k "regex:$kernel" \
    --launch-skip 1 --launch-count 1 -o "$W/profile" "$@" &&
    ncu --import "$W/profile.ncu-rep" --page details --print-details all --print-summary none >"$W/details.txt" 2>&1 &&
    { ncu --import "$W/profile.ncu-rep" --page source --csv --print-source sass --print-summary none 2>/dev/null |
      xz -T4 >"$W/sass.csv.xz"; }
}

# ncu_summary 'NAME|NAME...': the details page's lines of those metrics (after ncu_full), once each,
# into the summary.
ncu_summary() {
  grep -E "^ +($1)" "$W/details.txt" 2>/dev/null | sort -u | sed 's/^ */  /' | tee -a "$SUMMARY"
}

# gemm MODE [ARGS]: the Hopper GEMM engine's workbench (scripts/gpu/probe/gemm_probe.cu;
# docs/gemm-engine.md): $GPU_DIR/gemm_probe.xz where it was built here and carried (bash
# scripts/gpu/probe/gemm_build.sh DIR; xz -c DIR/gemm_probe > $GPU_DIR/gemm_probe.xz), else
# built on the GPU machine for sm_90a into $GPU_TMP/gb (again only when its sources changed),
# then run. MODE: the workbench's own (selftest, check, list, time [MxK ...], one|trace VARIANT M K N), or
#   memcheck            check under compute-sanitizer memcheck (VARIANTS narrows it)
#   ncu VARIANT M K N   Nsight Compute --set full on the variant's second launch (clocks left
#                       alone): the details page, and the source page (SASS with its stall
#                       samples) as CSV, xz-compressed, in the task's archive
# NS, VARIANTS, SPARSITY and GEMM_GROUP set before run.sh reach the workbench; NAME=VALUE words
# right after MODE set them for this task alone (e.g. `gemm time VARIANTS=f16_un_tma_n128_s5
# 4096x4096`).
GEMM_MODES="selftest check list time one trace memcheck ncu"
task_gemm() {
  local mode=${1:-check} gb=$GPU_TMP/gb rc
  [ $# -gt 0 ] && shift
  workbench_mode gemm "$mode" "$GEMM_MODES" || return 2
  mode_envs gemm "$mode" "$@" || return 2
  set -- "${ARGS[@]}"
  if [ -f "$GPU_DIR/gemm_probe.xz" ]; then
    unpack_workbench "$gb" gemm_probe || return 3
  else
    build_workbench "$gb" gemm_probe scripts/gpu/probe/gemm_build.sh native/cuda/gemm/* native/cuda/spmm/*.cuh \
      native/cuda/spmm/*.h native/common/sparse24.* native/common/unstructured_stream.* native/common/gemm_plan.h \
      scripts/gpu/probe/gemm_* scripts/gpu/probe/probe_util.h || return 1
  fi
  local p=(env "${ENVS[@]}" "$gb/gemm_probe")
  case $mode in
    memcheck) step "$(task_timeout 300)" memcheck env "${ENVS[@]}" compute-sanitizer --tool memcheck "$gb/gemm_probe" check ;;
    ncu)
      ncu_full GemmKernel "${p[@]}" one "$@"
      ;;
    *) step "$(task_timeout 300)" "$mode" "${p[@]}" "$mode" "$@" ;;
  esac
  rc=$?
  case $mode in
    memcheck) outputs memcheck | grep -E 'ERROR SUMMARY|^check:|FAIL' | head -5 | sed 's/^/  /' | tee -a "$SUMMARY" ;;
    ncu) ncu_summary 'Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|SM: Pipe Tensor Cycles Active|Warp Cycles Per Issued' ;;
    check) outputs check | grep -v ' ok$' | tail -10 | sed 's/^/  /' | tee -a "$SUMMARY" ;;
    *) outputs "$mode" | tail -40 | sed 's/^/  /' | tee -a "$SUMMARY" ;;
  esac
  return $rc
}

# unst MODE [ARGS]: the unstructured workbench (scripts/gpu/probe/unst_probe.cu;
# docs/unstructured-stream.md): $GPU_DIR/unst_probe.xz where it was built here and carried
# (bash scripts/gpu/probe/unst_build.sh DIR; xz -c DIR/unst_probe > $GPU_DIR/unst_probe.xz),
# else built on the GPU machine into $GPU_TMP/ub (again only when its sources changed; UNST_ONLY
# narrows the build to some kinds). MODE: the workbench's own (check, time [MxK ...], one|stages
# VARIANT M K N S, list), or
#   memcheck | racecheck       check under compute-sanitizer (KINDS narrows it)
#   ncu VARIANT M K N S        Nsight Compute --set full on the variant's second launch (clocks
#                              left alone): the details page, and the source page (SASS with its
#                              stall samples) as CSV, xz-compressed, in the task's archive
#   sass REGEX                 cuobjdump -sass of the kernels whose mangled names match, xz'd
# KINDS, NS, SPARSITY and TYPES set before run.sh reach the workbench; NAME=VALUE words right
# after MODE set them for this task alone (e.g. `unst time KINDS=unbmp,unbm4x 4096x4096`;
# mode_envs).
UNST_MODES="check time one stages list memcheck racecheck ncu sass"
task_unst() {
  local mode=${1:-check} ub=$GPU_TMP/ub rc
  [ $# -gt 0 ] && shift
  workbench_mode unst "$mode" "$UNST_MODES" || return 2
  mode_envs unst "$mode" "$@" || return 2
  set -- "${ARGS[@]}"
  if [ -f "$GPU_DIR/unst_probe.xz" ]; then
    unpack_workbench "$ub" unst_probe || return 3
  else
    build_workbench "$ub" unst_probe scripts/gpu/probe/unst_build.sh native/cuda/spmm/*.cuh native/cuda/spmm/*.h \
      native/common/unstructured_stream.* scripts/gpu/probe/unst_* scripts/gpu/probe/probe_util.h \
      scripts/gpu/probe/stage_report.h || return 1
  fi
  local p=(env "${ENVS[@]}" "$ub/unst_probe")
  case $mode in
    memcheck | racecheck) step "$(task_timeout 600)" "$mode" env "${ENVS[@]}" compute-sanitizer --tool "$mode" "$ub/unst_probe" check ;;
    ncu)
      ncu_full StreamKernel "${p[@]}" one "$@"
      ;;
    sass)
      cuobjdump -sass "$ub/unst_probe" 2>"$W/sass.err" | awk -v re="${1:-.}" '/^[ \t]+Function : /{keep = ($0 ~ re)} keep' |
        xz -T4 >"$W/sass.txt.xz"
      note "  $(xz -dc "$W/sass.txt.xz" | grep -c 'Function : ') kernels' SASS in sass.txt.xz"
      ;;
    *) step "$(task_timeout 600)" "$mode" "${p[@]}" "$mode" "$@" ;;
  esac
  rc=$?
  case $mode in
    memcheck | racecheck) outputs "$mode" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^check:|FAIL' | head -5 | sed 's/^/  /' | tee -a "$SUMMARY" ;;
    ncu) ncu_summary 'Duration|DRAM Throughput|Executed Ipc Active|Issue Slots Busy|Eligible Warps Per Scheduler|Warp Cycles Per Issued' ;;
    check) outputs check | grep -v ' ok$' | tail -10 | sed 's/^/  /' | tee -a "$SUMMARY" ;;
    sass) ;;
    *) outputs "$mode" | tail -12 | sed 's/^/  /' | tee -a "$SUMMARY" ;;
  esac
  return $rc
}

# sh COMMAND: any shell command, after the unpacking (node on the PATH, $W its folder).
task_sh() {
  [ $# -gt 0 ] || { note "  sh needs a command, e.g. sh 'node bin/run.js verify ../shared/dlmc/rn50 --device cuda'"; return 2; }
  W=$W step "$(task_timeout 300)" sh bash -c "$*"
  local rc=$?
  outputs sh | tail -5 | sed 's/^/  /' | tee -a "$SUMMARY"
  return $rc
}

# =======================================================================================

run_tasks() {
  # Split the words into tasks: a task name starts one, the words after it are its arguments.
  local labels=() names=() argv=() shown=() w n=0
  for w in "$@"; do
    if is_task "$w"; then
      n=$((n + 1))
      names+=("$w")
      local label=$w count=1 l
      for l in "${labels[@]}"; do case "$l" in "$w" | "$w"-[0-9]*) count=$((count + 1)) ;; esac; done
      [ $count -gt 1 ] && label="$w-$count"
      labels+=("$label")
      argv+=("")
      shown+=("$label")
    else
      [ $n -gt 0 ] || die 2 "unknown task '$w' (tasks: ${TASKS[*]}; here: pack)"
      argv[n - 1]+="$(printf '%q ' "$w")"
      shown[n - 1]+=" $w"
    fi
  done
  [ $n -gt 0 ] || die 2 "no task given (tasks: ${TASKS[*]})"
  [ $n -le $MAX_TASKS ] || die 2 "$n tasks in one call, but \$OUT brings back 8 files: at most $MAX_TASKS tasks (one archive each) and the summary"
  if [ -z "${OUT:-}" ]; then
    OUT=$GPU_TMP/out
    echo "run.sh: OUT is not set (the device tool sets it); writing to $OUT" >&2
  fi
  mkdir -p "$OUT" "$GPU_TMP"
  SUMMARY=$GPU_TMP/summary.txt
  : >"$SUMMARY"

  # The workbenches (engine, gemm, unst) need no pack; every other task runs on the unpacked one.
  local t packed=0
  for t in "${names[@]}"; do [ "$t" = engine ] || [ "$t" = gemm ] || [ "$t" = unst ] || packed=1; done
  if [ $packed = 1 ]; then
    setup
    note "sparse GPU run $(date -u +%Y-%m-%dT%H:%MZ), packed from commit $(cat "$GPU_DIR/commit" 2>/dev/null || echo unknown), node $("$NODE" --version)"
  else
    note "sparse GPU run $(date -u +%Y-%m-%dT%H:%MZ), workbenches only (no pack)"
  fi
  if command -v nvidia-smi >/dev/null; then
    note "GPU: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader 2>&1 | head -1)"
  else
    note "GPU: none (no nvidia-smi on this machine)"
  fi

  local i failed=0 start rc
  for ((i = 0; i < n; i++)); do
    LABEL=${labels[i]}
    W=$GPU_TMP/$LABEL
    rm -rf "$W" && mkdir -p "$W"
    note "== ${shown[i]}"
    start=$SECONDS
    eval "set -- ${argv[i]}"
    "task_${names[i]//-/_}" "$@"
    rc=$?
    [ $rc = 0 ] || failed=1
    note "$LABEL: $([ $rc = 0 ] && echo ok || echo "FAILED (rc $rc)") in $((SECONDS - start)) s"
    tar -cJf "$OUT/$LABEL.tar.xz" -C "$GPU_TMP" "$LABEL"
    if [ "$(bytes_of "$OUT/$LABEL.tar.xz")" -gt "$OUT_FILE_LIMIT" ]; then
      # Inputs a task wrote into its folder (weights for a bench or verify) are what usually
      # overflow it: pack again without them, listed in left-out.txt, so the results come back.
      local input_names=() input_excludes=() pattern
      for pattern in "${INPUT_FILES[@]}"; do
        input_names+=(${input_names[0]+-o} -name "$pattern")
        input_excludes+=("--exclude=$pattern")
      done
      (cd "$W" && find . -type f \( "${input_names[@]}" \) -printf '%s\t%P\n' | sort -k2) >"$W/left-out.txt"
      if [ -s "$W/left-out.txt" ]; then
        tar -cJf "$OUT/$LABEL.tar.xz" -C "$GPU_TMP" "${input_excludes[@]}" "$LABEL"
        note "  $LABEL.tar.xz was over $((OUT_FILE_LIMIT / 1024 / 1024)) MiB: packed again without its $(wc -l <"$W/left-out.txt") input files (listed in left-out.txt)"
      else
        rm -f "$W/left-out.txt"
      fi
    fi
    if [ "$(bytes_of "$OUT/$LABEL.tar.xz")" -gt "$OUT_FILE_LIMIT" ]; then
      note "  $LABEL.tar.xz is over $((OUT_FILE_LIMIT / 1024 / 1024)) MiB and will not come back: run the task with fewer cases"
    fi
  done
  cp "$SUMMARY" "$OUT/summary.txt"
  echo
  echo "===================== summary ($OUT/summary.txt; one $OUT/<task>.tar.xz per task)"
  cat "$SUMMARY"
  return $failed
}

case "${1:-}" in
  "" | -h | --help | help) usage ;;
  pack)
    shift
    pack "$@"
    ;;
  *) run_tasks "$@" ;;
esac
