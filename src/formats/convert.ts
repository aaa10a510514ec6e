/**
 * `sparse convert` core: conversion between the formats, without pruning.
 *   dense (.npy/.npz/.safetensors) -> CSR .npz (zeros dropped) or a CSR directory
 *   CSR (.npz/.smtx/directory)     -> dense .npy (one tensor) or .npz (several)
 *   .smtx <-> CSR .npz; any matrix -> .smtx (pattern only)
 *   a 2:4 matrix (CSR or dense, f16/bf16) <-> the 2:4 .npz (sp24-npz.ts; read back like CSR)
 *   a value dtype change (--dtype)
 * A stored row order is kept (except in .smtx, which has no place for it: a note says so).
 * Pattern-only inputs (.smtx) get values from the seeded generator (standard normal).
 */
import {extname} from 'node:path'

import {InputError, UsageError} from '../errors.js'
import {csrNnz} from '../sparse/csr.js'
import {convertValues, csrToDense, defaultValueDtype, denseToCsr, matrixShape} from '../sparse/dense-to-csr.js'
import {randomValues} from '../sparse/random.js'
import type {DenseTensor, NamedCsr, ValueDType} from '../types.js'
import {writeCsrNpzTo} from './csr-npz.js'
import {descrFor, npyChunks} from './npy.js'
import {writeNpzTo} from './npz.js'
import {MAX_ELEMENTS} from './limits.js'
import {CsrDirectoryWriter, writeAtomically} from './output.js'
import {writeSmtxTo} from './smtx.js'
import {encodeSp24, writeSp24NpzTo} from './sp24-npz.js'
import {detectFormat, isDenseFormat, isDirectory, openTensorSource, readCsrInput, type FormatName, type UnsupportedTensor} from './sources.js'

export type ConvertTarget = 'csr' | 'dense' | 'smtx' | '2:4'

export interface ConvertOptions {
  input: string
  /** Output path; '-' = stdout (one tensor only). */
  output: string
  /** What to produce; inferred from the output name when absent. */
  to?: ConvertTarget
  /** Value dtype of the output; default: the input's (f64 -> f32). */
  dtype?: ValueDType
  /** Force the input format. */
  from?: string
  /** Seed for the values of pattern-only inputs (default 0). */
  seed?: number
  force?: boolean
}

export interface ConvertedTensor {
  name: string
  shape: number[]
  /** Output value dtype, or 'pattern' for .smtx. */
  dtype: string
  nnz: number
  sparsity: number
  /** Whether the output stores a row order. */
  rowOrder: boolean
  /** The file inside the output directory (directory output only). */
  file?: string
}

export interface ConvertResult {
  input: string
  output: string
  from: FormatName
  to: ConvertTarget
  /** The written format: csr-npz, csr-dir, npy, npz (dense), smtx or sp24-npz (the 2:4 form). */
  outputFormat: 'csr-npz' | 'csr-dir' | 'npy' | 'npz' | 'smtx' | 'sp24-npz'
  tensors: ConvertedTensor[]
  /** Input tensors not converted (unsupported dtypes). */
  skipped: UnsupportedTensor[]
  /** True when values were generated for a pattern-only input. */
  valuesGenerated: boolean
  /** The seed used when values were generated. */
  seed?: number
  /** Bytes written (for a directory: the sum of its files). */
  bytes: number
  /** Things the user should know (generated values, a dropped row order, ...). */
  notes: string[]
}

function inferTarget(output: string): ConvertTarget {
  if (output === '-') return 'csr'
  const ext = extname(output).toLowerCase()
  if (ext === '.npy') return 'dense'
  if (ext === '.smtx') return 'smtx'
  if (ext === '.npz' || ext === '') return 'csr'
  throw new UsageError('unknown-target', `cannot tell what to write from the output name ${output}`, 'name it .npz (CSR), .npy (dense), .smtx, or a directory; or pass --to csr|dense|smtx')
}

function sparsityOf(shape: number[], nnz: number): number {
  const numel = shape.reduce((a, b) => a * b, 1)
  return numel === 0 ? 0 : 1 - nnz / numel
}

function summary(named: NamedCsr, dtype: string, file?: string): ConvertedTensor {
  const nnz = csrNnz(named.csr)
  return {name: named.name, shape: named.shape.slice(), dtype, nnz, sparsity: sparsityOf(named.shape, nnz), rowOrder: named.csr.rowIndices !== undefined, ...(file ? {file} : {})}
}

