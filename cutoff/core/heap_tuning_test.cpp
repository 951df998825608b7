#include "cutoff/core/heap_tuning.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace cutoff {
namespace {

#if defined(__GLIBC__)
// Blocks mapped on their own, as glibc counts them.
std::size_t MappedBlocks() { return mallinfo2().hblks; }

TEST(HeapTuning, LeavesThresholdsTheEnvironmentSetAlone) {
  ::setenv("MALLOC_TRIM_THRESHOLD_", "1000000", 1);
  EXPECT_FALSE(tune_heap_for_serving());
  ::unsetenv("MALLOC_TRIM_THRESHOLD_");
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=4000000", 1);
  EXPECT_FALSE(tune_heap_for_serving());
  ::unsetenv("GLIBC_TUNABLES");
}

TEST(HeapTuning, BlocksBelowTheMmapThresholdComeFromTheHeapAndLargerOnesAreMapped) {
  ::unsetenv("MALLOC_TRIM_THRESHOLD_");
  ::unsetenv("MALLOC_MMAP_THRESHOLD_");
  ::unsetenv("GLIBC_TUNABLES");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator replaces glibc's";
#endif
  ASSERT_TRUE(tune_heap_for_serving());
  const std::size_t before = MappedBlocks();
  {
    auto small = std::make_unique<char[]>(512 * 1024);  // glibc's default would map this
    small[0] = 1;
    EXPECT_EQ(MappedBlocks(), before);
  }
  {
    // Larger than the free heap the settings keep (glibc serves a large block from free heap
    // when it has room): mapped on its own, so a hostile request's megabytes go back as soon
    // as they are freed.
    std::unique_ptr<char[]> large(new char[64 * 1024 * 1024]);
    large[0] = 1;
    EXPECT_EQ(MappedBlocks(), before + 1);
  }
  EXPECT_EQ(MappedBlocks(), before);
}
#endif

}  // namespace
}  // namespace cutoff
