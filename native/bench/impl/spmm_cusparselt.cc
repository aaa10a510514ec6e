// cuSPARSELt as the 2:4 SpMM baseline ("cusparselt", f16 and bf16 with fp32 accumulation),
// called as an expert would: descriptors, plan, the 2:4 check, compression
// (cusparseLtSpMMACompress) and the algorithm search (cusparseLtMatmulSearch) all in Setup,
// once per matrix; Launch is one cusparseLtMatmul. SPARSE_CUSPARSELT_ALG=ID pins the algorithm
// (its CUSPARSELT_MATMUL_ALG_CONFIG_ID, what the detail of an earlier run names) and skips the
// search: for a profiler, which would otherwise see the search's hundreds of launches and, by
// slowing each, change its choice (v53). The library is loaded on first use
// (libs.h says where it is looked for); a missing library makes the baseline unavailable.
//
// Row-major C[m x n] = A[m x k] B[k x n] maps directly onto cuSPARSELt, which takes row-major
// operands: A is the structured (2:4) operand, m x k with ld k; B is k x n with ld n; C (= D)
// is m x n with ld n; both operations non-transposed. The 2:4 groups run along A's rows (k),
// which is what `sparse prune --pattern 2:4` makes. For N = 1 a second description of the
// same bytes is tried when the first is refused: B and C column-major (k x 1 with ld k,
// m x 1 with ld m).
#if SPARSE_WITH_CUDA
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/device_util.h"
#include "bench/implementation.h"
#include "common/env.h"

namespace sparse {
namespace bench {
namespace {

// SPARSE_CUSPARSELT_ALG: the pinned algorithm id, or -1 when unset. Anything but a whole number
// from 0 is refused with a clear error (a measurement must not silently run another algorithm).
int PinnedAlgorithm() {
  double x = 0;
  const int got = EnvNumbers("SPARSE_CUSPARSELT_ALG", &x, 1);
  if (got == 0) return -1;
  if (got != 1 || x < 0 || x > 1e6 || x != std::floor(x))
    throw BenchError("cusparselt", "SPARSE_CUSPARSELT_ALG must be an algorithm id (a whole number from 0), got '" +
                                       std::string(std::getenv("SPARSE_CUSPARSELT_ALG")) + "'");
  return static_cast<int>(x);
}

// Why the CSR matrix is not 2:4 (at most 2 nonzeros in every group of 4 consecutive columns
// of a row), or "" when it is. Host work on the case's CSR; explicit zeros count as
// nonzeros here (cusparseLtSpMMAPruneCheck, in Setup, looks at the values).
std::string Not24Reason(const HostCsr& csr) {
  std::vector<int32_t> cols;
  for (int r = 0; r < csr.rows; ++r) {
    const int32_t begin = csr.row_offsets[r], end = csr.row_offsets[r + 1];
    cols.assign(csr.column_indices + begin, csr.column_indices + end);
    std::sort(cols.begin(), cols.end());  // the check must not assume sorted rows
    for (size_t i = 0; i + 2 < cols.size(); ++i) {
      if (cols[i] / 4 == cols[i + 2] / 4) {
        const int g = cols[i] / 4 * 4;
        return "cuSPARSELt: A is not 2:4 (row " + std::to_string(r) + " has 3 or more nonzeros in columns " +
               std::to_string(g) + ".." + std::to_string(g + 3) + ")";
      }
    }
  }
  return "";
}

// The compressed A of one operand set (values and 2:4 metadata, cuSPARSELt's own layout).
struct LtCompressed {
  DeviceBuffer data;
  size_t Bytes() const { return data.bytes(); }
  cudaError_t CopyFrom(const LtCompressed& o, cudaStream_t s) {
    const cudaError_t e = data.Allocate(o.data.bytes());
    if (e != cudaSuccess) return e;
    return cudaMemcpyAsync(data.get(), o.data.get(), o.data.bytes(), cudaMemcpyDeviceToDevice, s);
  }
};

// The descriptors and the plan, on the heap so that they never move (the plan refers to
// them); destroyed in reverse order.
struct LtPlan {
  LtOpaque a, b, c, matmul, alg, plan;
  bool a_made = false, b_made = false, c_made = false, alg_made = false, plan_made = false;
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {
    const CusparseLt& lt = GetCusparseLt();
    if (plan_made) lt.MatmulPlanDestroy(&plan);
    if (alg_made && lt.MatmulAlgSelectionDestroy) lt.MatmulAlgSelectionDestroy(&alg);
    if (c_made) lt.MatDescriptorDestroy(&c);
    if (b_made) lt.MatDescriptorDestroy(&b);
    if (a_made) lt.MatDescriptorDestroy(&a);
  }
};

// How B and C are described (A is always row-major m x k).
struct Layout {
  int order;         // kCusparseOrderRow or kCusparseOrderCol
  const char* name;  // for the detail and errors
};

class CusparseLtSpmm : public Implementation {
 public:
  explicit CusparseLtSpmm(const ImplArgs& a) : m_(a.operands), c_(a.c), ctx_(a.ctx), s_(a.ctx.stream) {}

