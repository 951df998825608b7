// The effect region on both databases: a stop at every step of the commit path, entry and
// admission, read-only and nested transactions, idempotency keys and the outbox.
#include "cutoff/effects/effects.hpp"

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <atomic>
#include <thread>
#include <tuple>

#include "cutoff/effects/idempotency.hpp"
#include "cutoff/effects/internal/fault_points.hpp"
#include "tests/support/effects_backend.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::effects {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;
using cutoff::test_support::Sleep;
using cutoff::test_support::TimeScale;
using test_support::Backend;

// What an awaited region threw, as a code (nullopt: it returned).
template <typename T>
asio::awaitable<std::optional<ErrorCode>> CodeOf(asio::awaitable<T> op) {
  try {
    co_await std::move(op);
  } catch (const Error& e) {
    co_return e.code();
  }
  co_return std::nullopt;
}

std::string Name(std::optional<ErrorCode> c) { return c ? std::string(to_string(*c)) : "ok"; }

asio::awaitable<void> WaitUntilStopped(const Context& ctx) {
  for (int i = 0; i < 2000 && !ctx.stop_requested(); ++i) co_await Sleep(2ms);
}

// ---- The fault matrix: a deadline or a cancel at each step of the commit path. ----

using Cell = std::tuple<std::string, Step, StopReason>;

class EffectsFaultMatrix : public ::testing::TestWithParam<Cell> {};

TEST_P(EffectsFaultMatrix, ReportsTheRightCodeAndNeverLosesAfterCommitWork) {
  const auto& [driver, where, how] = GetParam();
  Backend db(driver);
  if (!db.available()) GTEST_SKIP() << "no test PostgreSQL";
  const auto budget = std::chrono::milliseconds(300 * TimeScale());
  const bool pg_commit_cell = db.postgres() && where == Step::commit_in_flight;

  RunSync([&]() -> asio::awaitable<void> {
    co_await db.create_items(pg_commit_cell ? static_cast<int>(3 * budget.count()) : 0);
    std::vector<std::string> delivered;
    bool body_ran = false, after_commit_done = false;
    auto [caller, source] = Context().with_cancel(Deadline::after(budget));
    auto ledger = std::make_shared<CommitLedger>();
    caller = caller.with_commit_ledger(ledger);
    std::thread canceller;
    auto stop_soon = [&](std::chrono::milliseconds after) {
      canceller = std::thread([&source, after] {
        std::this_thread::sleep_for(after);
        source.request_stop(StopReason::cancelled);
      });
    };

    EffectsOptions opts;
    opts.table_prefix = db.prefix() + "_";
    opts.timeout = 30s;
    opts.sink = [&](const Context&, const OutboxMessage& m) -> asio::awaitable<void> {
      delivered.push_back(m.payload);
      co_return;
    };
    cutoff::internal::ScopedFault fault(internal::kEffectStep, [&](Step s, const Context& c) -> asio::awaitable<void> {
      if (where == Step::commit_in_flight && s == Step::sending_commit) {
        if (db.postgres()) {
          // COMMIT takes 3 budgets: the deadline passes while it is out, or a cancel lands.
          if (how == StopReason::cancelled) stop_soon(budget / 3);
        } else {
          db.during_next_commit([&] {
            if (how == StopReason::cancelled) source.request_stop(StopReason::cancelled);
            else
              while (!caller.stop_requested()) std::this_thread::sleep_for(1ms);
          });
        }
        co_return;
      }
      if (s != where) co_return;
      if (where == Step::body) {  // the body's endless statement is what the stop interrupts
        if (how == StopReason::cancelled) stop_soon(budget / 3);
        co_return;
      }
      if (how == StopReason::cancelled) source.request_stop(StopReason::cancelled);
      else co_await WaitUntilStopped(c);
    });
    observe::Registry registry;
    observe::DeadlineMetrics metrics(registry);
    opts.metrics = &metrics;
    Effects effects(db.pool(), opts);
    co_await effects.install(Context());

    EffectRequest req;
    req.operation = "items.create";
    const auto started = std::chrono::steady_clock::now();
    auto code = co_await CodeOf(effects.run(caller, req, [&](Effect& fx) -> asio::awaitable<std::string> {
      body_ran = true;
      co_await fx.execute("insert into " + db.items() + " (id, note) values (1, 'x')");
      co_await fx.publish("items.created", R"({"id":1})");
      fx.after_commit([&](const Context&) -> asio::awaitable<void> {
        co_await Sleep(20ms);
        after_commit_done = true;
      });
      if (where == Step::body) co_await fx.execute(db.endless_statement());
      co_return R"({"id":1})";
    }));
    const auto took = std::chrono::steady_clock::now() - started;
    if (canceller.joinable()) canceller.join();

    const bool committed = past_commit_point(where);
    const ErrorCode expected = committed ? ErrorCode::commit_ambiguous : Error::stopped(how).code();
    EXPECT_EQ(Name(code), Name(expected)) << "stop at " << to_string(where);
    EXPECT_EQ(co_await db.count(db.items()), committed ? 1 : 0);
    EXPECT_EQ(co_await db.count(effects.outbox_table(), "dispatched_ms is not null"), committed ? 1 : 0);
    EXPECT_EQ(co_await db.count(effects.outbox_table()), committed ? 1 : 0);
    EXPECT_EQ(delivered.size(), committed ? 1u : 0u);
    EXPECT_EQ(after_commit_done, committed);  // never lost once committed
    EXPECT_EQ(body_ran, where != Step::before_begin);
    EXPECT_EQ(ledger->commit_points(), committed ? 1u : 0u);
    EXPECT_FALSE(ledger->after_commit_pending());
    const EffectStats st = effects.stats();
    EXPECT_EQ(st.committed, committed ? 1u : 0u);
    EXPECT_EQ(st.ambiguous, committed ? 1u : 0u);
    // Every cell ended in a stop: one at the effect layer, with the stop's own reason, and
    // its overshoot observed once.
    EXPECT_EQ(metrics.stops.with({"effect", to_string(how)}).value(), 1);
    EXPECT_EQ(metrics.overshoot.with({"effect"}).snapshot().count, 1u);
    EXPECT_EQ(metrics.commit_ambiguous.with({"items.create"}).value(), committed ? 1 : 0);
    if (where == Step::body) {  // the statement was stopped, not waited out
      EXPECT_LT(took, budget + std::chrono::milliseconds(2000 * TimeScale()));
    }
    co_await db.drop_all();
  });
}

