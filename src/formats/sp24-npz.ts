/**
 * The 2:4 form of a matrix as a file: a NumPy `.npz` that `np.load` opens, holding the tiles
 * the 2:4 SpMM kernel reads (docs/half-precision-kernels.md, native/common/sparse24.h), so
 * a deployment loads them without re-encoding:
 *
 *   format        '<U14' 0-d   'sparse-2to4-v1'
 *   shape         '<i8' (2,)   (rows, cols) = (m, k)
 *   dtype         '<U4' 0-d    'f16' or 'bf16' (how to read the value bits)
 *   values        '<u2' (strips, ksteps, 256)  the kept values of each 16 x 32 tile, in the
 *                               order of the mma.sp A fragment (f16/bf16 bit patterns)
 *   meta          '<u4' (strips, ksteps, 16)   each tile's metadata words (2-bit indices)
 *   tensor_shape  '<i8' (d,)   optional: the tensor's shape when it is not (m, k)
 *
 * strips = ceil(m / 16), ksteps = ceil(k / 32); rows and columns past (m, k) are padding
 * and hold zeros. Bytes: 576 per tile of 512 weights, 1.125 per weight (dense f16: 2).
 *
 * Encoding and decoding go through the addon (`sp24Format`, `sp24ToCsr`): one definition of
 * the layout, shared with the kernels. Everything about the file is checked here first.
 */
import {InputError, UsageError} from '../errors.js'
import {loadAddon} from '../kernels/binding.js'
import {matrixShape} from '../sparse/dense-to-csr.js'
import {TWO_FOUR_TILE_BYTES, TWO_FOUR_TILE_COLS, TWO_FOUR_TILE_ROWS, twoFourBytes} from '../sparse/memory.js'
import {firstNot24, not24Message} from '../sparse/two-four.js'
import {validateCsr} from '../sparse/validate.js'
import type {NamedCsr} from '../types.js'
import type {ByteSource} from './byte-source.js'
import {readNpyString, readNpyInts} from './csr-npz.js'
import {safeText} from './limits.js'
import {describeDescr, npyDataBytes} from './npy.js'
import {NpzArchive, type NpzArray, writeNpzTo} from './npz.js'
import type {ByteSink} from './zip.js'

/** The `format` member's value (and this file version). */
export const SP24_FORMAT = 'sparse-2to4-v1'
/** Members that mark an `.npz` as a 2:4 file. */
export const SP24_MEMBERS = ['format', 'shape', 'values', 'meta'] as const
/** Rows and columns of one tile (the A operand of mma.sp.m16n8k32). */
export const SP24_TILE_ROWS = TWO_FOUR_TILE_ROWS
export const SP24_TILE_COLS = TWO_FOUR_TILE_COLS
/** 16-bit values and 32-bit metadata words per tile. */
export const SP24_TILE_VALUES = 256
export const SP24_TILE_META = 16
/** Bytes of one tile, 256 x 2 + 16 x 4: defined once, in src/sparse/memory.ts (every report's 2:4 size). */
export const SP24_TILE_BYTES = TWO_FOUR_TILE_BYTES

/** A matrix in the 2:4 form. */
export interface Sp24Matrix {
  name: string
  /** The tensor's shape (its 2-D view is rows x cols). */
  shape: number[]
  rows: number
  cols: number
  dtype: 'f16' | 'bf16'
  /** ceil(rows / 16) and ceil(cols / 32). */
  strips: number
  ksteps: number
  /** strips x ksteps x 256 value bit patterns, tile by tile. */
  values: Uint16Array
  /** strips x ksteps x 16 metadata words, tile by tile. */
  meta: Uint32Array
}

/** The tile grid and bytes of the 2:4 form of a rows x cols matrix. */
export function sp24Size(rows: number, cols: number): {strips: number; ksteps: number; tiles: number; bytes: number} {
  const strips = Math.ceil(rows / SP24_TILE_ROWS)
  const ksteps = Math.ceil(cols / SP24_TILE_COLS)
  const tiles = strips * ksteps
  // NOTE: the same size as every report's 2:4 bytes (one definition: twoFourBytes).
  return {strips, ksteps, tiles, bytes: twoFourBytes(rows, cols)}
}

function bad(label: string, msg: string): InputError {
  return new InputError('bad-2to4-npz', `${label}: ${msg}`, 'the file is not a valid 2:4 .npz; write it again with `sparse convert --to 2:4`')
}

/**
 * Encodes a 2:4 CSR matrix (f16 or bf16 values; stored zeros count as zeros). A matrix that
 * is not 2:4 is an InputError naming the first offending group; other value dtypes are a
 * UsageError (the 2:4 kernels are half precision only: convert the values first).
 */
