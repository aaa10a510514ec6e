/**
 * Ctrl-C (SIGINT) and SIGTERM for every command: remove the temporary files and folders of
 * outputs still being written (the registry in src/formats/output.ts), say so in one line
 * (or as the `{error}` JSON object under --json), and exit 130 / 143.
 *
 * Installed once per process by the base command's init(), so the handlers cover the whole
 * run, not only the moments a temporary file exists. Node runs a signal's listeners when
 * the event loop gets control: during a long synchronous step (selecting the cut of a large
 * tensor) the exit waits for that step to end, and nothing is renamed into place meanwhile,
 * because renaming is an awaited step too.
 */
import {InterruptedError} from '../errors.js'
import {removeTempFilesSync} from '../formats/index.js'

export interface SignalOptions {
  /** Whether the command runs under --json (the error then goes to stdout as JSON). */
  json: () => boolean
  /** Called first (stop a spinner, ...). */
  beforeExit?: () => void
}

let installed: ((signal: NodeJS.Signals) => void) | undefined

/** Install the SIGINT/SIGTERM handlers (idempotent). */
export function installSignalHandlers(opts: SignalOptions): void {
  if (installed) return
  const handler = (signal: NodeJS.Signals) => {
    const error = new InterruptedError(signal === 'SIGTERM' ? 'SIGTERM' : 'SIGINT')
    try {
      opts.beforeExit?.()
    } catch {
      // best effort
    }
    removeTempFilesSync()
    try {
      if (opts.json()) {
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
}

/** Remove the handlers (for tests that run commands in-process). */
export function removeSignalHandlers(): void {
  if (!installed) return
  process.off('SIGINT', installed)
  process.off('SIGTERM', installed)
  installed = undefined
}
