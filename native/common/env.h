#ifndef SPARSE_COMMON_ENV_H_
#define SPARSE_COMMON_ENV_H_
// Switches and model constants read from the environment (the families' A/B switches and
// selection models). Pure C++.
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace sparse {

// A selection model's constants from the environment (SPARSE_UND_SMALL, SPARSE_S24G_MODEL):
// the count of comma-separated finite numbers that make up all of `name`'s value, at most `max`
// of them into out; 0 when unset, -1 when malformed (a family then keeps its default).
inline int EnvNumbers(const char* name, double* out, int max) {
  const char* v = std::getenv(name);
  if (v == nullptr) return 0;
  int count = 0;
  for (const char* at = v;; ++at) {
    char* end = nullptr;
    const double d = std::strtod(at, &end);
    if (end == at || !std::isfinite(d) || count == max) return -1;
    out[count++] = d;
    if (*end == '\0') return count;
    if (*end != ',') return -1;
    at = end;
  }
}

// Whether the environment variable `name` is set to exactly `value` (a selection model's "off", an
// A/B switch's setting).
inline bool EnvIs(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

// An A/B switch read as a whole number: true, with atoi's value in *out, when `name` is set and
// not empty; false (and *out untouched) otherwise.
inline bool EnvInt(const char* name, int* out) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return false;
  *out = std::atoi(v);
  return true;
}

}  // namespace sparse

#endif  // SPARSE_COMMON_ENV_H_