std::string CellName(const ::testing::TestParamInfo<Cell>& info) {
  const auto& [driver, step, reason] = info.param;
  return driver + "_" + std::string(to_string(step)) + "_" + std::string(to_string(reason));
}

INSTANTIATE_TEST_SUITE_P(
    BothDatabases, EffectsFaultMatrix,
    ::testing::Combine(::testing::Values("sqlite", "postgresql"),
                       ::testing::Values(Step::before_begin, Step::body, Step::sending_commit, Step::commit_in_flight,
                                         Step::after_commit, Step::after_commit_work),
                       ::testing::Values(StopReason::deadline_exceeded, StopReason::cancelled)),
    CellName);

// ---- Everything else, on both databases. ----

class EffectsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    db_ = std::make_unique<Backend>(GetParam());
    if (!db_->available()) GTEST_SKIP() << "no test PostgreSQL";
    opts_.table_prefix = db_->prefix() + "_";
    opts_.timeout = 10s;
    opts_.sink = [this](const Context& ctx, const OutboxMessage& m) -> asio::awaitable<void> {
      if (fail_sink_) throw Error(ErrorCode::unavailable, "broker down");
      sink_budget_ = ctx.remaining();
      sink_request_id_ = ctx.request_id();
      delivered_.push_back(m.payload);
      co_return;
    };
  }
  void TearDown() override {
    if (db_ && db_->available()) RunSync([&]() -> asio::awaitable<void> { co_await db_->drop_all(); });
  }

  asio::awaitable<std::unique_ptr<Effects>> Make() {
    auto fx = std::make_unique<Effects>(db_->pool(), opts_);
    co_await db_->create_items();
    co_await fx->install(Context());
    co_return fx;
  }

  // A body that inserts row `id` and returns its id; counts its runs.
  EffectBody Insert(int id) {
    return [this, id](Effect& fx) -> asio::awaitable<std::string> {
      ++body_runs_;
      std::vector<sql::Value> p{id};
      co_await fx.execute("insert into " + db_->items() + " (id, note) values ($1, 'x')", p);
      co_return "{\"id\":" + std::to_string(id) + "}";
    };
  }

  std::unique_ptr<Backend> db_;
  EffectsOptions opts_;
  std::atomic<int> body_runs_{0};
  bool fail_sink_ = false;
  std::vector<std::string> delivered_;
  Duration sink_budget_{};
  std::string sink_request_id_;
};

