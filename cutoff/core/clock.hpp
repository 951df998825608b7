// Clocks for deadlines.
//
// Every deadline in cutoff lives on the monotonic (steady) clock. Production code uses
// `Clock::steady()`; tests substitute a `ManualClock` so that they can move time forward
// without sleeping.
//
//   cutoff::ManualClock clock;
//   auto deadline = cutoff::Deadline::after(100ms, clock);
//   clock.advance(150ms);
//   assert(deadline.expired(clock));
#ifndef CUTOFF_CORE_CLOCK_HPP_
#define CUTOFF_CORE_CLOCK_HPP_

#include <atomic>
#include <chrono>

namespace cutoff {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;
using Duration = SteadyClock::duration;

// The source of "now" for deadlines. Implementations must be thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const noexcept = 0;

  // The process-wide steady clock.
  static const Clock& steady() noexcept;
};

// A clock that only moves when told to. Starts at an arbitrary fixed point far from the
// epoch, so that `now() - some_duration` never underflows in tests.
class ManualClock final : public Clock {
 public:
  ManualClock() noexcept;
  explicit ManualClock(TimePoint start) noexcept;

  TimePoint now() const noexcept override;
  void advance(Duration d) noexcept;
  void set(TimePoint t) noexcept;

 private:
  std::atomic<Duration::rep> now_;
};

}  // namespace cutoff

#endif  // CUTOFF_CORE_CLOCK_HPP_