export function encodeSp24(named: NamedCsr): Sp24Matrix {
  const {csr} = named
  if (csr.values === null || csr.dtype === 'f32') {
    throw new UsageError('2to4-dtype', `${named.name}: the 2:4 form holds f16 or bf16 values, and this matrix has ${csr.values === null ? 'no values' : 'f32 values'}`, 'pass --dtype f16 or --dtype bf16')
  }
  validateCsr(csr, named.name)
  const g = firstNot24(csr)
  if (g) throw new InputError('not-2to4', `${named.name}: ${not24Message(g)}`, 'prune it to 2:4 first: sparse prune --pattern 2:4')
  let out: ReturnType<ReturnType<typeof loadAddon>['sp24Format']>
  try {
    out = loadAddon().sp24Format({m: csr.rows, k: csr.cols, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values: csr.values as Uint16Array})
  } catch (error) {
    // NOTE: the TypeScript check above agrees with the addon's; this is its re-check.
    if (error instanceof RangeError) throw new InputError('not-2to4', `${named.name}: ${error.message}`, 'prune it to 2:4 first: sparse prune --pattern 2:4')
    throw error
  }
  return {name: named.name, shape: named.shape.slice(), rows: csr.rows, cols: csr.cols, dtype: csr.dtype, strips: out.strips, ksteps: out.ksteps, values: out.values, meta: out.meta}
}

/**
 * The slots of a tile's 256 values that belong to row r (0..15): compressed column cc
 * (0..15) sits at lane (r % 8) * 4 + (cc % 8) / 2, register 2 (cc / 8) + r / 8, half cc % 2
 * (native/common/sparse24.cc, ValueSlot).
 */
function valueSlot(r: number, cc: number): number {
  const lane = (r & 7) * 4 + ((cc & 7) >> 1)
  const reg = (cc >> 3) * 2 + (r >> 3)
  return lane * 8 + reg * 2 + (cc & 1)
}

/** The CSR of a 2:4 matrix (zeros left out, columns ascending, no row order). Checks the padding. */
export function sp24ToNamedCsr(m: Sp24Matrix, label = m.name): NamedCsr {
  // Rows past m are padding: the decoder ignores them, so a value there means a corrupt file.
  const {strips, ksteps} = m
  for (let r = m.rows - (strips - 1) * SP24_TILE_ROWS; strips > 0 && r < SP24_TILE_ROWS; r++) {
    for (let j = 0; j < ksteps; j++) {
      const base = ((strips - 1) * ksteps + j) * SP24_TILE_VALUES
      for (let cc = 0; cc < 16; cc++) {
        if ((m.values[base + valueSlot(r, cc)] & 0x7fff) !== 0) throw bad(label, `a nonzero value in padding row ${(strips - 1) * SP24_TILE_ROWS + r} (the matrix has ${m.rows} rows)`)
      }
    }
  }
  let out: ReturnType<ReturnType<typeof loadAddon>['sp24ToCsr']>
  try {
    out = loadAddon().sp24ToCsr({m: m.rows, k: m.cols, values: m.values, meta: m.meta})
  } catch (error) {
    if (error instanceof RangeError || error instanceof TypeError) throw bad(label, error.message)
    throw error
  }
  const nnz = out.columnIndices.length
  for (let i = 0; i < nnz; i++) {
    if (out.columnIndices[i] >= m.cols) throw bad(label, `a nonzero value in padding column ${out.columnIndices[i]} (the matrix has ${m.cols} columns)`)
  }
  const csr = {rows: m.rows, cols: m.cols, rowOffsets: out.rowOffsets, columnIndices: out.columnIndices, values: out.values, dtype: m.dtype}
  validateCsr(csr, label)
  return {name: m.name, shape: m.shape.slice(), csr}
}

function stringArray(name: string, s: string): NpzArray {
  return {name, descr: `<U${Math.max(1, s.length)}`, shape: [], data: Uint32Array.from(s, (c) => c.codePointAt(0)!)}
}

/** The members of a 2:4 `.npz` (no copies of the big arrays). */
export function sp24NpzArrays(m: Sp24Matrix): NpzArray[] {
  const arrays: NpzArray[] = [
    stringArray('format', SP24_FORMAT),
    {name: 'shape', descr: '<i8', shape: [2], data: BigInt64Array.from([BigInt(m.rows), BigInt(m.cols)])},
    stringArray('dtype', m.dtype),
    {name: 'values', descr: '<u2', shape: [m.strips, m.ksteps, SP24_TILE_VALUES], data: m.values},
    {name: 'meta', descr: '<u4', shape: [m.strips, m.ksteps, SP24_TILE_META], data: m.meta},
  ]
  const is2d = m.shape.length === 2 && m.shape[0] === m.rows && m.shape[1] === m.cols
  if (!is2d) arrays.push({name: 'tensor_shape', descr: '<i8', shape: [m.shape.length], data: BigInt64Array.from(m.shape, (d) => BigInt(d))})
  return arrays
}

