#include "warehouse/inventory_client.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cutoff/core/error.hpp"
#include "cutoff/grpc/client.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/http/error_document.hpp"
#include "warehouse/inventory.pb.h"
#include "warehouse/inventory_grpc.hpp"

namespace cutoff::warehouse {

namespace asio = boost::asio;
namespace json = boost::json;
namespace pb = cutoff::warehouse::v1;

std::optional<InventoryTransport> parse_inventory_transport(std::string_view name) {
  if (name == "http") return InventoryTransport::http;
  if (name == "grpc") return InventoryTransport::grpc;
  return std::nullopt;
}

std::string_view to_string(InventoryTransport transport) {
  return transport == InventoryTransport::grpc ? "grpc" : "http";
}

namespace {

// ---- Over HTTP: the inventory's routes ------------------------------------------------------

// The inventory's answer as JSON; its error document as a cutoff::Error (404: null).
json::value Decode(const http::Response& r, const std::string& request_id) {
  if (r.status == 404) return nullptr;
  json::error_code ec;
  json::value body = json::parse(r.body, ec);
  if (r.status == 200 && !ec) return body;
  ErrorCode code = ErrorCode::unavailable;
  std::string message = "the inventory service answered " + std::to_string(r.status);
  if (auto remote = http::parse_error_document(r.body)) {
    code = remote->code.value_or(code);
    if (!remote->message.empty()) message = std::move(remote->message);
  }
  throw Error(code, message, request_id);
}

class HttpInventoryClient final : public InventoryClient {
 public:
  HttpInventoryClient(asio::any_io_executor executor, const InventoryClientOptions& o) : base_(o.url) {
    http::ClientOptions client;
    client.reply_margin = o.reply_margin;
    if (const auto url = http::parse_url(o.url))
      client.upstreams.push_back(
          {.authority = url->host + ":" + std::to_string(url->port), .name = "inventory", .policy = o.policy});
    else
      throw std::invalid_argument("the inventory's URL is not an http:// or https:// URL: " + o.url);
    client.policy = o.policy;
    client.max_idle_per_host = 256;
    client.metrics = o.metrics;
    client.tls = o.http_tls;
    client_ = std::make_unique<http::Client>(std::move(executor), client);
  }

  asio::awaitable<json::value> warehouses(const Context& ctx) override { co_return co_await Get(ctx, "/warehouses"); }
  asio::awaitable<json::value> bins(const Context& ctx, std::int64_t warehouse, std::int64_t first) override {
    co_return co_await Get(ctx, "/bins?warehouse=" + std::to_string(warehouse) + "&first=" + std::to_string(first));
  }
  asio::awaitable<json::value> bin(const Context& ctx, std::int64_t id) override {
    co_return co_await Get(ctx, "/bin?id=" + std::to_string(id));
  }
  asio::awaitable<json::value> valuation(const Context& ctx, std::int64_t warehouse) override {
    co_return co_await Get(ctx, "/valuation?warehouse=" + std::to_string(warehouse));
  }
  asio::awaitable<json::value> reserve(const Context& ctx, std::int64_t bin_id, std::int64_t qty,
                                       std::string key) override {
    http::ClientRequest req;
    req.method = "POST";
    req.url = base_ + "/reservations";
    req.body = json::serialize(json::object{{"binId", bin_id}, {"qty", qty}});
    req.headers.set("Content-Type", "application/json");
    req.headers.set("Idempotency-Key", key);
    req.idempotent = true;  // keyed: a retry cannot reserve twice
    http::Response r = co_await client_->request(ctx, std::move(req));
    co_return Decode(r, ctx.request_id());
  }
  asio::awaitable<json::value> stock_changes(const Context& ctx, std::int64_t after) override {
    co_return co_await Get(ctx, "/stock-changes?after=" + std::to_string(after));
  }

 private:
  asio::awaitable<json::value> Get(const Context& ctx, std::string path) {
    http::Response r = co_await client_->get(ctx, base_ + path);
    co_return Decode(r, ctx.request_id());
  }

  std::string base_;
  std::unique_ptr<http::Client> client_;
};

// ---- Over gRPC: inventory.proto -------------------------------------------------------------

json::object BinJson(const pb::Bin& b) {
  return {{"id", b.id()},   {"warehouseId", b.warehouse_id()}, {"code", b.code()},          {"sku", b.sku()},
          {"qty", b.qty()}, {"reserved", b.reserved()},         {"available", b.available()}};
}

template <typename Message>
Message ParseReply(const std::string& bytes, const Context& ctx) {
  Message m;
  if (!m.ParseFromString(bytes))
    throw Error(ErrorCode::internal, "the inventory's answer is not a " + m.GetTypeName() + " message",
                ctx.request_id());
  return m;
}

class GrpcInventoryClient final : public InventoryClient {
 public:
  GrpcInventoryClient(asio::any_io_executor executor, const InventoryClientOptions& o) {
    if (o.grpc_target.empty()) throw std::invalid_argument("the inventory's gRPC target (host:port) is empty");
    grpc::ClientOptions client;
    client.tls = o.grpc_tls;
    client.policy = o.policy;
    client.metrics = o.metrics;
    client.name = "inventory";
    client.reply_margin = o.reply_margin;
    client_ = std::make_unique<grpc::Client>(std::move(executor), o.grpc_target, client);
  }

