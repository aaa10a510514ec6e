import {Command, Flags, Interfaces} from '@oclif/core'
import chalk from 'chalk'
import ora, {type Ora} from 'ora'

import {fromSystemError, isSparseError, SparseError} from '../errors.js'
import {escapeReport, escapeText} from '../formats/limits.js'
import {installSignalHandlers, markErrorReported} from './signals.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>

/**
 * The one base command. It owns:
 * - `--json`: the command's result object on stdout and nothing else;
 * - colour: off when stdout/stderr is not a terminal, with NO_COLOR, or with `--no-color`;
 * - stderr-only chatter: spinners, progress, tables (silent under `--json`);
 * - `catch()`: known errors become one line on stderr (or `{error}` JSON on stdout) with a
 *   documented exit code; a stack trace only when DEBUG is set.
 */
export abstract class BaseCommand<T extends typeof Command> extends Command {
  static enableJsonFlag = true

  static baseFlags = {
    color: Flags.boolean({
      allowNo: true,
      default: true,
      helpGroup: 'GLOBAL',
      description: 'Colour the terminal output (off when not a terminal or when NO_COLOR is set to a non-empty value).',
    }),
  }

  protected flags!: BaseFlags<T>

  private spinner?: Ora

  public async init(): Promise<void> {
    await super.init()
    // Colour decisions must precede parsing so that parse errors are coloured correctly too.
    const argv = this.argv
    if (colourOff(argv, process.env, process.stderr.isTTY === true)) chalk.level = 0
    const {flags} = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (this.ctor as typeof BaseCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    })
    this.flags = flags as BaseFlags<T>
    if (!this.flags.color) chalk.level = 0
    // (hardening) SIGINT/SIGTERM: remove temporary outputs, exit 130/143. See src/cli/signals.ts.
    installSignalHandlers({json: () => this.json, beforeExit: () => this.stopSpinner()})
  }

  /** True when output must be machine-readable JSON only. */
  protected get json(): boolean {
    return this.jsonEnabled()
  }

  /**
   * A line of human chatter on stderr; suppressed under --json. Like report(), control
   * characters are escaped (names in it come from files).
   */
  protected note(message: string): void {
    if (!this.json) process.stderr.write(escapeStyled(message, chalk.level > 0) + '\n')
  }

  /** Start (or retitle) the spinner; only on an interactive stderr with a known width. */
  protected spin(text: string): void {
    if (!spinnerAllowed(this.json, process.stderr)) return
    if (this.spinner) {
      this.spinner.text = text
      return
    }
    this.spinner = ora({text, stream: process.stderr, isSilent: this.json}).start()
  }

  protected stopSpinner(finalText?: string): void {
    if (!this.spinner) return
    if (finalText) this.spinner.succeed(finalText)
    else this.spinner.stop()
    this.spinner = undefined
  }

  /**
   * Write the human-readable report (tables, summaries) to stdout unless --json. Names from
   * files (tensor names, paths) are escaped where a command puts them in a line; here, other
   * control characters are escaped as a last line of defence, but the tool's own styling
   * (SGR colour codes, only while colour is on) is kept, so a terminal shows colour.
   */
  protected report(text: string): void {
    if (!this.json) process.stdout.write(escapeStyled(text.endsWith('\n') ? text : text + '\n', chalk.level > 0))
  }

  /**
   * The --json result. JSON.stringify leaves C1 controls and U+2028/2029 raw; they are
   * written as \\u escapes here (the same JSON value), so the output is safe on a terminal.
   */
  public logJson(json: unknown): void {
    process.stdout.write(jsonText(json) + '\n')
  }

  protected async catch(err: Error & {exitCode?: number; oclif?: {exit?: number}; code?: string}): Promise<unknown> {
    this.stopSpinner()
    let exitCode: number
    let code: string
    let message: string
    let suggestion: string | undefined
    // stdout closed by its reader (`| head`): stop quietly, as a cut-off text report does.
    if (isSparseError(err) && err.code === 'broken-pipe') {
      process.exitCode = 0
      this.exit(0)
    }
    // A system error that escaped the library's own handling: still one line, its own code.
    const mapped = fromSystemError(err, 'complete the operation')
    if (isSparseError(mapped) && !isSparseError(err)) err = Object.assign(mapped, {stack: err.stack})
    if (isSparseError(err)) {
      exitCode = err.exitCode
      code = err.code
      message = err.message
      suggestion = err.suggestion
    } else if (err.oclif?.exit !== undefined || err.name === 'CLIError' || /Parse|Flag|Arg/.test(err.constructor?.name ?? '')) {
      // oclif's own parse errors: bad usage.
      exitCode = err.oclif?.exit === 0 ? 0 : 2
      if (exitCode === 0) return
      code = 'usage'
      message = oneLine(err.message)
      suggestion = `see 'sparse ${this.id ?? ''} --help'`.replace('  ', ' ')
    } else {
      exitCode = 70
      code = 'internal'
      message = `internal error: ${firstLine(err.message)}`
      suggestion = 'please report this with DEBUG=1 output'
    }
    if (process.env.DEBUG && err.stack) process.stderr.write(err.stack + '\n')
    markErrorReported()
    if (this.json) {
      process.stdout.write(jsonText({error: {code, message, ...(suggestion ? {suggestion} : {}), exitCode}}) + '\n')
    } else {
      // One line, whatever the message holds (paths and names may carry control characters).
      const hint = suggestion ? ` (${escapeText(suggestion)})` : ''
      process.stderr.write(`${chalk.red('error:')} ${escapeText(message)}${hint}\n`)
    }
    process.exitCode = exitCode
    // oclif's execute() handles process exit; make sure it uses our code.
    this.exit(exitCode)
  }
}

