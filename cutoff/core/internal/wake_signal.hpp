// WakeSignal: wakes one coroutine from any thread, without the signalling side owning any
// Asio object.
//
// The waiting coroutine keeps its timer in its own frame; the signal only points at it while
// the coroutine waits. So a thread (an SQLite worker, a pool releasing a connection) can hold
// the signal for as long as it likes: it never destroys an Asio object, never touches one off
// its executor, and never posts to an executor whose waiter is gone. Used by the SQL pool and
// the SQLite driver (a connection or a statement's result handed over) and by the bulkhead (a
// slot handed over).
//
//   auto signal = std::make_shared<WakeSignal>();
//   std::thread([signal] { do_work(); signal->Signal(); }).detach();
//   bool woken = co_await signal->Wait();  // false: the wait was cancelled through Asio
#ifndef CUTOFF_CORE_INTERNAL_WAKE_SIGNAL_HPP_
#define CUTOFF_CORE_INTERNAL_WAKE_SIGNAL_HPP_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>
#include <mutex>

namespace cutoff::internal {

class WakeSignal : public std::enable_shared_from_this<WakeSignal> {
 public:
  // Thread-safe, one-shot. Returns false if it was already signalled.
  bool Signal() {
    std::lock_guard lock(mu_);
    if (signalled_) return false;
    signalled_ = true;
    if (timer_)
      boost::asio::post(executor_, [self = shared_from_this()] {
        std::lock_guard inner(self->mu_);
        if (self->timer_) self->timer_->expires_at(boost::asio::steady_timer::time_point::min());
      });
    return true;
  }

  bool signalled() const {
    std::lock_guard lock(mu_);
    return signalled_;
  }

  // Waits for Signal() on the calling coroutine's executor. Returns true when signalled (at
  // once if that already happened), false when the wait was cancelled through Asio first.
  boost::asio::awaitable<bool> Wait() {
    auto executor = co_await boost::asio::this_coro::executor;
    boost::asio::steady_timer timer(executor, boost::asio::steady_timer::time_point::max());
    {
      std::lock_guard lock(mu_);
      if (signalled_) co_return true;
      timer_ = &timer;
      executor_ = executor;
    }
    Detach detach{this};
    co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    std::lock_guard lock(mu_);
    co_return signalled_;
  }

 private:
  // Runs even when the coroutine frame is destroyed mid-wait.
  struct Detach {
    WakeSignal* self;
    ~Detach() {
      std::lock_guard lock(self->mu_);
      self->timer_ = nullptr;
    }
  };

  mutable std::mutex mu_;
  bool signalled_ = false;
  boost::asio::steady_timer* timer_ = nullptr;  // the waiter's timer, while it waits
  boost::asio::any_io_executor executor_;
};

}  // namespace cutoff::internal

#endif  // CUTOFF_CORE_INTERNAL_WAKE_SIGNAL_HPP_
