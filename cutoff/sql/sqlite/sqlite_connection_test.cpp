#include "cutoff/sql/sqlite/sqlite_connection.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <mutex>
#include <optional>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "cutoff/observe/metrics.hpp"
#include "cutoff/sql/database_error.hpp"
#include "tests/support/run_sync.hpp"

namespace cutoff::sql {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;

// A statement that never ends by itself.
constexpr const char* kEndless =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

// Options are named variables, never braced temporaries inside `co_await`: g++ 12 destroys
// an aggregate temporary in a co_await expression twice (see docs/sql.md).
const SqliteOptions kMemory{};

class TempDb {
 public:
  TempDb() {
    path_ = std::filesystem::temp_directory_path() /
            ("cutoff-sqlite-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++) + ".db");
    Remove();
  }
  ~TempDb() { Remove(); }
  std::string path() const { return path_.string(); }

 private:
  void Remove() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + suffix);
  }
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

// Opening switches the file to WAL, which needs a lock another handle may hold for a moment
// (a connection closing checkpoints under it): the open waits for it instead of failing.
TEST(Sqlite, OpeningWaitsForALockHeldForAMoment) {
  for (const Propagation propagation : {Propagation::on, Propagation::off}) {
    TempDb db;
    sqlite3* holder = nullptr;
    ASSERT_EQ(sqlite3_open(db.path().c_str(), &holder), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(holder, "PRAGMA journal_mode=DELETE; BEGIN EXCLUSIVE; CREATE TABLE t(x);", nullptr, nullptr,
                           nullptr),
              SQLITE_OK);
    std::thread release([holder] {
      std::this_thread::sleep_for(200ms);
      sqlite3_exec(holder, "COMMIT", nullptr, nullptr, nullptr);
    });
    SqliteOptions options{.path = db.path()};
    options.driver.propagation = propagation;
    std::int64_t rows = -1;
    std::string failure;
    RunSync([&]() -> asio::awaitable<void> {
      try {
        auto conn = co_await open_sqlite(Context().with_timeout(5s), options);
        sql::Result r = co_await conn->execute(Context(), "select count(*) from t", {});
        rows = r[0].get<std::int64_t>(0);
      } catch (const std::exception& e) {
        failure = e.what();
      }
    });
    release.join();
    sqlite3_close(holder);
    EXPECT_EQ(failure, "");
    EXPECT_EQ(rows, 0);
  }
}

TEST(Sqlite, StatementsParametersAndTypedRows) {
  RunSync([]() -> asio::awaitable<void> {
    Context ctx = Context().with_request_id("req-1").with_operation("Test");
    auto conn = co_await open_sqlite(ctx, kMemory);
    EXPECT_EQ(conn->driver(), "sqlite");
    co_await conn->execute(ctx, "create table item(id integer primary key, name text, price real, data blob)", {});
    std::vector<Value> params{std::int64_t{1}, "widget", 2.5, Blob{std::string("\x00\x01", 2)}};
    Result ins = co_await conn->execute(ctx, "insert into item values (?, ?, ?, ?)", params);
    EXPECT_EQ(ins.rows_affected(), 1);
    std::vector<Value> key{std::int64_t{1}};
    Result r = co_await conn->execute(ctx, "select id, name, price, data, null as absent from item where id = ?", key);
    EXPECT_EQ(r.size(), 1u);
    EXPECT_EQ(r.columns(), (std::vector<std::string>{"id", "name", "price", "data", "absent"}));
    EXPECT_EQ(r[0].get<std::int64_t>("id"), 1);
    EXPECT_EQ(r[0].get<std::string>("name"), "widget");
    EXPECT_DOUBLE_EQ(r[0].get<double>("price"), 2.5);
    EXPECT_EQ(r[0].get<Blob>("data").bytes, std::string("\x00\x01", 2));
    EXPECT_TRUE(r[0].is_null(4));
    EXPECT_TRUE(conn->reusable());
  });
}

// $N means the N-th parameter wherever it appears, as on PostgreSQL: SQLite numbers its slots
// in order of first appearance, and a statement written for both databases must not have its
// parameters swapped on one of them.
TEST(Sqlite, NumberedParametersBindByTheirNumberNotTheirPlace) {
  RunSync([]() -> asio::awaitable<void> {
    Context ctx;
    auto conn = co_await open_sqlite(ctx, kMemory);
    std::vector<Value> ab{"a", "b"};
    Result swapped = co_await conn->execute(ctx, "select $2 || $1 as s", ab);
    EXPECT_EQ(swapped[0].get<std::string>("s"), "ba");
    std::vector<Value> three{std::int64_t{1}, std::int64_t{2}, std::int64_t{3}};
    Result reused = co_await conn->execute(ctx, "select $3 * 100 + $1 * 10 + $3 as n, $2 as m", three);
    EXPECT_EQ(reused[0].get<std::int64_t>("n"), 313);
    EXPECT_EQ(reused[0].get<std::int64_t>("m"), 2);
    // As PostgreSQL counts them: the highest number named, not how many appear.
    std::vector<Value> one{"x"};
    bool refused = false;
    try {
      co_await conn->execute(ctx, "select $2 as only", one);
    } catch (const Error& e) {
      refused = e.code() == ErrorCode::invalid_argument;
    }
    EXPECT_TRUE(refused);
  });
}

// SQLite names an unaliased expression by its text, up to the comment the driver appends: the
// name must not carry the comment (nor, with it, the request id).
TEST(Sqlite, ColumnNamesLeaveOutTheStatementComment) {
  RunSync([]() -> asio::awaitable<void> {
    Context ctx = Context().with_request_id("req-7").with_operation("Names");
    auto conn = co_await open_sqlite(ctx, kMemory);
    Result r = co_await conn->execute(ctx, "select 1, 'x', 2 + 3 as five, 1 /* mine */ + 1", {});
    EXPECT_EQ(r.columns(), (std::vector<std::string>{"1", "'x'", "five", "1 /* mine */ + 1"}));
    Result semicolon = co_await conn->execute(ctx, "select 40 + 2;\n", {});
    EXPECT_EQ(semicolon.columns(), (std::vector<std::string>{"40 + 2"}));
    EXPECT_EQ(semicolon[0].to_json(), R"({"40 + 2":42})");
    Result plain = co_await conn->execute(Context(), "select 1", {});  // no comment appended
    EXPECT_EQ(plain.columns(), (std::vector<std::string>{"1"}));
  });
}

TEST(Sqlite, DatabaseErrorsCarrySqlstate) {
  RunSync([]() -> asio::awaitable<void> {
    Context ctx;
    auto conn = co_await open_sqlite(ctx, kMemory);
    std::string state;
    ErrorCode code{};
    try {
      co_await conn->execute(ctx, "selec 1", {});
    } catch (const DatabaseError& e) {
      state = e.sqlstate();
      code = e.code();
    }
    EXPECT_EQ(state, "42000");
    EXPECT_EQ(code, ErrorCode::invalid_argument);
    try {
      co_await conn->execute(ctx, "select * from missing", {});
    } catch (const DatabaseError& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::not_found);
    try {
      co_await conn->execute(ctx, "select ?", {});
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::invalid_argument);
    EXPECT_TRUE(conn->reusable());
  });
}

TEST(Sqlite, EndlessQueryStopsAtTheDeadline) {
  RunSync([]() -> asio::awaitable<void> {
    auto conn = co_await open_sqlite(Context(), kMemory);
    Context ctx = Context().with_timeout(100ms);
    const auto start = std::chrono::steady_clock::now();
    ErrorCode code{};
    try {
      co_await conn->execute(ctx, kEndless, {});
    } catch (const Error& e) {
      code = e.code();
    }
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(code, ErrorCode::deadline_exceeded);
    EXPECT_GE(took, 95ms);
    EXPECT_LT(took, 600ms);  // generous: a shared 2-core machine
    // Interrupted, not broken: the connection works for the next caller.
    EXPECT_TRUE(conn->reusable());
    Result one = co_await conn->execute(Context(), "select 1 as one", {});
    EXPECT_EQ(one[0].get<int>("one"), 1);
  });
}

TEST(Sqlite, CancelFromAnotherThreadReportsCancelled) {
  RunSync([]() -> asio::awaitable<void> {
    auto conn = co_await open_sqlite(Context(), kMemory);
    auto [ctx, source] = Context().with_cancel();
    std::thread canceller([source = source] {
      std::this_thread::sleep_for(50ms);
      source.request_stop(StopReason::cancelled);
    });
    ErrorCode code{};
    try {
      co_await conn->execute(ctx, kEndless, {});
    } catch (const Error& e) {
      code = e.code();
    }
    canceller.join();
    EXPECT_EQ(code, ErrorCode::cancelled);
  });
}

TEST(Sqlite, StoppedContextFailsBeforeAnythingRuns) {
  RunSync([]() -> asio::awaitable<void> {
    auto conn = co_await open_sqlite(Context(), kMemory);
    co_await conn->execute(Context(), "create table t(x)", {});
    Context spent = Context().with_timeout(0ms);
    ErrorCode code{};
    try {
      co_await conn->execute(spent, "insert into t values (1)", {});
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::deadline_exceeded);
    Result n = co_await conn->execute(Context(), "select count(*) from t", {});
    EXPECT_EQ(n[0].get<int>(0), 0);
  });
}

TEST(Sqlite, WriteBlockedByAnotherWriterStopsAtTheDeadline) {
  TempDb db;
  RunSync([&]() -> asio::awaitable<void> {
    SqliteOptions opts{.path = db.path()};
    auto holder = co_await open_sqlite(Context(), opts);
    auto blocked = co_await open_sqlite(Context(), opts);
    co_await holder->execute(Context(), "create table t(x)", {});
    co_await holder->begin(Context(), AccessMode::read_write);
    co_await holder->execute(Context(), "insert into t values (1)", {});

    Context ctx = Context().with_timeout(150ms);
    const auto start = std::chrono::steady_clock::now();
    ErrorCode code{};
    try {
      co_await blocked->execute(ctx, "insert into t values (2)", {});
    } catch (const Error& e) {
      code = e.code();
    }
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(code, ErrorCode::deadline_exceeded);
    EXPECT_GE(took, 140ms);
    EXPECT_LT(took, 1s);  // busy_wait is 5 s: the deadline, not the timeout, ended the wait
    co_await holder->rollback();
    EXPECT_TRUE(blocked->reusable());
  });
}

TEST(Sqlite, InterruptedWriteRollsBack) {
  RunSync([]() -> asio::awaitable<void> {
    auto conn = co_await open_sqlite(Context(), kMemory);
    co_await conn->execute(Context(), "create table t(x)", {});
    ErrorCode code{};
    try {
      co_await conn->execute(Context().with_timeout(80ms),
                             "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                             "INSERT INTO t SELECT x FROM c",
                             {});
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::deadline_exceeded);
    Result n = co_await conn->execute(Context(), "select count(*) from t", {});
    EXPECT_EQ(n[0].get<int>(0), 0);
  });
}

TEST(Sqlite, InterruptInsideTransactionRollsBackTheWholeTransaction) {
  RunSync([]() -> asio::awaitable<void> {
    auto conn = co_await open_sqlite(Context(), kMemory);
    co_await conn->execute(Context(), "create table t(x)", {});
    co_await conn->begin(Context(), AccessMode::read_write);
    co_await conn->execute(Context(), "insert into t values (1)", {});
    ErrorCode code{};
    try {
      co_await conn->execute(Context().with_timeout(60ms),
                             "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                             "INSERT INTO t SELECT x FROM c",
                             {});
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::deadline_exceeded);
    co_await conn->rollback();
    EXPECT_FALSE(conn->in_transaction());
    Result n = co_await conn->execute(Context(), "select count(*) from t", {});
    EXPECT_EQ(n[0].get<int>(0), 0);
  });
}

TEST(Sqlite, ReadOnlyConnectionRejectsWrites) {
  TempDb db;
  RunSync([&]() -> asio::awaitable<void> {
    const SqliteOptions file{.path = db.path()};
    auto writer = co_await open_sqlite(Context(), file);
    co_await writer->execute(Context(), "create table t(x)", {});
    const SqliteOptions read_only{.path = db.path(), .read_only = true};
    auto reader = co_await open_sqlite(Context(), read_only);
    std::string state;
    try {
      co_await reader->execute(Context(), "insert into t values (1)", {});
    } catch (const DatabaseError& e) {
      state = e.sqlstate();
    }
    EXPECT_EQ(state, "25006");
    Result n = co_await reader->execute(Context(), "select count(*) from t", {});
    EXPECT_EQ(n[0].get<int>(0), 0);
  });
}

// The contrast: with only a client-side timeout the caller gets its error on time, but the
// write runs on and lands after the caller was told it failed.
TEST(Sqlite, PropagationOffLeavesTheStatementRunning) {
  TempDb db;
  RunSync([&]() -> asio::awaitable<void> {
    const SqliteOptions file{.path = db.path()};
    auto setup = co_await open_sqlite(Context(), file);
    co_await setup->execute(Context(), "create table t(x)", {});
    SqliteOptions off{.path = db.path()};
    off.driver.propagation = Propagation::off;
    // The observer sees where the abandoned statement really ended.
    std::mutex mu;
    std::vector<std::pair<std::string, TimePoint>> ended;
    off.driver.statement_observer = [&](const StatementEvent& e) {
      if (!e.ended) return;
      std::lock_guard lock(mu);
      ended.emplace_back(std::string(e.request_id), *e.ended);
    };
    auto conn = co_await open_sqlite(Context(), off);
    const auto start = std::chrono::steady_clock::now();
    ErrorCode code{};
    try {
      co_await conn->execute(Context().with_timeout(50ms).with_request_id("zombie-1"),
                             "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3000000) "
                             "INSERT INTO t SELECT x FROM c",
                             {});
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::deadline_exceeded);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 500ms);
    EXPECT_FALSE(conn->reusable());
    conn.reset();  // the zombie keeps its worker thread until it finishes
    // The "failed" write commits anyway.
    std::int64_t rows = 0;
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (int i = 0; i < 300 && rows == 0; ++i) {
      timer.expires_after(50ms);
      co_await timer.async_wait(asio::use_awaitable);
      rows = (co_await setup->execute(Context(), "select count(*) from t", {}))[0].get<std::int64_t>(0);
    }
    EXPECT_EQ(rows, 3000000);
    auto seen = [&] {
      std::lock_guard lock(mu);
      return ended.size();
    };
    for (int i = 0; i < 100 && seen() == 0; ++i) {  // called just after the commit it reports
      timer.expires_after(10ms);
      co_await timer.async_wait(asio::use_awaitable);
    }
    std::lock_guard lock(mu);
    EXPECT_EQ(ended.size(), 1u);
    if (!ended.empty()) {
      EXPECT_EQ(ended[0].first, "zombie-1");
      EXPECT_GT(ended[0].second.time_since_epoch(), (start + 50ms).time_since_epoch());
    }
  });
}

