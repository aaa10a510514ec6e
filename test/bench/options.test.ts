import {expect} from 'chai'

import {parseIntList, parseSparsityList} from '../../src/bench/options.js'
import {UsageError} from '../../src/errors.js'
import {parseDecimal} from '../../src/numbers.js'

function refused(fn: () => unknown): UsageError {
  try {
    fn()
  } catch (error) {
    expect(error).to.be.instanceOf(UsageError)
    expect((error as UsageError).message).to.not.include('\n')
    return error as UsageError
  }
  throw new Error('expected a UsageError')
}

describe('bench: list options', () => {
  describe('parseSparsityList (--llm-sparsity, --attention-sparsity)', () => {
    it('reads plain decimal numbers in [0, 1), as prune -s does (1e-1, .5, +0.25, -0)', () => {
      expect(parseSparsityList('--x', '0.5,0.9')).to.deep.equal([0.5, 0.9])
      expect(parseSparsityList('--x', ' 0.5 , 0.95 ')).to.deep.equal([0.5, 0.95])
      expect(parseSparsityList('--x', '1e-1,.5,+0.25,0')).to.deep.equal([0.1, 0.5, 0.25, 0])
      expect(Object.is(parseSparsityList('--x', '-0')[0], 0)).to.equal(true)
    })

    it('refuses what Number() would take but -s refuses: hexadecimal, binary, octal, Infinity, NaN', () => {
      for (const bad of ['0x1', '0x0', '0b0', '0o0', '0b1', 'Infinity', '-Infinity', 'NaN', '0.5f']) {
        // The parser -s uses refuses each of them too (consistency).
        expect(parseDecimal(bad), bad).to.be.NaN
        const e = refused(() => parseSparsityList('--llm-sparsity', `0.5,${bad}`))
        expect(e.message, bad).to.equal(`--llm-sparsity: expected sparsities in [0, 1) (plain decimal numbers), got ${JSON.stringify(bad)}`)
      }
    })

    it('refuses values outside [0, 1): 1, 1.5, 1e0, -0.1', () => {
      for (const bad of ['1', '1.0', '1.5', '1e0', '-0.1', '-1e-9']) {
        expect(refused(() => parseSparsityList('--attention-sparsity', bad)).message, bad).to.include(`got ${JSON.stringify(bad)}`)
      }
    })

    it("refuses an empty list ('', ' ', ',') and an empty item ('0.5,', ',0.5', '0.5,,0.9')", () => {
      for (const bad of ['', ' ', ',', ' , ']) expect(refused(() => parseSparsityList('--x', bad)).message, JSON.stringify(bad)).to.match(/expected a comma-separated list/)
      for (const bad of ['0.5,', ',0.5', '0.5,,0.9', '0.5, ']) expect(refused(() => parseSparsityList('--x', bad)).message, JSON.stringify(bad)).to.match(/an empty item/)
    })
  })

  it('parseIntList (--n, --batch) refuses an empty item too', () => {
    expect(parseIntList('--n', '16,256')).to.deep.equal([16, 256])
    expect(refused(() => parseIntList('--n', '16,')).message).to.match(/--n: an empty item in "16,"/)
    expect(refused(() => parseIntList('--n', '0x10')).message).to.match(/expected integers >= 1/)
  })
})
