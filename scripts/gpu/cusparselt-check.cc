// Self-check of the hand-written cuSPARSELt surface of the bench harness (native/bench/
// libs.h: the loader, the prototypes, the enum values, the opaque struct sizes), on the GPU
// machine, with the call sequence of the `cusparselt` baseline (impl/spmm_cusparselt.cc):
// row-major A (2:4, structured), B and C, CUSPARSE_COMPUTE_32F, prune check, compression,
// cusparseLtMatmulSearch, cusparseLtMatmul, then the same matmul captured in a CUDA graph.
// Each product is compared with a float64 CPU reference, so a wrong enum value or layout
// shows up as a failed line. Build and run with scripts/gpu/cusparselt-check.sh (from the
// repository root), which compiles it with g++ together with native/bench/libs.cc and
// the static CUDA runtime.
// With -DSPARSE_WITH_CUSPARSELT_H and -I<the wheel's nvidia/cusparselt/include> it also
// compares our enum values and struct size with the real header.
// Prints one line per check; exits 0 when all pass, 1 on a failure, 2 when the library or
// the GPU is missing. Not part of the addon (nothing under scripts/ is compiled into it).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/libs.h"

#if SPARSE_WITH_CUSPARSELT_H
#include <cusparseLt.h>
#endif

namespace b = sparse::bench;

namespace {

int failures = 0;

void Line(bool ok, const std::string& what) {
  std::printf("%-6s %s\n", ok ? "ok" : "FAIL", what.c_str());
  if (!ok) failures++;
}

// Throws a readable message for a failed call (caught per case in main).
struct Failure {
  std::string what;
};
void Lt(b::cusparseStatus_t s, const char* what) {
  if (s != 0) throw Failure{std::string(what) + ": " + b::CusparseLtStatusName(s)};
}
void Cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Failure{std::string(what) + ": " + cudaGetErrorName(e)};
}

template <typename T>
struct Device {
  T* p = nullptr;
  explicit Device(size_t count) {
    Cuda(cudaMalloc(reinterpret_cast<void**>(&p), std::max<size_t>(count, 1) * sizeof(T)), "cudaMalloc");
  }
  ~Device() { cudaFree(p); }
};

// 16-bit encodings of the two dtypes (host conversions from cuda_fp16.h / cuda_bf16.h).
struct F16 {
  using T = __half;
  static constexpr cudaDataType kType = CUDA_R_16F;
  static constexpr const char* kName = "f16";
  static T From(float f) { return __float2half_rn(f); }
  static float To(T h) { return __half2float(h); }
};
struct BF16 {
  using T = __nv_bfloat16;
  static constexpr cudaDataType kType = CUDA_R_16BF;
  static constexpr const char* kName = "bf16";
  static T From(float f) { return __float2bfloat16_rn(f); }
  static float To(T h) { return __bfloat162float(h); }
};

// The descriptors and plan of one product (as LtPlan in impl/spmm_cusparselt.cc).
struct Plan {
  b::LtOpaque a, bm, c, matmul, alg, plan;
  bool made = false;
  ~Plan() {
    if (!made) return;
    const b::CusparseLt& lt = b::GetCusparseLt();
    lt.MatmulPlanDestroy(&plan);
    if (lt.MatmulAlgSelectionDestroy) lt.MatmulAlgSelectionDestroy(&alg);
    lt.MatDescriptorDestroy(&c);
    lt.MatDescriptorDestroy(&bm);
    lt.MatDescriptorDestroy(&a);
  }
};