TEST_P(EffectsTest, CommitsAndReturnsTheBodysResult) {
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    EffectRequest req{.operation = "items.create"};
    EffectOutcome out = co_await fx->run(Context().with_timeout(5s), req, Insert(7));
    EXPECT_EQ(out.result, R"({"id":7})");
    EXPECT_FALSE(out.replayed);
    EXPECT_EQ(co_await db_->count(db_->items()), 1);
    EXPECT_EQ(fx->stats().committed, 1u);
    EXPECT_EQ(fx->admission().in_flight(), 0u);
  });
}

TEST_P(EffectsTest, AnExpiredBudgetEntersNothing) {
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    const sql::PoolStats before = db_->pool().stats();
    EffectRequest req{.operation = "items.create", .idempotency_key = "k1", .fingerprint = "a"};
    Context spent = Context().with_deadline(Deadline::after(0ms));
    EXPECT_EQ(Name(co_await CodeOf(fx->run(spent, req, Insert(1)))), "deadline_exceeded");
    auto [cancelled, source] = Context().with_cancel();
    source.request_stop(StopReason::cancelled);
    EXPECT_EQ(Name(co_await CodeOf(fx->run(cancelled, req, Insert(1)))), "cancelled");
    EXPECT_EQ(body_runs_, 0);
    EXPECT_EQ(fx->admission().rejected(), 0u);  // not even counted against the limit
    EXPECT_EQ(db_->pool().stats().opened, before.opened);
    EXPECT_EQ(co_await db_->count(fx->idempotency_table()), 0);  // no claim either
  });
}

TEST_P(EffectsTest, OverAdmissionIsRefusedBeforeAnythingIsWritten) {
  opts_.max_in_flight = 1;
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    auto ex = co_await asio::this_coro::executor;
    bool first_done = false;
    EffectRequest slow_req{.operation = "items.create"};
    asio::co_spawn(
        ex,
        [&]() -> asio::awaitable<void> {
          co_await fx->run(Context().with_timeout(5s), slow_req, [&](Effect& e) -> asio::awaitable<std::string> {
            co_await e.execute("insert into " + db_->items() + " (id, note) values (1, 'slow')");
            co_await Sleep(200ms);
            co_return "{}";
          });
          first_done = true;
        },
        asio::detached);
    co_await Sleep(50ms);
    EffectRequest req{.operation = "items.create"};
    EXPECT_EQ(Name(co_await CodeOf(fx->run(Context().with_timeout(5s), req, Insert(2)))), "overloaded");
    while (!first_done) co_await Sleep(10ms);
    EXPECT_EQ(co_await db_->count(db_->items()), 1);
    EXPECT_EQ(fx->stats().rejected, 1u);
    EXPECT_EQ(body_runs_, 0);
  });
}

