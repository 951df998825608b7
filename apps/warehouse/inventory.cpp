#include "warehouse/inventory.hpp"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <charconv>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <vector>

#include "cutoff/core/error.hpp"
#include "cutoff/http/idempotency_key.hpp"
#include "cutoff/sql/connect.hpp"
#include "cutoff/sql/pool_metrics.hpp"
#include "warehouse/mode_serve.hpp"
#include "warehouse/order_saga.hpp"

namespace cutoff::warehouse {

namespace asio = boost::asio;
namespace json = boost::json;
using http::Request;
using http::Response;
using sql::Value;

namespace {

std::int64_t IntParam(const Request& req, std::string_view name, std::optional<std::int64_t> fallback = {}) {
  auto v = req.query_param(name);
  std::int64_t n = 0;
  if (!v || v->empty()) {
    if (fallback) return *fallback;
    throw Error(ErrorCode::invalid_argument, "missing query parameter `" + std::string(name) + "`");
  }
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || end != v->data() + v->size())
    throw Error(ErrorCode::invalid_argument, "query parameter `" + std::string(name) + "` is not an integer");
  return n;
}

}  // namespace

Inventory::Inventory(InventoryOptions options) : options_(std::move(options)) {
  std::tie(base_, stop_) = Context().with_cancel();
}
Inventory::~Inventory() = default;

asio::awaitable<void> Inventory::start(const Context& ctx) {
  sql::DatabaseOptions db;
  db.url = options_.db_url;
  db.driver.propagation = options_.mode == Mode::cutoff ? sql::Propagation::on : sql::Propagation::off;
  db.driver.statement_observer = options_.statement_observer;
  db.driver.metrics = options_.metrics;
  sql::PoolOptions pool_options;
  pool_options.max_size = options_.pool_size;
  pool_options.max_waiters = 100'000;
  pool_options.refuse_doomed_waits = options_.mode == Mode::cutoff && options_.refuse_doomed_waits;
  if (options_.mode == Mode::cutoff) pool_options.newest_first_after = options_.pool_newest_first_after;
  pool_ = std::make_unique<sql::Pool>(sql::connection_factory(db), pool_options);

  effects::EffectsOptions fx;
  fx.timeout = options_.effect_timeout;
  fx.retention = options_.retention;
  // The gateway reads reservations from the outbox table itself: delivery is
  // marking them.
  fx.sink = [](const Context&, const effects::OutboxMessage&) -> asio::awaitable<void> { co_return; };
  effects_ = std::make_unique<effects::Effects>(*pool_, fx);

  sql::Pool::Lease conn = co_await pool_->acquire(ctx);
  co_await create_warehouse_data(*conn, ctx, options_.data);
  conn.reset();
  co_await effects_->install(ctx);
  // The order saga's journal, so that orders can be taken once a shipping service is known.
  effects::SagaJournal journal(*pool_, effects_->options().table_prefix);
  co_await journal.install(ctx);
  if (!options_.shipping_url.empty()) {
    const asio::any_io_executor executor = co_await asio::this_coro::executor;
    use_shipping(executor, options_.shipping_url);
  }
  if (options_.valuation_steps <= 0) {
    sql::Pool::Lease c = co_await pool_->acquire(ctx);
    options_.valuation_steps = co_await calibrate_valuation(*c, ctx, options_.valuation_time);
  }
}

void Inventory::start_sweepers(const asio::any_io_executor& executor, std::chrono::milliseconds interval) {
  if (interval <= std::chrono::milliseconds::zero())
    throw std::invalid_argument("the sweepers' interval must be positive");
  if (journal_) throw std::logic_error("the inventory's sweepers are already started");
  std::tie(sweep_ctx_, sweep_stop_) = base_.with_cancel();
  journal_ = std::make_unique<effects::SagaJournal>(*pool_, effects_->options().table_prefix);
  asio::co_spawn(executor, effects_->run_sweeper(sweep_ctx_, interval), asio::detached);
  asio::co_spawn(executor, journal_->run_sweeper(sweep_ctx_, interval, options_.retention), asio::detached);
}

void Inventory::use_shipping(const asio::any_io_executor& executor, std::string shipping_url,
                             http::TlsClientOptions tls) {
  options_.shipping_url = std::move(shipping_url);
  http::ClientOptions client;
  client.tls = std::move(tls);
  client.reply_margin = options_.shipping_reply_margin;
  shipping_client_ = std::make_unique<http::Client>(executor, client);
  OrderSagaOptions order;
  order.client = shipping_client_.get();
  order.shipping_url = options_.shipping_url;
  DefineOrderSaga(std::move(order));
}

