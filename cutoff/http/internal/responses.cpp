#include "cutoff/http/internal/responses.hpp"

#include "cutoff/core/budget_headers.hpp"
#include "cutoff/http/error_document.hpp"
#include "cutoff/http/retry_after.hpp"

namespace cutoff::http::internal {

namespace {

bool ValidFieldName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u >= 0x7f || c == ':' || c == '(' || c == ')' || c == ',' || c == ';' || c == '"' || c == '/' ||
        c == '[' || c == ']' || c == '?' || c == '=' || c == '{' || c == '}' || c == '\\' || c == '<' || c == '>' ||
        c == '@')
      return false;
  }
  return true;
}

bool ValidFieldValue(std::string_view value) {
  for (char c : value)
    if (c == '\r' || c == '\n' || c == '\0') return false;
  return true;
}

}  // namespace

Response ErrorResponse(ErrorCode code, std::string_view message, std::string_view request_id) {
  const auto& info = cutoff::info(code);
  const std::string_view shown = code == ErrorCode::internal ? info.summary : message;
  Response r = Response::json(info.http_status, error_document(info.name, shown, request_id));
  if (code == ErrorCode::deadline_exceeded) r.headers.set(kDeadlineExpiredHeader, "1");
  return r;
}

Response ErrorResponse(const Error& e, std::string_view request_id) {
  Response r = ErrorResponse(e.code(), e.message(), request_id);
  if (e.retry_after() && *e.retry_after() != Error::kDoNotRetry && retry_may_help(e.code()))
    r.headers.set("Retry-After", format_retry_after(*e.retry_after()));
  return r;
}

std::string SerializeHead(const Response& r, unsigned version, bool keep_alive, bool* dropped) {
  std::string out;
  out.reserve(96 + r.headers.fields().size() * 48);
  out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(r.status);
  out += ' ';
  out += reason_phrase(r.status);
  out += "\r\n";
  for (const auto& f : r.headers.fields()) {
    if (iequals(f.name, "Content-Length") || iequals(f.name, "Connection") || iequals(f.name, "Transfer-Encoding"))
      continue;
    if (!ValidFieldName(f.name) || !ValidFieldValue(f.value)) {
      *dropped = true;
      continue;
    }
    out += f.name;
    out += ": ";
    out += f.value;
    out += "\r\n";
  }
  if (!Bodiless(r.status)) {
    out += "Content-Length: ";
    out += std::to_string(r.body.size());
    out += "\r\n";
  }
  if (version >= 11 && !keep_alive) out += "Connection: close\r\n";
  if (version < 11 && keep_alive) out += "Connection: keep-alive\r\n";
  out += "\r\n";
  return out;
}

std::string RefusalResponse(std::string_view message) {
  Response r = Response::json(503, error_document("overloaded", message, {}));
  r.headers.set("Retry-After", "1");
  bool dropped = false;
  return SerializeHead(r, 11, /*keep_alive=*/false, &dropped) + r.body;
}

}  // namespace cutoff::http::internal