TEST_P(EffectsTest, AnEnforcedReadOnlyRegionIsNeverAmbiguous) {
  for (Step at : {Step::sending_commit, Step::after_commit}) {
    for (StopReason how : {StopReason::deadline_exceeded, StopReason::cancelled}) {
      auto [caller, source] = Context().with_cancel(Deadline::after(std::chrono::milliseconds(200 * TimeScale())));
      cutoff::internal::ScopedFault fault(internal::kEffectStep, [&, at, how](Step s, const Context& c) -> asio::awaitable<void> {
        if (s != at) co_return;
        if (how == StopReason::cancelled) source.request_stop(how);
        else co_await WaitUntilStopped(c);
      });
      RunSync([&]() -> asio::awaitable<void> {
        auto fx = std::make_unique<Effects>(db_->pool(), opts_);
        EffectRequest req{.operation = "items.count", .mode = sql::AccessMode::read_only};
        auto code = co_await CodeOf(fx->run(caller, req, [&](Effect& e) -> asio::awaitable<std::string> {
          co_await e.execute("select 1");
          co_return "{}";
        }));
        EXPECT_EQ(Name(code), to_string(Error::stopped(how).code())) << "at " << to_string(at);
      });
    }
  }
}

TEST_P(EffectsTest, AReadOnlyRegionThatQueuedAfterCommitWorkIsAmbiguous) {
  auto [caller, source] = Context().with_cancel();
  cutoff::internal::ScopedFault fault(internal::kEffectStep, [&](Step s, const Context&) -> asio::awaitable<void> {
    if (s == Step::after_commit) source.request_stop(StopReason::cancelled);
    co_return;
  });
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    bool ran = false;
    EffectRequest req{.operation = "items.count", .mode = sql::AccessMode::read_only};
    auto code = co_await CodeOf(fx->run(caller, req, [&](Effect& e) -> asio::awaitable<std::string> {
      co_await e.execute("select count(*) from " + db_->items());
      e.after_commit([&](const Context&) -> asio::awaitable<void> {
        ran = true;
        co_return;
      });
      co_return "{}";
    }));
    EXPECT_EQ(Name(code), "commit_ambiguous");
    EXPECT_TRUE(ran);
  });
}

TEST_P(EffectsTest, ReadOnlyRegionsRefuseWrites) {
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    EffectRequest req{.operation = "items.sneak", .mode = sql::AccessMode::read_only};
    auto code = co_await CodeOf(fx->run(Context().with_timeout(5s), req, Insert(3)));
    EXPECT_TRUE(code.has_value());
    EXPECT_EQ(co_await db_->count(db_->items()), 0);
  });
}

TEST_P(EffectsTest, InsideATransactionOpenedElsewhereItIsASavepointAndAStopIsAmbiguous) {
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    sql::Pool::Lease conn = co_await db_->pool().acquire(Context());
    // Committed by its owner: the region's writes become durable with it.
    co_await conn->execute(Context(), "BEGIN", {});
    EffectRequest req{.operation = "items.create"};
    EffectOutcome out = co_await fx->run_on(*conn, Context().with_timeout(5s), req, Insert(1));
    EXPECT_EQ(out.result, R"({"id":1})");
    EXPECT_TRUE(conn->in_transaction());
    co_await conn->execute(Context(), "ROLLBACK", {});
    EXPECT_EQ(co_await db_->count(db_->items()), 0);  // the owner decided, not the region

    co_await conn->execute(Context(), "BEGIN", {});
    auto [caller, source] = Context().with_cancel();
    std::thread t([&source] {
      std::this_thread::sleep_for(100ms);
      source.request_stop(StopReason::cancelled);
    });
    auto code = co_await CodeOf(fx->run_on(*conn, caller, req, [&](Effect& e) -> asio::awaitable<std::string> {
      co_await e.execute("insert into " + db_->items() + " (id, note) values (2, 'x')");
      co_await e.execute(db_->endless_statement());
      co_return "{}";
    }));
    t.join();
    EXPECT_EQ(Name(code), "commit_ambiguous");
    // An idempotency key needs a transaction of the region's own.
    EffectRequest keyed{.operation = "items.create", .idempotency_key = "k", .fingerprint = "f"};
    if (conn->in_transaction()) {
      EXPECT_EQ(Name(co_await CodeOf(fx->run_on(*conn, Context().with_timeout(5s), keyed, Insert(3)))),
                "invalid_argument");
    }
    co_await conn->execute(Context(), "ROLLBACK", {});
  });
}

