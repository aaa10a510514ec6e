#ifndef SPARSE_CUDA_COMMON_DEVICE_INFO_H_
#define SPARSE_CUDA_COMMON_DEVICE_INFO_H_
// What the kernel selections ask of the current GPU, and the pointer alignment they test
// (host code; no device code). The device attributes are read once per device and thread:
// the selections run on every launch.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace sparse {

namespace detail {
// The attribute of the current device, cached per thread and device; `fallback` when there
// is no usable device or the value is below `least` (not cached, so that a later call can
// still succeed). `least` 1 for counts; 0 where 0 is a real value (a minor version).
inline int CachedDeviceAttribute(cudaDeviceAttr attr, int* cached_device, int* cached_value, int fallback,
                                 int least = 1) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return fallback;
  if (device != *cached_device) {
    int value = 0;
    if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess || value < least) return fallback;
    *cached_device = device, *cached_value = value;
  }
  return *cached_value;
}
}  // namespace detail

// Streaming multiprocessors of the current device (1 when unknown).
inline int SmCount() {
  static thread_local int device = -1, value = 0;
  return detail::CachedDeviceAttribute(cudaDevAttrMultiProcessorCount, &device, &value, 1);
}

// Compute capability major version of the current device (0 when unknown).
inline int ComputeMajor() {
  static thread_local int device = -1, value = 0;
  return detail::CachedDeviceAttribute(cudaDevAttrComputeCapabilityMajor, &device, &value, 0);
}

// Compute capability minor version of the current device (-1 when unknown; 0 is the minor
// version of 8.0 and 9.0).
inline int ComputeMinor() {
  static thread_local int device = -1, value = 0;
  return detail::CachedDeviceAttribute(cudaDevAttrComputeCapabilityMinor, &device, &value, -1, 0);
}

// The current device's DRAM bandwidth by its attributes, GB/s: memory clock (kHz) x bus width
// (bits) x 2 (both edges) / 8; 0 when unknown. The H100 SXM gives 3352, the H200 4917.
inline int PeakDramGBps() {
  static thread_local int clock_device = -1, clock = 0, width_device = -1, width = 0;
  const long long khz = detail::CachedDeviceAttribute(cudaDevAttrMemoryClockRate, &clock_device, &clock, 0);
  const long long bits = detail::CachedDeviceAttribute(cudaDevAttrGlobalMemoryBusWidth, &width_device, &width, 0);
  return static_cast<int>(khz * bits * 2 / 8 / 1000000);
}

// Whether `p` is a multiple of `bytes` (null counts as aligned: planning without pointers).
inline bool Aligned(const void* p, int bytes) { return (reinterpret_cast<uintptr_t>(p) % bytes) == 0; }

}  // namespace sparse

// Whether this translation unit's sm_90a code (files named *_sm90a.cu are built for sm_90a
// with SPARSE_SM90A defined, when the build targets sm_90) can run on the current device:
// compute capability 9.0 exactly. A macro, not a function, because SPARSE_SM90A differs
// between translation units.
#if defined(SPARSE_SM90A)
#define SPARSE_SM90A_CAN_RUN() (::sparse::ComputeMajor() == 9 && ::sparse::ComputeMinor() == 0)
#else
#define SPARSE_SM90A_CAN_RUN() false
#endif
#endif  // SPARSE_CUDA_COMMON_DEVICE_INFO_H_