/** Convert `input` to `output` (see the module comment). */
export async function convertFile(opts: ConvertOptions): Promise<ConvertResult> {
  const {input, output} = opts
  const from = await detectFormat(input, opts.from)
  const dense = isDenseFormat(from)
  const to = opts.to ?? inferTarget(output)
  const outExt = extname(output).toLowerCase()
  const writeOpts = {force: opts.force, inputs: [input]}
  const notes: string[] = []
  const seed = opts.seed ?? 0
  if (output !== '-' && to === 'csr' && outExt !== '.npz' && outExt !== '' && !(await isDirectory(output))) {
    throw new UsageError('bad-output-name', `CSR output ${output} must end in .npz (one tensor) or be a directory (several)`, 'rename the output, or pass --to')
  }
  if (to === 'dense' && output !== '-' && outExt !== '.npy' && outExt !== '.npz') {
    throw new UsageError('bad-output-name', `dense output ${output} must end in .npy (one tensor) or .npz (several)`, 'rename the output')
  }
  if (to === 'smtx' && output !== '-' && outExt !== '.smtx') {
    throw new UsageError('bad-output-name', `.smtx output ${output} must end in .smtx`, 'rename the output')
  }
  if (to === '2:4' && output !== '-' && outExt !== '.npz') {
    throw new UsageError('bad-output-name', `2:4 output ${output} must end in .npz (one matrix)`, 'rename the output')
  }
  if (to === '2:4' && opts.dtype === 'f32') {
    throw new UsageError('2to4-dtype', 'the 2:4 form holds f16 or bf16 values (the 2:4 kernels are half precision only), not f32', 'pass --dtype f16 or --dtype bf16')
  }
  if (to === 'dense' && opts.dtype === 'bf16') {
    throw new UsageError('bf16-npy', 'dense output cannot be bfloat16: .npy has no bfloat16 dtype', 'use --dtype f32 or f16')
  }

  const result = (partial: Omit<ConvertResult, 'input' | 'output' | 'from' | 'to' | 'notes' | 'valuesGenerated' | 'skipped'> & Partial<ConvertResult>): ConvertResult => ({
    input,
    output,
    from,
    to,
    skipped: [],
    valuesGenerated: false,
    notes,
    ...partial,
  })

  if (dense) {
    const src = await openTensorSource(input, from)
    try {
      const names = src.tensors.map((t) => t.name)
      if (names.length === 0) throw new UsageError('no-tensors', `${input} holds no float tensors to convert`, 'check the file with `sparse info`')
      const single = names.length === 1
      const skipped = src.unsupported
      for (const s of skipped) notes.push(`skipped ${s.name} (${s.dtype}: ${s.reason})`)
      if (to === '2:4') {
        if (!single) throw new UsageError('several-tensors', `${input} holds ${names.length} tensors; a 2:4 .npz holds one`, 'extract one tensor first')
        const info = src.tensors[0]
        const dtype = opts.dtype ?? sp24Dtype(info.name, info.dtype)
        const named = denseToCsr(await src.read(names[0]), dtype)
        const m = encodeSp24(named)
        const w = await writeAtomically(output, writeOpts, (sink) => writeSp24NpzTo(sink, m))
        return result({outputFormat: 'sp24-npz', tensors: [summary(named, dtype)], skipped, bytes: w.bytes})
      }
      const toDirectory = to === 'csr' && (output !== '-' && (outExt === '' || (!single && outExt !== '.npz')))
      if (to === 'csr' && !single && !toDirectory) {
        throw new UsageError('several-tensors', `${input} holds ${names.length} tensors; a CSR .npz holds one`, 'give a directory path for -o (a directory of CSR files plus manifest.json is written)')
      }
      if (to === 'csr' && toDirectory) {
        const dir = await CsrDirectoryWriter.open(output, writeOpts)
        const tensors: ConvertedTensor[] = []
        try {
          for (const name of names) {
            const t = await src.read(name)
            const named = denseToCsr(t, opts.dtype ?? defaultValueDtype(t.dtype))
            const entry = await dir.add(named)
            src.release(t) // denseToCsr copied the values
            tensors.push(summary(named, named.csr.dtype, entry.file))
          }
          await dir.commit({source: input, converted: true})
        } catch (error) {
          await dir.abort()
          throw error
        }
        return result({outputFormat: 'csr-dir', tensors, skipped, bytes: dir.bytes})
      }
      if (to === 'csr') {
        const t = await src.read(names[0])
        const named = denseToCsr(t, opts.dtype ?? defaultValueDtype(t.dtype))
        const w = await writeAtomically(output, writeOpts, (sink) => writeCsrNpzTo(sink, named))
        return result({outputFormat: 'csr-npz', tensors: [summary(named, named.csr.dtype)], skipped, bytes: w.bytes})
      }
      if (to === 'smtx') {
        if (!single) throw new UsageError('several-tensors', `${input} holds ${names.length} tensors; .smtx holds one`, 'extract one tensor first')
        const named = denseToCsr(await src.read(names[0]), 'f32')
        notes.push('.smtx stores the sparsity pattern only: values were dropped')
        const w = await writeAtomically(output, writeOpts, (sink) => writeSmtxTo(sink, named.csr))
        return result({outputFormat: 'smtx', tensors: [summary(named, 'pattern')], skipped, bytes: w.bytes})
      }
      // dense -> dense: a dtype change.
      const tensors: DenseTensor[] = []
      const out: ConvertedTensor[] = []
      if (single && outExt === '.npz') {
        // fine: one tensor in an archive
      } else if (!single && outExt !== '.npz') {
        throw new UsageError('several-tensors', `${input} holds ${names.length} tensors; a .npy holds one`, 'write an .npz instead')
      }
      for (const name of names) {
        const t = await src.read(name)
        const dtype = opts.dtype ?? (t.dtype === 'bf16' ? 'f32' : t.dtype === 'f64' ? 'f32' : t.dtype)
        if (!opts.dtype && t.dtype === 'bf16') notes.push(`${name}: bfloat16 written as float32 (NumPy has no bfloat16)`)
        const data = convertValues(t.data, t.dtype, dtype)
        tensors.push({name, shape: t.shape, dtype, data})
        let nnz = 0
        const half = dtype !== 'f32'
        for (let i = 0; i < data.length; i++) if (half ? (data[i] & 0x7fff) !== 0 : data[i] !== 0) nnz++
        out.push({name, shape: t.shape.slice(), dtype, nnz, sparsity: sparsityOf(t.shape, nnz), rowOrder: false})
      }
      const w = await writeDense(tensors, output, outExt, writeOpts)
      return result({outputFormat: outExt === '.npz' ? 'npz' : 'npy', tensors: out, skipped, bytes: w})
    } finally {
      await src.close()
    }
  }

  // Sparse input.
  const mats = await readCsrInput(input, from)
  let valuesGenerated = false
  const fill = (named: NamedCsr, dtype: ValueDType): NamedCsr => {
    const {csr} = named
    if (csr.values === null) {
      valuesGenerated = true
      return {...named, csr: {...csr, values: randomValues(csrNnz(csr), dtype, seed), dtype}}
    }
    if (csr.dtype === dtype) return named
    return {...named, csr: {...csr, values: convertValues(csr.values, csr.dtype, dtype), dtype}}
  }
  const generatedNote = () => {
    if (valuesGenerated) notes.push(`the input has no values (pattern only): values are standard normal from the seeded generator, seed ${seed}`)
  }
  if (to === '2:4') {
    if (mats.length !== 1) throw new UsageError('several-tensors', `${input} holds ${mats.length} tensors; a 2:4 .npz holds one`, 'convert one tensor at a time')
    const src = mats[0]
    const dtype = opts.dtype ?? (src.csr.values === null ? 'f16' : sp24Dtype(src.name, src.csr.dtype))
    const named = fill(src, dtype)
    generatedNote()
    if (src.csr.rowIndices) notes.push('the 2:4 form has no place for a row order: the stored row order was dropped')
    const m = encodeSp24(named)
    const w = await writeAtomically(output, writeOpts, (sink) => writeSp24NpzTo(sink, m))
    return result({outputFormat: 'sp24-npz', tensors: [{...summary(named, dtype), rowOrder: false}], bytes: w.bytes, valuesGenerated, ...(valuesGenerated ? {seed} : {})})
  }
  if (to === 'smtx') {
    if (mats.length !== 1) throw new UsageError('several-tensors', `${input} holds ${mats.length} tensors; .smtx holds one`, 'convert one tensor at a time')
    notes.push('.smtx stores the sparsity pattern only: values were dropped')
    if (mats[0].csr.rowIndices) notes.push('.smtx has no place for a row order: the stored row order was dropped')
    const w = await writeAtomically(output, writeOpts, (sink) => writeSmtxTo(sink, mats[0].csr))
    return result({outputFormat: 'smtx', tensors: [{...summary(mats[0], 'pattern'), rowOrder: false}], bytes: w.bytes})
  }
  if (to === 'csr') {
    const toDirectory = output !== '-' && (outExt === '' || mats.length > 1)
    if (mats.length > 1 && outExt === '.npz') {
      throw new UsageError('several-tensors', `${input} holds ${mats.length} tensors; a CSR .npz holds one`, 'give a directory path for -o')
    }
    if (toDirectory) {
      const dir = await CsrDirectoryWriter.open(output, writeOpts)
      const tensors: ConvertedTensor[] = []
      try {
        for (const m of mats) {
          const named = fill(m, opts.dtype ?? m.csr.dtype)
          const entry = await dir.add(named)
          tensors.push(summary(named, named.csr.dtype, entry.file))
        }
        generatedNote()
        await dir.commit({source: input, converted: true, ...(valuesGenerated ? {valuesSeed: seed} : {})})
      } catch (error) {
        await dir.abort()
        throw error
      }
      return result({outputFormat: 'csr-dir', tensors, bytes: dir.bytes, valuesGenerated, ...(valuesGenerated ? {seed} : {})})
    }
    const named = fill(mats[0], opts.dtype ?? mats[0].csr.dtype)
    generatedNote()
    const w = await writeAtomically(output, writeOpts, (sink) => writeCsrNpzTo(sink, named))
    return result({outputFormat: 'csr-npz', tensors: [summary(named, named.csr.dtype)], bytes: w.bytes, valuesGenerated, ...(valuesGenerated ? {seed} : {})})
  }
  // CSR -> dense
  if (mats.length > 1 && outExt !== '.npz') {
    throw new UsageError('several-tensors', `${input} holds ${mats.length} tensors; a .npy holds one`, 'write an .npz instead')
  }
  const tensors: DenseTensor[] = []
  const out: ConvertedTensor[] = []
  for (const m of mats) {
    let dtype = opts.dtype ?? m.csr.dtype
    if (dtype === 'bf16') {
      dtype = 'f32'
      notes.push(`${m.name}: bfloat16 written as float32 (NumPy has no bfloat16)`)
    }
    const [rows, cols] = matrixShape(m.shape)
    if (rows !== m.csr.rows || cols !== m.csr.cols) throw new InputError('bad-shape', `${m.name}: tensor shape [${m.shape.join(', ')}] does not match its ${m.csr.rows}x${m.csr.cols} CSR`, 'the file is corrupt; write it again')
    // NOTE: checked before any allocation: a CSR of a few bytes may describe a huge dense matrix.
    if (rows * cols > MAX_ELEMENTS) {
      throw new UsageError('too-large', `${m.name}: a dense ${rows}x${cols} matrix has ${rows * cols} elements, more than the ${MAX_ELEMENTS} one array can hold`, 'keep it sparse (convert to CSR or .smtx)')
    }
    const named = fill(m, dtype)
    if (m.csr.rowIndices) notes.push(`${m.name}: a dense tensor has no row order; the stored one was dropped`)
    tensors.push(csrToDense(named, dtype))
    out.push({...summary(named, dtype), rowOrder: false})
  }
  generatedNote()
  const w = await writeDense(tensors, output, outExt, writeOpts)
  return result({outputFormat: outExt === '.npz' ? 'npz' : 'npy', tensors: out, bytes: w, valuesGenerated, ...(valuesGenerated ? {seed} : {})})
}

