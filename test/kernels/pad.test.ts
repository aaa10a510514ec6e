// The 2:4 streaming engine with B padded to its box first (SPARSE_S24E_PAD, v43, 'auto' the
// default since v44; common/stream_plan.h's Stream24PadColumns): a small kernel copies B (K x N)
// into the prepared operand's K x box buffer, columns past N zero, and the engine streams that as
// at N = box, storing only C's N columns; the exact re-sums of non-finite sums read the caller's
// B. The mode is read once per process, so this file runs kernels.test.ts's streaming-engine
// tests again in a child process under the modes other than the default ('auto', which
// kernels.test.ts runs itself): 'all' (every N 9-63 narrower than its box padded) and 'off' (B's
// rows read as they are at every N, as before v44): every forced variant on awkward shapes at N
// 1-64 (K ragged, 64 K stages that refill the ring, split-K clusters of 2), twice per operand,
// and Inf / NaN in one row of B at N = 40, 63. PDL's interplay (the copy kernel, then the engine
// waiting on it): pdl.test.ts. GPU only (compute capability 9.0: the streaming engine is sm_90a code).
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {resolve} from 'node:path'

import {cudaInfo} from '../../src/kernels/index.js'

describe('the 2:4 streaming engine with B padded to its box or not (SPARSE_S24E_PAD, GPU)', function () {
  this.timeout(900_000)

  before(function () {
    if (cudaInfo().computeCapability !== '9.0') this.skip()
  })

  for (const pad of ['all', 'off']) {
    it(`SPARSE_S24E_PAD=${pad}: kernels.test.ts's streaming-engine tests pass (a child process)`, () => {
      const mocha = resolve('node_modules/mocha/bin/mocha.js')
      const args = [mocha, '--no-config', '-n', 'import=tsx', '-n', 'no-warnings', '--timeout', '600000', '--reporter', 'dot']
      const r = spawnSync(process.execPath, [...args, resolve('test/kernels/kernels.test.ts'), '--grep', "SpMM (f16|bf16), 2:4: the streaming engine's"], {
        env: {...process.env, SPARSE_S24E_PAD: pad, NO_COLOR: '1'},
        encoding: 'utf8',
        timeout: 840_000,
      })
      const tail = `${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`
      expect(r.status, tail).to.equal(0)
      // f16 and bf16: the variants' test and the split-K clusters' test.
      expect(r.stdout, tail).to.match(/\b4 passing\b/)
      expect(r.stdout, tail).to.not.match(/\bfailing\b|\bpending\b/)
    })
  }
})
