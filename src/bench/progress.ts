/**
 * The progress line of a bench run: cases done, total and an estimate of the time left
 * (the mean time of the cases done so far times the cases left). Plain text; the CLI shows it
 * in a spinner on an interactive stderr only (BaseCommand.spin).
 */
import type {BenchProgress} from './types.js'

/** Tracks a run's progress events and says how far it is. */
export class ProgressClock {
  private start: number | undefined
  constructor(private readonly now: () => number = Date.now) {}

  /** The line for a progress event; the clock starts at the first case. */
  line(p: BenchProgress, width = 20): string {
    const t = this.now()
    if (this.start === undefined) this.start = t
    const filled = p.total > 0 ? Math.round((p.done / p.total) * width) : 0
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`
    const left = p.done > 0 ? `, ${formatDuration(((t - this.start) / p.done) * (p.total - p.done))} left` : ''
    return `${bar} ${p.done}/${p.total} ${p.total === 1 ? 'case' : 'cases'}${left}  ${p.label}`
  }
}

/** "45 s", "3 min 5 s", "1 h 02 min". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`
}
