// How the server configures Beast's request parser and turns its result into a Request.
// Shared by the server and the request-parser fuzz target; includes Beast, so keep it out of
// public headers.
#ifndef CUTOFF_HTTP_INTERNAL_BEAST_REQUEST_HPP_
#define CUTOFF_HTTP_INTERNAL_BEAST_REQUEST_HPP_

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>

#include "cutoff/http/message.hpp"

namespace cutoff::http::internal {

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;
using BeastRequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

inline void configure_request_parser(BeastRequestParser& parser, std::size_t max_header_bytes,
                                     std::size_t max_body_bytes) {
  parser.header_limit(static_cast<std::uint32_t>(max_header_bytes));
  parser.body_limit(max_body_bytes);
}

// Where the header block that starts `bytes` ends (just past its empty line), or npos while
// it is incomplete. Beast parses a header only once all of it is buffered, so the server
// gathers it first and can look at the raw lines, which Beast does not show.
inline std::size_t find_header_end(std::string_view bytes, std::size_t from = 0) {
  const std::size_t at = bytes.find("\r\n\r\n", from < 3 ? 0 : from - 3);
  return at == std::string_view::npos ? at : at + 4;
}

// True when a line of the header block (`bytes` up to `header_end`) starts with SP or HTAB:
// obs-fold. Beast joins such a line to the previous field; RFC 9112 section 5.2 lets a server
// reject it instead, and we do, because a proxy in front may read the fold differently.
inline bool has_obs_fold(std::string_view bytes, std::size_t header_end) {
  // Only line starts inside the block: the byte after the final CRLF CRLF is the body's.
  for (std::size_t at = bytes.find("\r\n"); at != std::string_view::npos && at + 4 < header_end;
       at = bytes.find("\r\n", at + 2)) {
    const char next = bytes[at + 2];
    if (next == ' ' || next == '\t') return true;
  }
  return false;
}

// True when `bytes` has an LF not preceded by CR at or after `from`. Beast ends a header only
// at CRLF CRLF, so a client ending its lines with bare LF would wait out the header timeout;
// the server refuses it at once instead.
inline bool has_bare_lf(std::string_view bytes, std::size_t from = 0) {
  for (std::size_t at = bytes.find('\n', from); at != std::string_view::npos; at = bytes.find('\n', at + 1))
    if (at == 0 || bytes[at - 1] != '\r') return true;
  return false;
}

namespace detail {

inline bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// RFC 9110 section 7.2: Host = uri-host [ ":" port ], so only the characters of a reg-name,
// an IP literal and a port.
inline bool ValidHost(std::string_view host) {
  for (char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '.' || c == '_' || c == '~' || c == '!' || c == '$' || c == '&' || c == '\'' || c == '(' ||
                    c == ')' || c == '*' || c == '+' || c == ',' || c == ';' || c == '=' || c == ':' || c == '[' ||
                    c == ']' || c == '%';
    if (!ok) return false;
  }
  return true;
}

}  // namespace detail

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
inline std::string_view framing_error(const BeastRequest& req) {
  namespace bhttp = boost::beast::http;
  const auto te = req.equal_range(bhttp::field::transfer_encoding);
  if (te.first != te.second) {
    if (req.version() < 11) return "Transfer-Encoding is not allowed in an HTTP/1.0 request";
    if (req.find(bhttp::field::content_length) != req.end())
      return "Content-Length and Transfer-Encoding together";
    int codings = 0;
    bool chunked = false;
    for (auto it = te.first; it != te.second; ++it) {
      std::string_view list(it->value().data(), it->value().size());
      while (!list.empty()) {
        const auto comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
        while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
        if (item.empty()) continue;  // empty list elements do not count (RFC 9110 section 5.6.1)
        ++codings;
        chunked = detail::IEquals(item, "chunked");
      }
    }
    if (codings != 1 || !chunked) return "unsupported Transfer-Encoding (only chunked is accepted)";
  }
  const auto hosts = req.equal_range(bhttp::field::host);
  if (hosts.first == hosts.second) {
    if (req.version() >= 11) return "an HTTP/1.1 request needs a Host header";
  } else {
    if (std::next(hosts.first) != hosts.second) return "more than one Host header";
    if (!detail::ValidHost(std::string_view(hosts.first->value().data(), hosts.first->value().size())))
      return "malformed Host header";
  }
  return {};
}

inline Request to_request(BeastRequest&& in, std::string remote_address) {
  Request out;
  out.method = std::string(in.method_string());
  out.target = std::string(in.target());
  out.version = in.version();
  out.headers.reserve(16);
  for (const auto& field : in) out.headers.add(field.name_string(), field.value());
  out.body = std::move(in.body());
  out.remote_address = std::move(remote_address);
  return out;
}

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_BEAST_REQUEST_HPP_
