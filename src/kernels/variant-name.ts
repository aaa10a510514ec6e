import {loadAddon} from './binding.js'

/**
 * The form every SpMM variant name has, '<family>_<letter><digits>...' (e.g. 'split_v4_t8_w1'):
 * what names are checked against when the addon lists no grammar (a build without CUDA,
 * where no variant can run, or no addon at all).
 */
const ANY_VARIANT_NAME = /^[a-z][a-z0-9]*(_[a-z]+\d+)+$/

let grammar: RegExp | undefined

/**
 * The form of an SpMM kernel variant's name, as the native side declares it: one regular
 * expression per kernel family (`spmmVariantGrammar`, native/cuda/spmm/spmm_family.h), e.g.
 * 'tile_v4_t32_x2', 'split_v4_t8_w1_u16', 'tc_w8_s4_p4', 'bm_w4_m1_s8', 's24_w4_m1_s8'. One
 * definition for `spmm()`'s `variant` option and the tune cache; nothing here copies it.
 */
export function spmmVariantName(): RegExp {
  if (grammar) return grammar
  let families: string[] = []
  try {
    families = loadAddon().spmmVariantGrammar()
  } catch {
    // No addon: the generic form (the call that needs the addon reports why it is missing).
  }
  grammar = families.length > 0 ? new RegExp(`^(${families.map((f) => `(${f})`).join('|')})$`) : ANY_VARIANT_NAME
  return grammar
}
