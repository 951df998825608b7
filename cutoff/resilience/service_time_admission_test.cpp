#include "cutoff/resilience/service_time_admission.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cutoff/core/deadline_timer_service.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/observe/metrics.hpp"
#include "tests/support/run_sync.hpp"

namespace cutoff::resilience {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;

class ServiceTimeAdmissionTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  // Deadlines measured on the same manual clock; nothing fires on its own.
  DeadlineTimerService timers_{clock_, DeadlineTimerService::Mode::kManual};

  Context WithBudget(Duration budget) const {
    return Context::background(const_cast<DeadlineTimerService&>(timers_)).with_timeout(budget);
  }

  // `n` completed runs of `took` each.
  void Complete(ServiceTimeAdmission& a, std::string_view name, Duration took, int n) {
    for (int i = 0; i < n; ++i) {
      auto ticket = a.admit(Context(), name);
      clock_.advance(took);
      ticket.completed();
    }
  }

  // Whether a request with `budget` left is admitted; refusals must be deadline_exceeded.
  static std::optional<ServiceTimeAdmission::Ticket> Try(ServiceTimeAdmission& a, const Context& ctx,
                                                         std::string_view name, std::string* message = nullptr) {
    try {
      return a.admit(ctx, name);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::deadline_exceeded);
      if (message) *message = e.message();
      return std::nullopt;
    }
  }
  bool Admitted(ServiceTimeAdmission& a, Duration budget, std::string_view name = "GetStock") {
    return Try(a, WithBudget(budget), name).has_value();
  }
};

TEST_F(ServiceTimeAdmissionTest, RefusesNothingUntilItHasMinSamples) {
  ServiceTimeAdmission a({.quantile = 0.5, .min_samples = 5, .probe_interval = 0s, .clock = &clock_});
  Complete(a, "GetStock", 100ms, 4);
  EXPECT_FALSE(a.estimate("GetStock"));
  EXPECT_EQ(a.recent_samples("GetStock"), 4u);
  EXPECT_TRUE(Admitted(a, 1ms)) << "four samples are not an estimate";
  Complete(a, "GetStock", 100ms, 1);
  EXPECT_EQ(a.estimate("GetStock"), 100ms);
  EXPECT_FALSE(Admitted(a, 1ms));
  EXPECT_EQ(a.stats().refused, 1u);
}

TEST_F(ServiceTimeAdmissionTest, ComparesTheRemainingBudgetWithTheQuantile) {
  ServiceTimeAdmission a({.quantile = 0.5, .min_samples = 10, .probe_interval = 0s, .clock = &clock_});
  for (int i = 1; i <= 10; ++i) Complete(a, "GetStock", i * 10ms, 1);  // 10 .. 100 ms
  EXPECT_EQ(a.estimate("GetStock"), 50ms) << "nearest rank: the 5th of 10";
  EXPECT_TRUE(Admitted(a, 50ms)) << "exactly enough is enough";
  std::string message;
  const Context ctx = WithBudget(49ms).with_request_id("req-7");
  try {
    a.admit(ctx, "GetStock");
    FAIL() << "admitted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::deadline_exceeded);
    EXPECT_FALSE(e.retryable());
    EXPECT_EQ(e.request_id(), "req-7");
    EXPECT_EQ(e.message(), "refused before starting: GetStock needs ~50.0 ms (p50 of the last 10 runs), 49.0 ms left");
  }
  // Keys are independent.
  EXPECT_TRUE(Admitted(a, 1ms, "Other"));
  // The same judgement from a budget not yet bound to a context.
  EXPECT_NO_THROW(a.admit(50ms, a.key("GetStock")));
  EXPECT_NO_THROW(a.admit(Duration::max(), a.key("GetStock"))) << "unbound";
  try {
    a.admit(-5ms, a.key("GetStock"), "req-8");
    FAIL() << "admitted";
  } catch (const Error& e) {
    EXPECT_EQ(e.request_id(), "req-8");
    EXPECT_NE(e.message().find(", 0.00 ms left"), std::string::npos) << e.message();
  }
}

TEST_F(ServiceTimeAdmissionTest, TheDefaultQuantileIsP10AndFactorScalesIt) {
  ServiceTimeAdmission p10({.probe_interval = 0s, .clock = &clock_});
  for (int i = 1; i <= 20; ++i) Complete(p10, "q", i * 10ms, 1);  // 10 .. 200 ms
  EXPECT_EQ(p10.estimate("q"), 20ms) << "the 2nd of 20";
  EXPECT_TRUE(Admitted(p10, 20ms, "q"));
  EXPECT_FALSE(Admitted(p10, 19ms, "q"));

  ServiceTimeAdmission twice({.quantile = 0.9, .factor = 2, .min_samples = 10, .probe_interval = 0s, .clock = &clock_});
  Complete(twice, "q", 100ms, 10);
  EXPECT_EQ(twice.estimate("q"), 100ms) << "the estimate is before the factor";
  EXPECT_TRUE(Admitted(twice, 200ms, "q"));
  std::string message;
  EXPECT_FALSE(Try(twice, WithBudget(150ms), "q", &message));
  EXPECT_EQ(message, "refused before starting: q needs ~200 ms (2 x p90 of the last 10 runs), 150 ms left");
}

