import {expect} from 'chai'

import {loadAddon} from '../../src/kernels/binding.js'
import {cudaInfo, forcedSddmmVariant, forcedSpmmLine, forcedSpmmVariant, spmmVariantChoice} from '../../src/kernels/index.js'
import {spmmVariantName} from '../../src/kernels/variant-name.js'

describe('kernel variants: what is forced and what runs', () => {
  it('reads SPARSE_SPMM_VARIANT and SPARSE_SDDMM_VARIANT; unset, empty and auto force nothing', () => {
    const before = {spmm: process.env.SPARSE_SPMM_VARIANT, sddmm: process.env.SPARSE_SDDMM_VARIANT}
    try {
      process.env.SPARSE_SPMM_VARIANT = 's24e_w8_k256'
      process.env.SPARSE_SDDMM_VARIANT = 'tc'
      expect(forcedSpmmVariant()).to.equal('s24e_w8_k256')
      expect(forcedSddmmVariant()).to.equal('tc')
      // A value given in the variable's place (bench's forcedVariant option) wins over it.
      expect(forcedSpmmVariant('split_v4_t8_w1')).to.equal('split_v4_t8_w1')
      expect(forcedSpmmVariant('auto')).to.equal(undefined)
      for (const v of ['', 'auto']) {
        process.env.SPARSE_SPMM_VARIANT = v
        process.env.SPARSE_SDDMM_VARIANT = v
        expect(forcedSpmmVariant(), JSON.stringify(v)).to.equal(undefined)
        expect(forcedSddmmVariant(), JSON.stringify(v)).to.equal(undefined)
      }
      delete process.env.SPARSE_SPMM_VARIANT
      delete process.env.SPARSE_SDDMM_VARIANT
      expect(forcedSpmmVariant()).to.equal(undefined)
      expect(forcedSddmmVariant()).to.equal(undefined)
    } finally {
      for (const [k, v] of [['SPARSE_SPMM_VARIANT', before.spmm], ['SPARSE_SDDMM_VARIANT', before.sddmm]] as const) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
    }
  })

  it('runs the forced variant where the plan lists it, else the selection', () => {
    const list = {selected: 's24_w4_m1_s8', variants: ['s24_w4_m1_s8', 's24e_w8_k256', 'split_v8_t2_w2']}
    expect(spmmVariantChoice(list, 's24e_w8_k256')).to.deep.equal({variant: 's24e_w8_k256', source: 'forced'})
    expect(spmmVariantChoice(list, 'tc_w8_s4_p4')).to.deep.equal({variant: 's24_w4_m1_s8', source: 'heuristic'})
    expect(spmmVariantChoice(list, undefined)).to.deep.equal({variant: 's24_w4_m1_s8', source: 'heuristic'})
    // A build without CUDA lists nothing: no variant to name.
    expect(spmmVariantChoice({selected: '', variants: []}, 's24e_w8_k256')).to.deep.equal({source: 'heuristic'})
  })

  it("words the report's line on a forced variant by how many cases ran it", () => {
    expect(forcedSpmmLine('s24e_w8_k256', 24, 24)).to.equal('SpMM variant: s24e_w8_k256 forced by SPARSE_SPMM_VARIANT (24 of 24 cases)')
    expect(forcedSpmmLine('s24e_w8_k256', 20, 24)).to.equal(
      "SpMM variant: s24e_w8_k256 forced by SPARSE_SPMM_VARIANT (20 of 24 cases; the other 4 cannot run it and ran the built-in selection's variant)",
    )
  })
})

