/**
 * Checkpoints users hold: torch.save ZIP files (restricted unpickler) and sharded Hugging Face
 * folders. Fixtures: fixtures/make_checkpoints.py (fixtures/README.md).
 */
import {expect} from 'chai'
import {cpSync, existsSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {InputError} from '../../src/errors.js'
import {BufferSource, NpzArchive, openTensorSource, unpickle} from '../../src/formats/index.js'
import {ZipWriter} from '../../src/formats/zip.js'
import {expectInputErrorAsync, fixture, makeTmp, MemorySink, sameBits} from './helpers.js'

describe('formats/checkpoints', () => {
  const tmp = makeTmp('sparse-ckpt-')
  after(() => tmp.cleanup())

  describe('torch.save files', () => {
    it('reads a state_dict: names, shapes, dtypes and values bit for bit (f32, f16, bf16, 4-D, views at offsets)', async () => {
      const src = await openTensorSource(fixture('torch-state-dict.pt'))
      const expected = await NpzArchive.open(new BufferSource(readFileSync(fixture('torch-state-dict-expected.npz')), 'expected'))
      try {
        expect(src.format).to.equal('torch')
        expect(src.tensors.map((t) => [t.name, t.dtype, t.shape.join('x')])).to.deep.equal([
          ['fc1.weight', 'f32', '16x24'],
          ['fc1.bias', 'f32', '16'],
          ['fc2.weight', 'f16', '8x16'],
          ['emb.weight', 'bf16', '10x12'],
          ['conv.weight', 'f32', '4x3x2x2'],
          ['attn.q.weight', 'f32', '4x6'],
          ['attn.k.weight', 'f32', '4x6'],
        ])
        const pairs: [string, string][] = [
          ['fc1.weight', 'fc1_weight'],
          ['fc1.bias', 'fc1_bias'],
          ['fc2.weight', 'fc2_weight'],
          ['emb.weight', 'emb_weight_bits'],
          ['conv.weight', 'conv_weight'],
          ['attn.q.weight', 'attn_q_weight'],
          ['attn.k.weight', 'attn_k_weight'],
        ]
        for (const [name, member] of pairs) {
          const t = await src.read(name)
          const raw = await expected.readRaw(member)
          expect(sameBits(t.data, raw.bytes.subarray(raw.bytes.length - t.data.byteLength)), name).to.equal(true)
        }
        // The tied name and the int64 buffer are listed, not read.
        expect(src.unsupported.map((u) => [u.name, u.tiedTo ?? null])).to.deep.equal([
          ['lm_head.weight', 'emb.weight'],
          ['steps', null],
        ])
        expect(src.unsupported[1].dtype).to.equal('int64')
      } finally {
        await src.close()
        await expected.close()
      }
    })

    it('names nested containers by their path and reads float64; plain values are ignored', async () => {
      const src = await openTensorSource(fixture('torch-checkpoint.pt'))
      try {
        expect(src.tensors.map((t) => [t.name, t.dtype])).to.deep.equal([
          ['model.layer.weight', 'f64'],
          ['model.layer.bias', 'f64'],
        ])
        const w = await src.read('model.layer.weight')
        expect(w.data).to.be.instanceOf(Float64Array)
        expect(w.data.length).to.equal(48)
      } finally {
        await src.close()
      }
    })

    it('refuses a pickle that calls os.system, naming the global, without running it', async () => {
      const marker = join(tmp.dir, 'pwned')
      await expectInputErrorAsync(openTensorSource(fixture('torch-unsafe.pt')), /refusing to load the Python global os\.system; only tensors and plain containers are read \(no code is run\)/)
      expect(existsSync(marker)).to.equal(false)
    })

    it('a whole pickled module gets the state_dict advice; object-building opcodes are refused', () => {
      const enc = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0))
      const hooks = {allowGlobal: () => false, call: () => null, refusal: () => ({message: 'a class', suggestion: 'save the state_dict'})}
      try {
        unpickle(enc('\x80\x02c__main__\nNet\nq\x00)\x81q\x01.'), 'm.pt', hooks)
        expect.fail('no error')
      } catch (error) {
        expect(error).to.be.instanceOf(InputError)
        expect((error as InputError).message).to.match(/__main__\.Net: a class/)
        expect((error as InputError).suggestion).to.equal('save the state_dict')
      }
      const allowAll = {allowGlobal: () => true, call: () => null}
      expect(() => unpickle(enc('\x80\x02cfoo\nBar\n)\x81.'), 'm.pt', allowAll)).to.throw(/builds Python objects \(opcode NEWOBJ\)/)
      expect(() => unpickle(enc('\x80\x02X\x10\x00\x00\x00ab'), 'm.pt', allowAll)).to.throw(/truncated pickle/)
      expect(() => unpickle(enc('\x80\x02h\x05.'), 'm.pt', allowAll)).to.throw(/memo key 5 is not defined/)
      expect(unpickle(enc('\x80\x02]q\x00(K\x01K\x02e.'), 'm.pt', allowAll)).to.deep.equal([1, 2])
    })

    it('a legacy (non-ZIP) file and a TorchScript archive are refused with how to convert them', async () => {
      const legacy = await openTensorSource(fixture('torch-legacy.pt')).catch((e: unknown) => e)
      expect(legacy).to.be.instanceOf(InputError)
      expect((legacy as InputError).message).to.match(/legacy \(pre-1\.6, non-ZIP\) PyTorch file/)
      expect((legacy as InputError).suggestion).to.match(/torch\.save\(torch\.load\('old\.pt', weights_only=True\), 'new\.pt'\)/)
      const sink = new MemorySink()
      const zip = new ZipWriter(sink)
      await zip.add('m/constants.pkl', [Uint8Array.of(0x80, 0x02, 0x4e, 0x2e)])
      await zip.add('m/code/__torch__.py', [new TextEncoder().encode('x')])
      await zip.finish()
      const p = join(tmp.dir, 'scripted.pt')
      writeFileSync(p, sink.bytes())
      await expectInputErrorAsync(openTensorSource(p), /TorchScript archive/)
    })

    it('a truncated torch file is an input error, never a crash', async () => {
      const bytes = readFileSync(fixture('torch-state-dict.pt'))
      for (const cut of [100, 1000, 3000, bytes.length - 30]) {
        const p = join(tmp.dir, `cut-${cut}.pt`)
        writeFileSync(p, bytes.subarray(0, cut))
        const e = await openTensorSource(p).catch((error: unknown) => error)
        expect(e, `cut at ${cut}`).to.be.instanceOf(InputError)
      }
    })
  })

  describe('Hugging Face folders', () => {
    it('a folder and its index are one model, shard by shard, in shard order', async () => {
      for (const p of [fixture('hf-tiny'), fixture('hf-tiny/model.safetensors.index.json')]) {
        const src = await openTensorSource(p)
        try {
          expect(src.format).to.equal('sharded')
          expect(src.tensors.map((t) => t.name)).to.deep.equal([
            'model.embed_tokens.weight',
            'model.layers.0.mlp.up_proj.weight',
            'model.layers.0.input_layernorm.weight',
            'model.layers.0.mlp.down_proj.weight',
            'model.layers.0.self_attn.o_proj.weight',
            'lm_head.weight',
          ])
          expect(src.shards!.map((s) => s.tensors.length)).to.deep.equal([3, 3])
          const t = await src.read('lm_head.weight')
          expect(t.dtype).to.equal('bf16')
          expect(t.shape).to.deep.equal([32, 16])
        } finally {
          await src.close()
        }
      }
    })

    it('a missing shard, an index that lies, and a shard path outside the folder are input errors', async () => {
      const d = join(tmp.dir, 'hf')
      cpSync(fixture('hf-tiny'), d, {recursive: true})
      const index = join(d, 'model.safetensors.index.json')
      const good = readFileSync(index, 'utf8')
      writeFileSync(index, good.replace('"lm_head.weight": "model-00002-of-00002.safetensors"', '"lm_head.weight": "model-00001-of-00002.safetensors"'))
      await expectInputErrorAsync(openTensorSource(d), /weight_map puts lm_head\.weight in model-00001-of-00002\.safetensors, which does not hold it/)
      writeFileSync(index, good.replace('"lm_head.weight": "model-00002-of-00002.safetensors"', '"lm_head.weight": "../evil.safetensors"'))
      await expectInputErrorAsync(openTensorSource(d), /must be a plain file name/)
      writeFileSync(index, good)
      rmSync(join(d, 'model-00002-of-00002.safetensors'))
      await expectInputErrorAsync(openTensorSource(d), /lists shard model-00002-of-00002\.safetensors, which is missing/)
    })
  })
})
