/** What the bench tests share: temporary folders removed after the run, and a case that ran. */
import {expect} from 'chai'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import type {BenchCaseResult} from '../../src/bench/types.js'

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

/** The case, asserting that it ran (status 'ok'; the case itself in the message otherwise). */
export function ok(c: unknown): BenchCaseResult {
  expect((c as BenchCaseResult).status, JSON.stringify(c)).to.equal('ok')
  return c as BenchCaseResult
}
