// The shipping service: the reference HTTP service that books shipments, with a database of
// its own. The inventory's order saga (order_saga.hpp) calls it as its second step.
//
//   cutoff::warehouse::ShippingOptions opts;
//   opts.db_url = "sqlite:shipping.db";
//   cutoff::warehouse::Shipping shipping(opts);
//   co_await shipping.start(ctx);
//   http::Server server(io.get_executor(), shipping.server_options(&registry));
//   shipping.mount(server);
//
// Routes (JSON):
//   POST /shipments {"orderId":"..","binId":..,"qty":..,"destination":".."} with Idempotency-Key:
//        books a shipment in an effect region (a repeated key returns the first answer). A
//        shipment holds at most `max_items` (more: 400 invalid_argument, "refused"), the
//        destination is 1 to 200 bytes, and the order id follows the idempotency key rules.
//   GET  /shipments?order=ID   the order's shipment (404 when there is none)
//
// Booking takes `booking_time` (the carrier's confirmation, simulated inside the
// transaction), under the request's budget: a caller that stops or runs out of budget first
// leaves no shipment behind.
#ifndef CUTOFF_APPS_WAREHOUSE_SHIPPING_HPP_
#define CUTOFF_APPS_WAREHOUSE_SHIPPING_HPP_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "cutoff/core/context.hpp"
#include "cutoff/effects/effects.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/sql/pool.hpp"

namespace cutoff::warehouse {

struct ShippingOptions {
  std::string db_url = "sqlite:shipping.db";
  std::size_t pool_size = 2;
  std::int64_t max_items = 20;  // per shipment
  std::chrono::milliseconds booking_time{0};
  // POST /shipments' declared budget, and the most budget a caller is granted.
  std::chrono::milliseconds route_budget{2'000};
  std::chrono::milliseconds max_budget{30'000};
  std::chrono::milliseconds effect_timeout{2'000};
};

struct Shipment {
  std::string order_id;
  std::int64_t bin_id = 0;
  std::int64_t qty = 0;
  std::string destination;
};

class Shipping {
 public:
  explicit Shipping(ShippingOptions options);
  ~Shipping();

  // Opens the pool and creates the shipment and effect tables if needed.
  boost::asio::awaitable<void> start(const Context& ctx);
  http::ServerOptions server_options(observe::Registry* metrics) const;
  void mount(http::Server& server);

  // {"orderId":..,"binId":..,"qty":..,"destination":..,"replayed":..}; invalid_argument for a
  // bad key, order id or destination, and for more than max_items ("refused").
  boost::asio::awaitable<std::string> book(const Context& ctx, std::string key, Shipment shipment);
  // The order's shipment as JSON; empty when there is none.
  boost::asio::awaitable<std::string> find(const Context& ctx, const std::string& order_id);

  const ShippingOptions& options() const noexcept { return options_; }

 private:
  ShippingOptions options_;
  std::unique_ptr<sql::Pool> pool_;
  std::unique_ptr<effects::Effects> effects_;
};

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_SHIPPING_HPP_
