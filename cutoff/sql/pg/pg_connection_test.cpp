#include "cutoff/sql/pg/pg_connection.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <map>
#include <random>
#include <thread>

#include "cutoff/observe/metrics.hpp"
#include "cutoff/sql/database_error.hpp"
#include "cutoff/sql/pg/internal/pg_cancel.hpp"
#include "tests/support/postgres.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/tcp_proxy.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::sql {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;
using cutoff::test_support::Sleep;
using Clock = std::chrono::steady_clock;

class Pg : public ::testing::Test {
 protected:
  void SetUp() override {
    opts_.url = cutoff::test_support::TestPostgresUrl();
    ASSERT_FALSE(opts_.url.empty()) << "no test PostgreSQL: run through ctest (fixture `postgres`) "
                                       "or set CUTOFF_TEST_PG_URL";
    off_ = opts_;
    off_.driver.propagation = Propagation::off;
  }
  PgOptions opts_;
  PgOptions off_;
};

std::string UniqueId(const char* prefix) {
  static std::mt19937_64 rng(std::random_device{}());
  return std::string(prefix) + "-" + std::to_string(rng() % 1000000000);
}

// Statements of `request_id` the server is running right now (the ground truth for zombies).
asio::awaitable<std::int64_t> ActiveFor(Connection& observer, const std::string& request_id) {
  std::vector<Value> p{"%request_id='" + request_id + "'%"};
  Result r = co_await observer.execute(
      Context(),
      "select count(*) from pg_stat_activity where state = 'active' and query like $1 and pid <> pg_backend_pid()", p);
  co_return r[0].get<std::int64_t>(0);
}

TEST_F(Pg, StatementsParametersAndTypedRows) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    EXPECT_EQ(conn->driver(), "postgresql");
    co_await conn->execute(Context(),
                           "create temp table item(id bigint primary key, name text, price float8, "
                           "data bytea, ok bool, qty int)",
                           {});
    std::vector<Value> row{std::int64_t{1}, "widget", 2.5, Blob{std::string("\x00\xff", 2)}, true, nullptr};
    Result ins = co_await conn->execute(Context(), "insert into item values ($1, $2, $3, $4, $5, $6)", row);
    EXPECT_EQ(ins.rows_affected(), 1);
    std::vector<Value> key{std::int64_t{1}};
    Result r = co_await conn->execute(Context(), "select * from item where id = $1", key);
    EXPECT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].get<std::int64_t>("id"), 1);
    EXPECT_EQ(r[0].get<std::string>("name"), "widget");
    EXPECT_DOUBLE_EQ(r[0].get<double>("price"), 2.5);
    EXPECT_EQ(r[0].get<Blob>("data").bytes, std::string("\x00\xff", 2));
    EXPECT_TRUE(r[0].get<bool>("ok"));
    EXPECT_EQ(r[0].get<std::optional<int>>("qty"), std::nullopt);
    EXPECT_TRUE(conn->reusable());
  });
}

// Rows as JSON come out in the types a reader expects, whatever the text form libpq hands over.
TEST_F(Pg, RowsAsJsonKeepTheColumnTypes) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    Result r = co_await conn->execute(
        Context(),
        "select true as t, null::bool as nb, '{\"a\": [1, null]}'::jsonb as jb, '[1,2]'::json as j, "
        "12345678901234567890.123456789::numeric as n, 'NaN'::numeric as nan, array[1, null, 3]::int8[] as i, "
        "array['a b', 'q\"x', null] as s, array[[true], [false]] as b, array[1.5]::float8[] as f, "
        "'{}'::int4[] as e, array['{\"k\":1}'::jsonb] as js, 2::int2 as small, 'x'::text as x",
        {});
    EXPECT_EQ(r[0].get<bool>("t"), true);  // typed access is unchanged
    EXPECT_EQ(r[0].to_json(),
              R"({"t":true,"nb":null,"jb":{"a": [1, null]},"j":[1,2],"n":12345678901234567890.123456789,)"
              R"("nan":"NaN","i":[1,null,3],"s":["a b","q\"x",null],"b":[[true],[false]],"f":[1.5],"e":[],)"
              R"("js":[{"k": 1}],"small":2,"x":"x"})");
  });
}

