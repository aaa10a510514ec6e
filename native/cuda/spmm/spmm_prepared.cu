// SpmmPrepared (spmm_prepared.h).
#include "cuda/spmm/spmm_prepared.h"

#include <vector>

namespace sparse {

cudaError_t DownloadCsr16(const SpmmProblem& p, cudaStream_t stream, std::vector<int>* offsets, std::vector<int>* cols,
                          std::vector<uint16_t>* vals) {
  if (p.dtype == DType::kF32 || p.m < 0 || p.nnz < 0) return cudaErrorInvalidValue;
  offsets->resize(static_cast<size_t>(p.m) + 1);
  cols->resize(p.nnz);
  vals->resize(p.nnz);
  cudaError_t e = cudaMemcpyAsync(offsets->data(), p.row_offsets, 4 * offsets->size(), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess && p.nnz > 0) {
    if (p.index_bits == 16) {
      std::vector<int16_t> c16(p.nnz);
      e = cudaMemcpyAsync(c16.data(), p.column_indices, 2 * static_cast<size_t>(p.nnz), cudaMemcpyDeviceToHost, stream);
      if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
      for (int i = 0; i < p.nnz; ++i) (*cols)[i] = static_cast<uint16_t>(c16[i]);
    } else {
      e = cudaMemcpyAsync(cols->data(), p.column_indices, 4 * static_cast<size_t>(p.nnz), cudaMemcpyDeviceToHost, stream);
    }
    if (e == cudaSuccess)
      e = cudaMemcpyAsync(vals->data(), p.values, 2 * static_cast<size_t>(p.nnz), cudaMemcpyDeviceToHost, stream);
  }
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) return e;
  if ((*offsets)[0] != 0 || (*offsets)[p.m] != p.nnz) return cudaErrorInvalidValue;
  return cudaSuccess;
}

cudaError_t SpmmPrepared::Build(const SpmmProblem& p, const std::string& effective, cudaStream_t stream,
                                std::string* why) {
  const bool is_tc = effective.rfind("tc_", 0) == 0;
  const bool is_bm = effective.rfind("bm_", 0) == 0;
  const bool is_24 = effective.rfind("s24_", 0) == 0;
  if (!is_tc && !is_bm && !is_24) return cudaSuccess;
  if (is_tc) return tc.Build(p, stream);
  std::vector<int> offsets, cols;
  std::vector<uint16_t> vals;
  cudaError_t e = DownloadCsr16(p, stream, &offsets, &cols, &vals);
  if (e != cudaSuccess) return e;
  std::string err;
  if (is_bm) {
    BitmapTiles t;
    err = BuildBitmapTiles(p.m, p.k, offsets.data(), cols.data(), vals.data(), &t);
    if (err.empty()) return bitmap.Upload(t, p.dtype, stream);
  } else {
    Sp24Tiles t;
    err = BuildSp24Tiles(p.m, p.k, offsets.data(), cols.data(), vals.data(), &t);
    if (err.empty()) return s24.Upload(t, p.dtype, stream);
  }
  if (why) *why = err;
  return cudaErrorInvalidValue;
}

cudaError_t SpmmPrepared::CopyFrom(const SpmmPrepared& o, cudaStream_t stream) {
  cudaError_t e = cudaSuccess;
  if (!o.tc.empty()) e = tc.CopyFrom(o.tc, stream);
  if (e == cudaSuccess && !o.bitmap.empty()) e = bitmap.CopyFrom(o.bitmap, stream);
  if (e == cudaSuccess && !o.s24.empty()) e = s24.CopyFrom(o.s24, stream);
  return e;
}

}  // namespace sparse
