#include "cutoff/grpc/internal/status.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

namespace cutoff::grpc::internal {

std::string FormatPushback(Duration wait) {
  if (wait == Error::kDoNotRetry) return "-1";
  return std::to_string(std::chrono::ceil<std::chrono::milliseconds>(std::max(wait, Duration::zero())).count());
}

Duration ParsePushback(std::string_view value) {
  // A day is more than any policy waits (max_pushback); digits past it need not be read.
  constexpr std::int64_t kCap = 86'400'000;
  if (value.empty() || value.size() > 19) return Error::kDoNotRetry;
  std::int64_t ms = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return Error::kDoNotRetry;
    ms = std::min<std::int64_t>(ms * 10 + (c - '0'), kCap);
  }
  return std::chrono::milliseconds(ms);
}

::grpc::Status StatusFor(const Error& e) {
  const ErrorCodeInfo& row = e.info();
  const std::string message = e.code() == ErrorCode::internal ? std::string(row.summary) : e.message();
  return ::grpc::Status(static_cast<::grpc::StatusCode>(row.grpc_status), message);
}

ErrorCode CodeFor(const ::grpc::Status& status, std::optional<std::string_view> trailer_code) {
  if (trailer_code) {
    if (auto named = parse_error_code(*trailer_code)) return *named;
  }
  return error_code_for_grpc_status(static_cast<int>(status.error_code()));
}

}  // namespace cutoff::grpc::internal
