/**
 * How a failure is written into a report: the first line of its message, and its code
 * (a SparseError's code, or the CUDA error name the harness puts on its errors).
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0]
  return String(error)
}

export function errorCode(error: unknown): string | undefined {
  const code = (error as {code?: unknown} | undefined)?.code
  return typeof code === 'string' ? code : undefined
}
