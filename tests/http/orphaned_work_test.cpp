// Orphaned work, end to end: an HTTP handler that answers while a statement it started still
// runs in SQLite. The driver reports how long the statement ran on after the response went
// out, at its real end, in cutoff_orphaned_work_seconds{backend="sqlite"}; a lease merely
// held past the response, or a statement finished before it, reports nothing.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "cutoff/http/client.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/sql/pool.hpp"
#include "cutoff/sql/pool_metrics.hpp"
#include "cutoff/sql/sqlite/sqlite_connection.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

double Metric(const std::string& text, const std::string& series) {
  const auto at = text.find(series + " ");
  return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size() + 1));
}

// Runs until x reaches 3 million: a few hundred milliseconds.
constexpr const char* kSlow =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) FROM c";

TEST(OrphanedWork, StatementsThatOutliveTheirResponseAreMeasuredAtTheirEnd) {
  asio::io_context io;
  observe::Registry registry;
  std::mutex mu;
  std::optional<TimePoint> slow_started, slow_ended;
  sql::SqliteOptions sqlite;
  sqlite.driver.metrics = &registry;
  sqlite.driver.statement_observer = [&](const sql::StatementEvent& e) {
    if (e.request_id != "leaky") return;
    std::lock_guard lock(mu);
    (e.ended ? slow_ended : slow_started) = e.ended ? *e.ended : e.started;
  };
  sql::Pool pool(sql::sqlite_factory(sqlite), {.max_size = 2});
  sql::register_pool_metrics(registry, pool, "main");
  http::Server server(io.get_executor(), {.metrics = &registry, .one_io_thread = true});
  // Answers at once but leaves a slow query running: a zombie.
  server.route("GET", "/leaky", [&](const http::Request&, const Context& ctx) -> asio::awaitable<http::Response> {
    auto lease = std::make_shared<sql::Pool::Lease>(co_await pool.acquire(ctx));
    // The lease and the context are parameters, so the coroutine frame owns them (a lambda
    // capture would not outlive co_spawn's temporary).
    auto linger = [](std::shared_ptr<sql::Pool::Lease> held, Context c) -> asio::awaitable<void> {
      co_await (*held)->execute(c, kSlow, {});
    };
    asio::co_spawn(co_await asio::this_coro::executor, linger(lease, ctx), asio::detached);
    co_return http::Response::text(200, "done (not really)\n");
  });
  // Finishes its statement before answering, then holds the lease past the response: a lease
  // is not backend work.
  server.route("GET", "/tidy", [&](const http::Request&, const Context& ctx) -> asio::awaitable<http::Response> {
    auto lease = std::make_shared<sql::Pool::Lease>(co_await pool.acquire(ctx));
    co_await (*lease)->execute(ctx, "select count(*) from sqlite_master", {});
    auto hold = [](std::shared_ptr<sql::Pool::Lease>) -> asio::awaitable<void> { co_await test_support::Sleep(100ms); };
    asio::co_spawn(co_await asio::this_coro::executor, hold(lease), asio::detached);
    co_return http::Response::text(200, "done\n");
  });
  const auto port = server.listen("127.0.0.1", 0);
  std::thread thread([&] { io.run(); });

  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  test_support::RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    EXPECT_EQ((co_await client.get(Context(), base + "/tidy")).status, 200);
    http::ClientRequest leaky;
    leaky.url = base + "/leaky";
    leaky.headers.set("X-Request-Id", "leaky");
    EXPECT_EQ((co_await client.request(Context(), leaky)).status, 200);
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard lock(mu);
        if (slow_ended) break;
      }
      co_await test_support::Sleep(10ms);
    }
    co_await test_support::Sleep(20ms);
  });
  const std::string text = registry.expose();
  ASSERT_EQ(Metric(text, "cutoff_orphaned_work_seconds_count{backend=\"sqlite\"}"), 1) << text;
  const double outlived = Metric(text, "cutoff_orphaned_work_seconds_sum{backend=\"sqlite\"}");
  std::lock_guard lock(mu);
  ASSERT_TRUE(slow_started && slow_ended);
  // The response went out within moments of the statement starting (just before or just
  // after: the handler answers as it hands the statement to the worker), long before it ended.
  const double ran = std::chrono::duration<double>(*slow_ended - *slow_started).count();
  EXPECT_GT(outlived, 0);
  EXPECT_LT(outlived, ran + 0.05 * test_support::TimeScale());
  EXPECT_GT(outlived, ran - 0.1 * test_support::TimeScale());

  server.shutdown(100ms);
  thread.join();
}

}  // namespace
}  // namespace cutoff
