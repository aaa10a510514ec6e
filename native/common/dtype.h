#ifndef SPARSE_COMMON_DTYPE_H_
#define SPARSE_COMMON_DTYPE_H_
// Host-side description of element types shared by the CPU and CUDA kernels. No device code.
namespace sparse {

enum class DType { kF32 = 0, kF16 = 1, kBF16 = 2 };

inline int DTypeBytes(DType t) { return t == DType::kF32 ? 4 : 2; }
inline const char* DTypeName(DType t) {
  return t == DType::kF32 ? "f32" : (t == DType::kF16 ? "f16" : "bf16");
}

}  // namespace sparse
#endif  // SPARSE_COMMON_DTYPE_H_
