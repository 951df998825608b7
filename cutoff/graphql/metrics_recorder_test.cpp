#include "cutoff/graphql/metrics_recorder.hpp"

#include <gtest/gtest.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include "cutoff/graphql/parser.hpp"
#include "tests/support/run_sync.hpp"

namespace cutoff::graphql {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

TEST(MetricsRecorder, PathsDropListIndices) {
  EXPECT_EQ(MetricsRecorder::field_path("warehouse.bins.3.stock"), "warehouse.bins.stock");
  EXPECT_EQ(MetricsRecorder::field_path("a.10.20.b"), "a.b");
  EXPECT_EQ(MetricsRecorder::field_path("slow"), "slow");
}

TEST(MetricsRecorder, CutFieldsBecomeSeries) {
  auto built = Schema::from_sdl("type Query { items: [Item] } type Item { slow: Int }");
  ASSERT_TRUE(built.ok());
  built.schema->resolve("Query", "items", [](FieldContext&) {
    return Data::list(Data::List(3, Data::from(std::string("x"))));
  });
  built.schema->resolve_async("Item", "slow", [](FieldContext&) -> asio::awaitable<Data> {
    asio::steady_timer t(co_await asio::this_coro::executor, 2s);
    co_await t.async_wait(asio::use_awaitable);
    co_return Data::from(1);
  });
  observe::Registry registry;
  MetricsRecorder recorder(registry);
  auto doc = parse("query Stock { items { slow } }");
  Request req;
  req.document = doc.document.get();
  ExecutionOptions options;
  options.recorder = &recorder;
  cutoff::test_support::RunSync([&]() -> asio::awaitable<Response> {
    co_return co_await execute(*built.schema, req, Context().with_timeout(50ms), options);
  });
  const std::string text = registry.expose();
  EXPECT_NE(text.find("cutoff_graphql_field_deadline_exceeded_total{operation=\"Stock\",field=\"items.slow\"} 3"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "cutoff_graphql_field_stopped_total{operation=\"Stock\",field=\"items.slow\",reason=\"deadline_exceeded\"} 3"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("cutoff_stops_total{layer=\"graphql\",reason=\"deadline_exceeded\"} 3"), std::string::npos)
      << text;
  EXPECT_NE(text.find("cutoff_overshoot_seconds_count{layer=\"graphql\"} 3"), std::string::npos) << text;
}

}  // namespace
}  // namespace cutoff::graphql