TEST_F(Pg, HostNamesAreResolvedWithoutBlocking) {
  std::string url = opts_.url;
  url.replace(url.find("127.0.0.1"), 9, "localhost");
  PgOptions named = opts_;
  named.url = url;
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), named);
    Result r = co_await conn->execute(Context(), "select 1 as one", {});
    EXPECT_EQ(r[0].get<int>("one"), 1);
  });
}

// Each name's every address is tried in turn, under the one deadline: a host list whose
// first entry refuses still connects through the next (libpq's own behaviour, kept now that
// the driver resolves names itself).
TEST_F(Pg, EveryHostAndAddressIsTriedInOrder) {
  const std::size_t at = opts_.url.find("127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << opts_.url;
  const std::size_t port_end = opts_.url.find_first_not_of("0123456789", at + 10);
  const std::string port = opts_.url.substr(at + 10, port_end - at - 10);
  std::uint16_t closed = 0;
  {
    asio::io_context io;
    asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
    closed = a.local_endpoint().port();
  }
  PgOptions listed = opts_;
  listed.url = opts_.url.substr(0, at) + "localhost:" + std::to_string(closed) + ",localhost:" + port +
               opts_.url.substr(port_end);
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context().with_timeout(std::chrono::seconds(10)), listed);
    Result r = co_await conn->execute(Context(), "select 1 as one", {});
    EXPECT_EQ(r[0].get<int>("one"), 1);
  });
}

TEST_F(Pg, AnUnknownHostIsNamedInTheError) {
  PgOptions unknown = opts_;
  unknown.url = "postgresql://no-such-host.invalid/db";
  std::string message;
  RunSync([&]() -> asio::awaitable<void> {
    try {
      auto conn = co_await open_postgresql(Context().with_timeout(std::chrono::seconds(10)), unknown);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::unavailable);
      message = e.message();
    }
  });
  EXPECT_NE(message.find("cannot resolve the database host \"no-such-host.invalid\""), std::string::npos) << message;
  EXPECT_EQ(message.find("asio"), std::string::npos) << message;
}

TEST_F(Pg, DatabaseErrorsCarrySqlstateAndLeaveTheConnectionUsable) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    std::string state;
    ErrorCode code{};
    try {
      co_await conn->execute(Context(), "selec 1", {});
    } catch (const DatabaseError& e) {
      state = e.sqlstate();
      code = e.code();
    }
    EXPECT_EQ(state, "42601");
    EXPECT_EQ(code, ErrorCode::invalid_argument);
    try {
      co_await conn->execute(Context(), "select * from no_such_table", {});
    } catch (const DatabaseError& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::not_found);
    EXPECT_TRUE(conn->reusable());
    Result r = co_await conn->execute(Context(), "select 2 as two", {});
    EXPECT_EQ(r[0].get<int>(0), 2);
  });
}

TEST_F(Pg, ABoundStatementCanRecoverAnAbortedTransaction) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    Context ctx = Context().with_timeout(5s);
    co_await conn->execute(ctx, "BEGIN", {});
    co_await conn->execute(ctx, "SAVEPOINT s", {});
    try {
      co_await conn->execute(ctx, "select 1/0", {});
    } catch (const DatabaseError&) {
    }
    // Only ROLLBACK (TO SAVEPOINT) is accepted now; the budget must not be sent ahead of it.
    co_await conn->execute(ctx, "ROLLBACK TO SAVEPOINT s", {});
    Result r = co_await conn->execute(ctx, "select 2", {});
    EXPECT_EQ(r[0].get<std::int64_t>(0), 2);
    co_await conn->execute(ctx, "ROLLBACK", {});
    EXPECT_TRUE(conn->reusable());
  });
}

TEST_F(Pg, BadUrlIsAClearError) {
  PgOptions bad = opts_;
  bad.url = "postgresql://[::1";
  ErrorCode code{};
  RunSync([&]() -> asio::awaitable<void> {
    try {
      co_await open_postgresql(Context(), bad);
    } catch (const Error& e) {
      code = e.code();
    }
  });
  EXPECT_EQ(code, ErrorCode::invalid_argument);
}

