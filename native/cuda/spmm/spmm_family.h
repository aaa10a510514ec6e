#ifndef SPARSE_CUDA_SPMM_SPMM_FAMILY_H_
#define SPARSE_CUDA_SPMM_SPMM_FAMILY_H_
// The table of SpMM kernel families. A family is one kernel (or one kernel shape) with its
// configuration space: the CSR tile and split-row kernels (spmm_csr.cu), the tensor-core
// kernel (spmm_tc.cu), the bitmap kernel (spmm_bitmap.cu) and the 2:4 kernel (spmm_24.cu).
// Each family's .cu declares one SpmmFamily and registers it with SPARSE_SPMM_FAMILY; the
// plan (spmm_plan.h, spmm.cu) loops over the table to select, name, parse, check, list,
// prepare and launch, and knows no family by name. docs/kernels.md, "Adding a kernel".
// Host code; no device code.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/problems.h"
#include "cuda/common/device_buffer.h"
#include "cuda/spmm/spmm_launch.h"

namespace sparse {

// A prepared operand: a family's own form of the sparse matrix (tensor-core tiles, bitmap
// tiles, 2:4 tiles, and whatever a family needs beside it, e.g. a split-K workspace), built
// once per plan from the CSR and read by every launch instead of the CSR arrays. Device
// memory, owned.
class SpmmOperand {
 public:
  virtual ~SpmmOperand() = default;
  // Device bytes held (reported by `sparse bench`).
  virtual size_t Bytes() const = 0;
  // A device copy (the benchmark's rotated operand sets). Asynchronous on `stream`.
  virtual cudaError_t Clone(std::unique_ptr<SpmmOperand>* out, cudaStream_t stream) const = 0;
  // Whether a launch of configuration `ch` (of the family that built it) can read it: false
  // where the layout depends on the configuration (the streaming engine's row-block height),
  // so that SpmmPlan::ShareOperand does not hand it to another one.
  virtual bool Serves(const SpmmChoice&) const { return true; }
};

// One entry of the table. Every function is plain host code and thread-safe; `p` holds
// device pointers, or null ones when planning without data (alignment is then assumed).
struct SpmmFamily {
  // Variant names are "<prefix>_<configuration>"; prefixes are distinct ("tile", "s24").
  const char* prefix;
  // The whole name as a regular expression (ECMAScript, anchored by the reader), e.g.
  // "s24_w\\d+_m\\d+_s\\d+": exported to TypeScript by spmmVariantGrammar, which checks
  // --variant flags and tune-cache entries with it.
  const char* grammar;
  // The selection order: the built-in selection asks the families in increasing rank and
  // runs the first that claims the problem (select). The CSR split-row kernel claims
  // everything: it is last.
  int rank;
  // The family's selection rule: true, with *ch set (family included), when it should run p.
  // Null: never picked by the rule (tuned or forced only).
  bool (*select)(const SpmmProblem& p, int sm_count, SpmmChoice* ch);
  // Parses a name that starts with "<prefix>_" into *ch (family included); false when it is
  // malformed. Only the shape of the name: can_run says whether it runs.
  bool (*parse)(const char* name, SpmmChoice* ch);
  std::string (*name)(const SpmmChoice& ch);
  // Whether ch is instantiated and can run p on this GPU (dtype, shape, alignment, compute
  // capability, the matrix's structure, grid limits). Cheap: called on every launch.
  bool (*can_run)(const SpmmProblem& p, const SpmmChoice& ch);
  // Appends the configurations worth timing for p (`sparse bench --tune`, the variant sweep).
  void (*variants)(const SpmmProblem& p, std::vector<std::string>* out);
  // The prepared operand it reads, in words ("2:4 tiles"), or null when it reads the CSR.
  const char* form;
  // Builds that operand for configuration `ch` from p's CSR (device pointers; synchronous:
  // download, convert on the host, upload). cudaErrorInvalidValue with *why when the matrix
  // does not fit the form. Null when form is null.
  cudaError_t (*prepare)(const SpmmProblem& p, const SpmmChoice& ch, cudaStream_t stream,
                         std::unique_ptr<SpmmOperand>* out, std::string* why);
  // Launches C = A * B (asynchronous; may be several kernels, e.g. a split-K pass and its
  // reduction). `a` is the prepared operand (never null for a family with a form; null
  // otherwise). It must not allocate or synchronize (launches are captured in CUDA graphs).
  cudaError_t (*launch)(const SpmmProblem& p, const SpmmChoice& ch, const SpmmOperand* a, int sm_count,
                        cudaStream_t stream);
  // Whether the prepared operand stores every weight, zeros included (no memory saving): such a
  // family is left out of the selection and the --tune list of a problem with keep_sparse.
  bool stores_dense = false;
};

// Adds a family to the table (at static initialization: see SPARSE_SPMM_FAMILY). Returns
// true. Two families with one prefix or one rank are a programming error (aborts).
bool RegisterSpmmFamily(const SpmmFamily* family);
// The table, by increasing rank.
const std::vector<const SpmmFamily*>& SpmmFamilies();

// Registers `family` (a `const SpmmFamily` at namespace scope) when the addon loads.
#define SPARSE_SPMM_FAMILY(family) \
  static const bool sparse_spmm_family_registered_##family = ::sparse::RegisterSpmmFamily(&family)

// ---------------------------------------------------------------------------------------
// Helpers for the families' prepared operands.

// Host CSR (row_offsets m + 1, column_indices, values16 raw 16-bit words) read back from a
// device problem (f16/bf16). Synchronous. cudaErrorInvalidValue for f32 or offsets that do
// not run from 0 to nnz.
cudaError_t DownloadCsr16(const SpmmProblem& p, cudaStream_t stream, std::vector<int>* offsets, std::vector<int>* cols,
                          std::vector<uint16_t>* vals);

// One host array for a prepared operand's device buffer.
struct HostPart {
  DeviceBuffer* dst;
  const void* src;
  size_t bytes;
};
// Uploads every part and waits (the host arrays may go away after the return); on failure
// every part's buffer is freed.
cudaError_t UploadParts(std::initializer_list<HostPart> parts, cudaStream_t stream);
// Device copies of `src` buffers into `dst` buffers (asynchronous); on failure every `dst` is
// freed.
cudaError_t CopyParts(std::initializer_list<std::pair<DeviceBuffer*, const DeviceBuffer*>> parts,
                      cudaStream_t stream);

// The Clone of an operand type T that has `cudaError_t CopyFrom(const T&, cudaStream_t)`.
template <typename T>
cudaError_t CloneOperand(const T& self, std::unique_ptr<SpmmOperand>* out, cudaStream_t stream) {
  auto copy = std::make_unique<T>();
  const cudaError_t e = copy->CopyFrom(self, stream);
  if (e == cudaSuccess) *out = std::move(copy);
  return e;
}

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_FAMILY_H_
