// The harness's entry points for both devices (bench.h): one Run, one MeasureCeilings.
#include "bench/bench.h"

namespace sparse {
namespace bench {

BenchResult Run(Device device, Op op, const BenchCase& c, const BenchOptions& o) {
  return device == Device::kCuda ? RunCaseCuda(op, c, o) : RunCaseCpu(op, c, o);
}

Ceilings MeasureCeilings(Device device, int threads) {
  return device == Device::kCuda ? MeasureCeilingsCuda() : MeasureCeilingsCpu(threads);
}

}  // namespace bench
}  // namespace sparse
