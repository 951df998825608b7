#include "cutoff/sql/pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cutoff/sql/pool_metrics.hpp"
#include "cutoff/sql/sqlite/sqlite_connection.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"

namespace cutoff::sql {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;
using cutoff::test_support::Sleep;

TEST(Pool, ReusesConnections) {
  Pool pool(sqlite_factory({}), {.max_size = 2});
  RunSync([&]() -> asio::awaitable<void> {
    for (int i = 0; i < 5; ++i) {
      auto conn = co_await pool.acquire(Context());
      co_await conn->execute(Context(), "select 1", {});
    }
  });
  PoolStats s = pool.stats();
  EXPECT_EQ(s.opened, 1u);
  EXPECT_EQ(s.open, 1u);
  EXPECT_EQ(s.idle, 1u);
  EXPECT_EQ(s.in_use, 0u);
}

TEST(Pool, QueuedCallerLeavesAtItsDeadline) {
  Pool pool(sqlite_factory({}), {.max_size = 1});
  ErrorCode code{};
  std::chrono::steady_clock::duration waited{};
  RunSync([&]() -> asio::awaitable<void> {
    auto holder = co_await pool.acquire(Context());
    asio::co_spawn(
        co_await asio::this_coro::executor,
        [&]() -> asio::awaitable<void> {
          const auto start = std::chrono::steady_clock::now();
          try {
            auto conn = co_await pool.acquire(Context().with_timeout(50ms));
          } catch (const Error& e) {
            code = e.code();
          }
          waited = std::chrono::steady_clock::now() - start;
        },
        asio::detached);
    co_await Sleep(300ms);
  });
  EXPECT_EQ(code, ErrorCode::deadline_exceeded);
  EXPECT_GE(waited, 45ms);
  EXPECT_LT(waited, 250ms);
  EXPECT_EQ(pool.stats().stopped_waiting, 1u);
  EXPECT_EQ(pool.stats().waiting, 0u);
}

TEST(Pool, ACallerWhoseBudgetCannotCoverTheWaitIsRefusedAtOnce) {
  Pool pool(sqlite_factory({}), {.max_size = 1, .refuse_doomed_waits = true});
  std::optional<Error> refused;
  std::chrono::steady_clock::duration took{};
  bool patient_got_one = false;
  RunSync([&]() -> asio::awaitable<void> {
    // The pool learns that a connection is kept about 20 ms.
    for (int i = 0; i < 10; ++i) {
      auto conn = co_await pool.acquire(Context());
      co_await Sleep(20ms);
    }
    EXPECT_GE(pool.stats().mean_hold, 15ms);
    auto holder = co_await pool.acquire(Context());
    // With the connection taken, a caller with 10 ms left could not even wait for it.
    const auto start = std::chrono::steady_clock::now();
    try {
      auto conn = co_await pool.acquire(Context().with_timeout(10ms));
    } catch (const Error& e) {
      refused = e;
    }
    took = std::chrono::steady_clock::now() - start;
    // A caller with plenty of budget waits as before.
    asio::co_spawn(
        co_await asio::this_coro::executor,
        [&]() -> asio::awaitable<void> {
          auto conn = co_await pool.acquire(Context().with_timeout(10s));
          patient_got_one = true;
        },
        asio::detached);
    co_await Sleep(5ms);
    holder.reset();
    for (int i = 0; i < 500 && !patient_got_one; ++i) co_await Sleep(1ms);
  });
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code(), ErrorCode::deadline_exceeded);
  EXPECT_NE(std::string(refused->what()).find("refused before waiting"), std::string::npos) << refused->what();
  EXPECT_LT(took, 5ms) << "refused before waiting, not at its deadline";
  EXPECT_TRUE(patient_got_one);
  EXPECT_EQ(pool.stats().refused_doomed, 1u);
  EXPECT_EQ(pool.stats().stopped_waiting, 0u);
}

TEST(Pool, WithoutTheOptionACallerWaitsUntilItsDeadline) {
  Pool pool(sqlite_factory({}), {.max_size = 1});
  std::optional<ErrorCode> code;
  RunSync([&]() -> asio::awaitable<void> {
    for (int i = 0; i < 10; ++i) {
      auto conn = co_await pool.acquire(Context());
      co_await Sleep(20ms);
    }
    auto holder = co_await pool.acquire(Context());
    try {
      auto conn = co_await pool.acquire(Context().with_timeout(10ms));
    } catch (const Error& e) {
      code = e.code();
    }
  });
  EXPECT_EQ(code, ErrorCode::deadline_exceeded);
  EXPECT_EQ(pool.stats().refused_doomed, 0u);
  EXPECT_EQ(pool.stats().stopped_waiting, 1u);
}

