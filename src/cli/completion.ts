/**
 * Shell completion scripts (`sparse autocomplete SHELL`), generated from the commands' own
 * definitions (oclif's cached form, the one oclif.manifest.json holds), so a new command,
 * flag or flag option appears in them with no list to keep. They complete:
 * - command names, and flag names per command;
 * - the value of a flag with `options` (--format csr|dense, --device, --dtype, ...);
 * - file names after a flag whose `helpValue` is FILE or PATH (-o, --csv, --sparsity-map),
 *   folder names after one whose helpValue is DIR; nothing after other flags that take a value
 *   (a number, a regular expression);
 * - the positional arguments: an argument's `options` when it has some, command names for
 *   `help`, file names otherwise.
 * sparse has no topics: the command is the first word (as in hooks/command-not-found.ts).
 */
import type {Command} from '@oclif/core'

export const SHELLS = ['bash', 'zsh', 'fish'] as const
export type Shell = (typeof SHELLS)[number]

/** What a flag's value completes to: a fixed set, file or folder names, or nothing to offer. */
export type ValueCompletion = {values: string[]} | 'file' | 'dir' | 'none'

export interface CompletionFlag {
  /** The long name, without dashes. */
  name: string
  /** Other long names (oclif `aliases`, e.g. --value-dtype for --dtype). */
  aliases: string[]
  /** The one-letter name, if any. */
  char?: string
  /** A boolean with a --no- form. */
  negatable: boolean
  /** null for a boolean. */
  value: ValueCompletion | null
  multiple: boolean
  summary: string
}

export interface CompletionCommand {
  id: string
  summary: string
  flags: CompletionFlag[]
  /** What the positional arguments complete to ('commands': the command names, for help). */
  args: ValueCompletion | 'commands'
}

/** helpValue (the name shown as `--csv=FILE` in the help) of flags that take a path. */
const FILE_HELP_VALUES = new Set(['FILE', 'PATH'])
const DIR_HELP_VALUES = new Set(['DIR'])