// An empty key once meant "no idempotency": 20 calls with key "" ran the body 20 times.
TEST_P(EffectsTest, AnInvalidKeyIsRefusedBeforeAnythingRuns) {
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    const std::vector<std::string> bad = {"", std::string(kMaxIdempotencyKeyBytes + 1, 'k'), "a\nb", "a\r\nX-Other: 1",
                               std::string("a\0b", 3), "tab\t", "\x7f", " padded", "padded "};
    for (const std::string& key : bad) {
      for (int round = 0; round < 3; ++round) {
        EffectRequest req{.operation = "items.create", .idempotency_key = key, .fingerprint = "f"};
        EXPECT_EQ(Name(co_await CodeOf(fx->run(Context().with_timeout(5s), req, Insert(1)))), "invalid_argument")
            << "key of " << key.size() << " bytes";
        sql::Pool::Lease conn = co_await db_->pool().acquire(Context());
        EXPECT_EQ(Name(co_await CodeOf(fx->run_on(*conn, Context().with_timeout(5s), req, Insert(1)))),
                  "invalid_argument");
      }
      EXPECT_TRUE(idempotency_key_problem(key).has_value());
    }
    EXPECT_EQ(body_runs_, 0);
    EXPECT_EQ(fx->admission().rejected(), 0u);
    EXPECT_EQ(co_await db_->count(db_->items()), 0);
    EXPECT_EQ(co_await db_->count(fx->idempotency_table()), 0);

    // The longest key, UTF-8 and inner spaces are keys like any other; no key at all is no
    // idempotency.
    EffectRequest longest{.operation = "items.create", .idempotency_key = std::string(kMaxIdempotencyKeyBytes, 'k'),
                          .fingerprint = "f"};
    EXPECT_FALSE((co_await fx->run(Context().with_timeout(5s), longest, Insert(1))).replayed);
    EXPECT_TRUE((co_await fx->run(Context().with_timeout(5s), longest, Insert(1))).replayed);
    EffectRequest utf8{.operation = "items.create", .idempotency_key = "commande n\xc2\xb0 7", .fingerprint = "f"};
    EXPECT_FALSE((co_await fx->run(Context().with_timeout(5s), utf8, Insert(2))).replayed);
    EffectRequest unkeyed{.operation = "items.create"};
    co_await fx->run(Context().with_timeout(5s), unkeyed, Insert(3));
    co_await fx->run(Context().with_timeout(5s), unkeyed, Insert(4));
    EXPECT_EQ(body_runs_, 4);
    EXPECT_EQ(co_await db_->count(db_->items()), 4);
  });
}

TEST_P(EffectsTest, ARepeatedKeyReturnsTheStoredResultWithoutRunningAgain) {
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    EffectRequest req{.operation = "items.create", .idempotency_key = "order-1", .fingerprint = R"({"id":5})"};
    EffectOutcome a = co_await fx->run(Context().with_timeout(5s), req, Insert(5));
    EffectOutcome b = co_await fx->run(Context().with_timeout(5s), req, Insert(5));
    EXPECT_FALSE(a.replayed);
    EXPECT_TRUE(b.replayed);
    EXPECT_EQ(b.result, a.result);
    EXPECT_EQ(body_runs_, 1);
    EXPECT_EQ(co_await db_->count(db_->items()), 1);

    EffectRequest other = req;
    other.fingerprint = R"({"id":6})";
    EXPECT_EQ(Name(co_await CodeOf(fx->run(Context().with_timeout(5s), other, Insert(6)))), "idempotency_conflict");
    // The same key under another operation is another key.
    EffectRequest elsewhere = other;
    elsewhere.operation = "items.archive";
    EXPECT_FALSE((co_await fx->run(Context().with_timeout(5s), elsewhere, Insert(6))).replayed);
  });
}

