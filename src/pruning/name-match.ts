/**
 * Tensor-name matching in time linear in the name: the globs of a sparsity map and the
 * regular expressions of `--include`, `--exclude` and `re:` rules.
 *
 * JavaScript's RegExp backtracks: `(a+)+$` takes exponential time on 30 characters, and even
 * `.*mlp.*proj.*` is quadratic on a long name. Names come from files, so neither may decide
 * how long a run takes. Here:
 * - a glob (`*` any run of characters, `?` one) is matched segment by segment, each at its
 *   leftmost place (which is enough for globs): O(name × pattern);
 * - a regular expression is compiled to a Thompson NFA and run as a Pike VM (every state
 *   advanced in step over the name, none revisited at one position): O(name × program).
 *   The syntax is JavaScript's without flags (the pattern is first checked by `new RegExp`
 *   for its error message), less what needs backtracking: backreferences and lookaround
 *   are refused with a one-line error. Captures are irrelevant to a yes/no match.
 */
import {UsageError} from '../errors.js'

/** What the name filters need of a matcher (RegExp has it too). */
export interface NameTest {
  test(name: string): boolean
}

/** The longest pattern accepted (characters), and the largest compiled program (instructions). */
export const MAX_PATTERN_CHARS = 1024
export const MAX_PROGRAM_SIZE = 4096

// ---------------------------------------------------------------------------------------
// Globs

/** A whole-name glob: `*` any run of characters (dots included), `?` one character. */
export function globMatcher(glob: string): NameTest {
  const parts = glob.split('*')
  const eq = (name: string, at: number, seg: string): boolean => {
    for (let i = 0; i < seg.length; i++) if (seg[i] !== '?' && seg[i] !== name[at + i]) return false
    return true
  }
  const find = (name: string, from: number, seg: string): number => {
    if (!seg.includes('?')) return name.indexOf(seg, from)
    for (let at = from; at + seg.length <= name.length; at++) if (eq(name, at, seg)) return at
    return -1
  }
  if (parts.length === 1) return {test: (name) => name.length === glob.length && eq(name, 0, glob)}
  const first = parts[0]
  const last = parts[parts.length - 1]
  const middle = parts.slice(1, -1).filter((p) => p !== '')
  return {
    test(name) {
      if (name.length < first.length + last.length || !eq(name, 0, first) || !eq(name, name.length - last.length, last)) return false
      const end = name.length - last.length
      let at = first.length
      for (const seg of middle) {
        const i = find(name, at, seg)
        if (i < 0 || i + seg.length > end) return false
        at = i + seg.length
      }
      return true
    },
  }
}

// ---------------------------------------------------------------------------------------
// Regular expressions: parser

/** A set of UTF-16 code units: sorted, disjoint [lo, hi] pairs, optionally complemented. */
interface CharSet {
  ranges: number[]
  negate: boolean
}

type Node =
  | {t: 'set'; set: CharSet}
  | {t: 'cat'; items: Node[]}
  | {t: 'alt'; items: Node[]}
  | {t: 'rep'; node: Node; min: number; max: number}
  | {t: 'assert'; kind: 'bol' | 'eol' | 'word' | 'nonword'}

const DIGIT = [0x30, 0x39]
const WORD = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a]
// JavaScript's \s: WhiteSpace and LineTerminator.
const SPACE = [0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff]
// What `.` does not match without the s flag.
const LINE_TERMINATORS = [0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029]

function inRanges(r: number[], c: number): boolean {
  for (let i = 0; i < r.length; i += 2) if (c >= r[i] && c <= r[i + 1]) return true
  return false
}

function setHas(s: CharSet, c: number): boolean {
  return inRanges(s.ranges, c) !== s.negate
}

function isWordChar(c: number): boolean {
  return inRanges(WORD, c)
}

class RegexParser {
  private i = 0
  private depth = 0
  constructor(
    private readonly src: string,
    private readonly refuse: (why: string) => never,
  ) {}

  parse(): Node {
    const n = this.alternation()
    if (this.i < this.src.length) this.refuse(`unexpected ${JSON.stringify(this.src[this.i])} at ${this.i}`)
    return n
  }