  std::string CanImplement() const override {
    if (m_.dtype != DType::kF16 && m_.dtype != DType::kBF16) {
      return std::string("cusparselt takes f16 or bf16 operands (this case is ") + DTypeName(m_.dtype) + ")";
    }
    std::string why = Not24Reason(c_.csr);
    if (!why.empty()) return why;
    // Last, so that a matrix that is not 2:4 never loads the library.
    return ctx_.CusparseLt() ? "" : ctx_.cusparselt_reason;
  }

  // The compressed A is about 1.125 bytes per weight in 16-bit types (half the values plus
  // 2 bits of metadata per kept value); its exact size is known only after the plan.
  size_t Footprint() const override {
    const size_t weights = (size_t)m_.m * m_.k;
    return Bytes(weights / 2, m_.dtype) + weights / 8 + Bytes((int64_t)m_.k * m_.n, m_.dtype) +
           Bytes((int64_t)m_.m * m_.n, m_.dtype);
  }

  void Setup(int copies) override {
    const CusparseLt& lt = GetCusparseLt();
    h_ = ctx_.CusparseLt();
    if (!h_) throw BenchError("cusparselt", ctx_.cusparselt_reason);
    pinned_ = PinnedAlgorithm();
    // Parts: B (k x n), C (m x n).
    slab_.Build({{Bytes((int64_t)m_.k * m_.n, m_.dtype), m_.dense_b.get()}, {Bytes((int64_t)m_.m * m_.n, m_.dtype)}},
                copies, s_);
    const Layout layout = MakePlan();

    // The dense A, only to check and compress it.
    DeviceBuffer dense, valid;
    AllocateOrThrow(&dense, Bytes((int64_t)m_.m * m_.k, m_.dtype));
    AllocateOrThrow(&valid, sizeof(int));
    Check(Densify(m_.offsets.as<int>(), m_.indices.as<int>(), m_.values.get(), m_.m, m_.k, m_.dtype, dense.get(), s_),
          "densify");
    // NOTE: no cusparseLtSpMMAPrune: the matrix is 2:4 already (checked on the host in
    // CanImplement); the library's own check confirms it on the values. The check only
    // raises its flag for a bad group, so the flag starts at 0 (a fresh allocation held
    // garbage: on the H200 the check then failed at random on valid matrices).
    Check(cudaMemsetAsync(valid.get(), 0, sizeof(int), s_), "cudaMemsetAsync");
    CheckCusparseLt(lt.SpMMAPruneCheck(h_, &plan_->matmul, dense.get(), valid.as<int>(), s_),
                    "cusparseLtSpMMAPruneCheck");
    int invalid = 1;
    Check(cudaMemcpyAsync(&invalid, valid.get(), sizeof(int), cudaMemcpyDeviceToHost, s_), "cudaMemcpy D2H");
    Check(cudaStreamSynchronize(s_), "cusparseLtSpMMAPruneCheck");
    if (invalid != 0) {
      // The CSR passed the host check, so a refusal here means the library reads A otherwise.
      throw BenchError("cusparselt",
                       "cuSPARSELt: A is not 2:4 by cusparseLtSpMMAPruneCheck although its CSR is "
                       "(a layout or enum mismatch?)");
    }

    // Compression, once for operand set 0 and copied to the others.
    size_t compressed_bytes = 0, buffer_bytes = 0;
    CheckCusparseLt(lt.SpMMACompressedSize(h_, &plan_->plan, &compressed_bytes, &buffer_bytes),
                    "cusparseLtSpMMACompressedSize");
    DeviceBuffer compress_buffer;
    AllocateOrThrow(&compress_buffer, buffer_bytes);
    const std::string compress_note = PrepareOncePerCopy(
        &compressed_, copies, s_,
        [&](LtCompressed& t) {
          AllocateOrThrow(&t.data, compressed_bytes);
          CheckCusparseLt(lt.SpMMACompress(h_, &plan_->plan, dense.get(), t.data.get(), compress_buffer.get(), s_),
                          "cusparseLtSpMMACompress");
          return cudaStreamSynchronize(s_);
        },
        "the cuSPARSELt compressed matrix", "compressed A", "made once by cusparseLtSpMMACompress");

    // The algorithm search, on operand set 0; it updates the plan (and its algorithm
    // selection) with the fastest configuration. Skipped where SPARSE_CUSPARSELT_ALG pinned one.
    size_t workspace_bytes = 0;
    CheckCusparseLt(lt.MatmulGetWorkspace(h_, &plan_->plan, &workspace_bytes), "cusparseLtMatmulGetWorkspace");
    AllocateOrThrow(&workspace_, workspace_bytes);
    Check(cudaStreamSynchronize(s_), "cusparselt setup");
    if (pinned_ < 0) {
      CheckCusparseLt(lt.MatmulSearch(h_, &plan_->plan, &alpha_, compressed_[0]->data.get(), slab_.at(0, 0), &beta_,
                                      slab_.at(0, 1), slab_.at(0, 1), workspace_.get(), &stream_, 1),
                      "cusparseLtMatmulSearch");
      Check(cudaStreamSynchronize(s_), "cusparseLtMatmulSearch");
    }
    // The chosen configuration may need more workspace than the default one (split-K).
    size_t searched_bytes = 0;
    CheckCusparseLt(lt.MatmulGetWorkspace(h_, &plan_->plan, &searched_bytes), "cusparseLtMatmulGetWorkspace");
    if (searched_bytes > workspace_bytes) AllocateOrThrow(&workspace_, searched_bytes);
    workspace_bytes = std::max(workspace_bytes, searched_bytes);

    detail_ = Describe(layout, workspace_bytes) + compress_note;
  }

