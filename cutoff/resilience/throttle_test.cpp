#include "cutoff/resilience/throttle.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cutoff/core/error.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/resilience/pipeline.hpp"
#include "tests/support/run_sync.hpp"

namespace cutoff::resilience {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;

std::exception_ptr Err(ErrorCode code) { return std::make_exception_ptr(Error(code, "x")); }

// One call under `key`: false when the throttle refused it, else the dependency's answer is
// recorded (accepted or refused).
bool Call(Throttle& t, bool accepted, std::string_view key = {}) {
  try {
    auto ticket = t.admit({}, key);
    if (accepted) ticket.accepted();
    else ticket.record(Err(ErrorCode::overloaded), false);
    return true;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::overloaded);
    EXPECT_NE(std::string(e.what()).find("not sent"), std::string::npos) << e.what();
    return false;
  }
}

TEST(Throttle, TheDefaultRuleCountsRefusalsNotTheCallersStops) {
  using O = ThrottleOutcome;
  EXPECT_EQ(default_throttle_outcome(nullptr, false), O::accepted);
  EXPECT_EQ(default_throttle_outcome(Err(ErrorCode::overloaded), false), O::refused);
  EXPECT_EQ(default_throttle_outcome(Err(ErrorCode::unavailable), false), O::refused);
  EXPECT_EQ(default_throttle_outcome(Err(ErrorCode::attempt_timeout), false), O::refused);
  // The dependency refused it as doomed, or it ran out the time: a refusal, unless the
  // caller's own deadline is what ended it.
  EXPECT_EQ(default_throttle_outcome(Err(ErrorCode::deadline_exceeded), false), O::refused);
  EXPECT_EQ(default_throttle_outcome(Err(ErrorCode::deadline_exceeded), true), O::ignored);
  EXPECT_EQ(default_throttle_outcome(Err(ErrorCode::cancelled), false), O::ignored);
  EXPECT_EQ(default_throttle_outcome(Err(ErrorCode::shutdown), false), O::ignored);
  EXPECT_EQ(default_throttle_outcome(Err(ErrorCode::commit_ambiguous), false), O::ignored);
  EXPECT_EQ(default_throttle_outcome(
                std::make_exception_ptr(boost::system::system_error(asio::error::operation_aborted)), false),
            O::ignored);
  // It answered: whatever it said, it took the call.
  EXPECT_EQ(default_throttle_outcome(Err(ErrorCode::not_found), false), O::accepted);
  EXPECT_EQ(default_throttle_outcome(Err(ErrorCode::invalid_argument), false), O::accepted);
  EXPECT_EQ(default_throttle_outcome(Err(ErrorCode::internal), false), O::accepted);
  EXPECT_EQ(default_throttle_outcome(std::make_exception_ptr(std::runtime_error("x")), false), O::accepted);
}

TEST(Throttle, NothingIsRefusedWhileTheDependencyAcceptsOneCallInK) {
  ManualClock clock;
  Throttle t({.k = 2, .clock = &clock});
  for (int i = 0; i < 400; ++i) ASSERT_TRUE(Call(t, i % 2 == 0)) << i;
  EXPECT_EQ(t.refusal_ratio(), 0);
  EXPECT_EQ(t.stats().throttled, 0u);
  EXPECT_EQ(t.stats().accepted, 200u);
  EXPECT_EQ(t.stats().refused, 200u);
}

TEST(Throttle, NothingIsRefusedBeforeTheMinimum) {
  ManualClock clock;
  Throttle t({.minimum_requests = 20, .clock = &clock});
  for (int i = 0; i < 19; ++i) ASSERT_TRUE(Call(t, false)) << i;
  EXPECT_EQ(t.refusal_ratio(), 0);
  // The twentieth request reaches the minimum: from then on some are refused.
  int sent = 0;
  for (int i = 0; i < 20; ++i) sent += Call(t, false) ? 1 : 0;
  EXPECT_LT(sent, 20);
  EXPECT_GT(sent, 0);
}

