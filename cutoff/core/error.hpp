// Error: cutoff's error taxonomy, as data in one place.
//
// Every failure that crosses a module boundary is an `Error` with a stable machine code.
// How each code shows on each surface (HTTP status, GraphQL `extensions.code`, gRPC status,
// CLI exit code) and whether it may be retried is looked up here, never hard-coded elsewhere.
//
//   try {
//     ctx.check();
//   } catch (const cutoff::Error& e) {
//     const auto& info = e.info();
//     response.status(info.http_status);            // 504 for deadline_exceeded
//     if (!info.retryable) response.set("Deadline-Expired", "1");
//   }
#ifndef CUTOFF_CORE_ERROR_HPP_
#define CUTOFF_CORE_ERROR_HPP_

#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/stop_reason.hpp"

namespace cutoff {

enum class ErrorCode : std::uint8_t {
  deadline_exceeded,     // the invocation's budget is spent
  cancelled,             // the caller went away or asked to stop
  shutdown,              // stopped because the process is shutting down
  commit_ambiguous,      // a stop landed at or after the commit point: the effect may exist
  attempt_timeout,       // one attempt timed out; another may fit in the budget
  overloaded,            // admission, bulkhead or pool rejected the work
  idempotency_conflict,  // a different or concurrent request under the same key
  invalid_argument,      // the request itself is malformed
  not_found,             // the named thing does not exist
  unavailable,           // a dependency cannot be reached
  internal,              // a bug or an unclassified failure
};

// How a code shows on every surface. One row per ErrorCode.
struct ErrorCodeInfo {
  ErrorCode code;
  std::string_view name;          // stable machine code, e.g. "deadline_exceeded"
  std::string_view kind;          // "timeout", "cancelled", "internal", ...
  bool retryable;                 // may the same request be tried again?
  int http_status;                // e.g. 504
  std::string_view graphql_code;  // `extensions.code`, e.g. "DEADLINE_EXCEEDED"
  int grpc_status;                // numeric grpc::StatusCode
  std::string_view grpc_name;     // e.g. "DEADLINE_EXCEEDED"
  int cli_exit;                   // process exit code for the `cutoff` command line
  std::string_view summary;       // a default human message
  // The failure says nothing about work already done (a stop, an attempt's timeout, a
  // dependency unreachable or refusing): reported after a commit point, it would read as a
  // safe failure when the effect may exist (see report_after_commit_point, commit_ledger.hpp).
  bool leaves_effect_unknown;
  // The stop this code reports (deadline_exceeded, cancelled, shutdown); none for the rest.
  StopReason stop;
};

const ErrorCodeInfo& info(ErrorCode code) noexcept;
std::span<const ErrorCodeInfo> all_error_codes() noexcept;
std::optional<ErrorCode> parse_error_code(std::string_view name) noexcept;
// The code whose GraphQL `extensions.code` is `graphql_code` ("DEADLINE_EXCEEDED" ->
// deadline_exceeded); nullopt for codes outside the table (GRAPHQL_PARSE_FAILED, an
// application's own codes, "").
std::optional<ErrorCode> parse_graphql_error_code(std::string_view graphql_code) noexcept;
inline std::string_view to_string(ErrorCode code) noexcept { return info(code).name; }

// The code a gRPC status (a grpc::StatusCode number) stands for when the peer names no cutoff
// code: the row whose own name is the status's (UNAVAILABLE is `unavailable`, not a shutdown or
// an attempt's timeout), else the only row with that status (RESOURCE_EXHAUSTED: overloaded;
// ABORTED: idempotency_conflict), else by what the status means: a refusal of the request
// (ALREADY_EXISTS, PERMISSION_DENIED, FAILED_PRECONDITION, OUT_OF_RANGE, UNAUTHENTICATED) is
// invalid_argument, UNIMPLEMENTED is not_found, and the rest are internal. A peer's UNKNOWN is
// internal: only a cutoff peer's own code says commit_ambiguous.
ErrorCode error_code_for_grpc_status(int grpc_status) noexcept;

// The error code a stop turns into (internal for StopReason::none).
ErrorCode error_code_for(StopReason reason) noexcept;

// ---- Predicates on codes: the questions every layer asks, answered from the table. ----

// deadline_exceeded, cancelled or shutdown: the caller's own stop, not a dependency's failure.
inline bool is_stop(ErrorCode code) noexcept;
// The stop `code` reports; StopReason::none when it is not a stop.
inline StopReason stop_reason_of(ErrorCode code) noexcept;
// A stop or commit_ambiguous: never retried, never replaced by a fallback, never counted as a
// dependency failure. Retrying a stop cannot help (the same budget is spent, or nobody waits);
// retrying commit_ambiguous could apply an effect twice.
inline bool never_retried(ErrorCode code) noexcept;
// attempt_timeout, unavailable and overloaded: another attempt inside the same budget may
// succeed (the retryable codes that are not stops).
inline bool retry_may_help(ErrorCode code) noexcept;
// invalid_argument, not_found and idempotency_conflict: the request was refused on its merits,
// so the service that refused it is working (the failures that are neither retried, nor
// stops, nor commit_ambiguous, nor internal).
inline bool is_caller_error(ErrorCode code) noexcept;

// CLI exit code for `code`; a cancellation caused by a signal exits 128 + signal
// (130 for SIGINT, 143 for SIGTERM), as shells expect.
int cli_exit_code(ErrorCode code, int signal_number = 0) noexcept;

class Error : public std::exception {
 public:
  Error(ErrorCode code, std::string message, std::string request_id = {});