void Inventory::DefineOrderSaga(OrderSagaOptions order) {
  order.budget = options_.order_budget;
  order.shipping_key_lifetime = options_.shipping_retention;
  effects::SagaOptions saga_options;
  saga_options.registry = options_.metrics;  // cutoff_saga_outcomes_total, cutoff_saga_compensations_total
  sagas_ = std::make_unique<effects::Sagas>(*effects_, saga_options);
  sagas_->define(order_saga(order));
}

void Inventory::use_shipping_grpc(const asio::any_io_executor& executor, std::string target,
                                  std::optional<grpc::TlsClientOptions> tls) {
  grpc::ClientOptions client;
  client.tls = std::move(tls);
  client.name = "shipping";
  client.reply_margin = options_.shipping_reply_margin;
  shipping_grpc_ = std::make_unique<grpc::Client>(executor, std::move(target), client);
  OrderSagaOptions order;
  order.grpc_client = shipping_grpc_.get();
  DefineOrderSaga(std::move(order));
}

http::ServerOptions Inventory::server_options(observe::Registry* metrics) const {
  http::ServerOptions o;
  o.metrics = metrics;
  o.budget.max_budget = options_.max_budget;
  return o;
}

Inventory::InFlight::InFlight(Inventory& owner) noexcept : owner_(owner) {
  const std::size_t now = owner_.in_flight_.fetch_add(1, std::memory_order_relaxed) + 1;
  std::size_t seen = owner_.max_in_flight_.load(std::memory_order_relaxed);
  while (now > seen && !owner_.max_in_flight_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
}

Inventory::InFlight::~InFlight() { owner_.in_flight_.fetch_sub(1, std::memory_order_relaxed); }

InventoryStats Inventory::stats() const noexcept {
  return {in_flight_.load(std::memory_order_relaxed), max_in_flight_.load(std::memory_order_relaxed)};
}

asio::awaitable<std::string> Inventory::Serve(const Context& request, const Work& work) {
  const InFlight counted(*this);
  const ModeBounds bounds{options_.mode, options_.own_timeout, "inventory"};
  co_return co_await serve_in_mode(bounds, base_, request, work);
}

asio::awaitable<sql::Pool::Lease> Inventory::Acquire(const Context& ctx) {
  if (options_.mode == Mode::timeouts) {
    const Context checkout = ctx.with_timeout(options_.own_timeout);
    co_return co_await pool_->acquire(checkout);
  }
  co_return co_await pool_->acquire(ctx);
}

// Each operation names the function objects it hands to Serve() and Effects::run(): g++ 12
// destroys a temporary in a co_await expression twice (a lambda with a string inside crashed it).
asio::awaitable<std::string> Inventory::warehouses(const Context& request) {
  const Work work = [this](const Context& ctx) -> asio::awaitable<std::string> {
    sql::Pool::Lease conn = co_await Acquire(ctx);
    co_return co_await list_warehouses(*conn, ctx);
  };
  co_return co_await Serve(request, work);
}

asio::awaitable<std::string> Inventory::bins(const Context& request, std::int64_t warehouse, std::int64_t first) {
  first = std::clamp<std::int64_t>(first, 0, 1000);
  const Work work = [this, warehouse, first](const Context& ctx) -> asio::awaitable<std::string> {
    sql::Pool::Lease conn = co_await Acquire(ctx);
    co_return co_await list_bins(*conn, ctx, warehouse, first);
  };
  co_return co_await Serve(request, work);
}

asio::awaitable<std::string> Inventory::bin(const Context& request, std::int64_t id) {
  const Work work = [this, id](const Context& ctx) -> asio::awaitable<std::string> {
    sql::Pool::Lease conn = co_await Acquire(ctx);
    std::string bin = co_await get_bin(*conn, ctx, id);
    if (bin.empty()) throw Error(ErrorCode::not_found, "no bin " + std::to_string(id), ctx.request_id());
    co_return bin;
  };
  co_return co_await Serve(request, work);
}

asio::awaitable<std::string> Inventory::valuation(const Context& request, std::int64_t warehouse) {
  const Work work = [this, warehouse](const Context& ctx) -> asio::awaitable<std::string> {
    if (!valuation_limit_) {
      sql::Pool::Lease conn = co_await Acquire(ctx);
      co_return co_await stock_valuation(*conn, ctx, warehouse, options_.valuation_steps);
    }
    resilience::AdaptiveLimit::Permit permit = co_await valuation_limit_->acquire(ctx);
    sql::Pool::Lease conn = co_await Acquire(ctx);
    std::string body;
    try {
      body = co_await stock_valuation(*conn, ctx, warehouse, options_.valuation_steps);
    } catch (...) {
      if (ctx.stop_requested()) permit.stopped();  // cut at its deadline while running
      throw;
    }
    permit.completed();
    co_return body;
  };
  co_return co_await Serve(request, work);
}

asio::awaitable<std::string> Inventory::reserve(const Context& request, std::string key, std::int64_t bin_id,
                                                std::int64_t qty) {
  effects::check_idempotency_key(key, request.request_id());
  if (qty <= 0)
    throw Error(ErrorCode::invalid_argument, "qty must be positive, not " + std::to_string(qty), request.request_id());
  effects::EffectRequest er;
  er.operation = "inventory.reserve";
  er.idempotency_key = std::move(key);
  er.fingerprint = std::to_string(bin_id) + ":" + std::to_string(qty);
  const effects::EffectBody body = [bin_id, qty](effects::Effect& fx) -> asio::awaitable<std::string> {
    std::vector<Value> p{qty, bin_id};
    sql::Result r = co_await fx.execute(
        "update bin set reserved = reserved + $1 where id = $2 and qty - reserved >= $1 returning qty, reserved", p);
    if (r.size() == 0)
      throw Error(ErrorCode::invalid_argument, "bin " + std::to_string(bin_id) + " does not exist or has fewer than " +
                                                   std::to_string(qty) + " available");
    const std::string change = "{\"binId\":" + std::to_string(bin_id) +
                               ",\"qty\":" + std::to_string(r[0].get<std::int64_t>("qty")) +
                               ",\"reserved\":" + std::to_string(r[0].get<std::int64_t>("reserved")) + "}";
    co_await fx.publish("stock.changed", change);
    co_return change;
  };
  const Work work = [this, er = std::move(er), body](const Context& ctx) -> asio::awaitable<std::string> {
    effects::EffectOutcome out = co_await effects_->run(ctx, er, body);
    json::object answer = json::parse(out.result).as_object();
    answer["replayed"] = out.replayed;
    co_return json::serialize(answer);
  };
  co_return co_await Serve(request, work);
}

asio::awaitable<std::string> Inventory::stock_changes(const Context& request, std::int64_t after) {
  const Work work = [this, after](const Context& ctx) -> asio::awaitable<std::string> {
    std::vector<Value> p{after};
    sql::Pool::Lease conn = co_await Acquire(ctx);
    sql::Result r = co_await conn->execute(ctx,
                                           "select id, payload from " + effects_->outbox_table() +
                                               " where topic = 'stock.changed' and id > $1 order by id limit 100",
                                           p);
    std::string out = "[";
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (i) out += ',';
      json::object change = json::parse(r[i].get<std::string>("payload")).as_object();
      change["id"] = r[i].get<std::int64_t>("id");
      out += json::serialize(change);
    }
    out += ']';
    co_return out;
  };
  co_return co_await Serve(request, work);
}

