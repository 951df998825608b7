#include "cutoff/grpc/internal/status.hpp"

#include <string>

namespace cutoff::grpc::internal {

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
