import {Args} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {completionScript, setupLines, SHELLS, type Shell} from '../cli/completion.js'
import {UsageError} from '../errors.js'

export interface AutocompleteResult {
  shell: Shell
  /** The completion script, as printed without --json. */
  script: string
}

export default class Autocomplete extends BaseCommand<typeof Autocomplete> {
  static summary = 'Print the shell completion script for bash, zsh or fish.'

  static description = `The script completes command names, flags, the values of flags that take one of a fixed set (--format csr or dense, --device, --dtype, --from, ...), and file names for the inputs and for flags that name a file (-o, --sparsity-map, --csv, ...). It is made from the commands' own definitions, so regenerate it after an upgrade (sourcing it from the shell's start-up file does that by itself, for about half a second per new shell). Without SHELL, the shell is the one $SHELL names.`

  static examples = [
    {description: 'bash: load the completion in every new shell', command: "echo 'source <(<%= config.bin %> autocomplete bash)' >> ~/.bashrc"},
    {description: 'bash with the bash-completion package: save it where that loads it on first use', command: '<%= config.bin %> autocomplete bash > ~/.local/share/bash-completion/completions/<%= config.bin %>'},
    {description: 'zsh: save it on your fpath (fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc)', command: '<%= config.bin %> autocomplete zsh > ~/.zfunc/_<%= config.bin %>'},
    {description: 'fish', command: '<%= config.bin %> autocomplete fish > ~/.config/fish/completions/<%= config.bin %>.fish'},
  ]

  static args = {
    shell: Args.string({description: 'the shell (default: the one $SHELL names)', options: [...SHELLS]}),
  }

  public async run(): Promise<AutocompleteResult> {
    const {args} = await this.parse(Autocomplete)
    const shell = (args.shell as Shell | undefined) ?? shellOf(process.env.SHELL)
    const script = completionScript(shell, this.config.bin, this.config.version, this.config.commands)
    if (!this.json) {
      process.stdout.write(script)
      // Typed at a prompt (as the instructions of earlier versions were): say what to do with it.
      if (process.stdout.isTTY) this.note(`# that is the ${shell} completion script. ${setupLines(shell, this.config.bin).join('; ')}`)
    }
    return {shell, script}
  }
}

/** The shell that $SHELL names (/bin/zsh -> zsh). */
function shellOf(path: string | undefined): Shell {
  const name = (path ?? '').split('/').pop() ?? ''
  const shell = SHELLS.find((s) => s === name)
  if (shell === undefined) {
    throw new UsageError('unknown-shell', `cannot tell the shell from SHELL=${path || '(unset)'}`, `name it: sparse autocomplete ${SHELLS.join(', ')}`)
  }
  return shell
}
