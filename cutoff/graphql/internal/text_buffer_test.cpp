#include "cutoff/graphql/internal/text_buffer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace cutoff::graphql::internal {
namespace {

TEST(TextBuffer, IntegersAreWrittenAsToStringWritesThem) {
  std::vector<std::int64_t> values = {0, 1, 9, 10, 99, 100, 101, 999, 1000, 9999, 10000, 10001, 123456789,
                                      std::numeric_limits<std::int32_t>::max(),
                                      std::numeric_limits<std::int32_t>::min(),
                                      std::numeric_limits<std::int64_t>::max(),
                                      std::numeric_limits<std::int64_t>::min()};
  for (std::int64_t p = 1; p > 0 && p <= std::numeric_limits<std::int64_t>::max() / 10; p *= 10)
    for (std::int64_t d : {p - 1, p, p + 1}) values.insert(values.end(), {d, -d});
  for (std::int64_t v : values) {
    TextBuffer out;
    out += "[";
    out.append_int(v);
    out += "]";
    EXPECT_EQ(out.release(), "[" + std::to_string(v) + "]");
  }
}

TEST(TextBuffer, AppendsOfEverySizeLandInOrderAcrossGrowth) {
  TextBuffer out;
  std::string expected;
  for (std::size_t n = 0; n < 300; ++n) {
    const std::string piece(n, static_cast<char>('a' + n % 26));
    out.append(piece);
    out.append_int(static_cast<std::int64_t>(n));
    expected += piece + std::to_string(n);
  }
  EXPECT_EQ(out.size(), expected.size());
  EXPECT_EQ(out.release(), expected);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace cutoff::graphql::internal
