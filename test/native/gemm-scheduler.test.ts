/**
 * The Hopper GEMM engine's work schedule (native/cuda/gemm/gemm_engine.cuh: the raster of
 * tiles and the stream-K cut of the last waves), host logic checked by the workbench's
 * `selftest` without a GPU: every (tile, K stage) done exactly once, partial pieces ordered,
 * no wait cycle; and for the 2:4 variants, the staged tiles read where the consumers read them
 * (stage, strip, lane) and placed where the epilogue stores them decode back to the matrix; for
 * the unstructured ones, each tile decode (per register, and the two that read whole tiles with
 * one aligned 16-byte load a lane) emulated at the consumers' addresses gives the matrix.
 * Needs nvcc (the workbench is CUDA source); skipped without one.
 */
import {spawnSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {tempDirs} from '../helpers/temp.js'

function findNvcc(): string | undefined {
  const candidates = [process.env.NVCC, process.env.CUDA_HOME && join(process.env.CUDA_HOME, 'bin', 'nvcc'), '/usr/local/cuda/bin/nvcc']
  for (const c of candidates) if (c && existsSync(c)) return c
  const which = spawnSync('bash', ['-c', 'command -v nvcc'], {encoding: 'utf8'})
  return which.status === 0 ? which.stdout.trim() : undefined
}

/** nvcc for a test that builds the workbench (a long limit), or the test skipped without one. */
function nvccOrSkip(ctx: Mocha.Context): string {
  const nvcc = findNvcc()
  if (!nvcc) ctx.skip()
  ctx.timeout(600000)
  return nvcc as string
}

describe('GEMM engine schedule (host, through the workbench)', () => {
  const tmp = tempDirs('sparse-gemm-')

  // The whole workbench (dense, 2:4 and unstructured tiles; since v63 the unstructured ones on the
  // unrolled loop, v62's switch SPARSE_GEMM_UN_UNROLL2 folded in).
  it("covers every tile's K stages once, in an order without wait cycles", function () {
    const nvcc = nvccOrSkip(this)
    const dir = tmp()
    const build = spawnSync('bash', ['scripts/gpu/probe/gemm_build.sh', dir], {encoding: 'utf8', env: {...process.env, NVCC: nvcc}})
    expect(build.status, build.stdout + build.stderr).to.equal(0)
    const r = spawnSync(join(dir, 'gemm_probe'), ['selftest'], {encoding: 'utf8'})
    expect(r.stdout, r.stderr).to.match(/selftest: [1-9]\d* cases, 0 failures/)
    expect(r.status).to.equal(0)
  })

  // The 2:4 workbench alone (SP24=1) builds and its selftest passes, the `_ss` runs
  // (StageSp24Runs) checked against the compressed rows and metadata they are built from;
  // GEMM_DEFS reaches nvcc (a -D the build cannot take fails it; the engine has no A/B switch
  // open since v63). The maps' L2 promotion is read at run time. Times need the GPU
  // (gemm-engine.md "v61", "v63").
  it('builds the 2:4 workbench, fails on a bad -D through GEMM_DEFS, reads GEMM_L2_PROMO_*', function () {
    const nvcc = nvccOrSkip(this)
    const dir = tmp()
    const env = {...process.env, NVCC: nvcc, SP24: '1'}
    const build = spawnSync('bash', ['scripts/gpu/probe/gemm_build.sh', dir], {encoding: 'utf8', env})
    expect(build.status, build.stdout + build.stderr).to.equal(0)
    const r = spawnSync(join(dir, 'gemm_probe'), ['list'], {encoding: 'utf8'})
    expect(r.stdout, r.stderr).to.match(/f16_ss1_tma4_n256_s5\n/)
    expect(r.stdout, 'v62: the clustered 128 x 256 tile removed').to.not.match(/f16_ss1_tma4_mc_n256_s5\n/)
    expect(r.stdout, 'v63: the 64-column cluster tiles removed').to.not.match(/_mc_n64_s/)
    expect(r.stdout).to.match(/^f16_sp_tma_n64_s12$/m)
    const self = spawnSync(join(dir, 'gemm_probe'), ['selftest'], {encoding: 'utf8'})
    expect(self.stdout, self.stderr).to.match(/selftest: [1-9]\d* cases, 0 failures/)
    // The maps' L2 promotion (GEMM_L2_PROMO_A / _B): a value it knows is taken and said, any
    // other refused before any work (exit 2).
    const promo = spawnSync(join(dir, 'gemm_probe'), ['list'], {encoding: 'utf8', env: {...process.env, GEMM_L2_PROMO_A: '0', GEMM_L2_PROMO_B: '128'}})
    expect(promo.status).to.equal(0)
    expect(promo.stdout).to.match(/^GEMM_L2_PROMO_A: 0 bytes\nGEMM_L2_PROMO_B: 128 bytes\n/)
    const badPromo = spawnSync(join(dir, 'gemm_probe'), ['list'], {encoding: 'utf8', env: {...process.env, GEMM_L2_PROMO_B: '512'}})
    expect(badPromo.status).to.equal(2)
    expect(badPromo.stdout).to.equal('GEMM_L2_PROMO_B=512: 0, 64, 128 or 256\n')
    // (kMTile redefined: the engine's header no longer compiles, and the build says so)
    const bad = spawnSync('bash', ['scripts/gpu/probe/gemm_build.sh', join(dir, 'bad')], {encoding: 'utf8', env: {...env, GEMM_DEFS: '-DkMTile=1'}})
    expect(bad.status).to.not.equal(0)
    expect(bad.stdout + bad.stderr).to.match(/error/)
  })
})