void MakePlan(const b::LtOpaque* h, Plan* p, int m, int k, int n, cudaDataType t, int order) {
  const b::CusparseLt& lt = b::GetCusparseLt();
  const bool row = order == b::kCusparseOrderRow;
  Lt(lt.StructuredDescriptorInit(h, &p->a, m, k, k, 16, t, b::kCusparseOrderRow, b::kLtSparsity50Percent),
     "cusparseLtStructuredDescriptorInit");
  Lt(lt.DenseDescriptorInit(h, &p->bm, k, n, row ? n : k, 16, t, order), "cusparseLtDenseDescriptorInit(B)");
  Lt(lt.DenseDescriptorInit(h, &p->c, m, n, row ? n : m, 16, t, order), "cusparseLtDenseDescriptorInit(C)");
  Lt(lt.MatmulDescriptorInit(h, &p->matmul, b::kCusparseOpN, b::kCusparseOpN, &p->a, &p->bm, &p->c, &p->c,
                             b::kLtCompute32F),
     "cusparseLtMatmulDescriptorInit");
  Lt(lt.MatmulAlgSelectionInit(h, &p->alg, &p->matmul, b::kLtMatmulAlgDefault), "cusparseLtMatmulAlgSelectionInit");
  Lt(lt.MatmulPlanInit(h, &p->plan, &p->matmul, &p->alg), "cusparseLtMatmulPlanInit");
  p->made = true;
}

