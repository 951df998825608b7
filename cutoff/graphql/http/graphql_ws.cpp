#include "cutoff/graphql/http/graphql_ws.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
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
#include "cutoff/graphql/http/server_log_recorder.hpp"
#include "cutoff/graphql/internal/preparation.hpp"

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
// RFC 6455's registry: "terminating the connection due to a temporary condition, e.g. it is
// overloaded and is casting off some of its clients". Not one of graphql-transport-ws's fatal
// codes, so its client reconnects (with backoff) rather than giving up: a slow reader may keep
// up next time.
constexpr std::uint16_t kTryAgainLater = 1013;

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
      : ws_(ws),
        schema_(schema),
        options_(options),
        executor_(std::move(executor)),
        idle_(executor_),
        wake_writer_(executor_),
        room_(executor_),
        read_abort_(executor_),
        write_timer_(executor_) {
    auto [c, source] = ctx.with_cancel();
    ctx_ = std::move(c);
    stop_all_ = std::move(source);
    for (auto* t : {&idle_, &wake_writer_, &room_, &read_abort_}) t->expires_at(asio::steady_timer::time_point::max());
    // Backpressure engages at a quarter of the bound and lets go at an eighth: the rest is
    // headroom for the replies of operations that were already running when it engaged.
    high_watermark_ = options_.max_queued_bytes / 4;
    low_watermark_ = options_.max_queued_bytes / 8;
  }

  asio::awaitable<void> Run() {
    using namespace asio::experimental::awaitable_operators;
    auto self = shared_from_this();
    // A server shutdown stops `ctx_`: operations waiting for room in the queue must see it.
    std::weak_ptr<WsSession> weak = self;
    stop_watch_.emplace(ctx_.token(), StopWatch{weak, executor_});
    writer_running_ = true;
    asio::co_spawn(executor_, Writer(self), asio::detached);
    // connection_init must arrive within the timeout.
    auto init_timer = std::make_shared<asio::steady_timer>(executor_, options_.connection_init_timeout);
    init_timer->async_wait([self](const boost::system::error_code& ec) {
      if (!ec && !self->acked_) self->Close(kInitTimeout, "Connection initialisation timeout");
    });
    while (!closing_) {
      // The read races an abort (a stalled write): a peer that does not read may not send either.
      auto read = co_await (ws_.read() || read_abort_.async_wait(asio::as_tuple(asio::use_awaitable)));
      if (read.index() != 0 || !std::get<0>(read)) {
        // The peer is gone or was dropped: nothing queued can reach it.
        closed_ = true;
        DropQueue();
        break;
      }
      // Backpressure: while the client is behind on its replies, its next message waits here,
      // and the ones after it wait in the socket's buffers, so nothing new starts for it.
      if (!co_await WaitForRoom()) break;
      Handle(*std::get<0>(read));
    }
    init_timer->cancel();
    // The socket is gone or closing: whatever runs for it stops now.
    stop_all_.request_stop(StopReason::cancelled);
    ops_.clear();
    room_.cancel();
    wake_writer_.cancel();
    // Operations and the writer reference the socket: wait for them to finish. The writer ends
    // once the close frame is out or the socket failed, within write_timeout.
    while (running_ > 0 || writer_running_) co_await idle_.async_wait(asio::as_tuple(asio::use_awaitable));
    stop_watch_.reset();
  }

 private:
  struct Operation {
    std::uint64_t token;
    CancelSource source;
  };
  // Follows an operation's last message in the queue: once the writer reaches it, all of the
  // operation's messages are on the wire and its max_operations slot is free.
  struct SlotRelease {};
  using Outgoing = std::variant<std::string, CloseFrame, SlotRelease>;

  struct StopWatch {
    std::weak_ptr<WsSession> session;
    asio::any_io_executor executor;
    // May run on any thread: the session's state is touched on its executor only.
    void operator()(StopReason) const noexcept {
      asio::post(executor, [weak = session] {
        if (auto self = weak.lock()) self->room_.cancel();
      });
    }
  };

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
      if (open_operations_ >= options_.max_operations) return Close(kBadRequest, "Too many operations");
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
    ++open_operations_;
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
    // The slot is free once what the operation queued has been written.
    Enqueue(SlotRelease{});
    if (--running_ == 0 && !writer_running_) idle_.cancel();
  }

  static asio::awaitable<void> RunOperation(std::shared_ptr<WsSession> self, std::string id, std::uint64_t token,
                                            std::string query, Request req, Context ctx) {
    try {
      co_await self->Execute(id, token, std::move(query), std::move(req), ctx);
    } catch (const std::exception& e) {
      if (self->Active(id, token)) {
        const GraphQLError error = GraphQLError::of(ErrorCode::internal, std::string("internal error: ") + e.what());
        self->Send(Message("error", id, ErrorsPayload({error})));
      }
    }
    self->Finish(id, token);
  }

  asio::awaitable<void> Execute(const std::string& id, std::uint64_t token, std::string query, Request req,
                                const Context& ctx) {
    // Large documents are parsed and validated off the event loop. (A named awaitable: g++ 12
    // destroys temporaries of a co_await's full expression twice.)
    auto preparing = internal::prepare_operation(schema_, std::move(query), req.operation_name, options_.parse,
                                                 options_.validation, nullptr);
    const internal::PreparedOperation prepared = co_await std::move(preparing);
    if (prepared.large) internal::return_freed_memory_soon();
    if (!prepared.prepared->ok()) {
      SendFor(id, Message("error", id, ErrorsPayload(prepared.prepared->errors)));
      co_return;
    }
    req.document = prepared.prepared->document.get();
    const OperationDefinition* op = prepared.operation;

    if (op && op->type == OperationType::subscription) {
      SubscribeResult started = co_await subscribe(schema_, req, ctx, options_.subscribe);
      if (!started.ok()) {
        if (Active(id, token)) SendFor(id, Message("error", id, ErrorsPayload(started.errors.errors)));
        co_return;
      }
      Subscription& sub = *started.subscription;
      // The next event is pulled only while the client keeps up with the ones sent.
      while (co_await WaitForRoom() && Active(id, token)) {
        std::optional<Response> response = co_await sub.next();
        if (!response) break;
        // After a client `complete` or a disconnect nothing more is sent for this id.
        if (!Active(id, token)) co_return;
        if (!SendFor(id, Message("next", id, response->to_json()))) {
          // The event did not fit: its `error` ended the operation, so the stream stops.
          ops_.erase(id);
          co_return;
        }
      }
      if (!Active(id, token)) co_return;
      if (sub.end() == Subscription::End::failed)
        SendFor(id, Message("error", id, ErrorsPayload(sub.failure().errors)));
      else
        Send(Message("complete", id));
      co_return;
    }

    // A query or mutation over the socket: one result, then complete.
    const Context bounded = ctx.with_timeout(options_.operation_budget);
    Response response = co_await execute(schema_, req, bounded, options_.subscribe.execution);
    if (!Active(id, token)) co_return;
    if (!response.has_data) {
      SendFor(id, Message("error", id, ErrorsPayload(response.errors)));
      co_return;
    }
    if (SendFor(id, Message("next", id, std::move(response).to_json()))) Send(Message("complete", id));
  }

  // Waits while the client is behind on its replies; false when the socket is closing.
  asio::awaitable<bool> WaitForRoom() {
    while (paused_ && !closing_ && !ctx_.token().stop_requested())
      co_await room_.async_wait(asio::as_tuple(asio::use_awaitable));
    co_return !closing_;
  }

  // Sends one of operation `id`'s messages. A message larger than the whole queue bound could
  // never be queued: the operation gets an `error` in its place (it ends there), and false.
  bool SendFor(const std::string& id, std::string message) {
    if (message.size() <= options_.max_queued_bytes) {
      Send(std::move(message));
      return true;
    }
    GraphQLError error{.message = "the response is " + std::to_string(message.size()) +
                                  " bytes, more than the socket's max_queued_bytes (" +
                                  std::to_string(options_.max_queued_bytes) + ")",
                       .code = graphql_codes::kResponseTooLarge};
    Send(Message("error", id, ErrorsPayload({error})));
    return false;
  }

  void Send(std::string text) {
    if (closed_ || closing_) return;
    if (queued_bytes_ + text.size() > options_.max_queued_bytes) {
      // Replies of operations already running when backpressure engaged overflowed the bound:
      // the client is far behind. What it has not been sent is dropped now (memory returns)
      // and it is told to come back later.
      DropQueue();
      Close(kTryAgainLater, "Client too slow: more than max_queued_bytes waiting to be sent");
      return;
    }
    queued_bytes_ += text.size();
    UpdatePause();
    Enqueue(std::move(text));
  }

  void Close(std::uint16_t code, std::string reason) {
    if (closing_) return;
    closing_ = true;
    stop_all_.request_stop(StopReason::cancelled);
    room_.cancel();
    Enqueue(CloseFrame{code, std::move(reason)});
  }

  // The peer does not read (a write stalled) or the socket failed: no close frame can reach it.
  // Stops everything and ends the pending read and write.
  void Abort() {
    closing_ = true;
    closed_ = true;
    stop_all_.request_stop(StopReason::cancelled);
    DropQueue();
    room_.cancel();
    read_abort_.cancel();
    write_timer_.cancel();
    wake_writer_.cancel();
  }

  void Enqueue(Outgoing item) {
    if (closed_) return;
    outbox_.push_back(std::move(item));
    wake_writer_.cancel();
  }

  // Discards what has not started being written, freeing its bytes and the slots it held.
  void DropQueue() {
    for (const Outgoing& item : outbox_) {
      if (const auto* text = std::get_if<std::string>(&item)) queued_bytes_ -= text->size();
      if (std::holds_alternative<SlotRelease>(item)) --open_operations_;
    }
    outbox_.clear();
    UpdatePause();
  }

  void UpdatePause() {
    if (!paused_ && queued_bytes_ > high_watermark_) {
      paused_ = true;
    } else if (paused_ && queued_bytes_ <= low_watermark_) {
      paused_ = false;
      room_.cancel();
    }
  }

  // The socket's only writer (one write at a time is a WebSocket rule); messages go out in
  // order, each within write_timeout.
  static asio::awaitable<void> Writer(std::shared_ptr<WsSession> self) {
    using namespace asio::experimental::awaitable_operators;
    while (!self->closed_) {
      if (self->outbox_.empty()) {
        co_await self->wake_writer_.async_wait(asio::as_tuple(asio::use_awaitable));
        continue;
      }
      Outgoing item = std::move(self->outbox_.front());
      self->outbox_.pop_front();
      if (std::holds_alternative<SlotRelease>(item)) {
        --self->open_operations_;
        continue;
      }
      self->write_timer_.expires_after(self->options_.write_timeout);
      auto stalled = self->write_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
      if (auto* text = std::get_if<std::string>(&item)) {
        auto written = co_await (self->ws_.write(*text) || std::move(stalled));
        self->queued_bytes_ -= text->size();
        self->UpdatePause();
        if (written.index() != 0 || !std::get<0>(written)) self->Abort();
      } else {
        const auto& frame = std::get<CloseFrame>(item);
        auto closed = co_await (self->ws_.close(frame.code, frame.reason) || std::move(stalled));
        if (closed.index() != 0) self->Abort();
        self->closed_ = true;
      }
    }
    self->DropQueue();
    self->read_abort_.cancel();  // a peer that got our close frame or failed has nothing more to say
    self->writer_running_ = false;
    if (self->running_ == 0) self->idle_.cancel();
  }

  http::WebSocket& ws_;
  const Schema& schema_;
  const GraphQLWsOptions& options_;
  asio::any_io_executor executor_;
  Context ctx_;
  CancelSource stop_all_;
  std::optional<CancelCallback<StopWatch>> stop_watch_;
  asio::steady_timer idle_;         // cancelled when the last operation or the writer finishes
  asio::steady_timer wake_writer_;  // cancelled when the writer has something to do
  asio::steady_timer room_;         // cancelled when backpressure lets go or the socket closes
  asio::steady_timer read_abort_;   // cancelled to end a pending read
  asio::steady_timer write_timer_;  // the write in progress must finish before it expires
  bool init_received_ = false;
  bool acked_ = false;
  bool closing_ = false;  // a close frame is queued, or the socket was dropped
  bool closed_ = false;   // nothing more can be written
  bool writer_running_ = false;
  bool paused_ = false;
  int running_ = 0;
  std::size_t open_operations_ = 0;  // started, and their last message not yet written
  std::size_t queued_bytes_ = 0;     // queued text plus the message being written
  std::size_t high_watermark_ = 0;
  std::size_t low_watermark_ = 0;
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
  // Unexpected resolver errors go to the server's log, beside its own lines.
  std::shared_ptr<ExecutionRecorder> logging = internal::log_to_server(server, options.subscribe.execution);
  http::WebSocketHandler handler = graphql_ws_handler(schema, std::move(options));
  if (logging)
    handler = [logging, inner = std::move(handler)](http::WebSocket& ws, const http::Request& req,
                                                    const Context& ctx) { return inner(ws, req, ctx); };
  server.websocket(path, std::move(handler), {std::string(kGraphQLTransportWs)}, std::move(route));
}

}  // namespace cutoff::graphql
