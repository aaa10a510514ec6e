/**
 * Cooperative yielding for long loops, so that Ctrl-C and SIGTERM act promptly.
 *
 * Node runs signal listeners only when the event loop gets control. A loop of awaits that
 * resolve at once (reads of zero-byte tensors, reads from a buffer already in memory) never
 * gives it control: promise continuations run before the loop's next turn. `pace()` yields
 * one turn of the event loop (setImmediate) when more than PACE_MS have passed since the
 * last yield, and costs a clock read otherwise; calling it once per item of any loop over a
 * tensor collection keeps the interrupt latency under about 2 × PACE_MS.
 */
export const PACE_MS = 40

let last = performance.now()

/** Yield to the event loop if PACE_MS have passed since the last yield. */
export function pace(): Promise<void> | undefined {
  const now = performance.now()
  if (now - last < PACE_MS) return undefined
  return new Promise((resolve) =>
    setImmediate(() => {
      last = performance.now()
      resolve()
    }),
  )
}

/** Whether PACE_MS have passed since the last yield (for synchronous loops that check it in batches). */
export function paceDue(): boolean {
  return performance.now() - last >= PACE_MS
}
