// Orphaned work, end to end: an HTTP handler that answers while work it started still holds
// a pooled SQLite connection. The pool reports how long that work outlived the response in
// cutoff_orphaned_work_seconds{backend="sql"}; a handler that finishes its work first reports
// nothing.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "cutoff/http/client.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/sql/pool.hpp"
#include "cutoff/sql/pool_metrics.hpp"
#include "cutoff/sql/sqlite/sqlite_connection.hpp"
#include "cutoff/testing/run_sync.hpp"
#include "cutoff/testing/sleep.hpp"
#include "cutoff/testing/time_scale.hpp"

namespace cutoff {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

double Metric(const std::string& text, const std::string& series) {
  const auto at = text.find(series + " ");
  return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size() + 1));
}

TEST(OrphanedWork, WorkThatOutlivesItsResponseIsMeasured) {
  asio::io_context io;
  observe::Registry registry;
  sql::Pool pool(sql::sqlite_factory({}), {.max_size = 2});
  sql::register_pool_metrics(registry, pool, "main");
  http::Server server(io.get_executor(), {.metrics = &registry, .one_io_thread = true});
  // Answers at once but leaves a query running for another 150 ms: a zombie.
  server.route("GET", "/leaky", [&](const http::Request&, const Context& ctx) -> asio::awaitable<http::Response> {
    auto lease = std::make_shared<sql::Pool::Lease>(co_await pool.acquire(ctx));
    // The lease is a parameter, so the coroutine frame owns it (a lambda capture would not
    // outlive co_spawn's temporary).
    auto linger = [](std::shared_ptr<sql::Pool::Lease> held) -> asio::awaitable<void> {
      co_await testing::Sleep(150ms);  // still holds the connection
      held.reset();
    };
    asio::co_spawn(co_await asio::this_coro::executor, linger(lease), asio::detached);
    co_return http::Response::text(200, "done (not really)\n");
  });
  // Finishes its work before answering.
  server.route("GET", "/tidy", [&](const http::Request&, const Context& ctx) -> asio::awaitable<http::Response> {
    {
      auto lease = co_await pool.acquire(ctx);
      co_await testing::Sleep(20ms);
    }
    co_return http::Response::text(200, "done\n");
  });
  const auto port = server.listen("127.0.0.1", 0);
  std::thread thread([&] { io.run(); });

  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  testing::RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    EXPECT_EQ((co_await client.get(Context(), base + "/tidy")).status, 200);
    EXPECT_EQ((co_await client.get(Context(), base + "/leaky")).status, 200);
    co_await testing::Sleep(400ms * testing::TimeScale());
  });
  const std::string text = registry.expose();
  EXPECT_EQ(Metric(text, "cutoff_orphaned_work_seconds_count{backend=\"sql\"}"), 1) << text;
  const double outlived = Metric(text, "cutoff_orphaned_work_seconds_sum{backend=\"sql\"}");
  EXPECT_GE(outlived, 0.12);
  EXPECT_LT(outlived, 0.4 * testing::TimeScale());

  server.shutdown(100ms);
  thread.join();
}

}  // namespace
}  // namespace cutoff
