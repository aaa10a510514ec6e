// docs/commands.md: the command reference, generated from the commands' own help by
// `oclif readme` (between its <!-- commands --> markers), so it cannot drift from them.
//   node scripts/commands-doc.mjs           rewrite docs/commands.md (after npm run build)
//   node scripts/commands-doc.mjs --check   exit 1 if it is stale (npm test runs this)
//   --doc PATH                              another copy of the page (the tests' stale copy)
// Offline: oclif reads the built commands (dist/, oclif.manifest.json); the update check is off.
import {spawnSync} from 'node:child_process'
import {copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const check = args.includes('--check')
const doc = args.includes('--doc') ? args[args.indexOf('--doc') + 1] : join(root, 'docs', 'commands.md')

/** The reference as `oclif readme` writes it into a copy of docs/commands.md. */
function generate() {
  const dir = mkdtempSync(join(tmpdir(), 'commands-doc-'))
  try {
    const copy = join(dir, 'commands.md')
    copyFileSync(doc, copy)
    const r = spawnSync(join(root, 'node_modules', '.bin', 'oclif'), ['readme', '--readme-path', copy, '--no-source-links', '--no-aliases'], {
      cwd: root,
      encoding: 'utf8',
      // A fixed width, so the wrapping does not depend on the terminal; no registry lookup.
      env: {...process.env, COLUMNS: '100', OCLIF_SKIP_NEW_VERSION_CHECK: 'true', OCLIF_COLUMNS: '100'},
    })
    if (r.status !== 0) {
      console.error(`oclif readme failed (exit ${r.status}): ${(r.stderr || String(r.error)).trim().split('\n').pop()}`)
      process.exit(2)
    }
    return readFileSync(copy, 'utf8')
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

const fresh = generate()
const current = readFileSync(doc, 'utf8')
if (check) {
  if (fresh !== current) {
    const a = current.split('\n')
    const b = fresh.split('\n')
    const line = a.findIndex((l, i) => l !== b[i])
    console.error(`${doc} is stale (first difference at line ${line + 1}: ${JSON.stringify(a[line] ?? '')} should be ${JSON.stringify(b[line] ?? '')}); regenerate it: npm run build && npm run docs:commands`)
    process.exit(1)
  }
  console.log(`${doc} matches the commands`)
} else if (fresh !== current) {
  writeFileSync(doc, fresh)
  console.log(`wrote ${doc}`)
} else {
  console.log(`${doc} is up to date`)
}
