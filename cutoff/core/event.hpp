// Event: a flag that coroutines wait for, with waits that honour their context.
//
//   cutoff::Event ready;
//   // one coroutine:
//   co_await ready.wait(ctx);  // returns once set(); throws cutoff::Error when ctx stops first
//   // another, on any thread:
//   ready.set();               // wakes every waiter, each on its own executor
//
// - set() wakes everyone waiting and lets later wait() calls through at once, until
//   reset(). wait() on a set event is one atomic load and no allocation.
// - A waiter whose context stops leaves at once with cutoff::Error::stopped (the stop's
//   reason); a caller already stopped fails before looking at the flag; a waiter cancelled
//   through Asio leaves with operation_aborted. When set() and a stop land in the same
//   instant, the stop wins (nothing is lost: the event stays set for everyone else).
// - reset() affects later waits only: waiters that set() already released stay released.
//
// Thread-safe; set() posts each wake to the waiter's executor. For "wait until N things have
// happened" see Latch (latch.hpp). The Event must outlive its waiters.
#ifndef CUTOFF_CORE_EVENT_HPP_
#define CUTOFF_CORE_EVENT_HPP_

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <cstddef>

#include "cutoff/core/context.hpp"
#include "cutoff/core/internal/wait_list.hpp"

namespace cutoff {

class Event : private internal::WaitOwner {
 public:
  explicit Event(bool set = false) noexcept : set_(set) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() override;

  // Sets the flag and wakes every waiter. Idempotent.
  void set() noexcept;
  void reset() noexcept;
  bool is_set() const noexcept { return set_.load(std::memory_order_acquire); }

  // Returns once the event is set. Throws cutoff::Error (the stop's error), or
  // boost::system::system_error(operation_aborted) when cancelled through Asio.
  boost::asio::awaitable<void> wait(const Context& ctx) { return Wait(this, ctx); }

  // Callers waiting now.
  std::size_t waiting() const;

 private:
  static boost::asio::awaitable<void> Wait(Event* self, Context ctx);
  void PassOn(internal::Waiter&) noexcept override {}

  std::atomic<bool> set_;
  internal::WaitList waiters_;  // guarded by mu_
};

}  // namespace cutoff

#endif  // CUTOFF_CORE_EVENT_HPP_
