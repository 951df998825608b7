#include "cutoff/resilience/retry_budget.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace cutoff::resilience {
namespace {

using namespace std::chrono_literals;

int WithdrawAll(RetryBudget& b) {
  int n = 0;
  while (b.try_withdraw()) ++n;
  return n;
}

TEST(RetryBudget, ReserveIsMinPerSecondTimesTheWindow) {
  ManualClock clock;
  RetryBudget b({.ratio = 0, .min_per_second = 2, .window = 10s, .clock = &clock});
  EXPECT_DOUBLE_EQ(b.balance(), 20);
  EXPECT_EQ(WithdrawAll(b), 20);
  EXPECT_EQ(b.stats().refused, 1u);
}

TEST(RetryBudget, EachCallEarnsRatioOfARetry) {
  ManualClock clock;
  RetryBudget b({.ratio = 0.1, .min_per_second = 0, .window = 10s, .clock = &clock});
  for (int i = 0; i < 9; ++i) b.deposit();
  EXPECT_FALSE(b.try_withdraw()) << "nine calls earn 0.9 of a retry";
  b.deposit();
  EXPECT_TRUE(b.try_withdraw());
  for (int i = 0; i < 100; ++i) b.deposit();
  EXPECT_EQ(WithdrawAll(b), 10);
}

TEST(RetryBudget, CountsExpireWithTheWindow) {
  ManualClock clock;
  RetryBudget b({.ratio = 0.5, .min_per_second = 1, .window = 10s, .clock = &clock});
  for (int i = 0; i < 40; ++i) b.deposit();
  EXPECT_EQ(WithdrawAll(b), 30);  // 10 reserve + 20 earned
  clock.advance(5s);
  EXPECT_FALSE(b.try_withdraw()) << "the withdrawals still count";
  clock.advance(6s);
  // Deposits and withdrawals of 11 s ago have expired: back to the reserve.
  EXPECT_DOUBLE_EQ(b.balance(), 10);
  EXPECT_EQ(WithdrawAll(b), 10);
}

TEST(RetryBudget, ConcurrentCallersNeverOverdraw) {
  RetryBudget b({.ratio = 0.1, .min_per_second = 1, .window = 1h});
  std::atomic<int> withdrawn{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5000; ++i) {
        b.deposit();
        if (b.try_withdraw()) withdrawn.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  // 20,000 calls at 0.1, plus a reserve of 3,600: every token handed out exactly once.
  EXPECT_LE(withdrawn.load(), 2000 + 3600);
  EXPECT_GE(withdrawn.load(), 2000 + 3600 - 1);
  EXPECT_EQ(b.stats().withdrawals, static_cast<std::uint64_t>(withdrawn.load()));
  EXPECT_EQ(b.stats().deposits, 20000u);
}

}  // namespace
}  // namespace cutoff::resilience