/**
 * The value dtype of a 2:4 output when --dtype is not given: the input's f16 or bf16. An f32
 * (or f64) input is refused rather than silently rounded: the 2:4 kernels are half precision
 * only, and the user chooses which half.
 */
function sp24Dtype(name: string, dtype: string): 'f16' | 'bf16' {
  if (dtype === 'f16' || dtype === 'bf16') return dtype
  throw new UsageError('2to4-dtype', `${name} holds ${dtype} values; the 2:4 form holds f16 or bf16 (the 2:4 kernels are half precision only)`, 'pass --dtype f16 or --dtype bf16 to convert the values')
}

async function writeDense(tensors: DenseTensor[], output: string, outExt: string, writeOpts: {force?: boolean; inputs: string[]}): Promise<number> {
  if (outExt === '.npz') {
    const arrays = tensors.map((t) => ({name: t.name, descr: descrFor(t.dtype), shape: t.shape, data: t.data}))
    return (await writeAtomically(output, writeOpts, (sink) => writeNpzTo(sink, arrays))).bytes
  }
  const t = tensors[0]
  const w = await writeAtomically(output, writeOpts, async (sink) => {
    for (const c of npyChunks(descrFor(t.dtype), t.shape, t.data)) await sink.write(c)
  })
  return w.bytes
}