// The value of one sample ("name{labels}"), 0 when absent.
double Metric(const std::string& text, const std::string& series) {
  const auto at = text.find("\n" + series + " ");
  return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size() + 2));
}

// A counting query that takes a while (about 100 ms per million rows here), and ends.
constexpr const char* kCount =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) FROM c";

TEST(SqliteMetrics, StopsAndOvershootAreRecordedForLayerSql) {
  observe::Registry registry;
  SqliteOptions opts;
  opts.driver.metrics = &registry;
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_sqlite(Context(), opts);
    co_await conn->execute(Context(), "select 1", {});  // not stopped: not counted
    try {
      co_await conn->execute(Context().with_timeout(50ms), kEndless, {});
    } catch (const Error&) {
    }
    auto [ctx, source] = Context().with_cancel();
    std::thread canceller([source = source] {
      std::this_thread::sleep_for(30ms);
      source.request_stop(StopReason::cancelled);
    });
    try {
      co_await conn->execute(ctx, kEndless, {});
    } catch (const Error&) {
    }
    canceller.join();
  });
  const std::string text = "\n" + registry.expose();
  EXPECT_EQ(Metric(text, R"(cutoff_stops_total{layer="sql",reason="deadline_exceeded"})"), 1) << text;
  EXPECT_EQ(Metric(text, R"(cutoff_stops_total{layer="sql",reason="cancelled"})"), 1) << text;
  EXPECT_EQ(Metric(text, R"(cutoff_overshoot_seconds_count{layer="sql"})"), 2) << text;
  EXPECT_LT(Metric(text, R"(cutoff_overshoot_seconds_sum{layer="sql"})"), 0.5);  // interrupted at once
}

