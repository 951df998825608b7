#include "cutoff/graphql/http/graphql_over_http.hpp"

#include <boost/json/parse.hpp>
#include <memory>
#include <optional>
#include <string_view>

#include "cutoff/core/error.hpp"
#include "cutoff/core/json_text.hpp"
#include "cutoff/graphql/http/server_log_recorder.hpp"
#include "cutoff/graphql/internal/preparation.hpp"

namespace cutoff::graphql {

namespace asio = boost::asio;
namespace json = boost::json;
using HttpResponse = http::Response;

namespace {

constexpr std::string_view kGraphQLResponse = "application/graphql-response+json";
constexpr std::string_view kJson = "application/json";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return out;
}

// Picks the response media type from Accept; empty when nothing we produce is
// acceptable.
std::string_view Negotiate(std::optional<std::string_view> accept) {
  if (!accept || Trim(*accept).empty()) return kJson;
  bool json_ok = false;
  std::string_view rest = *accept;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto semi = item.find(';');
    const std::string type = Lower(Trim(item.substr(0, semi)));
    std::string_view params = semi == std::string_view::npos ? std::string_view() : item.substr(semi);
    // "q=0" means "not acceptable".
    const std::string lp = Lower(params);
    if (lp.find("q=0") != std::string::npos && lp.find("q=0.") == std::string::npos) continue;
    if (type == kGraphQLResponse) return kGraphQLResponse;
    if (type == kJson || type == "*/*" || type == "application/*") json_ok = true;
  }
  return json_ok ? kJson : std::string_view();
}

HttpResponse ErrorOnly(int status, std::string_view media, std::string_view message) {
  std::string body = "{\"errors\":[{\"message\":";
  append_json_string(body, message);
  body += "}]}";
  return HttpResponse::json(status, std::move(body), std::string(media) + "; charset=utf-8");
}

struct Params {
  std::string query;
  std::string operation_name;
  json::object variables;
};

// Reads {query, variables, operationName, extensions} from a JSON object; an
// error message on anything the spec does not allow.
std::optional<std::string> ReadParams(const json::object& in, Params& out) {
  const json::value* q = in.if_contains("query");
  if (!q || q->is_null()) return "the request has no query";
  if (!q->is_string()) return "query must be a string";
  out.query = std::string(q->as_string());
  if (const json::value* v = in.if_contains("variables"); v && !v->is_null()) {
    if (!v->is_object()) return "variables must be an object";
    out.variables = v->as_object();
  }
  if (const json::value* o = in.if_contains("operationName"); o && !o->is_null()) {
    if (!o->is_string()) return "operationName must be a string";
    out.operation_name = std::string(o->as_string());
  }
  if (const json::value* e = in.if_contains("extensions"); e && !e->is_null() && !e->is_object())
    return "extensions must be an object";
  return std::nullopt;
}

std::optional<std::string> ReadGetParams(const http::Request& req, Params& out) {
  json::object in;
  for (const char* name : {"query", "operationName"}) {
    if (auto v = req.query_param(name)) in[name] = *v;
  }
  for (const char* name : {"variables", "extensions"}) {
    if (auto v = req.query_param(name)) {
      boost::system::error_code ec;
      json::value parsed = json::parse(*v, ec);
      if (ec) return std::string(name) + " is not valid JSON";
      in[name] = std::move(parsed);
    }
  }
  return ReadParams(in, out);
}

constexpr std::size_t kLargeResponseBytes = 1024 * 1024;

struct HandlerState {
  HandlerState(const Schema& s, GraphQLHttpOptions o)
      : schema(&s), options(std::move(o)), cache(options.document_cache_bytes) {}
  const Schema* schema;
  GraphQLHttpOptions options;
  DocumentCache cache;
};

