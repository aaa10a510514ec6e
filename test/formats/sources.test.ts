import {copyFileSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {UsageError} from '../../src/errors.js'
import {
  detectFormat,
  isDenseFormat,
  isSparseFormat,
  openTensorSource,
  readCsrInput,
  setStdinForTesting,
  tensorNameFromPath,
  toFloat32,
} from '../../src/formats/index.js'
import {fixture, makeTmp} from './helpers.js'

async function expectUsage(p: Promise<unknown>, re: RegExp): Promise<void> {
  try {
    await p
  } catch (error) {
    expect(error, String(error)).to.be.instanceOf(UsageError)
    expect((error as Error).message).to.match(re)
    return
  }
  expect.fail('expected a UsageError')
}

describe('formats/sources', () => {
  const tmp = makeTmp()
  after(() => {
    setStdinForTesting(undefined)
    tmp.cleanup()
  })

  it('detects formats from the extension and, for .npz, the members', async () => {
    expect(await detectFormat(fixture('dense-f32.npy'))).to.equal('npy')
    expect(await detectFormat(fixture('multi.npz'))).to.equal('npz')
    expect(await detectFormat(fixture('scipy-csr.npz'))).to.equal('csr-npz')
    expect(await detectFormat(fixture('mixed.safetensors'))).to.equal('safetensors')
    expect(await detectFormat(fixture('empty.smtx'))).to.equal('smtx')
  })

  it('detects formats from the content when the name says nothing', async () => {
    const cases: [string, string][] = [
      ['dense-f32.npy', 'npy'],
      ['multi.npz', 'npz'],
      ['scipy-csr.npz', 'csr-npz'],
      ['tiny-mlp.safetensors', 'safetensors'],
      ['dlmc-rn50-0.98-initial_conv.smtx', 'smtx'],
    ]
    for (const [name, format] of cases) {
      const p = join(tmp.dir, `${name}.bin`)
      copyFileSync(fixture(name), p)
      expect(await detectFormat(p), name).to.equal(format)
    }
    const junk = join(tmp.dir, 'junk.bin')
    writeFileSync(junk, 'hello world')
    await expectUsage(detectFormat(junk), /cannot tell the format/)
  })

  it('a forced format wins; unknown names are a UsageError', async () => {
    expect(await detectFormat(fixture('dense-f32.npy'), 'npz')).to.equal('npz')
    expect(await detectFormat('whatever', 'csr')).to.equal('csr-npz')
    await expectUsage(detectFormat('x', 'parquet'), /unknown format 'parquet'/)
  })

  it('a directory with manifest.json is csr-dir; other directories and missing files are refused', async () => {
    const d = join(tmp.dir, 'd')
    mkdirSync(d)
    await expectUsage(detectFormat(d), /without manifest\.json/)
    writeFileSync(join(d, 'manifest.json'), '{"tensors": []}')
    expect(await detectFormat(d)).to.equal('csr-dir')
    await expectUsage(detectFormat(join(tmp.dir, 'missing.npy')), /no such file/)
  })

  it('stdin: sniffs .npy, CSR .npz and .smtx; names the tensor "stdin"', async () => {
    setStdinForTesting(readFileSync(fixture('dense-f32.npy')))
    expect(await detectFormat('-')).to.equal('npy')
    const src = await openTensorSource('-')
    expect(src.tensors[0]).to.deep.equal({name: 'stdin', shape: [7, 96], dtype: 'f32'})
    expect((await src.read('stdin')).data.length).to.equal(672)
    await src.close()
    setStdinForTesting(readFileSync(fixture('scipy-csr.npz')))
    expect(await detectFormat('-')).to.equal('csr-npz')
    const [m] = await readCsrInput('-')
    expect(m.name).to.equal('stdin')
    expect(m.csr.rowOffsets[33]).to.equal(323)
    setStdinForTesting(readFileSync(fixture('empty.smtx')))
    expect(await detectFormat('-')).to.equal('smtx')
    setStdinForTesting(new Uint8Array(0))
    try {
      await detectFormat('-')
      expect.fail('expected an error')
    } catch (error) {
      expect((error as Error).message).to.match(/stdin is empty/)
    }
  })

  it('dense readers refuse sparse inputs and vice versa, with a hint', async () => {
    await expectUsage(openTensorSource(fixture('scipy-csr.npz')), /sparse csr-npz input; this needs a dense tensor file/)
    await expectUsage(readCsrInput(fixture('dense-f32.npy')), /dense npy input; this needs a CSR input/)
  })

  it('helpers: format classes, tensor names, toFloat32', () => {
    expect(isDenseFormat('safetensors') && isSparseFormat('csr-dir') && !isDenseFormat('smtx')).to.equal(true)
    expect(tensorNameFromPath('/a/b/w.npy')).to.equal('w')
    expect(tensorNameFromPath('-')).to.equal('stdin')
    const f = Float32Array.of(1, 2)
    expect(toFloat32({name: 'x', shape: [2], dtype: 'f32', data: f})).to.equal(f) // a view, no copy
    expect(Array.from(toFloat32({name: 'x', shape: [2], dtype: 'f16', data: Uint16Array.of(0x3c00, 0xc100)}))).to.deep.equal([1, -2.5])
    expect(Array.from(toFloat32({name: 'x', shape: [1], dtype: 'bf16', data: Uint16Array.of(0x4049)}))).to.deep.equal([3.140625])
    expect(Array.from(toFloat32({name: 'x', shape: [1], dtype: 'f64', data: Float64Array.of(0.1)}))).to.deep.equal([Math.fround(0.1)])
  })
})
