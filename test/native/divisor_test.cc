// CPU test of the division by multiply-high (native/common/divisor.h) the streaming engine's start
// uses for its items (Args' divisors): DivideBy(n, MakeDivisor(d)) == n / d for n in [0, 2^31)
// over every d up to 4096, the powers of two and their neighbours, random d up to 2^31 - 1, the
// largest n; and MakeDivisor refuses d outside [1, 2^31). Run: test/native/divisor.test.ts.
#include <cstdint>
#include <cstdio>
#include <random>

#include "common/divisor.h"

namespace {

long long failures = 0, checked = 0;

void Check(uint32_t n, long long d) {
  const sparse::Divisor dv = sparse::MakeDivisor(d);
  const uint32_t q = sparse::DivideBy(n, dv);
  ++checked;
  if (dv.mul == 0 || q != static_cast<uint32_t>(n / d)) {
    if (failures < 10) std::printf("FAIL %u / %lld: %u (mul %u shift %u)\n", n, d, q, dv.mul, dv.shift);
    ++failures;
  }
}

}  // namespace

int main() {
  std::mt19937_64 rng(51);
  const uint32_t kMaxN = 0x7fffffffu;
  for (long long d = 1; d <= 4096; ++d) {
    for (uint32_t n = 0; n < 2 * static_cast<uint32_t>(d) + 64; ++n) Check(n, d);
    for (int i = 0; i < 500; ++i) Check(static_cast<uint32_t>(rng() & kMaxN), d);
    for (uint32_t n = kMaxN - 64; n < kMaxN; ++n) Check(n, d);
    Check(kMaxN, d);
  }
  for (int s = 0; s < 31; ++s) {
    for (long long d = (1LL << s) - 1; d <= (1LL << s) + 1; ++d) {
      if (d < 1 || d > kMaxN) continue;
      for (int i = 0; i < 2000; ++i) Check(static_cast<uint32_t>(rng() & kMaxN), d);
      for (uint32_t n = kMaxN - 16; n <= kMaxN - 1; ++n) Check(n, d);
      Check(kMaxN, d);
    }
  }
  for (int i = 0; i < 1000000; ++i) {
    const long long d = 1 + static_cast<long long>(rng() % kMaxN);
    Check(static_cast<uint32_t>(rng() & kMaxN), d);
    Check(kMaxN, d);
  }
  for (long long d : {0LL, -1LL, -7LL, 1LL << 31, 1LL << 40}) {
    ++checked;
    if (sparse::MakeDivisor(d).mul != 0) {
      std::printf("FAIL MakeDivisor(%lld) is set\n", d);
      ++failures;
    }
  }
  std::printf("divisor: %lld checks, %lld failures\n", checked, failures);
  return failures == 0 ? 0 : 1;
}
