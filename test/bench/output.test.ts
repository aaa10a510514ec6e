import {expect} from 'chai'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {benchAndWrite} from '../../src/bench/index.js'
import {renderCases, renderHeader, renderSummary, toCsv, toJsonl} from '../../src/bench/output.js'
import {plotData, plotSpec, renderPlotSvg, svgToPng} from '../../src/bench/plot.js'
import {runBench} from '../../src/bench/run.js'
import {fakeNative} from './fake-native.js'

const SMTX = 'fixtures/dlmc-rn50-0.98-initial_conv.smtx'


const temps: string[] = []
/** A fresh temporary folder, removed after the tests of this file. */
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'bench-plot-'))
  temps.push(d)
  return d
}
after(() => {
  for (const d of temps) rmSync(d, {recursive: true, force: true})
})

describe('bench: writers, tables and the plot', () => {
  it('CSV: a header and one row per case, baselines as columns', async () => {
    const r = await runBench({inputs: [SMTX], ns: [8, 64], native: fakeNative({unavailable: ['cublas_tf32']})})
    const lines = toCsv(r).trimEnd().split('\n')
    expect(lines).to.have.length(3)
    const head = lines[0].split(',')
    expect(head.slice(0, 4)).to.deep.equal(['file', 'op', 'dtype', 'device'])
    expect(head).to.include.members(['ms_median', 'cublas_f32_ms', 'speedup_cublas_f32', 'cusparse_ms', 'speedup_cusparse', 'memory_saving', 'recommendation', 'l2_mode'])
    expect(head).to.not.include('cublas_tf32_ms')
    const row = lines[1].split(',')
    expect(row.length).to.equal(head.length)
    const get = (name: string) => row[head.indexOf(name)]
    expect(get('file')).to.equal(SMTX)
    expect(get('n')).to.equal('8')
    expect(Number(get('speedup_cusparse'))).to.be.closeTo(2, 1e-9)
    expect(get('recommendation')).to.equal('sparse')
  })

  it('JSONL: one parseable case per line', async () => {
    const r = await runBench({inputs: [SMTX], ns: [8, 64], ops: ['spmm', 'sddmm'], native: fakeNative()})
    const lines = toJsonl(r).trimEnd().split('\n')
    expect(lines).to.have.length(4)
    const objs = lines.map((l) => JSON.parse(l))
    expect(objs.map((o) => `${o.op} ${o.n}`)).to.deep.equal(['spmm 8', 'spmm 64', 'sddmm 8', 'sddmm 64'])
    expect(objs[0]).to.include.keys(['file', 'op', 'dtype', 'm', 'k', 'n', 'nnz', 'sparsity', 'ms', 'baselines', 'speedup', 'tflops', 'bytes', 'fractionOfBandwidth', 'memorySaving', 'recommendation', 'l2Mode', 'deviceName'])
  })

  it('tables mark where dense is faster and summarise per sparsity level', async () => {
    // At 0.98 sparsity the fake harness has sparse winning everywhere.
    const r = await runBench({inputs: [SMTX], ns: [8], native: fakeNative()})
    const table = renderCases(r)
    expect(table).to.match(/vs cublas_f32/)
    expect(table).to.match(/sparse \d+\.\d\dx/)
    const summary = renderSummary(r)
    expect(summary).to.match(/Per sparsity level/)
    expect(summary).to.match(/0\.98/)
    expect(renderHeader(r)).to.match(/GPU: Fake GPU \(132 SMs/)
    // Make dense win by reporting our kernel 1000x slower.
    const slow = fakeNative()
    const spmm = slow.benchSpmm
    slow.benchSpmm = async (a) => {
      const res = await spmm(a)
      const ours = res.impls.find((i) => i.name === 'ours')!
      ours.samples = ours.samples!.map((v) => v * 1e4)
      return res
    }
    const r2 = await runBench({inputs: [SMTX], ns: [8], native: slow})
    expect(renderCases(r2)).to.match(/DENSE \d+\.\d\dx/)
    expect(renderCases(r2)).to.match(/\d\.\d\dx\*/)
    expect(r2.summary.levels[0].denseFaster).to.equal(1)
  })

  it('plot: geometric means per level and every case, one series per baseline, break-even at 1', async () => {
    const r = await runBench({inputs: [SMTX], ns: [8, 64], native: fakeNative()})
    const data = plotData(r)
    const levels = data.filter((p) => p.kind === 'level')
    expect([...new Set(levels.map((p) => p.baseline))].sort()).to.deep.equal(['cublas_f32', 'cublas_tf32', 'cusparse'])
    const cs = levels.find((p) => p.baseline === 'cusparse')!
    expect(cs.speedup).to.be.closeTo(2, 1e-9)
    expect(cs.sparsity).to.equal(0.98)
    const spec = JSON.stringify(plotSpec(r))
    expect(spec).to.match(/"datum":1/)
    const svg = await renderPlotSvg(r)
    expect(svg.startsWith('<svg')).to.equal(true)
    expect(svg.length).to.be.greaterThan(5000)
    expect(svg).to.match(/cusparse/)
    expect(svg).to.match(/sparsity/)
    const png = svgToPng(svg, 1)
    expect(Array.from(png.subarray(0, 8))).to.deep.equal([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
    expect(png.length).to.be.greaterThan(5000)
  })

  it('writes .svg and .png plots', async () => {
    const dir = tempDir()
    const r = await benchAndWrite({inputs: [SMTX], ns: [8], native: fakeNative(), plot: join(dir, 'p.png'), csv: join(dir, 'c.csv')})
    expect(r.outputs.map((o) => o.path)).to.deep.equal([join(dir, 'c.csv'), join(dir, 'p.png')])
    expect(readFileSync(join(dir, 'p.png')).subarray(1, 4).toString()).to.equal('PNG')
    await benchAndWrite({inputs: [SMTX], ns: [8], native: fakeNative(), plot: join(dir, 'p.svg')})
    expect(readFileSync(join(dir, 'p.svg'), 'utf8')).to.match(/^<svg/)
  })
})
