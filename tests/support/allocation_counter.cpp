#include "tests/support/allocation_counter.hpp"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
thread_local long t_allocations = 0;
std::atomic<long> g_allocations{0};
thread_local long t_aligned_allocations = 0;
std::atomic<long> g_aligned_allocations{0};

void* CountedAlloc(std::size_t n) {
  ++t_allocations;
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
}  // namespace

namespace cutoff::test_support {
long allocations_on_this_thread() noexcept { return t_allocations; }
long allocations_total() noexcept { return g_allocations.load(std::memory_order_relaxed); }
long aligned_allocations_on_this_thread() noexcept { return t_aligned_allocations; }
long aligned_allocations_total() noexcept { return g_aligned_allocations.load(std::memory_order_relaxed); }
}  // namespace cutoff::test_support

// g++ cannot see that these replace the global operators and warns about malloc/free pairs.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) { return CountedAlloc(n); }
void* operator new[](std::size_t n) { return CountedAlloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

// The C library's aligned_alloc, counted. The executable's definition takes precedence over
// libc's (and a sanitizer's); memalign, which it forwards to, is the same allocator underneath
// and is intercepted by the sanitizers like aligned_alloc, so free() pairs with it.
extern "C" void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  ++t_aligned_allocations;
  g_aligned_allocations.fetch_add(1, std::memory_order_relaxed);
  return memalign(alignment, size);
}
