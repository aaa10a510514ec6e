/** Small wording helpers shared by the commands' human reports. */

/** "1 case", "2 cases"; `many` for irregular plurals. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`
}

/** A directory as printed in reports: exactly one trailing '/', whatever -o was given as. */
export function dirLabel(path: string): string {
  return path.replace(/\/+$/, '') + '/'
}
