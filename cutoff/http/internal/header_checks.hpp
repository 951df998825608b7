// The checks a request's header passes before any handler sees it, and the answer a request
// that fails them (or cannot be read) gets. Used by the server's request reader and the
// request-parser fuzz target.
//
//   const std::size_t end = internal::find_header_end(bytes, scanned);   // npos: read more
//   if (internal::has_obs_fold(bytes, end)) ...;                        // 400, close
//   if (auto why = internal::framing_error(parser.get()); !why.empty()) ...;  // 400, close
//   const int status = internal::StatusForReadError(ec);                // 431, 413, 408, 400; 0: close silently
#ifndef CUTOFF_HTTP_INTERNAL_HEADER_CHECKS_HPP_
#define CUTOFF_HTTP_INTERNAL_HEADER_CHECKS_HPP_

#include <boost/system/error_code.hpp>
#include <cstddef>
#include <string_view>

#include "cutoff/http/internal/beast_request.hpp"

namespace cutoff::http::internal {

// Where the header block that starts `bytes` ends (just past its empty line), or npos while it
// is incomplete; `from` resumes a search over bytes already searched. Beast parses a header
// only once all of it is buffered, so the server gathers it first and can look at the raw
// lines, which Beast does not show.
std::size_t find_header_end(std::string_view bytes, std::size_t from = 0) noexcept;

// True when a line of the header block (`bytes` up to `header_end`) starts with SP or HTAB:
// obs-fold. Beast joins such a line to the previous field; RFC 9112 section 5.2 lets a server
// reject it instead, and we do, because a proxy in front may read the fold differently.
bool has_obs_fold(std::string_view bytes, std::size_t header_end) noexcept;

// True when `bytes` has an LF not preceded by CR at or after `from`. Beast ends a header only
// at CRLF CRLF, so a client ending its lines with bare LF would wait out the header timeout;
// the server refuses it at once instead.
bool has_bare_lf(std::string_view bytes, std::size_t from = 0) noexcept;

// RFC 9110 section 7.2: Host = uri-host [ ":" port ], so only the characters of a reg-name, an
// IP literal and a port.
bool ValidHost(std::string_view host) noexcept;

// The RFC 9112 framing rules Beast's parser leaves to the application, checked on a parsed
// header before any body byte is read. Empty when the request may be served; otherwise why
// it is answered 400 and the connection closed (the bytes after it are never parsed, so a
// request smuggled behind it never runs):
// - Transfer-Encoding whose codings are anything but exactly `chunked`: a final coding other
//   than chunked leaves the body's length unknown (Beast would read no body and parse the
//   body's bytes as the next request); we decode no other coding.
// - Transfer-Encoding together with Content-Length (Beast refuses only some orders of the two),
//   and Transfer-Encoding in an HTTP/1.0 request.
// - An HTTP/1.1 request without Host, any request with more than one, or a malformed one.
std::string_view framing_error(const BeastRequest& req);

// The status a request whose header or body could not be read is answered with: 431 (header
// too large), 413 (body too large), 408 (read timeout), 400 (malformed); 0 when the peer went
// away and the connection closes without an answer.
int StatusForReadError(const boost::system::error_code& ec) noexcept;

// The error document's code for such a status, which is also the bad-request metric's reason.
std::string_view ReadErrorCode(int status) noexcept;

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_HEADER_CHECKS_HPP_
