// Backoff: how long to wait before retry number n, with jitter so that callers who failed
// together do not come back together.
//
//   cutoff::resilience::Backoff b({.initial = 20ms, .max = 1s, .jitter = Jitter::full}, /*seed=*/42);
//   Duration first = b.next();   // uniform in [0, 20ms]
//   Duration second = b.next();  // uniform in [0, 40ms]
//
// Jitter kinds (the names follow the AWS Architecture Blog's "Exponential Backoff And
// Jitter"):
//   none          initial * multiplier^(n-1), capped at `max`
//   full          uniform in [0, that]
//   decorrelated  uniform in [initial, 3 * previous delay], capped at `max`; grows like the
//                 exponential one on average but spreads callers further apart
// A Backoff is one call's sequence and is not thread-safe; `seed` makes it reproducible.
#ifndef CUTOFF_RESILIENCE_BACKOFF_HPP_
#define CUTOFF_RESILIENCE_BACKOFF_HPP_

#include <chrono>
#include <cstdint>
#include <random>

#include "cutoff/core/clock.hpp"

namespace cutoff::resilience {

enum class Jitter : std::uint8_t { none, full, decorrelated };

struct BackoffOptions {
  Duration initial = std::chrono::milliseconds(20);
  Duration max = std::chrono::seconds(1);
  double multiplier = 2.0;  // for none and full; at least 1
  Jitter jitter = Jitter::full;
};

class Backoff {
 public:
  Backoff(BackoffOptions options, std::uint64_t seed);

  // The delay before the next retry.
  Duration next();
  // Retries handed out so far.
  int retries() const noexcept { return retries_; }

 private:
  Duration Uniform(Duration lo, Duration hi);

  BackoffOptions options_;
  std::mt19937_64 rng_;
  int retries_ = 0;
  Duration ceiling_;   // the un-jittered exponential delay for the next retry
  Duration previous_;  // decorrelated jitter's last delay
};

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_BACKOFF_HPP_
