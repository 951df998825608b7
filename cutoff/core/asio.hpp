// Bridging a Context to Boost.Asio: a stop aborts what the coroutine is waiting on.
//
// Three tools, from the most convenient to the cheapest:
//
//   // 1. Run a coroutine (or one awaitable operation) under a context. Fails fast when the
//   //    context is already stopped; when it stops mid-way, the inner work is cancelled
//   //    (Asio `terminal` cancellation) and cutoff::Error with the stop's reason is thrown.
//   int rows = co_await cutoff::with_context(ctx, query_rows(ctx));
//   co_await cutoff::with_context(ctx, timer.async_wait(asio::use_awaitable));
//
//   // 2. Wait for the stop itself, e.g. raced against other work with `||`.
//   cutoff::StopReason why = co_await cutoff::async_wait_stop(ctx, asio::use_awaitable);
//
//   // 3. Per-operation cancellation for callback-style code: the context's stop emits
//   //    `terminal` on the slot, on `executor` (Asio signals are not thread-safe).
//   cutoff::StopSignal stop(ctx, executor);
//   socket.async_read_some(buf, asio::bind_cancellation_slot(stop.slot(), handler));
//
// Asio cancellation signals and slots are not thread-safe, and a context may be stopped
// from any thread (the deadline timer runs its own): every bridge here posts to the
// operation's executor before touching Asio state. Keep one request's coroutine tree on one
// strand (or a single-threaded io_context).
#ifndef CUTOFF_CORE_ASIO_HPP_
#define CUTOFF_CORE_ASIO_HPP_

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "cutoff/core/cancel.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"

namespace cutoff {

namespace internal {

template <typename Handler>
class StopWaitOp : public std::enable_shared_from_this<StopWaitOp<Handler>> {
 public:
  using Executor = boost::asio::associated_executor_t<Handler>;

  StopWaitOp(Handler handler)
      : handler_(std::move(handler)),
        executor_(boost::asio::get_associated_executor(handler_)),
        work_(boost::asio::prefer(executor_, boost::asio::execution::outstanding_work.tracked)) {}

  void start(const CancelToken& token) {
    auto slot = boost::asio::get_associated_cancellation_slot(handler_);
    if (slot.is_connected()) {
      slot.assign([self = this->shared_from_this()](boost::asio::cancellation_type type) {
        if ((type & (boost::asio::cancellation_type::terminal | boost::asio::cancellation_type::partial |
                     boost::asio::cancellation_type::total)) != boost::asio::cancellation_type::none) {
          boost::asio::post(self->executor_, [self] {
            self->complete(boost::asio::error::operation_aborted, StopReason::none);
          });
        }
      });
    }
    // Runs at once if the token already stopped; either way completion is posted.
    registration_.emplace(token, [self = this->shared_from_this()](StopReason reason) {
      boost::asio::post(self->executor_, [self, reason] { self->complete({}, reason); });
    });
  }

 private:
  void complete(boost::system::error_code ec, StopReason reason) {
    if (done_) return;
    done_ = true;
    boost::asio::get_associated_cancellation_slot(handler_).clear();
    registration_.reset();  // breaks the reference cycle through the callback
    Handler handler = std::move(handler_);
    auto work = std::move(work_);
    std::move(handler)(ec, reason);
  }

  Handler handler_;
  Executor executor_;
  std::decay_t<decltype(boost::asio::prefer(std::declval<Executor>(),
                                            boost::asio::execution::outstanding_work.tracked))>
      work_;
  std::optional<CancelRegistration> registration_;
  bool done_ = false;  // touched only on executor_
};

// Runs `op`, storing its value in `*out`, and completes with its exception instead of
// throwing it: Asio's `||` waits for the first operation that *succeeds*, so an `op` that
// failed would otherwise wait for the other side (a stop that may never come).
template <typename T, typename Out>
boost::asio::awaitable<std::exception_ptr> CaptureOutcome(boost::asio::awaitable<T> op, Out* out) {
  std::exception_ptr error;
  try {
    if constexpr (std::is_void_v<T>)
      co_await std::move(op);
    else
      out->emplace(co_await std::move(op));
  } catch (...) {
    error = std::current_exception();
  }
  co_return error;
}

}  // namespace internal

// Completes with (error_code{}, reason) when `ctx` stops, or with operation_aborted when the
// operation is cancelled through its cancellation slot. Completion runs on the handler's
// associated executor. Waiting on a context that never stops completes only by cancellation;
// until it completes, the operation keeps its executor's work count up (an io_context's run()
// does not return), like any pending Asio operation.
template <typename CompletionToken>
auto async_wait_stop(const Context& ctx, CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, StopReason)>(
      [](auto handler, CancelToken stop) {
        using Handler = decltype(handler);
        auto op = std::make_shared<internal::StopWaitOp<Handler>>(std::move(handler));
        op->start(stop);
      },
      token, ctx.token());
}

// Runs `op` under `ctx`: fails fast with cutoff::Error if `ctx` is already stopped, and if
// `ctx` stops first, cancels `op` (terminal), waits for it to unwind, and throws
// cutoff::Error with the stop's reason. When `op` fails first, its exception is rethrown at
// once. Cancellation of the calling coroutine still reaches `op` as usual. An unbound
// context adds nothing but the check.
template <typename T>
boost::asio::awaitable<T> with_context(Context ctx, boost::asio::awaitable<T> op) {
  ctx.check();
  if (!ctx.bound()) co_return co_await std::move(op);
  using namespace boost::asio::experimental::awaitable_operators;
  std::conditional_t<std::is_void_v<T>, std::monostate, std::optional<T>> value;
  auto result = co_await (internal::CaptureOutcome(std::move(op), &value) ||
                          async_wait_stop(ctx, boost::asio::use_awaitable));
  if (result.index() == 1) throw Error::stopped(std::get<1>(result), ctx.request_id());
  if (std::exception_ptr error = std::get<0>(result)) std::rethrow_exception(error);
  if constexpr (!std::is_void_v<T>) co_return std::move(*value);
}

// Emits Asio `terminal` cancellation on its slot when a context stops. The emission is
// posted to `executor`, which must be the executor of the operations bound to the slot.
// One slot serves one outstanding operation at a time (an Asio rule).
template <typename Executor>
class StopSignal {
 public:
  StopSignal(const Context& ctx, Executor executor) : shared_(std::make_shared<Shared>()) {
    registration_ = CancelRegistration(ctx.token(), [shared = shared_, executor](StopReason) {
      boost::asio::post(executor, [shared] {
        if (shared->alive) shared->signal.emit(boost::asio::cancellation_type::terminal);
      });
    });
  }
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;
  // Must run on `executor` (like every use of the slot).
  ~StopSignal() {
    registration_.reset();
    shared_->alive = false;
  }

  boost::asio::cancellation_slot slot() noexcept { return shared_->signal.slot(); }

  template <typename CompletionToken>
  auto bind(CompletionToken&& token) {
    return boost::asio::bind_cancellation_slot(slot(), std::forward<CompletionToken>(token));
  }

 private:
  struct Shared {
    boost::asio::cancellation_signal signal;
    bool alive = true;
  };
  std::shared_ptr<Shared> shared_;
  CancelRegistration registration_;
};

}  // namespace cutoff

#endif  // CUTOFF_CORE_ASIO_HPP_
