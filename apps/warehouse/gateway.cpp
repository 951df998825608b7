#include "warehouse/gateway.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <deque>
#include <stdexcept>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/effects/effects.hpp"
#include "cutoff/graphql/event_stream.hpp"
#include "cutoff/graphql/http/graphiql_route.hpp"
#include "cutoff/graphql/http/graphql_over_http.hpp"
#include "cutoff/graphql/http/graphql_ws.hpp"
#include "cutoff/graphql/metrics_recorder.hpp"

namespace cutoff::warehouse {

namespace asio = boost::asio;
namespace json = boost::json;
namespace gql = cutoff::graphql;
using gql::Data;
using gql::FieldContext;

std::string schema_sdl(std::optional<std::chrono::milliseconds> valuation_cap) {
  const std::string cap = valuation_cap ? " @budget(ms: " + std::to_string(valuation_cap->count()) + ")" : "";
  return R"(
"""The reference warehouse API: stock across warehouses, served by cutoff."""
schema { query: Query mutation: Mutation subscription: Subscription }

type Query {
  "Every warehouse."
  warehouses: [Warehouse!]!
  "A warehouse by id."
  warehouse(id: ID!): Warehouse
  "One bin and its stock right now."
  bin(id: ID!): Bin
  "One warehouse's stock valuation, without reading the warehouse first: expensive."
  stockValuation(warehouseId: ID!): Float)" +
         cap + R"(
}

type Warehouse {
  id: ID!
  name: String!
  city: String!
  "The first bins of this warehouse (null when they could not be read in time)."
  bins(first: Int = 10): [Bin!] @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false)
  "The value of every stock movement in this warehouse, with a risk simulation: expensive."
  stockValuation: Float)" +
         cap + R"(
}

type Bin {
  id: ID!
  warehouseId: ID!
  code: String!
  sku: String!
  qty: Int!
  reserved: Int!
  available: Int!
}

type Mutation {
  "Reserves qty units in a bin. Repeating an idempotency key returns the first answer instead of reserving again."
  reserveStock(binId: ID!, qty: Int!, idempotencyKey: String!): Reservation!
}

type Reservation {
  binId: ID!
  qty: Int!
  reserved: Int!
  "True when this is the stored answer to an earlier request with the same key."
  replayed: Boolean!
}

type Subscription {
  "Reservations as they happen, for one bin or all of them."
  stockChanged(binId: ID): StockChange!
}

type StockChange {
  id: ID!
  binId: ID!
  qty: Int!
  reserved: Int!
}
)";
}

namespace {

std::string ArgId(const FieldContext& f, std::string_view name) {
  const json::value* v = f.arg(name);
  if (!v) return {};
  if (v->is_string()) return std::string(v->as_string());
  if (v->is_int64()) return std::to_string(v->as_int64());
  return {};
}

// An ID argument as the inventory's integer key; anything else is the caller's mistake.
std::int64_t IdArg(const FieldContext& f, std::string_view name) {
  const std::string id = ArgId(f, name);
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), n);
  if (id.empty() || ec != std::errc() || end != id.data() + id.size())
    throw Error(ErrorCode::invalid_argument, "`" + std::string(name) + "` must be a number", f.ctx.request_id());
  return n;
}

// stockChanged: polls the inventory's change feed. Each poll has a budget of its own; the
// subscription's context (the client's connection) stops the wait.
using CallSlotFn = std::function<asio::awaitable<OutboundLimits::Permit>(const Context&)>;

class StockChanges final : public gql::EventStream {
 public:
  StockChanges(InventoryClient& inventory, CallSlotFn slot, std::string bin, Duration poll)
      : inventory_(inventory), slot_(std::move(slot)), bin_(std::move(bin)), poll_(poll) {}

