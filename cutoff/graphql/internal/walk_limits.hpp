// The limits a walk checks while it writes the response: how large the response may grow,
// and how long the walk may hold the executor before it lets other work run. Counting is
// inline (one subtraction per object or task); the checks run every kCheckpointEvery fields
// and list items. Past a limit the walk is halted: each field then takes the slow path and
// is skipped (the response is abandoned) or queued to run after a yield.
//
//   WalkLimits limits(options.max_response_bytes, options.yield_after);
//   if (limits.count(fields.size())) checkpoint();  // over_response_limit(size), then check()
//   if (limits.halted()) ...
#ifndef CUTOFF_GRAPHQL_INTERNAL_WALK_LIMITS_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_WALK_LIMITS_HPP_

#include <cstddef>
#include <cstdint>
#include <limits>

#include "cutoff/core/clock.hpp"

namespace cutoff::graphql::internal {

class WalkLimits {
 public:
  static constexpr std::int64_t kCheckpointEvery = 64;  // a power of two
  enum class Result : std::uint8_t { go_on, yield, abandoned };

  // `max_response_bytes` 0: no limit; `yield_after` zero: never yield.
  WalkLimits(std::size_t max_response_bytes, Duration yield_after) : yield_after_(yield_after) {
    if (max_response_bytes > 0) response_limit_ = max_response_bytes;
  }

  // True when the k-th field of an object or item of a list is due for a checkpoint.
  static bool due(std::size_t k) noexcept { return (k & (kCheckpointEvery - 1)) == kCheckpointEvery - 1; }

  // Counts `n` fields (or tasks); true when a checkpoint is due.
  bool count(std::int64_t n) noexcept { return (fields_to_checkpoint_ -= n) <= 0; }

  // True the first time the response (`size` bytes so far) is past its limit: it is
  // abandoned from here on.
  bool over_response_limit(std::size_t size) noexcept {
    if (aborted_ || size <= response_limit_) return false;
    aborted_ = true;
    halted_ = true;
    return true;
  }

  // A checkpoint: whether the response is abandoned, and (every fourth time) whether this
  // slice of the walk has held the executor for `yield_after`.
  Result check() noexcept {
    fields_to_checkpoint_ = kCheckpointEvery;
    if (aborted_) return Result::abandoned;
    if (slice_exhausted_) return Result::yield;
    if (++checkpoints_ % 4 == 0 && yield_after_ > Duration::zero() &&
        SteadyClock::now() - slice_start_ >= yield_after_) {
      slice_exhausted_ = true;
      halted_ = true;
      return Result::yield;
    }
    return Result::go_on;
  }

  // A slice starts: the walk begins, or resumes after a yield.
  void start_slice() noexcept {
    slice_exhausted_ = false;
    halted_ = aborted_;
    fields_to_checkpoint_ = kCheckpointEvery;
    slice_start_ = SteadyClock::now();
  }

  bool halted() const noexcept { return halted_; }  // aborted() || slice_exhausted()
  bool aborted() const noexcept { return aborted_; }
  bool slice_exhausted() const noexcept { return slice_exhausted_; }
  std::size_t response_limit() const noexcept { return response_limit_; }

 private:
  Duration yield_after_;
  std::size_t response_limit_ = std::numeric_limits<std::size_t>::max();
  bool aborted_ = false;
  bool slice_exhausted_ = false;
  bool halted_ = false;
  std::int64_t fields_to_checkpoint_ = kCheckpointEvery;
  std::uint32_t checkpoints_ = 0;
  TimePoint slice_start_{};
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_WALK_LIMITS_HPP_