/** The visible commands (and their aliases), sorted, as completion sees them. */
export function completionCommands(commands: readonly Command.Loadable[], bin: string): CompletionCommand[] {
  const out: CompletionCommand[] = []
  for (const c of commands) {
    if (c.hidden) continue
    const flags = Object.entries(c.flags ?? {})
      .filter(([, f]) => !f.hidden)
      .map(([name, f]) => completionFlag(name, f))
    // oclif adds --help to every command without declaring it.
    if (!flags.some((f) => f.name === 'help')) flags.push({name: 'help', aliases: [], negatable: false, value: null, multiple: false, summary: 'show help'})
    const args = Object.values(c.args ?? {}).filter((a) => !a.hidden)
    // NOTE: one completion for every position: each command has at most one kind of argument.
    const first = args[0]
    const argCompletion: CompletionCommand['args'] = c.id === 'help' ? 'commands' : first === undefined ? 'none' : first.options?.length ? {values: [...first.options]} : 'file'
    const summary = short(template(c.summary ?? c.description ?? '', bin))
    for (const id of [c.id, ...(c.aliases ?? [])]) out.push({id: id.replaceAll(':', ' '), summary, flags, args: argCompletion})
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}

function completionFlag(name: string, f: Command.Flag.Cached): CompletionFlag {
  const base = {name, aliases: [...(f.aliases ?? [])], char: f.char, summary: short(f.summary ?? f.description ?? '')}
  if (f.type === 'boolean') return {...base, negatable: f.allowNo === true, value: null, multiple: false}
  const help = typeof f.helpValue === 'string' ? f.helpValue : undefined
  const value: ValueCompletion = f.options?.length
    ? {values: [...f.options]}
    : help !== undefined && FILE_HELP_VALUES.has(help)
      ? 'file'
      : help !== undefined && DIR_HELP_VALUES.has(help)
        ? 'dir'
        : 'none'
  return {...base, negatable: false, value, multiple: f.multiple === true}
}

/** The completion script for `shell`. */
export function completionScript(shell: Shell, bin: string, version: string, commands: readonly Command.Loadable[]): string {
  const cmds = completionCommands(commands, bin)
  if (shell === 'bash') return bashScript(bin, version, cmds)
  if (shell === 'zsh') return zshScript(bin, version, cmds)
  return fishScript(bin, version, cmds)
}

/** How each shell loads the script, for the script's head and the command's help. */
export function setupLines(shell: Shell, bin: string): string[] {
  switch (shell) {
    case 'bash':
      return [
        `Load it in every new shell: echo 'source <(${bin} autocomplete bash)' >> ~/.bashrc`,
        `or save it where bash-completion finds it: ${bin} autocomplete bash > ~/.local/share/bash-completion/completions/${bin}`,
      ]
    case 'zsh':
      return [
        `Load it in every new shell (after compinit in ~/.zshrc): source <(${bin} autocomplete zsh)`,
        `or save it on your fpath, before compinit runs: ${bin} autocomplete zsh > ~/.zfunc/_${bin} with fpath=(~/.zfunc $fpath) in ~/.zshrc`,
      ]
    case 'fish':
      return [`Save it where fish finds it: ${bin} autocomplete fish > ~/.config/fish/completions/${bin}.fish`]
  }
}

function head(shell: Shell, bin: string, version: string): string[] {
  return [
    `${shell} completion for ${bin} ${version}, made by \`${bin} autocomplete ${shell}\` from its commands' definitions`,
    '(regenerate it after an upgrade, for new commands, flags and values).',
    ...setupLines(shell, bin),
  ].map((l) => `# ${l}`)
}

// ---------------------------------------------------------------------------------------
// bash

function bashScript(bin: string, version: string, cmds: CompletionCommand[]): string {
  const fn = `_${identifier(bin)}`
  const ids = cmds.map((c) => sq(c.id)).join(' ')
  const valueCases: string[] = []
  const flagCases: string[] = []
  const argCases = new Map<string, string[]>()
  for (const c of cmds) {
    const names: string[] = []
    for (const f of c.flags) {
      names.push(`--${f.name}`)
      if (f.negatable) names.push(`--no-${f.name}`)
      if (f.value === null) continue
      const spellings = [`--${f.name}`, ...f.aliases.map((a) => `--${a}`), ...(f.char ? [`-${f.char}`] : [])]
      valueCases.push(`    ${spellings.map((s) => sq(`${c.id} ${s}`)).join('|')}) ${bashValues(fn, f.value)} ;;`)
    }
    flagCases.push(`    ${sq(c.id)}) ${fn}_add "$2" ${names.map(sq).join(' ')} ;;`)
    if (c.args !== 'none') {
      const action = c.args === 'commands' ? `${fn}_add "$2" ${ids}` : bashValues(fn, c.args, '$2')
      argCases.set(action, [...(argCases.get(action) ?? []), sq(c.id)])
    }
  }
  return `${head('bash', bin, version).join('\n')}

${fn}() {
  local cur prev cmd flag= value=
  local -a words=()
  ${fn}_words
  cur=\${words[\${#words[@]}-1]}
  COMPREPLY=()
  if ((\${#words[@]} == 2)); then
    if [[ $cur == -* ]]; then
      ${fn}_add "$cur" --help --version
    else
      ${fn}_add "$cur" ${ids}
    fi
    ${fn}_ltrim "$cur"
    return 0
  fi
  cmd=\${words[1]}
  prev=\${words[\${#words[@]}-2]}
  if [[ $cur == --*=* ]]; then
    flag=\${cur%%=*}
    value=\${cur#*=}
  elif [[ $prev == -?* ]]; then
    flag=$prev
    value=$cur
  fi
  if [[ -n $flag ]] && ${fn}_value "$cmd" "$flag" "$value"; then
    ${fn}_ltrim "$value"
    return 0
  fi
  if [[ $cur == -* ]]; then
    ${fn}_flags "$cmd" "$cur"
  else
    ${fn}_args "$cmd" "$cur"
  fi
  ${fn}_ltrim "$cur"
  return 0
}

# The value of flag $2 of command $1, from $3; status 1 when that flag takes no value.
${fn}_value() {
  case "$1 $2" in
${valueCases.join('\n')}
    *) return 1 ;;
  esac
  return 0
}

# The flags of command $1 that start with $2.
${fn}_flags() {
  case "$1" in
${flagCases.join('\n')}
  esac
}

# The positional arguments of command $1 that start with $2.
${fn}_args() {
  case "$1" in
${[...argCases].map(([action, names]) => `    ${names.join('|')}) ${action} ;;`).join('\n')}
  esac
}

# The words among $2... that start with $1 (compared as text: nothing is expanded).
${fn}_add() {
  local cur=$1 w
  shift
  for w in "$@"; do
    [[ $w == "$cur"* ]] && COMPREPLY+=("$w")
  done
  return 0
}

# File (or, with -d, folder) names that start with $1, quoted as file names.
${fn}_files() {
  local kind=-f f
  if [[ $1 == -d ]]; then
    kind=-d
    shift
  fi
  while IFS= read -r f; do
    COMPREPLY+=("$f")
  done < <(compgen "$kind" -- "$1")
  compopt -o filenames 2>/dev/null
  return 0
}

# The words up to the cursor as typed. Bash also splits words at the characters of
# COMP_WORDBREAKS ('--format=csr' and '2:4' arrive in three pieces each): pieces with no
# space between them are joined again.
${fn}_words() {
  local line=\${COMP_LINE:0:COMP_POINT} rest w i
  for ((i = 0; i <= COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    rest=\${line#"\${line%%[![:space:]]*}"}
    # The current word ends at the cursor.
    ((i == COMP_CWORD)) && w=$rest
    if ((i > 0 && \${#rest} == \${#line})); then
      words[\${#words[@]}-1]+=$w
    else
      words+=("$w")
    fi
    line=\${rest#"$w"}
  done
}

# Readline replaces only the text after the last word-break character (':' and '=' by
# default) of the word $1, so each reply loses what comes before it ('2:4' -> '4').
${fn}_ltrim() {
  local word=$1 pre= c i
  for ((i = \${#word} - 1; i >= 0; i--)); do
    c=\${word:i:1}
    if [[ $c != [[:space:]] && $COMP_WORDBREAKS == *"$c"* ]]; then
      pre=\${word:0:i+1}
      break
    fi
  done
  [[ -z $pre ]] && return 0
  for i in "\${!COMPREPLY[@]}"; do
    COMPREPLY[i]=\${COMPREPLY[i]#"$pre"}
  done
  return 0
}

complete -F ${fn} ${bin}
`
}

