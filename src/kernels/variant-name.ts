/**
 * The form of an SpMM kernel variant's name (see `spmmVariants` and native/cuda/spmm/spmm.cu):
 * 'tile_v4_t32_x2', 'split_v4_t8_w1', the deep f32 'tile_v4_t8_x2_u16' and 'split_v4_t16_w1_u16', the tensor-core
 * 'tc_w8_s4_p4', the bitmap 'bm_w4_m1_s8' and the 2:4 's24_w4_m1_s8'. One definition for
 * `spmm()`'s `variant` option and the tune cache.
 */
export const SPMM_VARIANT_NAME = /^((tile|split)_v\d+_t\d+_[xw]\d+(_u\d+)?|tc_w\d+_s\d+_p\d+|(bm|s24)_w\d+_m\d+_s\d+)$/
