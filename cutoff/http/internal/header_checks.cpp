#include "cutoff/http/internal/header_checks.hpp"

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <iterator>

#include "cutoff/http/internal/field_lists.hpp"
#include "cutoff/http/message.hpp"

namespace cutoff::http::internal {

namespace bhttp = boost::beast::http;

std::size_t find_header_end(std::string_view bytes, std::size_t from) noexcept {
  // Back up three bytes: the CRLF CRLF may straddle what was searched and what is new.
  const std::size_t at = bytes.find("\r\n\r\n", from < 3 ? 0 : from - 3);
  return at == std::string_view::npos ? at : at + 4;
}

bool has_obs_fold(std::string_view bytes, std::size_t header_end) noexcept {
  // Only line starts inside the block: the byte after the final CRLF CRLF is the body's.
  for (std::size_t at = bytes.find("\r\n"); at != std::string_view::npos && at + 4 < header_end;
       at = bytes.find("\r\n", at + 2)) {
    const char next = bytes[at + 2];
    if (next == ' ' || next == '\t') return true;
  }
  return false;
}

bool has_bare_lf(std::string_view bytes, std::size_t from) noexcept {
  for (std::size_t at = bytes.find('\n', from); at != std::string_view::npos; at = bytes.find('\n', at + 1))
    if (at == 0 || bytes[at - 1] != '\r') return true;
  return false;
}

bool ValidHost(std::string_view host) noexcept {
  for (char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '.' || c == '_' || c == '~' || c == '!' || c == '$' || c == '&' || c == '\'' || c == '(' ||
                    c == ')' || c == '*' || c == '+' || c == ',' || c == ';' || c == '=' || c == ':' || c == '[' ||
                    c == ']' || c == '%';
    if (!ok) return false;
  }
  return true;
}

namespace {

// Why the Transfer-Encoding fields of `req` are refused; empty when there are none, or they
// say exactly `chunked` in an HTTP/1.1 request without Content-Length.
std::string_view TransferEncodingError(const BeastRequest& req) {
  const auto te = req.equal_range(bhttp::field::transfer_encoding);
  if (te.first == te.second) return {};
  if (req.version() < 11) return "Transfer-Encoding is not allowed in an HTTP/1.0 request";
  if (req.find(bhttp::field::content_length) != req.end()) return "Content-Length and Transfer-Encoding together";
  int codings = 0;
  bool chunked = false;
  for (auto it = te.first; it != te.second; ++it) {
    ForEachListElement(std::string_view(it->value().data(), it->value().size()), [&](std::string_view coding) {
      ++codings;
      chunked = iequals(coding, "chunked");
    });
  }
  if (codings != 1 || !chunked) return "unsupported Transfer-Encoding (only chunked is accepted)";
  return {};
}

}  // namespace

std::string_view framing_error(const BeastRequest& req) {
  if (const auto why = TransferEncodingError(req); !why.empty()) return why;
  const auto hosts = req.equal_range(bhttp::field::host);
  if (hosts.first == hosts.second) {
    if (req.version() >= 11) return "an HTTP/1.1 request needs a Host header";
  } else {
    if (std::next(hosts.first) != hosts.second) return "more than one Host header";
    if (!ValidHost(std::string_view(hosts.first->value().data(), hosts.first->value().size())))
      return "malformed Host header";
  }
  return {};
}

int StatusForReadError(const boost::system::error_code& ec) noexcept {
  namespace asio = boost::asio;
  if (ec == bhttp::error::header_limit) return 431;
  if (ec == bhttp::error::body_limit) return 413;
  if (ec == boost::beast::error::timeout) return 408;
  if (ec == bhttp::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
      ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor || ec == bhttp::error::partial_message)
    return 0;
  return 400;
}

std::string_view ReadErrorCode(int status) noexcept {
  switch (status) {
    case 431: return "header_too_large";
    case 413: return "body_too_large";
    case 408: return "read_timeout";
    default: return "bad_request";
  }
}

}  // namespace cutoff::http::internal
