// How long a call has left, read from gRPC's own deadline without overflowing.
//
// gRPC accepts grpc-timeout values up to 99999999 hours (about 11,000 years).
// ServerContext::deadline() converts the call's deadline to a system_clock time_point, whose
// nanoseconds overflow past the year 2262; what comes back for a deadline 300 years away is a
// time in the past. The raw gpr_timespec does not overflow: this reads it, saturating.
//
//   Duration left = RemainingUntil(call.raw_deadline());   // Duration::max(): none
#ifndef CUTOFF_GRPC_INTERNAL_CALL_DEADLINE_HPP_
#define CUTOFF_GRPC_INTERNAL_CALL_DEADLINE_HPP_

#include <grpc/support/time.h>

#include "cutoff/core/clock.hpp"

namespace cutoff::grpc::internal {

// What is left until `deadline` (at most about 100 years, negative once it passed);
// Duration::max() for gRPC's infinite future.
Duration RemainingUntil(gpr_timespec deadline) noexcept;

}  // namespace cutoff::grpc::internal

#endif  // CUTOFF_GRPC_INTERNAL_CALL_DEADLINE_HPP_