// The headline: the statement ends on the server at the deadline, and the connection is reused.
TEST_F(Pg, DeadlineEndsTheStatementOnTheServer) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    auto observer = co_await open_postgresql(Context(), opts_);
    const std::string rid = UniqueId("deadline");
    Context ctx = Context().with_request_id(rid).with_timeout(100ms);
    const auto start = Clock::now();
    ErrorCode code{};
    try {
      co_await conn->execute(ctx, "select pg_sleep(5)", {});
    } catch (const Error& e) {
      code = e.code();
    }
    const auto took = Clock::now() - start;
    EXPECT_EQ(code, ErrorCode::deadline_exceeded);
    EXPECT_GE(took, 95ms);
    EXPECT_LT(took, 400ms) << "overshoot: " << std::chrono::duration<double, std::milli>(took).count() << " ms";
    co_await Sleep(50ms);
    EXPECT_EQ(co_await ActiveFor(*observer, rid), 0);
    EXPECT_TRUE(conn->reusable());
    Result r = co_await conn->execute(Context(), "select 1", {});
    EXPECT_EQ(r[0].get<int>(0), 1);
  });
}

// The contrast: a client-side timeout alone leaves the statement running on the server.
TEST_F(Pg, PropagationOffLeavesTheStatementRunning) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), off_);
    auto observer = co_await open_postgresql(Context(), opts_);
    const std::string rid = UniqueId("zombie");
    Context ctx = Context().with_request_id(rid).with_timeout(100ms);
    const auto start = Clock::now();
    ErrorCode code{};
    try {
      co_await conn->execute(ctx, "select pg_sleep(3)", {});
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::deadline_exceeded);
    EXPECT_LT(Clock::now() - start, 400ms);
    EXPECT_FALSE(conn->reusable());
    conn.reset();  // even closing the socket does not stop it
    co_await Sleep(50ms);
    EXPECT_EQ(co_await ActiveFor(*observer, rid), 1);
    // Clean up the zombie so it does not outlive the test.
    std::vector<Value> p{"%request_id='" + rid + "'%"};
    co_await observer->execute(Context(),
                               "select pg_cancel_backend(pid) from pg_stat_activity where query like $1 "
                               "and pid <> pg_backend_pid()",
                               p);
  });
}

TEST_F(Pg, CancelFromAnotherThreadStopsTheStatement) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    auto observer = co_await open_postgresql(Context(), opts_);
    const std::string rid = UniqueId("cancel");
    auto [ctx, source] = Context().with_request_id(rid).with_cancel();
    const std::uint64_t cancels_before = internal::CancelRequestsSent();
    std::thread canceller([source = source] {
      std::this_thread::sleep_for(80ms);
      source.request_stop(StopReason::cancelled);
    });
    ErrorCode code{};
    try {
      co_await conn->execute(ctx, "select pg_sleep(5)", {});
    } catch (const Error& e) {
      code = e.code();
    }
    canceller.join();
    EXPECT_EQ(code, ErrorCode::cancelled);
    EXPECT_EQ(internal::CancelRequestsSent(), cancels_before + 1);
    EXPECT_EQ(co_await ActiveFor(*observer, rid), 0);
    EXPECT_TRUE(conn->reusable());
  });
}

TEST_F(Pg, StatementsCarryTheRequestComment) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    auto observer = co_await open_postgresql(Context(), opts_);
    const std::string rid = UniqueId("comment");
    Context ctx = Context().with_request_id(rid).with_operation("GetItem").with_timeout(300ms);
    std::int64_t seen = -1;
    std::string query;
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(
        ex,
        [&]() -> asio::awaitable<void> {
          co_await Sleep(100ms);
          seen = co_await ActiveFor(*observer, rid);
          std::vector<Value> p{"%request_id='" + rid + "'%"};
          Result r = co_await observer->execute(
              Context(), "select query from pg_stat_activity where query like $1 and pid <> pg_backend_pid()", p);
          if (!r.empty()) query = r[0].get<std::string>(0);
        },
        asio::detached);
    try {
      co_await conn->execute(ctx, "select pg_sleep(1)", {});
    } catch (const Error&) {
    }
    co_await Sleep(100ms);
    EXPECT_EQ(seen, 1);
    EXPECT_NE(query.find("/*operation='GetItem',request_id='" + rid + "'*/"), std::string::npos) << query;
  });
}

