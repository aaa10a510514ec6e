/**
 * The unstructured stream's encoder (native/common/unstructured_stream.cc, issue 24), pure C++:
 * its round-trip test (test/native/unstructured_stream_test.cc) built with the C++ compiler the
 * addon's build needs, and run. No GPU.
 */
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

describe('unstructured stream encoder (C++, host)', () => {
  it('decodes back to the matrix it encoded, and refuses stages over its capacity', function () {
    this.timeout(180000)
    const dir = mkdtempSync(join(tmpdir(), 'sparse-ust-'))
    try {
      const r = spawnSync('bash', ['scripts/test-unstructured-stream.sh', dir], {encoding: 'utf8'})
      expect(r.stdout, r.stderr).to.match(/unstructured stream: 0 failures/)
      expect(r.stdout).to.match(/^ok /m)
      expect(r.stdout, 'the timing program builds and its thread counts agree').to.match(/encoder timing program: builds agree/)
      expect(r.status, r.stderr).to.equal(0)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
