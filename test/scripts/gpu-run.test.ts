/**
 * scripts/gpu/run.sh without a GPU machine: a fake repository with a fake pack (.gpu holding
 * an xz-compressed stub `node`, stub mocha, a tiny data set), stub nvidia-smi,
 * compute-sanitizer and ncu on the PATH, and a temporary $OUT. The stubs log their argument
 * lists, so the tests check the task dispatch, the commands each task runs, what comes back
 * in $OUT, the summary, and the exit codes. What the tasks measure needs the GPU machine.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {ROOT} from '../helpers/cli.js'

const RUNNER_FILES = ['run.sh', 'bench-report.mjs', 'tune-report.mjs', 'profile-case.mjs', 'check-enums.cc']

/** A stub that logs `NAME args...` (one line, plus the env variables the tasks set) to $CALLS. */
function stub(name: string, body = ''): string {
  return `#!/usr/bin/env bash
echo "${name} $* |SWEEP=\${SPARSE_DLMC_SWEEP:-}\${SPARSE_SPMM_SWEEP:-}|" >> "$CALLS"
${body}
exit 0
`
}

const NODE_STUB = stub(
  'node',
  `case "$*" in
  --version) echo v20.0.0-stub ;;
  *bin/run.js*) echo '{"stub": true}' ;;
  *bench-report.mjs*--brief*) echo "stub brief report" ;;
  *tune-report.mjs*) echo "tune: {}" ;;
esac`,
)
const MOCHA_STUB = stub('mocha', `echo "  5 passing (1s)"; echo "  1 pending"; [ -n "\${STUB_FAIL:-}" ] && { echo "  1 failing"; exit 1; }`)

function write(path: string, text: string, mode = 0o644): void {
  mkdirSync(join(path, '..'), {recursive: true})
  writeFileSync(path, text)
  chmodSync(path, mode)
}