TEST(Pool, UnderCongestionAReturnedConnectionGoesToTheNewestWaiter) {
  Pool pool(sqlite_factory({}), {.max_size = 1, .newest_first_after = 0ms});
  std::vector<int> order;
  RunSync([&]() -> asio::awaitable<void> {
    auto holder = co_await pool.acquire(Context());
    auto ex = co_await asio::this_coro::executor;
    for (int i = 1; i <= 3; ++i) {
      asio::co_spawn(
          ex,
          [&, i]() -> asio::awaitable<void> {
            auto conn = co_await pool.acquire(Context().with_timeout(10s));
            order.push_back(i);
            co_await Sleep(2ms);
          },
          asio::detached);
      co_await Sleep(1ms);
    }
    holder.reset();
    for (int i = 0; i < 500 && order.size() < 3; ++i) co_await Sleep(1ms);
  });
  EXPECT_EQ(order, (std::vector<int>{3, 2, 1}));
}

TEST(Pool, ConnectionHandedToAWaiterIsNotPinged) {
  // Every statement the database runs is counted: the hand-over must not add a ping.
  std::atomic<int> statements{0};
  SqliteOptions options;
  options.driver.statement_observer = [&](const StatementEvent& e) {
    if (e.ended) ++statements;
  };
  Pool pool(sqlite_factory(options), {.max_size = 1});
  bool waiter_ran = false;
  RunSync([&]() -> asio::awaitable<void> {
    auto holder = co_await pool.acquire(Context());
    co_await holder->execute(Context(), "select 1", {});
    asio::co_spawn(
        co_await asio::this_coro::executor,
        [&]() -> asio::awaitable<void> {
          auto conn = co_await pool.acquire(Context().with_timeout(5s));
          co_await conn->execute(Context(), "select 2", {});
          waiter_ran = true;
        },
        asio::detached);
    co_await Sleep(20ms);  // the waiter is queued
    holder.reset();
    for (int i = 0; i < 100 && !waiter_ran; ++i) co_await Sleep(10ms);
  });
  EXPECT_TRUE(waiter_ran);
  EXPECT_EQ(statements.load(), 2);
}

TEST(Pool, FullQueueFailsFastWithOverloaded) {
  Pool pool(sqlite_factory({}), {.max_size = 1, .max_waiters = 1});
  ErrorCode code{};
  RunSync([&]() -> asio::awaitable<void> {
    auto holder = co_await pool.acquire(Context());
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(
        ex,
        [&]() -> asio::awaitable<void> {
          try {
            auto conn = co_await pool.acquire(Context().with_timeout(100ms));
          } catch (const Error&) {
          }
        },
        asio::detached);
    co_await Sleep(10ms);  // the first waiter is queued
    try {
      auto conn = co_await pool.acquire(Context().with_timeout(1s));
    } catch (const Error& e) {
      code = e.code();
    }
    co_await Sleep(150ms);
  });
  EXPECT_EQ(code, ErrorCode::overloaded);
  EXPECT_EQ(pool.stats().rejected, 1u);
}

TEST(Pool, SpentContextNeverTouchesThePool) {
  Pool pool(sqlite_factory({}), {.max_size = 1});
  ErrorCode code{};
  RunSync([&]() -> asio::awaitable<void> {
    try {
      auto conn = co_await pool.acquire(Context().with_timeout(0ms));
    } catch (const Error& e) {
      code = e.code();
    }
  });
  EXPECT_EQ(code, ErrorCode::deadline_exceeded);
  EXPECT_EQ(pool.stats().opened, 0u);
}

TEST(Pool, UncleanConnectionIsClosedNotReused) {
  Pool pool(sqlite_factory({}), {.max_size = 1});
  RunSync([&]() -> asio::awaitable<void> {
    {
      auto conn = co_await pool.acquire(Context());
      co_await conn->begin(Context(), AccessMode::read_write);
    }  // returned with a transaction open
    auto conn = co_await pool.acquire(Context());
    EXPECT_FALSE(conn->in_transaction());
  });
  EXPECT_EQ(pool.stats().discarded, 1u);
  EXPECT_EQ(pool.stats().opened, 2u);
  EXPECT_EQ(pool.stats().open, 1u);
}

