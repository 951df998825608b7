#include "cutoff/resilience/backoff.hpp"

#include <algorithm>

namespace cutoff::resilience {

Backoff::Backoff(BackoffOptions options, std::uint64_t seed) : options_(options), rng_(seed) {
  if (options_.initial < Duration::zero()) options_.initial = Duration::zero();
  if (options_.max < options_.initial) options_.max = options_.initial;
  if (!(options_.multiplier >= 1.0)) options_.multiplier = 1.0;  // also catches NaN
  ceiling_ = options_.initial;
  previous_ = options_.initial;
}

Duration Backoff::Uniform(Duration lo, Duration hi) {
  if (hi <= lo) return lo;
  std::uniform_int_distribution<Duration::rep> pick(lo.count(), hi.count());
  return Duration(pick(rng_));
}

Duration Backoff::next() {
  ++retries_;
  Duration delay{};
  switch (options_.jitter) {
    case Jitter::none:
      delay = ceiling_;
      break;
    case Jitter::full:
      delay = Uniform(Duration::zero(), ceiling_);
      break;
    case Jitter::decorrelated: {
      // 3 * previous, computed so that it cannot overflow before the cap applies.
      const Duration upper = previous_ > options_.max / 3 ? options_.max : previous_ * 3;
      delay = std::min(Uniform(options_.initial, std::max(upper, options_.initial)), options_.max);
      previous_ = std::max(delay, options_.initial);
      return delay;
    }
  }
  // Grow the ceiling in floating point and cap before converting back: no overflow.
  const double grown = static_cast<double>(ceiling_.count()) * options_.multiplier;
  ceiling_ = grown >= static_cast<double>(options_.max.count()) ? options_.max
                                                                  : Duration(static_cast<Duration::rep>(grown));
  return delay;
}

}  // namespace cutoff::resilience