TEST_F(Pg, ServerSideTimeoutWeDidNotSetIsAnAttemptTimeout) {
  PgOptions strict = opts_;  // a connection whose own statement_timeout is 50 ms
  strict.url += "?options=-c%20statement_timeout%3D50";
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), strict);
    ErrorCode code{};
    std::string state;
    try {
      // Our budget (5 s) is larger than the session's timeout: the budget only tightens.
      co_await conn->execute(Context().with_timeout(5s), "select pg_sleep(1)", {});
    } catch (const DatabaseError& e) {
      code = e.code();
      state = e.sqlstate();
    }
    EXPECT_EQ(code, ErrorCode::attempt_timeout);
    EXPECT_EQ(state, "57014");
  });
}

// The server-side backstop is kept at session level; an unbound statement must not inherit
// the previous request's budget, and a later, longer budget must not be cut short.
TEST_F(Pg, BackstopNeverOutlivesItsRequest) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    co_await conn->execute(Context().with_timeout(100ms), "select 1", {});
    co_await conn->execute(Context(), "select pg_sleep(0.3)", {});  // unbound: runs to the end
    co_await conn->execute(Context().with_timeout(100ms), "select 1", {});
    co_await conn->execute(Context().with_timeout(5s), "select pg_sleep(0.3)", {});  // a longer budget
    Result r = co_await conn->execute(Context().with_timeout(5s), "show statement_timeout", {});
    const std::string applied = r[0].get<std::string>(0);
    EXPECT_TRUE(applied.back() == 's') << applied;  // within the slack of 5 s
    // A failed statement undoes the SET; the next one re-establishes it.
    try {
      co_await conn->execute(Context().with_timeout(200ms), "select 1/0", {});
    } catch (const Error&) {
    }
    co_await conn->execute(Context(), "select pg_sleep(0.3)", {});
  });
}

TEST_F(Pg, SpentBudgetNeverReachesTheServer) {
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), opts_);
    co_await conn->execute(Context(), "create temp table t(x int)", {});
    ErrorCode code{};
    try {
      co_await conn->execute(Context().with_timeout(0ms), "insert into t values (1)", {});
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, ErrorCode::deadline_exceeded);
    Result n = co_await conn->execute(Context(), "select count(*) from t", {});
    EXPECT_EQ(n[0].get<int>(0), 0);
  });
}

// Stops landing at every point of a write's life: while it is sent, while it runs, as it
// completes. Whatever the timing, an error means the row is absent and success means present.
TEST_F(Pg, StopAnywhereInAnImplicitWriteIsReportedTruthfully) {
  RunSync([&]() -> asio::awaitable<void> {
    auto setup = co_await open_postgresql(Context(), opts_);
    std::string table = UniqueId("t_anywhere");
    table[table.find('-')] = '_';
    co_await setup->execute(Context(), "create table " + table + "(id int primary key, payload text)", {});
    auto conn = co_await open_postgresql(Context(), opts_);
    const std::string payload(4 << 20, 'x');  // 4 MiB: sending takes a while
    std::map<std::string, int> outcomes;
    for (int i = 0; i < 24; ++i) {
      auto [ctx, source] = Context().with_cancel();
      const auto delay = std::chrono::microseconds(i * 400);
      std::thread stopper([source = source, delay] {
        std::this_thread::sleep_for(delay);
        source.request_stop(StopReason::cancelled);
      });
      std::vector<Value> p{std::int64_t{i}, payload};
      bool failed = false;
      try {
        co_await conn->execute(ctx, "insert into " + table + " select $1, $2 from pg_sleep(0.005)", p);
      } catch (const Error& e) {
        failed = true;
        EXPECT_EQ(e.code(), ErrorCode::cancelled) << e.what();
      }
      stopper.join();
      std::vector<Value> id{std::int64_t{i}};
      Result n = co_await setup->execute(Context(), "select count(*) from " + table + " where id = $1", id);
      EXPECT_EQ(n[0].get<int>(0), failed ? 0 : 1) << "attempt " << i;
      ++outcomes[failed ? "stopped" : "completed"];
      if (!conn->reusable()) {  // stopped mid-send: the connection was closed, not drained
        ++outcomes["closed while sending"];
        conn = co_await open_postgresql(Context(), opts_);
      }
    }
    EXPECT_GT(outcomes["stopped"], 0);
    for (const auto& [what, n] : outcomes) std::printf("  %-22s %d\n", what.c_str(), n);
    co_await setup->execute(Context(), "drop table " + table, {});
  });
}

