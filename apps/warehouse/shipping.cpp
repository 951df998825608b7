#include "warehouse/shipping.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <random>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/http/idempotency_key.hpp"
#include "cutoff/sql/connect.hpp"
#include "warehouse/mode_serve.hpp"

namespace cutoff::warehouse {

namespace asio = boost::asio;
namespace json = boost::json;
using http::Request;
using http::Response;
using sql::Value;

namespace {

constexpr std::size_t kMaxDestinationBytes = 200;

std::string ShipmentJson(const Shipment& s, bool replayed) {
  json::object o;
  o["orderId"] = s.order_id;
  o["binId"] = s.bin_id;
  o["qty"] = s.qty;
  o["destination"] = s.destination;
  o["replayed"] = replayed;
  return json::serialize(o);
}


}  // namespace

Shipping::Shipping(ShippingOptions options) : options_(std::move(options)) {
  std::tie(base_, stop_) = Context().with_cancel();
}

std::chrono::milliseconds Shipping::BookingTime() {
  const auto low = options_.booking_time.count(), high = options_.booking_time_max.count();
  if (high <= low) return options_.booking_time;
  thread_local std::minstd_rand random(std::random_device{}());
  return std::chrono::milliseconds(std::uniform_int_distribution<std::int64_t>(low, high)(random));
}
Shipping::~Shipping() = default;

void Shipping::start_sweeper(const asio::any_io_executor& executor, std::chrono::milliseconds interval) {
  if (interval <= std::chrono::milliseconds::zero())
    throw std::invalid_argument("the sweeper's interval must be positive");
  if (sweeper_started_) throw std::logic_error("the shipping service's sweeper is already started");
  sweeper_started_ = true;
  std::tie(sweep_ctx_, sweep_stop_) = base_.with_cancel();
  asio::co_spawn(executor, effects_->run_sweeper(sweep_ctx_, interval), asio::detached);
}

asio::awaitable<void> Shipping::start(const Context& ctx) {
  sql::DatabaseOptions db;
  db.url = options_.db_url;
  sql::PoolOptions pool_options;
  pool_options.max_size = options_.pool_size;
  pool_options.max_waiters = 10'000;
  pool_ = std::make_unique<sql::Pool>(sql::connection_factory(db), pool_options);
  effects::EffectsOptions fx;
  fx.timeout = options_.effect_timeout;
  fx.table_prefix = "shipping_";
  fx.retention = options_.retention;
  effects_ = std::make_unique<effects::Effects>(*pool_, fx);
  {
    sql::Pool::Lease conn = co_await pool_->acquire(ctx);
    co_await conn->execute(ctx,
                           "create table if not exists shipment (order_id text primary key, bin_id bigint not null,"
                           " qty bigint not null, destination text not null, created_ms bigint not null)",
                           {});
  }
  co_await effects_->install(ctx);
}

http::ServerOptions Shipping::server_options(observe::Registry* metrics) const {
  http::ServerOptions o;
  o.metrics = metrics;
  o.budget.max_budget = options_.max_budget;
  return o;
}

asio::awaitable<std::string> Shipping::book(const Context& ctx, std::string key, Shipment shipment) {
  const std::string& rid = ctx.request_id();
  effects::check_idempotency_key(key, rid);
  if (auto problem = effects::idempotency_key_problem(shipment.order_id))
    throw Error(ErrorCode::invalid_argument, "orderId: " + *problem, rid);
  if (shipment.destination.empty() || shipment.destination.size() > kMaxDestinationBytes)
    throw Error(ErrorCode::invalid_argument,
                "destination must be 1 to " + std::to_string(kMaxDestinationBytes) + " bytes", rid);
  if (shipment.qty <= 0) throw Error(ErrorCode::invalid_argument, "qty must be positive", rid);
  if (shipment.qty > options_.max_items)
    throw Error(ErrorCode::invalid_argument,
                "refused: a shipment holds at most " + std::to_string(options_.max_items) + " items, not " +
                    std::to_string(shipment.qty),
                rid);
  const std::chrono::milliseconds booking = BookingTime();
  const ModeWork work = [this, key, shipment, booking](const Context& work_ctx) -> asio::awaitable<std::string> {
    if (booking.count() > 0) {  // the carrier's confirmation
      asio::steady_timer timer(co_await asio::this_coro::executor, booking);
      co_await with_context(work_ctx, timer.async_wait(asio::use_awaitable));
    }
    effects::EffectRequest er;
    er.operation = "shipping.book";
    er.idempotency_key = key;
    er.fingerprint = ShipmentJson(shipment, false);
    const effects::EffectBody body = [shipment](effects::Effect& fx) -> asio::awaitable<std::string> {
      std::vector<Value> p{shipment.order_id, shipment.bin_id, shipment.qty, shipment.destination,
                           static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                         std::chrono::system_clock::now().time_since_epoch())
                                                         .count())};
      sql::Result r = co_await fx.execute(
          "insert into shipment (order_id, bin_id, qty, destination, created_ms) values ($1, $2, $3, $4, $5)"
          " on conflict (order_id) do nothing returning order_id",
          p);
      if (r.size() == 0)
        throw Error(ErrorCode::idempotency_conflict, "order " + shipment.order_id + " already has a shipment",
                    fx.context().request_id());
      co_return ShipmentJson(shipment, false);
    };
    effects::EffectOutcome out = co_await effects_->run(work_ctx, er, body);
    if (!out.replayed) co_return out.result;
    json::value answer = json::parse(out.result);
    answer.as_object()["replayed"] = true;
    co_return json::serialize(answer);
  };
  const ModeBounds bounds{options_.mode, options_.own_timeout, "shipping"};
  co_return co_await serve_in_mode(bounds, base_, ctx, work);
}

