#include "cutoff/graphql/http/graphiql_route.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <boost/asio/io_context.hpp>
#include <thread>

#include "cutoff/graphql/graphiql_page.hpp"
#include "cutoff/http/client.hpp"
#include "tests/support/run_sync.hpp"

namespace cutoff::graphql {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

std::string Gunzip(const std::string& in) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string out;
  char buffer[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
  }
  inflateEnd(&z);
  EXPECT_EQ(rc, Z_STREAM_END);
  return out;
}

class GraphiqlRoute : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<http::Server>(io_.get_executor());
    mount_graphiql(*server_, "/graphiql", {.endpoint = "/api/graphql", .example = "{ a(x: \"<&>\") }"});
    base_ = "http://127.0.0.1:" + std::to_string(server_->listen("127.0.0.1", 0));
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    server_->shutdown(100ms);
    thread_.join();
  }
  http::Response Get(std::vector<std::pair<std::string, std::string>> headers) {
    http::ClientRequest req{.url = base_ + "/graphiql"};
    for (auto& [k, v] : headers) req.headers.set(k, v);
    return test_support::RunSync([&]() -> asio::awaitable<http::Response> {
      http::Client client(co_await asio::this_coro::executor);
      co_return co_await client.request(Context::background(), req);
    });
  }

  asio::io_context io_;
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
  std::string base_;
};

TEST_F(GraphiqlRoute, ThePageCarriesItsEndpointAndAnEscapedExample) {
  const std::string page = graphiql_page_for({.endpoint = "/api/graphql", .example = "{ a(x: \"<&>\") }"});
  EXPECT_NE(page.find("data-endpoint=\"/api/graphql\" data-example=\"{ a(x: &quot;&lt;&amp;&gt;&quot;) }\""),
            std::string::npos);
  EXPECT_EQ(page.find("data-endpoint=\"/graphql\""), std::string::npos);
  EXPECT_EQ(graphiql_page_for({}).find("data-example"), std::string::npos);
}

TEST_F(GraphiqlRoute, GzipWhenAcceptedAndTheSamePageEitherWay) {
  const http::Response plain = Get({});
  EXPECT_EQ(plain.status, 200);
  EXPECT_FALSE(plain.headers.get("Content-Encoding").has_value());
  EXPECT_EQ(plain.headers.get("Vary"), "Accept-Encoding");
  EXPECT_EQ(plain.headers.get("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(plain.body.find("data-endpoint=\"/api/graphql\""), std::string::npos);

  const http::Response gz = Get({{"Accept-Encoding", "br;q=1.0, gzip;q=0.8, *;q=0.1"}});
  EXPECT_EQ(gz.headers.get("Content-Encoding"), "gzip");
  EXPECT_EQ(Gunzip(gz.body), plain.body);
  EXPECT_LT(gz.body.size() * 2, plain.body.size()) << "compressed " << gz.body.size() << " of " << plain.body.size();
  EXPECT_NE(gz.headers.get("ETag"), plain.headers.get("ETag"));  // two representations

  // Refusals of gzip are honoured.
  for (const char* refuses : {"gzip;q=0", "identity", "br", "*;q=0", "gzip;q=0.0, *"})
    EXPECT_FALSE(Get({{"Accept-Encoding", refuses}}).headers.get("Content-Encoding").has_value()) << refuses;
  EXPECT_EQ(Get({{"Accept-Encoding", "*"}}).headers.get("Content-Encoding"), "gzip");
  EXPECT_EQ(Get({{"Accept-Encoding", "x-gzip"}}).headers.get("Content-Encoding"), "gzip");
}

TEST_F(GraphiqlRoute, ARevalidationIsAnswered304WithoutTheBody) {
  const http::Response first = Get({{"Accept-Encoding", "gzip"}});
  const std::string tag = std::string(first.headers.get("ETag").value_or(""));
  ASSERT_FALSE(tag.empty());
  EXPECT_EQ(first.headers.get("Cache-Control"), "no-cache");
  const http::Response again = Get({{"Accept-Encoding", "gzip"}, {"If-None-Match", "\"other\", W/" + tag}});
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(again.headers.get("ETag"), tag);
  // The tag of the gzip copy does not revalidate the plain page.
  EXPECT_EQ(Get({{"If-None-Match", tag}}).status, 200);
  EXPECT_EQ(Get({{"If-None-Match", "*"}}).status, 304);
}

TEST(GraphiqlExample, LeafFieldsWithoutRequiredArguments) {
  auto built = Schema::from_sdl(
      "type Query { a: Int b(x: Int!): Int c(y: Int = 1): String d: [String!]! o: O e: E }\n"
      "type O { z: Int } enum E { X }");
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(example_operation(*built.schema), "{\n  a\n  c\n  d\n  e\n}");
  auto objects = Schema::from_sdl("type Query { o: O } type O { z: Int }");
  ASSERT_TRUE(objects.ok());
  EXPECT_EQ(example_operation(*objects.schema), "{\n  __typename\n}");
}

}  // namespace
}  // namespace cutoff::graphql
