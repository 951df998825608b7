// Deadline: an absolute point on the monotonic clock by which work must be done.
//
// A request's time budget is converted to a Deadline once, where the request enters; every
// layer below reads the time remaining. Deadlines combine with `min` (the tighter one wins),
// which is what makes every layer tighten-only.
//
//   auto d = cutoff::Deadline::after(250ms);            // bound at entry
//   auto field = cutoff::min(d, Deadline::after(120ms)); // a per-field cap can only shorten
//   if (field.expired()) return;                         // reads the clock; see Context for
//                                                        // the clock-free check
//   auto left = field.remaining();                       // clamped at zero
#ifndef CUTOFF_CORE_DEADLINE_HPP_
#define CUTOFF_CORE_DEADLINE_HPP_

#include <chrono>
#include <cstdint>
#include <string>

#include "cutoff/core/clock.hpp"

namespace cutoff {

class Deadline {
 public:
  // Default-constructed deadlines never expire.
  constexpr Deadline() noexcept = default;

  static constexpr Deadline never() noexcept { return Deadline(); }
  static constexpr Deadline at(TimePoint t) noexcept { return Deadline(t); }

  // `now + d` on `clock`, saturating: a huge duration gives `never()` rather than
  // wrapping around. A zero or negative duration gives an already-expired deadline.
  template <typename Rep, typename Period>
  static Deadline after(std::chrono::duration<Rep, Period> d,
                        const Clock& clock = Clock::steady()) noexcept {
    return AfterSaturating(SaturatingCast(d), clock.now());
  }

  constexpr bool is_never() const noexcept { return when_ == TimePoint::max(); }
  constexpr TimePoint time_point() const noexcept { return when_; }

  // Time left, never negative. `Duration::max()` for a deadline that never expires.
  Duration remaining(const Clock& clock = Clock::steady()) const noexcept {
    return remaining_at(clock.now());
  }
  constexpr Duration remaining_at(TimePoint now) const noexcept {
    if (is_never()) return Duration::max();
    return when_ <= now ? Duration::zero() : when_ - now;
  }

  bool expired(const Clock& clock = Clock::steady()) const noexcept {
    return expired_at(clock.now());
  }
  constexpr bool expired_at(TimePoint now) const noexcept { return !is_never() && when_ <= now; }

  // Whole milliseconds left, rounded up, so that a live budget never reads as 0.
  // Returns INT64_MAX for `never()`.
  std::int64_t remaining_ms_ceil(const Clock& clock = Clock::steady()) const noexcept;

  friend constexpr bool operator==(Deadline a, Deadline b) noexcept = default;
  friend constexpr auto operator<=>(Deadline a, Deadline b) noexcept { return a.when_ <=> b.when_; }

  // The tighter of two deadlines.
  friend constexpr Deadline min(Deadline a, Deadline b) noexcept { return a.when_ <= b.when_ ? a : b; }

  // "never" or "in 123.4ms" relative to `clock`; for logs and test messages.
  std::string to_string(const Clock& clock = Clock::steady()) const;

 private:
  constexpr explicit Deadline(TimePoint t) noexcept : when_(t) {}

  template <typename Rep, typename Period>
  static constexpr Duration SaturatingCast(std::chrono::duration<Rep, Period> d) noexcept {
    using Wide = std::chrono::duration<long double, Period>;
    const auto wide = std::chrono::duration_cast<std::chrono::duration<long double, Duration::period>>(
        Wide(static_cast<long double>(d.count())));
    if (!(wide.count() == wide.count())) return Duration::zero();  // NaN: treat as spent
    if (wide.count() >= static_cast<long double>(Duration::max().count())) return Duration::max();
    if (wide.count() <= static_cast<long double>(Duration::min().count())) return Duration::min();
    return std::chrono::duration_cast<Duration>(d);
  }

  static Deadline AfterSaturating(Duration d, TimePoint now) noexcept;

  TimePoint when_ = TimePoint::max();
};

}  // namespace cutoff

#endif  // CUTOFF_CORE_DEADLINE_HPP_
