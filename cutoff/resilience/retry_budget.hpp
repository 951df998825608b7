// RetryBudget: caps retries at a fraction of requests, shared by every call to a dependency.
//
// Per-call limits (max_attempts) do not stop retry storms: when a dependency fails for
// everyone, three attempts per call triple its load exactly when it can least take it, and
// every layer that retries multiplies again. A budget, as in Finagle and gRPC, lets retries
// through only while they stay a small share of the traffic:
//
//   cutoff::resilience::RetryBudget budget({.ratio = 0.1, .min_per_second = 5});
//   Retry retry({.max_attempts = 3, .budget = &budget});
//
// Each call deposits `ratio` of a token; each retry withdraws a whole one. Deposits expire
// after `window`, so the budget follows the recent traffic. `min_per_second` keeps a reserve
// of `min_per_second * window` tokens that is always there, so that a quiet service can still
// retry at all. Over any window the retries allowed are at most
//   ratio * calls_in_window + min_per_second * window_seconds.
// When no whole token is left the retry is not taken and the last error surfaces.
//
// Thread-safe; the clock is injectable for tests.
#ifndef CUTOFF_RESILIENCE_RETRY_BUDGET_HPP_
#define CUTOFF_RESILIENCE_RETRY_BUDGET_HPP_

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>

#include "cutoff/core/clock.hpp"

namespace cutoff::resilience {

struct RetryBudgetOptions {
  double ratio = 0.1;           // retries per call, e.g. 0.1: at most one retry per ten calls
  double min_per_second = 10;   // the reserve, in retries per second
  Duration window = std::chrono::seconds(10);
  const Clock* clock = nullptr;  // null: Clock::steady()
};

struct RetryBudgetStats {
  std::uint64_t deposits = 0;     // calls counted
  std::uint64_t withdrawals = 0;  // retries allowed
  std::uint64_t refused = 0;      // retries refused (exhausted)
};

class RetryBudget {
 public:
  explicit RetryBudget(RetryBudgetOptions options = {});
  RetryBudget(const RetryBudget&) = delete;
  RetryBudget& operator=(const RetryBudget&) = delete;

  // One call started (its first attempt).
  void deposit() noexcept;
  // Takes one retry token; false (and nothing taken) when fewer than one is left.
  bool try_withdraw() noexcept;
  // Tokens available now.
  double balance() const noexcept;

  RetryBudgetStats stats() const noexcept;
  const RetryBudgetOptions& options() const noexcept { return options_; }

 private:
  // The window is cut into slices; a slice's counts expire together.
  struct Slice {
    std::int64_t epoch = -1;
    std::uint64_t deposits = 0;
    std::uint64_t withdrawals = 0;
  };
  static constexpr std::size_t kSlices = 10;

  Slice& SliceLocked(std::int64_t epoch) noexcept;
  double BalanceLocked(std::int64_t epoch) const noexcept;
  std::int64_t Epoch() const noexcept;

  RetryBudgetOptions options_;
  const Clock& clock_;
  Duration slice_length_;
  double reserve_;
  mutable std::mutex mu_;
  std::array<Slice, kSlices> slices_{};
  RetryBudgetStats stats_;
};

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_RETRY_BUDGET_HPP_
