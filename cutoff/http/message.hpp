// HTTP requests and responses as plain values, for handlers that should not see Beast.
//
// The server parses with Beast and hands handlers these types; keeping Beast out of this
// header keeps every file that defines a route quick to compile.
//
//   server.route("GET", "/hello", [](const Request& req, const Context& ctx) -> asio::awaitable<Response> {
//     std::string who(req.query_param("name").value_or("world"));
//     co_return Response::text(200, "hello " + who + "\n");
//   });
#ifndef CUTOFF_HTTP_MESSAGE_HPP_
#define CUTOFF_HTTP_MESSAGE_HPP_

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/core/budget_headers.hpp"

namespace cutoff::http {

// Header fields in arrival order; names compare case-insensitively.
class Headers {
 public:
  struct Field {
    std::string name;
    std::string value;
  };

  // The first value of `name`, if any.
  std::optional<std::string_view> get(std::string_view name) const noexcept;
  // Every value of `name`, in order.
  std::vector<std::string_view> get_all(std::string_view name) const;
  bool contains(std::string_view name) const noexcept { return get(name).has_value(); }
  // Replaces every `name` field with one.
  void set(std::string_view name, std::string_view value);
  void add(std::string_view name, std::string_view value);
  void erase(std::string_view name);

  const std::vector<Field>& fields() const noexcept { return fields_; }
  // The fields as views for parse_inbound_budget().
  std::vector<HeaderField> views() const;
  bool empty() const noexcept { return fields_.empty(); }
  void reserve(std::size_t n) { fields_.reserve(n); }

 private:
  std::vector<Field> fields_;
};

bool iequals(std::string_view a, std::string_view b) noexcept;

struct Request {
  std::string method;  // "GET", "POST", ... as sent (methods are case-sensitive)
  std::string target;  // "/graphql?query=..."
  unsigned version = 11;  // 10 or 11
  Headers headers;
  std::string body;
  std::string remote_address;  // "127.0.0.1:53211"

  // The target's path ("/graphql") and raw query ("query=..."; empty when none).
  std::string_view path() const noexcept;
  std::string_view query() const noexcept;
  // The percent-decoded value of the first `name` parameter in the query string ('+' is a
  // space, as HTML forms send it). Malformed escapes leave the value as nullopt.
  std::optional<std::string> query_param(std::string_view name) const;
};

struct Response {
  int status = 200;
  Headers headers;
  std::string body;

  static Response text(int status, std::string body, std::string_view content_type = "text/plain; charset=utf-8");
  static Response json(int status, std::string body, std::string_view content_type = "application/json");
};

// True for the methods that do not write (GET, HEAD, OPTIONS, TRACE): a request with any other
// method may take effect where it is handled.
bool safe_method(std::string_view method) noexcept;

// The reason phrase for a status code ("Gateway Timeout"); "Unknown" for codes it does not know.
std::string_view reason_phrase(int status) noexcept;

// Percent-decodes a query component ('+' is a space). nullopt for a malformed escape.
std::optional<std::string> percent_decode(std::string_view in, bool plus_is_space = true);

}  // namespace cutoff::http

#endif  // CUTOFF_HTTP_MESSAGE_HPP_