TEST_P(EffectsTest, AClaimStillInProgressIsAConflict) {
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    auto ex = co_await asio::this_coro::executor;
    EffectRequest req{.operation = "items.create", .idempotency_key = "order-2", .fingerprint = "f"};
    bool first_done = false;
    asio::co_spawn(
        ex,
        [&]() -> asio::awaitable<void> {
          co_await fx->run(Context().with_timeout(5s), req, [&](Effect& e) -> asio::awaitable<std::string> {
            co_await e.execute("insert into " + db_->items() + " (id, note) values (1, 'x')");
            co_await Sleep(300ms);
            co_return "first";
          });
          first_done = true;
        },
        asio::detached);
    co_await Sleep(60ms);
    EXPECT_EQ(Name(co_await CodeOf(fx->run(Context().with_timeout(5s), req, Insert(2)))), "idempotency_conflict");
    while (!first_done) co_await Sleep(10ms);
    EffectOutcome later = co_await fx->run(Context().with_timeout(5s), req, Insert(2));
    EXPECT_TRUE(later.replayed);
    EXPECT_EQ(later.result, "first");
    EXPECT_EQ(co_await db_->count(db_->items()), 1);
  });
}

TEST_P(EffectsTest, AStopBeforeTheCommitPointReleasesTheClaim) {
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    EffectRequest req{.operation = "items.create", .idempotency_key = "order-3", .fingerprint = "f"};
    auto [caller, source] = Context().with_cancel();
    std::thread t([&source] {
      std::this_thread::sleep_for(100ms);
      source.request_stop(StopReason::cancelled);
    });
    auto code = co_await CodeOf(fx->run(caller, req, [&](Effect& e) -> asio::awaitable<std::string> {
      co_await e.execute(db_->endless_statement());
      co_return "never";
    }));
    t.join();
    EXPECT_EQ(Name(code), "cancelled");
    // A fresh invocation may try again at once: the claim is gone.
    EffectOutcome retry = co_await fx->run(Context().with_timeout(5s), req, Insert(1));
    EXPECT_FALSE(retry.replayed);
    EXPECT_EQ(co_await db_->count(db_->items()), 1);
  });
}

TEST_P(EffectsTest, AClaimLeftByACrashBlocksRetriesNoLongerThanTheEffectsTimeout) {
  opts_.timeout = std::chrono::milliseconds(400 * TimeScale());
  opts_.claim_margin = 0ms;
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    EffectRequest req{.operation = "items.create", .idempotency_key = "order-4", .fingerprint = "f"};
    {
      // What a process that died after claiming leaves behind: a claim nobody will finish.
      sql::Pool::Lease conn = co_await db_->pool().acquire(Context());
      internal::IdempotencyKey key{fx->idempotency_table(), req.operation, *req.idempotency_key};
      auto claim = co_await internal::ClaimKey(*conn, Context(), key, req.fingerprint, opts_.timeout);
      EXPECT_EQ(claim.kind, internal::Claim::Kind::claimed);
    }
    const auto crashed_at = std::chrono::steady_clock::now();
    int conflicts = 0;
    for (;;) {
      auto code = co_await CodeOf(fx->run(Context().with_timeout(5s), req, Insert(1)));
      if (!code) break;
      EXPECT_EQ(Name(code), "idempotency_conflict");
      ++conflicts;
      co_await Sleep(25ms);
    }
    const auto blocked = std::chrono::steady_clock::now() - crashed_at;
    EXPECT_GT(conflicts, 0);
    // The claim was taken before `crashed_at`, so only a loose lower bound holds on a busy
    // machine; the upper bound is the point.
    EXPECT_GE(blocked, opts_.timeout / 4);
    EXPECT_LT(blocked, opts_.timeout + std::chrono::milliseconds(1000 * TimeScale()));
    EXPECT_EQ(body_runs_, 1);
  });
}

TEST_P(EffectsTest, TheSweeperForgetsRecordsPastTheirRetention) {
  opts_.retention = 0ms;
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    EffectRequest req{.operation = "items.create", .idempotency_key = "order-5", .fingerprint = "f"};
    co_await fx->run(Context().with_timeout(5s), req, Insert(1));
    co_await Sleep(5ms);
    auto [sweeper_ctx, stop_sweeper] = Context().with_cancel();
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(ex, fx->run_sweeper(sweeper_ctx, 20ms), asio::detached);
    for (int i = 0; i < 200 && co_await db_->count(fx->idempotency_table()) > 0; ++i) co_await Sleep(10ms);
    stop_sweeper.request_stop(StopReason::shutdown);
    EXPECT_EQ(co_await db_->count(fx->idempotency_table()), 0);
    // Forgotten: the key runs again.
    EXPECT_FALSE((co_await fx->run(Context().with_timeout(5s), req, Insert(2))).replayed);
    co_await Sleep(50ms);  // let the sweeper see its stop
  });
}