  asio::awaitable<std::optional<Data>> next(const Context& ctx) override {
    for (;;) {
      if (!ready_.empty()) {
        Data d = Data::json_value(std::move(ready_.front()));
        ready_.pop_front();
        co_return d;
      }
      ctx.check();
      const Context poll = ctx.with_timeout(std::chrono::seconds(2));
      OutboundLimits::Permit slot = co_await slot_(poll);
      json::value changes = co_await inventory_.stock_changes(poll, after_);
      slot.release();
      if (changes.is_array()) {
        for (json::value& c : changes.as_array()) {
          const json::object& o = c.as_object();
          after_ = std::max(after_, o.at("id").to_number<std::int64_t>());
          if (!bin_.empty() && std::to_string(o.at("binId").to_number<std::int64_t>()) != bin_) continue;
          ready_.push_back(std::move(c));
        }
      }
      if (ready_.empty()) {
        asio::steady_timer timer(co_await asio::this_coro::executor, poll_);
        co_await with_context(ctx, timer.async_wait(asio::use_awaitable));
      }
    }
  }

 private:
  InventoryClient& inventory_;
  CallSlotFn slot_;
  std::string bin_;
  Duration poll_;
  std::int64_t after_ = -1;  // first poll: learn where the feed is
  std::deque<json::value> ready_;
};

OutboundLimitOptions LimitOptions(const GatewayOptions& o, resilience::ResilienceMetrics* metrics) {
  OutboundLimitOptions l;
  l.per_operation = o.max_calls_per_operation;
  l.per_operation_queue = o.max_queued_calls_per_operation;
  l.total = o.max_calls;
  l.total_queue = o.max_queued_calls;
  l.metrics = metrics;
  return l;
}

}  // namespace

resilience::PolicyOptions default_inventory_policy() {
  return {.retry = {.max_attempts = 3,
                    .backoff = {.initial = std::chrono::milliseconds(25), .max = std::chrono::milliseconds(250)},
                    .budget_ratio = 0.1},
          .breaker = resilience::BreakerOptions{.consecutive_failures = 5, .open_for = std::chrono::seconds(5)},
          .throttle = resilience::ThrottleOptions{.k = 2}};
}