TEST_F(ServiceTimeAdmissionTest, UnboundContextsAreNeverRefusedAndStillTimed) {
  ServiceTimeAdmission a({.min_samples = 1, .probe_interval = 0s, .clock = &clock_});
  Complete(a, "k", 10s, 1);
  ASSERT_FALSE(Admitted(a, 1s, "k"));
  EXPECT_TRUE(Try(a, Context(), "k"));
  auto [cancellable, source] = Context().with_cancel();  // bound, but no deadline
  EXPECT_TRUE(Try(a, cancellable, "k"));
  EXPECT_EQ(a.stats().refused, 1u);
  // Their runs are samples like any other.
  Complete(a, "k", 1ms, 5);
  EXPECT_EQ(a.recent_samples("k"), 6u);
}

TEST_F(ServiceTimeAdmissionTest, AStoppedContextFailsWithItsOwnStop) {
  ServiceTimeAdmission a({.clock = &clock_});
  auto [ctx, source] = Context().with_cancel();
  source.request_stop(StopReason::cancelled);
  try {
    a.admit(ctx, "k");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::cancelled);
  }
}

TEST_F(ServiceTimeAdmissionTest, SamplesExpireSoAStaleEstimateEnds) {
  ServiceTimeAdmission a({.min_samples = 5, .max_age = 10s, .probe_interval = 0s, .clock = &clock_});
  Complete(a, "k", 1s, 10);  // the last one ended now, the first 9 s ago
  EXPECT_FALSE(Admitted(a, 500ms, "k"));
  // Everything is refused, so nothing new arrives; the samples age out one by one.
  clock_.advance(5s);
  EXPECT_EQ(a.recent_samples("k"), 5u);
  EXPECT_FALSE(Admitted(a, 500ms, "k"));
  clock_.advance(1s);
  EXPECT_EQ(a.recent_samples("k"), 4u);
  EXPECT_FALSE(a.estimate("k"));
  EXPECT_TRUE(Admitted(a, 500ms, "k")) << "fewer than min_samples recent samples: no refusal";
  clock_.advance(10s);
  EXPECT_EQ(a.recent_samples("k"), 0u);
}

TEST_F(ServiceTimeAdmissionTest, AProbeRunsOncePerIntervalAndBringsARecoveredServiceBack) {
  ServiceTimeAdmission a({.min_samples = 20, .max_age = 60s, .probe_interval = 100ms, .clock = &clock_});
  Complete(a, "k", 1s, 20);  // a slow spell: p10 is 1 s
  // The service has recovered (10 ms), but budgets of 200 ms look doomed. One request per
  // interval runs as a probe; the rest are refused.
  int probes = 0, refused = 0, normal = 0;
  for (int round = 0; round < 50 && normal == 0; ++round) {
    for (int i = 0; i < 5; ++i) {
      auto ticket = Try(a, WithBudget(200ms), "k");
      if (!ticket) {
        ++refused;
        continue;
      }
      (ticket->probe() ? probes : normal) += 1;
      clock_.advance(10ms);
      ticket->completed();
    }
    clock_.advance(100ms);
  }
  // p10 of 20 slow samples and k fast ones is fast once k >= 10% of 20 + k: k = 3. The third
  // round's probe brings the estimate down, and the rest of that round is admitted as usual,
  // 50 s before expiry would have ended the slow spell's estimate.
  EXPECT_EQ(probes, 3);
  EXPECT_EQ(normal, 4);
  EXPECT_EQ(refused, 8);
  EXPECT_EQ(a.stats().probes, 3u);
  EXPECT_EQ(a.estimate("k"), 10ms);
}

TEST_F(ServiceTimeAdmissionTest, AProbeIsNotTakenBeforeItsInterval) {
  ServiceTimeAdmission a({.min_samples = 1, .probe_interval = 1s, .clock = &clock_});
  Complete(a, "k", 1s, 1);
  auto first = Try(a, WithBudget(1ms), "k");
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->probe());
  EXPECT_FALSE(Admitted(a, 1ms, "k"));
  clock_.advance(999ms);
  EXPECT_FALSE(Admitted(a, 1ms, "k"));
  clock_.advance(1ms);
  auto second = Try(a, WithBudget(1ms), "k");
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->probe());
  EXPECT_FALSE(Admitted(a, 1ms, "k"));
  // A request with enough budget is no probe.
  auto fine = Try(a, WithBudget(2s), "k");
  ASSERT_TRUE(fine);
  EXPECT_FALSE(fine->probe());
}

