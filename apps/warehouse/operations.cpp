#include "warehouse/operations.hpp"

#include <boost/json/parse.hpp>
#include <string>

#include "cutoff/core/error.hpp"

namespace cutoff::warehouse {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

json::value Schema(std::string_view text) { return json::parse(text); }

// An integer argument; `fallback` when it is absent (none: required).
std::int64_t Int(const ops::Call& call, const char* name, std::optional<std::int64_t> fallback = {}) {
  const json::object* args = call.args.if_object();
  const json::value* v = args ? args->if_contains(name) : nullptr;
  if (!v || v->is_null()) {
    if (fallback) return *fallback;
    throw Error(ErrorCode::invalid_argument, std::string("missing argument `") + name + "`", call.ctx.request_id());
  }
  if (!v->is_int64()) throw Error(ErrorCode::invalid_argument, std::string("`") + name + "` must be an integer",
                                  call.ctx.request_id());
  return v->as_int64();
}

std::string Text(const ops::Call& call, const char* name) {
  const json::object* args = call.args.if_object();
  const json::value* v = args ? args->if_contains(name) : nullptr;
  if (!v || !v->is_string())
    throw Error(ErrorCode::invalid_argument, std::string("`") + name + "` must be a string", call.ctx.request_id());
  return std::string(v->as_string());
}

std::string Key(const ops::Call& call, const char* operation) {
  if (!call.idempotency_key)
    throw Error(ErrorCode::invalid_argument, std::string(operation) + " needs an idempotency key",
                call.ctx.request_id());
  return *call.idempotency_key;
}

}  // namespace

ops::Registry warehouse_registry(Inventory& inventory, Shipping* shipping) {
  ops::Registry registry;
  const InventoryOptions& inv = inventory.options();
  Inventory* in = &inventory;
  auto read = [&](const char* name, const char* description, std::string_view schema) -> ops::Registry::OperationBuilder {
    auto b = registry.bind(name);
    b.deadline(inv.own_timeout).describe(description).tag("inventory").request_schema(Schema(schema));
    return b;
  };
  read("warehouse.warehouses", "Every warehouse, with its city.", R"({"type":"object"})")
      .handler([in](const ops::Call& call) -> asio::awaitable<json::value> {
        co_return json::parse(co_await in->warehouses(call.ctx));
      });
  read("warehouse.bins", "The first bins of a warehouse, with their stock.",
       R"({"type":"object","properties":{"warehouse":{"type":"integer"},"first":{"type":"integer","default":10}},"required":["warehouse"]})")
      .handler([in](const ops::Call& call) -> asio::awaitable<json::value> {
        co_return json::parse(co_await in->bins(call.ctx, Int(call, "warehouse"), Int(call, "first", 10)));
      });
  read("warehouse.bin", "One bin's stock and reservations.",
       R"({"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]})")
      .handler([in](const ops::Call& call) -> asio::awaitable<json::value> {
        co_return json::parse(co_await in->bin(call.ctx, Int(call, "id")));
      });
  read("warehouse.valuation", "The stock valuation of a warehouse: the slow statement, stopped at the deadline.",
       R"({"type":"object","properties":{"warehouse":{"type":"integer"}},"required":["warehouse"]})")
      .handler([in](const ops::Call& call) -> asio::awaitable<json::value> {
        co_return json::parse(co_await in->valuation(call.ctx, Int(call, "warehouse")));
      });
  read("warehouse.stock_changes", "Reservations since a change id, oldest first.",
       R"({"type":"object","properties":{"after":{"type":"integer","default":0}}})")
      .handler([in](const ops::Call& call) -> asio::awaitable<json::value> {
        co_return json::parse(co_await in->stock_changes(call.ctx, Int(call, "after", 0)));
      });
  read("warehouse.reserve", "Reserves stock in a bin. The same idempotency key again returns the first answer.",
       R"({"type":"object","properties":{"binId":{"type":"integer"},"qty":{"type":"integer","minimum":1}},"required":["binId","qty"]})")
      .takes_idempotency_key()
      .handler([in](const ops::Call& call) -> asio::awaitable<json::value> {
        std::string key = Key(call, "warehouse.reserve");
        co_return json::parse(co_await in->reserve(call.ctx, std::move(key), Int(call, "binId"), Int(call, "qty")));
      });
  registry.bind("warehouse.order")
      .deadline(inv.order_budget)
      .tag("inventory")
      .describe("Places an order: reserves the stock, then books its shipment with the shipping service; a refused "
                "shipment releases the reservation. The idempotency key is the order's id.")
      .request_schema(Schema(
          R"({"type":"object","properties":{"binId":{"type":"integer"},"qty":{"type":"integer","minimum":1},"destination":{"type":"string","minLength":1,"maxLength":200}},"required":["binId","qty","destination"]})"))
      .takes_idempotency_key()
      .handler([in](const ops::Call& call) -> asio::awaitable<json::value> {
        std::string key = Key(call, "warehouse.order");
        std::string destination = Text(call, "destination");
        co_return json::parse(
            co_await in->order(call.ctx, std::move(key), Int(call, "binId"), Int(call, "qty"), std::move(destination)));
      });
  if (shipping) {
    Shipping* sh = shipping;
    const ShippingOptions& so = shipping->options();
    registry.bind("shipping.book")
        .deadline(so.route_budget)
        .tag("shipping")
        .describe("Books a shipment for an order (at most " + std::to_string(so.max_items) +
                  " items). The same idempotency key again returns the first booking.")
        .request_schema(Schema(
            R"({"type":"object","properties":{"orderId":{"type":"string"},"binId":{"type":"integer"},"qty":{"type":"integer","minimum":1},"destination":{"type":"string"}},"required":["orderId","binId","qty","destination"]})"))
        .takes_idempotency_key()
        .handler([sh](const ops::Call& call) -> asio::awaitable<json::value> {
          std::string key = Key(call, "shipping.book");
          Shipment s{Text(call, "orderId"), Int(call, "binId"), Int(call, "qty"), Text(call, "destination")};
          co_return json::parse(co_await sh->book(call.ctx, std::move(key), std::move(s)));
        });
    registry.bind("shipping.find")
        .deadline(so.route_budget)
        .tag("shipping")
        .describe("An order's shipment.")
        .request_schema(Schema(R"({"type":"object","properties":{"order":{"type":"string"}},"required":["order"]})"))
        .handler([sh](const ops::Call& call) -> asio::awaitable<json::value> {
          const std::string order = Text(call, "order");
          std::string found = co_await sh->find(call.ctx, order);
          if (found.empty()) throw Error(ErrorCode::not_found, "no shipment for order " + order, call.ctx.request_id());
          co_return json::parse(found);
        });
  }
  registry.freeze();
  return registry;
}

}  // namespace cutoff::warehouse
