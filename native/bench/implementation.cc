// Helpers shared by the harness's implementations (see implementation.h).
#if SPARSE_WITH_CUDA
#include "bench/implementation.h"

namespace sparse {
namespace bench {

std::vector<double> ReadDense(const void* src, size_t count, DType t, cudaStream_t stream) {
  std::vector<uint8_t> raw(count * DTypeBytes(t));
  Check(cudaMemcpyAsync(raw.data(), src, raw.size(), cudaMemcpyDeviceToHost, stream), "cudaMemcpy D2H");
  Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<double> out(count);
  DecodeToDouble(raw.data(), t, count, out.data());
  return out;
}

void Slab::Build(const std::vector<SlabPart>& parts, int copies, cudaStream_t stream) {
  offsets_.clear();
  size_t per = 0;
  for (const SlabPart& p : parts) {
    offsets_.push_back(per);
    per += (p.bytes + 255) / 256 * 256;
  }
  per_copy_ = per;
  AllocateOrThrow(&buffer_, per * copies);
  for (int c = 0; c < copies; ++c) {
    for (size_t i = 0; i < parts.size(); ++i) {
      if (parts[i].source && parts[i].bytes) {
        Check(cudaMemcpyAsync(at(c, static_cast<int>(i)), parts[i].source, parts[i].bytes, cudaMemcpyDeviceToDevice,
                              stream),
              "cudaMemcpy D2D");
      }
    }
  }
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
