// AdaptiveLimit: a concurrency limit that finds how many runs at once still finish in time.
//
//   cutoff::resilience::AdaptiveLimit valuations({.max_limit = 8, .name = "valuation"});
//   {
//     cutoff::resilience::AdaptiveLimit::Permit p = co_await valuations.acquire(ctx);
//     co_await value_stock(ctx, warehouse);
//     p.completed();  // a service-time sample; p.stopped() when the run was cut at its deadline
//   }
//   // or, the same in one call:
//   co_await valuations.run(ctx, [&](const cutoff::Context& c) { return value_stock(c, warehouse); });
//
// Why: a fixed limit (a pool of N connections, a bulkhead of N slots) is right for one load and
// wrong for another. When the work competes for something the limit does not count (cores
// shared with other work, the database's own locks), running more of it at once makes each run
// slower without finishing more; past the point where runs no longer fit their callers'
// budgets, every run is cut at its deadline and nothing completes, while each of them held a
// slot until then. Admission by service time (service_time_admission.hpp) refuses callers who
// arrive with too little budget; this keeps the runs themselves short enough to fit.
//
// The rule, per window of completed runs (`window` samples, at least 4; or `max_window_age`):
// - The window's median service time is compared with the baseline, the lowest window median
//   seen within `baseline_max_age` (the service at its least contended).
// - Congested when that median is above `tolerance` times the baseline, or when more than
//   `max_stopped_share` of the window's runs were stopped at their deadline holding a permit.
//   The limit then drops to `backoff` times itself (at least by one, never below `min_limit`).
// - Otherwise, if callers had to wait for a permit during the window, it grows by one (up to
//   `max_limit`): more would have run had it been higher, and the last window says it can be.
// - Runs that fail for other reasons record nothing.
//
// Waiting: callers queue for a permit like a Semaphore's (core/semaphore.hpp): FIFO, LIFO once
// the longest waiter has waited `newest_first_after`, at most `max_queue` waiters (then
// `overloaded` at once, with a pushback, Error::retry_after: the last window's median run
// times the queue over the limit, about when a retry would find room), and a waiter whose
// context stops leaves with the stop's error without ever holding a permit. A lowered limit
// takes effect as permits come back: none is revoked from a run.
//
// Thread-safe. The uncontended acquire is the Semaphore's (one compare-and-swap) plus one clock
// read; the release takes one short lock. The clock is injectable, for tests. The limit must
// outlive its permits and waiters.
#ifndef CUTOFF_RESILIENCE_ADAPTIVE_LIMIT_HPP_
#define CUTOFF_RESILIENCE_ADAPTIVE_LIMIT_HPP_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/core/semaphore.hpp"
#include "cutoff/resilience/internal/awaitable_value.hpp"
#include "cutoff/resilience/metrics.hpp"

namespace cutoff::resilience {

struct AdaptiveLimitOptions {
  std::size_t min_limit = 1;       // at least 1
  std::size_t max_limit = 16;      // at least min_limit
  std::size_t initial_limit = 0;   // 0: max_limit
  double tolerance = 2.0;          // congested above this times the baseline (> 1)
  double max_stopped_share = 0.1;  // congested when more of a window's runs were cut at their deadline
  double backoff = 0.75;           // a congested window multiplies the limit by this (0 to 1)
  std::size_t window = 16;         // completed runs per window (at least 4)
  Duration max_window_age = std::chrono::seconds(1);     // a window closes then with 4 runs or more
  Duration baseline_max_age = std::chrono::seconds(60);  // the baseline is re-learnt after this
  std::size_t max_queue = 1024;                          // waiters; more fail with overloaded
  Duration newest_first_after = Duration::max();         // see core/semaphore.hpp
  std::string name = "default";                          // metric label
  const Clock* clock = nullptr;                          // null: Clock::steady()
  ResilienceMetrics* metrics = nullptr;
};

struct AdaptiveLimitStats {
  std::size_t limit = 0;        // runs allowed at once now
  std::size_t in_use = 0;       // permits held now
  std::size_t waiting = 0;      // callers queued now
  std::uint64_t decreases = 0;  // congested windows
  std::uint64_t increases = 0;  // windows that raised the limit
  std::uint64_t samples = 0;    // completed runs recorded
  std::uint64_t stopped = 0;    // runs stopped at their deadline while holding a permit
  Duration baseline{};          // the lowest recent window median (zero before the first)
  Duration last_median{};       // the last closed window's median
};

class AdaptiveLimit {
 public:
  // One run's permit. Say how the run ended: completed() (a sample), stopped() (cut at its
  // deadline: a congestion signal); dropped untold (a failure), it only gives the permit back.
  // Movable.
  class Permit {
   public:
    Permit() noexcept = default;
    Permit(Permit&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)), inner_(std::move(other.inner_)), started_(other.started_) {}
    Permit& operator=(Permit&& other) noexcept {
      if (this != &other) {
        release();
        owner_ = std::exchange(other.owner_, nullptr);
        inner_ = std::move(other.inner_);
        started_ = other.started_;
      }
      return *this;
    }
    ~Permit() { release(); }

