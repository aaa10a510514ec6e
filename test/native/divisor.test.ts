/**
 * The division by multiply-high of the streaming engine's start (native/common/divisor.h: Args'
 * divisors, v51), pure C++: test/native/divisor_test.cc built with the C++ compiler the addon's
 * build needs, and run. No GPU.
 */
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

describe('division by multiply-high (C++, host)', () => {
  it('gives n / d for every n below 2^31 it is checked on, and refuses divisors out of range', function () {
    this.timeout(180000)
    const dir = mkdtempSync(join(tmpdir(), 'sparse-div-'))
    try {
      const exe = join(dir, 'divisor_test')
      const build = spawnSync('g++', ['-std=c++17', '-O2', '-Wall', '-Wextra', '-Werror', '-Inative', 'test/native/divisor_test.cc', '-o', exe], {encoding: 'utf8'})
      expect(build.status, build.stdout + build.stderr).to.equal(0)
      const r = spawnSync(exe, [], {encoding: 'utf8'})
      expect(r.stdout, r.stderr).to.match(/^divisor: [1-9]\d{6,} checks, 0 failures$/m)
      expect(r.status).to.equal(0)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
