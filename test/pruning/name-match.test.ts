/**
 * Linear-time name matching (issue 21): the glob and regex matchers agree with JavaScript's
 * RegExp wherever RegExp finishes, and finish at once where RegExp backtracks for minutes.
 */
import {expect} from 'chai'
import fc from 'fast-check'

import {UsageError} from '../../src/errors.js'
import {globMatcher, regexMatcher} from '../../src/pruning/name-match.js'

/** The old glob: a RegExp (the reference for the glob matcher). */
function globRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`)
}

const PATTERNS = [
  'mlp',
  'mlp.*proj',
  '^model\\.layers\\.\\d+\\.mlp\\.(up|down|gate)_proj\\.weight$',
  '(a+)+$',
  '(a|aa)*b',
  'a{2,3}',
  'a{2}b{0,}c{1,2}?',
  '[^a-c]x',
  '[\\d_]+',
  '[\\W]',
  '\\bfoo\\b',
  '\\Bo',
  '^$',
  '',
  '(?:ab|cd)+$',
  '(?<g>x)y',
  'a.c',
  '[]',
  '[^]',
  'a|',
  '\\x41\\u0042\\t',
  'x{',
  'a{,2}',
  '\\.',
  '[a-]',
  '[-a]',
  '(a*)*b',
  '(|a)+c',
  '\\s\\S',
  '.',
]
const NAMES = ['', 'a', 'aa', 'aaab', 'ab', 'abc', 'mlp', 'x.mlp.up_proj', 'model.layers.12.mlp.up_proj.weight', 'model.layers.x.mlp.up_proj.weight', 'foo bar', 'foobar', 'A B\t', 'a\nc', 'a c', 'cd', 'abcd', 'x{', 'a{,2}', 'xy', 'dx', '_9', 'é', '\u2028', 'aab', 'c', 'b']

describe('pruning/name-match: linear-time names', () => {
  it('regexMatcher agrees with RegExp on a corpus of patterns and names', () => {
    for (const p of PATTERNS) {
      const m = regexMatcher(p, 'test')
      const r = new RegExp(p)
      for (const n of NAMES) expect(m.test(n), `/${p}/ on ${JSON.stringify(n)}`).to.equal(r.test(n))
    }
  })

  it('regexMatcher agrees with RegExp on generated patterns and names (fast-check)', () => {
    const atom = fc.constantFrom('a', 'b', '.', '\\d', '[ab]', '[^a]', '\\w', '^', '$', '\\b', 'x')
    const quant = fc.constantFrom('', '', '*', '+', '?', '{1,2}', '{2}', '*?')
    const piece = fc.tuple(atom, quant).map(([a, q]) => (a === '^' || a === '$' || a === '\\b' ? a : a + q))
    const seq = fc.array(piece, {maxLength: 4}).map((xs) => xs.join(''))
    const pattern = fc.oneof(seq, fc.tuple(seq, seq).map(([a, b]) => `(${a}|${b})`), fc.tuple(seq, quant).map(([a, q]) => `(${a})${q || '*'}`))
    const name = fc.stringMatching(/^[abx1 _.]{0,8}$/)
    fc.assert(
      fc.property(pattern, fc.array(name, {maxLength: 8}), (p, names) => {
        const r = new RegExp(p)
        const m = regexMatcher(p, 'test')
        for (const n of names) if (m.test(n) !== r.test(n)) return false
        return true
      }),
      {numRuns: 3000, seed: 21},
    )
  })

  it('globMatcher agrees with the old glob RegExp (fast-check)', () => {
    const glob = fc.stringMatching(/^[ab*?.]{0,7}$/)
    const name = fc.stringMatching(/^[ab.]{0,9}$/)
    fc.assert(
      fc.property(glob, fc.array(name, {maxLength: 10}), (g, names) => {
        const r = globRegExp(g)
        const m = globMatcher(g)
        return names.every((n) => m.test(n) === r.test(n))
      }),
      {numRuns: 5000, seed: 21},
    )
  })

  it('backtracking patterns on long names finish at once (each was > 60 s with RegExp)', () => {
    const cases: [() => boolean, boolean][] = [
      [() => regexMatcher('(a+)+$', 'x').test('a'.repeat(30) + 'b'), false],
      [() => regexMatcher('(a+)+$', 'x').test('b' + 'a'.repeat(30)), true],
      [() => regexMatcher('^(a+)+$', 'x').test('a'.repeat(5000) + 'b'), false],
      [() => regexMatcher('mlp.*proj', 'x').test('mlp'.repeat(100_000)), false],
      [() => globMatcher('*mlp*proj*').test('mlp'.repeat(300_000)), false],
      [() => globMatcher('*a*a*a*a*a*b').test('a'.repeat(300_000)), false],
    ]
    for (const [run, expected] of cases) {
      const t0 = performance.now()
      expect(run()).to.equal(expected)
      expect(performance.now() - t0).to.be.below(1000)
    }
  })

  it('backreferences and lookaround are refused with one line; invalid syntax keeps RegExp message', () => {
    for (const [p, why] of [
      ['(a)\\1', /backreferences/],
      ['(?<n>a)\\k<n>', /backreferences/],
      ['a(?=b)', /lookaround/],
      ['(?<!a)b', /lookaround/],
      ['(a', /is not valid: Invalid regular expression/],
      ['a{2000}', /counted repetition above 1000/],
      ['(a{1000}){1000}', /more than 4096 steps/],
      ['x'.repeat(2000), /at most 1024/],
    ] as [string, RegExp][]) {
      try {
        regexMatcher(p, '--include')
        expect.fail(`no error for ${p}`)
      } catch (error) {
        expect(error).to.be.instanceOf(UsageError)
        expect((error as Error).message).to.match(why).and.match(/^--include: /)
        expect((error as Error).message).to.not.include('\n')
      }
    }
  })
})
