// Which errors the resilience pieces may retry, count or swallow.
//
// Two groups are fixed, whatever a caller's predicate says:
//  - a stop (deadline_exceeded, cancelled, shutdown) belongs to the caller, not to the
//    dependency: retrying it cannot help (the same budget is spent, or nobody is waiting) and
//    it says nothing about the dependency's health;
//  - commit_ambiguous means an effect may already exist: another try could apply it twice.
// Everything else is the caller's choice; `default_retryable` is the usual one.
//
//   if (const cutoff::Error* e = cutoff::resilience::find_error(failure);
//       e && !cutoff::resilience::never_retried(e->code()) && cutoff::resilience::default_retryable(*e))
//     retry();
#ifndef CUTOFF_RESILIENCE_ERRORS_HPP_
#define CUTOFF_RESILIENCE_ERRORS_HPP_

#include <exception>

#include "cutoff/core/error.hpp"

namespace cutoff::resilience {

// deadline_exceeded, cancelled or shutdown.
bool is_stop(ErrorCode code) noexcept;
// A stop or commit_ambiguous: never retried, never replaced by a fallback, never counted as a
// dependency failure.
bool never_retried(ErrorCode code) noexcept;
// attempt_timeout, unavailable and overloaded: another attempt may succeed.
bool default_retryable(const Error& error) noexcept;

// The cutoff::Error inside `e`, or null when `e` holds something else. The pointer stays valid
// for as long as `e` refers to the exception.
const Error* find_error(const std::exception_ptr& e) noexcept;
// True for a cutoff stop error and for Asio's operation_aborted (an Asio cancellation).
bool is_cancellation(const std::exception_ptr& e) noexcept;

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_ERRORS_HPP_