asio::awaitable<std::string> Inventory::order(const Context& request, std::string key, std::int64_t bin_id,
                                              std::int64_t qty, std::string destination) {
  effects::check_idempotency_key(key, request.request_id());
  if (!sagas_)
    throw Error(ErrorCode::unavailable, "this inventory service has no shipping service to book orders with",
                request.request_id());
  const std::string input = order_input(bin_id, qty, destination);
  const Work work = [this, key, input](const Context& ctx) -> asio::awaitable<std::string> {
    effects::SagaOutcome out = co_await sagas_->run(ctx, kOrderSaga, input, key);
    out.check();
    json::object answer;
    answer["orderId"] = key;
    answer["state"] = "completed";
    answer["replayed"] = out.replayed;
    json::error_code ec;
    answer["shipment"] = json::parse(out.result, ec);
    co_return json::serialize(answer);
  };
  co_return co_await Serve(request, work);
}

void Inventory::prepare_limits(observe::Registry* metrics) {
  if (options_.mode != Mode::cutoff) return;
  if (options_.admission && !admission_) {
    resilience::ServiceTimeAdmissionOptions a = *options_.admission;
    if (metrics && !a.metrics) {
      if (!resilience_metrics_) resilience_metrics_ = std::make_unique<resilience::ResilienceMetrics>(*metrics);
      a.metrics = resilience_metrics_.get();
    }
    admission_ = std::make_unique<resilience::ServiceTimeAdmission>(a);
  }
  if (options_.valuation_limit && !valuation_limit_) {
    resilience::AdaptiveLimitOptions l = *options_.valuation_limit;
    l.max_limit = std::max<std::size_t>(1, std::min(l.max_limit, options_.pool_size));
    l.min_limit = std::min(l.min_limit, l.max_limit);
    if (l.initial_limit > l.max_limit) l.initial_limit = l.max_limit;
    if (l.newest_first_after == Duration::max()) l.newest_first_after = options_.pool_newest_first_after;
    if (l.name == "default") l.name = "inventory.valuation";
    if (metrics && !l.metrics) {
      if (!resilience_metrics_) resilience_metrics_ = std::make_unique<resilience::ResilienceMetrics>(*metrics);
      l.metrics = resilience_metrics_.get();
    }
    valuation_limit_ = std::make_unique<resilience::AdaptiveLimit>(l);
  }
}

