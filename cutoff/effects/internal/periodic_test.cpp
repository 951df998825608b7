#include "cutoff/effects/internal/periodic.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <vector>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::effects::internal {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using test_support::RunSync;
using test_support::Scaled;
using test_support::Sleep;
using Clock = std::chrono::steady_clock;

// A round that hangs (a sweep behind a busy database) is cut at its budget, 1 s for a short
// interval, and the loop goes on; a round that throws does not end it; the stop ends it.
TEST(RunEvery, AHangingRoundIsCutAtItsBudgetAndTheLoopGoesOnUntilTheStop) {
  RunSync([&]() -> asio::awaitable<void> {
    auto [ctx, stop] = Context().with_cancel();
    std::vector<Clock::time_point> starts;
    std::vector<StopReason> ends;
    bool finished = false;
    auto executor = co_await asio::this_coro::executor;
    asio::co_spawn(
        executor,
        [&]() -> asio::awaitable<void> {
          co_await run_every(ctx, 10ms, [&](const Context& round) -> asio::awaitable<void> {
            starts.push_back(Clock::now());
            if (starts.size() == 2) throw std::runtime_error("the database is away");
            asio::steady_timer forever(co_await asio::this_coro::executor, 1h);
            try {
              co_await with_context(round, forever.async_wait(asio::use_awaitable));
            } catch (const Error&) {
            }
            ends.push_back(round.stop_reason());
          });
          finished = true;
        },
        asio::detached);
    for (int i = 0; i < 1000 && starts.size() < 3; ++i) co_await Sleep(10ms);
    const std::size_t rounds = starts.size();
    const std::vector<StopReason> cut = ends;
    stop.request_stop(StopReason::shutdown);
    for (int i = 0; i < 500 && !finished; ++i) co_await Sleep(10ms);
    EXPECT_TRUE(finished);
    EXPECT_GE(rounds, 3u);
    if (rounds >= 2 && !cut.empty()) {
      EXPECT_EQ(cut[0], StopReason::deadline_exceeded);
      const auto cut_after = starts[1] - starts[0];
      EXPECT_GE(cut_after, 1s);               // the round's budget: the interval, raised to 1 s
      EXPECT_LT(cut_after, 1s + Scaled(2s));  // and no longer
    } else {
      ADD_FAILURE() << "the first round was never cut";
    }
    if (!ends.empty()) {
      EXPECT_EQ(ends.back(), StopReason::shutdown);  // the stop reached the round in flight
    }
  });
}

// An interval of zero would run rounds back to back against the database.
TEST(RunEvery, AnIntervalThatIsNotPositiveIsRefusedBeforeAnyRound) {
  int rounds = 0;
  for (std::chrono::milliseconds interval : {0ms, -5ms}) {
    RunSync([&]() -> asio::awaitable<void> {
      std::function<asio::awaitable<void>(const Context&)> round = [&](const Context&) -> asio::awaitable<void> {
        ++rounds;
        co_return;
      };
      const Context ctx;
      try {
        co_await run_every(ctx, interval, round);
        ADD_FAILURE() << "run_every returned";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      }
    });
  }
  EXPECT_EQ(rounds, 0);
}

}  // namespace
}  // namespace cutoff::effects::internal
