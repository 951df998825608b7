#include "cutoff/resilience/adaptive_limit.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cutoff/core/error.hpp"
#include "cutoff/observe/metrics.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::resilience {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;
using cutoff::test_support::Scaled;
using cutoff::test_support::Sleep;

class AdaptiveLimitTest : public ::testing::Test {
 protected:
  ManualClock clock_;

  AdaptiveLimitOptions Options(std::size_t max_limit, std::size_t initial = 0) {
    return {.min_limit = 1, .max_limit = max_limit, .initial_limit = initial, .window = 4, .clock = &clock_};
  }

  static AdaptiveLimit::Permit Take(AdaptiveLimit& l) {
    return RunSync([&]() -> asio::awaitable<AdaptiveLimit::Permit> { co_return co_await l.acquire(Context()); });
  }
  static std::optional<AdaptiveLimit::Permit> TryTake(AdaptiveLimit& l, Duration wait) {
    return RunSync([&]() -> asio::awaitable<std::optional<AdaptiveLimit::Permit>> {
      try {
        co_return co_await l.acquire(Context().with_timeout(wait));
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::deadline_exceeded);
        co_return std::nullopt;
      }
    });
  }

  // One window of `n` runs, one after another, each taking `took`.
  void Serial(AdaptiveLimit& l, Duration took, int n = 4) {
    for (int i = 0; i < n; ++i) {
      AdaptiveLimit::Permit p = Take(l);
      clock_.advance(took);
      p.completed();
    }
  }
  // One window of 4 runs held at once (so that whoever else asks must wait), each taking `took`.
  void Concurrent(AdaptiveLimit& l, Duration took, int stopped = 0) {
    std::vector<AdaptiveLimit::Permit> held;
    for (int i = 0; i < 4; ++i) held.push_back(Take(l));
    clock_.advance(took);
    for (int i = 0; i < 4; ++i) {
      auto& p = held[static_cast<std::size_t>(i)];
      i < stopped ? p.stopped() : p.completed();
    }
  }
};

TEST_F(AdaptiveLimitTest, StartsAtItsInitialLimitAndHoldsWhileRunsStayFast) {
  AdaptiveLimit l(Options(8, 4));
  EXPECT_EQ(l.limit(), 4u);
  for (int i = 0; i < 5; ++i) Serial(l, 10ms);
  EXPECT_EQ(l.limit(), 4u);  // nobody waited: no reason to grow
  const AdaptiveLimitStats s = l.stats();
  EXPECT_EQ(s.samples, 20u);
  EXPECT_EQ(s.baseline, 10ms);
  EXPECT_EQ(s.decreases, 0u);
  EXPECT_EQ(s.increases, 0u);
  EXPECT_EQ(s.in_use, 0u);
}

TEST_F(AdaptiveLimitTest, ASlowWindowLowersTheLimitAndAFastOneWithWaitersRaisesIt) {
  AdaptiveLimit l(Options(8));
  Serial(l, 10ms);           // baseline 10 ms
  Concurrent(l, 25ms);       // 2.5 times the baseline, tolerance 2: congested
  EXPECT_EQ(l.limit(), 6u);  // 8 * 0.75
  Concurrent(l, 25ms);
  EXPECT_EQ(l.limit(), 4u);  // floor(6 * 0.75)
  Concurrent(l, 25ms);
  EXPECT_EQ(l.limit(), 3u);
  EXPECT_EQ(l.stats().decreases, 3u);
  EXPECT_EQ(l.stats().last_median, 25ms);
  EXPECT_EQ(l.stats().baseline, 10ms);

  // Fast again, with a caller kept waiting: the limit grows by one per window.
  std::vector<AdaptiveLimit::Permit> held;
  for (int i = 0; i < 3; ++i) held.push_back(Take(l));
  EXPECT_FALSE(TryTake(l, 1ms).has_value());  // it waited: more would have run
  held.clear();                               // failures: no samples
  Serial(l, 12ms);
  EXPECT_EQ(l.limit(), 4u);
  EXPECT_EQ(l.stats().increases, 1u);
  Serial(l, 12ms);  // nobody waited this time
  EXPECT_EQ(l.limit(), 4u);
}

TEST_F(AdaptiveLimitTest, RunsCutAtTheirDeadlineAreCongestionEvenWhenFast) {
  AdaptiveLimit l(Options(4));
  Serial(l, 10ms);
  Concurrent(l, 10ms, /*stopped=*/1);  // a quarter stopped, more than 10%
  EXPECT_EQ(l.limit(), 3u);
  EXPECT_EQ(l.stats().stopped, 1u);
  Serial(l, 10ms);
  Serial(l, 10ms);
  EXPECT_EQ(l.limit(), 3u);  // nobody waited
}

