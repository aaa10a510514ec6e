#ifndef SPARSE_CUDA_SPMM_SPMM_STREAM_H_
#define SPARSE_CUDA_SPMM_SPMM_STREAM_H_
// Host interface of the two streaming tensor-core SpMMs for f16/bf16:
//   - the bitmap kernel (spmm_bitmap_kernel.cuh) on BitmapTiles (common/bitmap_tiles.h), any
//     sparsity pattern; variants "bm_w<warps>_s<splits>_p<stages>";
//   - the 2:4 kernel (spmm_24_kernel.cuh) on Sp24Tiles (common/sparse24.h), 2:4 patterns
//     only; variants "s24_w<warps>_s<splits>_p<stages>".
// Both formats are built once per matrix on the host and uploaded (BitmapMatrix, Sp24Matrix);
// launches read only the prepared matrix and B, C. Any M, K, N >= 1; B and C row-major.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "common/bitmap_tiles.h"
#include "common/dtype.h"
#include "common/sparse24.h"
#include "cuda/common/device_buffer.h"
#include "cuda/spmm/spmm_family.h"
#include "cuda/spmm/stream_launch.h"

namespace sparse {

// BitmapTiles in device memory (owns it): the bitmap family's prepared operand.
class BitmapMatrix : public SpmmOperand {
 public:
  // From host tiles (synchronous upload on `stream`).
  cudaError_t Upload(const BitmapTiles& tiles, DType dtype, cudaStream_t stream);
  // Device copy of another (for the benchmark's rotated operand copies).
  cudaError_t CopyFrom(const BitmapMatrix& other, cudaStream_t stream);
  bool empty() const { return offsets_.get() == nullptr; }
  int m() const { return m_; }
  int k() const { return k_; }
  DType dtype() const { return dtype_; }
  size_t Bytes() const override { return offsets_.bytes() + data_.bytes(); }
  cudaError_t Clone(std::unique_ptr<SpmmOperand>* out, cudaStream_t stream) const override {
    return CloneOperand(*this, out, stream);
  }
  const uint32_t* offsets() const { return offsets_.as<uint32_t>(); }
  const void* data() const { return data_.get(); }
  int strips() const { return strips_; }
  int ktiles() const { return ktiles_; }
  int stage_units() const { return stage_units_; }

 private:
  DeviceBuffer offsets_, data_;
  int m_ = 0, k_ = 0, strips_ = 0, ktiles_ = 0, stage_units_ = 0;
  DType dtype_ = DType::kF16;
};

// Sp24Tiles in device memory (owns it): the 2:4 family's prepared operand.
class Sp24Matrix : public SpmmOperand {
 public:
  cudaError_t Upload(const Sp24Tiles& tiles, DType dtype, cudaStream_t stream);
  cudaError_t CopyFrom(const Sp24Matrix& other, cudaStream_t stream);
  bool empty() const { return values_.get() == nullptr; }
  int m() const { return m_; }
  int k() const { return k_; }
  DType dtype() const { return dtype_; }
  size_t Bytes() const override { return values_.bytes() + meta_.bytes(); }
  cudaError_t Clone(std::unique_ptr<SpmmOperand>* out, cudaStream_t stream) const override {
    return CloneOperand(*this, out, stream);
  }
  const void* values() const { return values_.get(); }
  const void* meta() const { return meta_.get(); }
  int strips() const { return strips_; }
  int ksteps() const { return ksteps_; }

