#include "cutoff/core/heap_tuning.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace cutoff {

namespace {

bool ThresholdsSetByEnvironment() {
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") || std::getenv("MALLOC_MMAP_THRESHOLD_")) return true;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables && std::strstr(tunables, "glibc.malloc.") != nullptr;
}

}  // namespace

bool tune_heap_for_serving(HeapTuning tuning) {
#if defined(__GLIBC__)
  if (ThresholdsSetByEnvironment()) return false;
  // Setting either threshold by hand also turns glibc's adaptation of both off. mallopt takes
  // an int: larger values are kept at INT_MAX rather than wrapped negative.
  const auto as_int = [](std::size_t v) { return static_cast<int>(std::min<std::size_t>(v, INT_MAX)); };
  return mallopt(M_MMAP_THRESHOLD, as_int(tuning.mmap_threshold)) == 1 &&
         mallopt(M_TRIM_THRESHOLD, as_int(tuning.trim_threshold)) == 1;
#else
  (void)tuning;
  return false;
#endif
}

}  // namespace cutoff
