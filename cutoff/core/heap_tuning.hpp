// Heap settings for a long-running server on glibc.
//
// glibc adapts its thresholds as a process runs: the free memory at the top of the heap goes
// back to the kernel once it passes twice the largest block so far mapped on its own. A server
// whose requests each rise a few hundred KB above its idle heap (a 100 KB GraphQL response
// written into a growing buffer, the lists its resolvers build) then gives those pages back
// after nearly every request and takes them again, zeroed, on the next one: 13% of the
// GraphQL-over-HTTP throughput on the warehouse operation (docs/benchmarks.md).
// tune_heap_for_serving() keeps up to `trim_threshold` of freed heap for reuse, and maps a
// block of `mmap_threshold` or more on its own when the free heap has no room for it (glibc
// looks there first), so that a request larger than what is kept gives its megabytes back to
// the kernel as soon as they are freed.
//
//   int main(int argc, char** argv) {
//     cutoff::tune_heap_for_serving();  // first thing: before threads start
//     ...
//   }
//
// It changes the whole process. The project's own servers (the `cutoff` binary and the
// benchmark server) call it.
#ifndef CUTOFF_CORE_HEAP_TUNING_HPP_
#define CUTOFF_CORE_HEAP_TUNING_HPP_

#include <cstddef>

namespace cutoff {

struct HeapTuning {
  std::size_t trim_threshold = 32u << 20;  // freed heap kept at the top before it is returned
  std::size_t mmap_threshold = 1u << 20;   // blocks this large or larger, when free heap cannot hold them, are mapped
};

// Applies `tuning`. Does nothing and returns false when the C library is not glibc, or when
// the environment already sets malloc's thresholds (GLIBC_TUNABLES with glibc.malloc.*,
// MALLOC_TRIM_THRESHOLD_ or MALLOC_MMAP_THRESHOLD_): whoever set them knows better.
bool tune_heap_for_serving(HeapTuning tuning = {});

}  // namespace cutoff

#endif  // CUTOFF_CORE_HEAP_TUNING_HPP_
