// SpMM host side: the table of kernel families (spmm_family.h), SpmmPlan (spmm_plan.h) and
// the public entry points of spmm.h, all by looping over the table. No family is named here:
// each family's .cu registers its entry (the CSR kernels: spmm_csr.cu; tensor cores:
// spmm_tc.cu; bitmap: spmm_bitmap.cu; 2:4: spmm_24.cu).
#include "cuda/spmm/spmm.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/sparse24.h"
#include "cuda/common/device_info.h"
#include "cuda/spmm/spmm_family.h"
#include "cuda/spmm/spmm_plan.h"

namespace sparse {

// ---------------------------------------------------------------------------------------
// The table.

namespace {
std::vector<const SpmmFamily*>& Table() {
  static std::vector<const SpmmFamily*> table;  // a function's static: filled during static initialization
  return table;
}
}  // namespace

bool RegisterSpmmFamily(const SpmmFamily* f) {
  std::vector<const SpmmFamily*>& t = Table();
  for (const SpmmFamily* g : t) {
    if (std::strcmp(g->prefix, f->prefix) == 0 || g->rank == f->rank) {
      std::fprintf(stderr, "sparse: SpMM families '%s' and '%s' share a prefix or a rank\n", g->prefix, f->prefix);
      std::abort();
    }
  }
  t.insert(std::upper_bound(t.begin(), t.end(), f, [](const SpmmFamily* a, const SpmmFamily* b) { return a->rank < b->rank; }),
           f);
  return true;
}

const std::vector<const SpmmFamily*>& SpmmFamilies() { return Table(); }

namespace {

// The family whose prefix `name` carries ("<prefix>_..."), or null.
const SpmmFamily* FamilyOf(const char* name) {
  for (const SpmmFamily* f : SpmmFamilies()) {
    const size_t len = std::strlen(f->prefix);
    if (std::strncmp(name, f->prefix, len) == 0 && name[len] == '_') return f;
  }
  return nullptr;
}

bool ParseVariant(const char* name, SpmmChoice* ch) {
  const SpmmFamily* f = FamilyOf(name);
  if (!f || !f->parse(name, ch)) return false;
  ch->family = f;
  return true;
}

bool CanRun(const SpmmProblem& p, const SpmmChoice& ch) { return ch.family && ch.family->can_run(p, ch); }

// The built-in selection: the first family, by rank, whose rule claims p. Each rule and the
// measurements behind it are documented at the family's entry; the order is the ranks'.
SpmmChoice SelectSpmmKernel(const SpmmProblem& p, int sm_count) {
  for (const SpmmFamily* f : SpmmFamilies()) {
    SpmmChoice ch;
    if (p.keep_sparse && f->stores_dense) continue;
    if (f->select && f->select(p, sm_count, &ch)) {
      ch.family = f;
      return ch;
    }
  }
  return SpmmChoice();  // unreachable while a family claims everything (spmm_csr.cu)
}

bool IsAuto(const char* variant) { return !variant || !*variant || std::strcmp(variant, "auto") == 0; }

// SPARSE_SPMM_VARIANT when set and runnable, else the selection.
SpmmChoice EffectiveChoice(const SpmmProblem& p, int sm_count) {
  const char* forced = std::getenv("SPARSE_SPMM_VARIANT");
  SpmmChoice ch;
  if (!IsAuto(forced) && ParseVariant(forced, &ch) && CanRun(p, ch)) return ch;
  return SelectSpmmKernel(p, sm_count);
}

std::string NameOf(const SpmmChoice& ch) { return ch.family ? ch.family->name(ch) : std::string(); }

// Checks shared by every variant (dimensions, pointers, alignment, index range).
cudaError_t CheckProblem(const SpmmProblem& p) {
  if (p.m < 0 || p.k < 0 || p.n < 0 || p.nnz < 0) return cudaErrorInvalidValue;
  if (p.index_bits != 16 && p.index_bits != 32) return cudaErrorInvalidValue;
  // 16-bit indices hold columns 0..32767.
  if (p.index_bits == 16 && p.k > 32768) return cudaErrorInvalidValue;
  if (p.m == 0 || p.n == 0) return cudaSuccess;  // nothing to write
  if (!p.row_offsets || !p.c) return cudaErrorInvalidValue;
  if (p.nnz > 0 && (!p.values || !p.column_indices || !p.b)) return cudaErrorInvalidValue;
  // Reverse offset memory alignment (tile kernel) assumes 16-byte aligned value and index
  // arrays (cudaMalloc gives 256 bytes).
  if (!Aligned(p.values, 16) || !Aligned(p.column_indices, 16)) return cudaErrorInvalidValue;
  // Pre-scaled offsets (column * n) are int32.
  if (static_cast<int64_t>(p.k) * p.n > INT_MAX) return cudaErrorInvalidValue;
  return cudaSuccess;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// SpmmPlan

cudaError_t SpmmPlan::Init(const SpmmProblem& p, const char* variant) {
  planned_ = p;
  operand_.reset();
  name_.clear();
  choice_ = SpmmChoice();
  const cudaError_t ok = CheckProblem(p);
  if (ok != cudaSuccess) return ok;
  sm_count_ = SmCount();
  empty_ = p.m == 0 || p.n == 0;
  if (IsAuto(variant)) {
    choice_ = EffectiveChoice(p, sm_count_);
  } else if (!ParseVariant(variant, &choice_)) {
    // NOTE: an empty problem launches nothing, so any name passes (as CudaSpmmVariant did).
    if (empty_) return cudaSuccess;
    return cudaErrorInvalidValue;
  }
  name_ = NameOf(choice_);
  if (!empty_ && !CanRun(p, choice_)) return cudaErrorInvalidValue;
  return cudaSuccess;
}

std::string SpmmPlan::KernelName() const {
  char name[80];
  std::snprintf(name, sizeof(name), "spmm_%s_i%d_%s", DTypeName(planned_.dtype), planned_.index_bits, name_.c_str());
  return name;
}

const char* SpmmPlan::form() const { return choice_.family ? choice_.family->form : nullptr; }

size_t SpmmPlan::Bytes() const { return operand_ ? operand_->Bytes() : 0; }

cudaError_t SpmmPlan::Prepare(const SpmmProblem& p, cudaStream_t stream, std::string* why) {
  if (!form() || operand_) return cudaSuccess;
  std::unique_ptr<SpmmOperand> a;
  const cudaError_t e = choice_.family->prepare(p, choice_, stream, &a, why);
  if (e == cudaSuccess) operand_ = std::move(a);
  return e;
}

bool SpmmPlan::ShareOperand(const SpmmPlan& o) {
  if (!o.operand_ || o.choice_.family != choice_.family || o.planned_.m != planned_.m || o.planned_.k != planned_.k ||
      o.planned_.dtype != planned_.dtype || !o.operand_->Serves(choice_))
    return false;
  operand_ = o.operand_;
  return true;
}

cudaError_t SpmmPlan::CopyFrom(const SpmmPlan& o, cudaStream_t stream) {
  planned_ = o.planned_, choice_ = o.choice_, name_ = o.name_, empty_ = o.empty_, sm_count_ = o.sm_count_;
  operand_.reset();
  if (!o.operand_) return cudaSuccess;
  std::unique_ptr<SpmmOperand> copy;
  const cudaError_t e = o.operand_->Clone(&copy, stream);
  if (e == cudaSuccess) operand_ = std::move(copy);
  return e;
}

cudaError_t SpmmPlan::Run(const SpmmProblem& p, cudaStream_t stream) const {
  const cudaError_t ok = CheckProblem(p);
  if (ok != cudaSuccess) return ok;
  if (p.m == 0 || p.n == 0) return cudaSuccess;
  if (!CanRun(p, choice_)) return cudaErrorInvalidValue;
  const SpmmFamily& f = *choice_.family;
  if (!f.form || operand_) return f.launch(p, choice_, operand_.get(), sm_count_, stream);
  // No prepared operand: convert now (synchronous), launch, and wait before it is freed.
  std::unique_ptr<SpmmOperand> tmp;
  cudaError_t e = f.prepare(p, choice_, stream, &tmp, nullptr);
  if (e == cudaSuccess) e = f.launch(p, choice_, tmp.get(), sm_count_, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  return e;
}

int SpmmPlan::IndexBits(DType dtype, int k, int requested) {
  if (requested == 16 || requested == 32) return requested;
  return dtype != DType::kF32 && k <= 32768 ? 16 : 32;
}

int SpmmPlan::Structure(DType dtype, int m, const int* row_offsets, const int* column_indices, const void* values) {
  if (dtype == DType::kF32 || !values) return SpmmProblem::kUnstructured;
  return IsTwoFour(m, row_offsets, column_indices, static_cast<const uint16_t*>(values)) ? SpmmProblem::k24
                                                                                       : SpmmProblem::kUnstructured;
}

// ---------------------------------------------------------------------------------------
// Helpers for the families' prepared operands (spmm_family.h).

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

cudaError_t UploadParts(std::initializer_list<HostPart> parts, cudaStream_t stream) {
  cudaError_t e = cudaSuccess;
  for (const HostPart& h : parts) {
    h.dst->Reset();
    if (e == cudaSuccess) e = h.dst->Upload(h.src, h.bytes, stream);
  }
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);  // the host arrays may go away after the return
  if (e != cudaSuccess)
    for (const HostPart& h : parts) h.dst->Reset();
  return e;
}

cudaError_t CopyParts(std::initializer_list<std::pair<DeviceBuffer*, const DeviceBuffer*>> parts, cudaStream_t stream) {
  cudaError_t e = cudaSuccess;
  for (const auto& [dst, src] : parts) {
    if (e == cudaSuccess) e = dst->Allocate(src->bytes());
    if (e == cudaSuccess && src->bytes())
      e = cudaMemcpyAsync(dst->get(), src->get(), src->bytes(), cudaMemcpyDeviceToDevice, stream);
  }
  if (e != cudaSuccess)
    for (const auto& part : parts) part.first->Reset();
  return e;
}

// ---------------------------------------------------------------------------------------
// The public entry points (spmm.h): each a plan.

cudaError_t CanImplementSpmm(const SpmmProblem& p) {
  SpmmPlan plan;
  return plan.Init(p, nullptr);
}

cudaError_t CudaSpmm(const SpmmProblem& p, cudaStream_t stream) { return CudaSpmmVariant(p, nullptr, stream); }

cudaError_t CudaSpmmVariant(const SpmmProblem& p, const char* variant, cudaStream_t stream) {
  SpmmPlan plan;
  const cudaError_t e = plan.Init(p, variant);
  return e != cudaSuccess ? e : plan.Run(p, stream);
}

std::string SpmmSelectedVariant(const SpmmProblem& p) { return NameOf(SelectSpmmKernel(p, SmCount())); }

std::vector<std::string> SpmmVariants(const SpmmProblem& p) {
  std::vector<std::string> out;
  for (const SpmmFamily* f : SpmmFamilies())
    if (f->variants && !(p.keep_sparse && f->stores_dense)) f->variants(p, &out);
  return out;
}

std::vector<std::string> SpmmVariantGrammar() {
  std::vector<std::string> out;
  for (const SpmmFamily* f : SpmmFamilies()) out.push_back(f->grammar);
  return out;
}

std::string SpmmParsedVariant(const char* name) {
  SpmmChoice ch;
  return name && ParseVariant(name, &ch) ? NameOf(ch) : std::string();
}

const char* SpmmKernelName(const SpmmProblem& p) {
  thread_local char name[80];
  std::snprintf(name, sizeof(name), "spmm_%s_i%d_%s", DTypeName(p.dtype), p.index_bits,
                NameOf(EffectiveChoice(p, SmCount())).c_str());
  return name;
}

}  // namespace sparse