TEST(Throttle, RefusesTheExcessFractionSpreadEvenly) {
  ManualClock clock;
  Throttle t({.k = 2, .minimum_requests = 1, .clock = &clock});
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Call(t, true));
  // 10 accepts let 20 requests through before anything is refused.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Call(t, false)) << i;
  int sent = 0, throttled = 0;
  for (int i = 0; i < 200; ++i) (Call(t, false) ? sent : throttled)++;
  const double requests = 220, accepts = 10;
  EXPECT_NEAR(t.refusal_ratio(), (requests - 2 * accepts) / (requests + 1), 1e-9);
  // The refused share follows the ratio as it rises: most of these, never all of them.
  EXPECT_GT(throttled, 150);
  EXPECT_GT(sent, 10);
  EXPECT_EQ(t.stats().throttled, static_cast<std::uint64_t>(throttled));
}

// A dependency that can take 10 calls per 100 ms, offered 100: about k times its capacity
// still reaches it, the rest is refused here, and it keeps accepting at capacity.
TEST(Throttle, LetsThroughAboutKTimesWhatTheDependencyCanTakeAndRecovers) {
  ManualClock clock;
  Throttle t({.k = 2, .window = 2s, .clock = &clock});
  int sent_late = 0, accepted_late = 0;
  for (int step = 0; step < 50; ++step) {  // 5 s
    int accepted_now = 0;
    for (int i = 0; i < 100; ++i) {
      const bool take = accepted_now < 10;
      if (Call(t, take)) {
        accepted_now += take ? 1 : 0;
        if (step >= 30) ++sent_late;
      }
    }
    if (step >= 30) accepted_late += accepted_now;
    clock.advance(100ms);
  }
  EXPECT_EQ(accepted_late, 200);  // at capacity throughout
  EXPECT_GT(sent_late, 2 * 200 * 0.8);
  EXPECT_LT(sent_late, 2 * 200 * 1.3);

  // The excess stops: 5 calls per 100 ms, all accepted. The refusals fade as the overload's
  // history leaves the window, and end within one and a half windows (calls refused here on
  // the way count as requests without accepts).
  int throttled_after = 0;
  for (int step = 0; step < 40; ++step) {  // 4 s
    for (int i = 0; i < 5; ++i) {
      if (!Call(t, true) && step >= 30) ++throttled_after;
    }
    clock.advance(100ms);
  }
  EXPECT_EQ(throttled_after, 0);
  EXPECT_EQ(t.refusal_ratio(), 0);
}

TEST(Throttle, KeysKeepSeparateAccounts) {
  ManualClock clock;
  Throttle t({.minimum_requests = 1, .clock = &clock});
  int slow_sent = 0;
  for (int i = 0; i < 100; ++i) {
    slow_sent += Call(t, false, "/valuation") ? 1 : 0;
    ASSERT_TRUE(Call(t, true, "/bin")) << "the healthy operation is never throttled";
  }
  EXPECT_LT(slow_sent, 30);
  EXPECT_EQ(t.refusal_ratio("/bin"), 0);
  EXPECT_GT(t.refusal_ratio("/valuation"), 0.9);
}

TEST(Throttle, KeysPastTheLimitShareOneAccount) {
  ManualClock clock;
  Throttle t({.minimum_requests = 1, .max_keys = 2, .clock = &clock});
  ASSERT_TRUE(Call(t, true, "a"));
  ASSERT_TRUE(Call(t, true, "b"));
  for (int i = 0; i < 50; ++i) Call(t, false, "c" + std::to_string(i));
  EXPECT_GT(t.refusal_ratio("c0"), 0.9);
  EXPECT_GT(t.refusal_ratio("anything-new"), 0.9);  // the shared account
  EXPECT_EQ(t.refusal_ratio("a"), 0);
}

TEST(Throttle, TheCallersOwnStopsTakeTheRequestBack) {
  ManualClock clock;
  Throttle t({.minimum_requests = 20, .clock = &clock});  // counted, 100 requests would pass it
  for (int i = 0; i < 100; ++i) {
    auto ticket = t.admit();
    if (i % 2 == 0) ticket.record(Err(ErrorCode::deadline_exceeded), /*caller_stopped=*/true);
    // odd: dropped unrecorded
  }
  EXPECT_EQ(t.refusal_ratio(), 0);
  EXPECT_EQ(t.stats().ignored, 100u);
  EXPECT_EQ(t.stats().throttled, 0u);
}