  // One cusparseLtMatmul: no allocation, no synchronization.
  void Launch(int c) override {
    CheckCusparseLt(GetCusparseLt().Matmul(h_, &plan_->plan, &alpha_, compressed_[c]->data.get(), slab_.at(c, 0),
                                           &beta_, slab_.at(c, 1), slab_.at(c, 1), workspace_.get(), &stream_, 1),
                    "cusparseLtMatmul");
  }

  std::vector<double> Output() override { return ReadDense(slab_.at(0, 1), (size_t)m_.m * m_.n, m_.dtype, s_); }

 private:
  // Describes the matmul and makes its plan, with B and C row-major, or for N = 1 (when the
  // library refuses that) column-major: the same bytes. Throws with every refusal.
  Layout MakePlan() {
    std::vector<Layout> layouts = {{kCusparseOrderRow, "row-major"}};
    if (m_.n == 1) layouts.push_back({kCusparseOrderCol, "column-major (N = 1: the same bytes)"});
    std::string errors;
    for (const Layout& l : layouts) {
      try {
        plan_ = std::make_unique<LtPlan>();
        MakePlan(l.order);
        return l;
      } catch (const BenchError& e) {
        errors += (errors.empty() ? "" : "; ") + std::string("B and C ") + l.name + ": " + e.what();
      }
    }
    plan_.reset();
    throw BenchError("cusparselt", "cuSPARSELt refused m = " + std::to_string(m_.m) + ", k = " + std::to_string(m_.k) +
                                       ", n = " + std::to_string(m_.n) + " (" + errors +
                                       "; CUSPARSELT_LOG_LEVEL=1 prints the library's reason)");
  }

