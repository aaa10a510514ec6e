// Times the unstructured stream's encoder (native/common/unstructured_stream.h) on the host: a
// random M x K matrix (default 11008 x 4096) at density D (default 0.5), rows in column order,
// the pair layout in the GEMM engine's cut (8 strips, 64-column stages), without and with whole
// tiles (80 registers), on 1, 2 and the hardware's threads; the median of 3 builds each. Every
// build must give the 1-thread stream, byte for byte. Run: bash scripts/bench-unstructured-stream.sh
// (ENCODER_SERIAL: built against an encoder without the threads argument, e.g. v33's).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "common/unstructured_stream.h"

int main(int argc, char** argv) {
  const int m = argc > 1 ? std::atoi(argv[1]) : 11008, k = argc > 2 ? std::atoi(argv[2]) : 4096;
  const double d = argc > 3 ? std::atof(argv[3]) : 0.5;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<int> off(m + 1, 0), col;
  std::vector<uint16_t> val;
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < k; ++c)
      if (u(rng) < d) col.push_back(c), val.push_back(0x3c00);
    off[r + 1] = static_cast<int>(col.size());
  }
  std::printf("%d x %d, %zu nonzeros (density %.3f), pair layout, 64-column stages\n", m, k, col.size(), d);
  sparse::UnstStream first;
#if defined(ENCODER_SERIAL)
  const std::vector<int> thread_counts{1};
#else
  std::vector<int> thread_counts{1, 2, static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))};
  std::sort(thread_counts.begin(), thread_counts.end());
  thread_counts.erase(std::unique(thread_counts.begin(), thread_counts.end()), thread_counts.end());
#endif
  int failures = 0;
  for (int whole_min : {0, 80}) {
    for (int threads : thread_counts) {
      std::vector<double> ms;
      for (int rep = 0; rep < 3; ++rep) {
        sparse::UnstStream s;
        const auto a = std::chrono::steady_clock::now();
#if defined(ENCODER_SERIAL)
        const std::string e = sparse::BuildUnstStream(m, k, off.data(), col.data(), val.data(), 8, 64, 0, &s,
                                                      sparse::UnstLayout::kPairFrag, whole_min);
#else
        const std::string e = sparse::BuildUnstStream(m, k, off.data(), col.data(), val.data(), 8, 64, 0, &s,
                                                      sparse::UnstLayout::kPairFrag, whole_min, threads);
#endif
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
        if (!e.empty()) std::printf("FAIL %s\n", e.c_str()), ++failures;
        if (threads == 1 && rep == 0) first = s;
        else if (s.data != first.data || s.offsets != first.offsets) std::printf("FAIL the stream differs\n"), ++failures;
      }
      std::sort(ms.begin(), ms.end());
      std::printf("whole_min %2d, %2d thread%s: %7.1f ms (median of 3), %.1f MB\n", whole_min, threads, threads == 1 ? " " : "s",
                  ms[1], first.Bytes() / 1e6);
    }
  }
  return failures == 0 ? 0 : 1;
}
