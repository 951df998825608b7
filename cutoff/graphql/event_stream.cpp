#include "cutoff/graphql/event_stream.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cutoff/core/asio.hpp"

namespace cutoff::graphql {

namespace asio = boost::asio;

ListEventStream::ListEventStream(std::vector<Data> events, Duration interval, std::exception_ptr end_error)
    : events_(std::move(events)), interval_(interval), end_error_(std::move(end_error)) {}

asio::awaitable<std::optional<Data>> ListEventStream::next(const Context& ctx) {
  ctx.check();
  if (next_ == events_.size()) {
    if (end_error_) std::rethrow_exception(end_error_);
    co_return std::nullopt;
  }
  const TimePoint now = SteadyClock::now();
  if (next_ == 0) start_ = now;
  const TimePoint due = start_ + interval_ * static_cast<Duration::rep>(next_);
  if (due > now) {
    asio::steady_timer timer(co_await asio::this_coro::executor, due);
    co_await with_context(ctx, timer.async_wait(asio::use_awaitable));
  }
  co_return std::move(events_[next_++]);
}

}  // namespace cutoff::graphql
