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
// Booking first waits for the carrier's confirmation (`booking_time`, or a time drawn evenly
// up to `booking_time_max`), then records the shipment in an effect region, all under the
// request's budget: a caller that stops or runs out of budget before the commit leaves no
// shipment behind. The confirmation is awaited before the region's transaction begins, so
// bookings do not hold the database's write lock (SQLite) while they wait.
//
// `mode` (mode.hpp, mode_serve.hpp) is what the lab varies: under `timeouts` the service has a
// timeout of its own, answers 504 deadline_exceeded when it fires and books the shipment
// anyway; under `none` a booking runs to its end whatever the caller does.
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
#include "warehouse/mode.hpp"

namespace cutoff::warehouse {

struct ShippingOptions {
  std::string db_url = "sqlite:shipping.db";
  std::size_t pool_size = 2;
  std::int64_t max_items = 20;  // per shipment
  std::chrono::milliseconds booking_time{0};
  // Above booking_time: each booking takes a time drawn evenly from [booking_time, this].
  std::chrono::milliseconds booking_time_max{0};
  Mode mode = Mode::cutoff;
  // `timeouts` mode: the service's own timeout for a booking.
  std::chrono::milliseconds own_timeout{2'000};
  // POST /shipments' declared budget, and the most budget a caller is granted.
  std::chrono::milliseconds route_budget{2'000};
  std::chrono::milliseconds max_budget{30'000};
  std::chrono::milliseconds effect_timeout{2'000};
  // How long finished idempotency records are kept; start_sweeper() forgets older ones.
  std::chrono::milliseconds retention{std::chrono::hours(24)};
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
  // Stops every booking's work, whatever the mode (under `none` and `timeouts` it runs on
  // without its caller).
  void stop_all() noexcept { stop_.request_stop(StopReason::shutdown); }

  // Forgets idempotency records `retention` no longer keeps, now and every `interval`, on
  // `executor`, until stop_sweeper() or stop_all(). Call after start(), once; the executor
  // must run the sweeper to its end after the stop, before the Shipping is destroyed. Throws
  // std::invalid_argument for an interval that is not positive, std::logic_error when called
  // twice.
  void start_sweeper(const boost::asio::any_io_executor& executor, std::chrono::milliseconds interval);
  void stop_sweeper() noexcept { sweep_stop_.request_stop(StopReason::shutdown); }

 private:
  std::chrono::milliseconds BookingTime();

  ShippingOptions options_;
  Context base_;  // unbound, but stopped by stop_all()
  CancelSource stop_;
  Context sweep_ctx_;  // base_'s child: stop_all() stops the sweeper too
  CancelSource sweep_stop_;
  bool sweeper_started_ = false;
  std::unique_ptr<sql::Pool> pool_;
  std::unique_ptr<effects::Effects> effects_;
};

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_SHIPPING_HPP_
