/**
 * Ctrl-C and SIGTERM during `sparse prune` on a large input: the real CLI (compiled, as
 * `npm test` builds it) is spawned on a generated file of a few hundred MB in a temporary
 * folder, and signalled mid-run — while it reads/prunes, and while it writes its output
 * (seen through the temporary file or folder appearing). It must exit 130 (SIGINT) or 143
 * (SIGTERM) by itself (not be killed by the signal), say so in one line, and leave no output:
 * no destination file or folder and no temporary file beside it.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

import {writeNpy, writeSafetensorsStream} from '../../src/formats/index.js'
import {BIN, ROOT} from '../helpers/cli.js'

/** Tensors of the generated model: big enough that pruning takes a few seconds here. */
const TENSORS = 8
const ROWS = 2048
const COLS = 4096

/** Deterministic, cheap "weights": one random block, scaled per tensor. */
function block(seed: number): Float32Array {
  const out = new Float32Array(ROWS * COLS)
  let s = seed >>> 0 || 1
  for (let i = 0; i < out.length; i++) {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    out[i] = ((s >>> 0) / 2 ** 32 - 0.5) * 2
  }
  return out
}

interface Running {
  child: ChildProcess
  done: Promise<{code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string}>
}

function start(args: string[], cwd: string): Running {
  const child = spawn(process.execPath, [BIN, ...args], {cwd, env: {...process.env, NO_COLOR: '1'}, stdio: ['ignore', 'pipe', 'pipe']})
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d) => (stdout += d))
  child.stderr!.on('data', (d) => (stderr += d))
  const done = new Promise<{code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string}>((resolve) => {
    child.on('close', (code, signal) => resolve({code, signal, stdout, stderr}))
  })
  return {child, done}
}

async function waitFor(what: string, cond: () => boolean, r: Running, timeoutMs = 60_000): Promise<void> {
  const t0 = Date.now()
  let exited = false
  void r.done.then(() => (exited = true))
  while (!cond()) {
    if (exited) throw new Error(`the command ended before ${what}`)
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((res) => setTimeout(res, 5))
  }
}

/** Whether the process has `path` open (Linux: /proc/<pid>/fd). */
function hasOpen(pid: number, path: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === path
      } catch {
        return false
      }
    })
  } catch {
    return false
  }
}

const temps = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.tmp'))

describe('hardening: SIGINT/SIGTERM during prune leave no partial output', function () {
  this.timeout(180_000)
  let dir: string
  let model: string
  let single: string

  before(async function () {
    if (!existsSync(join(ROOT, 'dist', 'commands', 'prune.js'))) {
      console.log('      (skipped: the prune command is not built; run `npm run build`)')
      this.skip()
    }
    dir = mkdtempSync(join(tmpdir(), 'sparse-interrupt-'))
    model = join(dir, 'model.safetensors')
    const base = block(7)
    await writeSafetensorsStream(
      Array.from({length: TENSORS}, (_, i) => ({name: `layers.${i}.weight`, shape: [ROWS, COLS], dtype: 'f32' as const})),
      async (i, sink) => {
        // Each tensor: the block scaled differently (same bytes would do, but keep them distinct).
        const t = new Float32Array(base.length)
        const k = 1 + i / 10
        for (let j = 0; j < t.length; j++) t[j] = base[j] * k
        await sink.write(new Uint8Array(t.buffer))
      },
      model,
    )
    single = join(dir, 'w.npy')
    await writeNpy({name: 'w', shape: [ROWS * 2, COLS], dtype: 'f32', data: Float32Array.from({length: ROWS * 2 * COLS}, (_, j) => base[j % base.length] * (1 + (j % 3)))}, single)
  })

  after(() => {
    if (dir) rmSync(dir, {recursive: true, force: true})
  })

  const cases: {signal: 'SIGINT' | 'SIGTERM'; code: number}[] = [
    {signal: 'SIGINT', code: 130},
    {signal: 'SIGTERM', code: 143},
  ]

  for (const {signal, code} of cases) {
    it(`${signal} while a directory of CSR files is being written: exit ${code}, no folder, no temporary files`, async () => {
      const out = join(dir, `out-${signal}`)
      const r = start(['prune', model, '-s', '0.9', '-o', out], dir)
      // The temporary folder exists from the start; wait until it holds a finished tensor.
      await waitFor('the first CSR file', () => temps(dir).some((t) => readdirSync(join(dir, t)).some((f) => f.endsWith('.npz'))), r)
      r.child.kill(signal)
      const res = await r.done
      expect(res.signal, res.stderr).to.equal(null)
      expect(res.code, res.stderr).to.equal(code)
      expect(res.stderr).to.match(new RegExp(`interrupted by ${signal}`))
      expect(res.stderr.trim().split('\n')).to.have.length(1)
      expect(existsSync(out)).to.equal(false)
      expect(temps(dir)).to.deep.equal([])
    })
  }

  it('SIGINT while reading and pruning (before any output exists): exit 130, nothing written', async function () {
    if (!existsSync('/proc/self/fd')) {
      console.log('      (skipped: needs /proc to see when the input is opened)')
      this.skip()
    }
    const out = join(dir, 'early.npz')
    const r = start(['prune', single, '-s', '0.9', '-o', out], dir)
    await waitFor('the input to be opened', () => hasOpen(r.child.pid!, single), r)
    r.child.kill('SIGINT')
    const res = await r.done
    expect(res.signal, res.stderr).to.equal(null)
    expect(res.code, res.stderr).to.equal(130)
    expect(existsSync(out)).to.equal(false)
    expect(temps(dir)).to.deep.equal([])
  })

  it('SIGINT while the single .npz is being written (deflating): exit 130, no file, no temporary file', async () => {
    const out = join(dir, 'single.npz')
    const r = start(['prune', single, '-s', '0.5', '--compress', '-o', out], dir)
    await waitFor('the temporary output file', () => temps(dir).some((t) => t.startsWith('.single.npz.')), r)
    r.child.kill('SIGINT')
    const res = await r.done
    expect(res.signal, res.stderr).to.equal(null)
    expect(res.code, res.stderr).to.equal(130)
    expect(existsSync(out)).to.equal(false)
    expect(temps(dir)).to.deep.equal([])
  })

  it('under --json the interruption is a JSON error object on stdout, exit 143', async () => {
    const out = join(dir, 'json-out')
    const r = start(['prune', model, '-s', '0.9', '-o', out, '--json'], dir)
    await waitFor('the temporary folder', () => temps(dir).length > 0, r)
    r.child.kill('SIGTERM')
    const res = await r.done
    expect(res.code, res.stderr).to.equal(143)
    const json = JSON.parse(res.stdout) as {error: {code: string; exitCode: number}}
    expect(json.error.code).to.equal('interrupted')
    expect(json.error.exitCode).to.equal(143)
    expect(existsSync(out)).to.equal(false)
    expect(temps(dir)).to.deep.equal([])
  })
})
