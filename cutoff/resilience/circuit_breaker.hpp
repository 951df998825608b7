// Circuit breaker: stop calling a dependency that keeps failing, and probe it before trusting
// it again.
//
//   cutoff::resilience::CircuitBreaker payments({.consecutive_failures = 5, .open_for = 10s});
//   Receipt r = co_await payments.run(ctx, [&](const cutoff::Context& c) { return charge(c, order); });
//
// States: closed (calls pass, outcomes are counted), open (calls fail at once with
// `unavailable`, the dependency is not called), half-open (after `open_for`, up to
// `half_open_probes` calls pass as probes; that many successes close the breaker, one
// failure opens it again).
//
// It trips when either threshold is reached: `consecutive_failures` failures in a row, or a
// failure rate of at least `failure_rate` over the last `window` once the window holds
// `minimum_calls` calls.
//
// An open breaker answers `unavailable` (retryable, HTTP 503) rather than `overloaded`: the
// taxonomy keeps `overloaded` for local admission (bulkheads, pools, admission limits), and an
// open breaker is this service's judgement that the dependency cannot be reached.
//
// What counts: stops (deadline_exceeded, cancelled, shutdown, or an Asio cancellation) and
// commit_ambiguous are the caller's or the effect's story, not the dependency's health, so
// they count neither way. Errors that show the dependency answered (invalid_argument,
// not_found, idempotency_conflict) count as successes. Anything else is a failure. Replace
// the rule with `classify`.
//
// Thread-safe (one mutex per breaker). The clock is injectable, for tests.
#ifndef CUTOFF_RESILIENCE_CIRCUIT_BREAKER_HPP_
#define CUTOFF_RESILIENCE_CIRCUIT_BREAKER_HPP_

#include <array>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/resilience/internal/awaitable_value.hpp"
#include "cutoff/resilience/metrics.hpp"

namespace cutoff::resilience {

enum class BreakerState : std::uint8_t { closed = 0, open = 1, half_open = 2 };
std::string_view to_string(BreakerState s) noexcept;

enum class BreakerOutcome : std::uint8_t { success, failure, ignored };

// The default rule described above.
BreakerOutcome default_breaker_outcome(const std::exception_ptr& error) noexcept;

struct BreakerOptions {
  std::uint32_t consecutive_failures = 5;  // 0: this threshold is off
  double failure_rate = 0.5;               // in (0, 1]; 0: this threshold is off
  std::uint32_t minimum_calls = 20;        // calls in the window before the rate is judged
  Duration window = std::chrono::seconds(10);
  Duration open_for = std::chrono::seconds(5);
  std::uint32_t half_open_probes = 1;      // at least 1
  std::function<BreakerOutcome(const std::exception_ptr&)> classify;  // empty: the default rule
  const Clock* clock = nullptr;            // null: Clock::steady()
  // Called after each state change, outside the breaker's lock (for logs).
  std::function<void(BreakerState from, BreakerState to)> on_transition;
  std::string name = "default";            // metric label and error message
  ResilienceMetrics* metrics = nullptr;
};

struct BreakerStats {
  BreakerState state = BreakerState::closed;
  std::uint64_t successes = 0;
  std::uint64_t failures = 0;
  std::uint64_t ignored = 0;
  std::uint64_t rejected = 0;     // refused while open or with every probe taken
  std::uint64_t times_opened = 0;
};

class CircuitBreaker {
 public:
  // Permission for one call. Record its outcome once; a ticket dropped unrecorded counts as
  // ignored (and frees its half-open probe). Movable.
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)), generation_(other.generation_), probe_(other.probe_) {}
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket() { record(BreakerOutcome::ignored); }

    void record(BreakerOutcome outcome) noexcept {
      if (auto* b = std::exchange(owner_, nullptr)) b->Record(generation_, probe_, outcome);
    }
    void record(const std::exception_ptr& error) noexcept {
      if (owner_) record(owner_->Classify(error));
    }
    void success() noexcept { record(BreakerOutcome::success); }

   private:
    friend class CircuitBreaker;
    Ticket(CircuitBreaker* owner, std::uint64_t generation, bool probe) noexcept
        : owner_(owner), generation_(generation), probe_(probe) {}
    CircuitBreaker* owner_;
    std::uint64_t generation_;
    bool probe_;
  };

  explicit CircuitBreaker(BreakerOptions options = {});
  CircuitBreaker(const CircuitBreaker&) = delete;
  CircuitBreaker& operator=(const CircuitBreaker&) = delete;

  // A ticket for one call, or cutoff::Error `unavailable` when the breaker refuses it.
  Ticket admit(const Context& ctx = {});

  // Runs `f(ctx)` when admitted and records its outcome.
  template <typename F>
  boost::asio::awaitable<internal::CallResult<F>> run(const Context& ctx, F f) {
    return Run(this, ctx, std::move(f));
  }

  BreakerState state() const;  // moves open → half-open when `open_for` has passed
  BreakerStats stats() const;
  BreakerOutcome classify(const std::exception_ptr& error) const { return Classify(error); }

  // Operator controls: open now (for `open_for`), or close and forget the counts.
  void trip();
  void reset();

 private:
  struct Bucket {
    std::int64_t epoch = -1;  // which bucket-length slice of time it counts
    std::uint32_t calls = 0;
    std::uint32_t failures = 0;
  };
  struct Transition {
    BreakerState from = BreakerState::closed, to = BreakerState::closed;
    bool happened = false;
  };

  template <typename F>
  static boost::asio::awaitable<internal::CallResult<F>> Run(CircuitBreaker* self, Context ctx, F f) {
    Ticket ticket = self->admit(ctx);
    try {
      if constexpr (std::is_void_v<internal::CallResult<F>>) {
        co_await f(ctx);
        ticket.success();
        co_return;
      } else {
        auto value = co_await f(ctx);
        ticket.success();
        co_return std::move(value);
      }
    } catch (...) {
      ticket.record(std::current_exception());
      throw;
    }
  }

  BreakerOutcome Classify(const std::exception_ptr& error) const noexcept;
  void Record(std::uint64_t generation, bool probe, BreakerOutcome outcome) noexcept;
  Transition MoveToLocked(BreakerState to, TimePoint now) noexcept;
  void RefreshLocked(TimePoint now, Transition& t) noexcept;
  bool RateTrippedLocked(TimePoint now) noexcept;
  Bucket& BucketLocked(TimePoint now) noexcept;
  void Notify(const Transition& t) const;

  static constexpr std::size_t kBuckets = 10;

  BreakerOptions options_;
  const Clock& clock_;
  Duration bucket_length_;
  mutable std::mutex mu_;
  BreakerState state_ = BreakerState::closed;
  std::uint64_t generation_ = 0;  // bumped on every transition; stale tickets count as ignored
  std::uint32_t consecutive_ = 0;
  TimePoint opened_at_{};
  std::uint32_t probes_in_flight_ = 0;
  std::uint32_t probe_successes_ = 0;
  std::array<Bucket, kBuckets> buckets_{};
  BreakerStats stats_;
  observe::Gauge* state_gauge_ = nullptr;
  observe::Counter* rejected_counter_ = nullptr;
};

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_CIRCUIT_BREAKER_HPP_
