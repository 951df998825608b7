#include "warehouse/inventory_grpc.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <functional>
#include <string>
#include <utility>

#include "cutoff/core/error.hpp"
#include "warehouse/inventory.pb.h"

namespace cutoff::warehouse {

namespace asio = boost::asio;
namespace json = boost::json;
namespace pb = cutoff::warehouse::v1;

namespace {

std::int64_t Int(const json::object& o, std::string_view name) { return o.at(name).to_number<std::int64_t>(); }

std::string Str(const json::object& o, std::string_view name) { return std::string(o.at(name).as_string()); }

void FillBin(const json::object& o, pb::Bin& bin) {
  bin.set_id(Int(o, "id"));
  bin.set_warehouse_id(Int(o, "warehouseId"));
  bin.set_code(Str(o, "code"));
  bin.set_sku(Str(o, "sku"));
  bin.set_qty(Int(o, "qty"));
  bin.set_reserved(Int(o, "reserved"));
  bin.set_available(Int(o, "available"));
}

template <typename Message>
Message Parse(const std::string& bytes, const Context& ctx) {
  Message m;
  if (!m.ParseFromString(bytes))
    throw Error(ErrorCode::invalid_argument, "the request is not a " + m.GetTypeName() + " message",
                ctx.request_id());
  return m;
}

// The JSON the inventory's operations answer, as their messages.
std::string Warehouses(const std::string& body) {
  pb::WarehouseList out;
  const json::value parsed = json::parse(body);
  for (const json::value& v : parsed.as_array()) {
    const json::object& o = v.as_object();
    pb::Warehouse* w = out.add_warehouses();
    w->set_id(Int(o, "id"));
    w->set_name(Str(o, "name"));
    w->set_city(Str(o, "city"));
  }
  return out.SerializeAsString();
}

std::string Bins(const std::string& body) {
  pb::BinList out;
  const json::value parsed = json::parse(body);
  for (const json::value& v : parsed.as_array()) FillBin(v.as_object(), *out.add_bins());
  return out.SerializeAsString();
}

std::string OneBin(const std::string& body) {
  pb::Bin out;
  FillBin(json::parse(body).as_object(), out);
  return out.SerializeAsString();
}

std::string Valuation(const std::string& body) {
  const json::object o = json::parse(body).as_object();
  pb::Valuation out;
  out.set_warehouse_id(Int(o, "warehouse"));
  out.set_value(o.at("value").to_number<double>());
  out.set_steps(Int(o, "steps"));
  return out.SerializeAsString();
}

std::string Reservation(const std::string& body) {
  const json::object o = json::parse(body).as_object();
  pb::Reservation out;
  out.set_bin_id(Int(o, "binId"));
  out.set_qty(Int(o, "qty"));
  out.set_reserved(Int(o, "reserved"));
  out.set_replayed(o.at("replayed").as_bool());
  return out.SerializeAsString();
}

std::string StockChanges(const std::string& body) {
  pb::StockChangeList out;
  const json::value parsed = json::parse(body);
  for (const json::value& v : parsed.as_array()) {
    const json::object& o = v.as_object();
    pb::StockChange* c = out.add_changes();
    c->set_id(Int(o, "id"));
    c->set_bin_id(Int(o, "binId"));
    c->set_qty(Int(o, "qty"));
    c->set_reserved(Int(o, "reserved"));
  }
  return out.SerializeAsString();
}

}  // namespace

grpc::ServerOptions inventory_grpc_options(const Inventory& inventory, observe::Registry* metrics) {
  grpc::ServerOptions o;
  o.metrics = metrics;
  o.budget.max_budget = inventory.options().max_budget;
  // Every request message of the service is a few ids, a quantity and a key of at most 255
  // bytes: anything near this size is not one of them.
  o.limits.max_request_bytes = 16 * 1024;
  return o;
}

void mount_inventory_grpc(Inventory& inventory, grpc::Server& server, observe::Registry* metrics) {
  inventory.prepare_limits(metrics);
  // Under `cutoff` the operation's declared budget tightens the caller's, as on the HTTP
  // routes. The other modes bind only what gRPC itself carries; their work runs detached
  // (Inventory::Serve), so that binding stops nothing.
  grpc::MethodOptions method;
  if (inventory.options().mode == Mode::cutoff) method.budget = inventory.options().own_timeout;
  resilience::ServiceTimeAdmission* admission = inventory.admission();
  using Operation = std::function<asio::awaitable<std::string>(std::string request, const Context& ctx)>;
  // `name` is the HTTP route's: both transports feed and consult one service-time estimate.
  auto unary = [&](std::string_view method_name, const char* name, Operation operation) {
    resilience::ServiceTimeAdmission::Key* key = admission ? admission->key(name) : nullptr;
    server.unary(
        inventory_grpc_method(method_name),
        [admission, key, operation = std::move(operation)](std::string request,
                                                           const Context& ctx) -> asio::awaitable<std::string> {
          if (!admission) co_return co_await operation(std::move(request), ctx);
          resilience::ServiceTimeAdmission::Ticket ticket = admission->admit(ctx, key);
          try {
            std::string reply = co_await operation(std::move(request), ctx);
            ticket.completed();
            co_return reply;
          } catch (...) {
            if (ctx.stop_requested()) ticket.stopped();
            throw;
          }
        },
        method);
  };
  Inventory* inv = &inventory;
  unary("ListWarehouses", "inventory.warehouses",
        [inv](std::string request, const Context& ctx) -> asio::awaitable<std::string> {
          Parse<pb::ListWarehousesRequest>(request, ctx);
          co_return Warehouses(co_await inv->warehouses(ctx));
        });
  unary("ListBins", "inventory.bins", [inv](std::string request, const Context& ctx) -> asio::awaitable<std::string> {
    const auto r = Parse<pb::ListBinsRequest>(request, ctx);
    co_return Bins(co_await inv->bins(ctx, r.warehouse_id(), r.has_first() ? r.first() : 10));
  });
  unary("GetBin", "inventory.bin", [inv](std::string request, const Context& ctx) -> asio::awaitable<std::string> {
    const auto r = Parse<pb::GetBinRequest>(request, ctx);
    co_return OneBin(co_await inv->bin(ctx, r.id()));
  });
  unary("GetValuation", "inventory.valuation",
        [inv](std::string request, const Context& ctx) -> asio::awaitable<std::string> {
          const auto r = Parse<pb::GetValuationRequest>(request, ctx);
          co_return Valuation(co_await inv->valuation(ctx, r.warehouse_id()));
        });
  unary("Reserve", "inventory.reserve", [inv](std::string request, const Context& ctx) -> asio::awaitable<std::string> {
    auto r = Parse<pb::ReserveRequest>(request, ctx);
    std::string key = std::move(*r.mutable_idempotency_key());
    co_return Reservation(co_await inv->reserve(ctx, std::move(key), r.bin_id(), r.qty()));
  });
  unary("ListStockChanges", "inventory.stock_changes",
        [inv](std::string request, const Context& ctx) -> asio::awaitable<std::string> {
          const auto r = Parse<pb::ListStockChangesRequest>(request, ctx);
          co_return StockChanges(co_await inv->stock_changes(ctx, r.after()));
        });
}

}  // namespace cutoff::warehouse
