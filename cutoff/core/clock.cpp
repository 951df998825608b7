#include "cutoff/core/clock.hpp"

namespace cutoff {
namespace {

class SteadyClockImpl final : public Clock {
 public:
  TimePoint now() const noexcept override { return SteadyClock::now(); }
};

}  // namespace

const Clock& Clock::steady() noexcept {
  static const SteadyClockImpl clock;
  return clock;
}

ManualClock::ManualClock() noexcept
    : ManualClock(TimePoint(std::chrono::hours(24 * 365))) {}

ManualClock::ManualClock(TimePoint start) noexcept
    : now_(start.time_since_epoch().count()) {}

TimePoint ManualClock::now() const noexcept {
  return TimePoint(Duration(now_.load(std::memory_order_acquire)));
}

void ManualClock::advance(Duration d) noexcept {
  now_.fetch_add(d.count(), std::memory_order_acq_rel);
}

void ManualClock::set(TimePoint t) noexcept {
  now_.store(t.time_since_epoch().count(), std::memory_order_release);
}

}  // namespace cutoff