// A backlog larger than one batch is deleted batch by batch, and a record not yet past its
// retention stays.
TEST_P(EffectsTest, TheSweepDeletesABacklogInBatches) {
  opts_.retention = 1h;
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    EffectRequest req{.operation = "items.create", .idempotency_key = "recent", .fingerprint = "f"};
    co_await fx->run(Context().with_timeout(5s), req, Insert(1));
    // 2,345 records finished two hours ago (more than two batches).
    const std::int64_t old_ms = internal::NowMs() - 2 * 3600 * 1000;
    sql::Pool::Lease conn = co_await db_->pool().acquire(Context());
    std::vector<sql::Value> p{old_ms};
    co_await conn->execute(
        Context(),
        "with recursive n(i) as (select 1 union all select i + 1 from n where i < 2345) insert into " +
            fx->idempotency_table() +
            " (operation, idem_key, fingerprint, state, claimed_until_ms, created_ms, completed_ms)"
            " select 'items.create', 'old-' || i, 'f', 'done', $1, $1, $1 from n",
        p);
    EXPECT_EQ(co_await db_->count(fx->idempotency_table()), 2346);
    EXPECT_EQ(co_await fx->sweep(Context().with_timeout(20s)), 2345u);
    EXPECT_EQ(co_await db_->count(fx->idempotency_table()), 1);
    EXPECT_TRUE((co_await fx->run(Context().with_timeout(5s), req, Insert(2))).replayed);
  });
}

TEST_P(EffectsTest, TheSweepForgetsDeliveredMessagesAndKeepsUndeliveredOnes) {
  opts_.retention = 0ms;
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    EffectRequest req{.operation = "items.create"};
    co_await fx->run(Context().with_timeout(5s), req, [&](Effect& e) -> asio::awaitable<std::string> {
      co_await e.publish("items.created", "delivered");
      co_return "{}";
    });
    EXPECT_EQ(delivered_.size(), 1u);
    sql::Pool::Lease conn = co_await db_->pool().acquire(Context());
    std::vector<sql::Value> p{internal::NowMs() - 3600 * 1000};
    co_await conn->execute(
        Context(),
        "insert into " + fx->outbox_table() + " (topic, payload, created_ms) values ('items.created', 'waiting', $1)",
        p);
    co_await Sleep(5ms);
    EXPECT_EQ(co_await fx->sweep(Context().with_timeout(20s)), 1u);
    EXPECT_EQ(co_await db_->count(fx->outbox_table()), 1);
    EXPECT_EQ(co_await db_->count(fx->outbox_table(), "payload = 'waiting'"), 1);
  });
}

TEST_P(EffectsTest, OutboxMessagesGetAFreshBudgetAndSurviveAFailedDispatch) {
  opts_.dispatch_timeout = 30s;
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    EffectRequest req{.operation = "items.create"};
    Context producer = Context().with_timeout(1s).with_request_id("req-77");
    co_await fx->run(producer, req, [&](Effect& e) -> asio::awaitable<std::string> {
      co_await e.publish("items.created", "m1");
      co_return "{}";
    });
    EXPECT_EQ(delivered_.size(), 1u);
    EXPECT_GT(sink_budget_, 10s);  // its own budget, not the producer's second
    EXPECT_EQ(sink_request_id_, "req-77");
    EXPECT_EQ(co_await fx->pending_messages(Context()), 0);

    fail_sink_ = true;
    co_await fx->run(producer, req, [&](Effect& e) -> asio::awaitable<std::string> {
      co_await e.publish("items.created", "m2");
      co_return "{}";
    });
    EXPECT_EQ(fx->stats().dispatch_failures, 1u);
    EXPECT_EQ(co_await fx->pending_messages(Context()), 1);
  });
  // The relay redelivers what is older than one dispatch budget.
  opts_.dispatch_timeout = 20ms;
  fail_sink_ = false;
  RunSync([&]() -> asio::awaitable<void> {
    Effects relay(db_->pool(), opts_);
    co_await Sleep(40ms);
    EXPECT_EQ(co_await relay.relay(Context().with_timeout(5s)), 1u);
    EXPECT_EQ(delivered_.back(), "m2");
    EXPECT_EQ(co_await relay.pending_messages(Context()), 0);
  });
}

