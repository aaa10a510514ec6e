/**
 * A boxed text table in time linear in its cells, drawn as cli-table3 draws one with
 * `style: {compact: true}` (the same characters and padding), which the reports used before:
 * cli-table3 lays out every cell against every row span (quadratic: 10,000 tensors took
 * half a minute). Cells hold no colour codes and no line breaks (names are escaped first).
 */

/** Display columns of a code point: 0 for combining and zero-width marks, 2 for East Asian wide ones. */
function codePointWidth(cp: number): number {
  if (cp === 0x200b || cp === 0x200c || cp === 0x200d || cp === 0xfeff || (cp >= 0x0300 && cp <= 0x036f) || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0x303e) ||
    (cp >= 0x3041 && cp <= 0x33ff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xa000 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  ) {
    return 2
  }
  return 1
}

/** Display width of a string (ASCII fast path). */
export function displayWidth(s: string): number {
  // eslint-disable-next-line no-control-regex
  if (/^[\u0020-\u007e]*$/.test(s)) return s.length
  let w = 0
  for (const ch of s) w += codePointWidth(ch.codePointAt(0)!)
  return w
}

export type Align = 'left' | 'right'

/** The table as text (no trailing newline): a head row, a rule, then the rows. */
export function renderTable(head: string[], rows: string[][], aligns: Align[]): string {
  const widths = head.map(displayWidth)
  const rowWidths = rows.map((r) => r.map(displayWidth))
  for (const r of rowWidths) for (let i = 0; i < r.length; i++) if (r[i] > widths[i]) widths[i] = r[i]
  const rule = (l: string, m: string, r: string) => l + widths.map((w) => '─'.repeat(w + 2)).join(m) + r
  const line = (cells: string[], ws: number[], align: (i: number) => Align) =>
    '│' +
    widths
      .map((w, i) => {
        const cell = cells[i] ?? ''
        const pad = ' '.repeat(w - (ws[i] ?? 0))
        return ` ${align(i) === 'right' ? pad + cell : cell + pad} `
      })
      .join('│') +
    '│'
  const out = [rule('┌', '┬', '┐'), line(head, head.map(displayWidth), (i) => aligns[i] ?? 'left'), rule('├', '┼', '┤')]
  for (let r = 0; r < rows.length; r++) out.push(line(rows[r], rowWidths[r], (i) => aligns[i] ?? 'left'))
  out.push(rule('└', '┴', '┘'))
  return out.join('\n')
}