  private peek(): string | undefined {
    return this.src[this.i]
  }

  private alternation(): Node {
    const items = [this.sequence()]
    while (this.peek() === '|') {
      this.i++
      items.push(this.sequence())
    }
    return items.length === 1 ? items[0] : {t: 'alt', items}
  }

  private sequence(): Node {
    const items: Node[] = []
    while (this.i < this.src.length && this.peek() !== '|' && this.peek() !== ')') {
      const atom = this.atom()
      items.push(this.quantified(atom))
    }
    return items.length === 1 ? items[0] : {t: 'cat', items}
  }

  private quantified(atom: Node): Node {
    for (;;) {
      const c = this.peek()
      let min: number
      let max: number
      if (c === '*') [min, max] = [0, Infinity]
      else if (c === '+') [min, max] = [1, Infinity]
      else if (c === '?') [min, max] = [0, 1]
      else if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i))
        if (!m) return atom
        min = Number(m[1])
        max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3])
        if (min > 1000 || (max !== Infinity && max > 1000)) this.refuse('a counted repetition above 1000')
        this.i += m[0].length - 1
      } else return atom
      this.i++
      if (this.peek() === '?') this.i++ // lazy: the same yes/no answer
      atom = {t: 'rep', node: atom, min, max}
    }
  }

  private atom(): Node {
    const c = this.src[this.i++]
    switch (c) {
      case '.':
        return {t: 'set', set: {ranges: LINE_TERMINATORS, negate: true}}
      case '^':
        return {t: 'assert', kind: 'bol'}
      case '$':
        return {t: 'assert', kind: 'eol'}
      case '[':
        return {t: 'set', set: this.cls()}
      case '(': {
        if (this.src.startsWith('?=', this.i) || this.src.startsWith('?!', this.i) || this.src.startsWith('?<=', this.i) || this.src.startsWith('?<!', this.i)) {
          this.refuse('lookaround ((?=, (?!, (?<=, (?<!) is not supported')
        }
        if (this.src.startsWith('?:', this.i)) this.i += 2
        else if (this.src.startsWith('?<', this.i)) this.i = this.src.indexOf('>', this.i) + 1
        if (++this.depth > 100) this.refuse('groups nested more than 100 deep')
        const inner = this.alternation()
        this.depth--
        if (this.src[this.i++] !== ')') this.refuse('an unclosed group')
        return inner
      }
      case '\\':
        return this.escape(false)
      default:
        return {t: 'set', set: {ranges: [c.charCodeAt(0), c.charCodeAt(0)], negate: false}}
    }
  }

  /** After a backslash: a class escape, an assertion, or one character. */
  private escape(inClass: boolean): Node {
    const c = this.src[this.i++]
    const one = (code: number): Node => ({t: 'set', set: {ranges: [code, code], negate: false}})
    switch (c) {
      case 'd':
      case 'D':
        return {t: 'set', set: {ranges: DIGIT, negate: c === 'D'}}
      case 'w':
      case 'W':
        return {t: 'set', set: {ranges: WORD, negate: c === 'W'}}
      case 's':
      case 'S':
        return {t: 'set', set: {ranges: SPACE, negate: c === 'S'}}
      case 'b':
        return inClass ? one(0x08) : {t: 'assert', kind: 'word'}
      case 'B':
        if (inClass) return one(0x42)
        return {t: 'assert', kind: 'nonword'}
      case 't':
        return one(0x09)
      case 'n':
        return one(0x0a)
      case 'r':
        return one(0x0d)
      case 'v':
        return one(0x0b)
      case 'f':
        return one(0x0c)
      case '0':
        if (!/[0-9]/.test(this.src[this.i] ?? '')) return one(0)
        break
      case 'x': {
        const m = /^[0-9a-fA-F]{2}/.exec(this.src.slice(this.i, this.i + 2))
        if (m) {
          this.i += 2
          return one(parseInt(m[0], 16))
        }
        return one(0x78)
      }
      case 'u': {
        const m = /^[0-9a-fA-F]{4}/.exec(this.src.slice(this.i, this.i + 4))
        if (m) {
          this.i += 4
          return one(parseInt(m[0], 16))
        }
        return one(0x75)
      }
      case 'c': {
        const l = this.src.charCodeAt(this.i)
        if ((l >= 0x41 && l <= 0x5a) || (l >= 0x61 && l <= 0x7a)) {
          this.i++
          return one(l % 32)
        }
        this.i--
        return one(0x5c)
      }
      case 'k':
        if (!inClass && this.src[this.i] === '<') this.refuse('backreferences (\\k<name>) are not supported')
        return one(0x6b)
      case undefined:
        this.refuse('a trailing backslash')
    }
    if (/[0-9]/.test(c)) {
      if (!inClass) this.refuse(`backreferences (\\${c}) are not supported`)
      // In a class, \1 is an octal escape (legacy syntax): refuse rather than guess.
      this.refuse(`the octal escape \\${c} is not supported`)
    }
    return one(c.charCodeAt(0))
  }

  /** A character class, after its `[`. */
  private cls(): CharSet {
    let negate = false
    if (this.peek() === '^') {
      negate = true
      this.i++
    }
    const ranges: number[] = []
    const members: CharSet[] = []
    while (this.peek() !== ']') {
      if (this.i >= this.src.length) this.refuse('an unclosed character class')
      const lo = this.classAtom()
      if (typeof lo === 'number' && this.peek() === '-' && this.i + 1 < this.src.length && this.src[this.i + 1] !== ']') {
        this.i++
        const hi = this.classAtom()
        if (typeof hi !== 'number') this.refuse('a class escape as the end of a range')
        ranges.push(lo, hi as number)
      } else if (typeof lo === 'number') ranges.push(lo, lo)
      else members.push(lo)
    }
    this.i++
    if (members.length === 0) return {ranges, negate}
    // A class with \d, \W, ...: the union of its parts as an explicit table of the BMP.
    const all: number[] = []
    let start = -1
    for (let c = 0; c <= 0x10000; c++) {
      const has = c < 0x10000 && (inRanges(ranges, c) || members.some((m) => setHas(m, c)))
      if (has && start < 0) start = c
      if (!has && start >= 0) {
        all.push(start, c - 1)
        start = -1
      }
    }
    return {ranges: all, negate}
  }

  /** One class member: a code unit, or the set of a class escape (\d, \W, ...). */
  private classAtom(): number | CharSet {
    const c = this.src[this.i++]
    if (c !== '\\') return c.charCodeAt(0)
    const n = this.escape(true)
    if (n.t !== 'set') return this.refuse('an assertion inside a class')
    if (!n.set.negate && n.set.ranges.length === 2 && n.set.ranges[0] === n.set.ranges[1]) return n.set.ranges[0]
    return n.set
  }
}

