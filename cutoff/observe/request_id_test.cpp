#include "cutoff/observe/request_id.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cutoff::observe {
namespace {

TEST(RequestId, AcceptsTheCharactersIdsAreMadeOf) {
  EXPECT_TRUE(valid_request_id("req-42"));
  EXPECT_TRUE(valid_request_id("a_b.c:d/e+f=G9"));
  EXPECT_TRUE(valid_request_id(std::string(128, 'x')));
}

TEST(RequestId, RefusesWhatWouldBreakALogLineOrAHeader) {
  EXPECT_FALSE(valid_request_id(""));
  EXPECT_FALSE(valid_request_id(std::string(129, 'x')));
  EXPECT_FALSE(valid_request_id("with space"));
  EXPECT_FALSE(valid_request_id("quote\"d"));
  EXPECT_FALSE(valid_request_id("line\r\nbreak"));
  EXPECT_FALSE(valid_request_id("caf\xc3\xa9"));
}

TEST(RequestId, NewIdsAre15HexDigitsAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    const std::string id = new_request_id();
    ASSERT_EQ(id.size(), 15u);
    ASSERT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 10000u);
}

TEST(RequestId, ThreadsDrawDifferentIds) {
  // Each thread seeds its own sequence: two threads must not produce the same ids.
  std::vector<std::string> a, b;
  std::thread ta([&] {
    for (int i = 0; i < 1000; ++i) a.push_back(new_request_id());
  });
  std::thread tb([&] {
    for (int i = 0; i < 1000; ++i) b.push_back(new_request_id());
  });
  ta.join();
  tb.join();
  std::set<std::string> all(a.begin(), a.end());
  all.insert(b.begin(), b.end());
  EXPECT_EQ(all.size(), 2000u);
}

}  // namespace
}  // namespace cutoff::observe