// Each family's names as its table entry parses them and writes them back (spmmVariantParse:
// SpmmParsedVariant, no GPU needed) and as its grammar checks them (--variant, the tune cache).
describe('kernel variant names: parsed and written back by their family', function () {
  before(function () {
    if (!cudaInfo().built) {
      console.log('    skipping: the addon is built without CUDA, which has no SpMM families')
      this.skip()
    }
  })

  /** Each good name parses and writes back as it is and matches the grammar; each bad one neither. */
  function expectNames(good: string[], bad: string[]): void {
    const grammar = spmmVariantName()
    for (const v of good) {
      expect(loadAddon().spmmVariantParse(v), v).to.equal(v)
      expect(grammar.test(v), v).to.equal(true)
    }
    for (const v of bad) {
      expect(loadAddon().spmmVariantParse(v), v).to.equal('')
      expect(grammar.test(v), v).to.equal(false)
    }
  }

  it("the bitmap stream's names (ube): warps 8 or 4, a capacity of 16, 32, 88, 144 or 256 or none", () => {
    const good = ['ube_w8', 'ube_w4', 'ube_w8_c16', 'ube_w8_c32', 'ube_w4_c88', 'ube_w8_c144', 'ube_w4_c256']
    const bad = ['ube_w6', 'ube_w16', 'ube_w08', 'ube_w8_c87', 'ube_w8_c088', 'ube_w8_c', 'ube_w8_c88_c88', 'ube_w8_k128', 'ube_', 'ube', 'ube_w8 ']
    expectNames(good, bad)
  })

  it("the pair stream's names (ube): ube_p8 with a capacity of 16, 32, 72, 100 or 128 or none", () => {
    const good = ['ube_p8', 'ube_p8_c16', 'ube_p8_c32', 'ube_p8_c72', 'ube_p8_c100', 'ube_p8_c128']
    // 4 warps is the bitmap form's only; the bitmap's capacities 88, 144, 256 are not the pairs'.
    const bad = ['ube_p4', 'ube_p16', 'ube_p08', 'ube_p8_c88', 'ube_p8_c256', 'ube_p8_c072', 'ube_p8_c', 'ube_p8_c72_c72', 'ube_p', 'ube_q8', 'ube_w8_c72', 'ube_p8 ']
    expectNames(good, bad)
  })

  it("the GEMM engine's unstructured names (ung): 128 or 256 columns, a capacity of 120 or 128 or none, _sk1, _sk2, _sk3 or none", () => {
    const good = ['ung_n256', 'ung_n128', 'ung_n256_sk2', 'ung_n256_sk1', 'ung_n128_sk3', 'ung_n128_c120', 'ung_n256_c128_sk2', 'ung_n128_c120_sk1', 'ung_n256_c120_sk3', 'ung_n128_c128']
    const bad = ['ung_n64', 'ung_n0256', 'ung_n256_c100', 'ung_n256_c0120', 'ung_n256_sk4', 'ung_n256_sk0', 'ung_n256_sk', 'ung_n256_sk2_c120', 'ung_n256_c', 'ung_', 'ung', 'ung_n256 ', 'ung_n-256']
    expectNames(good, bad)
  })

  it("the GEMM engine's whole-tile names (ung _w, v34) are refused: measured slower everywhere in v35, removed", () => {
    expectNames([], ['ung_n128_w1', 'ung_n256_w2', 'ung_n128_w1_sk3', 'ung_n128_w1_m1', 'ung_n256_c128_w1'])
  })

  it("the GEMM engine's dense-A names (und): 128 or 256 columns, _sk1, _sk2, _sk3 or none", () => {
    const good = ['und_n256', 'und_n128', 'und_n256_sk1', 'und_n128_sk2', 'und_n256_sk3']
    const bad = ['und_n64', 'und_n0256', 'und_n256_sk0', 'und_n256_sk4', 'und_n256_c128', 'und_n256_w1', 'und_', 'und', 'und_n256 ']
    expectNames(good, bad)
  })

  it("the GEMM engine's 2:4 names (s24g): 128 or 256 rows, 64, 128, 192 or 256 columns, _c2 (clusters, v54: whole tiles), _ss1 (A from shared memory, v54: whole or _sk2) or _sk1, _sk2, _sk3 or none", () => {
    const good = ['s24g_m128_n128_s6', 's24g_m256_n64_s8_sk3', 's24g_m128_n256_s4', 's24g_m128_n256_s4_c2', 's24g_m256_n128_s4_c2', 's24g_m128_n256_s4_ss1', 's24g_m128_n256_s4_ss1_sk2',
      's24g_m256_n192_s4_ss1', 's24g_m256_n192_s4_ss1_sk2', 's24g_m128_n256_s5_ss1', 's24g_m128_n256_s5_ss1_sk2']
    const bad = ['s24g_m192_n128_s4', 's24g_m256_n128_s4_sk4', 's24g_m256_n128_s4_c2_sk2', 's24g_m256_n128_s4_sk2_c2', 's24g_m256_n128_s4_c3', 's24g_m256_n128_s4_c',
      's24g_m128_n256_s4_ss1_sk1', 's24g_m128_n256_s4_ss1_sk3', 's24g_m128_n256_s4_sk2_ss1', 's24g_m128_n256_s4_ss2', 's24g_m128_n256_s4_c2_ss1',
      's24g_m256_n192_s4_ss1_sk3', 's24g_m256_n0192_s4_ss1']
    expectNames(good, bad)
  })

  it("the other families' names write back as they are", () => {
    for (const v of ['s24e_w8_k256', 's24_w4_m1_s8', 's24g_m256_n128_s4_sk2', 'bm_w4_m1_s8', 'tc_w8_s4_p4', 'split_v8_t2_w2', 'tile_v4_t8_x2_u16'])
      expect(loadAddon().spmmVariantParse(v), v).to.equal(v)
    expect(loadAddon().spmmVariantParse('panel_v4_r2')).to.equal('')
  })
})
