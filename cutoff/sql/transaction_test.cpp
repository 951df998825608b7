#include "cutoff/sql/transaction.hpp"

#include <gtest/gtest.h>

#include "cutoff/sql/database_error.hpp"
#include "cutoff/sql/sqlite/internal/fault_points.hpp"
#include "cutoff/sql/sqlite/sqlite_connection.hpp"
#include "tests/support/run_sync.hpp"

namespace cutoff::sql {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;

asio::awaitable<std::int64_t> Count(Connection& conn) {
  Result r = co_await conn.execute(Context(), "select count(*) from t", {});
  co_return r[0].get<std::int64_t>(0);
}

// Options are named, never braced temporaries in co_await (g++ 12 bug, see docs/sql.md).
const SqliteOptions kMemory{};

asio::awaitable<std::unique_ptr<Connection>> OpenWithTable(const SqliteOptions& opts) {
  auto conn = co_await open_sqlite(Context(), opts);
  co_await conn->execute(Context(), "create table t(x)", {});
  co_return conn;
}

TEST(Transaction, CommitMakesWritesDurable) {
  RunSync([]() -> asio::awaitable<void> {
    auto conn = co_await OpenWithTable(kMemory);
    Context ctx = Context().with_timeout(5s);
    auto tx = co_await Transaction::begin(*conn, ctx);
    std::vector<Value> one{std::int64_t{1}};
    co_await tx.execute(ctx, "insert into t values (?)", one);
    co_await tx.commit(ctx);
    EXPECT_EQ(tx.phase(), CommitPhase::committed);
    EXPECT_EQ(co_await Count(*conn), 1);
    EXPECT_TRUE(conn->reusable());
  });
}

// Sending COMMIT is a commit point for whoever reports the request's outcome; a rollback, a
// stop before it and an enforced read-only transaction are not.
TEST(Transaction, CommitNotesACommitPointInTheCallersLedger) {
  RunSync([]() -> asio::awaitable<void> {
    auto conn = co_await OpenWithTable(kMemory);
    auto ledger = std::make_shared<CommitLedger>();
    const Context ctx = Context().with_timeout(5s).with_commit_ledger(ledger);
    auto rolled = co_await Transaction::begin(*conn, ctx);
    co_await rolled.execute(ctx, "insert into t values (1)", {});
    co_await rolled.rollback();
    auto reading = co_await Transaction::begin(*conn, ctx, AccessMode::read_only);
    co_await reading.commit(ctx);
    EXPECT_EQ(ledger->commit_points(), 0u);
    auto tx = co_await Transaction::begin(*conn, ctx);
    co_await tx.execute(ctx, "insert into t values (1)", {});
    co_await tx.commit(ctx);
    EXPECT_EQ(ledger->commit_points(), 1u);
    EXPECT_FALSE(ledger->retry_with_same_key_safe());  // a plain transaction has no key
  });
}

TEST(Transaction, StopBeforeCommitRollsBackAndSaysSo) {
  RunSync([]() -> asio::awaitable<void> {
    auto conn = co_await OpenWithTable(kMemory);
    auto [ctx, stop] = Context().with_cancel();
    auto tx = co_await Transaction::begin(*conn, ctx);
    co_await tx.execute(ctx, "insert into t values (1)", {});
    stop.request_stop(StopReason::deadline_exceeded);
    ErrorCode code{};
    try {
      co_await tx.commit(ctx);
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::deadline_exceeded);  // safe: nothing was written
    EXPECT_EQ(tx.phase(), CommitPhase::rolled_back);
    EXPECT_EQ(co_await Count(*conn), 0);
    EXPECT_TRUE(conn->reusable());
  });
}

TEST(Transaction, StopWhileCommitInFlightIsAmbiguousAndTheCommitFinishes) {
  std::optional<CancelSource> stop;
  SqliteOptions opts;
  // Lands mid-COMMIT (the point is also reached by autocommit statements).
  cutoff::internal::ScopedFault mid_commit(internal::kSqliteCommit, [&] {
    if (stop) stop->request_stop(StopReason::cancelled);
  });
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await OpenWithTable(opts);
    auto [ctx, source] = Context().with_cancel();
    stop = source;
    auto tx = co_await Transaction::begin(*conn, ctx);
    co_await tx.execute(ctx, "insert into t values (1)", {});
    ErrorCode code{};
    try {
      co_await tx.commit(ctx);
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::commit_ambiguous);  // never reported as a safe failure
    EXPECT_EQ(tx.phase(), CommitPhase::committed);  // what is known: it did commit
    EXPECT_EQ(co_await Count(*conn), 1);
  });
}

TEST(Transaction, StopAfterCommitIsAmbiguousForTheCaller) {
  RunSync([]() -> asio::awaitable<void> {
    auto conn = co_await OpenWithTable(kMemory);
    auto [ctx, stop] = Context().with_cancel();
    auto tx = co_await Transaction::begin(*conn, ctx);
    co_await tx.execute(ctx, "insert into t values (1)", {});
    co_await tx.commit(ctx);
    stop.request_stop(StopReason::deadline_exceeded);
    ErrorCode code{};
    try {
      tx.check(ctx);
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::commit_ambiguous);
  });
}

TEST(Transaction, ReadOnlyIsEnforced) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await OpenWithTable(kMemory);
    Context ctx;
    auto tx = co_await Transaction::begin(*conn, ctx, AccessMode::read_only);
    std::string state;
    try {
      co_await tx.execute(ctx, "insert into t values (1)", {});
    } catch (const DatabaseError& e) {
      state = e.sqlstate();
    }
    EXPECT_EQ(state, "25006");
    co_await tx.execute(ctx, "select count(*) from t", {});
    co_await tx.commit(ctx);
    EXPECT_EQ(tx.phase(), CommitPhase::committed);
  });
}

TEST(Transaction, ReadOnlyCheckThrowsTheStopItself) {
  RunSync([]() -> asio::awaitable<void> {
    auto conn = co_await OpenWithTable(kMemory);
    auto [ctx, source] = Context().with_cancel();
    auto tx = co_await Transaction::begin(*conn, ctx, AccessMode::read_only);
    co_await tx.commit(ctx);
    source.request_stop(StopReason::deadline_exceeded);
    ErrorCode code{};
    try {
      tx.check(ctx);
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::deadline_exceeded);
    // After a read-only transaction the connection writes again.
    co_await conn->execute(Context(), "insert into t values (1)", {});
  });
}

TEST(Transaction, TransactRollsBackOnException) {
  RunSync([]() -> asio::awaitable<void> {
    auto conn = co_await OpenWithTable(kMemory);
    bool threw = false;
    try {
      co_await transact(*conn, Context(), AccessMode::read_write, [&](Transaction& tx) -> asio::awaitable<void> {
        co_await tx.execute(Context(), "insert into t values (1)", {});
        throw std::runtime_error("handler failed");
      });
    } catch (const std::runtime_error&) {
      threw = true;
    }
    EXPECT_TRUE(threw);
    EXPECT_EQ(co_await Count(*conn), 0);
    EXPECT_FALSE(conn->in_transaction());
    co_await transact(*conn, Context(), AccessMode::read_write, [&](Transaction& tx) -> asio::awaitable<void> {
      co_await tx.execute(Context(), "insert into t values (1)", {});
    });
    EXPECT_EQ(co_await Count(*conn), 1);
  });
}

}  // namespace
}  // namespace cutoff::sql
