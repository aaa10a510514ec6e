// Lists the addon's sources for binding.gyp: `node sources.cjs cc` (C++) or `cu` (CUDA); `cuh`
// and `h` (headers): every .cu depends on all of them (gyp's rules track no includes, so a
// changed header would otherwise leave stale CUDA objects in an incremental build).
// Paths are relative to the package root, where node-gyp runs gyp.
const fs = require('node:fs')
const path = require('node:path')

const ext = '.' + (process.argv[2] || 'cc')
const root = path.join(__dirname, '..')
const out = []
;(function walk(dir) {
  for (const entry of fs.readdirSync(dir, {withFileTypes: true}).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(dir, entry.name)
    if (entry.isDirectory()) walk(p)
    else if (entry.name.endsWith(ext)) out.push(path.relative(path.join(root, '..'), p))
  }
})(root)
process.stdout.write(out.join('\n') + '\n')