// A queued caller cancelled through Asio (a parent's terminal cancellation) leaves the queue
// and fails with operation_aborted, not with a stop it never had.
TEST(Pool, AWaiterCancelledThroughAsioLeavesWithOperationAborted) {
  Pool pool(sqlite_factory({}), {.max_size = 1});
  const Context unbound;  // acquire() keeps a reference: it must outlive the coroutine
  asio::io_context io;
  asio::cancellation_signal cancel;
  std::exception_ptr failure;
  bool completed = false;
  Pool::Lease holder;
  asio::co_spawn(io, pool.acquire(unbound), [&](std::exception_ptr, Pool::Lease l) { holder = std::move(l); });
  io.run();
  io.restart();
  ASSERT_TRUE(holder);
  asio::co_spawn(io, pool.acquire(unbound),
                 asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr e, Pool::Lease) {
                   completed = true;
                   failure = e;
                 }));
  io.run_for(10ms);
  EXPECT_EQ(pool.stats().waiting, 1u);
  cancel.emit(asio::cancellation_type::terminal);
  io.restart();
  io.run_for(100ms);
  ASSERT_TRUE(completed);
  try {
    std::rethrow_exception(failure);
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), asio::error::operation_aborted);
  } catch (const Error& e) {
    ADD_FAILURE() << "reported " << e.what();
  }
  EXPECT_EQ(pool.stats().waiting, 0u);
  holder.reset();
  EXPECT_EQ(pool.stats().in_use, 0u);
  EXPECT_EQ(pool.stats().idle, 1u);
}

// A queued caller whose coroutine frame is destroyed (its io_context goes away) leaves the
// queue; the connection released next is not handed to it and lost.
TEST(Pool, AWaiterWhoseFrameIsDestroyedLosesNoConnection) {
  Pool pool(sqlite_factory({}), {.max_size = 1});
  Pool::Lease holder;
  RunSync([&]() -> asio::awaitable<void> { holder = co_await pool.acquire(Context()); });
  {
    asio::io_context doomed;
    asio::co_spawn(
        doomed, [&]() -> asio::awaitable<void> { auto conn = co_await pool.acquire(Context()); }, asio::detached);
    doomed.run_for(10ms);
    EXPECT_EQ(pool.stats().waiting, 1u);
  }
  EXPECT_EQ(pool.stats().waiting, 0u);
  holder.reset();
  EXPECT_EQ(pool.stats().in_use, 0u);
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await pool.acquire(Context().with_timeout(2s));  // the connection is there
    EXPECT_TRUE(conn);
  });
  EXPECT_EQ(pool.stats().opened, 1u);
}

TEST(Pool, ManyCallersWithShortDeadlinesNeverLeakOrExceedTheLimit) {
  Pool pool(sqlite_factory({}), {.max_size = 4});
  std::map<ErrorCode, int> outcomes;
  int ok = 0;
  asio::io_context io;
  std::mt19937 rng(12345);
  for (int i = 0; i < 50; ++i) {
    const auto budget = std::chrono::milliseconds(20 + static_cast<int>(rng() % 80));
    const auto hold = std::chrono::milliseconds(5 + static_cast<int>(rng() % 40));
    const bool slow_query = rng() % 4 == 0;
    asio::co_spawn(
        io,
        [&, budget, hold, slow_query]() -> asio::awaitable<void> {
          Context ctx = Context().with_timeout(budget);
          try {
            auto conn = co_await pool.acquire(ctx);
            if (slow_query)  // runs until the deadline interrupts it
              co_await conn->execute(
                  ctx, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c", {});
            co_await conn->execute(ctx, "select 1", {});
            co_await Sleep(hold);
            ++ok;
          } catch (const Error& e) {
            ++outcomes[e.code()];
          }
          EXPECT_LE(pool.stats().open, 4u);
        },
        asio::detached);
  }
  io.run();
  PoolStats s = pool.stats();
  EXPECT_LE(s.max_open_seen, 4u);
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(s.waiting, 0u);
  EXPECT_EQ(s.idle, s.open);
  EXPECT_LE(s.open, 4u);
  // Every caller either finished or ran out of budget; nothing else went wrong.
  int stopped = outcomes[ErrorCode::deadline_exceeded];
  EXPECT_EQ(ok + stopped, 50);
  EXPECT_GT(ok, 0);
  EXPECT_GT(stopped, 0);
  // The interrupted connections were clean and went back to the pool.
  EXPECT_EQ(s.discarded, 0u);
}

}  // namespace
}  // namespace cutoff::sql

namespace cutoff::sql {
namespace {

TEST(PoolMetrics, ExposesTheLiveState) {
  Pool pool(sqlite_factory({}), {.max_size = 2});
  observe::Registry registry;
  register_pool_metrics(registry, pool, "main");
  cutoff::test_support::RunSync([&]() -> boost::asio::awaitable<void> {
    auto conn = co_await pool.acquire(Context());
    const std::string text = registry.expose();
    EXPECT_NE(text.find("cutoff_pool_connections_in_use{pool=\"main\"} 1"), std::string::npos) << text;
    EXPECT_NE(text.find("cutoff_pool_rejected_total{pool=\"main\"} 0"), std::string::npos) << text;
  });
  EXPECT_NE(registry.expose().find("cutoff_pool_connections_in_use{pool=\"main\"} 0"), std::string::npos);
}

}  // namespace
}  // namespace cutoff::sql
