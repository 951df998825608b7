#include "cutoff/ops/invoker.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <boost/json/serialize.hpp>

#include "cutoff/core/deadline_timer_service.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/resilience/service_time_admission.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::ops {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using cutoff::test_support::Scaled;

std::int64_t RemainingMs(const Context& ctx) {
  return std::chrono::ceil<std::chrono::milliseconds>(ctx.remaining()).count();
}

// Outcome of one invocation run to completion.
struct Outcome {
  std::optional<json::value> result;
  std::optional<Error> error;
  Duration took{};
  ErrorCode code() const { return error ? error->code() : ErrorCode::internal; }
};

Outcome Invoke(const Invoker& invoker, Context ctx, std::string_view name, json::value args = json::object(),
            InvokeOptions options = {}) {
  Outcome out;
  const auto start = Clock::now();
  try {
    out.result = test_support::RunSync([&]() -> asio::awaitable<json::value> {
      co_return co_await invoker.invoke(ctx, name, args, options);
    });
  } catch (const Error& e) {
    out.error = e;
  }
  out.took = Clock::now() - start;
  return out;
}

// A handler that waits (honouring the context) for args["ms"], then returns its remaining budget.
asio::awaitable<json::value> SleepThenReport(const Call& call) {
  const std::int64_t before = RemainingMs(call.ctx);
  if (const json::value* ms = call.args.as_object().if_contains("ms"))
    co_await test_support::Sleep(std::chrono::milliseconds(ms->to_number<std::int64_t>()));
  co_return json::object{{"remaining_ms", before}};
}

std::int64_t ReportedMs(const Outcome& o) {
  EXPECT_TRUE(o.result) << (o.error ? o.error->what() : "");
  return o.result ? o.result->at("remaining_ms").to_number<std::int64_t>() : -1;
}

struct Counters {
  std::atomic<int> before{0}, handler{0}, after{0};
};

// One registry exercising every path; `counters` sees what ran.
Registry MakeRegistry(Counters& counters) {
  Registry r;
  r.bind("t.report").handler(SleepThenReport);
  r.bind("t.declared").deadline(Scaled(150ms)).handler(SleepThenReport);
  r.bind("t.long").deadline(60s).handler(SleepThenReport);
  r.bind("p.defaulted").handler(SleepThenReport);
  r.patch("ns:p").deadline(Scaled(200ms));
  r.bind("t.hooked")
      .deadline(Scaled(150ms))
      .before([&counters](const Call& call) -> asio::awaitable<void> {
        ++counters.before;
        if (call.args.as_object().contains("slow_before")) co_await test_support::Sleep(10s);
      })
      .handler([&counters](const Call& call) -> asio::awaitable<json::value> {
        ++counters.handler;
        if (call.args.as_object().contains("commit")) call.ctx.commit_ledger()->note_commit_point();
        co_return json::object{{"ok", true}};
      })
      .after([&counters](const Call& call, json::value&) -> asio::awaitable<void> {
        ++counters.after;
        if (call.args.as_object().contains("slow_after")) co_await test_support::Sleep(10s);
      });
  // Commits after `work_ms`, then works on for `after_ms` (both honouring the context).
  r.bind("t.commit")
      .deadline(60s)
      .handler([](const Call& call) -> asio::awaitable<json::value> {
        const auto& a = call.args.as_object();
        co_await test_support::Sleep(std::chrono::milliseconds(a.at("work_ms").to_number<std::int64_t>()));
        call.ctx.commit_ledger()->note_commit_point();
        co_await test_support::Sleep(std::chrono::milliseconds(a.at("after_ms").to_number<std::int64_t>()));
        co_return json::object{{"committed", true}};
      });
  r.bind("t.pending")
      .deadline(60s)
      .handler([](const Call& call) -> asio::awaitable<json::value> {
        call.ctx.commit_ledger()->note_after_commit_queued();  // never done
        co_await test_support::Sleep(10s);
        co_return nullptr;
      });
  // Dispatches args["inner"] with args["inner_args"], optionally with a caller budget.
  r.bind("t.outer")
      .deadline(Scaled(300ms))
      .handler([](const Call& call) -> asio::awaitable<json::value> {
        const auto& a = call.args.as_object();
        InvokeOptions o;
        if (const json::value* b = a.if_contains("inner_budget_ms")) o.budget = std::chrono::milliseconds(b->to_number<std::int64_t>());
        json::value inner = co_await call.invoke(a.at("inner").as_string(), a.at("inner_args"), o);
        co_return json::object{{"inner", inner},
                               {"ledger", reinterpret_cast<std::uintptr_t>(call.ctx.commit_ledger())}};
      })
      .after([](const Call& call, json::value&) -> asio::awaitable<void> {
        if (call.args.as_object().contains("slow_after")) co_await test_support::Sleep(10s);
      });
  r.bind("t.ledger").handler([](const Call& call) -> asio::awaitable<json::value> {
    co_return json::object{{"ledger", reinterpret_cast<std::uintptr_t>(call.ctx.commit_ledger())},
                           {"operation", call.ctx.operation()}};
  });
  // Takes idempotency keys: returns the one it got; commits and works on when asked to.
  r.bind("t.keyed")
      .takes_idempotency_key()
      .deadline(60s)
      .handler([&counters](const Call& call) -> asio::awaitable<json::value> {
        ++counters.handler;
        if (call.args.as_object().contains("commit")) {
          call.ctx.commit_ledger()->note_commit_point(call.idempotency_key.has_value());
          co_await test_support::Sleep(10s);
        }
        co_return json::object{{"key", call.idempotency_key ? json::value(*call.idempotency_key) : json::value()}};
      });
  r.bind("t.invalid").handler([](const Call& call) -> asio::awaitable<json::value> {
    throw Error(ErrorCode::invalid_argument, "bad args", call.ctx.request_id());
    co_return nullptr;
  });
  r.freeze();
  return r;
}

