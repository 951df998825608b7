// StopReason: why work was asked to stop.
//
// Code that observes a stop can tell a spent budget from a caller that went away and from
// a server that is shutting down, and so can every error that results.
//
//   if (ctx.stop_reason() == cutoff::StopReason::deadline_exceeded) metrics.deadline_hit();
#ifndef CUTOFF_CORE_STOP_REASON_HPP_
#define CUTOFF_CORE_STOP_REASON_HPP_

#include <cstdint>
#include <string_view>

namespace cutoff {

enum class StopReason : std::uint8_t {
  none = 0,               // not stopped
  deadline_exceeded = 1,  // the budget ran out
  cancelled = 2,          // the caller went away or asked to stop
  shutdown = 3,           // the process is shutting down
};

constexpr std::string_view to_string(StopReason r) noexcept {
  switch (r) {
    case StopReason::none: return "none";
    case StopReason::deadline_exceeded: return "deadline_exceeded";
    case StopReason::cancelled: return "cancelled";
    case StopReason::shutdown: return "shutdown";
  }
  return "unknown";
}

}  // namespace cutoff

#endif  // CUTOFF_CORE_STOP_REASON_HPP_
