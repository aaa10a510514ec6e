/** What the bench tests share: temporary folders removed after the run, and a case that ran. */
import {expect} from 'chai'

import type {BenchCaseResult} from '../../src/bench/types.js'

export {tempDirs} from '../helpers/temp.js'

/** The case, asserting that it ran (status 'ok'; the case itself in the message otherwise). */
export function ok(c: unknown): BenchCaseResult {
  expect((c as BenchCaseResult).status, JSON.stringify(c)).to.equal('ok')
  return c as BenchCaseResult
}