class InvokerTest : public ::testing::Test {
 protected:
  Counters counters_;
  Registry registry_ = MakeRegistry(counters_);
  Invoker invoker_{registry_};
};

TEST_F(InvokerTest, ReturnsTheHandlersResult) {
  Outcome o = Invoke(invoker_, Context(), "t.hooked");
  ASSERT_TRUE(o.result);
  EXPECT_EQ(json::serialize(*o.result), R"({"ok":true})");
  EXPECT_EQ(counters_.before, 1);
  EXPECT_EQ(counters_.handler, 1);
  EXPECT_EQ(counters_.after, 1);
}

TEST_F(InvokerTest, UnknownOperationIsNotFound) {
  Outcome o = Invoke(invoker_, Context().with_request_id("r-1"), "t.nope");
  ASSERT_TRUE(o.error);
  EXPECT_EQ(o.code(), ErrorCode::not_found);
  EXPECT_EQ(o.error->request_id(), "r-1");
}

TEST_F(InvokerTest, HandlerErrorsPassThrough) {
  EXPECT_EQ(Invoke(invoker_, Context(), "t.invalid").code(), ErrorCode::invalid_argument);
}

TEST_F(InvokerTest, UnfrozenRegistryCannotBeInvoked) {
  Registry r;
  EXPECT_THROW(Invoker{r}, ConfigError);
}