  void MakePlan(int order) {
    const CusparseLt& lt = GetCusparseLt();
    const cudaDataType t = CudaType(m_.dtype);
    const bool row = order == kCusparseOrderRow;
    const uint32_t kAlign = 16;  // bytes; every operand here is at least 256-byte aligned
    LtPlan& p = *plan_;
    CheckCusparseLt(lt.StructuredDescriptorInit(h_, &p.a, m_.m, m_.k, m_.k, kAlign, t, kCusparseOrderRow,
                                                kLtSparsity50Percent),
                    "cusparseLtStructuredDescriptorInit (A, 2:4)");
    p.a_made = true;
    CheckCusparseLt(lt.DenseDescriptorInit(h_, &p.b, m_.k, m_.n, row ? m_.n : m_.k, kAlign, t, order),
                    "cusparseLtDenseDescriptorInit (B)");
    p.b_made = true;
    CheckCusparseLt(lt.DenseDescriptorInit(h_, &p.c, m_.m, m_.n, row ? m_.n : m_.m, kAlign, t, order),
                    "cusparseLtDenseDescriptorInit (C)");
    p.c_made = true;
    CheckCusparseLt(lt.MatmulDescriptorInit(h_, &p.matmul, kCusparseOpN, kCusparseOpN, &p.a, &p.b, &p.c, &p.c,
                                            kLtCompute32F),
                    "cusparseLtMatmulDescriptorInit");
    CheckCusparseLt(lt.MatmulAlgSelectionInit(h_, &p.alg, &p.matmul, kLtMatmulAlgDefault),
                    "cusparseLtMatmulAlgSelectionInit");
    p.alg_made = true;
    if (pinned_ >= 0) {
      int max_id = -1;
      CheckCusparseLt(lt.MatmulAlgGetAttribute(h_, &p.alg, kLtAlgConfigMaxId, &max_id, sizeof max_id),
                      "cusparseLtMatmulAlgGetAttribute (CONFIG_MAX_ID)");
      if (pinned_ > max_id)
        throw BenchError("cusparselt", "SPARSE_CUSPARSELT_ALG=" + std::to_string(pinned_) + ": this problem's algorithm ids are 0.." +
                                           std::to_string(max_id));
      CheckCusparseLt(lt.MatmulAlgSetAttribute(h_, &p.alg, kLtAlgConfigId, &pinned_, sizeof pinned_),
                      "cusparseLtMatmulAlgSetAttribute (CONFIG_ID)");
    }
    CheckCusparseLt(lt.MatmulPlanInit(h_, &p.plan, &p.matmul, &p.alg), "cusparseLtMatmulPlanInit");
    p.plan_made = true;
  }

  // The detail: the call, the searched configuration, the library.
  std::string Describe(const Layout& layout, size_t workspace_bytes) const {
    const CusparseLt& lt = GetCusparseLt();
    auto attr = [&](int which) {
      int v = -1;
      if (lt.MatmulAlgGetAttribute(h_, &plan_->alg, which, &v, sizeof v) != 0) v = -1;
      return v;
    };
    const int alg = attr(kLtAlgConfigId), max_alg = attr(kLtAlgConfigMaxId), split_k = attr(kLtSplitK),
              iters = attr(kLtSearchIterations);
    const int v = ctx_.cusparselt_version;
    char buf[768];
    std::snprintf(buf, sizeof buf,
                  "cusparseLtMatmul, A 2:4 row-major (compressed), B and C %s, %s in/out, CUSPARSE_COMPUTE_32F; "
                  "algorithm %d (of ids 0..%d) %s, split-K %d, "
                  "workspace %zu B; cuSPARSELt %d.%d.%d (%s)",
                  layout.name, DTypeName(m_.dtype), alg, max_alg,
                  (pinned_ >= 0 ? std::string("pinned by SPARSE_CUSPARSELT_ALG")
                                : "chosen by cusparseLtMatmulSearch (" + std::to_string(iters) + " iterations each)")
                      .c_str(),
                  split_k, workspace_bytes, v / 1000,
                  (v % 1000) / 100, v % 100, lt.path.c_str());
    return buf;
  }

  const Operands& m_;
  const BenchCase& c_;
  Context& ctx_;
  const cudaStream_t s_;
  cudaStream_t stream_ = s_;  // cusparseLtMatmul takes an array of streams
  const LtOpaque* h_ = nullptr;
  const float alpha_ = 1.f, beta_ = 0.f;
  Slab slab_;
  std::unique_ptr<LtPlan> plan_;
  int pinned_ = -1;  // SPARSE_CUSPARSELT_ALG's id, or -1: the search chooses
  std::vector<std::unique_ptr<LtCompressed>> compressed_;
  DeviceBuffer workspace_;
};

}  // namespace

std::unique_ptr<Implementation> MakeCusparseLtSpmm(const ImplArgs& a) { return std::make_unique<CusparseLtSpmm>(a); }

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