TEST_P(EffectsTest, CancellingTheCallingCoroutineAfterTheCommitPointLosesNothing) {
  asio::cancellation_signal signal;
  cutoff::internal::ScopedFault fault(internal::kEffectStep, [&](Step s, const Context&) -> asio::awaitable<void> {
    if (s == Step::sending_commit || s == Step::after_commit) signal.emit(asio::cancellation_type::terminal);
    co_return;
  });
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    bool after_commit_done = false, finished = false;
    EffectRequest req{.operation = "items.create"};
    auto ex = co_await asio::this_coro::executor;
    const Context caller = Context().with_timeout(5s);  // outlives the spawned region
    asio::co_spawn(ex,
                   fx->run(caller, req,
                           [&](Effect& e) -> asio::awaitable<std::string> {
                             co_await e.execute("insert into " + db_->items() + " (id, note) values (1, 'x')");
                             co_await e.publish("items.created", "m");
                             e.after_commit([&](const Context&) -> asio::awaitable<void> {
                               co_await Sleep(30ms);
                               after_commit_done = true;
                             });
                             co_return "{}";
                           }),
                   asio::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr, EffectOutcome) {
                     finished = true;
                   }));
    for (int i = 0; i < 500 && !finished; ++i) co_await Sleep(10ms);
    EXPECT_TRUE(finished);
    EXPECT_TRUE(after_commit_done);
    EXPECT_EQ(delivered_.size(), 1u);
    EXPECT_EQ(co_await db_->count(db_->items()), 1);
  });
}

// An HTTP server cancels a handler's coroutine (Asio terminal) when its client hangs up: the
// region's rollback and the release of its claim must still run, or every retry with the key
// is refused as "still in progress" until the claim expires.
TEST_P(EffectsTest, CancellingTheCallingCoroutineBeforeTheCommitPointStillReleasesTheClaim) {
  RunSync([&]() -> asio::awaitable<void> {
    auto fx = co_await Make();
    asio::cancellation_signal signal;
    bool finished = false, body_started = false;
    EffectRequest req{.operation = "items.create", .idempotency_key = "order-9", .fingerprint = "f"};
    auto ex = co_await asio::this_coro::executor;
    auto [caller, source] = Context().with_cancel(Deadline::after(10s));  // outlives the region
    asio::co_spawn(ex,
                   fx->run(caller, req,
                           [&](Effect& e) -> asio::awaitable<std::string> {
                             body_started = true;
                             co_await e.execute(db_->endless_statement());
                             co_return "never";
                           }),
                   asio::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr, EffectOutcome) {
                     finished = true;
                   }));
    for (int i = 0; i < 500 && !body_started; ++i) co_await Sleep(2ms);
    co_await Sleep(50ms);
    // What the server does on a hang-up: stop the context and cancel the coroutine.
    source.request_stop(StopReason::cancelled);
    signal.emit(asio::cancellation_type::terminal);
    for (int i = 0; i < 500 && !finished; ++i) co_await Sleep(10ms);
    EXPECT_TRUE(finished);
    EffectOutcome retry = co_await fx->run(Context().with_timeout(5s), req, Insert(1));
    EXPECT_FALSE(retry.replayed);
    EXPECT_EQ(co_await db_->count(db_->items()), 1);
  });
}

INSTANTIATE_TEST_SUITE_P(BothDatabases, EffectsTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace cutoff::effects
