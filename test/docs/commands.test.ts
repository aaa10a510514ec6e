/**
 * docs/commands.md is generated from the commands' help (scripts/commands-doc.mjs, through
 * `oclif readme`); this fails when a command changed and the page was not regenerated.
 * Reads the built commands: `npm test` builds first (pretest).
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {ROOT} from '../helpers/cli.js'

const SCRIPT = join(ROOT, 'scripts', 'commands-doc.mjs')
const DOC = join(ROOT, 'docs', 'commands.md')

function check(doc?: string): {code: number | null; stdout: string; stderr: string} {
  const r = spawnSync(process.execPath, [SCRIPT, '--check', ...(doc ? ['--doc', doc] : [])], {cwd: ROOT, encoding: 'utf8'})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}

describe('docs/commands.md (the command reference)', function () {
  this.timeout(60_000)

  it('matches the commands\' own help (regenerate: npm run build && npm run docs:commands)', () => {
    const r = check()
    expect(r.code, r.stderr).to.equal(0)
  })

  it('names every command, with its flags', () => {
    const doc = readFileSync(DOC, 'utf8')
    for (const id of ['bench', 'convert', 'info', 'prune', 'reorder', 'verify']) expect(doc).to.include(`## \`sparse ${id} `)
    expect(doc).to.include('--pattern=<value>')
  })

  it('fails, naming the first stale line, when the page no longer matches', () => {
    const dir = mkdtempSync(join(tmpdir(), 'commands-doc-'))
    try {
      const stale = join(dir, 'commands.md')
      writeFileSync(stale, readFileSync(DOC, 'utf8').replace('overwrite existing output files', 'an old description'))
      const r = check(stale)
      expect(r.code).to.equal(1)
      expect(r.stderr).to.match(/commands\.md is stale \(first difference at line \d+: ".*an old description" should be ".*overwrite existing output files"\); regenerate it: npm run build && npm run docs:commands\n$/)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
