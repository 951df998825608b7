#include "cutoff/core/error.hpp"

#include <array>

namespace cutoff {
namespace {

// The taxonomy of DESIGN.md (plus shutdown and the generic request/infrastructure codes),
// in ErrorCode order. gRPC numbers are grpc::StatusCode values.
constexpr std::array<ErrorCodeInfo, 11> kTable = {{
    {ErrorCode::deadline_exceeded, "deadline_exceeded", "timeout", false, 504, "DEADLINE_EXCEEDED", 4,
     "DEADLINE_EXCEEDED", 6, "the time budget ran out", true},
    {ErrorCode::cancelled, "cancelled", "cancelled", false, 499, "CANCELLED", 1, "CANCELLED", 130,
     "the caller cancelled the request", true},
    {ErrorCode::shutdown, "shutdown", "unavailable", true, 503, "SHUTTING_DOWN", 14, "UNAVAILABLE", 143,
     "the server is shutting down", true},
    {ErrorCode::commit_ambiguous, "commit_ambiguous", "internal", false, 500, "COMMIT_AMBIGUOUS", 2, "UNKNOWN", 1,
     "the operation was stopped at or after its commit point; it may have taken effect", false},
    {ErrorCode::attempt_timeout, "attempt_timeout", "infrastructure", true, 504, "UPSTREAM_TIMEOUT", 14,
     "UNAVAILABLE", 1, "an attempt timed out", true},
    {ErrorCode::overloaded, "overloaded", "unavailable", true, 503, "OVERLOADED", 8, "RESOURCE_EXHAUSTED", 1,
     "the service is overloaded", true},
    {ErrorCode::idempotency_conflict, "idempotency_conflict", "conflict", false, 409, "IDEMPOTENCY_CONFLICT", 10,
     "ABORTED", 1, "the idempotency key is in use by a different or concurrent request", false},
    {ErrorCode::invalid_argument, "invalid_argument", "invalid", false, 400, "BAD_USER_INPUT", 3,
     "INVALID_ARGUMENT", 2, "the request is invalid", false},
    {ErrorCode::not_found, "not_found", "not_found", false, 404, "NOT_FOUND", 5, "NOT_FOUND", 1,
     "not found", false},
    {ErrorCode::unavailable, "unavailable", "unavailable", true, 503, "UNAVAILABLE", 14, "UNAVAILABLE", 1,
     "a dependency is unavailable", true},
    {ErrorCode::internal, "internal", "internal", false, 500, "INTERNAL_SERVER_ERROR", 13, "INTERNAL", 1,
     "internal error", false},
}};

constexpr bool TableIsInCodeOrder() {
  for (std::size_t i = 0; i < kTable.size(); ++i) {
    if (static_cast<std::size_t>(kTable[i].code) != i) return false;
  }
  return true;
}
static_assert(TableIsInCodeOrder(), "kTable rows must follow ErrorCode order");
static_assert(kTable.size() == static_cast<std::size_t>(ErrorCode::internal) + 1, "one row per ErrorCode");

}  // namespace

const ErrorCodeInfo& info(ErrorCode code) noexcept {
  const auto i = static_cast<std::size_t>(code);
  return i < kTable.size() ? kTable[i] : kTable.back();
}

std::span<const ErrorCodeInfo> all_error_codes() noexcept { return kTable; }

std::optional<ErrorCode> parse_error_code(std::string_view name) noexcept {
  for (const auto& row : kTable) {
    if (row.name == name) return row.code;
  }
  return std::nullopt;
}

std::optional<ErrorCode> parse_graphql_error_code(std::string_view graphql_code) noexcept {
  for (const auto& row : kTable) {
    if (row.graphql_code == graphql_code) return row.code;
  }
  return std::nullopt;
}

ErrorCode error_code_for(StopReason reason) noexcept {
  switch (reason) {
    case StopReason::deadline_exceeded: return ErrorCode::deadline_exceeded;
    case StopReason::cancelled: return ErrorCode::cancelled;
    case StopReason::shutdown: return ErrorCode::shutdown;
    case StopReason::none: break;
  }
  return ErrorCode::internal;
}

int cli_exit_code(ErrorCode code, int signal_number) noexcept {
  if ((code == ErrorCode::cancelled || code == ErrorCode::shutdown) && signal_number > 0) {
    return 128 + signal_number;
  }
  return info(code).cli_exit;
}

Error::Error(ErrorCode code, std::string message, std::string request_id)
    : code_(code), message_(std::move(message)), request_id_(std::move(request_id)) {
  if (message_.empty()) message_ = std::string(cutoff::info(code_).summary);
  what_.reserve(cutoff::info(code_).name.size() + 2 + message_.size());
  what_.append(cutoff::info(code_).name).append(": ").append(message_);
}

Error Error::stopped(StopReason reason, std::string request_id) {
  Error e(error_code_for(reason), {}, std::move(request_id));
  e.stop_reason_ = reason;
  return e;
}

}  // namespace cutoff