asio::awaitable<std::string> Shipping::find(const Context& ctx, const std::string& order_id) {
  sql::Pool::Lease conn = co_await pool_->acquire(ctx);
  std::vector<Value> p{order_id};
  sql::Result r = co_await conn->execute(
      ctx, "select order_id, bin_id, qty, destination from shipment where order_id = $1", p);
  if (r.size() == 0) co_return std::string();
  Shipment s{r[0].get<std::string>("order_id"), r[0].get<std::int64_t>("bin_id"), r[0].get<std::int64_t>("qty"),
             r[0].get<std::string>("destination")};
  co_return ShipmentJson(s, false);
}

void Shipping::mount(http::Server& server) {
  http::RouteOptions book_route;
  book_route.name = "shipping.book";
  book_route.budget = options_.route_budget;
  server.route(
      "POST", "/shipments",
      [this](const Request& req, const Context& ctx) -> asio::awaitable<Response> {
        std::string key =
            http::required_idempotency_key(req, "POST /shipments needs an Idempotency-Key header", ctx.request_id());
        json::error_code ec;
        json::value body = json::parse(req.body, ec);
        const json::object* o = ec ? nullptr : body.if_object();
        const json::value* order = o ? o->if_contains("orderId") : nullptr;
        const json::value* bin = o ? o->if_contains("binId") : nullptr;
        const json::value* qty = o ? o->if_contains("qty") : nullptr;
        const json::value* destination = o ? o->if_contains("destination") : nullptr;
        if (!order || !order->is_string() || !bin || !bin->is_int64() || !qty || !qty->is_int64() || !destination ||
            !destination->is_string())
          throw Error(ErrorCode::invalid_argument,
                      R"(expected {"orderId": <string>, "binId": <int>, "qty": <int>, "destination": <string>})",
                      ctx.request_id());
        Shipment s{std::string(order->as_string()), bin->as_int64(), qty->as_int64(),
                   std::string(destination->as_string())};
        std::string answer = co_await book(ctx, std::move(key), std::move(s));
        co_return Response::json(200, std::move(answer));
      },
      book_route);
  http::RouteOptions find_route;
  find_route.name = "shipping.find";
  find_route.budget = options_.route_budget;
  server.route(
      "GET", "/shipments",
      [this](const Request& req, const Context& ctx) -> asio::awaitable<Response> {
        auto order = req.query_param("order");
        if (!order || order->empty())
          throw Error(ErrorCode::invalid_argument, "missing query parameter `order`", ctx.request_id());
        std::string id(*order);
        std::string found = co_await find(ctx, id);
        if (found.empty()) throw Error(ErrorCode::not_found, "no shipment for order " + id, ctx.request_id());
        co_return Response::json(200, std::move(found));
      },
      find_route);
}

}  // namespace cutoff::warehouse
