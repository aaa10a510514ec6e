import {expect} from 'chai'

import {parseCompare} from '../../src/bench/compare.js'
import {bytesMoved, indexBitsFor, memoryFigures, recommend} from '../../src/bench/metrics.js'

const ANCHOR_LINE = JSON.stringify({
  file: 'rn50/magnitude_pruning/0.5/x.smtx', m: 64, k: 256, n: 3136, nnz: 8192, sparsity: 0.5,
  spmm_f32_us: {sputnik: 13.73, cusparse: 24.93, cusparse_torch: 28.38, cublas_f32: 15.81, cublas_tf32: 9.02},
  spmm_f16_us: {sputnik: 16.32, cusparse: 25.47, cublas_f16: 6.34, nnz_padded: 8226},
  sddmm_f32_us: {sputnik: 200.22, cusparse: 76.42, cusparse_torch: 237.52, cublas_f32_full: 14.54},
})

describe('bench: --compare and metrics', () => {
  it('reads an anchors line per op and dtype, in ms', () => {
    const t = parseCompare(ANCHOR_LINE + '\n')
    expect(t.kind).to.equal('anchors')
    const f32 = t.lookup('rn50/magnitude_pruning/0.5/x.smtx', 'spmm', 'f32', 3136)!
    expect(f32.peers).to.deep.equal(['sputnik'])
    expect(f32.columns.sputnik).to.be.closeTo(0.01373, 1e-12)
    expect(f32.columns.ref_cublas_tf32).to.be.closeTo(0.00902, 1e-12)
    expect(t.lookup('rn50/magnitude_pruning/0.5/x.smtx', 'spmm', 'f16', 3136)!.columns.ref_cublas_f16).to.be.closeTo(0.00634, 1e-12)
    expect(t.lookup('rn50/magnitude_pruning/0.5/x.smtx', 'sddmm', 'f32', 3136)!.columns.ref_cublas_f32).to.be.closeTo(0.01454, 1e-12)
    expect(t.lookup('rn50/magnitude_pruning/0.5/x.smtx', 'sddmm', 'f16', 3136)).to.equal(undefined)
    expect(t.lookup('rn50/magnitude_pruning/0.5/x.smtx', 'spmm', 'f32', 25088)).to.equal(undefined)
  })

  it('reads the LLM anchors file (m, k, n, s per line) as the --suite llm cases llm/MxK/S', () => {
    const f32 = JSON.stringify({m: 4096, k: 4096, n: 64, s: 0.7, nnz: 5033165, sputnik_f32_us: 77.9, cublas_f32_us: 63.6, cusparse_torch_f32_us: 451.4, even_rows: false})
    const f16 = JSON.stringify({m: 4096, k: 4096, n: 64, s: 0.7, nnz: 5033200, sputnik_f16_us: 40.1, cublas_f16_us: 20.2, f16_relerr: 1e-4, floor_f16_us: 5.2, even_rows: true})
    const other = JSON.stringify({m: 11008, k: 4096, n: 64, s: 0.7, sputnik_f32_us: 214.6, cublas_f32_us: 139.6})
    const t = parseCompare([f32, f16, other].join('\n'))
    expect(t.kind).to.equal('anchors')
    const a = t.lookup('llm/4096x4096/0.7', 'spmm', 'f32', 64)!
    expect(a.peers).to.deep.equal(['sputnik'])
    expect(a.columns.sputnik).to.be.closeTo(0.0779, 1e-12)
    expect(a.columns.ref_cublas_f32).to.be.closeTo(0.0636, 1e-12)
    expect(a.columns.ref_cusparse_torch).to.be.closeTo(0.4514, 1e-12)
    const h = t.lookup('llm/4096x4096/0.7', 'spmm', 'f16', 64)!.columns
    expect(Object.keys(h).sort()).to.deep.equal(['ref_cublas_f16', 'sputnik'])
    expect(h.sputnik).to.be.closeTo(0.0401, 1e-12)
    expect(t.lookup('llm/11008x4096/0.7', 'spmm', 'f32', 64)!.columns.sputnik).to.be.closeTo(0.2146, 1e-12)
    expect(t.lookup('llm/4096x4096/0.7', 'spmm', 'f32', 16)).to.equal(undefined)
    expect(t.lookup('llm/4096x4096/0.9', 'spmm', 'f32', 64)).to.equal(undefined)
    expect(t.lookup('llm/4096x4096/0.7', 'sddmm', 'f32', 64)).to.equal(undefined)
    // a line with neither a file nor the LLM fields is still refused
    expect(() => parseCompare(JSON.stringify({m: 1, k: 1, n: 1, s: 0.5}))).to.throw(/each line needs "file" and "n"/)
  })

  it('matches files by the path tail they share, either side longer', () => {
    const t = parseCompare(ANCHOR_LINE)
    expect(t.lookup('../shared/dlmc/rn50/magnitude_pruning/0.5/x.smtx', 'spmm', 'f32', 3136)).to.not.equal(undefined)
    expect(t.lookup('/abs/dlmc/rn50/magnitude_pruning/0.5/x.smtx', 'spmm', 'f32', 3136)).to.not.equal(undefined)
    expect(t.lookup('x.smtx', 'spmm', 'f32', 3136)).to.not.equal(undefined)
    expect(t.lookup('rn50/magnitude_pruning/0.7/x.smtx', 'spmm', 'f32', 3136)).to.equal(undefined)
  })

  it('never matches a tail two files share', () => {
    const other = ANCHOR_LINE.replace('0.5/x.smtx', '0.7/x.smtx')
    const t = parseCompare(`${ANCHOR_LINE}\n${other}\n`)
    expect(t.lookup('x.smtx', 'spmm', 'f32', 3136)).to.equal(undefined)
    expect(t.lookup('dlmc/rn50/magnitude_pruning/0.7/x.smtx', 'spmm', 'f32', 3136)).to.not.equal(undefined)
  })

  it('rejects files that are not JSONL with file and n', () => {
    expect(() => parseCompare('{"a": 1}')).to.throw(/needs "file" and "n"/)
    expect(() => parseCompare('not json')).to.throw(/not a JSON line/)
    expect(() => parseCompare('\n\n')).to.throw(/holds no lines/)
  })

  it('counts the bytes that must move', () => {
    expect(bytesMoved({op: 'spmm', dtype: 'f32', m: 4, k: 8, n: 2, nnz: 10, indexBits: 32})).to.equal(10 * 8 + 20 + 8 * 2 * 4 + 4 * 2 * 4)
    expect(bytesMoved({op: 'spmm', dtype: 'f16', m: 4, k: 8, n: 2, nnz: 10, indexBits: 16})).to.equal(10 * 4 + 20 + 8 * 2 * 2 + 4 * 2 * 2)
    // SDDMM: indices + offsets + L (m x n) + R (k x n) + nnz outputs.
    expect(bytesMoved({op: 'sddmm', dtype: 'f32', m: 4, k: 8, n: 2, nnz: 10, indexBits: 32})).to.equal(40 + 20 + 32 + 64 + 40)
    expect(indexBitsFor('spmm', 'f16', 32768)).to.equal(16)
    expect(indexBitsFor('spmm', 'f16', 32769)).to.equal(32)
    expect(indexBitsFor('spmm', 'f32', 10)).to.equal(32)
    expect(indexBitsFor('sddmm', 'f16', 10)).to.equal(32)
  })

  it('memory: dense vs CSR in the case encoding', () => {
    const m = memoryFigures(100, 200, 2000, 'f32')
    expect(m.denseBytes).to.equal(80000)
    expect(m.csrBytes).to.equal(2000 * 8 + 404 + 400)
    const h = memoryFigures(100, 200, 2000, 'f16')
    expect(h.denseBytes).to.equal(40000)
    expect(h.csrBytes).to.equal(2000 * 4 + 404 + 400)
    expect(h.saving).to.be.closeTo(40000 / h.csrBytes, 1e-12)
  })

  it('recommends sparse or dense against the same precision, mentioning faster TF32', () => {
    expect(recommend(1, {cublas_f32: 3, cublas_tf32: 0.5}, 'cublas_f32')).to.deep.include({use: 'sparse', factor: 3, against: 'cublas_f32'})
    expect(recommend(1, {cublas_f32: 3, cublas_tf32: 0.5}, 'cublas_f32')!.note).to.match(/TF32.*2\.00x faster/)
    expect(recommend(4, {cublas_f16: 2}, 'cublas_f16')).to.deep.include({use: 'dense', factor: 2})
    expect(recommend(4, {}, 'cublas_f16')).to.equal(null)
  })
})