// Deterministic "stop while sending": a proxy stops reading what the client sends, so the
// client is stuck writing a 32 MiB statement when its deadline passes. It must give up,
// close the connection (the Sync never went out, so nothing can commit) and say so.
TEST_F(Pg, StopWhileSendingClosesTheConnectionAndWritesNothing) {
  const std::string host_port = opts_.url.substr(opts_.url.find('@') + 1);
  const auto colon = host_port.find(':');
  const auto port = static_cast<unsigned short>(std::stoi(host_port.substr(colon + 1)));
  cutoff::test_support::TcpProxy proxy(host_port.substr(0, colon), port);
  PgOptions via_proxy = opts_;
  via_proxy.url = "postgresql://postgres@127.0.0.1:" + std::to_string(proxy.port()) + "/postgres";
  RunSync([&]() -> asio::awaitable<void> {
    auto setup = co_await open_postgresql(Context(), opts_);
    std::string table = UniqueId("t_sending");
    table[table.find('-')] = '_';
    co_await setup->execute(Context(), "create table " + table + "(id int, payload text)", {});
    auto conn = co_await open_postgresql(Context(), via_proxy);
    proxy.pause_upstream(true);
    std::vector<Value> p{std::int64_t{1}, std::string(32 << 20, 'x')};
    const auto start = Clock::now();
    ErrorCode code{};
    try {
      co_await conn->execute(Context().with_timeout(100ms), "insert into " + table + " values ($1, $2)", p);
    } catch (const Error& e) {
      code = e.code();
    }
    const auto took = Clock::now() - start;
    proxy.pause_upstream(false);
    EXPECT_EQ(code, ErrorCode::deadline_exceeded);
    EXPECT_LT(took, 600ms * cutoff::test_support::TimeScale());
    EXPECT_FALSE(conn->reusable());
    co_await Sleep(100ms);
    Result n = co_await setup->execute(Context(), "select count(*) from " + table, {});
    EXPECT_EQ(n[0].get<int>(0), 0);
    co_await setup->execute(Context(), "drop table " + table, {});
  });
}

TEST_F(Pg, PoolOfFourUnderFiftyShortDeadlines) {
  PgOptions tagged = opts_;
  tagged.application_name = UniqueId("pooltest");
  asio::io_context io;  // outlives nothing the pool holds, but keep the usual order
  Pool pool(postgresql_factory(tagged), {.max_size = 4});
  // The four connections are opened first, without a deadline: the test is about the pool
  // under short deadlines, and on a loaded machine opening a session alone can take longer
  // than the longest budget below.
  RunSync([&]() -> asio::awaitable<void> {
    std::vector<Pool::Lease> warm;
    for (int i = 0; i < 4; ++i) warm.push_back(co_await pool.acquire(Context()));
  });
  std::map<ErrorCode, int> outcomes;
  int ok = 0;
  std::mt19937 rng(7);
  for (int i = 0; i < 50; ++i) {
    const auto budget = std::chrono::milliseconds(30 + static_cast<int>(rng() % 120));
    const double sleep_s = (5 + static_cast<int>(rng() % 100)) / 1000.0;
    asio::co_spawn(
        io,
        [&, budget, sleep_s]() -> asio::awaitable<void> {
          Context ctx = Context().with_timeout(budget);
          try {
            auto conn = co_await pool.acquire(ctx);
            std::vector<Value> p{sleep_s};
            co_await conn->execute(ctx, "select pg_sleep($1::float8)", p);
            ++ok;
          } catch (const Error& e) {
            ++outcomes[e.code()];
          }
        },
        asio::detached);
  }
  io.run();
  PoolStats s = pool.stats();
  EXPECT_LE(s.max_open_seen, 4u);
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(s.waiting, 0u);
  EXPECT_EQ(s.idle, s.open);
  EXPECT_EQ(ok + outcomes[ErrorCode::deadline_exceeded], 50);
  EXPECT_GT(ok, 0);
  EXPECT_GT(outcomes[ErrorCode::deadline_exceeded], 0);
  // The server agrees: at most four sessions, none of them still running anything.
  RunSync([&]() -> asio::awaitable<void> {
    auto observer = co_await open_postgresql(Context(), opts_);
    std::vector<Value> p{tagged.application_name};
    Result r =
        co_await observer->execute(Context(),
                                   "select count(*) as sessions, count(*) filter (where state = 'active') as active "
                                   "from pg_stat_activity where application_name = $1",
                                   p);
    EXPECT_LE(r[0].get<int>("sessions"), 4);
    EXPECT_EQ(r[0].get<int>("active"), 0);
  });
}

