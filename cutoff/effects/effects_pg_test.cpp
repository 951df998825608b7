// PostgreSQL only: many concurrent requests with one idempotency key make exactly one effect.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>

#include "cutoff/effects/effects.hpp"
#include "tests/support/effects_backend.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"

namespace cutoff::effects {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;
using test_support::Backend;

TEST(EffectsPostgres, TwoHundredConcurrentRequestsWithOneKeyMakeExactlyOneEffect) {
  Backend db("postgresql");
  if (!db.available()) GTEST_SKIP() << "no test PostgreSQL";
  EffectsOptions opts;
  opts.table_prefix = db.prefix() + "_";
  opts.timeout = 20s;
  opts.max_in_flight = 1000;
  Effects effects(db.pool(), opts);
  RunSync([&]() -> asio::awaitable<void> {
    co_await db.create_items();
    co_await effects.install(Context());
  });

  constexpr int kRequests = 200;
  std::atomic<int> ok{0}, replayed{0}, conflicts{0}, other{0}, bodies{0};
  // Two threads, each with its own io_context: requests really overlap on the server.
  auto run_half = [&](int from, int to) {
    asio::io_context io;
    for (int i = from; i < to; ++i) {
      asio::co_spawn(
          io,
          [&, i]() -> asio::awaitable<void> {
            EffectRequest req{.operation = "orders.create", .idempotency_key = "order-42",
                              .fingerprint = R"({"sku":"A-1","qty":2})"};
            try {
              EffectOutcome out = co_await effects.run(
                  Context().with_timeout(20s), req, [&, i](Effect& fx) -> asio::awaitable<std::string> {
                    bodies.fetch_add(1);
                    std::vector<sql::Value> p{i};
                    co_await fx.execute("insert into " + db.items() + " (id, note) values ($1, 'order')", p);
                    co_return R"({"order":42})";
                  });
              (out.replayed ? replayed : ok).fetch_add(1);
              EXPECT_EQ(out.result, R"({"order":42})");
            } catch (const Error& e) {
              (e.code() == ErrorCode::idempotency_conflict ? conflicts : other).fetch_add(1);
              if (e.code() != ErrorCode::idempotency_conflict) ADD_FAILURE() << e.what();
            }
          },
          asio::detached);
    }
    io.run();
  };
  std::thread a(run_half, 0, kRequests / 2);
  std::thread b(run_half, kRequests / 2, kRequests);
  a.join();
  b.join();

  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(bodies.load(), 1);
  EXPECT_EQ(ok + replayed + conflicts, kRequests);
  EXPECT_EQ(other.load(), 0);
  RunSync([&]() -> asio::awaitable<void> {
    EXPECT_EQ(co_await db.count(db.items()), 1);
    EXPECT_EQ(co_await db.count(effects.idempotency_table(), "state = 'done'"), 1);
    co_await db.drop_all();
  });
}

}  // namespace
}  // namespace cutoff::effects
