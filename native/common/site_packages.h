#ifndef SPARSE_COMMON_SITE_PACKAGES_H_
#define SPARSE_COMMON_SITE_PACKAGES_H_
// Where Python wheels put shared libraries (NumPy's bundled OpenBLAS for the CPU baseline,
// the cuSPARSELt wheel for the 2:4 baseline): one search for both. Host code, no CUDA.
#include <string>
#include <vector>

namespace sparse {

// The usual site-packages folders as glob patterns, in search order: $VIRTUAL_ENV,
// $CONDA_PREFIX, the user's (~/.local, pyenv), the system's, conda's, then virtual
// environments under /opt (the H200 machine's torch lives in one).
std::vector<std::string> SitePackagesRoots();

// The files matching root + suffix, for each root in order and each suffix in order; within
// one pattern the newest Python first (python3.12 before python3.9); no path twice.
std::vector<std::string> GlobUnderRoots(const std::vector<std::string>& roots, const std::vector<std::string>& suffixes);

}  // namespace sparse
#endif  // SPARSE_COMMON_SITE_PACKAGES_H_