TEST_F(InvokerTest, BudgetIsTheMinimumOfCallerContextAndPlan) {
  // No deadline anywhere: unbound.
  EXPECT_GT(ReportedMs(Invoke(invoker_, Context(), "t.report")), 1'000'000'000);
  // The plan's declared deadline.
  EXPECT_LE(ReportedMs(Invoke(invoker_, Context(), "t.declared")), Scaled(150ms) / 1ms);
  // The caller's budget tightens the plan...
  EXPECT_LE(ReportedMs(Invoke(invoker_, Context(), "t.long", json::object(), {.budget = Scaled(100ms)})),
            Scaled(100ms) / 1ms);
  // ...and never extends it.
  EXPECT_LE(ReportedMs(Invoke(invoker_, Context(), "t.declared", json::object(), {.budget = 60s})),
            Scaled(150ms) / 1ms);
  // The context's deadline tightens both, and neither extends it.
  const Context tight = Context().with_timeout(Scaled(80ms));
  EXPECT_LE(ReportedMs(Invoke(invoker_, tight, "t.long", json::object(), {.budget = 60s})), Scaled(80ms) / 1ms);
  // A patch default applies when the plan declares nothing.
  EXPECT_LE(ReportedMs(Invoke(invoker_, Context(), "p.defaulted")), Scaled(200ms) / 1ms);
  EXPECT_GT(ReportedMs(Invoke(invoker_, Context(), "p.defaulted")), 0);
}

TEST_F(InvokerTest, DeadlineStopsTheHandler) {
  Outcome o = Invoke(invoker_, Context(), "t.declared", json::object{{"ms", 10'000}});
  ASSERT_TRUE(o.error);
  EXPECT_EQ(o.code(), ErrorCode::deadline_exceeded);
  EXPECT_FALSE(o.error->retryable());
  EXPECT_GE(o.took, Scaled(150ms) - 5ms);
  EXPECT_LT(o.took, Scaled(1500ms));
  o = Invoke(invoker_, Context(), "t.long", json::object{{"ms", 10'000}}, {.budget = Scaled(60ms)});
  EXPECT_EQ(o.code(), ErrorCode::deadline_exceeded);
  EXPECT_LT(o.took, Scaled(1500ms));
}

TEST_F(InvokerTest, SpentBudgetFailsFastWithoutRunningHooksOrHandler) {
  const Context expired = Context().with_deadline(Deadline::after(-1ms));
  Outcome o = Invoke(invoker_, expired, "t.hooked");
  EXPECT_EQ(o.code(), ErrorCode::deadline_exceeded);
  o = Invoke(invoker_, Context(), "t.hooked", json::object(), {.budget = 0ms});
  EXPECT_EQ(o.code(), ErrorCode::deadline_exceeded);
  o = Invoke(invoker_, Context(), "t.hooked", json::object(), {.budget = -5ms});
  EXPECT_EQ(o.code(), ErrorCode::deadline_exceeded);
  auto [cancellable, source] = Context().with_cancel();
  source.request_stop(StopReason::cancelled);
  o = Invoke(invoker_, cancellable, "t.hooked");
  EXPECT_EQ(o.code(), ErrorCode::cancelled);
  EXPECT_EQ(counters_.before, 0);
  EXPECT_EQ(counters_.handler, 0);
  EXPECT_EQ(counters_.after, 0);
}

TEST_F(InvokerTest, DeadlinePassedBeforeItsTimerFiredStillFailsFast) {
  ManualClock clock;
  DeadlineTimerService timers(clock, DeadlineTimerService::Mode::kManual);
  const Context ctx = Context::background(timers).with_timeout(100ms);
  clock.advance(200ms);  // passed, but fire_due() was not called: the flag is not set yet
  ASSERT_FALSE(ctx.stop_requested());
  EXPECT_EQ(Invoke(invoker_, ctx, "t.hooked").code(), ErrorCode::deadline_exceeded);
  EXPECT_EQ(counters_.before, 0);
  EXPECT_EQ(counters_.handler, 0);
}

TEST_F(InvokerTest, TheWholePlanIsBounded) {
  // A slow before hook uses up the budget: the handler never starts.
  Outcome o = Invoke(invoker_, Context(), "t.hooked", json::object{{"slow_before", true}});
  EXPECT_EQ(o.code(), ErrorCode::deadline_exceeded);
  EXPECT_LT(o.took, Scaled(1500ms));
  EXPECT_EQ(counters_.before, 1);
  EXPECT_EQ(counters_.handler, 0);
  EXPECT_EQ(counters_.after, 0);
  // A slow after hook is stopped too.
  o = Invoke(invoker_, Context(), "t.hooked", json::object{{"slow_after", true}});
  EXPECT_EQ(o.code(), ErrorCode::deadline_exceeded);
  EXPECT_LT(o.took, Scaled(1500ms));
  EXPECT_EQ(counters_.handler, 1);
  EXPECT_EQ(counters_.after, 1);
}

TEST_F(InvokerTest, NestedInvocationInheritsAndOnlyTightens) {
  // The inner operation declares 60 s but runs inside the outer's 300 ms.
  Outcome o = Invoke(invoker_, Context(), "t.outer", json::object{{"inner", "t.long"}, {"inner_args", json::object()}});
  ASSERT_TRUE(o.result) << o.error->what();
  EXPECT_LE(o.result->at("inner").at("remaining_ms").to_number<std::int64_t>(), Scaled(300ms) / 1ms);
  // A tighter inner deadline applies...
  o = Invoke(invoker_, Context(), "t.outer", json::object{{"inner", "t.declared"}, {"inner_args", json::object()}});
  ASSERT_TRUE(o.result);
  EXPECT_LE(o.result->at("inner").at("remaining_ms").to_number<std::int64_t>(), Scaled(150ms) / 1ms);
  // ...and a larger caller budget on the nested call does not extend the outer's.
  o = Invoke(invoker_, Context(), "t.outer",
          json::object{{"inner", "t.report"}, {"inner_args", json::object()}, {"inner_budget_ms", 60'000}});
  ASSERT_TRUE(o.result);
  EXPECT_LE(o.result->at("inner").at("remaining_ms").to_number<std::int64_t>(), Scaled(300ms) / 1ms);
  // The nested call shares the outer's ledger and names its own operation.
  o = Invoke(invoker_, Context(), "t.outer", json::object{{"inner", "t.ledger"}, {"inner_args", json::object()}});
  ASSERT_TRUE(o.result);
  EXPECT_EQ(o.result->at("inner").at("ledger"), o.result->at("ledger"));
  EXPECT_EQ(o.result->at("inner").at("operation"), "t.ledger");
}

TEST_F(InvokerTest, NestedWorkIsStoppedByTheOutersDeadline) {
  Outcome o = Invoke(invoker_, Context(), "t.outer",
                  json::object{{"inner", "t.long"}, {"inner_args", json::object{{"ms", 10'000}}}});
  EXPECT_EQ(o.code(), ErrorCode::deadline_exceeded);
  EXPECT_GE(o.took, Scaled(300ms) - 5ms);
  EXPECT_LT(o.took, Scaled(1500ms));
}

TEST_F(InvokerTest, EachTopLevelInvocationGetsALedgerAndAnExistingOneIsUsed) {
  Outcome a = Invoke(invoker_, Context(), "t.ledger");
  ASSERT_TRUE(a.result);
  EXPECT_NE(a.result->at("ledger").to_number<std::uintptr_t>(), 0u);
  auto ledger = std::make_shared<CommitLedger>();
  Outcome b = Invoke(invoker_, Context().with_commit_ledger(ledger), "t.ledger");
  ASSERT_TRUE(b.result);
  EXPECT_EQ(b.result->at("ledger").to_number<std::uintptr_t>(), reinterpret_cast<std::uintptr_t>(ledger.get()));
}

TEST_F(InvokerTest, DeadlineBeforeTheCommitIsDeadlineExceeded) {
  Outcome o = Invoke(invoker_, Context(), "t.commit", json::object{{"work_ms", 10'000}, {"after_ms", 0}},
                  {.budget = Scaled(100ms)});
  EXPECT_EQ(o.code(), ErrorCode::deadline_exceeded);
}

TEST_F(InvokerTest, DeadlineAfterTheCommitIsCommitAmbiguous) {
  const auto work = Scaled(20ms) / 1ms;
  Outcome o = Invoke(invoker_, Context().with_request_id("r-9"), "t.commit",
                  json::object{{"work_ms", work}, {"after_ms", 10'000}}, {.budget = Scaled(200ms)});
  ASSERT_TRUE(o.error);
  EXPECT_EQ(o.code(), ErrorCode::commit_ambiguous);
  EXPECT_FALSE(o.error->retryable());
  EXPECT_EQ(o.error->request_id(), "r-9");
  EXPECT_NE(o.error->message().find("deadline_exceeded"), std::string::npos);
  EXPECT_NE(o.error->message().find("t.commit"), std::string::npos);
  EXPECT_LT(o.took, Scaled(1500ms));
}

TEST_F(InvokerTest, AnIdempotencyKeyReachesOnlyAnOperationThatTakesOne) {
  InvokeOptions keyed;
  keyed.idempotency_key = "order-17";
  Outcome o = Invoke(invoker_, Context(), "t.keyed", json::object(), keyed);
  ASSERT_TRUE(o.result) << (o.error ? o.error->what() : "");
  EXPECT_EQ(json::serialize(*o.result), R"({"key":"order-17"})");
  o = Invoke(invoker_, Context(), "t.keyed");
  EXPECT_EQ(json::serialize(*o.result), R"({"key":null})");
  // A key nobody honours is refused before anything runs: the caller would believe its
  // retries safe.
  const int before = counters_.handler;
  o = Invoke(invoker_, Context(), "t.hooked", json::object(), keyed);
  EXPECT_EQ(o.code(), ErrorCode::invalid_argument);
  EXPECT_NE(o.error->message().find("does not take an idempotency key"), std::string::npos) << o.error->message();
  EXPECT_EQ(counters_.handler.load(), before);
}

TEST_F(InvokerTest, AKeyedInvocationStoppedAfterItsCommitSaysRetryingWithTheKeyIsSafe) {
  InvokeOptions keyed;
  keyed.idempotency_key = "order-18";
  keyed.budget = Scaled(100ms);
  Outcome o = Invoke(invoker_, Context(), "t.keyed", json::object{{"commit", true}}, keyed);
  EXPECT_EQ(o.code(), ErrorCode::commit_ambiguous);
  EXPECT_NE(o.error->message().find("retry with the same Idempotency-Key"), std::string::npos) << o.error->message();
  // Unkeyed, the same stop says to reconcile.
  o = Invoke(invoker_, Context(), "t.commit", json::object{{"work_ms", 1}, {"after_ms", 10'000}},
             {.budget = Scaled(100ms)});
  EXPECT_EQ(o.code(), ErrorCode::commit_ambiguous);
  EXPECT_NE(o.error->message().find("reconcile"), std::string::npos) << o.error->message();
}

// A later step that times out or is refused after a commit point is no safe failure either.
TEST_F(InvokerTest, AnInfrastructureFailureAfterACommitIsCommitAmbiguous) {
  Registry r;
  r.bind("t.late_refusal").handler([](const Call& call) -> asio::awaitable<json::value> {
    call.ctx.commit_ledger()->note_commit_point();
    throw Error(ErrorCode::unavailable, "the notification service is down", call.ctx.request_id());
    co_return nullptr;
  });
  r.bind("t.early_refusal").handler([](const Call& call) -> asio::awaitable<json::value> {
    throw Error(ErrorCode::unavailable, "the database is down", call.ctx.request_id());
    co_return nullptr;
  });
  r.freeze();
  const Invoker invoker(r);
  EXPECT_EQ(Invoke(invoker, Context(), "t.late_refusal").code(), ErrorCode::commit_ambiguous);
  EXPECT_EQ(Invoke(invoker, Context(), "t.early_refusal").code(), ErrorCode::unavailable);
}

TEST_F(InvokerTest, CommitWithinTheBudgetSucceeds) {
  Outcome o = Invoke(invoker_, Context(), "t.commit", json::object{{"work_ms", 1}, {"after_ms", 1}},
                  {.budget = Scaled(2000ms)});
  ASSERT_TRUE(o.result);
  EXPECT_EQ(json::serialize(*o.result), R"({"committed":true})");
}

TEST_F(InvokerTest, CancelOrShutdownAfterTheCommitIsCommitAmbiguous) {
  for (StopReason reason : {StopReason::cancelled, StopReason::shutdown}) {
    auto [ctx, source] = Context().with_cancel();
    std::thread stopper([source = source, reason] {
      std::this_thread::sleep_for(Scaled(150ms));
      source.request_stop(reason);
    });
    Outcome o = Invoke(invoker_, ctx, "t.commit", json::object{{"work_ms", Scaled(10ms) / 1ms}, {"after_ms", 10'000}});
    stopper.join();
    ASSERT_TRUE(o.error);
    EXPECT_EQ(o.code(), ErrorCode::commit_ambiguous) << to_string(reason);
    EXPECT_NE(o.error->message().find(to_string(error_code_for(reason))), std::string::npos);
  }
  // Before the commit, the stop keeps its own code.
  auto [ctx, source] = Context().with_cancel();
  std::thread stopper([source = source] {
    std::this_thread::sleep_for(Scaled(50ms));
    source.request_stop(StopReason::cancelled);
  });
  Outcome o = Invoke(invoker_, ctx, "t.commit", json::object{{"work_ms", 10'000}, {"after_ms", 0}});
  stopper.join();
  EXPECT_EQ(o.code(), ErrorCode::cancelled);
}

TEST_F(InvokerTest, StopInAnAfterHookAfterACommitIsCommitAmbiguous) {
  Outcome o = Invoke(invoker_, Context(), "t.hooked", json::object{{"commit", true}, {"slow_after", true}});
  EXPECT_EQ(o.code(), ErrorCode::commit_ambiguous);
  EXPECT_EQ(counters_.after, 1);
}

TEST_F(InvokerTest, InnerCommitMakesTheOutersLateStopAmbiguous) {
  // The nested operation commits and returns; the outer's after hook is then stopped.
  Outcome o = Invoke(invoker_, Context(), "t.outer",
                  json::object{{"inner", "t.hooked"}, {"inner_args", json::object{{"commit", true}}},
                               {"slow_after", true}});
  EXPECT_EQ(o.code(), ErrorCode::commit_ambiguous);
  // The same stop without the inner commit is a plain deadline.
  o = Invoke(invoker_, Context(), "t.outer",
          json::object{{"inner", "t.hooked"}, {"inner_args", json::object()}, {"slow_after", true}});
  EXPECT_EQ(o.code(), ErrorCode::deadline_exceeded);
}

TEST_F(InvokerTest, PendingAfterCommitWorkCountsAsWritten) {
  Outcome o = Invoke(invoker_, Context(), "t.pending", json::object(), {.budget = Scaled(50ms)});
  EXPECT_EQ(o.code(), ErrorCode::commit_ambiguous);
}

TEST_F(InvokerTest, LedgersAreNotSharedBetweenTopLevelInvocations) {
  const auto work = Scaled(20ms) / 1ms;
  EXPECT_EQ(Invoke(invoker_, Context(), "t.commit", json::object{{"work_ms", work}, {"after_ms", 10'000}},
                {.budget = Scaled(150ms)})
                .code(),
            ErrorCode::commit_ambiguous);
  EXPECT_EQ(Invoke(invoker_, Context(), "t.commit", json::object{{"work_ms", 10'000}, {"after_ms", 0}},
                {.budget = Scaled(50ms)})
                .code(),
            ErrorCode::deadline_exceeded);
}

TEST(InvokerHooks, RunInOnionOrder) {
  std::vector<std::string> order;
  auto before = [&order](std::string label) {
    return [&order, label](const Call&) -> asio::awaitable<void> {
      order.push_back("before " + label);
      co_return;
    };
  };
  auto after = [&order](std::string label) {
    return [&order, label](const Call&, json::value& result) -> asio::awaitable<void> {
      order.push_back("after " + label);
      result.as_object()["seen_by"].emplace_string() = label;
      co_return;
    };
  };
  Registry r;
  r.bind("a.b")
      .before(before("own"))
      .after(after("own"))
      .handler([&order](const Call&) -> asio::awaitable<json::value> {
        order.push_back("handler");
        co_return json::object();
      });
  r.patch("a.b").before(before("exact")).after(after("exact"));
  r.patch("ns:a").before(before("ns-1")).after(after("ns-1"));
  r.patch("a.*").before(before("glob")).after(after("glob"));
  r.patch("ns:a").before(before("ns-2")).after(after("ns-2"));
  r.freeze();
  Invoker invoker(r);
  Outcome o = Invoke(invoker, Context(), "a.b");
  ASSERT_TRUE(o.result);
  EXPECT_EQ(o.result->at("seen_by"), "ns-1");  // the outermost after hook ran last
  const std::vector<std::string> want = {"before ns-1", "before ns-2", "before glob", "before exact",
                                         "before own",  "handler",     "after own",   "after exact",
                                         "after glob",  "after ns-2",  "after ns-1"};
  EXPECT_EQ(order, want);
}

// With InvokerOptions::admission: an invocation whose budget is below the operation's recent
// service time fails with deadline_exceeded at once, before any hook or handler runs.
TEST(InvokerAdmission, RefusesDoomedWorkBeforeItsHooksAndHandler) {
  const Duration work = Scaled(60ms);
  std::atomic<int> before{0}, runs{0};
  Registry r;
  r.bind("t.work")
      .before([&before](const Call&) -> asio::awaitable<void> {
        ++before;
        co_return;
      })
      .handler([&runs, work](const Call&) -> asio::awaitable<json::value> {
        ++runs;
        co_await test_support::Sleep(work);
        co_return json::object();
      });
  r.bind("t.outer").handler([](const Call& call) -> asio::awaitable<json::value> {
    co_return co_await call.invoke("t.work", json::object());
  });
  r.freeze();
  resilience::ServiceTimeAdmission admission({.quantile = 0.5, .min_samples = 3, .probe_interval = Duration::zero()});
  Invoker invoker(r, {.admission = &admission});

  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Invoke(invoker, Context(), "t.work").result);
  ASSERT_TRUE(admission.estimate("t.work"));
  EXPECT_GE(*admission.estimate("t.work"), work);

  Outcome refused =
      Invoke(invoker, Context().with_request_id("r-1"), "t.work", json::object(), {.budget = Scaled(10ms)});
  ASSERT_TRUE(refused.error);
  EXPECT_EQ(refused.code(), ErrorCode::deadline_exceeded);
  EXPECT_EQ(refused.error->request_id(), "r-1");
  EXPECT_EQ(refused.error->message().rfind("refused before starting: t.work needs ~", 0), 0u)
      << refused.error->message();
  EXPECT_EQ(before.load(), 3);
  EXPECT_EQ(runs.load(), 3);
  EXPECT_LT(refused.took, work / 2) << "at once, not at the deadline";

  // A nested invocation is judged by its own operation's service time and budget.
  Outcome nested = Invoke(invoker, Context(), "t.outer", json::object(), {.budget = Scaled(10ms)});
  EXPECT_EQ(nested.code(), ErrorCode::deadline_exceeded);
  EXPECT_EQ(runs.load(), 3);

  // Enough budget runs; so does an unbound call.
  EXPECT_TRUE(Invoke(invoker, Context(), "t.work", json::object(), {.budget = 5s}).result);
  EXPECT_TRUE(Invoke(invoker, Context(), "t.work").result);
  EXPECT_EQ(runs.load(), 5);
  EXPECT_EQ(admission.stats().refused, 2u);

  // Off by default: the same call runs, and is cut at its deadline.
  Invoker plain(r);
  Outcome cut = Invoke(plain, Context(), "t.work", json::object(), {.budget = Scaled(10ms)});
  EXPECT_EQ(cut.code(), ErrorCode::deadline_exceeded);
  EXPECT_EQ(runs.load(), 6);
}

}  // namespace
}  // namespace cutoff::ops