    void completed() noexcept { Finish(Outcome::completed); }
    void stopped() noexcept { Finish(Outcome::stopped); }
    void release() noexcept { Finish(Outcome::failed); }
    explicit operator bool() const noexcept { return owner_ != nullptr; }

   private:
    friend class AdaptiveLimit;
    enum class Outcome { completed, stopped, failed };
    Permit(AdaptiveLimit* owner, Semaphore::Permit inner, TimePoint started) noexcept
        : owner_(owner), inner_(std::move(inner)), started_(started) {}
    void Finish(Outcome outcome) noexcept {
      if (auto* o = std::exchange(owner_, nullptr)) o->Return(std::move(inner_), started_, outcome);
    }
    AdaptiveLimit* owner_ = nullptr;
    Semaphore::Permit inner_;
    TimePoint started_{};
  };

  explicit AdaptiveLimit(AdaptiveLimitOptions options = {});
  AdaptiveLimit(const AdaptiveLimit&) = delete;
  AdaptiveLimit& operator=(const AdaptiveLimit&) = delete;
  ~AdaptiveLimit();

  // Waits for a permit under `ctx`. Throws cutoff::Error: overloaded (the queue is full), or
  // the stop's error; boost::system::system_error(operation_aborted) when cancelled through
  // Asio.
  boost::asio::awaitable<Permit> acquire(const Context& ctx) { return Acquire(this, ctx); }

  // Runs `f(ctx)` holding a permit: a completion is a sample, a stop of `ctx` a stopped run,
  // any other failure records nothing.
  template <typename F>
  boost::asio::awaitable<internal::CallResult<F>> run(const Context& ctx, F f) {
    return Run(this, ctx, std::move(f));
  }

  std::size_t limit() const;
  AdaptiveLimitStats stats() const;
  const AdaptiveLimitOptions& options() const noexcept { return options_; }

 private:
  template <typename F>
  static boost::asio::awaitable<internal::CallResult<F>> Run(AdaptiveLimit* self, Context ctx, F f) {
    Permit permit = co_await self->acquire(ctx);
    try {
      if constexpr (std::is_void_v<internal::CallResult<F>>) {
        co_await f(ctx);
        permit.completed();
        co_return;
      } else {
        auto value = co_await f(ctx);
        permit.completed();
        co_return value;
      }
    } catch (...) {
      if (ctx.stop_requested()) permit.stopped();
      throw;
    }
  }

  static boost::asio::awaitable<Permit> Acquire(AdaptiveLimit* self, Context ctx);
  void Return(Semaphore::Permit inner, TimePoint started, Permit::Outcome outcome) noexcept;
  // Sets the pushback of a refusal for a full queue (nothing before the first window closes).
  void PushBack(Error& refused) const;
  void CloseWindowLocked(TimePoint now) noexcept;
  void SetLimitLocked(std::size_t limit) noexcept;

  AdaptiveLimitOptions options_;
  const Clock& clock_;
  Semaphore permits_;  // max_limit permits; those above the limit are parked here
  mutable std::mutex mu_;
  std::size_t limit_ = 0;
  std::size_t parked_ = 0;  // permits held back to keep the limit below max_limit
  std::size_t owed_ = 0;    // permits to park as they come back (the limit fell below in_use)
  std::size_t in_use_ = 0;
  bool waited_ = false;  // someone queued during this window
  std::vector<Duration> window_;
  std::size_t window_stopped_ = 0;
  TimePoint window_opened_{};
  TimePoint baseline_at_{};
  AdaptiveLimitStats stats_;
  observe::Gauge* limit_gauge_ = nullptr;
};

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_ADAPTIVE_LIMIT_HPP_
