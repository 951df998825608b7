#include "cutoff/http/internal/request_id.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "cutoff/observe/request_id.hpp"

namespace cutoff::http::internal {
namespace {

Request WithId(std::string_view id) {
  Request req;
  req.headers.add("X-Request-Id", id);
  return req;
}

TEST(RequestId, TheCallersIdIsKeptWhenValidAndReplacedOtherwise) {
  EXPECT_EQ(RequestIdFor(WithId("req-42")), "req-42");
  const std::string replaced = RequestIdFor(WithId("bad id"));
  EXPECT_NE(replaced, "bad id");
  EXPECT_TRUE(observe::valid_request_id(replaced));
  EXPECT_EQ(RequestIdFor(Request{}).size(), 15u);
}

}  // namespace
}  // namespace cutoff::http::internal
