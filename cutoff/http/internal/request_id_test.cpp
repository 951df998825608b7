#include "cutoff/http/internal/request_id.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cutoff::http::internal {
namespace {

Request WithId(std::string_view id) {
  Request req;
  req.headers.add("X-Request-Id", id);
  return req;
}

TEST(RequestId, AcceptsTheCharactersIdsAreMadeOf) {
  EXPECT_TRUE(ValidRequestId("req-42"));
  EXPECT_TRUE(ValidRequestId("a_b.c:d/e+f=G9"));
  EXPECT_TRUE(ValidRequestId(std::string(128, 'x')));
}

TEST(RequestId, RefusesWhatWouldBreakALogLineOrAHeader) {
  EXPECT_FALSE(ValidRequestId(""));
  EXPECT_FALSE(ValidRequestId(std::string(129, 'x')));
  EXPECT_FALSE(ValidRequestId("with space"));
  EXPECT_FALSE(ValidRequestId("quote\"d"));
  EXPECT_FALSE(ValidRequestId("line\r\nbreak"));
  EXPECT_FALSE(ValidRequestId("caf\xc3\xa9"));
}

TEST(RequestId, NewIdsAre15HexDigitsAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    const std::string id = NewRequestId();
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
    for (int i = 0; i < 1000; ++i) a.push_back(NewRequestId());
  });
  std::thread tb([&] {
    for (int i = 0; i < 1000; ++i) b.push_back(NewRequestId());
  });
  ta.join();
  tb.join();
  std::set<std::string> all(a.begin(), a.end());
  all.insert(b.begin(), b.end());
  EXPECT_EQ(all.size(), 2000u);
}

TEST(RequestId, TheCallersIdIsKeptWhenValidAndReplacedOtherwise) {
  EXPECT_EQ(RequestIdFor(WithId("req-42")), "req-42");
  const std::string replaced = RequestIdFor(WithId("bad id"));
  EXPECT_NE(replaced, "bad id");
  EXPECT_TRUE(ValidRequestId(replaced));
  EXPECT_EQ(RequestIdFor(Request{}).size(), 15u);
}

}  // namespace
}  // namespace cutoff::http::internal
