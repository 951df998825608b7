#include "cutoff/effects/admission.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "cutoff/core/error.hpp"

namespace cutoff::effects {
namespace {

TEST(AdmissionLimit, RefusesBeyondTheLimitAndFreesOnRelease) {
  AdmissionLimit limit(2);
  auto a = limit.try_enter();
  auto b = limit.try_enter();
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(limit.try_enter());
  EXPECT_EQ(limit.in_flight(), 2u);
  EXPECT_EQ(limit.rejected(), 1u);
  a.reset();
  EXPECT_EQ(limit.in_flight(), 1u);
  EXPECT_TRUE(limit.try_enter());  // the temporary ticket is released at once
  EXPECT_EQ(limit.in_flight(), 1u);
}

TEST(AdmissionLimit, EnterThrowsOverloadedNamingTheOperation) {
  AdmissionLimit limit(0);
  try {
    (void)limit.enter("orders.create", "req-9");
    FAIL() << "admitted past the limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::overloaded);
    EXPECT_TRUE(e.retryable());
    EXPECT_EQ(e.request_id(), "req-9");
    EXPECT_NE(std::string(e.message()).find("orders.create"), std::string::npos);
  }
}

TEST(AdmissionLimit, MovedTicketsReleaseOnce) {
  AdmissionLimit limit(1);
  AdmissionLimit::Ticket t = limit.enter("x");
  AdmissionLimit::Ticket u = std::move(t);
  EXPECT_FALSE(t);
  EXPECT_EQ(limit.in_flight(), 1u);
  t = std::move(u);
  EXPECT_EQ(limit.in_flight(), 1u);
  t = AdmissionLimit::Ticket();
  EXPECT_EQ(limit.in_flight(), 0u);
}

TEST(AdmissionLimit, NeverAdmitsMoreThanTheLimitAcrossThreads) {
  AdmissionLimit limit(3);
  std::atomic<int> inside{0}, peak{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        if (auto ticket = limit.try_enter()) {
          const int now = inside.fetch_add(1) + 1;
          int p = peak.load();
          while (now > p && !peak.compare_exchange_weak(p, now)) {
          }
          inside.fetch_sub(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(peak.load(), 3);
  EXPECT_EQ(limit.in_flight(), 0u);
}

}  // namespace
}  // namespace cutoff::effects