/**
 * Whether spinners and progress may be drawn: never under --json, only when stderr is a terminal
 * that reports a width (ora loops forever on a TTY of 0 columns; see docs/development.md).
 */
export function spinnerAllowed(json: boolean, stderr: {isTTY?: boolean; columns?: number}): boolean {
  return !json && stderr.isTTY === true && (stderr.columns ?? 0) > 0
}

/**
 * Whether colour is off: --no-color, a NO_COLOR that is set and not empty (no-color.org: an
 * empty value does not count), or stderr not a terminal.
 */
export function colourOff(argv: readonly string[], env: NodeJS.ProcessEnv, stderrIsTTY: boolean): boolean {
  return argv.includes('--no-color') || (env.NO_COLOR ?? '') !== '' || !stderrIsTTY
}

/** chalk's styling: SGR sequences (ESC [ params m), the only escape sequences the tool writes itself. */
// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/g

/**
 * escapeReport for a report that may carry the tool's own colour: with `keepStyle` (colour on),
 * SGR sequences pass and everything else is escaped; without it (colour off, so the tool wrote
 * none) an SGR sequence can only come from a file and is escaped like any control character.
 */
export function escapeStyled(text: string, keepStyle: boolean): string {
  if (!keepStyle) return escapeReport(text)
  let out = ''
  let last = 0
  for (const m of text.matchAll(SGR)) {
    out += escapeReport(text.slice(last, m.index)) + m[0]
    last = m.index! + m[0].length
  }
  return out + escapeReport(text.slice(last))
}

/** JSON text (indented) with C1 controls, U+2028/2029 and bidi overrides written as \\u escapes. */
export function jsonText(value: unknown): string {
  // eslint-disable-next-line no-control-regex
  return JSON.stringify(value, null, 2).replace(/[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/**
 * oclif's parse errors span several lines; fold them into one, dropping its help hints. A
 * line that oclif wrapped at the terminal's width continues the previous one (issue 22:
 * "('-' =: stdin)"); a line after one that ends a sentence or a label starts a new part.
 */
export function oneLine(s: string): string {
  const lines = s
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^See more help with/i.test(l))
  let out = ''
  for (const l of lines) out += out === '' ? l : /[:.;!?)]$/.test(out) ? (out.endsWith(':') ? ' ' : ': ') + l : ' ' + l
  return out.replace(/:\s*:/g, ':')
}

function firstLine(s: string): string {
  const line = s.split('\n').find((l) => l.trim() !== '') ?? s
  return line.trim()
}

export {SparseError}
