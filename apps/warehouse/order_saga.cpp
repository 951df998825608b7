#include "warehouse/order_saga.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <stdexcept>
#include <vector>

#include "cutoff/core/error.hpp"
#include "cutoff/http/error_document.hpp"
#include "warehouse/shipping_grpc.hpp"

namespace cutoff::warehouse {

namespace asio = boost::asio;
namespace json = boost::json;
using sql::Value;

Order parse_order(const std::string& input, const std::string& request_id) {
  json::error_code ec;
  json::value v = json::parse(input, ec);
  const json::object* o = ec ? nullptr : v.if_object();
  const json::value* bin = o ? o->if_contains("binId") : nullptr;
  const json::value* qty = o ? o->if_contains("qty") : nullptr;
  const json::value* destination = o ? o->if_contains("destination") : nullptr;
  if (!bin || !bin->is_int64() || !qty || !qty->is_int64() || qty->as_int64() <= 0 || !destination ||
      !destination->is_string())
    throw Error(ErrorCode::invalid_argument,
                R"(expected {"binId": <int>, "qty": <positive int>, "destination": <string>})", request_id);
  return Order{bin->as_int64(), qty->as_int64(), std::string(destination->as_string())};
}

namespace {

// bin.reserved moved by `delta`, with its stock.changed message, in the region's transaction.
asio::awaitable<std::string> MoveReserved(effects::Effect& fx, std::int64_t bin_id, std::int64_t delta) {
  std::vector<Value> p{delta, bin_id};
  sql::Result r = co_await fx.execute(
      "update bin set reserved = reserved + $1 where id = $2 and qty - reserved >= $1 and reserved + $1 >= 0"
      " returning qty, reserved",
      p);
  if (r.size() == 0)
    throw Error(ErrorCode::invalid_argument, "bin " + std::to_string(bin_id) + " does not exist or has fewer than " +
                                                 std::to_string(delta) + " available");
  const std::string change = "{\"binId\":" + std::to_string(bin_id) +
                             ",\"qty\":" + std::to_string(r[0].get<std::int64_t>("qty")) +
                             ",\"reserved\":" + std::to_string(r[0].get<std::int64_t>("reserved")) + "}";
  co_await fx.publish("stock.changed", change);
  co_return change;
}

}  // namespace

std::string order_input(std::int64_t bin_id, std::int64_t qty, const std::string& destination) {
  json::object o;
  o["binId"] = bin_id;
  o["qty"] = qty;
  o["destination"] = destination;
  return json::serialize(o);
}

effects::SagaDefinition order_saga(OrderSagaOptions options) {
  if (!options.client && !options.grpc_client) throw std::invalid_argument("order_saga needs an HTTP or gRPC client");
  effects::SagaDefinition def;
  def.name = kOrderSaga;
  def.budget = options.budget;

  auto reserve = [](effects::Effect& fx, const effects::SagaCall& call) -> asio::awaitable<std::string> {
    const Order order = parse_order(call.input);
    co_return co_await MoveReserved(fx, order.bin_id, order.qty);
  };
  auto release = [](effects::Effect& fx, const effects::SagaCall& call) -> asio::awaitable<std::string> {
    const Order order = parse_order(call.input);
    co_return co_await MoveReserved(fx, order.bin_id, -order.qty);
  };
  def.steps.push_back(effects::SagaStep::local_step("reserve", reserve, release));

  http::Client* client = options.client;
  grpc::Client* grpc_client = options.grpc_client;
  const std::string url = options.shipping_url + "/shipments";
  auto ship = [client, grpc_client, url](const Context& ctx,
                                         const effects::SagaCall& call) -> asio::awaitable<std::string> {
    const Order order = parse_order(call.input);
    if (grpc_client) {
      Shipment shipment{call.saga_id, order.bin_id, order.qty, order.destination};
      std::string key = call.idempotency_key;
      co_return co_await book_over_grpc(*grpc_client, ctx, std::move(key), std::move(shipment));
    }
    json::object body;
    body["orderId"] = call.saga_id;
    body["binId"] = order.bin_id;
    body["qty"] = order.qty;
    body["destination"] = order.destination;
    http::ClientRequest req;
    req.method = "POST";
    req.url = url;
    req.headers.set("Content-Type", "application/json");
    req.headers.set("Idempotency-Key", call.idempotency_key);
    req.body = json::serialize(body);
    http::Response r = co_await client->request(ctx, std::move(req));
    if (r.status == 200) co_return r.body;
    // The shipping service's own error document says what happened there; a 4xx is a refusal.
    ErrorCode code = r.status >= 400 && r.status < 500 ? ErrorCode::invalid_argument : ErrorCode::unavailable;
    std::string message = "the shipping service answered " + std::to_string(r.status);
    if (auto remote = http::parse_error_document(r.body)) {
      code = remote->code.value_or(code);
      if (!remote->message.empty()) message = "shipping: " + remote->message;
    }
    throw Error(code, message, ctx.request_id());
  };
  effects::SagaStepOptions keyed;
  keyed.keyed = true;
  keyed.key_lifetime = options.shipping_key_lifetime;
  def.steps.push_back(effects::SagaStep::remote_step("ship", ship, nullptr, keyed));
  return def;
}

}  // namespace cutoff::warehouse
