// Errors as gRPC statuses and back, both ways through the one table in core (error.hpp): the
// server answers an Error with its row's status and names the taxonomy's code in the trailer
// `cutoff-error-code`; the client reads that trailer first (a cutoff server's exact code) and
// the status otherwise (any other server).
//
//   ::grpc::Status s = internal::StatusFor(error);   // DEADLINE_EXCEEDED, "the time budget ran out"
//   ErrorCode code = internal::CodeFor(status, trailer_code);
#ifndef CUTOFF_GRPC_INTERNAL_STATUS_HPP_
#define CUTOFF_GRPC_INTERNAL_STATUS_HPP_

#include <grpcpp/support/status.h>

#include <optional>
#include <string>
#include <string_view>

#include "cutoff/core/error.hpp"

namespace cutoff::grpc::internal {

inline constexpr std::string_view kErrorCodeTrailer = "cutoff-error-code";
inline constexpr std::string_view kRequestIdKey = "x-request-id";
// core's Deadline-Budget-Ms, lowercased as gRPC metadata keys must be.
inline constexpr std::string_view kBudgetMetadataKey = "deadline-budget-ms";

// gRPC's retry pushback (A6, "Retry Pushback"): the server's wait before another attempt, in
// whole milliseconds; a negative or unreadable value asks the client not to retry at all.
inline constexpr std::string_view kRetryPushbackTrailer = "grpc-retry-pushback-ms";

// The trailer's value for a pushback (Error::kDoNotRetry is "-1").
std::string FormatPushback(Duration wait);
// The pushback a trailer's value stands for (Error::kDoNotRetry for negative or unreadable).
Duration ParsePushback(std::string_view value);

// The status `e` is answered with. Internal errors say only "internal error".
::grpc::Status StatusFor(const Error& e);

// The code a failed call stands for: the trailer's when it names one, else the status's row.
ErrorCode CodeFor(const ::grpc::Status& status, std::optional<std::string_view> trailer_code);

}  // namespace cutoff::grpc::internal

#endif  // CUTOFF_GRPC_INTERNAL_STATUS_HPP_
