#include "cutoff/core/latch.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <optional>
#include <thread>

#include "cutoff/core/error.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using test_support::RunSync;
using test_support::Sleep;

TEST(Latch, OpensWhenTheCountReachesZero) {
  Latch latch(3);
  bool released = false;
  RunSync([&]() -> asio::awaitable<void> {
    asio::co_spawn(
        co_await asio::this_coro::executor,
        [&]() -> asio::awaitable<void> {
          co_await latch.wait(Context());
          released = true;
        },
        asio::detached);
    co_await Sleep(2ms);
    latch.count_down();
    std::thread([&] { latch.count_down(); }).join();
    co_await Sleep(2ms);
    EXPECT_FALSE(released);
    EXPECT_EQ(latch.count(), 1);
    EXPECT_FALSE(latch.try_wait());
    latch.count_down();
    EXPECT_TRUE(latch.try_wait());
    co_await Sleep(2ms);
    co_await latch.wait(Context());  // open: at once
  });
  EXPECT_TRUE(released);
  EXPECT_EQ(latch.count(), 0);
  latch.count_down();  // below zero: stays open
  EXPECT_TRUE(latch.try_wait());
}

TEST(Latch, AZeroLatchIsOpen) {
  Latch latch(0);
  EXPECT_TRUE(latch.try_wait());
  RunSync([&]() -> asio::awaitable<void> { co_await latch.wait(Context()); });
}

TEST(Latch, AWaiterLeavesAtItsDeadline) {
  const int s = test_support::TimeScale();
  Latch latch(1);
  std::optional<ErrorCode> error;
  const Context ctx = Context().with_timeout(30ms * s);
  RunSync([&]() -> asio::awaitable<void> {
    try {
      co_await latch.wait(ctx);
    } catch (const Error& e) {
      error = e.code();
    }
  });
  EXPECT_EQ(error, ErrorCode::deadline_exceeded);
  EXPECT_LT(SteadyClock::now() - ctx.deadline().time_point(), 150ms * s);  // generous: a loaded machine
}

}  // namespace
}  // namespace cutoff
