/**
 * python3 alone (no packages), for the tests of scripts/gpu's Python models: a test skips with a
 * printed reason where it is missing (node-gyp needs it, so a build machine has it).
 */
import {spawnSync} from 'node:child_process'

let status: string | null | undefined
/** Skip the current test with a printed reason when python3 cannot run. */
export function requirePython3(ctx: Mocha.Context): void {
  if (status === undefined) {
    const r = spawnSync('python3', ['--version'], {encoding: 'utf8'})
    status = r.error ? `python3 is not usable: ${r.error.message}` : r.status !== 0 ? `python3 is not usable: ${r.stderr.trim()}` : null
  }
  if (status) {
    console.log(`      (skipped: ${status})`)
    ctx.skip()
  }
}
