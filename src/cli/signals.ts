/**
 * Ctrl-C (SIGINT) and SIGTERM for every command: remove the temporary files and folders of
 * outputs still being written (the registry in src/formats/temp-files.ts), say so in one
 * line (or as the `{error}` JSON object under --json), and exit 130 / 143.
 *
 * bin/run.js installs the handlers before it loads oclif (so a signal in the first tenth of
 * a second is not a silent death by signal), and the base command's init() then tells them
 * about --json and the spinner. Node runs a signal's listeners when the event loop gets
 * control: long loops in the library yield at least every ~50 ms (src/formats/pace.ts), so
 * an interrupt acts within about 100 ms, except inside one kernel-like step on a single
 * tensor (selecting the cut of a large tensor), which is waited for; nothing is renamed
 * into place meanwhile, because renaming is an awaited step too.
 *
 * This module imports nothing heavy: it must load in a few milliseconds.
 */
import {errnoOf, InterruptedError} from '../errors.js'
import {removeTempFilesSync} from '../formats/temp-files.js'

export interface SignalOptions {
  /** Whether the command runs under --json (the error then goes to stdout as JSON). */
  json: () => boolean
  /** Called first (stop a spinner, ...). */
  beforeExit?: () => void
}

let installed: ((signal: NodeJS.Signals) => void) | undefined
/** Set once the base command has printed an error (so a late stdout error adds no second line). */
let errorReported = false

export function markErrorReported(): void {
  errorReported = true
}

/**
 * stdout failing under us (oclif's own listener rethrows anything but EPIPE, which would
 * print a stack trace): the reader went away (EPIPE) -> exit quietly with 0, as a text
 * report cut off by `| head` does; anything else (ENOSPC with `> /dev/full`, EIO) -> one
 * line and exit 74. Registered before oclif's listener, and exits, so that one never runs.
 */
function onStdoutError(err: Error): void {
  removeTempFilesSync()
  const code = errnoOf(err)
  if (code === 'EPIPE') process.exit(0)
  if (!errorReported) {
    try {
      process.stderr.write(`error: cannot write to stdout: ${code === 'ENOSPC' ? 'no space left on the device' : 'the system refused it'} (${code ?? err.message}) (check where stdout goes)\n`)
    } catch {
      // nothing more to do
    }
  }
  process.exit(errorReported && process.exitCode ? Number(process.exitCode) : 74)
}
let current: SignalOptions = {json: () => process.argv.includes('--json')}

/** Install the SIGINT/SIGTERM handlers, or update their options when already installed. */
export function installSignalHandlers(opts?: SignalOptions): void {
  if (opts) current = opts
  if (installed) return
  const handler = (signal: NodeJS.Signals) => {
    const error = new InterruptedError(signal === 'SIGTERM' ? 'SIGTERM' : 'SIGINT')
    try {
      current.beforeExit?.()
    } catch {
      // best effort
    }
    removeTempFilesSync()
    try {
      if (current.json()) {
        process.stdout.write(JSON.stringify({error: {code: error.code, message: error.message, exitCode: error.exitCode}}, null, 2) + '\n')
      } else {
        process.stderr.write(`error: ${error.message}; no output was written\n`)
      }
    } catch {
      // a closed stdout/stderr must not keep us from exiting
    }
    process.exit(error.exitCode)
  }
  installed = handler
  process.on('SIGINT', handler)
  process.on('SIGTERM', handler)
  process.stdout.on('error', onStdoutError)
  // A closed stderr must not crash the process either.
  process.stderr.on('error', () => {})
}

/** Remove the handlers (for tests that run commands in-process). */
export function removeSignalHandlers(): void {
  if (!installed) return
  process.off('SIGINT', installed)
  process.off('SIGTERM', installed)
  process.stdout.off('error', onStdoutError)
  installed = undefined
}