TEST_F(AdaptiveLimitTest, NeverBelowMinNorAboveMax) {
  AdaptiveLimitOptions o = Options(3);
  o.min_limit = 2;
  AdaptiveLimit l(o);
  Serial(l, 10ms);
  for (int i = 0; i < 5; ++i) {
    std::vector<AdaptiveLimit::Permit> held;
    held.push_back(Take(l));
    held.push_back(Take(l));
    clock_.advance(50ms);
    for (auto& p : held) p.stopped();
    held.clear();
    held.push_back(Take(l));
    held.push_back(Take(l));
    clock_.advance(50ms);
    for (auto& p : held) p.stopped();
  }
  EXPECT_EQ(l.limit(), 2u);
  for (int i = 0; i < 5; ++i) {
    std::vector<AdaptiveLimit::Permit> held;
    while (held.size() < l.limit()) held.push_back(Take(l));
    EXPECT_FALSE(TryTake(l, 1ms).has_value());
    held.clear();
    Serial(l, 10ms);
  }
  EXPECT_EQ(l.limit(), 3u);
}

TEST_F(AdaptiveLimitTest, ALoweredLimitTakesEffectAsPermitsComeBack) {
  AdaptiveLimit l(Options(4));
  Serial(l, 10ms);
  std::vector<AdaptiveLimit::Permit> held;
  for (int i = 0; i < 4; ++i) held.push_back(Take(l));
  // Four slow completions from other holders would lower it; here the held four end slow.
  clock_.advance(40ms);
  for (auto& p : held) p.completed();
  held.clear();
  EXPECT_EQ(l.limit(), 3u);
  for (int i = 0; i < 3; ++i) held.push_back(Take(l));
  EXPECT_FALSE(TryTake(l, 1ms).has_value());  // the fourth permit is parked
  held.pop_back();
  EXPECT_TRUE(TryTake(l, 1ms).has_value());
}

TEST_F(AdaptiveLimitTest, ALimitLoweredWhileAllPermitsAreOutParksOneOnReturn) {
  AdaptiveLimit l(Options(4));
  Serial(l, 10ms);
  std::vector<AdaptiveLimit::Permit> first;
  for (int i = 0; i < 4; ++i) first.push_back(Take(l));
  clock_.advance(40ms);
  for (int i = 0; i < 3; ++i) first[static_cast<std::size_t>(i)].completed();
  std::vector<AdaptiveLimit::Permit> held;
  for (int i = 0; i < 3; ++i) held.push_back(Take(l));  // all four out again
  first[3].completed();  // the fourth slow run closes a congested window: nothing is free
  EXPECT_EQ(l.limit(), 3u);
  EXPECT_EQ(l.stats().in_use, 3u);
  EXPECT_FALSE(TryTake(l, 1ms).has_value());  // the returned permit was parked
  held.pop_back();
  EXPECT_TRUE(TryTake(l, 1ms).has_value());
}

TEST_F(AdaptiveLimitTest, FailuresRecordNothing) {
  AdaptiveLimit l(Options(4));
  for (int i = 0; i < 20; ++i) {
    AdaptiveLimit::Permit p = Take(l);
    clock_.advance(100ms);
    p.release();
  }
  EXPECT_EQ(l.stats().samples, 0u);
  EXPECT_EQ(l.limit(), 4u);
}

TEST_F(AdaptiveLimitTest, RunRecordsCompletionsAndStopsButNotFailures) {
  AdaptiveLimit l(Options(4));
  RunSync([&]() -> asio::awaitable<void> {
    int v = co_await l.run(Context(), [&](const Context&) -> asio::awaitable<int> {
      clock_.advance(5ms);
      co_return 7;
    });
    EXPECT_EQ(v, 7);
    try {
      co_await l.run(Context(), [](const Context&) -> asio::awaitable<void> {
        throw Error(ErrorCode::internal, "boom");
        co_return;
      });
    } catch (const Error&) {
    }
    auto [stopped, cancel] = Context().with_cancel();
    try {
      co_await l.run(stopped, [&](const Context& c) -> asio::awaitable<void> {
        cancel.request_stop();
        c.check();
        co_return;
      });
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::cancelled);
    }
  });
  EXPECT_EQ(l.stats().samples, 1u);
  EXPECT_EQ(l.stats().stopped, 1u);
  EXPECT_EQ(l.stats().in_use, 0u);
}

TEST(AdaptiveLimit, AWaiterLeavesAtItsDeadlineAndAFullQueueIsOverloaded) {
  AdaptiveLimit l({.max_limit = 1, .max_queue = 1});
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    AdaptiveLimit::Permit held = co_await l.acquire(Context());
    std::optional<ErrorCode> first;
    asio::co_spawn(
        ex,
        [&]() -> asio::awaitable<void> {
          try {
            auto p = co_await l.acquire(Context().with_timeout(Scaled(50ms)));
          } catch (const Error& e) {
            first = e.code();
          }
        },
        asio::detached);
    co_await Sleep(1ms);
    try {
      auto p = co_await l.acquire(Context());
      ADD_FAILURE() << "a second waiter got past a queue of one";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::overloaded);
    }
    co_await Sleep(Scaled(200ms));
    EXPECT_EQ(first, ErrorCode::deadline_exceeded);
  });
  EXPECT_EQ(l.stats().in_use, 0u);
}