/** Write a 2:4 `.npz` to a sink. */
export async function writeSp24NpzTo(sink: ByteSink, m: Sp24Matrix): Promise<void> {
  const {strips, ksteps, tiles} = sp24Size(m.rows, m.cols)
  if (m.strips !== strips || m.ksteps !== ksteps || m.values.length !== tiles * SP24_TILE_VALUES || m.meta.length !== tiles * SP24_TILE_META) {
    throw new RangeError(`${m.name}: 2:4 tiles of the wrong size for ${m.rows}x${m.cols}`)
  }
  await writeNpzTo(sink, sp24NpzArrays(m))
}

/** Is this archive a 2:4 file (has format, shape, values and meta)? */
export function isSp24Archive(npz: NpzArchive): boolean {
  const names = new Set(npz.members.map((x) => x.name))
  return SP24_MEMBERS.every((n) => names.has(n))
}

/**
 * Reads and checks a 2:4 `.npz`: every member's dtype and size against the shape before
 * the large members are read. Corrupt files are InputErrors (exit 1).
 */
export async function readSp24Archive(npz: NpzArchive, name: string): Promise<Sp24Matrix> {
  const label = npz.src.label
  if (!isSp24Archive(npz)) {
    throw bad(label, `not a 2:4 .npz (members: ${safeText(npz.members.map((x) => x.name).join(', '), 120)}; expected ${SP24_MEMBERS.join(', ')})`)
  }
  const has = (n: string) => npz.members.some((x) => x.name === n)
  const format = readNpyString(await npz.readRaw('format'), label, 'format', bad)
  if (format !== SP24_FORMAT) throw bad(label, `format is '${safeText(format, 40)}', expected '${SP24_FORMAT}' (a newer sparse may have written it)`)
  const shapeRaw = await npz.readRaw('shape')
  if (shapeRaw.shape.length !== 1 || shapeRaw.numel !== 2) throw bad(label, `shape must hold 2 entries (rows, cols), it has shape (${shapeRaw.shape.join(', ')})`)
  const [rows, cols] = Array.from(readNpyInts(shapeRaw, label, 'shape', bad))
  if (!has('dtype')) throw bad(label, "the 'dtype' member is missing (f16 or bf16)")
  const dtype = readNpyString(await npz.readRaw('dtype'), label, 'dtype', bad)
  if (dtype !== 'f16' && dtype !== 'bf16') throw bad(label, `dtype is '${safeText(dtype, 20)}', expected 'f16' or 'bf16'`)
  const {strips, ksteps, tiles} = sp24Size(rows, cols)
  const check = (member: 'values' | 'meta', descr: string, per: number) => {
    const h = npz.member(member).header
    if (h.descr !== descr) throw bad(label, `${member} has dtype ${describeDescr(h.descr)}, expected ${describeDescr(descr)}`)
    const want = [strips, ksteps, per]
    if (h.shape.length !== 3 || h.shape.some((d, i) => d !== want[i])) {
      throw bad(label, `${member} has shape (${h.shape.join(', ')}), expected (${want.join(', ')}) for a ${rows}x${cols} matrix (${strips} x ${ksteps} tiles of 16 x 32)`)
    }
    if (h.fortranOrder && tiles > 1) throw bad(label, `${member} is in Fortran order`)
  }
  check('values', '<u2', SP24_TILE_VALUES)
  check('meta', '<u4', SP24_TILE_META)
  const vBytes = npyDataBytes(await npz.readRaw('values'))
  const values = new Uint16Array(vBytes.buffer, vBytes.byteOffset, tiles * SP24_TILE_VALUES)
  const mBytes = npyDataBytes(await npz.readRaw('meta'))
  const meta = new Uint32Array(mBytes.buffer, mBytes.byteOffset, tiles * SP24_TILE_META)
  let shape = [rows, cols]
  if (has('tensor_shape')) {
    const raw = await npz.readRaw('tensor_shape')
    if (raw.shape.length !== 1) throw bad(label, 'tensor_shape must be a list of dimensions')
    const ts = Array.from(readNpyInts(raw, label, 'tensor_shape', bad))
    const [r, c] = matrixShape(ts)
    if (r !== rows || c !== cols) throw bad(label, `tensor_shape (${ts.join(', ')}) is a ${r}x${c} matrix, but shape is ${rows}x${cols}`)
    shape = ts
  }
  return {name, shape, rows, cols, dtype, strips, ksteps, values, meta}
}

/** Reads a 2:4 `.npz` from a byte source (closed afterwards). */
export async function readSp24Npz(src: ByteSource, name: string): Promise<Sp24Matrix> {
  const npz = await NpzArchive.open(src)
  try {
    return await readSp24Archive(npz, name)
  } finally {
    await npz.close()
  }
}
