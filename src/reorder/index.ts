export {isIdentityOrder, reorderRows, rowSwizzle} from './swizzle.js'
export {
  orderFigures,
  reorderFile,
  type OrderFigures,
  type ReorderedTensor,
  type ReorderFileOptions,
  type ReorderFileResult,
  type RowLength,
} from './reorder-file.js'