// A full queue's refusal says when a retry could find room: the last window's median run times
// the queue (and the caller) over the limit.
TEST_F(AdaptiveLimitTest, AFullQueuesRefusalCarriesAPushback) {
  AdaptiveLimitOptions options = Options(2, 2);
  options.max_queue = 3;
  AdaptiveLimit l(options);
  const auto refused = [&l]() -> std::optional<Error> {
    return RunSync([&]() -> asio::awaitable<std::optional<Error>> {
      auto ex = co_await asio::this_coro::executor;
      std::vector<AdaptiveLimit::Permit> held;
      held.push_back(co_await l.acquire(Context()));
      held.push_back(co_await l.acquire(Context()));
      int left = 0;
      for (int i = 0; i < 3; ++i) {  // the queue, waiting until their short deadlines
        ++left;
        asio::co_spawn(
            ex,
            [&]() -> asio::awaitable<void> {
              try {
                auto p = co_await l.acquire(Context().with_timeout(Scaled(50ms)));
              } catch (const Error&) {
              }
              --left;
            },
            asio::detached);
      }
      co_await Sleep(1ms);
      std::optional<Error> out;
      try {
        auto p = co_await l.acquire(Context());
        ADD_FAILURE() << "a caller got past a full queue";
      } catch (const Error& e) {
        out = e;
      }
      while (left > 0) co_await Sleep(5ms);
      co_return out;
    });
  };
  std::optional<Error> before = refused();
  ASSERT_TRUE(before);
  EXPECT_EQ(before->code(), ErrorCode::overloaded);
  EXPECT_FALSE(before->retry_after()) << "no run measured yet: no estimate";

  Serial(l, 40ms);  // a window's median: 40 ms
  std::optional<Error> after = refused();
  ASSERT_TRUE(after);
  EXPECT_EQ(after->code(), ErrorCode::overloaded);
  EXPECT_EQ(after->retry_after(), std::optional<Duration>(80ms)) << "40 ms * (3 queued + 1) / limit 2";
}

TEST(AdaptiveLimit, TheLimitIsAMetric) {
  observe::Registry registry;
  ResilienceMetrics metrics(registry);
  ManualClock clock;
  AdaptiveLimit l({.max_limit = 4, .window = 4, .name = "valuation", .clock = &clock, .metrics = &metrics});
  EXPECT_NE(registry.expose().find("cutoff_resilience_concurrency_limit{name=\"valuation\"} 4"), std::string::npos);
  for (int i = 0; i < 4; ++i) {
    auto p = RunSync([&]() -> asio::awaitable<AdaptiveLimit::Permit> { co_return co_await l.acquire(Context()); });
    clock.advance(1ms);
    p.stopped();
  }
  EXPECT_NE(registry.expose().find("cutoff_resilience_concurrency_limit{name=\"valuation\"} 3"), std::string::npos);
}

TEST(AdaptiveLimit, RejectsNonsenseOptions) {
  EXPECT_THROW(AdaptiveLimit({.min_limit = 0}), std::invalid_argument);
  EXPECT_THROW(AdaptiveLimit({.min_limit = 4, .max_limit = 2}), std::invalid_argument);
  EXPECT_THROW(AdaptiveLimit({.tolerance = 1.0}), std::invalid_argument);
  EXPECT_THROW(AdaptiveLimit({.max_stopped_share = 2}), std::invalid_argument);
  EXPECT_THROW(AdaptiveLimit({.backoff = 1.0}), std::invalid_argument);
}

// Threads acquire and release with random service times while windows close and the limit
// moves: never more runs at once than the limit allowed at any time (max_limit), nothing lost.
TEST(AdaptiveLimit, ManyThreadsNeverExceedTheMaxAndLoseNoPermit) {
  AdaptiveLimit l({.max_limit = 3, .window = 4, .max_window_age = 1ms});
  std::atomic<int> running{0}, peak{0}, done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      asio::io_context io;
      asio::co_spawn(
          io,
          [&, t]() -> asio::awaitable<void> {
            std::mt19937 rng(static_cast<unsigned>(t));
            for (int i = 0; i < 150; ++i) {
              AdaptiveLimit::Permit p = co_await l.acquire(Context());
              const int now = ++running;
              int seen = peak.load();
              while (now > seen && !peak.compare_exchange_weak(seen, now)) {
              }
              co_await Sleep(std::chrono::microseconds(rng() % 400));
              --running;
              if (rng() % 5 == 0) p.stopped();
              else p.completed();
              ++done;
            }
          },
          asio::detached);
      io.run();
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(done.load(), 600);
  EXPECT_LE(peak.load(), 3);
  const AdaptiveLimitStats s = l.stats();
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(s.waiting, 0u);
  EXPECT_GE(s.limit, 1u);
  EXPECT_LE(s.limit, 3u);
}

}  // namespace
}  // namespace cutoff::resilience
