// Mutex: an asynchronous mutex for Asio coroutines whose waiters honour their context.
//
// For state that coroutines on different strands or threads share across an await: a
// std::mutex must not be held over a co_await (it would block the thread, and the coroutine
// may resume elsewhere); this one suspends the waiting coroutine instead of its thread.
//
//   cutoff::Mutex mu;
//   {
//     cutoff::Mutex::Guard lock = co_await mu.lock(ctx);  // throws cutoff::Error on a stop
//     co_await refresh_token(ctx);                          // still held across the await
//   }  // unlocked: the longest waiter gets the lock
//   if (cutoff::Mutex::Guard lock = mu.try_lock()) { ... }  // never waits
//
// The rules are Semaphore's with one permit (semaphore.hpp):
// - An uncontended lock() is one compare-and-swap and no allocation (its coroutine frame
//   comes from Asio's per-thread cache); unlock is one compare-and-swap.
// - Waiters are served in arrival order; an unlock hands the lock straight to the first,
//   and try_lock() fails while anyone waits (no barging past queued callers, so none starves
//   until its deadline).
// - A waiter whose context stops leaves the queue at once with cutoff::Error::stopped (the
//   stop's reason); a caller already stopped fails before touching the queue; a waiter
//   cancelled through Asio leaves with operation_aborted. A lock handed to a waiter in the
//   same instant it stops goes to the next waiter.
// - Not recursive, and not tied to a coroutine: a Guard may be moved to, and unlocked by,
//   another coroutine.
//
// Thread-safe; an unlock wakes the next waiter by posting to its executor. The Mutex must
// outlive its guards and waiters.
#ifndef CUTOFF_CORE_MUTEX_HPP_
#define CUTOFF_CORE_MUTEX_HPP_

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <utility>

#include "cutoff/core/context.hpp"
#include "cutoff/core/semaphore.hpp"

namespace cutoff {

class Mutex {
 public:
  // Holds the lock until destroyed (or unlock()). Movable; empty when default-constructed,
  // moved from, or returned by a try_lock() that failed.
  class Guard {
   public:
    Guard() noexcept = default;
    Guard(Guard&& other) noexcept : mutex_(std::exchange(other.mutex_, nullptr)) {}
    Guard& operator=(Guard&& other) noexcept {
      if (this != &other) {
        unlock();
        mutex_ = std::exchange(other.mutex_, nullptr);
      }
      return *this;
    }
    ~Guard() { unlock(); }

    void unlock() noexcept {
      if (Mutex* m = std::exchange(mutex_, nullptr)) m->permit_.release();
    }
    bool owns_lock() const noexcept { return mutex_ != nullptr; }
    explicit operator bool() const noexcept { return owns_lock(); }
    Mutex* mutex() const noexcept { return mutex_; }

   private:
    friend class Mutex;
    explicit Guard(Mutex* m) noexcept : mutex_(m) {}
    Mutex* mutex_ = nullptr;
  };

  Mutex() : permit_(1) {}
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // Waits for the lock under `ctx`. Throws cutoff::Error (the stop's error), or
  // boost::system::system_error(operation_aborted) when cancelled through Asio.
  boost::asio::awaitable<Guard> lock(const Context& ctx) { return Lock(this, ctx); }
  // The lock if it is free now and nobody waits; an empty guard otherwise.
  Guard try_lock() noexcept { return permit_.TryTake() ? Guard(this) : Guard(); }

  bool locked() const noexcept { return permit_.available() == 0; }
  std::size_t waiting() const { return permit_.waiting(); }

 private:
  static boost::asio::awaitable<Guard> Lock(Mutex* self, Context ctx);

  Semaphore permit_;
};

}  // namespace cutoff

#endif  // CUTOFF_CORE_MUTEX_HPP_
