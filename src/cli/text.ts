/** Small wording helpers shared by the commands' human reports. */

/** "1 case", "2 cases"; `many` for irregular plurals. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`
}

/** A directory as printed in reports: exactly one trailing '/', whatever -o was given as. */
export function dirLabel(path: string): string {
  return path.replace(/\/+$/, '') + '/'
}

/** Bytes in binary units: "512 B", "1.5 KiB", "3.0 GiB". */
export function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n
  let u = -1
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024
    u++
  }
  return `${v.toFixed(1)} ${units[u]}`
}
