#include "cutoff/http/message.hpp"

#include <algorithm>

namespace cutoff::http {

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    unsigned char x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x + 32);
    if (y >= 'A' && y <= 'Z') y = static_cast<unsigned char>(y + 32);
    if (x != y) return false;
  }
  return true;
}

std::optional<std::string_view> Headers::get(std::string_view name) const noexcept {
  for (const auto& f : fields_)
    if (iequals(f.name, name)) return std::string_view(f.value);
  return std::nullopt;
}

std::vector<std::string_view> Headers::get_all(std::string_view name) const {
  std::vector<std::string_view> out;
  for (const auto& f : fields_)
    if (iequals(f.name, name)) out.emplace_back(f.value);
  return out;
}

void Headers::set(std::string_view name, std::string_view value) {
  erase(name);
  add(name, value);
}

void Headers::add(std::string_view name, std::string_view value) {
  fields_.push_back(Field{std::string(name), std::string(value)});
}

void Headers::erase(std::string_view name) {
  std::erase_if(fields_, [&](const Field& f) { return iequals(f.name, name); });
}

std::vector<HeaderField> Headers::views() const {
  std::vector<HeaderField> out;
  out.reserve(fields_.size());
  for (const auto& f : fields_) out.push_back(HeaderField{f.name, f.value});
  return out;
}

std::string_view Request::path() const noexcept {
  std::string_view t = target;
  return t.substr(0, t.find('?'));
}

std::string_view Request::query() const noexcept {
  std::string_view t = target;
  const auto q = t.find('?');
  if (q == std::string_view::npos) return {};
  t = t.substr(q + 1);
  return t.substr(0, t.find('#'));
}

std::optional<std::string> Request::query_param(std::string_view name) const {
  std::string_view rest = query();
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const auto eq = pair.find('=');
    const auto key = percent_decode(pair.substr(0, eq));
    if (!key || *key != name) continue;
    if (eq == std::string_view::npos) return std::string();
    return percent_decode(pair.substr(eq + 1));
  }
  return std::nullopt;
}

std::optional<std::string> percent_decode(std::string_view in, bool plus_is_space) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      const int hi = hex(in[i + 1]), lo = hex(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Response Response::text(int status, std::string body, std::string_view content_type) {
  Response r;
  r.status = status;
  r.headers.reserve(4);  // room for the server's X-Request-Id and a few more without regrowing
  r.headers.set("Content-Type", content_type);
  r.body = std::move(body);
  return r;
}

Response Response::json(int status, std::string body, std::string_view content_type) {
  return text(status, std::move(body), content_type);
}

bool safe_method(std::string_view m) noexcept {
  return m == "GET" || m == "HEAD" || m == "OPTIONS" || m == "TRACE";
}

std::string_view reason_phrase(int status) noexcept {
  switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

}  // namespace cutoff::http