function bashValues(fn: string, value: ValueCompletion, word = '$3'): string {
  if (value === 'file') return `${fn}_files "${word}"`
  if (value === 'dir') return `${fn}_files -d "${word}"`
  if (value === 'none') return ':'
  return `${fn}_add "${word}" ${value.values.map(sq).join(' ')}`
}

// ---------------------------------------------------------------------------------------
// zsh

function zshScript(bin: string, version: string, cmds: CompletionCommand[]): string {
  const fn = `_${identifier(bin)}`
  const commandList = cmds.map((c) => `        ${sq(`${c.id.replaceAll(':', '\\:')}:${c.summary}`)}`).join('\n')
  const cases = cmds.map((c) => {
    const specs = c.flags.flatMap((f) => zshFlagSpecs(f))
    if (c.args !== 'none') {
      const action = c.args === 'commands' ? zshAction({values: cmds.map((x) => x.id)}) : zshAction(c.args)
      specs.push(sq(`*:${c.args === 'commands' ? 'command' : 'argument'}:${action}`))
    }
    return `        (${zshWord(c.id)})\n          _arguments -s -S \\\n            ${specs.join(' \\\n            ')} && ret=0\n          ;;`
  })
  return `#compdef ${bin}
${head('zsh', bin, version).join('\n')}

${fn}() {
  local curcontext=$curcontext state line ret=1
  _arguments -C \\
    '(- :)--help[show help]' \\
    '(- :)--version[show the version]' \\
    '1: :->command' \\
    '*:: :->args' && ret=0
  case $state in
    command)
      local -a commands=(
${commandList}
      )
      _describe -t commands '${bin} command' commands && ret=0
      ;;
    args)
      curcontext=\${curcontext%:*:*}:${bin}-$words[1]:
      case $words[1] in
${cases.join('\n')}
      esac
      ;;
  esac
  return ret
}

# Autoloaded from fpath (the file is the function's body), or sourced.
if [[ $funcstack[1] == ${fn} ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${bin}
fi
`
}

/** _arguments specs of one flag: each spelling, excluding the others. */
function zshFlagSpecs(f: CompletionFlag): string[] {
  const desc = `[${zshEscape(f.summary)}]`
  if (f.value === null) {
    const names = [`--${f.name}`, ...(f.char ? [`-${f.char}`] : []), ...(f.negatable ? [`--no-${f.name}`] : [])]
    const exclude = names.length > 1 ? `(${names.join(' ')})` : ''
    return names.map((n) => sq(`${exclude}${n}${n.startsWith('--no-') ? `[${zshEscape(`the opposite of --${f.name}`)}]` : desc}`))
  }
  const longs = [f.name, ...f.aliases].map((n) => `--${n}`)
  const names = [...longs, ...(f.char ? [`-${f.char}`] : [])]
  const exclude = f.multiple ? '*' : names.length > 1 ? `(${names.join(' ')})` : ''
  const tail = `:${zshEscape(f.name)}:${zshAction(f.value)}`
  // '--name=': the value in the same word after '=' or as the next word; '-c+': right after the letter or as the next word.
  return names.map((n) => sq(`${exclude}${n}${n.startsWith('--') ? '=' : '+'}${desc}${tail}`))
}

