// Bulkhead: at most N calls at once, at most M callers waiting, and waiters that honour their
// deadline.
//
//   cutoff::resilience::Bulkhead inventory({.max_concurrent = 8, .max_queue = 32});
//   Stock s = co_await inventory.run(ctx, [&](const cutoff::Context& c) { return fetch_stock(c); });
//   // or hold a slot across several awaits:
//   cutoff::resilience::Bulkhead::Permit slot = co_await inventory.acquire(ctx);
//
// - A free slot is taken at once. Otherwise the caller queues (FIFO) when fewer than
//   `max_queue` callers already wait, and fails at once with `overloaded` when the queue is
//   full: queueing past that point only converts overload into latency.
// - A queued caller whose context stops (its deadline passes, it is cancelled, the server
//   shuts down) leaves the queue at once with the stop's error and never takes a slot. A slot
//   handed to it in the same instant is passed on to the next waiter, not lost.
// - A caller already stopped fails before touching the queue.
//
// Thread-safe: callers may run on different executors and threads; a released slot wakes its
// next waiter by posting to that waiter's executor. Each caller's coroutine must itself run on
// a strand or a single-threaded context, as everywhere in cutoff. The Bulkhead must outlive
// its permits and waiters.
#ifndef CUTOFF_RESILIENCE_BULKHEAD_HPP_
#define CUTOFF_RESILIENCE_BULKHEAD_HPP_

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "cutoff/core/context.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/resilience/internal/awaitable_value.hpp"
#include "cutoff/resilience/metrics.hpp"

namespace cutoff::resilience {

struct BulkheadOptions {
  std::size_t max_concurrent = 16;  // at least 1
  std::size_t max_queue = 64;       // 0: never wait, reject at once when all slots are taken
  std::string name = "default";     // metric label
  ResilienceMetrics* metrics = nullptr;
};

struct BulkheadStats {
  std::size_t in_use = 0;           // slots held now
  std::size_t queued = 0;           // callers waiting now
  std::uint64_t admitted = 0;       // slots granted, at once or after waiting
  std::uint64_t rejected = 0;       // overloaded: the queue was full
  std::uint64_t stopped_waiting = 0;  // left the queue because their context stopped
  std::size_t max_in_use_seen = 0;
};

class Bulkhead {
 public:
  // One slot, given back when destroyed (or on release()). Movable.
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
      if (auto* b = std::exchange(owner_, nullptr)) b->Release();
    }
    explicit operator bool() const noexcept { return owner_ != nullptr; }

   private:
    friend class Bulkhead;
    explicit Permit(Bulkhead* owner) noexcept : owner_(owner) {}
    Bulkhead* owner_ = nullptr;
  };

  explicit Bulkhead(BulkheadOptions options = {});
  Bulkhead(const Bulkhead&) = delete;
  Bulkhead& operator=(const Bulkhead&) = delete;
  ~Bulkhead();

  // Waits for a slot under `ctx` (see the rules above). Throws cutoff::Error: overloaded,
  // or the stop's error.
  boost::asio::awaitable<Permit> acquire(const Context& ctx);
  // A slot if one is free now; an empty permit otherwise (never queues).
  Permit try_acquire();

  // Runs `f(ctx)` holding a slot.
  template <typename F>
  boost::asio::awaitable<internal::CallResult<F>> run(const Context& ctx, F f) {
    return Run(this, ctx, std::move(f));
  }

  BulkheadStats stats() const;
  const BulkheadOptions& options() const noexcept { return options_; }

 private:
  struct Waiter;
  class QueueGuard;

  template <typename F>
  static boost::asio::awaitable<internal::CallResult<F>> Run(Bulkhead* self, Context ctx, F f) {
    Permit permit = co_await self->acquire(ctx);
    co_return co_await f(ctx);
  }

  static boost::asio::awaitable<Permit> Acquire(Bulkhead* self, Context ctx);
  void Release() noexcept;
  void PublishLocked() noexcept;

  BulkheadOptions options_;
  mutable std::mutex mu_;
  std::deque<std::shared_ptr<Waiter>> waiters_;
  BulkheadStats stats_;
  observe::Counter* rejected_full_ = nullptr;
  observe::Counter* rejected_stopped_ = nullptr;
  observe::Gauge* in_use_gauge_ = nullptr;
  observe::Gauge* queued_gauge_ = nullptr;
};

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_BULKHEAD_HPP_
