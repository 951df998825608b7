// The Idempotency-Key header of a request, as a route that applies a write reads it: one header
// at most, a clear invalid_argument error otherwise.
//
//   std::optional<std::string> key = cutoff::http::idempotency_key(req, ctx.request_id());
//   std::string order = cutoff::http::required_idempotency_key(
//       req, "POST /orders needs an Idempotency-Key header (it is the order's id)", ctx.request_id());
//
// What a key may hold (length, characters) is the effects store's rule
// (effects::check_idempotency_key), checked where the key is used.
#ifndef CUTOFF_HTTP_IDEMPOTENCY_KEY_HPP_
#define CUTOFF_HTTP_IDEMPOTENCY_KEY_HPP_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/core/error.hpp"
#include "cutoff/http/message.hpp"

namespace cutoff::http {

// The key, or nullopt without the header; invalid_argument when it is sent more than once.
inline std::optional<std::string> idempotency_key(const Request& req, const std::string& request_id) {
  const std::vector<std::string_view> keys = req.headers.get_all("Idempotency-Key");
  if (keys.size() > 1)
    throw Error(ErrorCode::invalid_argument, "send one Idempotency-Key header, not " + std::to_string(keys.size()),
                request_id);
  if (keys.empty()) return std::nullopt;
  return std::string(keys.front());
}

// The key a route cannot do without: invalid_argument with `missing` when there is none.
inline std::string required_idempotency_key(const Request& req, std::string_view missing,
                                            const std::string& request_id) {
  std::optional<std::string> key = idempotency_key(req, request_id);
  if (!key) throw Error(ErrorCode::invalid_argument, std::string(missing), request_id);
  return std::move(*key);
}

}  // namespace cutoff::http

#endif  // CUTOFF_HTTP_IDEMPOTENCY_KEY_HPP_
