#include "cutoff/graphql/http/graphql_ws.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <variant>

#include "cutoff/core/json_text.hpp"

namespace cutoff::graphql {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// Close codes of the graphql-transport-ws protocol.
constexpr std::uint16_t kBadRequest = 4400;
constexpr std::uint16_t kUnauthorized = 4401;
constexpr std::uint16_t kInitTimeout = 4408;
constexpr std::uint16_t kDuplicateId = 4409;
constexpr std::uint16_t kTooManyInits = 4429;

struct CloseFrame {
  std::uint16_t code;
  std::string reason;
};

std::string Message(std::string_view type, std::string_view id = {}, std::string_view payload = {}) {
  std::string out = "{";
  if (!id.empty()) {
    out += "\"id\":";
    append_json_string(out, id);
    out += ",";
  }
  out += "\"type\":";
  append_json_string(out, type);
  if (!payload.empty()) {
    out += ",\"payload\":";
    out += payload;
  }
  out += "}";
  return out;
}

std::string ErrorsPayload(const std::vector<GraphQLError>& errors) {
  std::string out = "[";
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (i) out += ",";
    errors[i].append_json(out);
  }
  out += "]";
  return out;
}

class WsSession : public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(http::WebSocket& ws, const Schema& schema, const GraphQLWsOptions& options, Context ctx,
            asio::any_io_executor executor)
      : ws_(ws), schema_(schema), options_(options), executor_(std::move(executor)), idle_(executor_) {
    auto [c, source] = ctx.with_cancel();
    ctx_ = std::move(c);
    stop_all_ = std::move(source);
    idle_.expires_at(asio::steady_timer::time_point::max());
  }

  asio::awaitable<void> Run() {
    auto self = shared_from_this();
    // connection_init must arrive within the timeout.
    auto init_timer = std::make_shared<asio::steady_timer>(executor_, options_.connection_init_timeout);
    init_timer->async_wait([self](const boost::system::error_code& ec) {
      if (!ec && !self->acked_) self->Close(kInitTimeout, "Connection initialisation timeout");
    });
    while (!closing_) {
      std::optional<std::string> text = co_await ws_.read();
      if (!text) break;
      Handle(*text);
    }
    init_timer->cancel();
    // The socket is gone or closing: whatever runs for it stops now.
    stop_all_.request_stop(StopReason::cancelled);
    ops_.clear();
    // Operations and the writer reference the socket: wait for them to finish.
    while (running_ > 0 || writing_) co_await idle_.async_wait(asio::as_tuple(asio::use_awaitable));
  }

 private:
  struct Operation {
    std::uint64_t token;
    CancelSource source;
  };
  using Outgoing = std::variant<std::string, CloseFrame>;

  void Handle(const std::string& text) {
    boost::system::error_code ec;
    json::value parsed = json::parse(text, ec);
    if (ec || !parsed.is_object()) return Close(kBadRequest, "Invalid message received");
    const json::object& msg = parsed.as_object();
    const json::value* type = msg.if_contains("type");
    if (!type || !type->is_string()) return Close(kBadRequest, "Invalid message received");
    const std::string_view kind = type->as_string();
    if (kind == "connection_init") {
      if (init_received_) return Close(kTooManyInits, "Too many initialisation requests");
      if (const json::value* p = msg.if_contains("payload"); p && !p->is_null() && !p->is_object())
        return Close(kBadRequest, "Invalid message received");
      init_received_ = true;
      acked_ = true;
      Send(Message("connection_ack"));
    } else if (kind == "ping") {
      Send(Message("pong"));
    } else if (kind == "pong") {
      // Keep-alive answer: nothing to do.
    } else if (kind == "subscribe") {
      const json::value* id = msg.if_contains("id");
      const json::value* payload = msg.if_contains("payload");
      if (!id || !id->is_string() || id->as_string().empty() || !payload || !payload->is_object())
        return Close(kBadRequest, "Invalid message received");
      if (!acked_) return Close(kUnauthorized, "Unauthorized");
      const std::string op_id(id->as_string());
      if (ops_.contains(op_id)) return Close(kDuplicateId, "Subscriber for " + op_id + " already exists");
      if (ops_.size() >= options_.max_operations) return Close(kBadRequest, "Too many operations");
      Start(op_id, payload->as_object());
    } else if (kind == "complete") {
      const json::value* id = msg.if_contains("id");
      if (!id || !id->is_string()) return Close(kBadRequest, "Invalid message received");
      auto it = ops_.find(std::string(id->as_string()));
      if (it == ops_.end()) return;  // already finished: nothing to stop
      it->second.source.request_stop(StopReason::cancelled);
      ops_.erase(it);
    } else {
      Close(kBadRequest, "Invalid message received");
    }
  }

  void Start(const std::string& id, const json::object& payload) {
    const json::value* query = payload.if_contains("query");
    if (!query || !query->is_string()) return Close(kBadRequest, "Invalid message received");
    Request req;
    std::string operation_name;
    if (const json::value* v = payload.if_contains("variables"); v && !v->is_null()) {
      if (!v->is_object()) return Close(kBadRequest, "Invalid message received");
      req.variables = v->as_object();
    }
    if (const json::value* o = payload.if_contains("operationName"); o && !o->is_null()) {
      if (!o->is_string()) return Close(kBadRequest, "Invalid message received");
      req.operation_name = std::string(o->as_string());
    }
    req.root_value = options_.root_value;
    auto [op_ctx, source] = ctx_.with_cancel();
    const std::uint64_t token = ++next_token_;
    ops_.emplace(id, Operation{token, source});
    ++running_;
    asio::co_spawn(executor_, RunOperation(shared_from_this(), id, token, std::string(query->as_string()),
                                           std::move(req), std::move(op_ctx)),
                   asio::detached);
  }

  bool Active(const std::string& id, std::uint64_t token) const {
    auto it = ops_.find(id);
    return it != ops_.end() && it->second.token == token;
  }

  void Finish(const std::string& id, std::uint64_t token) {
    if (Active(id, token)) ops_.erase(id);
    if (--running_ == 0 && !writing_) idle_.cancel();
  }

  static asio::awaitable<void> RunOperation(std::shared_ptr<WsSession> self, std::string id, std::uint64_t token,
                                            std::string query, Request req, Context ctx) {
    try {
      co_await self->Execute(id, token, std::move(query), std::move(req), ctx);
    } catch (const std::exception& e) {
      if (self->Active(id, token)) {
        GraphQLError error{.message = std::string("internal error: ") + e.what(), .code = "INTERNAL"};
        self->Send(Message("error", id, ErrorsPayload({error})));
      }
    }
    self->Finish(id, token);
  }

  asio::awaitable<void> Execute(const std::string& id, std::uint64_t token, std::string query, Request req,
                                const Context& ctx) {
    ParseResult parsed = parse(std::move(query), options_.parse);
    if (!parsed.ok()) {
      Send(Message("error", id, ErrorsPayload({*parsed.error})));
      co_return;
    }
    if (auto errors = validate(schema_, *parsed.document, options_.validation); !errors.empty()) {
      Send(Message("error", id, ErrorsPayload(errors)));
      co_return;
    }
    req.document = parsed.document.get();
    const OperationDefinition* op = select_operation(*parsed.document, req.operation_name);

    if (op && op->type == OperationType::subscription) {
      SubscribeResult started = co_await subscribe(schema_, req, ctx, options_.subscribe);
      if (!started.ok()) {
        if (Active(id, token)) Send(Message("error", id, ErrorsPayload(started.errors.errors)));
        co_return;
      }
      Subscription& sub = *started.subscription;
      while (auto response = co_await sub.next()) {
        // After a client `complete` or a disconnect nothing more is sent for this id.
        if (!Active(id, token)) co_return;
        Send(Message("next", id, response->to_json()));
      }
      if (!Active(id, token)) co_return;
      if (sub.end() == Subscription::End::failed)
        Send(Message("error", id, ErrorsPayload(sub.failure().errors)));
      else
        Send(Message("complete", id));
      co_return;
    }

    // A query or mutation over the socket: one result, then complete.
    const Context bounded = ctx.with_timeout(options_.operation_budget);
    Response response = co_await execute(schema_, req, bounded, options_.subscribe.execution);
    if (!Active(id, token)) co_return;
    if (!response.has_data) {
      Send(Message("error", id, ErrorsPayload(response.errors)));
      co_return;
    }
    Send(Message("next", id, std::move(response).to_json()));
    Send(Message("complete", id));
  }

  void Send(std::string text) { Enqueue(std::move(text)); }

  void Close(std::uint16_t code, std::string reason) {
    if (closing_) return;
    closing_ = true;
    stop_all_.request_stop(StopReason::cancelled);
    Enqueue(CloseFrame{code, std::move(reason)});
  }

  void Enqueue(Outgoing item) {
    if (closed_) return;
    outbox_.push_back(std::move(item));
    if (writing_) return;
    writing_ = true;
    asio::co_spawn(executor_, Drain(shared_from_this()), asio::detached);
  }

  // One write at a time (a WebSocket rule); messages go out in order.
  static asio::awaitable<void> Drain(std::shared_ptr<WsSession> self) {
    while (!self->outbox_.empty() && !self->closed_) {
      Outgoing item = std::move(self->outbox_.front());
      self->outbox_.pop_front();
      if (auto* text = std::get_if<std::string>(&item)) {
        if (!co_await self->ws_.write(*text)) self->closed_ = true;
      } else {
        const auto& frame = std::get<CloseFrame>(item);
        co_await self->ws_.close(frame.code, frame.reason);
        self->closed_ = true;
      }
    }
    self->outbox_.clear();
    self->writing_ = false;
    if (self->running_ == 0) self->idle_.cancel();
  }

  http::WebSocket& ws_;
  const Schema& schema_;
  const GraphQLWsOptions& options_;
  asio::any_io_executor executor_;
  Context ctx_;
  CancelSource stop_all_;
  asio::steady_timer idle_;  // cancelled when the last operation or write finishes
  bool init_received_ = false;
  bool acked_ = false;
  bool closing_ = false;
  bool closed_ = false;
  bool writing_ = false;
  int running_ = 0;
  std::uint64_t next_token_ = 0;
  std::map<std::string, Operation> ops_;
  std::deque<Outgoing> outbox_;
};

}  // namespace

http::WebSocketHandler graphql_ws_handler(const Schema& schema, GraphQLWsOptions options) {
  auto shared = std::make_shared<const GraphQLWsOptions>(std::move(options));
  return [&schema, shared](http::WebSocket& ws, const http::Request&, const Context& ctx) -> asio::awaitable<void> {
    if (ws.subprotocol() != kGraphQLTransportWs) {
      co_await ws.close(4406, "Subprotocol not acceptable");
      co_return;
    }
    auto session = std::make_shared<WsSession>(ws, schema, *shared, ctx, co_await asio::this_coro::executor);
    co_await session->Run();
  };
}

void mount_graphql_ws(http::Server& server, const std::string& path, const Schema& schema, GraphQLWsOptions options,
                      http::RouteOptions route) {
  if (route.name.empty()) route.name = path;
  server.websocket(path, graphql_ws_handler(schema, std::move(options)), {std::string(kGraphQLTransportWs)},
                   std::move(route));
}

}  // namespace cutoff::graphql
