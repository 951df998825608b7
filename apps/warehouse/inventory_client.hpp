// How the gateway reaches the inventory: one call per operation, over the inventory's HTTP
// routes or its gRPC service (inventory.proto), the answer as the JSON the HTTP routes serve.
//
//   std::unique_ptr<InventoryClient> inventory = make_inventory_client(executor, options);
//   boost::json::value bins = co_await inventory->bins(ctx, 3, 10);
//
// Both carry the caller's budget and stop with it (http/client.hpp, grpc/client.hpp), run
// every call through the gateway's policy for the inventory, and report failures as
// cutoff::Error with the inventory's own code. Reads are idempotent and never ambiguous; a
// reservation is idempotent through its key and may be reported commit_ambiguous.
#ifndef CUTOFF_APPS_WAREHOUSE_INVENTORY_CLIENT_HPP_
#define CUTOFF_APPS_WAREHOUSE_INVENTORY_CLIENT_HPP_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cutoff/core/context.hpp"
#include "cutoff/grpc/tls.hpp"
#include "cutoff/http/tls.hpp"
#include "cutoff/resilience/policy.hpp"

namespace cutoff::observe {
class Registry;
}

namespace cutoff::warehouse {

enum class InventoryTransport { http, grpc };

// "http" or "grpc"; nullopt otherwise.
std::optional<InventoryTransport> parse_inventory_transport(std::string_view name);
std::string_view to_string(InventoryTransport transport);

struct InventoryClientOptions {
  InventoryTransport transport = InventoryTransport::http;
  std::string url;          // http: the inventory's base URL, http:// or https://
  std::string grpc_target;  // grpc: "host:port"
  http::TlsClientOptions http_tls;                // for an https:// url
  std::optional<grpc::TlsClientOptions> grpc_tls;  // set: gRPC over TLS
  resilience::PolicyOptions policy;                // its attempt_timeout must be set
  // Taken off the budget the inventory is sent (never off the caller's own wait): its deadline
  // fires first, so a reservation it stopped before committing comes back as a definite
  // deadline_exceeded instead of an unanswered, ambiguous call.
  std::chrono::milliseconds reply_margin{0};
  observe::Registry* metrics = nullptr;  // the policy's series (name="inventory") and stops
};

class InventoryClient {
 public:
  virtual ~InventoryClient() = default;

  virtual boost::asio::awaitable<boost::json::value> warehouses(const Context& ctx) = 0;
  virtual boost::asio::awaitable<boost::json::value> bins(const Context& ctx, std::int64_t warehouse,
                                                          std::int64_t first) = 0;
  // null: no such bin.
  virtual boost::asio::awaitable<boost::json::value> bin(const Context& ctx, std::int64_t id) = 0;
  // {"warehouse":..,"value":..,"steps":..}
  virtual boost::asio::awaitable<boost::json::value> valuation(const Context& ctx, std::int64_t warehouse) = 0;
  // {"binId":..,"qty":..,"reserved":..,"replayed":..}
  virtual boost::asio::awaitable<boost::json::value> reserve(const Context& ctx, std::int64_t bin_id,
                                                             std::int64_t qty, std::string key) = 0;
  // [{"id":..,"binId":..,"qty":..,"reserved":..}, ...]
  virtual boost::asio::awaitable<boost::json::value> stock_changes(const Context& ctx, std::int64_t after) = 0;
};

// Throws std::invalid_argument for an unusable url or target, or an unreadable TLS file.
std::unique_ptr<InventoryClient> make_inventory_client(boost::asio::any_io_executor executor,
                                                       const InventoryClientOptions& options);

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_INVENTORY_CLIENT_HPP_
