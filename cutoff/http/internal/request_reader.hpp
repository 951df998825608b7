// Reading one request off a connection, within the server's limits: the header block is
// gathered whole and checked (header_checks.hpp) before Beast parses it, then the body is
// read; each phase has its own timeout, enforced by the sweeper (io_timeouts.hpp).
//
//   internal::BeastRequestParser parser;
//   internal::configure_request_parser(parser, limits.max_header_bytes, limits.max_body_bytes);
//   if (auto failure = co_await internal::ReadRequest(c, buffer, parser, limits, first)) {
//     if (failure->status != 0) ...;  // answer failure->status, then close
//     co_return;                      // close
//   }
//   // parser.get() is a whole request that passed every check
#ifndef CUTOFF_HTTP_INTERNAL_REQUEST_READER_HPP_
#define CUTOFF_HTTP_INTERNAL_REQUEST_READER_HPP_

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <optional>
#include <string>

#include "cutoff/http/internal/beast_request.hpp"
#include "cutoff/http/internal/connection.hpp"
#include "cutoff/http/server.hpp"

namespace cutoff::http::internal {

// Why no request could be read. The connection closes after it: nothing after a request that
// could not be read, or whose framing is in doubt, is ever parsed.
struct ReadFailure {
  int status = 0;       // the answer (431, 413, 408, 400); 0: none (the peer went away or never spoke)
  std::string message;  // for the answer's error document
};

// Reads the next request of `c` into `parser`, from the bytes in `buffer` and the socket. The
// first request's header is due header_timeout after accept (a peer that connects and sends
// nothing holds its slot that long); a later one's first byte is awaited for idle_timeout,
// and its header is then due header_timeout later. A body is due body_timeout after its
// header; `Expect: 100-continue` is answered before it is read. nullopt: `parser` holds the
// whole request.
boost::asio::awaitable<std::optional<ReadFailure>> ReadRequest(Connection& c, boost::beast::flat_buffer& buffer,
                                                               BeastRequestParser& parser, const ServerLimits& limits,
                                                               bool first);

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_REQUEST_READER_HPP_
