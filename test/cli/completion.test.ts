/**
 * `sparse autocomplete SHELL`: the scripts are generated from the commands' definitions
 * (oclif.manifest.json), and each shell is driven for real: bash through its completion
 * function (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT in, COMPREPLY out), zsh in a
 * pseudo-terminal (zpty) with compadd recording the matches, fish through `complete -C`.
 */
import {spawnSync} from 'node:child_process'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {makeTmp} from '../formats/helpers.js'
import {ROOT, runCli} from '../helpers/cli.js'

interface ManifestFlag {
  type: 'boolean' | 'option'
  options?: string[]
  hidden?: boolean
}
const manifest = JSON.parse(readFileSync(join(ROOT, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, {hidden?: boolean; flags: Record<string, ManifestFlag>}>}

/** Every visible flag with a fixed set of values, as `[command, flag, values]`. */
const withOptions = Object.entries(manifest.commands)
  .filter(([, c]) => !c.hidden)
  .flatMap(([id, c]) => Object.entries(c.flags).flatMap(([name, f]) => (f.options && !f.hidden ? [[id, name, f.options] as const] : [])))

function has(shell: string): boolean {
  return spawnSync(shell, ['-c', 'exit 0']).status === 0
}

/** How bash (readline) cuts a line into COMP_WORDS: at blanks, and '=' and ':' alone. */
function bashWords(line: string): string[] {
  const words: string[] = []
  let cur = ''
  for (const c of line) {
    if (c === ' ') {
      if (cur !== '') words.push(cur)
      cur = ''
    } else if (c === '=' || c === ':') {
      if (cur !== '') words.push(cur)
      words.push(c)
      cur = ''
    } else cur += c
  }
  if (cur !== '' || line.endsWith(' ')) words.push(cur)
  return words
}

/** Quotes a word for bash. */
const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`

describe('shell completion: sparse autocomplete SHELL', function () {
  this.timeout(120_000)
  const tmp = makeTmp('sparse-completion-')
  after(tmp.cleanup)
  const scripts: Record<string, string> = {}

  before(async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const r = await runCli(['autocomplete', shell])
      expect(r.code, r.stderr).to.equal(0)
      scripts[shell] = r.stdout
    }
  })

  it('the manifest has flags with fixed values to complete (the test below is not empty)', () => {
    expect(withOptions.map(([id, name]) => `${id} --${name}`)).to.include.members(['prune --format', 'bench --device', 'convert --to', 'verify --op'])
  })

  describe('bash', () => {
    before(function () {
      if (!has('bash')) this.skip()
    })

    /** COMPREPLY for each line (the cursor at its end), from one bash process. */
    function complete(lines: string[]): string[][] {
      const file = join(tmp.dir, 'sparse.bash')
      writeFileSync(file, scripts.bash)
      const calls = lines.map((line) => {
        const words = bashWords(line)
        return [
          `COMP_LINE=${q(line)}; COMP_POINT=${line.length}; COMP_WORDS=(${words.map(q).join(' ')}); COMP_CWORD=${words.length - 1}`,
          `_sparse sparse "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"`,
          `printf '%s\\n' "\${COMPREPLY[@]}"; echo '--end--'`,
        ].join('\n')
      })
      const r = spawnSync('bash', ['--norc', '--noprofile', '-c', `source ${q(file)}\n${calls.join('\n')}`], {cwd: ROOT, encoding: 'utf8'})
      expect(r.status, r.stderr).to.equal(0)
      expect(r.stderr).to.equal('')
      const out = r.stdout.split('--end--\n')
      return lines.map((_, i) => out[i].split('\n').filter((w) => w !== ''))
    }

    it('the script is registered for sparse and bash accepts it', () => {
      expect(scripts.bash).to.match(/^complete -F _sparse sparse$/m)
      const r = spawnSync('bash', ['-n'], {input: scripts.bash, encoding: 'utf8'})
      expect(r.status, r.stderr).to.equal(0)
    })

    it('command names, flags, the values of --format, files after -o, nothing after -s', () => {
      const [commands, pr, format, formatEq, flags, to, toAfterColon, output, input, sparsity, shells] = complete([
        'sparse ',
        'sparse pr',
        'sparse prune w.npy --format ',
        'sparse prune w.npy --format=d',
        'sparse prune w.npy --for',
        'sparse convert w.npy -o w.npz --to ',
        'sparse convert w.npy -o w.npz --to 2:',
        'sparse prune w.npy -o fixtures/tiny-m',
        'sparse info fixtures/hf-t',
        'sparse prune w.npy -s ',
        'sparse autocomplete ',
      ])
      expect(commands).to.include.members(['prune', 'bench', 'info', 'verify', 'convert', 'reorder', 'version', 'autocomplete'])
      expect(pr).to.deep.equal(['prune'])
      expect(format).to.deep.equal(['csr', 'dense'])
      expect(formatEq).to.deep.equal(['dense'])
      expect(flags).to.deep.equal(['--format', '--force'])
      expect(to).to.deep.equal(['csr', 'dense', 'smtx', '2:4'])
      // Readline replaces only what follows the ':' (a word-break character).
      expect(toAfterColon).to.deep.equal(['4'])
      expect(output).to.deep.equal(['fixtures/tiny-mlp.safetensors'])
      expect(input).to.deep.equal(['fixtures/hf-tiny'])
      expect(sparsity).to.deep.equal([])
      expect(shells).to.deep.equal(['bash', 'zsh', 'fish'])
    })

    it('every flag with a fixed set of values offers exactly that set (from the manifest)', () => {
      const got = complete(withOptions.map(([id, name]) => `sparse ${id} x --${name} `))
      withOptions.forEach(([id, name, values], i) => expect(got[i], `${id} --${name}`).to.deep.equal(values))
    })
  })

  describe('zsh', () => {
    before(function () {
      if (!has('zsh')) this.skip()
    })

    /** The matches zsh offers for `line`: the script autoloaded from fpath, TAB pressed in a pseudo-terminal. */
    function complete(line: string): string[] {
      const dir = join(tmp.dir, 'zfunc')
      mkdirSync(dir, {recursive: true})
      writeFileSync(join(dir, '_sparse'), scripts.zsh)
      const driver = join(tmp.dir, 'drive.zsh')
      writeFileSync(
        driver,
        `zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z "PROMPT= RPROMPT= fpath=(\${(q)1} \\$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'compadd () {
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd "$@"; return $?; fi
  local -a hits; builtin compadd -A hits "$@"; local ret=$?
  (( $#hits )) && builtin print -rl -- "" \${hits/#/MATCH:}
  return ret
}'
zpty -w z "bindkey '^I' complete-word; capture-done() { builtin print -r -- END''-OF-CAPTURE }; zle -N capture-done; bindkey '^X' capture-done"
zpty -n -w z "$2"$'\\t\\C-X'
zpty -r z out '*END-OF-CAPTURE*' || exit 4
zpty -d z
print -r -- "$out"
`,
      )
      const r = spawnSync('zsh', ['-f', driver, dir, line], {cwd: ROOT, encoding: 'utf8', timeout: 30_000})
      expect(r.status, r.stderr).to.equal(0)
      return [...new Set(r.stdout.split(/\r?\n/).flatMap((l) => (l.startsWith('MATCH:') ? [l.slice(6).replace(/\r$/, '')] : [])))].sort()
    }

    it('zsh accepts the script', () => {
      const r = spawnSync('zsh', ['-n'], {input: scripts.zsh, encoding: 'utf8'})
      expect(r.status, r.stderr).to.equal(0)
    })

    it('command names, the values of --format and --to (2:4), files after -o', () => {
      expect(complete('sparse pr')).to.deep.equal(['prune'])
      expect(complete('sparse prune w.npy --format ')).to.deep.equal(['csr', 'dense'])
      expect(complete('sparse convert w.npy --to ')).to.deep.equal(['2:4', 'csr', 'dense', 'smtx'])
      expect(complete('sparse prune w.npy -o fixtures/tiny-m')).to.deep.equal(['tiny-mlp.safetensors'])
    })
  })

  describe('fish', () => {
    before(function () {
      if (!has('fish')) this.skip()
    })

    function complete(line: string): string[] {
      const file = join(tmp.dir, 'sparse.fish')
      writeFileSync(file, scripts.fish)
      const r = spawnSync('fish', ['--no-config', '-c', `source ${q(file)}; complete -C ${q(line)}`], {cwd: ROOT, encoding: 'utf8'})
      expect(r.status, r.stderr).to.equal(0)
      return r.stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.split('\t')[0])
        .sort()
    }

    it('command names, the values of --format, files after -o', () => {
      expect(complete('sparse pr')).to.deep.equal(['prune'])
      expect(complete('sparse prune w.npy --format ')).to.deep.equal(['csr', 'dense'])
      expect(complete('sparse prune w.npy -o fixtures/tiny-m')).to.deep.equal(['fixtures/tiny-mlp.safetensors'])
      expect(complete('sparse prune w.npy -s ')).to.deep.equal([])
    })
  })

  it('the shell comes from $SHELL when not given; an unknown one is exit 2; --json gives {shell, script}', async () => {
    const z = await runCli(['autocomplete'], {env: {SHELL: '/usr/bin/zsh'}})
    expect(z.code, z.stderr).to.equal(0)
    expect(z.stdout).to.equal(scripts.zsh)
    const none = await runCli(['autocomplete'], {env: {SHELL: '/bin/tcsh'}})
    expect(none.code).to.equal(2)
    expect(none.stderr).to.match(/^error: cannot tell the shell from SHELL=\/bin\/tcsh \(name it: sparse autocomplete bash, zsh, fish\)\n$/)
    const j = await runCli(['autocomplete', 'fish', '--json'])
    expect(JSON.parse(j.stdout)).to.deep.equal({shell: 'fish', script: scripts.fish})
  })
})
