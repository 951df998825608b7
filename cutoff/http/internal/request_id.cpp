#include "cutoff/http/internal/request_id.hpp"

#include "cutoff/observe/request_id.hpp"

namespace cutoff::http::internal {

std::string RequestIdFor(const Request& req) {
  if (auto id = req.headers.get("X-Request-Id"); id && observe::valid_request_id(*id)) return std::string(*id);
  return observe::new_request_id();
}

}  // namespace cutoff::http::internal
