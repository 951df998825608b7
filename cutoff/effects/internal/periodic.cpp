#include "cutoff/effects/internal/periodic.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <algorithm>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"

namespace cutoff::effects::internal {

namespace asio = boost::asio;

asio::awaitable<void> run_every(const Context& ctx, std::chrono::milliseconds interval,
                                std::function<asio::awaitable<void>(const Context&)> round) {
  if (interval <= std::chrono::milliseconds::zero())
    throw Error(ErrorCode::invalid_argument, "a sweeper's interval must be positive", ctx.request_id());
  // Rounds follow each other, so a budget longer than a short interval overlaps nothing.
  const std::chrono::milliseconds round_budget =
      std::clamp(interval, std::chrono::milliseconds(1'000), std::chrono::milliseconds(30'000));
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor);
  while (!ctx.stop_requested()) {
    try {
      const Context round_ctx = ctx.with_timeout(round_budget);
      co_await round(round_ctx);
    } catch (...) {  // the next round tries again
    }
    timer.expires_after(interval);
    try {
      co_await with_context(ctx, timer.async_wait(asio::use_awaitable));
    } catch (const Error&) {
      co_return;
    }
  }
}

}  // namespace cutoff::effects::internal
