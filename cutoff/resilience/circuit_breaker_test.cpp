#include "cutoff/resilience/circuit_breaker.hpp"

#include <gtest/gtest.h>

#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>
#include <stdexcept>
#include <vector>

#include "cutoff/core/error.hpp"
#include "tests/support/run_sync.hpp"

namespace cutoff::resilience {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;

std::exception_ptr Err(ErrorCode code) { return std::make_exception_ptr(Error(code, "x")); }

class BreakerTest : public ::testing::Test {
 protected:
  ManualClock clock_;

  // One call through `b` with the given outcome; false when the breaker refused it.
  static bool Call(CircuitBreaker& b, const std::exception_ptr& outcome) {
    try {
      auto ticket = b.admit();
      if (outcome)
        ticket.record(outcome);
      else
        ticket.success();
      return true;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::unavailable);
      return false;
    }
  }
};

TEST_F(BreakerTest, OpensAfterConsecutiveFailuresAndRefusesWithUnavailable) {
  CircuitBreaker b({.consecutive_failures = 3, .failure_rate = 0, .open_for = 1s, .clock = &clock_});
  EXPECT_TRUE(Call(b, Err(ErrorCode::unavailable)));
  EXPECT_TRUE(Call(b, Err(ErrorCode::unavailable)));
  EXPECT_TRUE(Call(b, nullptr));  // a success resets the run
  EXPECT_TRUE(Call(b, Err(ErrorCode::attempt_timeout)));
  EXPECT_TRUE(Call(b, Err(ErrorCode::internal)));
  EXPECT_EQ(b.state(), BreakerState::closed);
  EXPECT_TRUE(Call(b, std::make_exception_ptr(std::runtime_error("foreign"))));
  EXPECT_EQ(b.state(), BreakerState::open);
  try {
    b.admit(Context().with_request_id("r1"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unavailable);
    EXPECT_TRUE(e.retryable());
    EXPECT_EQ(e.request_id(), "r1");
    EXPECT_NE(e.message().find("open"), std::string::npos) << e.message();
  }
  EXPECT_EQ(b.stats().rejected, 1u);
  EXPECT_EQ(b.stats().times_opened, 1u);
}

TEST_F(BreakerTest, StopsAndCommitAmbiguousNeitherCountNorReset) {
  CircuitBreaker b({.consecutive_failures = 3, .failure_rate = 0, .clock = &clock_});
  EXPECT_TRUE(Call(b, Err(ErrorCode::unavailable)));
  EXPECT_TRUE(Call(b, Err(ErrorCode::unavailable)));
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(Call(b, Err(ErrorCode::deadline_exceeded)));
    EXPECT_TRUE(Call(b, Err(ErrorCode::cancelled)));
    EXPECT_TRUE(Call(b, Err(ErrorCode::shutdown)));
    EXPECT_TRUE(Call(b, Err(ErrorCode::commit_ambiguous)));
    EXPECT_TRUE(Call(b, std::make_exception_ptr(boost::system::system_error(asio::error::operation_aborted))));
  }
  EXPECT_EQ(b.state(), BreakerState::closed) << "100 stops did not open it";
  EXPECT_EQ(b.stats().ignored, 100u);
  EXPECT_EQ(b.stats().failures, 2u);
  // Nor did they reset the run of real failures: one more opens it.
  EXPECT_TRUE(Call(b, Err(ErrorCode::unavailable)));
  EXPECT_EQ(b.state(), BreakerState::open);
}

TEST_F(BreakerTest, AnswersThatShowTheDependencyWorksCountAsSuccesses) {
  CircuitBreaker b({.consecutive_failures = 2, .failure_rate = 0, .clock = &clock_});
  for (ErrorCode code : {ErrorCode::invalid_argument, ErrorCode::not_found, ErrorCode::idempotency_conflict}) {
    EXPECT_TRUE(Call(b, Err(ErrorCode::unavailable)));
    EXPECT_TRUE(Call(b, Err(code)));
  }
  EXPECT_EQ(b.state(), BreakerState::closed);
  EXPECT_EQ(b.stats().successes, 3u);
}

TEST_F(BreakerTest, HalfOpenAdmitsLimitedProbesAndClosesOnTheirSuccess) {
  std::vector<std::pair<BreakerState, BreakerState>> transitions;
  CircuitBreaker b({.consecutive_failures = 1,
                    .failure_rate = 0,
                    .open_for = 5s,
                    .half_open_probes = 2,
                    .clock = &clock_,
                    .on_transition = [&](BreakerState from, BreakerState to) { transitions.emplace_back(from, to); }});
  EXPECT_TRUE(Call(b, Err(ErrorCode::unavailable)));
  EXPECT_EQ(b.state(), BreakerState::open);
  clock_.advance(4999ms);
  EXPECT_FALSE(Call(b, nullptr));
  clock_.advance(1ms);
  EXPECT_EQ(b.state(), BreakerState::half_open);
  auto p1 = b.admit();
  auto p2 = b.admit();
  EXPECT_THROW(b.admit(), Error) << "only two probes at a time";
  p1.success();
  EXPECT_EQ(b.state(), BreakerState::half_open) << "one success of two needed";
  p2.success();
  EXPECT_EQ(b.state(), BreakerState::closed);
  EXPECT_TRUE(Call(b, nullptr));
  using S = BreakerState;
  EXPECT_EQ(transitions, (std::vector<std::pair<S, S>>{{S::closed, S::open}, {S::open, S::half_open},
                                                      {S::half_open, S::closed}}));
}

