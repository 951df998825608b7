#include "cutoff/core/internal/fault_injection.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace cutoff::internal {
namespace {

inline constexpr FaultPoint<void()> kFirst{"test.first"};
inline constexpr FaultPoint<int(int)> kSecond{"test.second"};

TEST(FaultInjection, NothingIsArmedUnlessATestArmsIt) {
  EXPECT_EQ(armed_fault(kFirst), nullptr);
  EXPECT_EQ(armed_fault(kSecond), nullptr);
}

TEST(FaultInjection, AnArmedPointRunsItsActionUntilTheScopeEnds) {
  int calls = 0;
  {
    ScopedFault fault(kFirst, [&] { ++calls; });
    auto action = armed_fault(kFirst);
    ASSERT_NE(action, nullptr);
    (*action)();
    (*action)();
    EXPECT_EQ(armed_fault(kSecond), nullptr) << "only the armed point";
  }
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(armed_fault(kFirst), nullptr);
}

TEST(FaultInjection, ActionsKeepTheirSignature) {
  ScopedFault fault(kSecond, [](int x) { return x * 2; });
  ASSERT_NE(armed_fault(kSecond), nullptr);
  EXPECT_EQ((*armed_fault(kSecond))(21), 42);
}

TEST(FaultInjection, AnActionTakenOutlivesItsDisarming) {
  std::shared_ptr<const std::function<int(int)>> taken;
  {
    ScopedFault fault(kSecond, [](int x) { return x + 1; });
    taken = armed_fault(kSecond);
  }
  EXPECT_EQ(armed_fault(kSecond), nullptr);
  EXPECT_EQ((*taken)(1), 2);
}

TEST(FaultInjection, PointsAreReachedSafelyFromOtherThreadsWhileArming) {
  std::atomic<int> calls{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  for (int i = 0; i < 2; ++i) {
    readers.emplace_back([&] {
      while (!done.load()) {
        if (auto action = armed_fault(kFirst)) (*action)();
      }
    });
  }
  for (int i = 0; i < 200; ++i) ScopedFault fault(kFirst, [&] { calls.fetch_add(1); });
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(armed_fault(kFirst), nullptr);
}

}  // namespace
}  // namespace cutoff::internal