function sh(cmd: string, cwd: string): void {
  const r = spawnSync('bash', ['-c', cmd], {cwd, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr}`)
}

interface World {
  base: string
  repo: string
  out: string
  calls: string
  gpuTmp: string
  shared: string
}

/** The fake repository and pack, as `run.sh pack dlmc` would leave them (its layout, not its build). */
function makeWorld(): World {
  const base = mkdtempSync(join(tmpdir(), 'gpu-run-'))
  const repo = join(base, 'repo')
  for (const f of RUNNER_FILES) cpSync(join(ROOT, 'scripts', 'gpu', f), join(repo, 'scripts', 'gpu', f))
  chmodSync(join(repo, 'scripts', 'gpu', 'run.sh'), 0o755)
  const stage = join(base, 'stage')
  write(join(stage, 'node'), NODE_STUB, 0o755)
  write(join(stage, 'node_modules', '.bin', 'mocha'), MOCHA_STUB, 0o755)
  write(join(stage, 'node_modules', 'mocha', 'bin', '_mocha'), '// stub\n')
  write(join(stage, 'dist', 'index.js'), '// stub\n')
  write(join(stage, 'build', 'Release', 'sparse.node'), 'stub\n')
  write(join(stage, 'data', 'dlmc', 'README'), 'stub DLMC\n')
  write(join(stage, 'data', 'anchors', 'dlmc_dev_h200.jsonl'), '{}\n')
  const gpu = join(repo, '.gpu')
  mkdirSync(gpu)
  sh(`xz -c node > ${gpu}/node.xz && tar -cJf ${gpu}/modules.tar.xz node_modules && tar -cJf ${gpu}/app.tar.xz dist build`, stage)
  sh(`tar -cJf ${gpu}/data.tar.xz dlmc anchors && echo stamp-1 > ${gpu}/stamp && echo abc1234 > ${gpu}/commit`, join(stage, 'data'))
  const bin = join(base, 'bin')
  write(join(bin, 'nvidia-smi'), stub('nvidia-smi', 'echo "Stub GPU, 1.0, 1980 MHz"'), 0o755)
  write(join(bin, 'compute-sanitizer'), stub('compute-sanitizer', 'echo "========= ERROR SUMMARY: 0 errors"; echo "  5 passing (1s)"'), 0o755)
  write(join(bin, 'ncu'), stub('ncu'), 0o755)
  write(join(bin, 'g++'), stub('g++', 'out=""; while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done; printf \'#!/usr/bin/env bash\\necho "CUBLAS_X ours 1 header 1  ok"\\n\' > "$out"; chmod +x "$out"'), 0o755)
  return {base, repo, out: join(base, 'out'), calls: join(base, 'calls.txt'), gpuTmp: join(base, 'gpu-tmp'), shared: join(base, 'shared')}
}

function runner(w: World, args: string[], env: NodeJS.ProcessEnv = {}): {code: number | null; stdout: string; stderr: string; calls: string[]} {
  const r = spawnSync('bash', [join(w.repo, 'scripts', 'gpu', 'run.sh'), ...args], {
    cwd: w.base,
    encoding: 'utf8',
    env: {...process.env, PATH: `${join(w.base, 'bin')}:${process.env.PATH}`, OUT: w.out, GPU_TMP: w.gpuTmp, CALLS: w.calls, ...env},
  })
  const calls = existsSync(w.calls) ? readFileSync(w.calls, 'utf8').trim().split('\n') : []
  return {code: r.status, stdout: r.stdout, stderr: r.stderr, calls}
}

const worlds: World[] = []
function world(): World {
  const w = makeWorld()
  worlds.push(w)
  return w
}
after(() => {
  for (const w of worlds) rmSync(w.base, {recursive: true, force: true})
})

describe('scripts/gpu/run.sh (stubbed GPU machine)', function () {
  this.timeout(60_000)

  it('unpacks the pack, runs chained tasks with their own arguments, and brings back one archive per task and the summary', () => {
    const w = world()
    const r = runner(w, ['test', '--grep', 'tensor-core', 'bench-llm', '--n', '16', '--dtype', 'f16', 'bench-llm', '--n', '64', 'verify-dlmc'])
    expect(r.code, r.stderr).to.equal(0)
    expect(readdirSync(w.out).sort()).to.deep.equal(['bench-llm-2.tar.xz', 'bench-llm.tar.xz', 'summary.txt', 'test.tar.xz', 'verify-dlmc.tar.xz'])
    // Unpacked: Node under $GPU_TMP, the modules and the app in the repository, the data beside it.
    expect(existsSync(join(w.gpuTmp, 'bin', 'node'))).to.equal(true)
    expect(existsSync(join(w.repo, 'node_modules', '.bin', 'mocha'))).to.equal(true)
    expect(existsSync(join(w.repo, 'build', 'Release', 'sparse.node'))).to.equal(true)
    expect(existsSync(join(w.shared, 'dlmc', 'README'))).to.equal(true)

    const mocha = r.calls.filter((c) => c.startsWith('mocha '))
    expect(mocha[0]).to.match(/^mocha --no-config -n import=tsx -n no-warnings --timeout 0 test\/kernels\/kernels\.test\.ts test\/kernels\/binding\.test\.ts test\/kernels\/binding-args\.test\.ts test\/kernels\/tc-format\.test\.ts test\/bench\/native-binding\.test\.ts test\/verify\/verify\.test\.ts test\/commands\/verify\.test\.ts test\/kernels\/pdl\.test\.ts test\/kernels\/pad\.test\.ts --grep tensor-core \|SWEEP=\|$/)
    expect(mocha[1]).to.match(/test\/verify\/dlmc-sweep\.test\.ts \|SWEEP=cuda\|$/)
    const bench = r.calls.filter((c) => c.includes('bin/run.js bench'))
    expect(bench).to.have.length(2)
    // On the GPU machine bench is pinned to the GPU (its default, auto, would fall back to the CPU).
    expect(bench[0]).to.include(`bin/run.js bench --suite llm --n 16 --dtype f16 --device cuda --jsonl ${w.gpuTmp}/bench-llm/llm.jsonl --json`)
    expect(bench[1]).to.include(`bin/run.js bench --suite llm --n 64 --device cuda --jsonl ${w.gpuTmp}/bench-llm-2/llm.jsonl --json`)

    const summary = readFileSync(join(w.out, 'summary.txt'), 'utf8')
    expect(summary).to.match(/^sparse GPU run \d{4}-\d\d-\d\dT\d\d:\d\dZ, packed from commit abc1234, node v20\.0\.0-stub\nGPU: Stub GPU/)
    for (const line of ['== test --grep tensor-core', '  5 passing, 0 failing, 1 pending', '== bench-llm --n 16 --dtype f16', '  stub brief report', '== bench-llm-2 --n 64', '== verify-dlmc']) {
      expect(summary).to.include(line)
    }
    expect(summary.match(/^(test|bench-llm|bench-llm-2|verify-dlmc): ok in \d+ s$/gm)).to.have.length(4)
    // The summary is printed last, for the device tool's output tail.
    expect(r.stdout.trimEnd().endsWith(summary.trimEnd())).to.equal(true)
    // An archive holds the task's folder: the bench JSON (stdout) and its logs.
    const list = spawnSync('tar', ['-tJf', join(w.out, 'bench-llm.tar.xz')], {encoding: 'utf8'}).stdout.split('\n').filter(Boolean).sort()
    expect(list).to.include.members(['bench-llm/', 'bench-llm/llm.json', 'bench-llm/llm.report.txt'])
    expect(readFileSync(join(w.gpuTmp, 'bench-llm', 'llm.json'), 'utf8')).to.equal('{"stub": true}\n')
  })

  it('does not unpack the same pack twice on a warm machine, and does after a new pack', () => {
    const w = world()
    expect(runner(w, ['test']).code).to.equal(0)
    writeFileSync(join(w.repo, 'node_modules', 'left-from-the-first-call'), '')
    expect(runner(w, ['test']).code).to.equal(0)
    expect(existsSync(join(w.repo, 'node_modules', 'left-from-the-first-call'))).to.equal(true)
    writeFileSync(join(w.repo, '.gpu', 'stamp'), 'stamp-2\n')
    expect(runner(w, ['test']).code).to.equal(0)
    expect(existsSync(join(w.repo, 'node_modules', 'left-from-the-first-call'))).to.equal(false)
  })

  it('runs bench-dlmc against the anchors, tune in three passes, sanitize with memcheck and racecheck, profile under ncu, enums', () => {
    const w = world()
    const r = runner(w, ['bench-dlmc', '--op', 'spmm', 'tune', 'sanitize', 'profile', 'sddmm:f16:256x256@0.9:64:tc', 'enums'])
    expect(r.code, r.stderr + r.stdout).to.equal(0)
    const dlmc = r.calls.find((c) => c.includes('--suite dlmc'))
    expect(dlmc).to.include(`--suite dlmc ${w.repo}/../shared/dlmc --compare ${w.repo}/../shared/anchors/dlmc_dev_h200.jsonl --plot ${w.gpuTmp}/bench-dlmc/dlmc.svg --op spmm --device cuda --jsonl`)
    const tune = r.calls.filter((c) => c.includes('--suite llm'))
    expect(tune).to.have.length(3)
    expect(tune[0]).to.include('--tune --tune-cache')
    expect(tune[1]).to.match(/--tune-cache \S+tune-cache\.json --json/)
    expect(tune[2]).to.include('--no-tune-cache')
    expect(r.calls.filter((c) => c.includes('tune-report.mjs')).map((c) => c.replace(/^.*tune-report\.mjs \S+/, '').trim())).to.deep.equal(['|SWEEP=|', '--expect cache |SWEEP=|', '--expect heuristic |SWEEP=|'])
    const san = r.calls.filter((c) => c.startsWith('compute-sanitizer'))
    expect(san.map((c) => c.split(' ')[2])).to.deep.equal(['memcheck', 'racecheck'])
    expect(san[1]).to.include('--grep every kernel variant|tensor-core')
    const ncu = r.calls.find((c) => c.startsWith('ncu '))
    expect(ncu).to.match(/^ncu --clock-control none -k regex:\^\(Spmm\|Sddmm\) --launch-skip 1 --launch-count 1 -o \S+profile --set full \S+node scripts\/gpu\/profile-case\.mjs sddmm:f16:256x256@0\.9:64:tc --launches 2/)
    expect(r.calls.some((c) => c.startsWith('g++ ') && c.includes('scripts/gpu/check-enums.cc'))).to.equal(true)
    const summary = readFileSync(join(w.out, 'summary.txt'), 'utf8')
    expect(summary).to.include('memcheck: ERROR SUMMARY: 0 errors')
    expect(summary).to.include('  1 ok, 0 mismatched')
    expect(readdirSync(w.out)).to.have.length(6)
  })

  it('a bench task keeps a device its flags name (--device cuda only when none is given)', () => {
    const w = world()
    const r = runner(w, ['bench-llm', '--device', 'cpu', '--n', '8', 'bench-attention', '--device=auto'])
    expect(r.code, r.stderr + r.stdout).to.equal(0)
    const bench = r.calls.filter((c) => c.includes('bin/run.js bench'))
    expect(bench).to.have.length(2)
    expect(bench[0]).to.include(`bin/run.js bench --suite llm --device cpu --n 8 --jsonl ${w.gpuTmp}/bench-llm/llm.jsonl --json`)
    expect(bench[1]).to.include(`bin/run.js bench --suite attention --device=auto --jsonl`)
    for (const b of bench) expect(b).to.not.include('--device cuda')
  })

  it('sweep writes the variant table into its folder; sh runs a command with node on the PATH', () => {
    const w = world()
    const r = runner(w, ['sweep', 'sh', 'node bin/run.js verify x > "$W/verify.json"; echo done'])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.calls.find((c) => c.startsWith('mocha '))).to.match(new RegExp(`test/kernels/spmm-variants\\.sweep\\.test\\.ts \\|SWEEP=${w.gpuTmp}/sweep/variants\\.jsonl\\|$`))
    expect(r.calls).to.include('node bin/run.js verify x |SWEEP=|')
    expect(readFileSync(join(w.gpuTmp, 'sh', 'verify.json'), 'utf8')).to.equal('{"stub": true}\n')
    expect(readFileSync(join(w.out, 'summary.txt'), 'utf8')).to.match(/== sh node bin\/run\.js verify x > "\$W\/verify\.json"; echo done\n {2}done\nsh: ok/)
  })

  it('the --tune parts (s24g-tune.sh, ung-whole.sh through tune-parts.sh) time their family alone, on the suite and the held-out shapes', () => {
    const w = world()
    for (const f of ['tune-parts.sh', 's24g-tune.sh', 'ung-whole.sh']) cpSync(join(ROOT, 'scripts', 'gpu', f), join(w.repo, 'scripts', 'gpu', f))
    write(join(w.base, 'bin', 'python3'), stub('python3'), 0o755)
    const r = runner(w, ['sh', 'bash scripts/gpu/s24g-tune.sh', 'sh', 'SPARSITY=0.5,0.9 NS=256 bash scripts/gpu/ung-whole.sh'])
    expect(r.code, r.stderr).to.equal(0)
    const benches = r.calls.filter((c) => c.startsWith('node bin/run.js bench')).map((c) => c.replace(/\/tmp\/[\w.-]+\//g, 'D/'))
    const common = '--dtype f16 --baseline dense --tune --tune-only PREFIX --no-tune-cache --tune-min-ms 10 --json |SWEEP=|'
    expect(benches).to.deep.equal([
      `node bin/run.js bench --suite llm --pattern 2:4 --n 128,256,1024,2048 ${common.replace('PREFIX', 's24g')}`,
      `node bin/run.js bench D/w14336x4096.npy D/w4096x14336.npy D/w6144x4096.npy --pattern 2:4 --n 128,256,1024,2048 ${common.replace('PREFIX', 's24g')}`,
      `node bin/run.js bench --suite llm --llm-sparsity 0.5,0.9 --n 256 ${common.replace('PREFIX', 'un')}`,
      `node bin/run.js bench D/w14336x4096.npy D/w4096x14336.npy D/w6144x4096.npy -s 0.5,0.9 --n 256 ${common.replace('PREFIX', 'un')}`,
    ])
    expect(r.calls.filter((c) => c.startsWith('python3 scripts/gpu/s24g-fit.py'))).to.have.length(1)
  })

  it('a task archive over the limit is packed again without its input files, listed in left-out.txt', () => {
    const w = world()
    const cmd = 'head -c 400000 /dev/urandom > "$W/w.npy"; head -c 300000 /dev/urandom > "$W/p.npz"; echo result > "$W/result.txt"'
    const r = runner(w, ['sh', cmd], {OUT_FILE_LIMIT: '200000'})
    expect(r.code, r.stderr).to.equal(0)
    const list = spawnSync('tar', ['-tJf', join(w.out, 'sh.tar.xz')], {encoding: 'utf8'}).stdout.split('\n').filter(Boolean).sort()
    expect(list).to.include.members(['sh/result.txt', 'sh/left-out.txt'])
    expect(list.filter((f) => /\.np[yz]$/.test(f))).to.deep.equal([])
    expect(readFileSync(join(w.gpuTmp, 'sh', 'left-out.txt'), 'utf8')).to.equal('300000\tp.npz\n400000\tw.npy\n')
    const summary = readFileSync(join(w.out, 'summary.txt'), 'utf8')
    expect(summary).to.match(/sh\.tar\.xz was over 0 MiB: packed again without its 2 input files \(listed in left-out\.txt\)/)
    expect(summary).not.to.match(/will not come back/)
  })

  it('a task archive still over the limit without inputs says it will not come back', () => {
    const w = world()
    const r = runner(w, ['sh', 'head -c 400000 /dev/urandom > "$W/big.log"'], {OUT_FILE_LIMIT: '200000'})
    expect(r.code, r.stderr).to.equal(0)
    const summary = readFileSync(join(w.out, 'summary.txt'), 'utf8')
    expect(summary).to.match(/sh\.tar\.xz is over 0 MiB and will not come back/)
    expect(existsSync(join(w.gpuTmp, 'sh', 'left-out.txt'))).to.equal(false)
  })

  it('probe runs the carried workbench binary (check by default), or says how to build it', () => {
    const w = world()
    let r = runner(w, ['probe'])
    expect(r.code).to.equal(1)
    expect(readFileSync(join(w.out, 'summary.txt'), 'utf8')).to.include('needs .gpu/stream_probe: build it here with bash scripts/gpu/probe/build.sh, then pack')
    write(join(w.repo, '.gpu', 'stream_probe'), stub('stream_probe', 'echo "all variants ok"'), 0o755)
    r = runner(w, ['probe', 'probe', 'time', 'bitmap'])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.calls.filter((c) => c.startsWith('stream_probe'))).to.deep.equal(['stream_probe check |SWEEP=|', 'stream_probe time bitmap |SWEEP=|'])
    expect(readFileSync(join(w.out, 'summary.txt'), 'utf8')).to.match(/== probe-2 time bitmap\n {2}all variants ok\nprobe-2: ok/)
  })

  it('reports a failed task, runs the others, and exits 1', () => {
    const w = world()
    const r = runner(w, ['test', 'bench-llm'], {STUB_FAIL: '1'})
    expect(r.code).to.equal(1)
    const summary = readFileSync(join(w.out, 'summary.txt'), 'utf8')
    expect(summary).to.match(/^test: FAILED \(rc 1\) in \d+ s$/m)
    expect(summary).to.include('5 passing, 1 failing, 1 pending')
    expect(summary).to.match(/^bench-llm: ok in \d+ s$/m)
  })

  it('a DLMC task without the data set fails with what to pack', () => {
    const w = world()
    rmSync(join(w.repo, '.gpu', 'data.tar.xz'))
    const r = runner(w, ['bench-dlmc'])
    expect(r.code).to.equal(1)
    expect(readFileSync(join(w.out, 'summary.txt'), 'utf8')).to.include(`needs ${w.repo}/../shared/dlmc: pack it (bash scripts/gpu/run.sh pack dlmc)`)
    expect(r.calls.some((c) => c.includes('bin/run.js'))).to.equal(false)
  })

  it('refuses bad usage with one line and exit 2 before unpacking anything; a missing pack exits 3', () => {
    const w = world()
    let r = runner(w, ['bench-everything'])
    expect([r.code, r.stderr]).to.deep.equal([2, "run.sh: unknown task 'bench-everything' (tasks: test verify-dlmc bench-dlmc bench-llm bench-attention bench tune sweep sanitize profile enums probe engine gemm unst sh; here: pack)\n"])
    r = runner(w, ['test', 'test', 'test', 'test', 'test', 'test', 'test', 'test'])
    expect(r.code).to.equal(2)
    expect(r.stderr).to.match(/^run\.sh: 8 tasks in one call, but \$OUT brings back 8 files: at most 7 tasks/)
    expect(existsSync(join(w.repo, 'node_modules'))).to.equal(false)
    rmSync(join(w.repo, '.gpu', 'node.xz'))
    r = runner(w, ['test'])
    expect(r.code).to.equal(3)
    expect(r.stderr).to.equal('run.sh: .gpu/node.xz is missing: run \'bash scripts/gpu/run.sh pack\' here and carry [".gpu"]\n')
  })

  it('pack refuses a data set outside ../shared or missing, before building', () => {
    const w = world()
    let r = runner(w, ['pack', '../etc'])
    expect([r.code, r.stderr]).to.deep.equal([2, `run.sh: data set '../etc': name a folder or file under ${w.repo}/../shared (e.g. dlmc, anchors)\n`])
    r = runner(w, ['pack', 'no-such-set'])
    expect([r.code, r.stderr]).to.deep.equal([2, `run.sh: data set 'no-such-set' not found: ${w.repo}/../shared/no-such-set does not exist\n`])
    r = runner(w, ['pack', '--', 'bench-everything'])
    expect(r.code).to.equal(2)
    expect(r.stderr).to.match(/^run\.sh: after --: expected a task/)
  })

  it('prints its usage with --help', () => {
    const r = runner(world(), ['--help'])
    expect(r.code).to.equal(0)
    expect(r.stdout).to.match(/^The GPU runner: packs here, runs there\. Reference: docs\/gpu-runs\.md\./)
    expect(r.stdout).to.include('bash scripts/gpu/run.sh pack [DATASET...] [-- TASK [ARGS]...]')
  })

  const ENGINE_SOURCES = ['scripts/gpu/probe/engine_probe.cu', 'scripts/gpu/probe/engine_variants.cu', 'native/common/sparse24.cc']

  /**
   * A world without a pack where a workbench builds: its build script (the real one), its
   * sources as stubs, and an nvcc whose objects are empty files and whose linked `binary` is a
   * script that logs its arguments to $CALLS and prints `output`.
   */
  function workbenchWorld(build: string, sources: string[], binary: string, output: string): World {
    const w = world()
    rmSync(join(w.repo, '.gpu'), {recursive: true, force: true})
    const probe = join(w.repo, 'scripts', 'gpu', 'probe')
    cpSync(join(ROOT, 'scripts', 'gpu', 'probe', build), join(probe, build))
    for (const s of sources) write(join(w.repo, s), '// stub\n')
    const linked = `#!/usr/bin/env bash\necho "${binary} $*" >> "$CALLS"; ${output}\n`
    write(
      join(w.base, 'bin', 'nvcc'),
      stub('nvcc', `out=""; while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
case "$out" in *${binary}) printf '%s' '${linked.replace(/'/g, "'\\''")}' > "$out"; chmod +x "$out" ;; *) : > "$out" ;; esac`),
      0o755,
    )
    return w
  }

  /** The streaming engine's workbench world (engine_build.sh and its sources as stubs). */
  const engineWorld = (output: string): World =>
    workbenchWorld('engine_build.sh', ENGINE_SOURCES, 'engine_probe', output)

  it('engine: builds the workbench there without a pack (again only when its sources change) and runs its modes', () => {
    const w = engineWorld('echo "check: 3 runs, 0 failures"')
    const r = runner(w, ['engine', 'check', 'engine', 'timeall', 's24_f16', '11008x4096'], {NS: '8,64'})
    expect(r.code, r.stderr + r.stdout).to.equal(0)
    const summary = readFileSync(join(w.out, 'summary.txt'), 'utf8')
    expect(summary).to.match(/workbenches only \(no pack\)/)
    expect(summary).to.include('check: 3 runs, 0 failures')
    // One object per variant group that engine_variants.h declares.
    const groups = readFileSync('scripts/gpu/probe/engine_variants.h', 'utf8').match(/^std::vector<Variant> Group\d+\(\);$/gm) ?? []
    expect(groups.length).to.be.greaterThan(10)
    expect(r.calls.filter((c) => c.startsWith('nvcc ') && c.includes('-DGROUP='))).to.have.length(groups.length)
    expect(r.calls).to.include.members(['engine_probe check', 'engine_probe timeall s24_f16 11008x4096'])
    expect(readdirSync(w.out).sort()).to.deep.equal(['engine-2.tar.xz', 'engine.tar.xz', 'summary.txt'])
    // Built once for both tasks; a later call with the same sources builds nothing.
    expect(r.calls.filter((c) => c.startsWith('nvcc ') && c.includes('-o ') && c.endsWith('engine_probe -ldl |SWEEP=|'))).to.have.length(1)
    const again = runner(w, ['engine', 'list'])
    expect(again.code).to.equal(0)
    expect(again.calls.filter((c) => c.startsWith('nvcc ')).length).to.equal(r.calls.filter((c) => c.startsWith('nvcc ')).length)
    const bad = runner(w, ['engine', 'bogus'])
    expect(bad.code).to.equal(1)
    expect(readFileSync(join(w.out, 'summary.txt'), 'utf8')).to.include("engine: unknown mode 'bogus'")
  })

  it('engine and gemm: a workbench carried as $GPU_DIR/<binary>.xz runs unpacked, with no build there', () => {
    const w = engineWorld('echo "built there"')
    mkdirSync(join(w.repo, '.gpu'), {recursive: true})
    for (const bin of ['engine_probe', 'gemm_probe']) {
      const body = stub(bin, `echo "${bin} carried $*"`)
      const xz = spawnSync('xz', ['-c'], {input: body})
      writeFileSync(join(w.repo, '.gpu', `${bin}.xz`), xz.stdout)
    }
    const r = runner(w, ['engine', 'stages', 's24_f16_k1', '4096', '4096', '1', 'gemm', 'list'])
    expect(r.code, r.stderr + r.stdout).to.equal(0)
    expect(r.calls.filter((c) => c.startsWith('nvcc '))).to.deep.equal([])
    expect(r.calls).to.include.members(['engine_probe stages s24_f16_k1 4096 4096 1 |SWEEP=|', 'gemm_probe list |SWEEP=|'])
    const summary = readFileSync(join(w.out, 'summary.txt'), 'utf8')
    expect(summary).to.include('engine_probe carried stages s24_f16_k1 4096 4096 1')
    expect(summary).to.not.include('built there')
  })

  it('engine ncu: Nsight Compute --set full on the variant (NCU_OPTS added), the details and SASS pages kept', () => {
    const w = engineWorld('true')
    const r = runner(w, ['engine', 'ncu', 'ENGINE_PUSH=1', 's24_f16_v', '4096', '4096', '1'], {NCU_OPTS: '--warp-sampling-interval 0'})
    expect(r.code, r.stderr + r.stdout).to.equal(0)
    const ncu = r.calls.filter((c) => c.startsWith('ncu '))
    expect(ncu[0]).to.match(
      /^ncu --set full --import-source yes --clock-control none --warp-sampling-interval 0 -k regex:StreamKernel --launch-skip 1 --launch-count 1 -o \S+profile env ENGINE_PUSH=1 \S+engine_probe one s24_f16_v 4096 4096 1/,
    )
    expect(ncu.slice(1).map((c) => c.split(' ').slice(0, 5).join(' '))).to.deep.equal([
      `ncu --import ${ncu[1].split(' ')[2]} --page details`,
      `ncu --import ${ncu[2].split(' ')[2]} --page source`,
    ])
    expect(ncu[1].split(' ')[2]).to.match(/profile\.ncu-rep$/)
  })

  it('gemm: builds the GEMM workbench there without a pack (again only when its sources change) and runs its modes', () => {
    // Its check prints one failure among passing runs.
    const w = workbenchWorld(
      'gemm_build.sh',
      ['scripts/gpu/probe/gemm_probe.cu', 'native/common/sparse24.cc'],
      'gemm_probe',
      'echo "f16_sp_n128_s6 M 7 FAIL"; echo "x ok"; echo "check: 3 runs, 1 failures"; echo "VARIANTS=${VARIANTS:-unset}"',
    )
    const r = runner(w, ['gemm', 'check', 'gemm', 'time', '4096x4096'], {NS: '256'})
    expect(r.code, r.stderr + r.stdout).to.equal(0)
    const summary = readFileSync(join(w.out, 'summary.txt'), 'utf8')
    expect(summary).to.match(/workbenches only \(no pack\)/)
    // check's part of the summary keeps the failures and the count, not the passing runs.
    const checkPart = summary.slice(summary.indexOf('== gemm check'), summary.indexOf('== gemm-2'))
    expect(checkPart).to.include('f16_sp_n128_s6 M 7 FAIL')
    expect(checkPart).to.include('check: 3 runs, 1 failures')
    expect(checkPart).to.not.include('x ok')
    expect(r.calls).to.include.members(['gemm_probe check', 'gemm_probe time 4096x4096'])
    expect(readdirSync(w.out).sort()).to.deep.equal(['gemm-2.tar.xz', 'gemm.tar.xz', 'summary.txt'])
    const builds = (calls: string[]) => calls.filter((c) => c.startsWith('nvcc ') && c.includes('gemm_probe.cu')).length
    expect(builds(r.calls)).to.equal(1)
    const again = runner(w, ['gemm', 'list'])
    expect(again.code).to.equal(0)
    expect(builds(again.calls)).to.equal(builds(r.calls))
    // NAME=VALUE words right after the mode reach the workbench for that task alone.
    const named = runner(w, ['gemm', 'time', 'VARIANTS=f16_un_tma_n128_s5', '4096x4096', 'gemm', 'list', 'gemm', 'trace', 'SPARSITY=0.5', 'f16_un_c120_tma2_ck_n256_s4', '4096', '4096', '256'])
    expect(named.code, named.stderr + named.stdout).to.equal(0)
    expect(named.calls).to.include.members(['gemm_probe time 4096x4096', 'gemm_probe list', 'gemm_probe trace f16_un_c120_tma2_ck_n256_s4 4096 4096 256'])
    const namedSummary = readFileSync(join(w.out, 'summary.txt'), 'utf8')
    expect(namedSummary).to.include('VARIANTS=f16_un_tma_n128_s5')
    expect(namedSummary.slice(namedSummary.indexOf('== gemm-2'))).to.include('VARIANTS=unset')
    const bad = runner(w, ['gemm', 'bogus'])
    expect(bad.code).to.equal(1)
    expect(readFileSync(join(w.out, 'summary.txt'), 'utf8')).to.include("gemm: unknown mode 'bogus'")
  })

  // NAME=VALUE words right after a workbench task's mode set its environment for that task alone
  // (engine's since v41); one after the mode's other arguments fails the task, running nothing.
  const named = [
    {task: 'engine', build: 'engine_build.sh', binary: 'engine_probe', mode: 'timeall', word: 'ENGINE_B_TMA=1',
     args: ['s24_f16', '4096x4096'],
     sources: ENGINE_SOURCES},
    // A name with a digit (v49: before, ENGINE_L2_AHEAD=1 was taken for the trace's variant name).
    {task: 'engine', build: 'engine_build.sh', binary: 'engine_probe', mode: 'trace', word: 'ENGINE_L2_AHEAD=1',
     args: ['s24_f16_wgk1_w4x1_n8_k256_s8_1cta', '4096', '4096', '1'],
     sources: ENGINE_SOURCES},
    {task: 'unst', build: 'unst_build.sh', binary: 'unst_probe', mode: 'stages', word: 'UNST_FIXUP=2',
     args: ['unprt_x', '4096', '4096', '8', '0.9'],
     sources: ['scripts/gpu/probe/unst_probe.cu', 'scripts/gpu/probe/unst_variants.cu', 'native/common/unstructured_stream.cc']},
  ]
  for (const t of named) {
    it(`${t.task} (${t.word}): NAME=VALUE words right after the mode reach the workbench; one after its arguments fails the task`, () => {
      const name = t.word.split('=')[0]
      const w = workbenchWorld(t.build, t.sources, t.binary, `echo "${name}=\${${name}:-unset}"`)
      const r = runner(w, [t.task, t.mode, t.word, ...t.args, t.task, 'list'])
      expect(r.code, r.stderr + r.stdout).to.equal(0)
      expect(r.calls).to.include.members([`${t.binary} ${t.mode} ${t.args.join(' ')}`, `${t.binary} list`])
      const summary = readFileSync(join(w.out, 'summary.txt'), 'utf8')
      expect(summary).to.include(t.word)
      expect(summary.slice(summary.indexOf(`== ${t.task}-2`)), 'the next task runs without it').to.include(`${name}=unset`)
      const ran = (calls: string[]) => calls.filter((c) => c.startsWith(`${t.binary} `)).length
      const late = runner(w, [t.task, t.mode, ...t.args, t.word])
      expect(late.code).to.equal(1)
      expect(ran(late.calls)).to.equal(ran(r.calls))
      expect(readFileSync(join(w.out, 'summary.txt'), 'utf8')).to.include(
        `${t.task}: '${t.word}' comes after the mode's arguments: NAME=VALUE words go right after the mode`,
      )
    })
  }
})