  // The error for a stop: deadline_exceeded, cancelled or shutdown, keeping the reason.
  static Error stopped(StopReason reason, std::string request_id = {});

  ErrorCode code() const noexcept { return code_; }
  const ErrorCodeInfo& info() const noexcept { return cutoff::info(code_); }
  bool retryable() const noexcept { return info().retryable; }
  const std::string& message() const noexcept { return message_; }
  const std::string& request_id() const noexcept { return request_id_; }
  // The stop behind this error, or none when it was not caused by a stop.
  StopReason stop_reason() const noexcept { return stop_reason_; }

  // Retry pushback: the failing server's word on when another attempt could help (HTTP's
  // Retry-After, gRPC's grpc-retry-pushback-ms). nullopt: it said nothing; kDoNotRetry: it
  // asked not to be tried again. A retry waits at least this long (resilience/retry.hpp), and
  // cutoff's servers send it with the error.
  static constexpr Duration kDoNotRetry = Duration::max();
  const std::optional<Duration>& retry_after() const noexcept { return retry_after_; }
  Error& set_retry_after(Duration wait) noexcept {
    retry_after_ = wait < Duration::zero() ? Duration::zero() : wait;
    return *this;
  }

  // "deadline_exceeded: the time budget ran out"
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  ErrorCode code_;
  StopReason stop_reason_ = StopReason::none;
  std::optional<Duration> retry_after_;
  std::string message_;
  std::string request_id_;
  std::string what_;
};

// ---- What an exception means: the one reading every layer uses. ----

// The exception of type E inside `failure`, or null when it holds something else (or
// nothing). The pointer stays valid for as long as `failure` refers to the exception.
template <typename E>
const E* find_exception(const std::exception_ptr& failure) noexcept {
  if (!failure) return nullptr;
  try {
    std::rethrow_exception(failure);
  } catch (const E& e) {
    return &e;  // the exception object lives as long as `failure` refers to it
  } catch (...) {
  }
  return nullptr;
}
inline const Error* find_error(const std::exception_ptr& failure) noexcept { return find_exception<Error>(failure); }

// A cutoff stop (an Error whose code is a stop) or Asio's operation_aborted: the work was
// cancelled rather than failed.
bool is_cancellation(const std::exception_ptr& failure) noexcept;

// The Error that `failure` stands for:
//  - a cutoff::Error is itself;
//  - Asio's operation_aborted is the stop `aborted_by` when that is not none (a coroutine
//    cancelled because its context stopped reports the stop, not the abort);
//  - anything else (including an unexplained abort) is `internal`, keeping its what().
// Callers log or mask `internal` results: they are bugs or unclassified failures.
Error to_error(const std::exception_ptr& failure, StopReason aborted_by = StopReason::none,
               std::string request_id = {});

// ---- inline definitions ----

inline bool is_stop(ErrorCode code) noexcept { return info(code).stop != StopReason::none; }
inline StopReason stop_reason_of(ErrorCode code) noexcept { return info(code).stop; }
inline bool never_retried(ErrorCode code) noexcept { return is_stop(code) || code == ErrorCode::commit_ambiguous; }
inline bool retry_may_help(ErrorCode code) noexcept { return info(code).retryable && !is_stop(code); }
inline bool is_caller_error(ErrorCode code) noexcept {
  return !info(code).retryable && !never_retried(code) && code != ErrorCode::internal;
}

}  // namespace cutoff

#endif  // CUTOFF_CORE_ERROR_HPP_
