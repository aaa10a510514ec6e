#!/usr/bin/env bash
# A/B of compile-time switches of the streaming engine in the workbench: builds engine_probe
# without flags (A) and once per flag set of ENGINE_AB_FLAGS (B1, B2, ...: sets separated by
# '|', each a macro the experiment's code tests: v51's -DSPARSE_ENGINE_OLD_DIV, since removed, or
# -DSPARSE_ENGINE_NO_TRACE), all builds
# in parallel (about 2.5 minutes for two on 16 cores), checks every build (`checksmall`), then
# runs the same traces and `timeall` on each in turns (A, B1, ..., A, B1, ...), so that the run's
# drift shows beside the difference, and prints each B / A per case and its geomean per round.
# Run from the repository root inside run.sh's `sh` task (results into $W; an `sh` task needs a
# pack: GPU_DIR=... and carry):
#   sh 'ENGINE_AB_FLAGS="-DMACRO1|-DMACRO2" bash scripts/gpu/probe/engine_ab.sh > $W/ab.txt 2>&1; cat $W/ab.txt'
# AB_TRACES: "VARIANT M K N;..." traced on each; AB_SHAPES / NS / VARIANTS: `timeall`'s;
# AB_SASS_GREP: a regex counted in each B's SASS (that the switch compiled to what it should).
# AB_BIN: a folder of builds made beforehand (AB_BIN/a/engine_probe.xz, AB_BIN/b1/..., in the
# order of ENGINE_AB_FLAGS, each built by engine_build.sh with its flags): nothing compiled there.
set -uo pipefail
cd "$(dirname "$0")/../../.."
: "${ENGINE_AB_FLAGS:?ENGINE_AB_FLAGS: the nvcc flags of the B builds, sets separated by |}"
W=${W:-/tmp/engine-ab}
T=${GPU_TMP:-/tmp/sparse-gpu}/ab
mkdir -p "$W" "$T"
export ENGINE_CLUSTER=${ENGINE_CLUSTER:-auto} ENGINE_PUSH=${ENGINE_PUSH:-1} ENGINE_PREFETCH=${ENGINE_PREFETCH:-1}
AB_TRACES=${AB_TRACES:-"s24_f16_wgk1_w4x1_n8_k256_s8_1cta 4096 4096 1;s24_f16_wgk1_w8x1_n8_k256_s3_1cta 11008 4096 8"}
AB_SHAPES=${AB_SHAPES:-"4096x4096 11008x4096 4096x11008"}
export NS=${NS:-1,8,64}
export VARIANTS=${VARIANTS:-wgk1_w4x1_n8_k256_s8,wgk1_w8x1_n8_k256_s3,wg_w8x1_n64_k256_s3,wg_w4x1_n64_k256_s3}
IFS='|' read -ra FLAGS <<<"$ENGINE_AB_FLAGS"
BUILDS=(a)
for i in "${!FLAGS[@]}"; do BUILDS+=("b$((i + 1))"); done
flags_of() { [ "$1" = a ] && echo "" || echo "${FLAGS[$((${1#b} - 1))]}"; }
pids=()
for x in "${BUILDS[@]}"; do
  if [ -n "${AB_BIN:-}" ]; then
    # Built beforehand (here: engine_build.sh with the same flags, each binary xz-compressed as
    # $AB_BIN/<build>/engine_probe.xz): a device call then spends no minutes compiling.
    mkdir -p "$T/$x" && (xz -dc "$AB_BIN/$x/engine_probe.xz" >"$T/$x/engine_probe" && chmod +x "$T/$x/engine_probe") &
  else
    (ENGINE_EXTRA_FLAGS="$(flags_of "$x")" bash scripts/gpu/probe/engine_build.sh "$T/$x" >"$W/build_$x.log" 2>&1) &
  fi
  pids+=($!)
done
for i in "${!BUILDS[@]}"; do
  wait "${pids[$i]}" || { tail -20 "$W/build_${BUILDS[$i]}.log" 2>/dev/null; echo "build ${BUILDS[$i]} failed"; exit 1; }
done
for x in "${BUILDS[@]}"; do
  echo "built $x: $(flags_of "$x")"
  timeout 120 "$T/$x/engine_probe" checksmall >"$W/check_$x.log" 2>&1
  echo "$x checksmall: $(grep -E '^check:' "$W/check_$x.log")"
done
for round in 1 2; do
  for x in "${BUILDS[@]}"; do
    IFS=';' read -ra traces <<<"$AB_TRACES"
    for t in "${traces[@]}"; do
      # shellcheck disable=SC2086
      timeout 60 "$T/$x/engine_probe" trace $t >>"$W/trace_${x}.log" 2>&1
    done
    # shellcheck disable=SC2086
    timeout 200 "$T/$x/engine_probe" timeall s24_f16 $AB_SHAPES >"$W/time_${x}_$round.log" 2>&1
  done
done
# The per-case ratio B / A (events and graph) of each round, and their geomeans.
python3 - "$W" "${BUILDS[@]:1}" <<'PY'
import math, re, sys
w, bs = sys.argv[1], sys.argv[2:]
def rows(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) > 10 and f[0].startswith("s24_") and f[3] == "|":
            try:
                out[(f[0], f[1], f[2])] = (float(f[7]), float(f[8]))
            except ValueError:
                pass
    return out
for x in bs:
    for r in (1, 2):
        a, b = rows(f"{w}/time_a_{r}.log"), rows(f"{w}/time_{x}_{r}.log")
        ev, gr = [], []
        for key in sorted(a):
            if key in b:
                ev.append(b[key][0] / a[key][0]); gr.append(b[key][1] / a[key][1])
                print(f"{x} round {r} {key[0][:34]:34s} {key[1]:>10s} n={key[2]:>2s}  A {a[key][0]:6.2f} {a[key][1]:6.2f}  B {b[key][0]:6.2f} {b[key][1]:6.2f}  B/A {ev[-1]:.3f} {gr[-1]:.3f}")
        if ev:
            g = lambda v: math.exp(sum(map(math.log, v)) / len(v))
            print(f"{x} round {r}: B / A geomean events {g(ev):.3f}, graph {g(gr):.3f} ({len(ev)} cases)")
PY
for x in "${BUILDS[@]}"; do
  echo "== trace $x"
  grep -E "^trace:|events|first instr -> first A|first instr -> stage 0|items computed|past sync|branch|asked for" "$W/trace_${x}.log" | head -40
done
if [ -n "${AB_SASS_GREP:-}" ]; then
  for x in "${BUILDS[@]}"; do
    cuobjdump -sass "$T/$x/engine_probe" 2>/dev/null | grep -cE "$AB_SASS_GREP" | sed "s/^/$x's SASS lines matching $AB_SASS_GREP: /"
  done
fi
