#include "warehouse/shipping_grpc.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "cutoff/core/error.hpp"
#include "warehouse/shipping.pb.h"

namespace cutoff::warehouse {

namespace asio = boost::asio;
namespace json = boost::json;
namespace pb = cutoff::warehouse::v1;

grpc::ServerOptions shipping_grpc_options(const Shipping& shipping, observe::Registry* metrics) {
  grpc::ServerOptions o;
  o.metrics = metrics;
  o.budget.max_budget = shipping.options().max_budget;
  // A booking is a key, an order id, a destination of at most 200 bytes and two numbers.
  o.limits.max_request_bytes = 4 * 1024;
  return o;
}

void mount_shipping_grpc(Shipping& shipping, grpc::Server& server) {
  grpc::MethodOptions method;
  method.budget = shipping.options().route_budget;
  Shipping* sh = &shipping;
  server.unary(
      std::string(kShippingGrpcBook),
      [sh](std::string request, const Context& ctx) -> asio::awaitable<std::string> {
        pb::BookRequest r;
        if (!r.ParseFromString(request))
          throw Error(ErrorCode::invalid_argument, "the request is not a cutoff.warehouse.v1.BookRequest message",
                      ctx.request_id());
        Shipment s{std::move(*r.mutable_order_id()), r.bin_id(), r.qty(), std::move(*r.mutable_destination())};
        std::string key = std::move(*r.mutable_idempotency_key());
        const std::string answer = co_await sh->book(ctx, std::move(key), std::move(s));
        const json::object o = json::parse(answer).as_object();
        pb::Shipment out;
        out.set_order_id(std::string(o.at("orderId").as_string()));
        out.set_bin_id(o.at("binId").to_number<std::int64_t>());
        out.set_qty(o.at("qty").to_number<std::int64_t>());
        out.set_destination(std::string(o.at("destination").as_string()));
        out.set_replayed(o.at("replayed").as_bool());
        co_return out.SerializeAsString();
      },
      method);
}

asio::awaitable<std::string> book_over_grpc(grpc::Client& client, const Context& ctx, std::string key,
                                            Shipment shipment) {
  pb::BookRequest r;
  r.set_idempotency_key(std::move(key));
  r.set_order_id(std::move(shipment.order_id));
  r.set_bin_id(shipment.bin_id);
  r.set_qty(shipment.qty);
  r.set_destination(std::move(shipment.destination));
  std::string method(kShippingGrpcBook);
  std::string reply = co_await client.call(ctx, std::move(method), r.SerializeAsString());
  pb::Shipment out;
  if (!out.ParseFromString(reply))
    throw Error(ErrorCode::internal, "the shipping service's answer is not a Shipment message", ctx.request_id());
  json::object o;
  o["orderId"] = out.order_id();
  o["binId"] = out.bin_id();
  o["qty"] = out.qty();
  o["destination"] = out.destination();
  o["replayed"] = out.replayed();
  co_return json::serialize(o);
}

}  // namespace cutoff::warehouse
