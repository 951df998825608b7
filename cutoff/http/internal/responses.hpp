// The answers the server writes on its own (a handler's error, a refused connection) and the
// status line and header block every response goes out with.
//
//   Response r = internal::ErrorResponse(ErrorCode::not_found, "no route for /x", request_id);
//   bool dropped = false;
//   std::string head = internal::SerializeHead(r, 11, /*keep_alive=*/true, &dropped);
//   // write `head` and `r.body` in one gathered send
#ifndef CUTOFF_HTTP_INTERNAL_RESPONSES_HPP_
#define CUTOFF_HTTP_INTERNAL_RESPONSES_HPP_

#include <string>
#include <string_view>

#include "cutoff/core/error.hpp"
#include "cutoff/http/message.hpp"

namespace cutoff::http::internal {

// The taxonomy's status and a JSON error document; a deadline_exceeded answer also carries
// `Deadline-Expired: 1`. The message of an `internal` error stays in the log: the client gets
// the taxonomy's summary.
Response ErrorResponse(ErrorCode code, std::string_view message, std::string_view request_id);
// The same for `e`, with `Retry-After` when it carries the server's pushback (a retryable
// error only: a stop or a refusal on the request's merits is not worth another attempt).
Response ErrorResponse(const Error& e, std::string_view request_id);

// 1xx, 204 and 304 responses have no body (RFC 9110 section 6.4.1).
inline bool Bodiless(int status) noexcept { return (status >= 100 && status < 200) || status == 204 || status == 304; }

// The status line and header block of `r`: one contiguous buffer, written together with the
// body in a single gathered send. Framing fields (Content-Length, Connection,
// Transfer-Encoding) are the server's; fields a handler set that would break the framing
// (CR, LF or NUL in a value, a malformed name) are dropped, never written, and `*dropped` is
// set.
std::string SerializeHead(const Response& r, unsigned version, bool keep_alive, bool* dropped);

// The whole answer to a connection refused at a connection cap, written before any request is
// read: a 503 the client can parse and retry after.
std::string RefusalResponse(std::string_view message);

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_RESPONSES_HPP_
