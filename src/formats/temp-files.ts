/**
 * The registry of temporary outputs in progress (files and folders named
 * `.NAME.PID-XXXXXXXX.tmp` beside their destination), kept in a module of its own with no
 * other imports so that the CLI can install its signal handlers before anything else loads.
 *
 * `removeTempFilesSync()` removes everything registered and puts back a folder that was
 * moved aside while its replacement was being renamed into place. It is synchronous, so it
 * is safe in signal and exit handlers.
 */
import {existsSync, renameSync, rmSync} from 'node:fs'

const temps = new Set<string>()
/** Folders moved aside (old name -> destination) until their replacement is in place. */
const movedAside = new Map<string, string>()
let handlersInstalled = false

const onSignal = (signal: NodeJS.Signals) => {
  removeTempFilesSync()
  process.exit(signal === 'SIGINT' ? 130 : 143)
}
const onSigint = () => onSignal('SIGINT')
const onSigterm = () => onSignal('SIGTERM')
const onExit = () => removeTempFilesSync()

/**
 * Register a temporary path. A library user without the CLI also gets cleanup: the first
 * registration installs SIGINT/SIGTERM/exit handlers (removed again when none is left).
 */
export function registerTemp(path: string): void {
  temps.add(path)
  if (!handlersInstalled) {
    process.on('SIGINT', onSigint)
    process.on('SIGTERM', onSigterm)
    process.on('exit', onExit)
    handlersInstalled = true
  }
}

export function unregisterTemp(path: string): void {
  temps.delete(path)
  if (temps.size === 0 && movedAside.size === 0 && handlersInstalled) {
    process.off('SIGINT', onSigint)
    process.off('SIGTERM', onSigterm)
    process.off('exit', onExit)
    handlersInstalled = false
  }
}

/** Remember that `old` holds what belongs at `dest` until forgetMovedAside(old). */
export function markMovedAside(old: string, dest: string): void {
  movedAside.set(old, dest)
  registerTemp(old)
}

export function forgetMovedAside(old: string): void {
  movedAside.delete(old)
  unregisterTemp(old)
}

/** Remove every temporary file/folder still registered (synchronous: safe in exit handlers). */
export function removeTempFilesSync(): void {
  for (const [old, dest] of movedAside) {
    try {
      if (!existsSync(dest) && existsSync(old)) {
        renameSync(old, dest)
        temps.delete(old)
      }
    } catch {
      // best effort
    }
  }
  movedAside.clear()
  for (const p of temps) {
    try {
      rmSync(p, {recursive: true, force: true})
    } catch {
      // best effort
    }
  }
  temps.clear()
}
