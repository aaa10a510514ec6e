/** Temporary folders for tests, removed after the run. */
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

/** A maker of temporary folders named `prefix...`; every folder it made goes after the run (a root `after` hook). */
export function tempDirs(prefix: string): () => string {
  const temps: string[] = []
  after(() => {
    for (const d of temps) rmSync(d, {recursive: true, force: true})
  })
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix))
    temps.push(d)
    return d
  }
}
