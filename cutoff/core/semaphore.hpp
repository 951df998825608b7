// Semaphore: a counting semaphore for Asio coroutines whose waiters honour their context.
//
//   cutoff::Semaphore downloads(4);  // at most 4 at once
//   {
//     cutoff::Semaphore::Permit permit = co_await downloads.acquire(ctx);
//     co_await fetch(ctx, url);
//   }  // the permit goes back (to the longest waiter, if any)
//   if (auto permit = downloads.try_acquire()) { ... }  // never waits
//
// - A free permit is taken at once: one atomic compare-and-swap, no lock, no allocation.
// - Otherwise the caller waits in FIFO order. A released permit goes straight to the first
//   waiter; it is never free in between, and try_acquire() fails while anyone waits. So a
//   fresh caller (or a loop of try_acquire) cannot barge past callers that are already
//   queued: those have waited longest and are closest to their deadlines, and barging would
//   let newcomers starve them until their budgets run out. The price is paid under heavy
//   contention only: a handed-over permit is idle until its waiter's executor runs it.
// - A waiter whose context stops (its deadline passes, it is cancelled, the server shuts
//   down) leaves the queue at once and fails with cutoff::Error::stopped (the stop's reason).
//   A caller whose context is already stopped fails before touching the queue.
// - A waiter whose coroutine is cancelled through Asio (`a || b`, a parent's terminal
//   cancellation) leaves the queue and fails with operation_aborted.
// - A permit handed to a waiter in the same instant it stops or is cancelled is passed on to
//   the next waiter: it is never lost, and a stopped caller never starts its work.
// - `max_waiters` bounds the queue: when that many already wait, acquire() fails at once
//   with `overloaded` instead of turning overload into latency.
// - `newest_first_after` turns FIFO into LIFO under congestion: once the longest waiter has
//   waited that long, a released permit goes to the newest waiter instead. When callers
//   arrive faster than permits come back, FIFO hands every permit to the caller closest to its
//   deadline, which is then cut part-way through its work, and nothing completes; newest first
//   hands it to the caller with the most budget left, so the permits keep producing complete
//   work, and the oldest waiters leave at their deadlines without having held anything. Off
//   by default (Duration::max()); zero serves newest first whenever anyone waits.
//
// Thread-safe: callers may run on different executors and threads (each coroutine on a
// strand or a single-threaded context, as everywhere in cutoff). A release wakes the next
// waiter by posting to that waiter's executor, never inline on the releasing thread. A
// waiting caller costs one allocation. The Semaphore must outlive its permits and waiters.
#ifndef CUTOFF_CORE_SEMAPHORE_HPP_
#define CUTOFF_CORE_SEMAPHORE_HPP_

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

#include "cutoff/core/context.hpp"
#include "cutoff/core/internal/wait_list.hpp"

namespace cutoff {

class Mutex;

class Semaphore : private internal::WaitOwner {
 public:
  static constexpr std::size_t kUnlimited = std::numeric_limits<std::size_t>::max();

  // One permit, given back when destroyed (or on release()). Movable; empty when
  // default-constructed, moved from, or returned by a try_acquire() that failed.
  class Permit {
   public:
    Permit() noexcept = default;
    Permit(Permit&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)) {}
    Permit& operator=(Permit&& other) noexcept {
      if (this != &other) {
        release();
        owner_ = std::exchange(other.owner_, nullptr);
      }
      return *this;
    }
    ~Permit() { release(); }

    void release() noexcept {
      if (Semaphore* s = std::exchange(owner_, nullptr)) s->release();
    }
    // Keeps the permit taken without giving it back: someone calls Semaphore::release() for
    // it later (a permit handed across a boundary, or a consumed work item).
    void detach() noexcept { owner_ = nullptr; }
    explicit operator bool() const noexcept { return owner_ != nullptr; }

   private:
    friend class Semaphore;
    explicit Permit(Semaphore* owner) noexcept : owner_(owner) {}
    Semaphore* owner_ = nullptr;
  };

  explicit Semaphore(std::size_t permits, std::size_t max_waiters = kUnlimited,
                     Duration newest_first_after = Duration::max());
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;
  ~Semaphore() override;

  // Waits for a permit under `ctx` (see the rules above). Throws cutoff::Error (the stop's
  // error, or overloaded when `max_waiters` callers already wait), or
  // boost::system::system_error(operation_aborted) when cancelled through Asio.
  boost::asio::awaitable<Permit> acquire(const Context& ctx) { return Acquire(this, ctx); }
  // A permit if one is free now and nobody waits; an empty permit otherwise.
  Permit try_acquire() noexcept { return TryTake() ? Permit(this) : Permit(); }

  // Adds `n` permits: to the waiters first, in order, then to the free count. A Permit calls
  // it when it goes; call it directly for detached permits, or to use the semaphore as a
  // count of available items (release() when one is produced, acquire() and detach() to
  // consume one).
  void release(std::size_t n = 1) noexcept {
    std::uint64_t s = state_.load(std::memory_order_relaxed);
    if ((s & kWaiters) == 0 && state_.compare_exchange_weak(s, s + static_cast<std::uint64_t>(n) * kOne,
                                                            std::memory_order_release, std::memory_order_relaxed))
      return;
    ReleaseSlow(n);
  }

  // Permits free now (0 while anyone waits).
  std::size_t available() const noexcept {
    return static_cast<std::size_t>(state_.load(std::memory_order_relaxed) >> 1);
  }
  // Callers waiting now.
  std::size_t waiting() const;
  std::size_t max_waiters() const noexcept { return max_waiters_; }

 private:
  friend class Mutex;

  // Free permits in the high bits, `kWaiters` set while the queue is not empty. While it is
  // set no permit is free, and only holders of mu_ change the word.
  static constexpr std::uint64_t kWaiters = 1;
  static constexpr std::uint64_t kOne = 2;

  static boost::asio::awaitable<Permit> Acquire(Semaphore* self, Context ctx);
  bool TryTake() noexcept {
    std::uint64_t s = state_.load(std::memory_order_relaxed);
    while ((s & kWaiters) == 0 && s >= kOne) {
      if (state_.compare_exchange_weak(s, s - kOne, std::memory_order_acquire, std::memory_order_relaxed)) return true;
    }
    return false;
  }
  // Waiters queued, or the compare-and-swap above lost a race.
  void ReleaseSlow(std::size_t n) noexcept;
  // The slow path: queues, and returns holding one permit.
  boost::asio::awaitable<void> WaitForPermit(const Context& ctx);
  void PassOn(internal::Waiter& w) noexcept override;
  void LeftLocked(internal::WaitList& list) noexcept override;
  // Under mu_: the waiter the next permit goes to (see newest_first_after), off the queue.
  internal::Waiter* NextLocked() noexcept;

  std::atomic<std::uint64_t> state_;
  internal::WaitList waiters_;  // guarded by mu_
  std::size_t max_waiters_;
  Duration newest_first_after_;
};

}  // namespace cutoff

#endif  // CUTOFF_CORE_SEMAPHORE_HPP_
