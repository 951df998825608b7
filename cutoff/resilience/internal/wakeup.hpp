// Internal: wakes one waiting coroutine from any thread.
//
// The waiter keeps its timer in its own coroutine frame and lends the Wakeup a pointer only
// while it waits, so the waking side (a bulkhead releasing a slot on another thread) never
// owns, destroys or touches an Asio object off its executor: it posts to the waiter's
// executor, and the post finds the timer there or finds the waiter gone.
//
//   auto w = std::make_shared<Wakeup>();
//   std::thread([w] { w->wake(); }).detach();
//   bool woken = co_await w->wait();  // false: the wait was cancelled through Asio first
#ifndef CUTOFF_RESILIENCE_INTERNAL_WAKEUP_HPP_
#define CUTOFF_RESILIENCE_INTERNAL_WAKEUP_HPP_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>
#include <mutex>

namespace cutoff::resilience::internal {

class Wakeup : public std::enable_shared_from_this<Wakeup> {
 public:
  // One-shot and thread-safe; later calls do nothing.
  void wake() {
    std::lock_guard lock(mu_);
    if (woken_) return;
    woken_ = true;
    if (timer_) {
      boost::asio::post(executor_, [self = shared_from_this()] {
        std::lock_guard inner(self->mu_);
        if (self->timer_) self->timer_->expires_at(boost::asio::steady_timer::time_point::min());
      });
    }
  }

  // Waits on the calling coroutine's executor. True when woken (at once if that already
  // happened), false when the wait was cancelled through Asio first.
  boost::asio::awaitable<bool> wait() {
    auto executor = co_await boost::asio::this_coro::executor;
    boost::asio::steady_timer timer(executor, boost::asio::steady_timer::time_point::max());
    {
      std::lock_guard lock(mu_);
      if (woken_) co_return true;
      timer_ = &timer;
      executor_ = executor;
    }
    Lend lend{this};  // runs even when the frame is destroyed mid-wait
    co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    std::lock_guard lock(mu_);
    co_return woken_;
  }

 private:
  struct Lend {
    Wakeup* self;
    ~Lend() {
      std::lock_guard lock(self->mu_);
      self->timer_ = nullptr;
    }
  };

  std::mutex mu_;
  bool woken_ = false;
  boost::asio::steady_timer* timer_ = nullptr;  // the waiter's, while it waits
  boost::asio::any_io_executor executor_;
};

}  // namespace cutoff::resilience::internal

#endif  // CUTOFF_RESILIENCE_INTERNAL_WAKEUP_HPP_