double RelErr(const std::vector<float>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

// C = A B for a random 2:4 A (m x k) and random B (k x n), all row-major; `order` describes B
// and C. Returns a description of what ran (throws Failure on an error).
template <typename D>
std::string Product(const b::LtOpaque* h, int m, int k, int n, int order, cudaStream_t stream, bool graph,
                    double* err, double* graph_err) {
  using T = typename D::T;
  const b::CusparseLt& lt = b::GetCusparseLt();
  std::mt19937 rng(m * 131 + k * 7 + n);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<T> a(size_t(m) * k, D::From(0)), bh(size_t(k) * n);
  std::vector<double> ad(size_t(m) * k, 0), bd(size_t(k) * n);
  for (int r = 0; r < m; ++r)
    for (int g = 0; g < k / 4; ++g) {
      const int first = rng() % 4, second = (first + 1 + rng() % 3) % 4;  // two distinct columns of 4
      for (int c : {first, second}) {
        const T v = D::From(u(rng));
        a[size_t(r) * k + 4 * g + c] = v;
        ad[size_t(r) * k + 4 * g + c] = D::To(v);
      }
    }
  for (size_t i = 0; i < bh.size(); ++i) {
    bh[i] = D::From(u(rng));
    bd[i] = D::To(bh[i]);
  }
  std::vector<double> ref(size_t(m) * n, 0);
  for (int r = 0; r < m; ++r)
    for (int kk = 0; kk < k; ++kk)
      if (ad[size_t(r) * k + kk] != 0)
        for (int c = 0; c < n; ++c) ref[size_t(r) * n + c] += ad[size_t(r) * k + kk] * bd[size_t(kk) * n + c];

  Device<T> da(a.size()), db(bh.size()), dc(ref.size());
  Device<int> valid(1);
  Cuda(cudaMemcpy(da.p, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice), "upload A");
  Cuda(cudaMemcpy(db.p, bh.data(), bh.size() * sizeof(T), cudaMemcpyHostToDevice), "upload B");
  auto plan = std::make_unique<Plan>();
  MakePlan(h, plan.get(), m, k, n, D::kType, order);

  int invalid = -1;
  // The check only raises the flag for a bad group: it starts at 0.
  Cuda(cudaMemset(valid.p, 0, sizeof(int)), "clear the flag");
  Lt(lt.SpMMAPruneCheck(h, &plan->matmul, da.p, valid.p, stream), "cusparseLtSpMMAPruneCheck");
  Cuda(cudaMemcpy(&invalid, valid.p, sizeof(int), cudaMemcpyDeviceToHost), "read the check");
  if (invalid != 0) throw Failure{"cusparseLtSpMMAPruneCheck says a 2:4 A is not 2:4 (layout or enum mismatch)"};

  size_t compressed_bytes = 0, buffer_bytes = 0, workspace_bytes = 0;
  Lt(lt.SpMMACompressedSize(h, &plan->plan, &compressed_bytes, &buffer_bytes), "cusparseLtSpMMACompressedSize");
  Device<char> compressed(compressed_bytes), buffer(buffer_bytes);
  Lt(lt.SpMMACompress(h, &plan->plan, da.p, compressed.p, buffer.p, stream), "cusparseLtSpMMACompress");
  Lt(lt.MatmulGetWorkspace(h, &plan->plan, &workspace_bytes), "cusparseLtMatmulGetWorkspace");
  auto workspace = std::make_unique<Device<char>>(workspace_bytes);
  const float alpha = 1, beta = 0;
  cudaStream_t streams[1] = {stream};
  Lt(lt.MatmulSearch(h, &plan->plan, &alpha, compressed.p, db.p, &beta, dc.p, dc.p, workspace->p, streams, 1),
     "cusparseLtMatmulSearch");
  size_t searched_bytes = 0;
  Lt(lt.MatmulGetWorkspace(h, &plan->plan, &searched_bytes), "cusparseLtMatmulGetWorkspace after the search");
  if (searched_bytes > workspace_bytes) workspace = std::make_unique<Device<char>>(searched_bytes);
  int alg = -1, max_alg = -1;
  Lt(lt.MatmulAlgGetAttribute(h, &plan->alg, b::kLtAlgConfigId, &alg, sizeof alg), "ALG_CONFIG_ID");
  Lt(lt.MatmulAlgGetAttribute(h, &plan->alg, b::kLtAlgConfigMaxId, &max_alg, sizeof max_alg), "ALG_CONFIG_MAX_ID");

  auto run_and_read = [&](bool in_graph) {
    Cuda(cudaMemsetAsync(dc.p, 0xff, ref.size() * sizeof(T), stream), "poison C");  // NaN in f16 and bf16
    if (in_graph) {
      cudaGraph_t g = nullptr;
      cudaGraphExec_t exec = nullptr;
      Cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
      const b::cusparseStatus_t s = lt.Matmul(h, &plan->plan, &alpha, compressed.p, db.p, &beta, dc.p, dc.p,
                                           workspace->p, streams, 1);
      const cudaError_t e = cudaStreamEndCapture(stream, &g);
      Lt(s, "cusparseLtMatmul while capturing");
      Cuda(e, "cudaStreamEndCapture");
      Cuda(cudaGraphInstantiate(&exec, g, 0), "cudaGraphInstantiate");
      Cuda(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
      Cuda(cudaStreamSynchronize(stream), "graph launch");
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(g);
    } else {
      Lt(lt.Matmul(h, &plan->plan, &alpha, compressed.p, db.p, &beta, dc.p, dc.p, workspace->p, streams, 1),
         "cusparseLtMatmul");
    }
    std::vector<T> out(ref.size());
    Cuda(cudaMemcpyAsync(out.data(), dc.p, out.size() * sizeof(T), cudaMemcpyDeviceToHost, stream), "download C");
    Cuda(cudaStreamSynchronize(stream), "cusparseLtMatmul");
    std::vector<float> f(out.size());
    for (size_t i = 0; i < out.size(); ++i) f[i] = D::To(out[i]);
    return RelErr(f, ref);
  };
  *err = run_and_read(false);
  *graph_err = -1;
  if (graph) {
    try {
      *graph_err = run_and_read(true);
    } catch (const Failure& f) {
      cudaGetLastError();
      std::printf("       graph capture refused (the harness then reports no graph figure): %s\n", f.what.c_str());
    }
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "algorithm %d of 0..%d, compressed %zu B, workspace %zu B", alg, max_alg,
                compressed_bytes, std::max(workspace_bytes, searched_bytes));
  return buf;
}

// A that is not 2:4 (three nonzeros in the first group of row 0): the check must say so.
void NotTwoFour(const b::LtOpaque* h, cudaStream_t stream) {
  const int m = 64, k = 64, n = 16;
  const b::CusparseLt& lt = b::GetCusparseLt();
  std::vector<__half> a(size_t(m) * k, __float2half_rn(0));
  for (int c = 0; c < 3; ++c) a[c] = __float2half_rn(1);
  Device<__half> da(a.size());
  Device<int> valid(1);
  Cuda(cudaMemcpy(da.p, a.data(), a.size() * sizeof(__half), cudaMemcpyHostToDevice), "upload A");
  Plan plan;
  MakePlan(h, &plan, m, k, n, CUDA_R_16F, b::kCusparseOrderRow);
  int invalid = 0;
  Cuda(cudaMemset(valid.p, 0, sizeof(int)), "clear the flag");
  Lt(lt.SpMMAPruneCheck(h, &plan.matmul, da.p, valid.p, stream), "cusparseLtSpMMAPruneCheck");
  Cuda(cudaMemcpy(&invalid, valid.p, sizeof(int), cudaMemcpyDeviceToHost), "read the check");
  Line(invalid != 0, "cusparseLtSpMMAPruneCheck refuses an A with 3 nonzeros in a group of 4 (valid = " +
                         std::to_string(invalid) + ")");
}

#if SPARSE_WITH_CUSPARSELT_H
void CompareWithHeader() {
  auto eq = [](const char* name, long ours, long real) {
    Line(ours == real, std::string(name) + ": ours " + std::to_string(ours) + ", header " + std::to_string(real));
  };
  eq("CUSPARSELT_SPARSITY_50_PERCENT", b::kLtSparsity50Percent, CUSPARSELT_SPARSITY_50_PERCENT);
  eq("CUSPARSE_COMPUTE_32F", b::kLtCompute32F, CUSPARSE_COMPUTE_32F);
  eq("CUSPARSELT_MATMUL_ALG_DEFAULT", b::kLtMatmulAlgDefault, CUSPARSELT_MATMUL_ALG_DEFAULT);
  eq("CUSPARSELT_MATMUL_ALG_CONFIG_ID", b::kLtAlgConfigId, CUSPARSELT_MATMUL_ALG_CONFIG_ID);
  eq("CUSPARSELT_MATMUL_ALG_CONFIG_MAX_ID", b::kLtAlgConfigMaxId, CUSPARSELT_MATMUL_ALG_CONFIG_MAX_ID);
  eq("CUSPARSELT_MATMUL_SEARCH_ITERATIONS", b::kLtSearchIterations, CUSPARSELT_MATMUL_SEARCH_ITERATIONS);
  eq("CUSPARSELT_MATMUL_SPLIT_K", b::kLtSplitK, CUSPARSELT_MATMUL_SPLIT_K);
  eq("CUSPARSELT_MATMUL_SPLIT_K_MODE", b::kLtSplitKMode, CUSPARSELT_MATMUL_SPLIT_K_MODE);
  eq("CUSPARSELT_MATMUL_SPLIT_K_BUFFERS", b::kLtSplitKBuffers, CUSPARSELT_MATMUL_SPLIT_K_BUFFERS);
  eq("CUSPARSE_ORDER_ROW", b::kCusparseOrderRow, CUSPARSE_ORDER_ROW);
  eq("CUSPARSE_ORDER_COL", b::kCusparseOrderCol, CUSPARSE_ORDER_COL);
  eq("CUSPARSE_OPERATION_NON_TRANSPOSE", b::kCusparseOpN, CUSPARSE_OPERATION_NON_TRANSPOSE);
  const size_t largest =
      std::max({sizeof(cusparseLtHandle_t), sizeof(cusparseLtMatDescriptor_t), sizeof(cusparseLtMatmulDescriptor_t),
                sizeof(cusparseLtMatmulAlgSelection_t), sizeof(cusparseLtMatmulPlan_t)});
  Line(largest <= sizeof(b::LtOpaque) && alignof(cusparseLtHandle_t) <= alignof(b::LtOpaque),
       "opaque structs: the header's largest is " + std::to_string(largest) + " B (align " +
           std::to_string(alignof(cusparseLtHandle_t)) + "), ours " + std::to_string(sizeof(b::LtOpaque)) +
           " B (align " + std::to_string(alignof(b::LtOpaque)) + ")");
}
#endif

}  // namespace

int main() {
  const b::CusparseLt& lt = b::GetCusparseLt();
  if (!lt.loaded) {
    std::printf("MISSING %s\n", lt.reason.c_str());
    return 2;
  }
  std::printf("library %s\n", lt.path.c_str());
#if SPARSE_WITH_CUSPARSELT_H
  std::printf("header  cusparseLt.h %d.%d.%d\n", CUSPARSELT_VER_MAJOR, CUSPARSELT_VER_MINOR, CUSPARSELT_VER_PATCH);
  CompareWithHeader();
#endif
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::printf("MISSING no CUDA device\n");
    return 2;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device  %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  auto handle = std::make_unique<b::LtOpaque>();
  const b::cusparseStatus_t s = lt.Init(handle.get());
  if (s != 0) {
    std::printf("FAIL   cusparseLtInit: %s\n", b::CusparseLtStatusName(s).c_str());
    return 1;
  }
  int version = 0;
  lt.GetVersion(handle.get(), &version);
  std::printf("version %d.%d.%d (cusparseLtGetVersion %d; the harness needs >= %d)\n", version / 1000,
              (version % 1000) / 100, version % 100, version, b::kLtMinVersion);
  Line(version >= b::kLtMinVersion, "version is new enough for our enum values");
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);

  struct Shape {
    int m, k, n;
  };
  const Shape shapes[] = {{64, 64, 16}, {128, 256, 64}, {96, 128, 8}, {64, 64, 1}};
  for (int dtype = 0; dtype < 2; ++dtype) {
    for (const Shape& sh : shapes) {
      // As the harness: B and C row-major; for N = 1 column-major when row-major is refused.
      std::vector<int> orders = {b::kCusparseOrderRow};
      if (sh.n == 1) orders.push_back(b::kCusparseOrderCol);
      std::string errors;
      for (int order : orders) {
        char label[128];
        std::snprintf(label, sizeof label, "%s m=%d k=%d n=%d, B and C %s", dtype == 0 ? F16::kName : BF16::kName,
                      sh.m, sh.k, sh.n, order == b::kCusparseOrderRow ? "row-major" : "column-major");
        try {
          double err = -1, graph_err = -1;
          const bool graph = sh.n == 16;
          const std::string how = dtype == 0
                                      ? Product<F16>(handle.get(), sh.m, sh.k, sh.n, order, stream, graph, &err, &graph_err)
                                      : Product<BF16>(handle.get(), sh.m, sh.k, sh.n, order, stream, graph, &err, &graph_err);
          char buf[384];
          std::snprintf(buf, sizeof buf, "%s: rel. error %.2e vs float64 (%s)", label, err, how.c_str());
          Line(err >= 0 && err < 1e-2, buf);
          if (graph_err >= 0) {
            std::snprintf(buf, sizeof buf, "%s: in a CUDA graph, rel. error %.2e", label, graph_err);
            Line(graph_err < 1e-2, buf);
          }
          errors.clear();
          break;
        } catch (const Failure& f) {
          cudaGetLastError();
          errors += std::string(errors.empty() ? "" : "; ") + label + ": " + f.what;
        }
      }
      if (!errors.empty()) {
        // N = 1 refused by the library is a finding, not a wrong enum value: say so apart.
        if (sh.n == 1) std::printf("REFUSED N = 1: %s\n", errors.c_str());
        else Line(false, errors);
      }
    }
  }
  try {
    NotTwoFour(handle.get(), stream);
  } catch (const Failure& f) {
    Line(false, "not-2:4 check: " + f.what);
  }
  lt.Destroy(handle.get());
  std::printf("%s\n", failures == 0 ? "ALL OK" : (std::to_string(failures) + " FAILED").c_str());
  return failures == 0 ? 0 : 1;
}
