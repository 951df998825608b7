#include "cutoff/core/error.hpp"

#include <array>
#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>

namespace cutoff {
namespace {

// The taxonomy of DESIGN.md (plus shutdown and the generic request/infrastructure codes),
// in ErrorCode order. gRPC numbers are grpc::StatusCode values.
constexpr std::array<ErrorCodeInfo, 11> kTable = {{
    {ErrorCode::deadline_exceeded, "deadline_exceeded", "timeout", false, 504, "DEADLINE_EXCEEDED", 4,
     "DEADLINE_EXCEEDED", 6, "the time budget ran out", true, StopReason::deadline_exceeded},
    {ErrorCode::cancelled, "cancelled", "cancelled", false, 499, "CANCELLED", 1, "CANCELLED", 130,
     "the caller cancelled the request", true, StopReason::cancelled},
    {ErrorCode::shutdown, "shutdown", "unavailable", true, 503, "SHUTTING_DOWN", 14, "UNAVAILABLE", 143,
     "the server is shutting down", true, StopReason::shutdown},
    {ErrorCode::commit_ambiguous, "commit_ambiguous", "internal", false, 500, "COMMIT_AMBIGUOUS", 2, "UNKNOWN", 1,
     "the operation was stopped at or after its commit point; it may have taken effect", false, StopReason::none},
    {ErrorCode::attempt_timeout, "attempt_timeout", "infrastructure", true, 504, "UPSTREAM_TIMEOUT", 14,
     "UNAVAILABLE", 1, "an attempt timed out", true, StopReason::none},
    {ErrorCode::overloaded, "overloaded", "unavailable", true, 503, "OVERLOADED", 8, "RESOURCE_EXHAUSTED", 1,
     "the service is overloaded", true, StopReason::none},
    {ErrorCode::idempotency_conflict, "idempotency_conflict", "conflict", false, 409, "IDEMPOTENCY_CONFLICT", 10,
     "ABORTED", 1, "the idempotency key is in use by a different or concurrent request", false, StopReason::none},
    {ErrorCode::invalid_argument, "invalid_argument", "invalid", false, 400, "BAD_USER_INPUT", 3,
     "INVALID_ARGUMENT", 2, "the request is invalid", false, StopReason::none},
    {ErrorCode::not_found, "not_found", "not_found", false, 404, "NOT_FOUND", 5, "NOT_FOUND", 1,
     "not found", false, StopReason::none},
    {ErrorCode::unavailable, "unavailable", "unavailable", true, 503, "UNAVAILABLE", 14, "UNAVAILABLE", 1,
     "a dependency is unavailable", true, StopReason::none},
    {ErrorCode::internal, "internal", "internal", false, 500, "INTERNAL_SERVER_ERROR", 13, "INTERNAL", 1,
     "internal error", false, StopReason::none},
}};

constexpr bool TableIsInCodeOrder() {
  for (std::size_t i = 0; i < kTable.size(); ++i) {
    if (static_cast<std::size_t>(kTable[i].code) != i) return false;
  }
  return true;
}
static_assert(TableIsInCodeOrder(), "kTable rows must follow ErrorCode order");
static_assert(kTable.size() == static_cast<std::size_t>(ErrorCode::internal) + 1, "one row per ErrorCode");

constexpr bool EveryStopHasOneCode() {
  for (const StopReason reason : {StopReason::deadline_exceeded, StopReason::cancelled, StopReason::shutdown}) {
    int rows = 0;
    for (const auto& row : kTable) rows += row.stop == reason ? 1 : 0;
    if (rows != 1) return false;
  }
  return true;
}
static_assert(EveryStopHasOneCode(), "each stop reason is reported by exactly one code");

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

ErrorCode error_code_for_grpc_status(int grpc_status) noexcept {
  const ErrorCodeInfo* only = nullptr;
  int rows = 0;
  for (const auto& row : kTable) {
    if (row.grpc_status != grpc_status) continue;
    bool same_name = row.name.size() == row.grpc_name.size();
    for (std::size_t i = 0; same_name && i < row.name.size(); ++i)
      same_name = row.name[i] == (row.grpc_name[i] >= 'A' && row.grpc_name[i] <= 'Z' ? row.grpc_name[i] - 'A' + 'a'
                                                                                      : row.grpc_name[i]);
    if (same_name) return row.code;
    only = &row;
    ++rows;
  }
  if (rows == 1 && only->code != ErrorCode::commit_ambiguous) return only->code;
  switch (grpc_status) {
    case 6:   // ALREADY_EXISTS
    case 7:   // PERMISSION_DENIED
    case 9:   // FAILED_PRECONDITION
    case 11:  // OUT_OF_RANGE
    case 16:  // UNAUTHENTICATED
      return ErrorCode::invalid_argument;
    case 12:  // UNIMPLEMENTED
      return ErrorCode::not_found;
    default:  // UNKNOWN, INTERNAL, DATA_LOSS, anything else
      return ErrorCode::internal;
  }
}

ErrorCode error_code_for(StopReason reason) noexcept {
  if (reason == StopReason::none) return ErrorCode::internal;
  for (const auto& row : kTable) {
    if (row.stop == reason) return row.code;
  }
  return ErrorCode::internal;
}

bool is_cancellation(const std::exception_ptr& failure) noexcept {
  if (!failure) return false;
  try {
    std::rethrow_exception(failure);
  } catch (const Error& error) {
    return is_stop(error.code());
  } catch (const boost::system::system_error& error) {
    return error.code() == boost::asio::error::operation_aborted;
  } catch (...) {
  }
  return false;
}

Error to_error(const std::exception_ptr& failure, StopReason aborted_by, std::string request_id) {
  if (!failure) return Error(ErrorCode::internal, "no exception", std::move(request_id));
  try {
    std::rethrow_exception(failure);
  } catch (const Error& error) {
    return error;
  } catch (const boost::system::system_error& error) {
    if (error.code() == boost::asio::error::operation_aborted && aborted_by != StopReason::none)
      return Error::stopped(aborted_by, std::move(request_id));
    return Error(ErrorCode::internal, error.what(), std::move(request_id));
  } catch (const std::exception& error) {
    return Error(ErrorCode::internal, error.what(), std::move(request_id));
  } catch (...) {
  }
  return Error(ErrorCode::internal, "unknown exception", std::move(request_id));
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