void Inventory::mount(http::Server& server, observe::Registry* metrics) {
  if (metrics) sql::register_pool_metrics(*metrics, *pool_, "inventory");
  prepare_limits(metrics);
  // The service's declared budget, bound only under `cutoff`: the other modes are the
  // baselines the lab compares against, servers that never stop their handlers.
  auto route = [this](const char* name) {
    http::RouteOptions o;
    o.name = name;
    o.budget = options_.own_timeout;
    o.bind_deadline = options_.mode == Mode::cutoff;
    o.admission = admission_.get();
    return o;
  };
  using Operation = std::function<asio::awaitable<std::string>(const Request&, const Context&)>;
  auto get = [&](const char* path, const char* name, Operation operation) {
    server.route(
        "GET", path,
        [operation = std::move(operation)](const Request& req, const Context& ctx) -> asio::awaitable<Response> {
          co_return Response::json(200, co_await operation(req, ctx));
        },
        route(name));
  };
  get("/warehouses", "inventory.warehouses", [this](const Request&, const Context& ctx) { return warehouses(ctx); });
  get("/bins", "inventory.bins", [this](const Request& req, const Context& ctx) {
    return bins(ctx, IntParam(req, "warehouse"), IntParam(req, "first", 10));
  });
  get("/bin", "inventory.bin", [this](const Request& req, const Context& ctx) { return bin(ctx, IntParam(req, "id")); });
  get("/valuation", "inventory.valuation",
      [this](const Request& req, const Context& ctx) { return valuation(ctx, IntParam(req, "warehouse")); });
  get("/stock-changes", "inventory.stock_changes",
      [this](const Request& req, const Context& ctx) { return stock_changes(ctx, IntParam(req, "after", 0)); });

  server.route(
      "POST", "/reservations",
      [this](const Request& req, const Context& rctx) -> asio::awaitable<Response> {
        // The key is required: without one a retry reserves again, and the caller that forgot
        // it (or sent it empty) would believe otherwise.
        std::string key =
            http::required_idempotency_key(req, "POST /reservations needs an Idempotency-Key header", rctx.request_id());
        effects::check_idempotency_key(key, rctx.request_id());
        json::error_code ec;
        json::value body = json::parse(req.body, ec);
        const json::object* o = ec ? nullptr : body.if_object();
        const json::value* bin = o ? o->if_contains("binId") : nullptr;
        const json::value* qty = o ? o->if_contains("qty") : nullptr;
        auto as_int = [](const json::value* v) -> std::optional<std::int64_t> {
          if (!v) return std::nullopt;
          if (v->is_int64()) return v->as_int64();
          if (v->is_string()) {
            std::int64_t n = 0;
            const auto& s = v->as_string();
            auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), n);
            if (err == std::errc() && end == s.data() + s.size()) return n;
          }
          return std::nullopt;
        };
        const auto bin_id = as_int(bin);
        const auto amount = as_int(qty);
        if (!bin_id || !amount || *amount <= 0)
          throw Error(ErrorCode::invalid_argument, R"(expected {"binId": <int>, "qty": <positive int>})",
                      rctx.request_id());
        co_return Response::json(200, co_await reserve(rctx, std::move(key), *bin_id, *amount));
      },
      route("inventory.reserve"));

  http::RouteOptions order_route = route("inventory.order");
  order_route.budget = options_.order_budget;
  server.route(
      "POST", "/orders",
      [this](const Request& req, const Context& rctx) -> asio::awaitable<Response> {
        std::string key = http::required_idempotency_key(
            req, "POST /orders needs an Idempotency-Key header (it is the order's id)", rctx.request_id());
        Order placed = parse_order(req.body, rctx.request_id());
        std::string answer =
            co_await order(rctx, std::move(key), placed.bin_id, placed.qty, std::move(placed.destination));
        co_return Response::json(200, std::move(answer));
      },
      order_route);
  get("/orders", "inventory.order_status", [this](const Request& req, const Context& ctx) -> asio::awaitable<std::string> {
    auto id = req.query_param("id");
    if (!id || id->empty()) throw Error(ErrorCode::invalid_argument, "missing query parameter `id`", ctx.request_id());
    if (!sagas_) throw Error(ErrorCode::not_found, "this inventory service takes no orders", ctx.request_id());
    std::string key(*id);
    std::optional<effects::SagaRecord> saga = co_await sagas_->journal().find(ctx, key);
    if (!saga) throw Error(ErrorCode::not_found, "no order " + key, ctx.request_id());
    co_return effects::saga_to_json(*saga, std::chrono::duration_cast<std::chrono::milliseconds>(
                                               std::chrono::system_clock::now().time_since_epoch())
                                               .count());
  });
}

}  // namespace cutoff::warehouse
