import {spawn} from 'node:child_process'
import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {UsageError} from '../../src/errors.js'
import {CsrDirectoryWriter, readCsrInput, readManifest, safeFileName, writeAtomically} from '../../src/formats/index.js'
import type {NamedCsr} from '../../src/types.js'
import {ROOT} from '../helpers/cli.js'
import {makeTmp} from './helpers.js'

async function expectUsage(p: Promise<unknown>, code: string, re: RegExp): Promise<void> {
  try {
    await p
  } catch (error) {
    expect(error, String(error)).to.be.instanceOf(UsageError)
    expect((error as UsageError).code).to.equal(code)
    expect((error as UsageError).exitCode).to.equal(2)
    expect((error as Error).message).to.match(re)
    return
  }
  expect.fail('expected a UsageError')
}

const text = (s: string) => async (sink: {write(c: Uint8Array): Promise<void>}) => sink.write(new TextEncoder().encode(s))

function small(name: string, shape = [2, 3]): NamedCsr {
  return {name, shape, csr: {rows: 2, cols: 3, rowOffsets: Int32Array.of(0, 1, 2), columnIndices: Int32Array.of(2, 0), values: Float32Array.of(5, 6), dtype: 'f32'}}
}

describe('formats/output', () => {
  const tmp = makeTmp()
  after(tmp.cleanup)
  const clean = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.tmp'))

  describe('writeAtomically', () => {
    it('writes through a temp file and renames', async () => {
      const p = join(tmp.dir, 'a.txt')
      const w = await writeAtomically(p, {}, text('hello'))
      expect(w).to.deep.equal({path: p, bytes: 5})
      expect(readFileSync(p, 'utf8')).to.equal('hello')
      expect(clean(tmp.dir)).to.deep.equal([])
    })

    it('refuses an existing file without force; replaces it with force', async () => {
      const p = join(tmp.dir, 'b.txt')
      writeFileSync(p, 'old')
      await expectUsage(writeAtomically(p, {}, text('new')), 'output-exists', /refusing to overwrite .*b\.txt/)
      expect(readFileSync(p, 'utf8')).to.equal('old')
      await writeAtomically(p, {force: true}, text('new'))
      expect(readFileSync(p, 'utf8')).to.equal('new')
    })

    it('refuses writing onto an input without force', async () => {
      const p = join(tmp.dir, 'in.txt')
      writeFileSync(p, 'input')
      await expectUsage(writeAtomically(p, {inputs: [p]}, text('x')), 'overwrite-input', /refusing to overwrite the input/)
      await writeAtomically(p, {inputs: [p], force: true}, text('x'))
      expect(readFileSync(p, 'utf8')).to.equal('x')
    })

    it('a missing folder, a directory as target, an unwritable folder', async () => {
      await expectUsage(writeAtomically(join(tmp.dir, 'nope', 'x.npz'), {}, text('x')), 'output-dir-missing', /does not exist/)
      mkdirSync(join(tmp.dir, 'adir'), {recursive: true})
      await expectUsage(writeAtomically(join(tmp.dir, 'adir'), {force: true}, text('x')), 'output-is-dir', /is a directory/)
      if (process.platform === 'linux' && existsSync('/sys/kernel')) {
        // /sys refuses new files even for root.
        await expectUsage(writeAtomically('/sys/kernel/sparse-test.npz', {}, text('x')), 'unwritable', /permission denied/)
      }
    })

    it('an error in the writer leaves neither the file nor a temp file', async () => {
      const p = join(tmp.dir, 'c.txt')
      try {
        await writeAtomically(p, {}, async (sink) => {
          await sink.write(new Uint8Array(1000))
          throw new Error('boom')
        })
        expect.fail('expected boom')
      } catch (error) {
        expect((error as Error).message).to.equal('boom')
      }
      expect(existsSync(p)).to.equal(false)
      expect(clean(tmp.dir)).to.deep.equal([])
    })

    for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
      it(`${signal} during a write removes the temp file and exits ${code}`, async () => {
        const dir = join(tmp.dir, `sig-${signal}`)
        mkdirSync(dir)
        const script = join(dir, 'child.mts')
        writeFileSync(
          script,
          `import {writeAtomically} from ${JSON.stringify(join(ROOT, 'src', 'formats', 'index.ts'))}
await writeAtomically(${JSON.stringify(join(dir, 'out.npz'))}, {}, async (sink) => {
  await sink.write(new Uint8Array(4096))
  process.stdout.write('ready\\n')
  await new Promise((r) => setTimeout(r, 60_000))
})`,
        )
        const child = spawn(process.execPath, ['--import', 'tsx', script], {cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe']})
        let err = ''
        child.stderr.on('data', (d) => (err += d))
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (d) => String(d).includes('ready') && resolve())
          child.on('exit', () => reject(new Error(`child exited early: ${err}`)))
        })
        expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).to.have.length(1)
        const exit = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)))
        child.kill(signal)
        expect(await exit).to.equal(code)
        expect(readdirSync(dir).sort()).to.deep.equal(['child.mts'])
      })
    }
  })

  describe('CsrDirectoryWriter', () => {
    it('writes one .npz per tensor plus manifest.json, with safe file names', async () => {
      const dir = join(tmp.dir, 'out-dir')
      const w = await CsrDirectoryWriter.open(dir)
      expect(existsSync(dir)).to.equal(false) // nothing in place until commit
      await w.add(small('layers.0/weight'))
      await w.add(small('layers.0_weight'))
      await w.add(small('../evil name', [2, 1, 3]))
      const manifest = await w.commit({source: 'test'})
      expect(manifest.format).to.equal('sparse-csr-dir')
      expect(manifest.source).to.equal('test')
      expect(manifest.tensors.map((t) => t.file)).to.deep.equal(['layers.0_weight.npz', 'layers.0_weight-2.npz', '__evil_name.npz'])
      expect(manifest.tensors[0]).to.deep.include({name: 'layers.0/weight', shape: [2, 3], nnz: 2, sparsity: 1 - 2 / 6, rowOrder: false, dtype: 'f32'})
      expect(readdirSync(dir).sort()).to.deep.equal(['__evil_name.npz', 'layers.0_weight-2.npz', 'layers.0_weight.npz', 'manifest.json'])
      const back = await readCsrInput(dir)
      expect(back.map((b) => b.name)).to.deep.equal(['layers.0/weight', 'layers.0_weight', '../evil name'])
      expect(back[2].shape).to.deep.equal([2, 1, 3])
      expect((await readManifest(dir)).tensors).to.have.length(3)
      expect(clean(tmp.dir)).to.deep.equal([])
    })

    it('refuses an existing directory without force, replaces a CSR directory with force, never a foreign folder', async () => {
      const dir = join(tmp.dir, 'replace-me')
      let w = await CsrDirectoryWriter.open(dir)
      await w.add(small('a'))
      await w.commit()
      await expectUsage(CsrDirectoryWriter.open(dir), 'output-exists', /refusing to overwrite/)
      w = await CsrDirectoryWriter.open(dir, {force: true})
      await w.add(small('b'))
      await w.commit()
      expect((await readManifest(dir)).tensors.map((t) => t.name)).to.deep.equal(['b'])
      expect(readdirSync(dir).sort()).to.deep.equal(['b.npz', 'manifest.json'])
      const foreign = join(tmp.dir, 'foreign')
      mkdirSync(foreign)
      writeFileSync(join(foreign, 'precious.txt'), 'keep')
      await expectUsage(CsrDirectoryWriter.open(foreign, {force: true}), 'output-not-csr-dir', /not a CSR directory/)
      await expectUsage(CsrDirectoryWriter.open('-'), 'dir-to-stdout', /cannot go to stdout/)
      expect(clean(tmp.dir)).to.deep.equal([])
    })

    it('abort() leaves nothing behind', async () => {
      const dir = join(tmp.dir, 'aborted')
      const w = await CsrDirectoryWriter.open(dir)
      await w.add(small('a'))
      await w.abort()
      expect(existsSync(dir)).to.equal(false)
      expect(clean(tmp.dir)).to.deep.equal([])
    })

    it('safeFileName', () => {
      const taken = new Set<string>()
      expect(safeFileName('a/b:c', taken)).to.equal('a_b_c.npz')
      expect(safeFileName('A/B:C', taken)).to.equal('A_B_C-2.npz') // case-insensitive file systems
      expect(safeFileName('', taken)).to.equal('_.npz')
      expect(safeFileName('manifest', taken)).to.equal('_manifest.npz')
      expect(safeFileName('.hidden', taken)).to.equal('_hidden.npz')
    })
  })
})
