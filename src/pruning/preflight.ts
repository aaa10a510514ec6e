import {constants} from 'node:fs'
import {access, stat} from 'node:fs/promises'
import {dirname, resolve} from 'node:path'

import {UsageError} from '../errors.js'

/**
 * Checks an output path before any work is done, so bad usage fails fast (exit 2) instead
 * of after minutes of pruning: the folder must exist and be writable, and an existing
 * output needs `force`. The writers check again when they write (atomically).
 */
export async function checkOutputPath(output: string | undefined, force = false): Promise<void> {
  if (output === undefined || output === '-') return
  const parent = dirname(resolve(output))
  const pst = await stat(parent).catch(() => null)
  if (!pst || !pst.isDirectory()) {
    throw new UsageError('output-dir-missing', `cannot write ${output}: ${parent} is not an existing folder`, 'create the folder first or choose another -o path')
  }
  try {
    await access(parent, constants.W_OK)
  } catch {
    throw new UsageError('unwritable', `cannot write ${output}: permission denied`, 'choose a writable folder for -o')
  }
  const exists = await stat(output).then(
    () => true,
    () => false,
  )
  if (exists && !force) throw new UsageError('output-exists', `refusing to overwrite ${output}`, 'choose another -o path, or pass --force')
}
