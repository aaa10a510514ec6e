import {spawn} from 'node:child_process'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const BIN = join(ROOT, 'bin', 'run.js')
/** The DLMC subset shipped beside the checkout (../shared/dlmc), as CI lays it out. */
export const DLMC = join(ROOT, '..', 'shared', 'dlmc')

export interface CliResult {
  stdout: string
  stderr: string
  /** stdout as raw bytes (for binary output such as `-o -`). */
  stdoutBytes: Buffer
  code: number | null
  signal: NodeJS.Signals | null
}

/**
 * Runs the real CLI (`node bin/run.js ...`, compiled by `npm test`'s pretest build) in a
 * child process and collects stdout, stderr and the exit code.
 */
export function runCli(
  args: string[],
  opts: {input?: Buffer | string; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number} = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd ?? ROOT,
      env: {...process.env, NO_COLOR: '1', FORCE_COLOR: undefined, ...opts.env},
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (d: Buffer) => out.push(d))
    child.stderr.on('data', (d: Buffer) => err.push(d))
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const stdoutBytes = Buffer.concat(out)
      resolve({stdout: stdoutBytes.toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), stdoutBytes, code, signal})
    })
    child.stdin.on('error', () => {})
    if (opts.input !== undefined) child.stdin.end(opts.input)
    else child.stdin.end()
  })
}
