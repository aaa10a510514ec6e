/**
 * Several inputs and folders for the commands that inspect or check files (`info`, `verify`),
 * as `bench` takes them: a file stands for itself; a CSR directory (manifest.json) or a
 * model folder (Hugging Face) is one input; any other folder stands for every input under
 * it, found recursively in name order.
 */
import {readdir} from 'node:fs/promises'
import {extname, join} from 'node:path'

import {UsageError} from '../errors.js'
import {statInput} from './byte-source.js'
import {folderKind} from './sources.js'

/** File extensions found inside plain folders. */
export const INPUT_EXTENSIONS = new Set(['.npy', '.npz', '.safetensors', '.smtx', '.pt', '.pth'])

/** Expand the command's INPUT arguments into the inputs to read, in order. */
export async function expandInputs(inputs: readonly string[]): Promise<string[]> {
  if (inputs.length === 0) throw new UsageError('no-inputs', 'no INPUT given', 'give one or more files or folders')
  const out: string[] = []
  for (const input of inputs) {
    if (input === '-') {
      out.push(input)
      continue
    }
    const st = await statInput(input)
    if (!st.isDirectory() || (await folderKind(input)) !== null) {
      out.push(input)
      continue
    }
    const found = await findInputs(input)
    if (found.length === 0) {
      throw new UsageError('empty-input-dir', `no ${[...INPUT_EXTENSIONS].join(', ')} files, CSR directories or model folders under ${input}`, 'pass files or a folder holding them')
    }
    out.push(...found)
  }
  return out
}

async function findInputs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, {withFileTypes: true})
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const out: string[] = []
  for (const e of entries) {
    if (e.name.startsWith('.')) continue
    const p = join(dir, e.name)
    if (e.isDirectory()) {
      if ((await folderKind(p)) !== null) out.push(p)
      else out.push(...(await findInputs(p)))
    } else if (e.isFile() && INPUT_EXTENSIONS.has(extname(e.name).toLowerCase())) out.push(p)
  }
  return out
}
