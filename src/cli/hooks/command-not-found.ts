/**
 * An unknown command gets the same one-line `error:` format and exit code 2 as any other
 * bad usage (the README's "Errors and exit codes"), with the closest command suggested,
 * instead of oclif's own multi-line message. Under --json the error object goes to stdout.
 */
import type {Hook} from '@oclif/core'

const hook: Hook.CommandNotFound = async function (opts) {
  const ids = opts.config.commandIDs.filter((id) => !opts.config.findCommand(id)?.hidden)
  // NOTE: with a space as topic separator oclif joins the next words into the id
  // ('prnue x.npy' -> 'prnue:x.npy'); sparse has no topics, so the command is the first word.
  const word = opts.id.split(':')[0]
  const closest = nearest(word, ids)
  const message = `unknown command '${word}'`
  const suggestion = closest ? `did you mean '${opts.config.bin} ${closest}'? run '${opts.config.bin} --help' for the list` : `run '${opts.config.bin} --help' for the list of commands`
  if ((opts.argv ?? []).includes('--json')) {
    process.stdout.write(JSON.stringify({error: {code: 'unknown-command', message, suggestion, exitCode: 2}}, null, 2) + '\n')
  } else {
    process.stderr.write(`error: ${message} (${suggestion})\n`)
  }
  process.exitCode = 2
  // A result marks the hook as handled: oclif then does not throw its own error.
  return null
}

/** The command within edit distance 2 of `id` (the nearest one), if any. */
function nearest(id: string, ids: string[]): string | undefined {
  let best: string | undefined
  let bestD = 3
  for (const c of ids) {
    const d = editDistance(id, c)
    if (d < bestD) {
      best = c
      bestD = d
    }
  }
  return best
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({length: b.length + 1}, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = cur
  }
  return prev[b.length]
}

export default hook