 private:
  DeviceBuffer values_, meta_;
  int m_ = 0, k_ = 0, strips_ = 0, ksteps_ = 0;
  DType dtype_ = DType::kF16;
};

// The dense operands of a launch: C[m x n] = A * B[k x n] (device pointers, row-major; m and
// k are the matrix's).
struct StreamOperands {
  int n = 0;
  const void* b = nullptr;
  void* c = nullptr;
};

// The largest 16-byte-unit run of four consecutive k-tiles of one strip (the kernel's
// per-warp stage area), from host tiles.
int BitmapStageUnits(const BitmapTiles& t);

// The configurations worth timing (--tune) of an m x k matrix at n columns: "<prefix>_...".
std::vector<std::string> StreamVariants(const char* prefix, int m, int k, int n);
// Built-in picks and the configurations worth timing (--tune).
StreamChoice SelectBitmap(const BitmapMatrix& a, int n, int sm_count);
StreamChoice SelectSp24(const Sp24Matrix& a, int n, int sm_count);
std::vector<std::string> BitmapVariants(const BitmapMatrix& a, int n);
std::vector<std::string> Sp24Variants(const Sp24Matrix& a, int n);

// What the table entries of both families share (spmm_family.h): whether `ch` can run p (any
// m, k, n and alignment: the kernels mask edges and stage B element-wise when they must;
// f16/bf16 only; an instantiated configuration; the grid fits), and the launch operands.
bool StreamCanRun(const SpmmProblem& p, const StreamChoice& ch);
inline StreamOperands StreamOperandsOf(const SpmmProblem& p) {
  StreamOperands op;
  op.n = p.n, op.b = p.b, op.c = p.c;
  return op;
}
// Parses "<prefix>_w<warps>_m<strips>_s<splits>" into ch's configuration.
bool ParseStreamFamily(const char* prefix, const char* name, SpmmChoice* ch);
// The prepared operand of a streaming family: p's CSR downloaded, built on the host as Tiles by
// build(m, k, row_offsets, column_indices, values16, &tiles) (BuildBitmapTiles, BuildSp24Tiles,
// or a lambda that binds a format's parameters, as the bitmap stream's; its message in *why when
// the matrix does not fit) and uploaded as a Matrix (BitmapMatrix, Sp24Matrix, the engines'
// Sp24EngineMatrix, UnstEngineMatrix) by Matrix::Upload(tiles, dtype, stream, extra...).
// Synchronous.
template <typename Matrix, typename Tiles, typename Build, typename... Extra>
cudaError_t PrepareStreamOperandWith(const SpmmProblem& p, cudaStream_t stream, const Build& build,
                                     std::unique_ptr<SpmmOperand>* out, std::string* why, Extra... extra) {
  std::vector<int> offsets, cols;
  std::vector<uint16_t> vals;
  cudaError_t e = DownloadCsr16(p, stream, &offsets, &cols, &vals);
  if (e != cudaSuccess) return e;
  Tiles t;
  const std::string err = build(p.m, p.k, offsets.data(), cols.data(), vals.data(), &t);
  if (!err.empty()) {
    if (why) *why = err;
    return cudaErrorInvalidValue;
  }
  auto a = std::make_unique<Matrix>();
  e = a->Upload(t, p.dtype, stream, extra...);
  if (e == cudaSuccess) *out = std::move(a);
  return e;
}
// PrepareStreamOperandWith for a build function (Tiles taken from its last parameter).
template <typename Matrix, typename Tiles, typename... Extra>
cudaError_t PrepareStreamOperand(const SpmmProblem& p, cudaStream_t stream,
                                 std::string (*build)(int, int, const int*, const int*, const uint16_t*, Tiles*),
                                 std::unique_ptr<SpmmOperand>* out, std::string* why, Extra... extra) {
  return PrepareStreamOperandWith<Matrix, Tiles>(p, stream, build, out, why, extra...);
}

// What both launchers share: fills the arguments both kernels' Args have (B, C, the shape,
// the strips, the splits, how B is staged) from the matrix and the operands, and launches
// `kernel` over the matrix's row blocks of kWB * kMS strips and N's column blocks of 8 kNT8.
template <int kWB, int kMS, int kNT8, typename Kernel, typename Args, typename Matrix>
cudaError_t LaunchStreamKernel(Kernel kernel, Args args, const Matrix& a, const StreamOperands& op,
                               const StreamChoice& ch, int smem, cudaStream_t stream) {
  args.b = op.b, args.c = op.c;
  args.m = a.m(), args.k = a.k(), args.n = op.n;
  args.strips = a.strips(), args.splits = ch.splits;
  args.b_mode = StreamBMode(op.n, op.b);
  const int64_t row_blocks = (a.strips() + kWB * kMS - 1) / (kWB * kMS);
  const int col_blocks = (op.n + 8 * kNT8 - 1) / (8 * kNT8);
  return LaunchStream(kernel, args, row_blocks, col_blocks, ch, smem, stream);
}

// Asynchronous launches. Return cudaErrorInvalidValue for an empty matrix, f32, n < 1 or
// a configuration that cannot run.
cudaError_t LaunchSpmmBitmap(const BitmapMatrix& a, const StreamOperands& op, const StreamChoice& ch,
                             cudaStream_t stream);
cudaError_t LaunchSpmm24(const Sp24Matrix& a, const StreamOperands& op, const StreamChoice& ch, cudaStream_t stream);

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_STREAM_H_
