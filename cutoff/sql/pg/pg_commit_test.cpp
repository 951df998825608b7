// Commit-point tracking against a real server. Every test has its own table and trigger
// function, so tests can run in parallel. COMMIT is made slow with a
// deferred constraint trigger (it runs at commit time), which gives a stop time to land mid-commit.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <random>
#include <thread>

#include "cutoff/sql/pg/internal/pg_cancel.hpp"
#include "cutoff/sql/pg/pg_connection.hpp"
#include "cutoff/sql/transaction.hpp"
#include "tests/support/postgres.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"

namespace cutoff::sql {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;
using cutoff::test_support::Sleep;

class PgCommit : public ::testing::Test {
 protected:
  void SetUp() override {
    opts_.url = cutoff::test_support::TestPostgresUrl();
    ASSERT_FALSE(opts_.url.empty()) << "no test PostgreSQL: run through ctest (fixture `postgres`)";
    static std::mt19937_64 rng(std::random_device{}());
    table_ = "acct_" + std::to_string(rng() % 1000000000);
    RunSync([&]() -> asio::awaitable<void> {
      auto conn = co_await open_postgresql(Context(), opts_);
      co_await conn->execute(Context(),
                             "create function " + table_ + "_slow() returns trigger language plpgsql as "
                             "$$ begin perform pg_sleep(0.4); return null; end $$",
                             {});
      co_await conn->execute(Context(), "create table " + table_ + "(id int primary key)", {});
      co_await conn->execute(Context(), "create constraint trigger slow after insert on " + table_ +
                                            " deferrable initially deferred for each row "
                                            "execute function " + table_ + "_slow()",
                             {});
    });
  }
  void TearDown() override {
    if (table_.empty() || opts_.url.empty()) return;
    RunSync([&]() -> asio::awaitable<void> {
      auto conn = co_await open_postgresql(Context(), opts_);
      co_await conn->execute(Context(), "drop table if exists " + table_, {});
      co_await conn->execute(Context(), "drop function if exists " + table_ + "_slow()", {});
    });
  }

  asio::awaitable<std::int64_t> Rows() {
    auto conn = co_await open_postgresql(Context(), opts_);
    Result r = co_await conn->execute(Context(), "select count(*) from " + table_, {});
    co_return r[0].get<std::int64_t>(0);
  }

  std::string Insert() const { return "insert into " + table_ + " values (1)"; }

  PgOptions opts_;
  std::string table_;
};

// What an awaited operation threw (null: nothing).
template <typename T>
asio::awaitable<std::exception_ptr> Catch(asio::awaitable<T> op) {
  try {
    co_await std::move(op);
  } catch (...) {
    co_return std::current_exception();
  }
  co_return nullptr;
}

ErrorCode CodeOf(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& x) {
    return x.code();
  } catch (...) {
  }
  return ErrorCode::internal;
}

TEST_F(PgCommit, CommitWithoutStopSucceeds) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    Context ctx = Context().with_timeout(5s);
    auto tx = co_await Transaction::begin(*conn, ctx);
    co_await tx.execute(ctx, Insert(), {});
    co_await tx.commit(ctx);
    EXPECT_EQ(tx.phase(), CommitPhase::committed);
    EXPECT_EQ(co_await Rows(), 1);
    EXPECT_TRUE(conn->reusable());
  });
}

TEST_F(PgCommit, StopBeforeCommitIsSafeAndRollsBack) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    auto [ctx, source] = Context().with_cancel();
    auto tx = co_await Transaction::begin(*conn, ctx);
    co_await tx.execute(ctx, Insert(), {});
    source.request_stop(StopReason::deadline_exceeded);
    std::exception_ptr failure = co_await Catch(tx.commit(ctx));
    EXPECT_EQ(CodeOf(failure), ErrorCode::deadline_exceeded);
    EXPECT_EQ(tx.phase(), CommitPhase::rolled_back);
    EXPECT_EQ(co_await Rows(), 0);
    EXPECT_TRUE(conn->reusable());
  });
}

TEST_F(PgCommit, StopWhileExecutingInsideTransactionIsSafe) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    Context ctx = Context().with_timeout(100ms);
    auto tx = co_await Transaction::begin(*conn, ctx);
    co_await tx.execute(ctx, Insert(), {});
    std::exception_ptr failure = co_await Catch(tx.execute(ctx, "select pg_sleep(5)", {}));
    co_await tx.rollback();
    EXPECT_EQ(CodeOf(failure), ErrorCode::deadline_exceeded);
    EXPECT_EQ(co_await Rows(), 0);
    EXPECT_TRUE(conn->reusable());
  });
}

TEST_F(PgCommit, StopWhileCommitInFlightIsAmbiguousAndTheCommitIsNotCancelled) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    auto [ctx, source] = Context().with_cancel();
    auto tx = co_await Transaction::begin(*conn, ctx);
    co_await tx.execute(ctx, Insert(), {});
    std::thread stopper([source = source] {
      std::this_thread::sleep_for(150ms);  // COMMIT takes 400 ms
      source.request_stop(StopReason::cancelled);
    });
    const std::uint64_t cancels_before = internal::CancelRequestsSent();
    std::exception_ptr failure = co_await Catch(tx.commit(ctx));
    stopper.join();
    EXPECT_EQ(CodeOf(failure), ErrorCode::commit_ambiguous);
    EXPECT_EQ(tx.phase(), CommitPhase::committed);  // what we know: it did commit
    EXPECT_EQ(internal::CancelRequestsSent(), cancels_before);
    EXPECT_EQ(co_await Rows(), 1);
  });
}

