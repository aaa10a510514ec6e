import {expect} from 'chai'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {ROOT} from './helpers/cli.js'
import {importCycles, importGraph, importSpecifiers} from './helpers/imports.js'

const SRC = join(ROOT, 'src')

describe('the module structure of src/', () => {
  it('has no import cycle (no module imports one that imports it back, types included)', () => {
    const cycles = importCycles(importGraph(SRC))
    expect(cycles.map((c) => c.join(' -> ')), 'import cycles under src/').to.deep.equal([])
  })

  it('keeps the bench types in one module that imports nothing else from src/bench', () => {
    const deps = importGraph(SRC).get('bench/types.ts')
    expect(deps, 'src/bench/types.ts').to.not.equal(undefined)
    expect(deps!.filter((d) => d.startsWith('bench/'))).to.deep.equal([])
  })

  it('keeps oclif out of the library core (only src/commands and src/cli import it)', () => {
    const offenders: string[] = []
    for (const file of importGraph(SRC).keys()) {
      if (file.startsWith('commands/') || file.startsWith('cli/')) continue
      if (importSpecifiers(readFileSync(join(SRC, file), 'utf8')).some((s) => s === 'oclif' || s.startsWith('@oclif/'))) offenders.push(file)
    }
    expect(offenders).to.deep.equal([])
  })
})

describe('the import scan (test helper)', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'imports-'))
  })
  afterEach(() => rmSync(dir, {recursive: true, force: true}))

  function tree(files: Record<string, string>): void {
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(dir, name, '..'), {recursive: true})
      writeFileSync(join(dir, name), text)
    }
  }

  it('reads every form of import and re-export, and ignores commented-out ones', () => {
    const specs = importSpecifiers(`
      import {a} from './a.js'
      import type {B} from "./b.js"
      import * as c from './c.js'
      import d, {e} from './d.js'
      import './side-effect.js'
      import {
        f,
        type G,
      } from './f.js'
      export {h} from './h.js'
      export type * from './i.js'
      export * as j from './j.js'
      const k = await import('./k.js')
      // import {x} from './commented.js'
      /* export {y} from './block-commented.js' */
      import chalk from 'chalk'
    `)
    expect(specs.sort()).to.deep.equal(['./a.js', './b.js', './c.js', './d.js', './f.js', './h.js', './i.js', './j.js', './k.js', './side-effect.js', 'chalk'].sort())
  })

  it('finds a two-module circle through a type-only import, a longer one across folders, and a self-import', () => {
    tree({
      'run.ts': "import {summary} from './summary.js'\nexport interface Report {}\n",
      'summary.ts': "import type {Report} from './run.js'\nexport const summary = 1\n",
      'x/a.ts': "export {b} from '../y/b.js'\n",
      'y/b.ts': "import {c} from './c.js'\nexport const b = c\n",
      'y/c.ts': "import {a} from '../x/a.js'\nexport const c = 1\n",
      'self.ts': "import {s} from './self.js'\nexport const s = 1\n",
      'leaf.ts': "import {summary} from './summary.js'\nexport const leaf = summary\n",
    })
    const cycles = importCycles(importGraph(dir)).map((c) => c.join(' -> ')).sort()
    expect(cycles).to.deep.equal(['run.ts -> summary.ts -> run.ts', 'self.ts -> self.ts', 'x/a.ts -> y/b.ts -> y/c.ts -> x/a.ts'])
  })

  it('finds none in a tree that only imports downwards', () => {
    tree({
      'run.ts': "import type {Report} from './types.js'\nimport {summary} from './summary.js'\n",
      'summary.ts': "import type {Report} from './types.js'\nexport const summary = 1\n",
      'types.ts': "import type {ValueDType} from '../outside.js'\nexport interface Report {}\n",
    })
    expect(importCycles(importGraph(dir))).to.deep.equal([])
  })
})
