// Internal: the queue of coroutines waiting on a Mutex, Semaphore, Event, Latch or Channel,
// and the one wait that all of them share.
//
// Not part of the public API; include cutoff/core/mutex.hpp, semaphore.hpp, event.hpp,
// latch.hpp or channel.hpp instead. Installed because Channel<T> (a template) needs it.
//
// The protocol, under the owner's mutex `mu_`:
//  - a caller that cannot proceed puts a Waiter at the back of a WaitList and calls Await();
//  - whoever gives it what it waits for pops it from the front and calls GrantLocked() (or
//    CloseLocked()); the wake is posted to the waiter's executor, never run inline;
//  - a stop of the waiter's context removes it from the list at once, from the stopping
//    thread (a CancelCallback), and wakes it with the stop's reason;
//  - an Asio cancellation of the waiting coroutine, or its frame being destroyed mid-wait,
//    removes it when it resumes (or unwinds);
//  - a grant that reached a waiter in the same instant it stopped or was cancelled is given
//    back through PassOn(), so it goes to the next waiter instead of being lost.
#ifndef CUTOFF_CORE_INTERNAL_WAIT_LIST_HPP_
#define CUTOFF_CORE_INTERNAL_WAIT_LIST_HPP_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "cutoff/core/context.hpp"
#include "cutoff/core/stop_reason.hpp"

namespace cutoff::internal {

class WaitList;

// One queued coroutine. Shared (std::shared_ptr) between the waiting frame and a wake posted
// to its executor, which may run after the frame is gone.
class Waiter : public std::enable_shared_from_this<Waiter> {
 public:
  enum class State : std::uint8_t {
    queued,   // in a list, waiting
    granted,  // popped by whoever gave it what it waited for
    closed,   // popped because the owner was closed (Channel)
    stopped,  // removed by its context's stop; `stop` says why
    left,     // removed by itself (Asio cancellation, frame destroyed)
  };

  Waiter() = default;
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

  // Guarded by the owner's mutex.
  State state = State::queued;
  StopReason stop = StopReason::none;
  std::chrono::steady_clock::time_point queued_at{};  // set by owners that serve by age

  // Thread-safe, at most once: makes the waiting coroutine resume by posting to its
  // executor (at once, if it has not started waiting yet).
  void Wake() noexcept;

 private:
  friend class WaitList;
  friend class WaitOwner;

  // Guarded by the owner's mutex.
  Waiter* prev_ = nullptr;
  Waiter* next_ = nullptr;
  WaitList* list_ = nullptr;

  // The waiting frame's timer, while it waits; guarded by wake_mu_.
  std::mutex wake_mu_;
  bool woken_ = false;
  boost::asio::steady_timer* timer_ = nullptr;
  boost::asio::any_io_executor executor_;
};

// An intrusive FIFO of waiters. Not thread-safe: guarded by its owner's mutex.
class WaitList {
 public:
  WaitList() = default;
  WaitList(const WaitList&) = delete;
  WaitList& operator=(const WaitList&) = delete;

  bool empty() const noexcept { return head_ == nullptr; }
  std::size_t size() const noexcept { return size_; }

  void PushBack(Waiter* w) noexcept;
  // Null when empty.
  Waiter* PopFront() noexcept;
  Waiter* PopBack() noexcept;
  // The longest waiter; null when empty.
  Waiter* front() const noexcept { return head_; }
  void Remove(Waiter* w) noexcept;

 private:
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
  std::size_t size_ = 0;
};

// The base of every waitable: its mutex and the shared wait.
class WaitOwner {
 public:
  WaitOwner(const WaitOwner&) = delete;
  WaitOwner& operator=(const WaitOwner&) = delete;

 protected:
  // What a grant that lands together with a stop (or an Asio cancellation) means.
  enum class GrantPolicy : std::uint8_t {
    stop_wins,   // pass the grant on and report the stop (a lock, a permit, a received value)
    grant_wins,  // the grant already had its effect and is reported (a value that was sent)
  };

  WaitOwner() = default;
  virtual ~WaitOwner() = default;

  // Under mu_, for a waiter the caller just popped from its list: marks it and wakes it.
  static void GrantLocked(Waiter* w) noexcept {
    w->state = Waiter::State::granted;
    w->Wake();
  }
  static void CloseLocked(Waiter* w) noexcept {
    w->state = Waiter::State::closed;
    w->Wake();
  }

  // Waits until `w`, which the caller queued under mu_, is granted or closed: returns that
  // state. Throws Error::stopped when `ctx` stops first (or in the same instant as a
  // stop_wins grant), and system_error(operation_aborted) when the coroutine is cancelled
  // through Asio. Every way out, including the frame being destroyed, takes `w` off its list
  // or passes its grant on. `ctx` must outlive the wait.
  boost::asio::awaitable<Waiter::State> Await(std::shared_ptr<Waiter> w, const Context& ctx, GrantPolicy policy);

  // Called without mu_ when a granted waiter leaves without taking its grant.
  virtual void PassOn(Waiter& w) noexcept = 0;
  // Called under mu_ after a waiter left `list` without a grant.
  virtual void LeftLocked(WaitList& list) noexcept { static_cast<void>(list); }

  mutable std::mutex mu_;

 private:
  class Departure;
  void StopLocked(Waiter& w, StopReason reason) noexcept;
  // Under mu_: takes a still-queued `w` off its list (state left). Returns its state.
  Waiter::State SettleLocked(Waiter& w) noexcept;
};

}  // namespace cutoff::internal

#endif  // CUTOFF_CORE_INTERNAL_WAIT_LIST_HPP_
