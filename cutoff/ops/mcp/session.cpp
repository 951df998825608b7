#include "cutoff/ops/mcp/session.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <exception>
#include <utility>

#include "cutoff/core/error.hpp"
#include "cutoff/ops/mcp/tools.hpp"

namespace cutoff::ops::mcp {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// JSON-RPC 2.0 error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;

constexpr std::size_t kMaxJsonDepth = 64;
constexpr std::size_t kMaxIdempotencyKeyBytes = 256;

std::string Reply(const json::value& id, json::value result) {
  return json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

// The result is already serialized (tools/list): spliced in rather than parsed again.
std::string ReplyRaw(const json::value& id, std::string_view result) {
  std::string out = "{\"jsonrpc\":\"2.0\",\"id\":";
  out += json::serialize(id);
  out += ",\"result\":";
  out += result;
  out += '}';
  return out;
}

std::string ErrorReply(const json::value& id, int code, std::string message) {
  return json::serialize(json::object{
      {"jsonrpc", "2.0"}, {"id", id}, {"error", json::object{{"code", code}, {"message", std::move(message)}}}});
}

bool ValidId(const json::value& id) { return id.is_string() || id.is_int64() || id.is_uint64(); }

const json::object* ParamsObject(const json::value* params) { return params ? params->if_object() : nullptr; }

}  // namespace

Server::Server(const Registry& registry, ServerOptions options)
    : registry_(&registry),
      options_(std::move(options)),
      invoker_(registry, InvokerOptions{.admission = options_.admission}),
      tools_list_(json::serialize(tools_list_result(registry))) {
  if (options_.metrics) {
    calls_ = &options_.metrics->counter("cutoff_mcp_tool_calls_total",
                                        "MCP tool calls by tool and outcome (ok or the error code).",
                                        {"tool", "outcome"});
  }
}

void Server::record_call(const CallRecord& record) const {
  if (calls_) calls_->with({std::string(record.tool), std::string(record.outcome)}).inc();
  if (options_.on_call) options_.on_call(record);
}

std::size_t Session::calls_in_flight() const {
  std::lock_guard lock(mu_);
  return calls_.size();
}

std::string Session::protocol_version() const {
  std::lock_guard lock(mu_);
  return protocol_version_;
}

void Session::stop_calls(StopReason reason) {
  std::lock_guard lock(mu_);
  if (closed_ == StopReason::none) closed_ = reason;
  for (auto& [id, call] : calls_) call.stop.request_stop(reason);
}

std::string Session::too_large_reply() const {
  return ErrorReply(json::value(), kInvalidRequest,
                    "the message is larger than " + std::to_string(max_message_bytes()) + " bytes");
}

asio::awaitable<std::optional<std::string>> Session::handle(Context ctx, std::string_view message) {
  const json::value null_id;
  if (message.size() > max_message_bytes()) co_return too_large_reply();
  json::parse_options parse_options;
  parse_options.max_depth = kMaxJsonDepth;
  boost::system::error_code ec;
  json::value msg = json::parse(message, ec, {}, parse_options);
  if (ec) co_return ErrorReply(null_id, kParseError, "the message is not JSON: " + ec.message());
  if (msg.is_array()) co_return ErrorReply(null_id, kInvalidRequest, "batches are not supported; send one message at a time");
  json::object* obj = msg.if_object();
  if (!obj) co_return ErrorReply(null_id, kInvalidRequest, "a message must be a JSON object");
  const json::value* id = obj->if_contains("id");
  const json::value& reply_id = id && ValidId(*id) ? *id : null_id;
  const json::value* version = obj->if_contains("jsonrpc");
  if (!version || !version->is_string() || version->as_string() != "2.0")
    co_return ErrorReply(reply_id, kInvalidRequest, "\"jsonrpc\" must be \"2.0\"");
  const json::value* method_value = obj->if_contains("method");
  if (!method_value) {
    // A response to a request of ours; this server sends none, so there is nothing to match.
    if (id && (obj->contains("result") || obj->contains("error"))) co_return std::nullopt;
    co_return ErrorReply(reply_id, kInvalidRequest, "a request needs a \"method\"");
  }
  if (!method_value->is_string()) co_return ErrorReply(reply_id, kInvalidRequest, "\"method\" must be a string");
  const std::string_view method = method_value->as_string();
  const json::value* params = obj->if_contains("params");
  if (params && !params->is_object())
    co_return ErrorReply(reply_id, kInvalidRequest, "\"params\" must be an object");

  if (!id) {  // a notification: never answered
    if (method == "notifications/cancelled") Cancel(params);
    co_return std::nullopt;
  }
  if (!ValidId(*id)) co_return ErrorReply(null_id, kInvalidRequest, "\"id\" must be a string or an integer");

  if (method == "initialize") co_return Initialize(*id, params);
  if (method == "ping") co_return Reply(*id, json::object());
  if (method == "tools/list" || method == "tools/call") {
    if (protocol_version().empty())
      co_return ErrorReply(*id, kInvalidRequest, "send \"initialize\" before \"" + std::string(method) + "\"");
    if (method == "tools/list") co_return ReplyRaw(*id, server_->tools_list());
    auto calling = Call(std::move(ctx), json::serialize(*id), *id, params);
    co_return co_await std::move(calling);
  }
  co_return ErrorReply(*id, kMethodNotFound, "unknown method \"" + std::string(method) + "\"");
}

std::string Session::Initialize(const json::value& id, const json::value* params) {
  const json::object* p = ParamsObject(params);
  const json::value* wanted = p ? p->if_contains("protocolVersion") : nullptr;
  if (!wanted || !wanted->is_string())
    return ErrorReply(id, kInvalidParams, "initialize needs \"protocolVersion\" as a string");
  std::string_view chosen = kProtocolVersions[0];
  for (std::string_view v : kProtocolVersions) {
    if (wanted->as_string() == v) chosen = v;
  }
  {
    std::lock_guard lock(mu_);
    if (!protocol_version_.empty()) return ErrorReply(id, kInvalidRequest, "the session is already initialized");
    protocol_version_ = std::string(chosen);
  }
  const ServerOptions& options = server_->options();
  json::object result{{"protocolVersion", chosen},
                      {"capabilities", json::object{{"tools", json::object{{"listChanged", false}}}}},
                      {"serverInfo", json::object{{"name", options.name}, {"version", options.version}}}};
  if (!options.instructions.empty()) result["instructions"] = options.instructions;
  return Reply(id, std::move(result));
}

void Session::Cancel(const json::value* params) {
  const json::object* p = ParamsObject(params);
  const json::value* target = p ? p->if_contains("requestId") : nullptr;
  if (!target || !ValidId(*target)) return;  // nothing to match; notifications get no reply
  std::lock_guard lock(mu_);
  auto it = calls_.find(json::serialize(*target));
  if (it == calls_.end()) return;  // finished already, or never sent: the protocol allows both
  it->second.cancelled_by_client = true;
  it->second.stop.request_stop(StopReason::cancelled);
}

asio::awaitable<std::optional<std::string>> Session::Call(Context ctx, std::string id_key, const json::value& id,
                                                          const json::value* params) {
  const json::object* p = ParamsObject(params);
  const json::value* name_value = p ? p->if_contains("name") : nullptr;
  if (!name_value || !name_value->is_string())
    co_return ErrorReply(id, kInvalidParams, "tools/call needs the tool's \"name\" as a string");
  const std::string name(name_value->as_string());
  const ResolvedOperation* op = server_->invoker().registry().find(name);
  if (!op) co_return ErrorReply(id, kInvalidParams, "unknown tool \"" + name + "\"");

  json::value args = json::object();
  if (const json::value* a = p->if_contains("arguments")) {
    if (!a->is_object()) co_return ErrorReply(id, kInvalidParams, "\"arguments\" must be an object");
    args = *a;
  }
  InvokeOptions invoke;
  const json::object* meta = nullptr;
  if (const json::value* m = p->if_contains("_meta")) {
    meta = m->if_object();
    if (!meta) co_return ErrorReply(id, kInvalidParams, "\"_meta\" must be an object");
  }
  if (const json::value* budget = meta ? meta->if_contains(kBudgetMetaKey) : nullptr) {
    boost::system::error_code ec;
    const auto ms = budget->to_number<std::int64_t>(ec);
    if (ec || ms < 0)
      co_return ErrorReply(id, kInvalidParams,
                           "_meta \"" + std::string(kBudgetMetaKey) + "\" must be a whole number of milliseconds, 0 or more");
    invoke.budget = std::chrono::milliseconds(ms);
  }
  const json::value* key = meta ? meta->if_contains(kIdempotencyKeyMetaKey) : nullptr;
  if (takes_key_argument(op->info)) {
    if (const json::value* k = args.as_object().if_contains(kIdempotencyKeyArgument)) {
      if (key && *key != *k)
        co_return ErrorReply(id, kInvalidParams, "two different idempotency keys: the argument and _meta");
      key = k;  // still owned by args until erased below
    }
  }
  if (key) {
    if (!key->is_string() || key->as_string().empty() || key->as_string().size() > kMaxIdempotencyKeyBytes)
      co_return ErrorReply(id, kInvalidParams,
                           "an idempotency key must be a string of 1 to " + std::to_string(kMaxIdempotencyKeyBytes) +
                               " bytes");
    invoke.idempotency_key = std::string(key->as_string());
    if (takes_key_argument(op->info)) args.as_object().erase(kIdempotencyKeyArgument);
  }
  const bool keyed = invoke.idempotency_key.has_value();
  const bool structured = has_output_schema(op->info);

  auto [call_ctx, stop] = ctx.with_cancel();
  {
    std::unique_lock lock(mu_);
    if (closed_ != StopReason::none) {
      const StopReason reason = closed_;
      lock.unlock();
      server_->record_call({.tool = name, .outcome = to_string(error_code_for(reason)), .took = Duration::zero(),
                            .cancelled_by_client = false});
      co_return Reply(id, tool_failure(Error::stopped(reason, ctx.request_id()), keyed));
    }
    if (calls_.size() >= server_->options().max_calls_in_flight) {
      lock.unlock();
      server_->record_call({.tool = name, .outcome = to_string(ErrorCode::overloaded), .took = Duration::zero(),
                            .cancelled_by_client = false});
      co_return Reply(id, tool_failure(Error(ErrorCode::overloaded,
                                             "this session already runs " +
                                                 std::to_string(server_->options().max_calls_in_flight) +
                                                 " calls, its limit",
                                             ctx.request_id()),
                                       keyed));
    }
    if (!calls_.try_emplace(id_key, InFlight{.stop = stop}).second)
      co_return ErrorReply(id, kInvalidRequest, "a request with this id is still running");
  }

  const TimePoint started = SteadyClock::now();
  json::object result;
  std::string outcome = "ok";
  try {
    auto invoking = server_->invoker().invoke(call_ctx, name, std::move(args), std::move(invoke));
    json::value value = co_await std::move(invoking);
    result = tool_success(value, structured);
  } catch (const Error& e) {
    outcome = std::string(to_string(e.code()));
    result = tool_failure(e, keyed);
  } catch (...) {
    const Error e = to_error(std::current_exception(), call_ctx.stop_reason(), ctx.request_id());
    outcome = std::string(to_string(e.code()));
    result = tool_failure(e.code() == ErrorCode::internal ? Error(ErrorCode::internal, "the tool failed", e.request_id())
                                                          : e,
                          keyed);
  }
  bool cancelled_by_client = false;
  {
    std::lock_guard lock(mu_);
    auto it = calls_.find(id_key);
    cancelled_by_client = it->second.cancelled_by_client;
    calls_.erase(it);
  }
  server_->record_call({.tool = name, .outcome = outcome, .took = SteadyClock::now() - started,
                        .cancelled_by_client = cancelled_by_client});
  if (cancelled_by_client) co_return std::nullopt;  // the client has forgotten the request
  co_return Reply(id, std::move(result));
}

}  // namespace cutoff::ops::mcp
