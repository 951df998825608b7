#include "cutoff/http/error_document.hpp"

#include <boost/json/parse.hpp>

#include "cutoff/core/json_text.hpp"

namespace cutoff::http {

namespace json = boost::json;

std::string error_document(std::string_view code, std::string_view message, std::string_view request_id) {
  std::string out = "{\"error\":{\"code\":";
  append_json_string(out, code);
  out += ",\"message\":";
  append_json_string(out, message);
  if (!request_id.empty()) {
    out += ",\"request_id\":";
    append_json_string(out, request_id);
  }
  out += "}}";
  return out;
}

std::optional<RemoteError> parse_error_document(std::string_view body) {
  json::error_code ec;
  const json::value doc = json::parse(body, ec);
  const json::object* root = ec ? nullptr : doc.if_object();
  const json::value* error = root ? root->if_contains("error") : nullptr;
  if (!error || !error->is_object()) return std::nullopt;
  RemoteError out;
  if (const json::value* c = error->as_object().if_contains("code"); c && c->is_string())
    out.code = parse_error_code(std::string(c->as_string()));
  if (const json::value* m = error->as_object().if_contains("message"); m && m->is_string())
    out.message = std::string(m->as_string());
  return out;
}

}  // namespace cutoff::http
