/**
 * A small static scan of a TypeScript tree's import statements: which module imports which
 * (relative specifiers only, `.js` mapped back to the `.ts` source; type-only imports and
 * re-exports count, since a circle of types is still a circle of modules), and the import
 * cycles among them.
 */
import {readdirSync, readFileSync} from 'node:fs'
import {dirname, join, relative, resolve, sep} from 'node:path'

/** Every specifier a module names: `import ... from`, `export ... from`, `import 'x'`, `import('x')`. */
export function importSpecifiers(source: string): string[] {
  // Comments may mention `from '...'`; strip them first (strings with // are rare in import lines).
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  const out: string[] = []
  for (const m of code.matchAll(/\b(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]/g)) out.push(m[1])
  for (const m of code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1])
  return out
}

function posix(path: string): string {
  return path.split(sep).join('/')
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true, recursive: true})
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name))
}

/** The import graph of the `.ts` files under `root`: file -> files it imports (paths relative to root, with `/`). */
export function importGraph(root: string): Map<string, string[]> {
  const base = resolve(root)
  const graph = new Map<string, string[]>()
  for (const file of tsFiles(base)) {
    const deps = importSpecifiers(readFileSync(file, 'utf8'))
      .filter((s) => s.startsWith('.'))
      .map((s) => posix(relative(base, resolve(dirname(file), s.replace(/\.js$/, '.ts')))))
    graph.set(posix(relative(base, file)), [...new Set(deps)])
  }
  return graph
}

/**
 * The import cycles: each strongly connected group of two or more modules (or a module that
 * imports itself), as one example cycle through it, e.g. ['a.ts', 'b.ts', 'a.ts'].
 */
export function importCycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's strongly connected components (recursive: import chains are a few dozen deep at most).
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const groups: string[][] = []
  const visit = (v: string): void => {
    index.set(v, next)
    low.set(v, next)
    next++
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!))
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        group.push(w)
      } while (w !== v)
      if (group.length > 1 || (graph.get(v) ?? []).includes(v)) groups.push(group)
    }
  }
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v)
  return groups.map((g) => cycleThrough(graph, new Set(g)))
}

/** One cycle inside a strongly connected group, starting from its first module by name. */
function cycleThrough(graph: Map<string, string[]>, group: Set<string>): string[] {
  const start = [...group].sort()[0]
  // Breadth-first from start back to start, within the group: the shortest cycle through it.
  const parent = new Map<string, string>()
  const queue = [start]
  while (queue.length > 0) {
    const v = queue.shift()!
    for (const w of graph.get(v) ?? []) {
      if (!group.has(w)) continue
      if (w === start) {
        const path = [start]
        for (let u = v; u !== start; u = parent.get(u)!) path.unshift(u)
        path.unshift(start)
        return path
      }
      if (!parent.has(w)) {
        parent.set(w, v)
        queue.push(w)
      }
    }
  }
  return [start, start]
}
