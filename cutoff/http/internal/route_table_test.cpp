#include "cutoff/http/internal/route_table.hpp"

#include <gtest/gtest.h>

namespace cutoff::http::internal {
namespace {

namespace asio = boost::asio;

Handler Answer(int status) {
  return
      [status](const Request&, const Context&) -> asio::awaitable<Response> { co_return Response::text(status, ""); };
}

class RouteTableTest : public ::testing::Test {
 protected:
  RouteTableTest() {
    get_ = &Http("GET", "/stock", {.name = "GetStock"});
    post_ = &Http("POST", "/stock", {});
    Http("PUT", "/put-only", {});
    ws_ = &table_.Add("", "/stock", {});
    ws_->ws_handler = [](WebSocket&, const Request&, const Context&) -> asio::awaitable<void> { co_return; };
  }
  RouteEntry& Http(std::string method, std::string path, RouteOptions options) {
    RouteEntry& r = table_.Add(std::move(method), std::move(path), std::move(options));
    r.handler = Answer(200);
    return r;
  }

  RouteTable table_;
  RouteEntry* get_ = nullptr;
  RouteEntry* post_ = nullptr;
  RouteEntry* ws_ = nullptr;
};

TEST_F(RouteTableTest, MatchesMethodAndExactPath) {
  EXPECT_EQ(table_.Find("/stock", "GET", false).route, get_);
  EXPECT_EQ(table_.Find("/stock", "POST", false).route, post_);
  EXPECT_EQ(table_.Find("/stock/", "GET", false).route, nullptr);
  EXPECT_EQ(table_.Find("/stock", "get", false).route, nullptr);  // methods are case-sensitive
}

TEST_F(RouteTableTest, WebSocketRoutesAreApart) {
  EXPECT_EQ(table_.Find("/stock", "GET", true).route, ws_);
  EXPECT_EQ(table_.Find("/put-only", "GET", true).route, nullptr);
  EXPECT_FALSE(table_.Find("/put-only", "GET", true).path_known);
}

TEST_F(RouteTableTest, HeadIsAnsweredByGet) {
  EXPECT_EQ(table_.Find("/stock", "HEAD", false).route, get_);
  EXPECT_EQ(table_.Find("/put-only", "HEAD", false).route, nullptr);
}

TEST_F(RouteTableTest, AKnownPathWithAnotherMethodIs405WithAllow) {
  const RouteMatch m = table_.Find("/stock", "DELETE", false);
  EXPECT_EQ(m.route, nullptr);
  EXPECT_TRUE(m.path_known);
  EXPECT_EQ(m.allow, "GET, HEAD, POST");
  const Response r = UnroutedResponse(m, "/stock");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers.get("Allow"), "GET, HEAD, POST");
}

TEST_F(RouteTableTest, AnUnknownPathIs404) {
  const RouteMatch m = table_.Find("/nope", "GET", false);
  EXPECT_FALSE(m.path_known);
  const Response r = UnroutedResponse(m, "/nope");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("no route for /nope"), std::string::npos);
  EXPECT_FALSE(r.headers.contains("Allow"));
}

TEST_F(RouteTableTest, ARouteIsNamedByItsOptionsOrItsPath) {
  EXPECT_EQ(get_->name, "GetStock");
  EXPECT_EQ(post_->name, "/stock");
}

}  // namespace
}  // namespace cutoff::http::internal
