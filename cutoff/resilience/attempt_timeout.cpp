#include "cutoff/resilience/attempt_timeout.hpp"

#include <chrono>
#include <string>

#include "cutoff/core/error.hpp"
#include "cutoff/core/error.hpp"

namespace cutoff::resilience::internal {

std::exception_ptr AttemptFailure(const Context& parent, const Context& attempt, Duration timeout,
                                  std::exception_ptr error, observe::Counter* timeouts) {
  if (const Error* e = find_error(error); e && e->code() == ErrorCode::commit_ambiguous) return error;
  // The attempt's own deadline fired. Its context also stops when the parent's does, so ask
  // the parent, and its clock too: the parent's timer may be a hair behind its deadline.
  const bool attempt_expired = attempt.stop_reason() == StopReason::deadline_exceeded;
  const bool parent_done = parent.stop_requested() || parent.deadline().expired(parent.clock());
  if (!attempt_expired || parent_done) return error;
  if (timeouts) timeouts->inc();
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(timeout).count();
  return std::make_exception_ptr(
      Error(ErrorCode::attempt_timeout, "the attempt got no answer within its timeout of " + std::to_string(ms) + " ms",
            parent.request_id()));
}

}  // namespace cutoff::resilience::internal
