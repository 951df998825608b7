#include "cutoff/grpc/internal/call_deadline.hpp"

#include <chrono>
#include <cstdint>

namespace cutoff::grpc::internal {

Duration RemainingUntil(gpr_timespec deadline) noexcept {
  if (gpr_time_cmp(deadline, gpr_inf_future(deadline.clock_type)) == 0) return Duration::max();
  // A timespan or an unknown clock reads as its own clock's now; a deadline is an instant.
  if (deadline.clock_type == GPR_TIMESPAN) return Duration::max();
  const gpr_timespec left = gpr_time_sub(deadline, gpr_now(deadline.clock_type));
  // A century is past any budget a service grants, and far from overflowing a Duration.
  constexpr std::int64_t kCenturySeconds = std::int64_t{100} * 365 * 24 * 3600;
  if (left.tv_sec >= kCenturySeconds) return std::chrono::seconds(kCenturySeconds);
  if (left.tv_sec <= -kCenturySeconds) return -std::chrono::seconds(kCenturySeconds);
  return std::chrono::duration_cast<Duration>(std::chrono::seconds(left.tv_sec) +
                                              std::chrono::nanoseconds(left.tv_nsec));
}

}  // namespace cutoff::grpc::internal
