import {expect} from 'chai'

import {forcedSddmmVariant, forcedSpmmLine, forcedSpmmVariant, spmmVariantChoice} from '../../src/kernels/index.js'

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
