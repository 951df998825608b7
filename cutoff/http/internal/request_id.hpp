// Request ids: the caller's `X-Request-Id` when it is safe to log and echo, a new one otherwise.
// The server puts the id on the request's context, its log line and its response.
//
//   std::string id = internal::RequestIdFor(req);  // "req-42" as sent, or e.g. "3f9a0c61d2b7e48"
#ifndef CUTOFF_HTTP_INTERNAL_REQUEST_ID_HPP_
#define CUTOFF_HTTP_INTERNAL_REQUEST_ID_HPP_

#include <string>

#include "cutoff/http/message.hpp"

namespace cutoff::http::internal {

// The caller's X-Request-Id when it is valid, a new one otherwise.
std::string RequestIdFor(const Request& req);

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_REQUEST_ID_HPP_
