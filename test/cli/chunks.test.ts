/**
 * TextChunks (src/cli/chunks.ts): a report gathered in UTF-8 pieces is exactly the text
 * pushed, with what mark()/insertAt() put in front, whatever the sizes and characters.
 */
import {PassThrough} from 'node:stream'

import {expect} from 'chai'

import {TextChunks, writeChunks} from '../../src/cli/chunks.js'
import {createRng} from '../../src/sparse/random.js'

describe('TextChunks: a long report in pieces', () => {
  it('is the concatenation of what was pushed and inserted, across piece and buffer boundaries', () => {
    const rng = createRng(3)
    const alphabet = ['a', 'é', '€', '😀', '\n', 'x'.repeat(1000), 'y'.repeat(20_000)]
    const out = new TextChunks()
    const expected: string[] = []
    const heads: Array<[number, number, string]> = []
    for (let file = 0; file < 5; file++) {
      const at = expected.length
      const mark = out.mark()
      for (let i = 0; i < 600; i++) {
        const s = alphabet[rng.nextUint32() % alphabet.length] + String(i)
        out.push(s)
        expected.push(s)
      }
      const head = `file ${file} €\n`
      heads.push([mark, at, head])
      out.insertAt(mark, head)
    }
    // One push longer than a piece goes in whole.
    const big = 'z€'.repeat(400_000)
    out.push(big)
    expected.push(big)
    for (const [, at, head] of [...heads].reverse()) expected.splice(at, 0, head)
    const pieces = out.done()
    expect(pieces.length).to.be.greaterThan(5)
    expect(Buffer.concat(pieces).toString('utf8')).to.equal(expected.join(''))
    // Every piece but a whole long push stays within a megabyte.
    expect(pieces.filter((p) => p.length > 1 << 20)).to.have.length(1)
  })

  it('an empty report is no pieces; writeChunks writes them in order', async () => {
    expect(new TextChunks().done()).to.deep.equal([])
    const out = new TextChunks()
    out.push('b')
    out.insertAt(0, 'a')
    out.push('c')
    const sink = new PassThrough()
    const got: Buffer[] = []
    sink.on('data', (d: Buffer) => got.push(d))
    await writeChunks(sink, out.done())
    expect(Buffer.concat(got).toString()).to.equal('abc')
  })
})
