// How the server configures Beast's request parser and turns its result into a Request (the
// checks a parsed header passes are header_checks.hpp's). Shared by the server and the
// request-parser fuzz target; includes Beast, so keep it out of public headers.
#ifndef CUTOFF_HTTP_INTERNAL_BEAST_REQUEST_HPP_
#define CUTOFF_HTTP_INTERNAL_BEAST_REQUEST_HPP_

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
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
