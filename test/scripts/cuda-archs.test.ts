// native/scripts/cuda-archs.cjs: which GPU architectures the install compiles (issue 22).
import {expect} from 'chai'
import {readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {join} from 'node:path'

import {ROOT} from '../helpers/cli.js'

const require = createRequire(import.meta.url)
const archs = require(join(ROOT, 'native', 'scripts', 'cuda-archs.cjs')) as {
  choose(env: NodeJS.ProcessEnv, detect: () => number[]): {archs: number[]; why: string}
  gencode(archs: number[]): string[]
}

describe('CUDA architectures of the build (cuda-archs.cjs)', () => {
  it('no GPU detected (CI, the build machine of the H200 runs): the portable set, sm_90 included', () => {
    const c = archs.choose({}, () => [])
    expect(c.archs).to.deep.equal([80, 90])
    expect(archs.gencode(c.archs)).to.deep.equal(['-gencode', 'arch=compute_80,code=sm_80', '-gencode', 'arch=compute_90,code=sm_90', '-gencode', 'arch=compute_90,code=compute_90'])
  })

  it('a detected H200 (9.0) narrows the build to sm_90 and its PTX', () => {
    const c = archs.choose({}, () => [90])
    expect(archs.gencode(c.archs)).to.deep.equal(['-gencode', 'arch=compute_90,code=sm_90', '-gencode', 'arch=compute_90,code=compute_90'])
  })

  it('a detected GPU outside the portable set keeps the portable set (a build is never narrowed to lose sm_90)', () => {
    expect(archs.choose({}, () => [86]).archs).to.deep.equal([80, 90])
  })

  it('SPARSE_CUDA_ARCHS picks the architectures: lists, portable, native; bad values are refused', () => {
    expect(archs.choose({SPARSE_CUDA_ARCHS: '8.6, sm_90'}, () => []).archs).to.deep.equal([86, 90])
    expect(archs.choose({SPARSE_CUDA_ARCHS: '90'}, () => [80]).archs).to.deep.equal([90])
    expect(archs.choose({SPARSE_CUDA_ARCHS: 'portable'}, () => [90]).archs).to.deep.equal([80, 90])
    expect(archs.choose({SPARSE_CUDA_ARCHS: 'native'}, () => [89]).archs).to.deep.equal([89])
    expect(() => archs.choose({SPARSE_CUDA_ARCHS: 'native'}, () => [])).to.throw(/no GPU/)
    expect(() => archs.choose({SPARSE_CUDA_ARCHS: '61'}, () => [])).to.throw(/older than nvcc 13/)
    expect(() => archs.choose({SPARSE_CUDA_ARCHS: 'hopper'}, () => [])).to.throw(/not a compute capability/)
  })

  it('binding.gyp compiles each .cu through nvcc.cjs (flags from cuda-archs.cjs), and the install compiles in parallel', () => {
    const gyp = readFileSync(join(ROOT, 'binding.gyp'), 'utf8')
    expect(gyp).to.include('"node", "native/scripts/nvcc.cjs", "<(cuda_home)/bin/nvcc"')
    expect(gyp).to.not.match(/arch=compute_\d+/)
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    expect(pkg.scripts.install).to.match(/node-gyp rebuild (-j|--jobs) max/)
  })

  it('nvcc.cjs: files named *_sm90a.cu are built for sm_90a alone (with SPARSE_SM90A) when sm_90 is wanted, others for every architecture', () => {
    const nvcc = require(join(ROOT, 'native', 'scripts', 'nvcc.cjs')) as {flagsFor: (input: string, archs: number[]) => string[]}
    const wg = nvcc.flagsFor('native/cuda/spmm/spmm_24_engine_sm90a.cu', [80, 90])
    expect(wg.join(' ')).to.include('-gencode arch=compute_90a,code=sm_90a -DSPARSE_SM90A=1')
    expect(wg.join(' ')).to.not.include('compute_80')
    const without = nvcc.flagsFor('native/cuda/spmm/spmm_24_engine_sm90a.cu', [80]).join(' ')
    expect(without).to.include('arch=compute_80,code=sm_80')
    expect(without).to.not.include('SPARSE_SM90A')
    const plain = nvcc.flagsFor('native/cuda/spmm/spmm_24.cu', [80, 90]).join(' ')
    expect(plain).to.include('arch=compute_80,code=sm_80')
    expect(plain).to.include('arch=compute_90,code=sm_90')
    expect(plain).to.not.include('90a')
  })

  it("nvcc.cjs: the addon's sources are compiled without the streaming engine's trace stamps (SPARSE_ENGINE_NO_TRACE), the workbench's with them", () => {
    const nvcc = require(join(ROOT, 'native', 'scripts', 'nvcc.cjs')) as {flagsFor: (input: string, archs: number[]) => string[]}
    for (const [input, archs] of [['native/cuda/spmm/spmm_24_engine_sm90a.cu', [80, 90]], ['native/cuda/spmm/spmm_24_engine_sm90a.cu', [80]], ['native/cuda/spmm/spmm_24.cu', [90]]] as const)
      expect(nvcc.flagsFor(input, [...archs])).to.include('-DSPARSE_ENGINE_NO_TRACE')
    // The workbench's `trace` and `stages` modes read the stamps: its build must not define it.
    expect(readFileSync(join(ROOT, 'scripts', 'gpu', 'probe', 'engine_build.sh'), 'utf8')).to.not.include('NO_TRACE')
    // And the header reads the macro the addon defines.
    expect(readFileSync(join(ROOT, 'native', 'cuda', 'spmm', 'stream_engine.cuh'), 'utf8')).to.match(/#if defined\(SPARSE_ENGINE_NO_TRACE\)\nconstexpr bool kNoTrace = true;/)
  })
})
