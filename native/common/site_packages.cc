#include "common/site_packages.h"

#include <glob.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace sparse {

std::vector<std::string> SitePackagesRoots() {
  std::vector<std::string> roots;
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && v[0] ? v : "";
  };
  if (!env("VIRTUAL_ENV").empty()) roots.push_back(env("VIRTUAL_ENV") + "/lib/python3*/site-packages");
  if (!env("CONDA_PREFIX").empty()) roots.push_back(env("CONDA_PREFIX") + "/lib/python3*/site-packages");
  if (!env("HOME").empty()) {
    roots.push_back(env("HOME") + "/.local/lib/python3*/site-packages");
    roots.push_back(env("HOME") + "/.pyenv/versions/*/lib/python3*/site-packages");
  }
  for (const char* r : {"/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
                        "/usr/lib/python3/dist-packages", "/usr/lib/python3*/site-packages",
                        "/usr/lib64/python3*/site-packages", "/opt/conda/lib/python3*/site-packages",
                        "/opt/*/.venv/lib/python3*/site-packages", "/opt/*/venv/lib/python3*/site-packages",
                        "/opt/*/lib/python3*/site-packages"}) {
    roots.push_back(r);
  }
  return roots;
}

std::vector<std::string> GlobUnderRoots(const std::vector<std::string>& roots, const std::vector<std::string>& suffixes) {
  std::vector<std::string> out;
  for (const std::string& root : roots) {
    for (const std::string& suffix : suffixes) {
      glob_t g;
      std::vector<std::string> found;
      if (glob((root + suffix).c_str(), 0, nullptr, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) found.push_back(g.gl_pathv[i]);
      }
      globfree(&g);
      // strverscmp: python3.12 sorts after python3.9.
      std::sort(found.begin(), found.end(),
                [](const std::string& a, const std::string& b) { return strverscmp(a.c_str(), b.c_str()) > 0; });
      for (const std::string& f : found)
        if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
    }
  }
  return out;
}

}  // namespace sparse
