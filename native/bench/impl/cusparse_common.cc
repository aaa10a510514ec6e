// The cuSPARSE baselines' shared part (see cusparse_common.h).
#if SPARSE_WITH_CUDA
#include "bench/impl/cusparse_common.h"

namespace sparse {
namespace bench {

CusparseSet::~CusparseSet() {
  const Cusparse& cs = GetCusparse();
  if (sparse) cs.DestroySpMat(sparse);
  for (cusparseDnMatDescr_t d : dense)
    if (d) cs.DestroyDnMat(d);
}

void CusparseSet::CreateCsr(int64_t rows, int64_t cols, int64_t nnz, void* offsets, void* indices, void* values,
                            cudaDataType t) {
  CheckCusparse(GetCusparse().CreateCsr(&sparse, rows, cols, nnz, offsets, indices, values, kCusparseIndex32I,
                                        kCusparseIndex32I, kCusparseIndexBaseZero, t),
                "cusparseCreateCsr");
}

void CusparseSet::CreateDense(int i, int64_t rows, int64_t cols, int64_t ld, void* values, cudaDataType t, int order) {
  CheckCusparse(GetCusparse().CreateDnMat(&dense[i], rows, cols, ld, values, t, order), "cusparseCreateDnMat");
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