TEST(Throttle, RunRecordsTheOutcomeAndMetricsCountRefusals) {
  ManualClock clock;
  observe::Registry registry;
  ResilienceMetrics metrics(registry);
  Throttle t({.minimum_requests = 1, .clock = &clock, .name = "inventory", .metrics = &metrics});
  int ran = 0, refused_here = 0;
  for (int i = 0; i < 50; ++i) {
    try {
      RunSync([&]() -> asio::awaitable<void> {
        co_await t.run(
            Context(),
            [&](const Context&) -> asio::awaitable<void> {
              ++ran;
              throw Error(ErrorCode::unavailable, "down");
              co_return;
            },
            "/x");
      });
    } catch (const Error& e) {
      if (e.code() == ErrorCode::overloaded) ++refused_here;
    }
  }
  EXPECT_EQ(ran + refused_here, 50);
  EXPECT_GT(refused_here, 30);
  EXPECT_EQ(t.stats().refused, static_cast<std::uint64_t>(ran));
  EXPECT_NE(
      registry.expose().find("cutoff_resilience_throttled_total{name=\"inventory\"} " + std::to_string(refused_here)),
      std::string::npos)
      << registry.expose();
}

// Callers on many threads share one throttle: every call is counted exactly once, as sent
// (then accepted or refused) or refused here.
TEST(Throttle, ThreadsShareOneThrottle) {
  Throttle t({.minimum_requests = 1});
  std::atomic<int> sent{0}, throttled{0};
  std::vector<std::thread> threads;
  for (int n = 0; n < 4; ++n) {
    threads.emplace_back([&, n] {
      for (int i = 0; i < 2000; ++i) {
        const std::string key = i % 2 == 0 ? "/a" : "/b";
        if (Call(t, (i + n) % 5 == 0, key)) ++sent;
        else ++throttled;
        if (i % 100 == 0) (void)t.refusal_ratio(key);
      }
    });
  }
  for (auto& th : threads) th.join();
  const ThrottleStats s = t.stats();
  EXPECT_EQ(sent + throttled, 8000);
  EXPECT_EQ(s.accepted + s.refused, static_cast<std::uint64_t>(sent.load()));
  EXPECT_EQ(s.throttled, static_cast<std::uint64_t>(throttled.load()));
  EXPECT_GT(throttled.load(), 0);
}

// In a pipeline: a call the throttle refuses is not retried and counts neither way in the
// breaker; a refusal that came back as a value counts as one.
TEST(Throttle, InAPipelineARefusedCallIsNotRetriedAndLeavesTheBreakerAlone) {
  ManualClock clock;
  CircuitBreaker br({.consecutive_failures = 0, .failure_rate = 0, .clock = &clock});
  Throttle t({.minimum_requests = 1, .clock = &clock});
  Pipeline p(
      {.breaker = &br,
       .throttle = &t,
       .retry = RetryOptions{.max_attempts = 3, .backoff = {.initial = 1ms, .max = 1ms, .jitter = Jitter::none}}});
  int attempts = 0, throttled = 0;
  for (int i = 0; i < 40; ++i) {
    PipelineCall call;
    call.key = "/v";
    call.refused_answer = [] { return true; };  // e.g. a 504 with Deadline-Expired
    const int before = attempts;
    try {
      RunSync([&]() -> asio::awaitable<int> {
        co_return co_await p.run(
            Context(),
            [&](const Context&) -> asio::awaitable<int> {
              ++attempts;
              co_return 504;
            },
            std::move(call));
      });
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::overloaded);
      EXPECT_EQ(attempts, before) << "a throttled call makes no attempt";
      ++throttled;
    }
  }
  EXPECT_GT(throttled, 20);
  EXPECT_EQ(t.stats().refused, static_cast<std::uint64_t>(40 - throttled));
  EXPECT_EQ(br.stats().successes, static_cast<std::uint64_t>(40 - throttled));
  EXPECT_EQ(br.stats().failures, 0u);
  EXPECT_EQ(br.stats().ignored, static_cast<std::uint64_t>(throttled));
}

}  // namespace
}  // namespace cutoff::resilience
