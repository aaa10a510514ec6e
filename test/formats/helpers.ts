import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

import {ROOT} from '../helpers/cli.js'
import {InputError} from '../../src/errors.js'
import type {ByteSink} from '../../src/formats/index.js'

export const FIXTURES = join(ROOT, 'fixtures')
export const fixture = (name: string) => join(FIXTURES, name)

let pyStatus: string | null | undefined
/** null when python3 with numpy and scipy is usable, else the reason it is not. */
export function pythonMissing(): string | null {
  if (pyStatus === undefined) {
    const r = spawnSync('python3', ['-c', 'import numpy, scipy'], {encoding: 'utf8'})
    pyStatus = r.error ? `python3 not found (${r.error.message})` : r.status !== 0 ? `python3 lacks numpy/scipy: ${r.stderr.trim().split('\n').pop()}` : null
  }
  return pyStatus
}

/** Skip the current test with a printed reason when python3/numpy/scipy is missing. */
export function requirePython(ctx: Mocha.Context): void {
  const why = pythonMissing()
  if (why) {
    console.log(`      (skipped: ${why})`)
    ctx.skip()
  }
}

/** Run a Python snippet; returns stdout (throws with stderr on failure). */
export function py(code: string, args: string[] = []): string {
  const r = spawnSync('python3', ['-c', code, ...args], {encoding: 'utf8', maxBuffer: 64 << 20})
  if (r.status !== 0) throw new Error(`python failed: ${r.stderr}`)
  return r.stdout
}

/** Run a Python snippet that prints JSON; returns the parsed value. */
export function pyJson<T = unknown>(code: string, args: string[] = []): T {
  return JSON.parse(py(code, args)) as T
}

/** A temporary folder for one test file; call the returned cleanup in after(). */
export function makeTmp(prefix = 'sparse-fmt-'): {dir: string; cleanup: () => void} {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return {dir, cleanup: () => rmSync(dir, {recursive: true, force: true})}
}

/** A sink collecting bytes in memory. */
export class MemorySink implements ByteSink {
  chunks: Uint8Array[] = []
  async write(chunk: Uint8Array): Promise<void> {
    this.chunks.push(chunk.slice())
  }
  bytes(): Uint8Array {
    const n = this.chunks.reduce((a, c) => a + c.byteLength, 0)
    const out = new Uint8Array(new ArrayBuffer(n))
    let o = 0
    for (const c of this.chunks) {
      out.set(c, o)
      o += c.byteLength
    }
    return out
  }
}

/** Bit-exact comparison of two typed arrays. */
export function sameBits(a: ArrayBufferView, b: ArrayBufferView): boolean {
  if (a.byteLength !== b.byteLength) return false
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false
  return true
}

/** Asserts that `fn` throws an InputError whose message matches `pattern`. */
export function expectInputError(fn: () => unknown, pattern: RegExp): void {
  try {
    fn()
  } catch (error) {
    expect(error, String(error)).to.be.instanceOf(InputError)
    expect((error as Error).message).to.match(pattern)
    return
  }
  expect.fail('expected an InputError')
}

/** Asserts that `p` rejects with an InputError whose message matches `pattern`. */
export async function expectInputErrorAsync(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  try {
    await p
  } catch (error) {
    expect(error, String(error)).to.be.instanceOf(InputError)
    expect((error as Error).message).to.match(pattern)
    return
  }
  expect.fail('expected an InputError')
}