TEST_F(ServiceTimeAdmissionTest, StoppedRunsAreCensoredSamples) {
  ServiceTimeAdmission a({.quantile = 0.5, .min_samples = 4, .probe_interval = 0s, .clock = &clock_});
  // With nothing held, a stopped run's time is the best evidence there is.
  auto t = a.admit(Context(), "k");
  clock_.advance(30ms);
  t.stopped();
  EXPECT_EQ(a.recent_samples("k"), 1u);
  Complete(a, "k", 100ms, 3);
  EXPECT_EQ(a.estimate("k"), 100ms);
  // Cut at 20 ms (a client with a short budget): it needed at least 20 ms, which says nothing
  // against 100 ms. Dropped, so short budgets cannot drag the estimate down.
  for (int i = 0; i < 10; ++i) a.record_stopped(a.key("k"), 20ms);
  EXPECT_EQ(a.recent_samples("k"), 4u);
  EXPECT_EQ(a.stats().censored_dropped, 10u);
  // Cut at 400 ms: it needed at least 400 ms, more than the estimate. While fewer than
  // min_samples runs completed, kept: it raises it.
  for (int i = 0; i < 3; ++i) a.record_stopped(a.key("k"), 400ms);
  EXPECT_EQ(a.recent_samples("k"), 7u);
  EXPECT_EQ(a.estimate("k"), 100ms);
  for (int i = 0; i < 2; ++i) a.record_stopped(a.key("k"), 400ms);
  EXPECT_EQ(a.estimate("k"), 400ms) << "5 of 9 runs needed at least 400 ms";
  EXPECT_EQ(a.stats().censored_kept, 6u);
  EXPECT_EQ(a.stats().samples, 3u);
}

TEST_F(ServiceTimeAdmissionTest, OnceRunsCompleteStoppedOnesNoLongerRaiseTheEstimate) {
  ServiceTimeAdmission a({.quantile = 0.1, .min_samples = 4, .probe_interval = 0s, .clock = &clock_});
  Complete(a, "k", 20ms, 4);
  EXPECT_EQ(a.estimate("k"), 20ms);
  // Overload: callers cut at their deadline after waiting 70 ms for a connection. Their times
  // are the queue's, not the work's; were they kept, the p10 would climb to 70 ms and every
  // caller with less than that would be refused, although the work takes 20 ms.
  for (int i = 0; i < 100; ++i) a.record_stopped(a.key("k"), 70ms);
  EXPECT_EQ(a.estimate("k"), 20ms);
  EXPECT_EQ(a.stats().censored_dropped, 100u);
  EXPECT_TRUE(Admitted(a, 30ms, "k"));
}

TEST_F(ServiceTimeAdmissionTest, FailuresRecordNothing) {
  ServiceTimeAdmission a({.clock = &clock_});
  {
    auto ticket = a.admit(Context(), "k");
    clock_.advance(5ms);
  }  // dropped untold: a failure
  EXPECT_EQ(a.recent_samples("k"), 0u);
  EXPECT_EQ(a.stats().samples, 0u);
}

TEST_F(ServiceTimeAdmissionTest, KeysAndSamplesAreBounded) {
  ServiceTimeAdmission a(
      {.quantile = 0.9, .min_samples = 1, .max_samples = 8, .probe_interval = 0s, .max_keys = 2, .clock = &clock_});
  EXPECT_NE(a.key("a"), nullptr);
  EXPECT_NE(a.key("b"), nullptr);
  EXPECT_EQ(a.key("a"), a.key("a"));
  EXPECT_EQ(a.key("c"), nullptr);
  EXPECT_EQ(a.stats().keys, 2u);
  EXPECT_EQ(a.stats().untracked, 1u);
  // An untracked name is never refused and learns nothing.
  for (int i = 0; i < 3; ++i) a.record(a.key("c"), 10s);
  EXPECT_TRUE(Admitted(a, 1ms, "c"));
  EXPECT_EQ(a.stats().keys, 2u);

  for (int i = 0; i < 100; ++i) a.record(a.key("a"), 1s);
  EXPECT_EQ(a.recent_samples("a"), 8u);
  for (int i = 0; i < 8; ++i) a.record(a.key("a"), 10ms);
  EXPECT_EQ(a.estimate("a"), 10ms) << "the newest 8 replaced the older ones";
}

