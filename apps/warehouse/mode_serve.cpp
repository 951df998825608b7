#include "warehouse/mode_serve.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <memory>
#include <optional>

#include "cutoff/core/error.hpp"

namespace cutoff::warehouse {

namespace asio = boost::asio;

asio::awaitable<std::string> serve_in_mode(const ModeBounds& bounds, const Context& base, const Context& request,
                                           const ModeWork& work) {
  if (bounds.mode == Mode::cutoff) co_return co_await work(request);
  // Both the detached work and the wait run on this request's executor (its strand), so the
  // shared state needs no lock.
  struct Pending {
    explicit Pending(const asio::any_io_executor& ex) : wake(ex) {}
    asio::steady_timer wake;
    std::optional<std::string> answer;
    std::exception_ptr error;
    bool done = false;
  };
  const auto ex = co_await asio::this_coro::executor;
  auto pending = std::make_shared<Pending>(ex);
  if (bounds.mode == Mode::timeouts) pending->wake.expires_after(bounds.own_timeout);
  else pending->wake.expires_at(asio::steady_timer::time_point::max());
  asio::co_spawn(
      ex,
      [work, ctx = base.with_values(request.values())]() -> asio::awaitable<std::string> {
        co_return co_await work(ctx);
      },
      [pending](std::exception_ptr error, std::string answer) {
        pending->done = true;
        pending->error = error;
        if (!error) pending->answer = std::move(answer);
        pending->wake.cancel();
      });
  boost::system::error_code ec;
  co_await pending->wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (!pending->done)
    throw Error(ErrorCode::deadline_exceeded,
                "the " + std::string(bounds.service) + " service's own timeout (" +
                    std::to_string(bounds.own_timeout.count()) + " ms) fired; the work goes on without a caller",
                request.request_id());
  if (pending->error) std::rethrow_exception(pending->error);
  co_return std::move(*pending->answer);
}

}  // namespace cutoff::warehouse
