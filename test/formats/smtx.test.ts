import {readdirSync, readFileSync, statSync} from 'node:fs'
import {join, relative} from 'node:path'

import {expect} from 'chai'

import {parseSmtx, readCsrInput, writeSmtx} from '../../src/formats/index.js'
import type {CsrMatrix} from '../../src/types.js'
import {DLMC} from '../helpers/cli.js'
import {expectInputError, fixture, makeTmp} from './helpers.js'

const enc = (s: string) => new TextEncoder().encode(s)

function listSmtx(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...listSmtx(p))
    else if (name.endsWith('.smtx')) out.push(p)
  }
  return out.sort()
}

describe('formats/smtx', () => {
  const tmp = makeTmp()
  after(tmp.cleanup)

  it('parses the DLMC layout with trailing spaces', () => {
    const m = parseSmtx(enc('3, 4, 5\n0 2 2 5 \n0 3 0 1 2 \n'), 't.smtx')
    expect(m.rows).to.equal(3)
    expect(m.cols).to.equal(4)
    expect(Array.from(m.rowOffsets)).to.deep.equal([0, 2, 2, 5])
    expect(Array.from(m.columnIndices)).to.deep.equal([0, 3, 0, 1, 2])
    expect(m.values).to.equal(null)
  })

  it('handles nnz = 0 with or without a third line, and CRLF', () => {
    for (const text of ['4, 5, 0\n0 0 0 0 0 \n', '4, 5, 0\n0 0 0 0 0\n\n', '4, 5, 0\r\n0 0 0 0 0\r\n', '4, 5, 0\n0 0 0 0 0']) {
      const m = parseSmtx(enc(text), 'e.smtx')
      expect(m.rows).to.equal(4)
      expect(m.columnIndices.length).to.equal(0)
    }
  })

  it('reads the fixtures (a DLMC copy and the empty one)', async () => {
    const [d] = await readCsrInput(fixture('dlmc-rn50-0.98-initial_conv.smtx'))
    expect(d.shape).to.deep.equal([64, 147])
    expect(d.csr.rowOffsets[64]).to.equal(188)
    const [e] = await readCsrInput(fixture('empty.smtx'))
    expect(e.shape).to.deep.equal([4, 5])
    expect(e.csr.rowOffsets[4]).to.equal(0)
  })

  it('round trips through the writer', async () => {
    const csr: CsrMatrix = {rows: 3, cols: 7, rowOffsets: Int32Array.of(0, 3, 3, 4), columnIndices: Int32Array.of(0, 4, 6, 2), values: null, dtype: 'f32'}
    const p = join(tmp.dir, 'rt.smtx')
    await writeSmtx(csr, p)
    expect(readFileSync(p, 'utf8')).to.equal('3, 7, 4\n0 3 3 4\n0 4 6 2\n')
    const [back] = await readCsrInput(p)
    expect(Array.from(back.csr.columnIndices)).to.deep.equal([0, 4, 6, 2])
    const empty: CsrMatrix = {rows: 2, cols: 2, rowOffsets: Int32Array.of(0, 0, 0), columnIndices: new Int32Array(0), values: null, dtype: 'f32'}
    await writeSmtx(empty, join(tmp.dir, 'e.smtx'))
    const [e] = await readCsrInput(join(tmp.dir, 'e.smtx'))
    expect(e.csr.rows).to.equal(2)
  })

  it('rejects bad files with clear messages', () => {
    expectInputError(() => parseSmtx(enc(''), 'x'), /empty file/)
    expectInputError(() => parseSmtx(enc('3 4 5\n'), 'x'), /first line must be "nrows, ncols, nnz"/)
    expectInputError(() => parseSmtx(enc('3, 4, 5\n'), 'x'), /truncated: the row-offsets line is missing/)
    expectInputError(() => parseSmtx(enc('3, 4, 5\n0 2 2 5\n'), 'x'), /column-indices line is missing/)
    expectInputError(() => parseSmtx(enc('3, 20, 5\n0 2 2 5\n0 13 0 11\n'), 'x'), /has 4 numbers, expected 5/)
    expectInputError(() => parseSmtx(enc('3, 4, 5\n0 2 2 5\n0 3 0 1\n'), 'x'), /should hold 5 numbers/)
    expectInputError(() => parseSmtx(enc('3, 4, 5\n0 2 2 5\n0 3 0 1 2 3\n'), 'x'), /more than the 5 numbers/)
    expectInputError(() => parseSmtx(enc('3, 4, 5\n0 2 2 5\n0 3 0 x 2\n'), 'x'), /unexpected character "x"/)
    expectInputError(() => parseSmtx(enc('3, 4, 5\n0 2 2 5\n0 3 0 1 9\n'), 'x'), /out of range \[0, 4\)/)
    expectInputError(() => parseSmtx(enc('3, 4, 5\n0 2 2 5\n3 0 0 1 2\n'), 'x'), /not sorted/)
    expectInputError(() => parseSmtx(enc('3, 4, 2\n0 2 2 5\n0 1\n'), 'x'), /rowOffsets\[3\] must equal nnz/)
    // A header claiming a huge matrix is refused before allocating.
    expectInputError(() => parseSmtx(enc('2000000000, 4, 5\n0 1\n0 1 2 3 0\n'), 'x'), /row offsets \(line 2\) should hold 2000000001 numbers but only 14 bytes follow line 1/)
    expectInputError(() => parseSmtx(enc('1, 1, 1\n0 1\n0\nextra\n'), 'x'), /expected 3 lines/)
  })

  it('loads every DLMC matrix in ../shared/dlmc and matches its header', async function () {
    let files: string[]
    try {
      files = listSmtx(DLMC)
    } catch {
      console.log(`      (skipped: no DLMC subset at ${DLMC})`)
      this.skip()
    }
    expect(files.length).to.equal(112)
    for (const f of files) {
      const text = readFileSync(f)
      const head = text.subarray(0, text.indexOf(0x0a)).toString().split(',').map((x) => Number(x.trim()))
      const [m] = await readCsrInput(f)
      expect([m.csr.rows, m.csr.cols, m.csr.rowOffsets[m.csr.rows]], relative(DLMC, f)).to.deep.equal(head)
    }
  })
})