TEST_F(ServiceTimeAdmissionTest, DryRunCountsButRefusesNothing) {
  observe::Registry registry;
  ResilienceMetrics metrics(registry);
  ServiceTimeAdmission a({.min_samples = 1, .dry_run = true, .clock = &clock_, .metrics = &metrics});
  Complete(a, "k", 1s, 1);
  EXPECT_TRUE(Admitted(a, 1ms, "k"));
  EXPECT_TRUE(Admitted(a, 1ms, "k"));
  EXPECT_EQ(a.stats().dry_run, 2u);
  EXPECT_EQ(a.stats().refused, 0u);
  EXPECT_EQ(a.stats().probes, 0u);
  EXPECT_EQ(metrics.doomed_admitted.with({"k", "dry_run"}).value(), 2);
}

TEST_F(ServiceTimeAdmissionTest, CountsRefusalsAndShowsTheEstimate) {
  observe::Registry registry;
  ResilienceMetrics metrics(registry);
  ServiceTimeAdmission a({.min_samples = 2, .probe_interval = 1s, .clock = &clock_, .metrics = &metrics});
  Complete(a, "GetStock", 250ms, 1);
  EXPECT_EQ(metrics.service_time_estimate.with({"GetStock"}).value(), 0) << "no estimate yet";
  Complete(a, "GetStock", 250ms, 1);
  EXPECT_EQ(metrics.service_time_estimate.with({"GetStock"}).value(), 0.25);
  for (int i = 0; i < 4; ++i) Admitted(a, 100ms, "GetStock");
  EXPECT_EQ(metrics.doomed_admitted.with({"GetStock", "probe"}).value(), 1);
  EXPECT_EQ(metrics.doomed_refused.with({"GetStock"}).value(), 3);
  const std::string text = registry.expose();
  EXPECT_NE(text.find("cutoff_resilience_doomed_refused_total{name=\"GetStock\"} 3"), std::string::npos) << text;
  EXPECT_NE(text.find("cutoff_resilience_service_time_estimate_seconds{name=\"GetStock\"} 0.25"), std::string::npos)
      << text;
}

TEST_F(ServiceTimeAdmissionTest, RunRecordsCompletionsAndStopsButNotFailures) {
  // Two samples to estimate from: with one completed run, a stopped run is still evidence.
  ServiceTimeAdmission a({.quantile = 0.5, .min_samples = 2, .probe_interval = 0s, .clock = &clock_});
  const int v = RunSync([&]() -> asio::awaitable<int> {
    co_return co_await a.run(Context(), "k", [&](const Context&) -> asio::awaitable<int> {
      clock_.advance(40ms);
      co_return 7;
    });
  });
  EXPECT_EQ(v, 7);
  EXPECT_EQ(a.recent_samples("k"), 1u);

  EXPECT_THROW(RunSync([&]() -> asio::awaitable<void> {
                 co_await a.run(Context(), "k", [&](const Context&) -> asio::awaitable<void> {
                   clock_.advance(1s);
                   throw Error(ErrorCode::unavailable, "down");
                   co_return;
                 });
               }),
               Error);
  EXPECT_EQ(a.recent_samples("k"), 1u) << "a failure is no sample";

  auto [ctx, source] = Context().with_cancel();
  EXPECT_THROW(RunSync([&, c = ctx, s = source]() -> asio::awaitable<void> {
                 co_await a.run(c, "k", [&](const Context&) -> asio::awaitable<void> {
                   clock_.advance(90ms);
                   s.request_stop(StopReason::cancelled);
                   throw Error::stopped(StopReason::cancelled);
                   co_return;
                 });
               }),
               Error);
  EXPECT_EQ(a.recent_samples("k"), 2u) << "stopped at 90 ms, above the estimate: kept";
  EXPECT_EQ(a.stats().censored_kept, 1u);

  // A refusal runs nothing.
  bool ran = false;
  EXPECT_THROW(RunSync([&]() -> asio::awaitable<void> {
                 co_await a.run(WithBudget(1ms), "k", [&](const Context&) -> asio::awaitable<void> {
                   ran = true;
                   co_return;
                 });
               }),
               Error);
  EXPECT_FALSE(ran);
}

TEST_F(ServiceTimeAdmissionTest, ConcurrentUseIsSafe) {
  ServiceTimeAdmission a({.min_samples = 5, .max_samples = 32, .probe_interval = 1ms});
  std::vector<std::thread> threads;
  std::atomic<int> admitted{0}, refused{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string name = "k" + std::to_string(i % 3);
        const Context ctx = Context().with_timeout(t % 2 ? 1h : 1ns);
        try {
          auto ticket = a.admit(ctx, name);
          admitted.fetch_add(1);
          if (i % 7) ticket.completed();
          else ticket.stopped();
        } catch (const Error&) {
          refused.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(admitted.load() + refused.load(), 8000);
  EXPECT_EQ(a.stats().keys, 3u);
  EXPECT_LE(a.recent_samples("k0"), 32u);
}

}  // namespace
}  // namespace cutoff::resilience
