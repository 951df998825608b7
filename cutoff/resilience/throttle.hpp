// Throttle: client-side adaptive throttling. When a dependency refuses most of what it is sent,
// refuse some calls here, before they cost a request, a connection and the dependency's time.
//
//   cutoff::resilience::Throttle inventory({.k = 2, .name = "inventory"});
//   Stock s = co_await inventory.run(ctx, [&](const cutoff::Context& c) { return fetch(c); }, "/valuation");
//
// Over the last `window` the throttle counts, per key (an operation: "/valuation"), the calls
// it was asked for (`requests`, those it refused itself included) and the calls the dependency
// accepted (`accepts`). While requests exceed k × accepts it refuses the fraction
//     (requests − k × accepts) / (requests + 1)
// of new calls at once with `overloaded`. So a dependency that accepts half of what it gets
// from us with k = 2 sees every call; one that accepts a tenth sees about 2.2 times what it
// accepts, not all of it; and because the refused calls still count as requests, the fraction
// falls back to zero by itself as soon as the dependency accepts again. It never reaches 1:
// some calls always go through to find out. Refusals are spread evenly over the calls (each
// call adds the fraction to a running credit and is refused when the credit passes 1), not
// drawn at random, so the same history gives the same decisions. Nothing is refused while a
// key has fewer than `minimum_requests` in the window.
//
// What counts, by default: a call that returns, or fails with an error that shows the
// dependency answered it (invalid_argument, not_found, internal, ...), was accepted. One that
// ended in `overloaded`, `unavailable` or `attempt_timeout`, or in `deadline_exceeded` while the
// caller's own context had not stopped (the dependency refused it as doomed, or ran out its
// time), was refused. The caller's own stops (its deadline, cancellation, shutdown) and
// `commit_ambiguous` count neither way, and take back the request. A call may also report a
// refusal that came as a value (an HTTP 504 with Deadline-Expired): `Ticket::refused()`.
//
// A breaker and a throttle answer different questions: the breaker stops calling a dependency
// that fails for everyone; the throttle keeps calling one that works for some, at about the
// rate it can take. Pipeline (pipeline.hpp) places it after the breaker, outside the retries.
//
// Thread-safe (one mutex per throttle). Keys are bounded (`max_keys`); past it, new keys share
// one account. The clock is injectable, for tests.
#ifndef CUTOFF_RESILIENCE_THROTTLE_HPP_
#define CUTOFF_RESILIENCE_THROTTLE_HPP_

#include <array>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
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

enum class ThrottleOutcome : std::uint8_t { accepted, refused, ignored };

// The default rule described above; `caller_stopped`: the caller's own context had stopped.
ThrottleOutcome default_throttle_outcome(const std::exception_ptr& error, bool caller_stopped) noexcept;

struct ThrottleOptions {
  // Requests allowed per accept before refusing here; at least 1. Lower refuses sooner and
  // more; 2 lets a dependency see about twice what it can take.
  double k = 2;
  Duration window = std::chrono::seconds(2);  // the history judged (ten buckets)
  std::uint32_t minimum_requests = 20;        // per key in the window before any refusal
  std::size_t max_keys = 64;
  const Clock* clock = nullptr;  // null: Clock::steady()
  std::string name = "default";  // metric label and error message
  ResilienceMetrics* metrics = nullptr;
};

struct ThrottleStats {
  std::uint64_t accepted = 0;
  std::uint64_t refused = 0;    // by the dependency
  std::uint64_t ignored = 0;    // the caller's own stops
  std::uint64_t throttled = 0;  // refused here, never sent
};

class Throttle {
 private:
  struct Account;

 public:
  // Permission for one call. Record its outcome once; a ticket dropped unrecorded counts as
  // ignored. Movable.
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)), account_(other.account_), epoch_(other.epoch_) {}
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket() { record(ThrottleOutcome::ignored); }

    void record(ThrottleOutcome outcome) noexcept {
      if (auto* t = std::exchange(owner_, nullptr)) t->Record(*account_, epoch_, outcome);
    }
    void record(const std::exception_ptr& error, bool caller_stopped) noexcept {
      record(default_throttle_outcome(error, caller_stopped));
    }
    void accepted() noexcept { record(ThrottleOutcome::accepted); }
    void refused() noexcept { record(ThrottleOutcome::refused); }

   private:
    friend class Throttle;
    Ticket(Throttle* owner, Account* account, std::int64_t epoch) noexcept
        : owner_(owner), account_(account), epoch_(epoch) {}
    Throttle* owner_;
    Account* account_;
    std::int64_t epoch_;  // the bucket the request was counted in
  };

  explicit Throttle(ThrottleOptions options = {});
  Throttle(const Throttle&) = delete;
  Throttle& operator=(const Throttle&) = delete;
  ~Throttle();

  // A ticket for one call under `key`, or cutoff::Error `overloaded` when the throttle refuses it.
  Ticket admit(const Context& ctx = {}, std::string_view key = {});

  // Runs `f(ctx)` when admitted and records its outcome. `key` must outlive the call.
  template <typename F>
  boost::asio::awaitable<internal::CallResult<F>> run(const Context& ctx, F f, std::string_view key = {}) {
    return Run(this, ctx, std::move(f), key);
  }

  // The fraction of new calls under `key` refused now.
  double refusal_ratio(std::string_view key = {}) const;
  ThrottleStats stats() const;

 private:
  struct Bucket {
    std::int64_t epoch = -1;  // which bucket-length slice of time it counts
    std::uint32_t requests = 0;
    std::uint32_t accepts = 0;
  };
  struct Account {
    std::array<Bucket, 10> buckets;
    double credit = 0;  // refusals owed, spread over the calls
  };

  template <typename F>
  static boost::asio::awaitable<internal::CallResult<F>> Run(Throttle* self, Context ctx, F f, std::string_view key) {
    Ticket ticket = self->admit(ctx, key);
    try {
      if constexpr (std::is_void_v<internal::CallResult<F>>) {
        co_await f(ctx);
        ticket.accepted();
        co_return;
      } else {
        auto value = co_await f(ctx);
        ticket.accepted();
        co_return std::move(value);
      }
    } catch (...) {
      ticket.record(std::current_exception(), ctx.stop_requested());
      throw;
    }
  }

  Account& AccountLocked(std::string_view key);
  double RatioLocked(const Account& a, std::int64_t now_epoch) const noexcept;
  void Record(Account& a, std::int64_t epoch, ThrottleOutcome outcome) noexcept;
  std::int64_t EpochOf(TimePoint t) const noexcept { return t.time_since_epoch() / bucket_length_; }

  ThrottleOptions options_;
  const Clock& clock_;
  Duration bucket_length_;
  observe::Counter* throttled_counter_ = nullptr;
  mutable std::mutex mu_;
  std::map<std::string, Account, std::less<>> accounts_;
  Account overflow_;  // keys past max_keys
  ThrottleStats stats_;
};

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_THROTTLE_HPP_
