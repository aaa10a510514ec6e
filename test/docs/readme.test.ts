/**
 * The README is the front door: short, its Quick start the very commands CI runs, and
 * every link in it and in the reference pages leads somewhere.
 */
import {expect} from 'chai'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {dirname, join, relative} from 'node:path'

import {ROOT} from '../helpers/cli.js'

const README = readFileSync(join(ROOT, 'README.md'), 'utf8')

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const m = !fenced && /^#{1,6} (.*)$/.exec(line)
    if (!m) continue
    const base = slug(m[1])
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

/** Relative links `[text](target)` outside code, as [target path, anchor]. */
function links(markdown: string): Array<[string, string]> {
  const out: Array<[string, string]> = []
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '')
  for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]
    if (/^[a-z]+:/i.test(target)) continue
    const [path, anchor = ''] = target.split('#')
    out.push([path, anchor])
  }
  return out
}

describe('README.md and the reference pages', () => {
  it('the README stays a front door: at most 250 lines', () => {
    expect(README.split('\n').length).to.be.at.most(250)
  })

  it('the Quick start shows exactly the two commands CI runs', () => {
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8').split('\n')
    const first = ci[ci.findIndex((l) => l.includes('Quick start 1')) + 1]
    expect(first).to.match(/^npm ci && /)
    expect(ci.some((l) => /^npm test\b/.test(l))).to.equal(true)
    const block = /## Quick start\n\n```sh\n([\s\S]*?)```/.exec(README)
    expect(block, 'a ```sh block right under "## Quick start"').to.not.equal(null)
    expect(block![1].trim().split('\n')).to.deep.equal([first, 'npm test'])
  })

  it('every relative link in README.md, BENCHMARKS.md and docs/ leads to a file, and to a heading there', () => {
    const pages = ['README.md', 'BENCHMARKS.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))]
    const broken: string[] = []
    for (const page of pages) {
      const text = readFileSync(join(ROOT, page), 'utf8')
      for (const [path, anchor] of links(text)) {
        const file = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), path)
        if (!existsSync(file)) {
          broken.push(`${page}: ${path} does not exist`)
          continue
        }
        if (anchor && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor)) {
          broken.push(`${page}: ${relative(ROOT, file)} has no heading #${anchor}`)
        }
      }
    }
    expect(broken).to.deep.equal([])
  })

  it('makes anchors the way GitHub does', () => {
    expect(slug('`sparse verify`')).to.equal('sparse-verify')
    expect(slug('SpMM kernel variants and how one is chosen')).to.equal('spmm-kernel-variants-and-how-one-is-chosen')
    expect(slug('`sparse prune INPUT [-s S] [-o OUT] [flags]`')).to.equal('sparse-prune-input--s-s--o-out-flags')
    expect([...anchors('# A\n## A\n```\n# not a heading\n```\n')]).to.deep.equal(['a', 'a-1'])
  })
})