TEST_F(BreakerTest, AFailedProbeOpensAgainForAnotherInterval) {
  CircuitBreaker b({.consecutive_failures = 1, .failure_rate = 0, .open_for = 1s, .clock = &clock_});
  Call(b, Err(ErrorCode::unavailable));
  clock_.advance(1s);
  EXPECT_TRUE(Call(b, Err(ErrorCode::unavailable)));  // the probe fails
  EXPECT_EQ(b.state(), BreakerState::open);
  clock_.advance(999ms);
  EXPECT_FALSE(Call(b, nullptr));
  clock_.advance(1ms);
  EXPECT_TRUE(Call(b, nullptr));
  EXPECT_EQ(b.state(), BreakerState::closed);
  EXPECT_EQ(b.stats().times_opened, 2u);
}

TEST_F(BreakerTest, AProbeThatWasStoppedFreesItsPlaceWithoutDeciding) {
  CircuitBreaker b({.consecutive_failures = 1, .failure_rate = 0, .open_for = 1s, .clock = &clock_});
  Call(b, Err(ErrorCode::unavailable));
  clock_.advance(1s);
  EXPECT_TRUE(Call(b, Err(ErrorCode::deadline_exceeded)));
  EXPECT_EQ(b.state(), BreakerState::half_open);
  { auto dropped = b.admit(); }  // never recorded: counts as ignored
  EXPECT_EQ(b.state(), BreakerState::half_open);
  EXPECT_TRUE(Call(b, nullptr));
  EXPECT_EQ(b.state(), BreakerState::closed);
}

TEST_F(BreakerTest, FailureRateOverTheWindow) {
  CircuitBreaker b({.consecutive_failures = 0,
                    .failure_rate = 0.5,
                    .minimum_calls = 10,
                    .window = 10s,
                    .clock = &clock_});
  // Alternating: never two failures in a row, but half of all calls fail.
  for (int i = 0; i < 9; ++i) Call(b, i % 2 ? Err(ErrorCode::unavailable) : nullptr);
  EXPECT_EQ(b.state(), BreakerState::closed) << "below minimum_calls";
  Call(b, Err(ErrorCode::unavailable));
  EXPECT_EQ(b.state(), BreakerState::open);
}

TEST_F(BreakerTest, OldCallsLeaveTheWindow) {
  CircuitBreaker b({.consecutive_failures = 0,
                    .failure_rate = 0.5,
                    .minimum_calls = 4,
                    .window = 10s,
                    .clock = &clock_});
  for (int i = 0; i < 3; ++i) Call(b, Err(ErrorCode::unavailable));
  clock_.advance(11s);  // those failures are forgotten
  for (int i = 0; i < 3; ++i) Call(b, nullptr);
  Call(b, Err(ErrorCode::unavailable));
  EXPECT_EQ(b.state(), BreakerState::closed) << "1 failure in 4 calls";
}

TEST_F(BreakerTest, ACallAdmittedBeforeATransitionDoesNotDecideTheNewState) {
  CircuitBreaker b({.consecutive_failures = 1, .failure_rate = 0, .open_for = 1s, .clock = &clock_});
  auto slow = b.admit();
  Call(b, Err(ErrorCode::unavailable));  // opens
  slow.success();                         // admitted while closed: says nothing now
  EXPECT_EQ(b.state(), BreakerState::open);
}

TEST_F(BreakerTest, RunDoesNotCallWhileOpen) {
  CircuitBreaker b({.consecutive_failures = 2, .failure_rate = 0, .open_for = 1h, .clock = &clock_});
  int calls = 0;
  std::vector<ErrorCode> seen;
  RunSync([&]() -> asio::awaitable<void> {
    for (int i = 0; i < 5; ++i) {
      try {
        co_await b.run(Context(), [&](const Context&) -> asio::awaitable<void> {
          ++calls;
          throw Error(ErrorCode::unavailable, "down");
          co_return;
        });
      } catch (const Error& e) {
        seen.push_back(e.code());
      }
    }
  });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ(b.stats().rejected, 3u);
}

TEST_F(BreakerTest, MetricsFollowTheState) {
  observe::Registry registry;
  ResilienceMetrics metrics(registry);
  CircuitBreaker b({.consecutive_failures = 1, .failure_rate = 0, .open_for = 1s, .clock = &clock_,
                    .name = "payments", .metrics = &metrics});
  auto& gauge = metrics.breaker_state.with({"payments"});
  EXPECT_EQ(gauge.value(), 0);
  Call(b, Err(ErrorCode::unavailable));
  EXPECT_EQ(gauge.value(), 1);
  Call(b, nullptr);
  EXPECT_EQ(metrics.breaker_rejected.with({"payments"}).value(), 1);
  clock_.advance(1s);
  auto probe = b.admit();
  EXPECT_EQ(gauge.value(), 2);
  probe.success();
  EXPECT_EQ(gauge.value(), 0);
}

TEST_F(BreakerTest, ManualTripAndReset) {
  CircuitBreaker b({.clock = &clock_});
  b.trip();
  EXPECT_FALSE(Call(b, nullptr));
  b.reset();
  EXPECT_TRUE(Call(b, nullptr));
}

}  // namespace
}  // namespace cutoff::resilience
