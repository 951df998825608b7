#include "cutoff/resilience/policy.hpp"

#include <gtest/gtest.h>

#include "cutoff/core/error.hpp"
#include "cutoff/observe/metrics.hpp"
#include "tests/support/run_sync.hpp"

namespace cutoff::resilience {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;

const BackoffOptions kQuick{.initial = 1ms, .max = 1ms, .jitter = Jitter::none};

// Runs `f` through `policy` and returns how many attempts it took and the error code, if any.
std::pair<int, std::optional<ErrorCode>> Attempts(Policy& policy, ErrorCode fails_with, PipelineCall call = {}) {
  int attempts = 0;
  std::optional<ErrorCode> code;
  try {
    RunSync([&]() -> asio::awaitable<void> {
      co_await policy.run(
          Context(),
          [&](const Context&) -> asio::awaitable<void> {
            ++attempts;
            throw Error(fails_with, "failed");
            co_return;
          },
          std::move(call));
    });
  } catch (const Error& e) {
    code = e.code();
  }
  return {attempts, code};
}

TEST(Policy, BuildsOnlyWhatIsConfigured) {
  Policy bare("bare", {});
  EXPECT_EQ(bare.bulkhead(), nullptr);
  EXPECT_EQ(bare.breaker(), nullptr);
  EXPECT_EQ(bare.retry_budget(), nullptr);  // one attempt: nothing to budget
  EXPECT_EQ(Attempts(bare, ErrorCode::unavailable).first, 1);

  Policy full("full", {.retry = {.max_attempts = 3, .backoff = kQuick},
                       .bulkhead = {.max_concurrent = 4},
                       .breaker = BreakerOptions{}});
  ASSERT_NE(full.bulkhead(), nullptr);
  EXPECT_EQ(full.bulkhead()->options().max_concurrent, 4u);
  EXPECT_EQ(full.bulkhead()->options().name, "full");
  ASSERT_NE(full.breaker(), nullptr);
  ASSERT_NE(full.retry_budget(), nullptr);  // retries come with a budget
  EXPECT_EQ(Attempts(full, ErrorCode::unavailable).first, 3);
}

TEST(Policy, ANegativeRatioTurnsTheRetryBudgetOff) {
  ManualClock clock;
  Policy budgeted("b", {.retry = {.max_attempts = 2, .backoff = kQuick, .budget_ratio = 0, .budget_min_per_second = 0},
                        .clock = &clock});
  EXPECT_EQ(Attempts(budgeted, ErrorCode::unavailable).first, 1);  // no token, no retry
  Policy unbudgeted("u", {.retry = {.max_attempts = 2, .backoff = kQuick, .budget_ratio = -1}, .clock = &clock});
  EXPECT_EQ(unbudgeted.retry_budget(), nullptr);
  EXPECT_EQ(Attempts(unbudgeted, ErrorCode::unavailable).first, 2);
}

// A call can narrow what is retried for it; stops and commit_ambiguous stay never retried.
TEST(Policy, ACallMayNarrowWhatIsRetried) {
  Policy p("p", {.retry = {.max_attempts = 3, .backoff = kQuick}});
  EXPECT_EQ(Attempts(p, ErrorCode::unavailable).first, 3);
  PipelineCall no_retries;
  no_retries.retryable = [](const Error&) { return false; };
  EXPECT_EQ(Attempts(p, ErrorCode::unavailable, no_retries), std::pair(1, std::optional(ErrorCode::unavailable)));
  PipelineCall everything;
  everything.retryable = [](const Error&) { return true; };
  EXPECT_EQ(Attempts(p, ErrorCode::commit_ambiguous, everything).first, 1);
  EXPECT_EQ(Attempts(p, ErrorCode::internal, everything).first, 3);
}

TEST(Policy, CountsAttemptsUnderItsName) {
  observe::Registry registry;
  ResilienceMetrics metrics(registry);
  Policy p("inventory", {.retry = {.max_attempts = 2, .backoff = kQuick}}, &metrics);
  Attempts(p, ErrorCode::unavailable);
  const std::string text = registry.expose();
  EXPECT_NE(text.find("cutoff_resilience_attempts_total{name=\"inventory\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("cutoff_resilience_retries_total{name=\"inventory\"} 1"), std::string::npos) << text;
}

TEST(PolicySet, OnePolicyPerKeyNamedOnesWithTheirOwnOptions) {
  PolicySet set({.defaults = {.attempt_timeout = 1s},
                 .named = {{.key = "inventory:80", .name = "inventory", .options = {.attempt_timeout = 2s}}}});
  Policy& a = set.get("a:1");
  EXPECT_EQ(&a, &set.get("a:1"));
  EXPECT_EQ(a.name(), "a:1");
  EXPECT_EQ(a.options().attempt_timeout, 1s);
  Policy& inv = set.get("inventory:80");
  EXPECT_EQ(inv.name(), "inventory");
  EXPECT_EQ(inv.options().attempt_timeout, 2s);
  EXPECT_EQ(set.size(), 2u);
}

// Keys past the bound share one policy instead of growing memory and metric series.
TEST(PolicySet, IsBounded) {
  PolicySet set({.max_policies = 3});
  for (int i = 0; i < 3; ++i) set.get("host:" + std::to_string(i));
  Policy& other = set.get("host:99");
  EXPECT_EQ(other.name(), "other");
  EXPECT_EQ(&other, &set.get("host:100"));
  EXPECT_EQ(&set.get("host:1"), &set.get("host:1"));
  EXPECT_EQ(set.size(), 4u);
}

}  // namespace
}  // namespace cutoff::resilience