TEST_F(Pg, CancelWhileQueuedForAConnection) {
  Pool pool(postgresql_factory(opts_), {.max_size = 1});
  ErrorCode code{};
  RunSync([&]() -> asio::awaitable<void> {
    auto holder = co_await pool.acquire(Context());
    auto [ctx, source] = Context().with_cancel();
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(
        ex,
        [&, ctx = ctx]() -> asio::awaitable<void> {
          try {
            auto conn = co_await pool.acquire(ctx);
          } catch (const Error& e) {
            code = e.code();
          }
        },
        asio::detached);
    co_await Sleep(30ms);
    source.request_stop(StopReason::cancelled);
    co_await Sleep(30ms);
  });
  EXPECT_EQ(code, ErrorCode::cancelled);
  EXPECT_EQ(pool.stats().stopped_waiting, 1u);
}

// The value of one sample ("name{labels}"), 0 when absent.
double Metric(const std::string& text, const std::string& series) {
  const auto at = text.find("\n" + series + " ");
  return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size() + 2));
}

TEST_F(Pg, MetricsCountStoppedStatementsAndOrphanedWork) {
  observe::Registry registry;
  PgOptions on = opts_;
  on.driver.metrics = &registry;
  PgOptions off = off_;
  off.driver.metrics = &registry;
  auto mark = std::make_shared<ResponseMark>();
  RequestValues values{.request_id = UniqueId("metrics"), .response = mark};
  const Context request = Context().with_values(values);
  double real_orphan = 0;
  RunSync([&]() -> asio::awaitable<void> {
    auto conn = co_await open_postgresql(Context(), on);
    co_await conn->execute(request, "select 1", {});  // done before the response: not orphaned
    // Stopped at its deadline: the cancel ends it on the server.
    try {
      co_await conn->execute(Context().with_timeout(100ms), "select pg_sleep(5)", {});
    } catch (const Error&) {
    }
    // The response goes out 50 ms into a 200 ms statement that runs to its end.
    asio::steady_timer respond(co_await asio::this_coro::executor, 50ms);
    TimePoint sent{};
    respond.async_wait([&](auto) {
      sent = SteadyClock::now();
      mark->mark_sent(sent);
    });
    co_await conn->execute(request, "select pg_sleep(0.2)", {});
    real_orphan = std::chrono::duration<double>(SteadyClock::now() - sent).count();
    // With propagation off the driver gives up at the stop; the statement runs on unseen.
    auto zombie = co_await open_postgresql(Context(), off);
    const Context bounded = request.with_timeout(50ms);
    try {
      co_await zombie->execute(bounded, "select pg_sleep(0.3)", {});
    } catch (const Error&) {
    }
  });
  const std::string text = "\n" + registry.expose();
  EXPECT_EQ(Metric(text, R"(cutoff_stops_total{layer="sql",reason="deadline_exceeded"})"), 2) << text;
  EXPECT_EQ(Metric(text, R"(cutoff_overshoot_seconds_count{layer="sql"})"), 2) << text;
  EXPECT_LT(Metric(text, R"(cutoff_overshoot_seconds_sum{layer="sql"})"), 0.5 * cutoff::test_support::TimeScale());
  EXPECT_EQ(Metric(text, R"(cutoff_orphaned_work_seconds_count{backend="postgresql"})"), 1) << text;
  const double orphaned = Metric(text, R"(cutoff_orphaned_work_seconds_sum{backend="postgresql"})");
  EXPECT_GT(orphaned, 0.1);
  EXPECT_LE(orphaned, real_orphan);
  EXPECT_EQ(Metric(text, R"(cutoff_orphaned_work_unobserved_total{backend="postgresql"})"), 1) << text;
}

}  // namespace
}  // namespace cutoff::sql
