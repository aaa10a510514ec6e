#ifndef SPARSE_BENCH_REGISTRY_H_
#define SPARSE_BENCH_REGISTRY_H_
// The implementations the harness can time, on both devices, by op and by the name a case
// asks for (BenchCase::impls; the TypeScript side lists the same names in ImplName).
//
// How to add an implementation (a new kernel of ours, or a baseline library):
//   1. Write impl/<op>_<name>.cc: a class deriving from Implementation (implementation.h)
//      and a factory `std::unique_ptr<Implementation> Make...(const ImplArgs&)`.
//      - CanImplement(): why it cannot run this case ("" when it can): a library that did
//        not load, a dtype it does not take. No device work; the case goes on without it.
//      - Footprint(): the bytes one launch reads and writes (it decides how many operand sets
//        are rotated to keep the L2 cold).
//      - Setup(copies): copy the case's Operands into `copies` operand sets (a Slab: one
//        SlabPart per array, copied from its source). Anything built once per matrix (a
//        weight format such as the tensor-core tiles, a bitmap or a 2:4 compressed matrix;
//        a library's plan, compression and algorithm search) is built here for set 0 and
//        copied to the others (PrepareOncePerCopy), never inside Launch. Pick among a
//        library's algorithms with PickFastest (timing.h). Set detail_ to say how it runs.
//      - Launch(copy): one launch on ctx.stream, reading only operand set `copy`; it must
//        not allocate or synchronize (it is also captured into a CUDA graph).
//      - Output(): operand set 0's result as doubles (SpMM: C row-major; SDDMM: the nnz
//        values in CSR order), checked against the dense reference.
//      A CPU implementation is the same interface: its factory takes CpuImplArgs (the case's
//      HostOperands, host_operands.h); Launch runs synchronously and is timed with a steady
//      clock; Footprint is unused (impl/cpu_ours.cc, impl/cpu_dense.cc).
//   2. Declare the factory and add it to kImplementations in registry.cc: a new name is one
//      line (its factory per device and op, null where it does not run); an existing name
//      for another op or device fills in that column.
//   3. A library loaded at run time: its loader beside cuBLAS and cuSPARSE in libs.h /
//      libs.cc (dlopen, the few prototypes and enum values it needs), its handle in Context
//      (context.h, created once in GetContext with a reason when it is missing, or on first
//      use for a large library few cases need, as Context::CusparseLt), and its
//      CanImplement returns that reason when the handle is null.
//   4. The name in src/bench (ImplName and the places that choose which names to time).
// sources.cjs compiles every .cc below native/, so nothing else lists the file.
// Host code; the CUDA half exists only when SPARSE_WITH_CUDA is set.
#include <memory>
#include <string>

#include "bench/implementation.h"

namespace sparse {
namespace bench {

// The implementation `args.name` of `op`, or null with `*reason` set: unknown name, not
// on this device, or its CanImplement's answer.
std::unique_ptr<Implementation> MakeCpuImplementation(Op op, const CpuImplArgs& args, std::string* reason);
#if SPARSE_WITH_CUDA
std::unique_ptr<Implementation> MakeImplementation(Op op, const ImplArgs& args, std::string* reason);
#endif

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_BENCH_REGISTRY_H_