// `req` and `ctx` outlive the call: the server awaits the handler before
// dropping them.
asio::awaitable<HttpResponse> Serve(std::shared_ptr<HandlerState> st, const http::Request& r, const Context& c) {
  const std::string_view m = Negotiate(r.headers.get("Accept"));
  if (m.empty())
    co_return ErrorOnly(406, kJson,
                        "acceptable media types are application/graphql-response+json and "
                        "application/json");
  const std::string content_type = std::string(m) + "; charset=utf-8";
  const bool graphql_response = m == kGraphQLResponse;
  Params params;
  const bool is_get = r.method == "GET";
  if (is_get) {
    if (auto err = ReadGetParams(r, params)) co_return ErrorOnly(400, m, *err);
  } else {
    const auto type = r.headers.get("Content-Type");
    if (!type) co_return ErrorOnly(415, m, "POST requests need Content-Type: application/json");
    const std::string lowered = Lower(*type);
    const std::string_view essence = Trim(std::string_view(lowered).substr(0, lowered.find(';')));
    if (essence != kJson) co_return ErrorOnly(415, m, "unsupported Content-Type; send application/json");
    const auto charset = lowered.find("charset=");
    if (charset != std::string::npos) {
      std::string_view cs = std::string_view(lowered).substr(charset + 8);
      cs = Trim(cs.substr(0, cs.find(';')));
      if (cs != "utf-8" && cs != "\"utf-8\"") co_return ErrorOnly(415, m, "only utf-8 request bodies are accepted");
    }
    if (r.body.empty()) co_return ErrorOnly(400, m, "the request body is empty");
    boost::system::error_code ec;
    json::value body = json::parse(r.body, ec);
    if (ec) co_return ErrorOnly(400, m, "the request body is not valid JSON: " + ec.message());
    if (!body.is_object()) co_return ErrorOnly(400, m, "the request body must be a JSON object");
    if (auto err = ReadParams(body.as_object(), params)) co_return ErrorOnly(400, m, *err);
  }

  // (A named awaitable: g++ 12 destroys temporaries of a co_await's full expression twice.)
  auto preparing = internal::prepare_operation(*st->schema, std::move(params.query), params.operation_name,
                                               st->options.parse, st->options.validation, &st->cache);
  const internal::PreparedOperation prepared = co_await std::move(preparing);
  const bool large_request = prepared.large;

  graphql::Response result;
  if (!prepared.prepared->ok()) {
    result.errors = prepared.prepared->errors;
  } else {
    const OperationDefinition* op = prepared.operation;
    if (is_get && op && op->type != OperationType::query) {
      HttpResponse refused = ErrorOnly(405, m, "only queries may be sent with GET; use POST");
      refused.headers.set("Allow", "POST");
      co_return refused;
    }
    graphql::Request greq;
    greq.document = prepared.prepared->document.get();
    greq.operation_name = params.operation_name;
    greq.variables = std::move(params.variables);
    greq.root_value = st->options.root_value;
    result = co_await execute(*st->schema, greq, c, st->options.execution);
  }

  int status = 200;
  if (graphql_response && !result.has_data) {
    status = 400;
    // A whole-response stop is not the client's fault, and a stop after a mutation's effect
    // may have landed is never a 4xx nor a retryable 504: answer as the taxonomy says.
    if (!result.errors.empty()) {
      if (const std::optional<ErrorCode> code = result.errors.front().error_code;
          code && (is_stop(*code) || *code == ErrorCode::commit_ambiguous))
        status = info(*code).http_status;
    }
  }
  HttpResponse out = HttpResponse::json(status, std::move(result).to_json(), content_type);
  if (status == 504) out.headers.set(cutoff::kDeadlineExpiredHeader, "1");
  if (large_request || out.body.size() >= kLargeResponseBytes) internal::return_freed_memory_soon();
  co_return out;
}

}  // namespace

http::Handler graphql_http_handler(const Schema& schema, GraphQLHttpOptions options) {
  auto state = std::make_shared<HandlerState>(schema, std::move(options));
  return [state](const http::Request& req, const Context& ctx) { return Serve(state, req, ctx); };
}

void mount_graphql(http::Server& server, const std::string& path, const Schema& schema, GraphQLHttpOptions options,
                   http::RouteOptions route) {
  const bool allow_get = options.allow_get;
  // Unexpected resolver errors go to the server's log, beside its own lines.
  std::shared_ptr<ExecutionRecorder> logging = internal::log_to_server(server, options.execution);
  http::Handler handler = graphql_http_handler(schema, std::move(options));
  if (logging)
    handler = [logging, inner = std::move(handler)](const http::Request& req, const Context& ctx) {
      return inner(req, ctx);
    };
  if (route.name.empty()) route.name = path;
  // The executor answers a stop itself with a partial result; give it time to.
  if (route.stop_grace == Duration::zero()) route.stop_grace = std::chrono::milliseconds(250);
  if (allow_get) server.route("GET", path, handler, route);
  server.route("POST", path, std::move(handler), std::move(route));
}

}  // namespace cutoff::graphql
