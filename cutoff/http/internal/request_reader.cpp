#include "cutoff/http/internal/request_reader.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <string_view>

#include "cutoff/http/internal/header_checks.hpp"

namespace cutoff::http::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::as_tuple;
using asio::use_awaitable;

namespace {

constexpr std::size_t kReadSize = 4096;

std::string_view Bytes(const beast::flat_buffer& buffer) {
  return {static_cast<const char*>(buffer.data().data()), buffer.size()};
}

struct HeaderVerdict {
  boost::system::error_code error;  // Beast could not parse it
  std::string_view refused;         // parsed (or not), and refused by our checks
};

// Parses the gathered header block at the start of `buffer` (complete, or as much as the limit
// allows) into `parser`, unless its raw lines are refused: a bare LF (seen while gathering),
// obs-fold (which Beast's parser silently joins). A parsed header must pass the framing checks.
HeaderVerdict ParseHeader(beast::flat_buffer& buffer, BeastRequestParser& parser, std::size_t header_end,
                          bool bare_lf) {
  HeaderVerdict verdict;
  if (bare_lf) {
    verdict.refused = "a header line ends with a bare LF (CRLF is required)";
  } else if (header_end != std::string_view::npos && has_obs_fold(Bytes(buffer).substr(0, header_end), header_end)) {
    verdict.refused = "obs-fold (a header line continued on the next) is not accepted";
  } else {
    // The whole block is buffered (or the limit reached): one put parses it, or fails.
    buffer.consume(parser.put(buffer.data(), verdict.error));
    if (!verdict.error && !parser.is_header_done()) verdict.error = bhttp::error::header_limit;
    if (!verdict.error) verdict.refused = framing_error(parser.get());
  }
  return verdict;
}

// Reads the body of the request whose header `parser` holds, under body_timeout.
asio::awaitable<boost::system::error_code> ReadBody(Connection& c, beast::flat_buffer& buffer,
                                                    BeastRequestParser& parser, const ServerLimits& limits) {
  if (iequals(parser.get()[bhttp::field::expect], "100-continue")) {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    c.SetIoDeadline(limits.write_timeout);
    co_await asio::async_write(c.stream, asio::buffer(kContinue.data(), kContinue.size()),
                               as_tuple(use_awaitable));
    c.ClearIoDeadline();
  }
  c.SetIoDeadline(limits.body_timeout);
  auto [ec, n] = co_await bhttp::async_read(c.stream, buffer, parser, as_tuple(use_awaitable));
  c.ClearIoDeadline();
  co_return c.io_timed_out ? beast::error::timeout : ec;
}

}  // namespace

asio::awaitable<std::optional<ReadFailure>> ReadRequest(Connection& c, beast::flat_buffer& buffer,
                                                        BeastRequestParser& parser, const ServerLimits& limits,
                                                        bool first) {
  if (first) {
    c.SetIoDeadlineAt(c.accepted + limits.header_timeout);
  } else {
    if (buffer.size() == 0) {  // nothing pipelined: wait for the first byte under the idle timeout
      c.SetIoDeadline(limits.idle_timeout);
      auto [ec, n] = co_await c.stream.async_read_some(buffer.prepare(kReadSize), as_tuple(use_awaitable));
      c.ClearIoDeadline();
      if (ec) co_return ReadFailure{};
      buffer.commit(n);
    }
    c.SetIoDeadline(limits.header_timeout);
  }
  // Gather the whole header block before parsing it (Beast would too), so its raw lines can
  // be checked.
  boost::system::error_code ec;
  std::size_t header_end = std::string_view::npos;
  bool bare_lf = false;
  for (std::size_t scanned = 0;;) {
    const std::string_view data = Bytes(buffer);
    header_end = find_header_end(data, scanned);
    if (header_end != std::string_view::npos || data.size() >= limits.max_header_bytes) break;
    // (Once the block is complete, Beast's parser refuses a bare LF in it itself.)
    if ((bare_lf = has_bare_lf(data, scanned))) break;
    scanned = data.size();
    auto [rec, n] = co_await c.stream.async_read_some(buffer.prepare(kReadSize), as_tuple(use_awaitable));
    if (rec) {
      ec = rec;
      break;
    }
    buffer.commit(n);
  }
  c.ClearIoDeadline();
  if (c.io_timed_out) {
    if (buffer.size() == 0) co_return ReadFailure{};  // it never said anything: nothing to answer
    ec = beast::error::timeout;
  }
  std::string_view refused;
  if (!ec) {
    const HeaderVerdict verdict = ParseHeader(buffer, parser, header_end, bare_lf);
    ec = verdict.error;
    refused = verdict.refused;
  }
  if (!ec && refused.empty() && !parser.is_done()) ec = co_await ReadBody(c, buffer, parser, limits);
  if (!ec && refused.empty()) co_return std::nullopt;
  const int status = ec ? StatusForReadError(ec) : 400;
  if (status == 0) co_return ReadFailure{};
  co_return ReadFailure{status, ec ? ec.message() : std::string(refused)};
}

}  // namespace cutoff::http::internal
