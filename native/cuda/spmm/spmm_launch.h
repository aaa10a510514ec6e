#ifndef SPARSE_CUDA_SPMM_SPMM_LAUNCH_H_
#define SPARSE_CUDA_SPMM_SPMM_LAUNCH_H_
// Internal host interface of the SpMM: SpmmChoice, one point of a kernel family's
// configuration space (the table: spmm_family.h), and the CSR kernels' per-dtype launchers,
// instantiated in spmm_f32.cu, spmm_f16.cu, spmm_bf16.cu (split so that a parallel build
// compiles them at once). No device code.
#include <cuda_runtime_api.h>

#include <cstring>
#include <type_traits>

#include "common/problems.h"

namespace sparse {

// The two CSR kernels: the tile kernel (spmm_kernel.cuh: Sputnik's 1-D tiling, a subwarp per
// row strip walks the row's nonzeros through shared memory) and the split-row kernel
// (spmm_split_kernel.cuh: the row's nonzeros split over the slices of a warp and over several
// warps, for small N and long rows). Their host side (names, rules, table entries) is
// spmm_csr.cu.
enum class SpmmKind { kTile, kSplit };

struct SpmmFamily;  // spmm_family.h

// One point of one kernel family's configuration space: the family (its entry in the table of
// spmm_family.h), the CSR kernels' shape (tile/split only; see SpmmConfig in spmm_config.h and
// SplitConfig in spmm_split_kernel.cuh) or another family's own configuration struct, held in
// `config` (Set/Get). Names: see each family's entry.
struct SpmmChoice {
  const SpmmFamily* family = nullptr;
  SpmmKind kind = SpmmKind::kTile;
  int vec_elems = 1;   // elements of B/C per vector memory instruction
  int threads_x = 32;  // lanes across the strip (tile: subwarp width; split: slice width)
  int vecs_x = 1;      // vectors per thread across the strip (tile only)
  int warps_per_row = 1;  // warps sharing one row's nonzeros (split only)
  int unroll = 0;         // tile/split, f32 full width: 16 = the deep variant ("_u16"); 0 = default
  int BlockItemsX() const { return threads_x * vecs_x * vec_elems; }

  // A family's configuration (a trivially copyable struct of at most kConfigBytes bytes, e.g.
  // TcChoice or StreamChoice), stored by value so that spmm.cu needs no family's types.
  static constexpr int kConfigBytes = 32;
  template <typename T>
  void Set(const T& t) {
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= kConfigBytes,
                  "a family's configuration must be a small plain struct (SpmmChoice::kConfigBytes)");
    std::memcpy(config_, &t, sizeof(T));
  }
  template <typename T>
  T Get() const {
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= kConfigBytes,
                  "a family's configuration must be a small plain struct (SpmmChoice::kConfigBytes)");
    T t;
    std::memcpy(&t, config_, sizeof(T));
    return t;
  }

 private:
  alignas(8) unsigned char config_[kConfigBytes] = {};
};

// Launches the instantiation of `choice` for p.dtype (one of these per dtype). Returns
// cudaErrorInvalidValue for a choice with no instantiation, else the launch status.
cudaError_t LaunchSpmmF32(const SpmmProblem& p, const SpmmChoice& choice, int sm_count, cudaStream_t stream);
cudaError_t LaunchSpmmF16(const SpmmProblem& p, const SpmmChoice& choice, int sm_count, cudaStream_t stream);
cudaError_t LaunchSpmmBF16(const SpmmProblem& p, const SpmmChoice& choice, int sm_count, cudaStream_t stream);


}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_LAUNCH_H_