// ---------------------------------------------------------------------------------------
// Regular expressions: program and Pike VM

const enum Op {
  Char,
  Split,
  Jmp,
  Assert,
  Match,
}

type Inst = {op: Op.Char; set: CharSet} | {op: Op.Split; x: number; y: number} | {op: Op.Jmp; x: number} | {op: Op.Assert; kind: 'bol' | 'eol' | 'word' | 'nonword'} | {op: Op.Match}

function compile(root: Node, refuse: (why: string) => never): Inst[] {
  const prog: Inst[] = []
  const emit = (i: Inst): number => {
    if (prog.length >= MAX_PROGRAM_SIZE) refuse(`it compiles to more than ${MAX_PROGRAM_SIZE} steps (simplify it, or use fewer counted repetitions)`)
    prog.push(i)
    return prog.length - 1
  }
  const gen = (n: Node): void => {
    switch (n.t) {
      case 'set':
        emit({op: Op.Char, set: n.set})
        return
      case 'assert':
        emit({op: Op.Assert, kind: n.kind})
        return
      case 'cat':
        for (const x of n.items) gen(x)
        return
      case 'alt': {
        const jumps: number[] = []
        for (let k = 0; k < n.items.length - 1; k++) {
          const split = emit({op: Op.Split, x: 0, y: 0})
          ;(prog[split] as {x: number}).x = prog.length
          gen(n.items[k])
          jumps.push(emit({op: Op.Jmp, x: 0}))
          ;(prog[split] as {y: number}).y = prog.length
        }
        gen(n.items[n.items.length - 1])
        for (const j of jumps) (prog[j] as {x: number}).x = prog.length
        return
      }
      case 'rep': {
        for (let k = 0; k < n.min; k++) gen(n.node)
        if (n.max === Infinity) {
          const split = emit({op: Op.Split, x: 0, y: 0})
          ;(prog[split] as {x: number}).x = prog.length
          gen(n.node)
          emit({op: Op.Jmp, x: split})
          ;(prog[split] as {y: number}).y = prog.length
        } else {
          const splits: number[] = []
          for (let k = n.min; k < n.max; k++) {
            const split = emit({op: Op.Split, x: 0, y: 0})
            ;(prog[split] as {x: number}).x = prog.length
            splits.push(split)
            gen(n.node)
          }
          for (const s of splits) (prog[s] as {y: number}).y = prog.length
        }
      }
    }
  }
  gen(root)
  emit({op: Op.Match})
  return prog
}

