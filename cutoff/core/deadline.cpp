#include "cutoff/core/deadline.hpp"

#include <cstdio>
#include <limits>

namespace cutoff {

Deadline Deadline::AfterSaturating(Duration d, TimePoint now) noexcept {
  if (d <= Duration::zero()) return Deadline(now);
  if (d >= TimePoint::max() - now) return never();
  return Deadline(now + d);
}

std::int64_t Deadline::remaining_ms_ceil(const Clock& clock) const noexcept {
  if (is_never()) return std::numeric_limits<std::int64_t>::max();
  const Duration left = remaining(clock);
  return std::chrono::ceil<std::chrono::milliseconds>(left).count();
}

std::string Deadline::to_string(const Clock& clock) const {
  if (is_never()) return "never";
  const TimePoint now = clock.now();
  const double ms = std::chrono::duration<double, std::milli>(when_ - now).count();
  char buf[64];
  if (ms >= 0) {
    std::snprintf(buf, sizeof buf, "in %.1fms", ms);
  } else {
    std::snprintf(buf, sizeof buf, "%.1fms ago", -ms);
  }
  return buf;
}

}  // namespace cutoff