TEST_F(PgCommit, ConnectionDroppedDuringCommitIsAmbiguous) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    auto killer = co_await open_postgresql(Context(), opts_);
    Result pid = co_await conn->execute(Context(), "select pg_backend_pid()", {});
    std::vector<Value> victim{pid[0].get<std::int64_t>(0)};
    Context ctx = Context().with_timeout(5s);
    auto tx = co_await Transaction::begin(*conn, ctx);
    co_await tx.execute(ctx, Insert(), {});
    asio::co_spawn(
        co_await asio::this_coro::executor,
        [&]() -> asio::awaitable<void> {
          co_await Sleep(150ms);
          co_await killer->execute(Context(), "select pg_terminate_backend($1::int)", victim);
        },
        asio::detached);
    std::exception_ptr failure = co_await Catch(tx.commit(ctx));
    EXPECT_EQ(CodeOf(failure), ErrorCode::commit_ambiguous);
    EXPECT_EQ(tx.phase(), CommitPhase::unknown);
    EXPECT_FALSE(conn->reusable());
    co_await Sleep(50ms);
  });
}

TEST_F(PgCommit, StopAfterCommitIsAmbiguousForTheCaller) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    auto [ctx, source] = Context().with_cancel();
    auto tx = co_await Transaction::begin(*conn, ctx);
    co_await tx.execute(ctx, Insert(), {});
    co_await tx.commit(ctx);
    source.request_stop(StopReason::deadline_exceeded);
    ErrorCode code{};
    try {
      tx.check(ctx);
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::commit_ambiguous);
    EXPECT_EQ(co_await Rows(), 1);
  });
}

// A deadline that passes while COMMIT is in flight: the commit is not cancelled, it completes,
// and the caller hears commit_ambiguous, never a safe-to-retry deadline_exceeded.
TEST_F(PgCommit, DeadlineDuringCommitIsAmbiguousNeverSafe) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    Context ctx = Context().with_timeout(200ms);
    auto tx = co_await Transaction::begin(*conn, ctx);
    co_await tx.execute(ctx, Insert(), {});
    std::exception_ptr failure = co_await Catch(tx.commit(ctx));
    EXPECT_EQ(CodeOf(failure), ErrorCode::commit_ambiguous);
    EXPECT_EQ(tx.phase(), CommitPhase::committed);
    EXPECT_EQ(co_await Rows(), 1);
  });
}

// When the server answers that the commit failed, nothing was written: a stop that landed
// meanwhile is reported as itself (safe), because the outcome is known.
TEST_F(PgCommit, StopDuringACommitTheServerRejectedIsSafe) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    const std::string rejecting = table_ + "_r";
    co_await conn->execute(Context(),
                           "create function " + rejecting + "_fn() returns trigger language plpgsql as "
                           "$$ begin perform pg_sleep(0.4); raise exception 'rejected at commit'; end $$",
                           {});
    co_await conn->execute(Context(), "create table " + rejecting + "(id int primary key)", {});
    co_await conn->execute(Context(), "create constraint trigger reject after insert on " + rejecting +
                                          " deferrable initially deferred for each row "
                                          "execute function " + rejecting + "_fn()",
                           {});
    auto [ctx, source] = Context().with_cancel();
    auto tx = co_await Transaction::begin(*conn, ctx);
    co_await tx.execute(ctx, "insert into " + rejecting + " values (1)", {});
    std::thread stopper([source = source] {
      std::this_thread::sleep_for(150ms);
      source.request_stop(StopReason::cancelled);
    });
    std::exception_ptr failure = co_await Catch(tx.commit(ctx));
    stopper.join();
    EXPECT_EQ(CodeOf(failure), ErrorCode::cancelled);
    EXPECT_EQ(tx.phase(), CommitPhase::rolled_back);
    Result n = co_await conn->execute(Context(), "select count(*) from " + rejecting, {});
    EXPECT_EQ(n[0].get<int>(0), 0);
    co_await conn->execute(Context(), "drop table " + rejecting, {});
    co_await conn->execute(Context(), "drop function " + rejecting + "_fn()", {});
  });
}

TEST_F(PgCommit, ReadOnlyTransactionIsEnforcedAndNeverAmbiguous) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    auto [ctx, source] = Context().with_cancel();
    auto tx = co_await Transaction::begin(*conn, ctx, AccessMode::read_only);
    std::exception_ptr failure = co_await Catch(tx.execute(ctx, Insert(), {}));
    EXPECT_EQ(CodeOf(failure), ErrorCode::invalid_argument);  // 25006 read_only_sql_transaction
    co_await tx.rollback();
    auto tx2 = co_await Transaction::begin(*conn, ctx, AccessMode::read_only);
    co_await tx2.execute(ctx, "select count(*) from " + table_, {});
    co_await tx2.commit(ctx);
    source.request_stop(StopReason::deadline_exceeded);
    ErrorCode code{};
    try {
      tx2.check(ctx);
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::deadline_exceeded);
  });
}

}  // namespace
}  // namespace cutoff::sql