function zshAction(value: ValueCompletion): string {
  if (value === 'file') return '_files'
  if (value === 'dir') return '_files -/'
  if (value === 'none') return ' '
  return `(${value.values.map(zshWord).join(' ')})`
}

/** A word inside a zsh (...) list or case pattern: colons, spaces and parentheses escaped. */
function zshWord(s: string): string {
  return s.replace(/[\\:\s()[\]|'"`$]/g, '\\$&')
}

/** Text inside the [...] of a spec. */
function zshEscape(s: string): string {
  return s.replace(/[\\[\]:]/g, '\\$&')
}

// ---------------------------------------------------------------------------------------
// fish

function fishScript(bin: string, version: string, cmds: CompletionCommand[]): string {
  const c0 = `complete -c ${bin}`
  const lines = [
    ...head('fish', bin, version),
    '',
    '# No file names unless a command or flag asks for them.',
    `${c0} -f`,
    `${c0} -n __fish_use_subcommand -l help -d 'show help'`,
    `${c0} -n __fish_use_subcommand -l version -d 'show the version'`,
    ...cmds.map((c) => `${c0} -n __fish_use_subcommand -a ${fq(c.id)} -d ${fq(c.summary)}`),
  ]
  for (const c of cmds) {
    const when = `${c0} -n ${fq(`__fish_seen_subcommand_from ${c.id}`)}`
    lines.push('', `# ${c.id}`)
    for (const f of c.flags) {
      const names = [f.name, ...f.aliases].map((n) => `-l ${fq(n)}`).join(' ') + (f.char ? ` -s ${fq(f.char)}` : '')
      lines.push(`${when} ${names}${f.value === null ? '' : ' ' + fishValue(f.value)} -d ${fq(f.summary)}`)
      if (f.negatable) lines.push(`${when} -l ${fq(`no-${f.name}`)} -d ${fq(`the opposite of --${f.name}`)}`)
    }
    if (c.args === 'commands') lines.push(`${when} -a ${fq(cmds.map((x) => x.id).join(' '))}`)
    else if (c.args !== 'none') lines.push(`${when} ${c.args === 'file' ? '-F' : fishValue(c.args)}`)
  }
  return lines.join('\n') + '\n'
}

function fishValue(value: ValueCompletion): string {
  if (value === 'file') return '-r -F'
  if (value === 'dir') return "-x -a '(__fish_complete_directories)'"
  if (value === 'none') return '-x'
  return `-x -a ${fq(value.values.map((v) => v.replace(/[\\\s'"()$*?[\]{}|;&<>#~]/g, '\\$&')).join(' '))}`
}

// ---------------------------------------------------------------------------------------
// text

/** A single-quoted word for bash and zsh. */
function sq(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`
}

/** A single-quoted word for fish (which escapes \\ and ' inside quotes). */
function fq(s: string): string {
  return `'${s.replace(/[\\']/g, '\\$&')}'`
}

/** A name usable in a shell function's name. */
function identifier(s: string): string {
  return s.replace(/[^A-Za-z0-9_]/g, '_')
}

/** oclif's one template variable in plugin texts ('Display help for <%= config.bin %>.'). */
function template(s: string, bin: string): string {
  return s.replace(/<%=\s*config\.bin\s*%>/g, bin)
}

/**
 * A description on one line for a completion menu: its first line, without the remarks in
 * parentheses, cut at the end of its first clause and at 80 characters.
 */
function short(s: string): string {
  let line = s.split('\n')[0].trim()
  for (let prev = ''; prev !== line; ) {
    prev = line
    line = line.replace(/ ?\([^()]*\)/g, '')
  }
  const cut = line.search(/; |\. /)
  const clause = (cut > 0 ? line.slice(0, cut) : line).replace(/\.$/, '')
  return clause.length > 80 ? clause.slice(0, 79).trimEnd() + '…' : clause
}