Gateway::Gateway(asio::any_io_executor executor, GatewayOptions options) : options_(std::move(options)) {
  limits_ = std::make_unique<OutboundLimits>(LimitOptions(options_, nullptr));
  InventoryClientOptions client;
  client.transport = options_.inventory_transport;
  client.url = options_.inventory_url;
  client.grpc_target = options_.inventory_grpc_target;
  client.http_tls = options_.inventory_tls;
  client.grpc_tls = options_.inventory_grpc_tls;
  client.policy = options_.inventory_policy;
  if (client.policy.attempt_timeout == Duration::zero()) {
    switch (options_.mode) {
      case Mode::cutoff: client.policy.attempt_timeout = options_.max_budget; break;  // the budget bounds it
      case Mode::timeouts: client.policy.attempt_timeout = options_.operation_budget; break;
      case Mode::none: client.policy.attempt_timeout = std::chrono::hours(1); break;
    }
  }
  if (options_.mode == Mode::cutoff) client.reply_margin = options_.inventory_reply_margin;
  client.metrics = options_.metrics;
  inventory_ = make_inventory_client(executor, client);

  // Under `none` nothing has a deadline, not even the field.
  gql::SchemaResult built = gql::Schema::from_sdl(
      schema_sdl(options_.mode == Mode::none ? std::nullopt : std::optional(options_.valuation_cap)));
  if (!built.ok()) throw std::logic_error("warehouse schema: " + built.errors.at(0).message);
  schema_ = std::move(built.schema);
  if (options_.mode == Mode::cutoff) schema_->declare_operation_budget(options_.operation_budget);

  // `ctx` is the field's: its operation's limit applies. `call_id`, when set, is appended to the
  // request id of the call (after the slot is taken: a context with new values is no longer
  // recognised as the operation's), so the statement it causes can be traced to the field (the
  // sqlcommenter comment, pg_stat_activity).
  using Call = std::function<asio::awaitable<json::value>(const Context&)>;
  auto fetch = [this](const Context& ctx, const Call& call, std::string_view call_id) -> asio::awaitable<json::value> {
    OutboundLimits::Permit slot = co_await CallSlot(ctx);
    const Context named = call_id.empty() ? ctx : ctx.with_request_id(ctx.request_id() + std::string(call_id));
    co_return co_await call(named);
  };
  InventoryClient* inv = inventory_.get();

  schema_->resolve_async("Query", "warehouses", [fetch, inv](FieldContext& f) -> asio::awaitable<Data> {
    const Call call = [inv](const Context& c) { return inv->warehouses(c); };
    co_return Data::json_value(co_await fetch(f.ctx, call, ""));
  });
  schema_->resolve_async("Query", "warehouse", [fetch, inv](FieldContext& f) -> asio::awaitable<Data> {
    const std::string id = ArgId(f, "id");
    const Call call = [inv](const Context& c) { return inv->warehouses(c); };
    json::value all = co_await fetch(f.ctx, call, "");
    for (json::value& w : all.as_array())
      if (std::to_string(w.as_object().at("id").to_number<std::int64_t>()) == id)
        co_return Data::json_value(std::move(w));
    co_return Data();
  });
  schema_->resolve_async("Query", "bin", [fetch, inv](FieldContext& f) -> asio::awaitable<Data> {
    const std::int64_t id = IdArg(f, "id");
    const Call call = [inv, id](const Context& c) { return inv->bin(c, id); };
    co_return Data::json_value(co_await fetch(f.ctx, call, ""));
  });
  schema_->resolve_async("Query", "stockValuation", [fetch, inv](FieldContext& f) -> asio::awaitable<Data> {
    const std::string id = ArgId(f, "warehouseId");
    if (id.empty() || id.size() > 18 || !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw Error(ErrorCode::invalid_argument, "warehouseId must be a warehouse's number", f.ctx.request_id());
    const std::int64_t warehouse = IdArg(f, "warehouseId");
    const Call call = [inv, warehouse](const Context& c) { return inv->valuation(c, warehouse); };
    const std::string call_id = ".v" + id;
    json::value v = co_await fetch(f.ctx, call, call_id);
    if (v.is_null()) co_return Data();  // no such warehouse
    co_return Data::from(v.as_object().at("value").to_number<double>());
  });
  schema_->resolve_async("Warehouse", "bins", [fetch, inv](FieldContext& f) -> asio::awaitable<Data> {
    const json::value* parent = f.parent.if_json();
    const std::int64_t id = parent->as_object().at("id").to_number<std::int64_t>();
    const json::value* first = f.arg("first");
    const std::int64_t n = first && first->is_int64() ? first->as_int64() : 10;
    const Call call = [inv, id, n](const Context& c) { return inv->bins(c, id, n); };
    co_return Data::json_value(co_await fetch(f.ctx, call, ""));
  });
  schema_->resolve_async("Warehouse", "stockValuation", [fetch, inv](FieldContext& f) -> asio::awaitable<Data> {
    const std::int64_t id = f.parent.if_json()->as_object().at("id").to_number<std::int64_t>();
    const Call call = [inv, id](const Context& c) { return inv->valuation(c, id); };
    const std::string call_id = ".v" + std::to_string(id);
    json::value v = co_await fetch(f.ctx, call, call_id);
    co_return Data::from(v.as_object().at("value").to_number<double>());
  });
  schema_->resolve_async("Mutation", "reserveStock", [this, inv](FieldContext& f) -> asio::awaitable<Data> {
    // Refused here, before anything is called: an empty key would reserve on every retry, and
    // the key becomes an HTTP header (CR LF would split it).
    std::string key = f.arg_string("idempotencyKey");
    effects::check_idempotency_key(key, f.ctx.request_id());
    const std::int64_t bin = IdArg(f, "binId");
    const json::value* qty = f.arg("qty");
    const std::int64_t n = qty && qty->is_int64() ? qty->as_int64() : 0;
    OutboundLimits::Permit slot = co_await CallSlot(f.ctx);
    co_return Data::json_value(co_await inv->reserve(f.ctx, bin, n, std::move(key)));
  });
  schema_->subscribe("Subscription", "stockChanged",
                     [this, inv](FieldContext& f) -> asio::awaitable<std::unique_ptr<gql::EventStream>> {
                       CallSlotFn slot = [this](const Context& ctx) { return CallSlot(ctx); };
                       co_return std::make_unique<StockChanges>(*inv, std::move(slot), ArgId(f, "binId"),
                                                                options_.subscription_poll);
                     });
}

Gateway::~Gateway() = default;

asio::awaitable<OutboundLimits::Permit> Gateway::CallSlot(const Context& ctx) {
  if (options_.mode == Mode::timeouts) {
    // A client with timeouts counts the wait for a connection in its timeout.
    const Context bounded = ctx.with_timeout(options_.operation_budget);
    co_return co_await limits_->acquire(bounded);
  }
  co_return co_await limits_->acquire(ctx);
}

http::ServerOptions Gateway::server_options(observe::Registry* metrics) const {
  http::ServerOptions o;
  o.metrics = metrics;
  o.budget.max_budget = options_.max_budget;
  return o;
}

void Gateway::mount(http::Server& server, observe::Registry* metrics) {
  gql::GraphQLHttpOptions graphql;
  if (metrics) {
    recorder_ = std::make_unique<gql::MetricsRecorder>(*metrics);
    graphql.execution.recorder = recorder_.get();
    // Nothing has been served yet: the limits can be replaced by ones that count.
    resilience_metrics_ = std::make_unique<resilience::ResilienceMetrics>(*metrics);
    limits_ = std::make_unique<OutboundLimits>(LimitOptions(options_, resilience_metrics_.get()));
  }
  // Each request (and each WebSocket connection) is one operation for the outbound limits: the
  // transport's handlers run under the operation's scope. This is mount_graphql() and
  // mount_graphql_ws() with that wrapper.
  http::RouteOptions route;
  route.name = "graphql";
  if (options_.mode == Mode::cutoff) route.budget = options_.operation_budget;
  route.stop_grace = std::chrono::milliseconds(250);    // the executor answers a stop itself
  route.bind_deadline = options_.mode == Mode::cutoff;  // the other modes are the lab's baselines
  const http::Handler inner = gql::graphql_http_handler(*schema_, graphql);
  const http::Handler scoped = [this, inner](const http::Request& req,
                                             const Context& ctx) -> asio::awaitable<http::Response> {
    // The request's CommitLedger is attached before the operation's scope is taken: the
    // executor would otherwise attach one to a mutation, and a context with new values is no
    // longer recognised as the operation's (see docs/architecture.md).
    const Context with_ledger = ctx.commit_ledger() ? ctx : ctx.with_commit_ledger(std::make_shared<CommitLedger>());
    const OutboundLimits::Operation op = limits_->begin_operation(with_ledger);
    co_return co_await inner(req, op.context());
  };
  if (graphql.allow_get) server.route("GET", "/graphql", scoped, route);
  server.route("POST", "/graphql", scoped, route);
  gql::GraphQLWsOptions ws;
  ws.subscribe.execution = graphql.execution;
  ws.operation_budget = options_.operation_budget;
  http::RouteOptions ws_route;
  ws_route.name = "graphql-ws";
  const http::WebSocketHandler ws_inner = gql::graphql_ws_handler(*schema_, ws);
  server.websocket(
      "/graphql",
      [this, ws_inner](http::WebSocket& socket, const http::Request& req, const Context& ctx) -> asio::awaitable<void> {
        const OutboundLimits::Operation op = limits_->begin_operation(ctx);
        co_await ws_inner(socket, req, op.context());
      },
      {std::string(gql::kGraphQLTransportWs)}, ws_route);
  // The example shows the point of the service: stock comes back on time, and the expensive
  // valuation is cut at its @budget cap while everything else in the answer arrives.
  gql::mount_graphiql(server, "/graphiql",
                      {.endpoint = "/graphql",
                       .example = "# stockValuation is cut at its @budget cap\n"
                                  "# (see Docs); everything else arrives.\n"
                                  "query Stock {\n"
                                  "  warehouses {\n"
                                  "    name\n"
                                  "    city\n"
                                  "    bins(first: 3) { code sku available }\n"
                                  "    stockValuation\n"
                                  "  }\n"
                                  "}"});
}

}  // namespace cutoff::warehouse