/** Whether `prog` matches anywhere in `s` (a Pike VM: O(|s| × |prog|) time, O(|prog|) memory). */
function run(prog: Inst[], s: string): boolean {
  const n = s.length
  const mark = new Int32Array(prog.length)
  let gen = 0
  let cur: number[] = []
  let next: number[] = []
  const work: number[] = []
  const assertHolds = (kind: string, pos: number): boolean => {
    if (kind === 'bol') return pos === 0
    if (kind === 'eol') return pos === n
    const before = pos > 0 && isWordChar(s.charCodeAt(pos - 1))
    const after = pos < n && isWordChar(s.charCodeAt(pos))
    return (before !== after) === (kind === 'word')
  }
  /** Follow the empty moves from `pc` at `pos`, adding the Char states to `list`; true on Match. */
  const add = (list: number[], pc: number, pos: number): boolean => {
    work.push(pc)
    while (work.length > 0) {
      const p = work.pop()!
      if (mark[p] === gen) continue
      mark[p] = gen
      const inst = prog[p]
      switch (inst.op) {
        case Op.Match:
          work.length = 0
          return true
        case Op.Jmp:
          work.push(inst.x)
          break
        case Op.Split:
          work.push(inst.y, inst.x)
          break
        case Op.Assert:
          if (assertHolds(inst.kind, pos)) work.push(p + 1)
          break
        default:
          list.push(p)
      }
    }
    return false
  }
  gen++
  if (add(cur, 0, 0)) return true
  for (let pos = 0; pos < n; pos++) {
    const c = s.charCodeAt(pos)
    gen++
    next.length = 0
    for (const pc of cur) {
      if (setHas((prog[pc] as {set: CharSet}).set, c) && add(next, pc + 1, pos + 1)) return true
    }
    // Unanchored: a match may also start at the next position.
    if (add(next, 0, pos + 1)) return true
    ;[cur, next] = [next, cur]
  }
  return false
}

/**
 * Compile a user's regular expression (unanchored, no flags) to a linear-time matcher.
 * `where` names the flag or file in the one-line UsageError for a bad or unsupported pattern.
 */
export function regexMatcher(source: string, where: string): NameTest {
  const refuse = (why: string): never => {
    throw new UsageError('bad-pattern', `${where}: the regular expression ${JSON.stringify(source.length > 60 ? source.slice(0, 60) + '…' : source)} ${why}`, 'write it without backreferences or lookaround (names are matched in linear time), or use a glob')
  }
  if (source.length > MAX_PATTERN_CHARS) refuse(`is ${source.length} characters long; at most ${MAX_PATTERN_CHARS} are accepted`)
  try {
    // NOTE: compiled (never run) for JavaScript's own syntax check and message.
    void new RegExp(source)
  } catch (error) {
    refuse(`is not valid: ${(error as Error).message}`)
  }
  const prog = compile(new RegexParser(source, (why) => refuse(`is not supported: ${why}`)).parse(), refuse)
  return {test: (name: string) => run(prog, name)}
}