  asio::awaitable<json::value> warehouses(const Context& ctx) override {
    const pb::ListWarehousesRequest req;
    const auto list = ParseReply<pb::WarehouseList>(co_await Read(ctx, "ListWarehouses", req), ctx);
    json::array out;
    for (const pb::Warehouse& w : list.warehouses())
      out.push_back(json::object{{"id", w.id()}, {"name", w.name()}, {"city", w.city()}});
    co_return out;
  }
  asio::awaitable<json::value> bins(const Context& ctx, std::int64_t warehouse, std::int64_t first) override {
    pb::ListBinsRequest req;
    req.set_warehouse_id(warehouse);
    req.set_first(first);
    const auto list = ParseReply<pb::BinList>(co_await Read(ctx, "ListBins", req), ctx);
    json::array out;
    for (const pb::Bin& b : list.bins()) out.push_back(BinJson(b));
    co_return out;
  }
  asio::awaitable<json::value> bin(const Context& ctx, std::int64_t id) override {
    pb::GetBinRequest req;
    req.set_id(id);
    std::string reply;
    try {
      reply = co_await Read(ctx, "GetBin", req);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::not_found) throw;
      co_return nullptr;
    }
    co_return BinJson(ParseReply<pb::Bin>(reply, ctx));
  }
  asio::awaitable<json::value> valuation(const Context& ctx, std::int64_t warehouse) override {
    pb::GetValuationRequest req;
    req.set_warehouse_id(warehouse);
    const auto v = ParseReply<pb::Valuation>(co_await Read(ctx, "GetValuation", req), ctx);
    co_return json::object{{"warehouse", v.warehouse_id()}, {"value", v.value()}, {"steps", v.steps()}};
  }
  asio::awaitable<json::value> reserve(const Context& ctx, std::int64_t bin_id, std::int64_t qty,
                                       std::string key) override {
    pb::ReserveRequest req;
    req.set_bin_id(bin_id);
    req.set_qty(qty);
    req.set_idempotency_key(std::move(key));
    grpc::CallOptions call;
    call.idempotent = true;  // keyed: a retry cannot reserve twice
    call.may_write = true;
    std::string method = inventory_grpc_method("Reserve");
    std::string bytes = req.SerializeAsString();
    std::string reply = co_await client_->call(ctx, std::move(method), std::move(bytes), std::move(call));
    const auto r = ParseReply<pb::Reservation>(reply, ctx);
    co_return json::object{
        {"binId", r.bin_id()}, {"qty", r.qty()}, {"reserved", r.reserved()}, {"replayed", r.replayed()}};
  }
  asio::awaitable<json::value> stock_changes(const Context& ctx, std::int64_t after) override {
    pb::ListStockChangesRequest req;
    req.set_after(after);
    const auto list = ParseReply<pb::StockChangeList>(co_await Read(ctx, "ListStockChanges", req), ctx);
    json::array out;
    for (const pb::StockChange& c : list.changes())
      out.push_back(json::object{{"id", c.id()}, {"binId", c.bin_id()}, {"qty", c.qty()}, {"reserved", c.reserved()}});
    co_return out;
  }

 private:
  // A read: retried and hedged as the policy allows, never ambiguous.
  asio::awaitable<std::string> Read(const Context& ctx, std::string_view name,
                                    const google::protobuf::MessageLite& request) {
    grpc::CallOptions call;
    call.idempotent = true;
    call.may_write = false;
    std::string method = inventory_grpc_method(name);
    std::string bytes = request.SerializeAsString();
    co_return co_await client_->call(ctx, std::move(method), std::move(bytes), std::move(call));
  }

  std::unique_ptr<grpc::Client> client_;
};

}  // namespace

std::unique_ptr<InventoryClient> make_inventory_client(asio::any_io_executor executor,
                                                       const InventoryClientOptions& options) {
  if (options.transport == InventoryTransport::grpc)
    return std::make_unique<GrpcInventoryClient>(std::move(executor), options);
  return std::make_unique<HttpInventoryClient>(std::move(executor), options);
}

}  // namespace cutoff::warehouse