// Orphaned work is the statement's real end after the response, seen by the worker that runs
// it, also when propagation is off and the caller stopped waiting long before.
TEST(SqliteMetrics, StatementsEndingAfterTheResponseAreOrphanedWork) {
  for (const Propagation propagation : {Propagation::on, Propagation::off}) {
    SCOPED_TRACE(propagation == Propagation::on ? "propagation on" : "propagation off");
    observe::Registry registry;
    std::mutex mu;
    std::optional<TimePoint> ended;
    SqliteOptions opts;
    opts.driver.metrics = &registry;
    opts.driver.propagation = propagation;
    opts.driver.statement_observer = [&](const StatementEvent& e) {
      std::lock_guard lock(mu);
      if (e.ended && e.request_id == "r1") ended = e.ended;
    };
    auto mark = std::make_shared<ResponseMark>();
    RequestValues values{.request_id = "r1", .response = mark};
    const Context request = Context().with_values(values);
    TimePoint sent{};
    const std::string count_series = R"(cutoff_orphaned_work_seconds_count{backend="sqlite"})";
    RunSync([&]() -> asio::awaitable<void> {
      auto conn = co_await open_sqlite(Context(), opts);
      co_await conn->execute(request, "select 1", {});  // ended before the response: not orphaned
      EXPECT_EQ(Metric("\n" + registry.expose(), count_series), 0);
      if (propagation == Propagation::on) {
        // The response goes out while the statement still runs (a handler that answered and
        // left its query behind).
        std::thread responder([&] {
          std::this_thread::sleep_for(20ms);
          sent = SteadyClock::now();
          mark->mark_sent(sent);
        });
        co_await conn->execute(request, kCount, {});
        responder.join();
      } else {
        // The caller gives up at its deadline and answers; the statement runs on in the worker.
        const Context bounded = request.with_timeout(20ms);
        try {
          co_await conn->execute(bounded, kCount, {});
        } catch (const Error&) {
        }
        sent = SteadyClock::now();
        mark->mark_sent(sent);
      }
    });
    // The abandoned statement ends later, on its own.
    for (int i = 0; i < 1000 && Metric("\n" + registry.expose(), count_series) == 0; ++i)
      std::this_thread::sleep_for(10ms);
    const std::string text = "\n" + registry.expose();
    ASSERT_EQ(Metric(text, count_series), 1) << text;
    std::lock_guard lock(mu);
    ASSERT_TRUE(ended.has_value());
    ASSERT_GT(*ended, sent) << "the statement ended before the response; make kCount longer";
    const double real = std::chrono::duration<double>(*ended - sent).count();
    const double orphaned = Metric(text, R"(cutoff_orphaned_work_seconds_sum{backend="sqlite"})");
    EXPECT_GE(orphaned, real);
    EXPECT_LT(orphaned, real + 0.05);
  }
}

}  // namespace
}  // namespace cutoff::sql
