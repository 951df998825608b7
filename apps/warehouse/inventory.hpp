// The inventory service: the reference HTTP service that owns the warehouse database.
//
//   cutoff::warehouse::InventoryOptions opts;
//   opts.db_url = "sqlite:warehouse.db";       // or postgresql://...
//   cutoff::warehouse::Inventory inventory(opts);
//   co_await inventory.start(ctx);             // opens the pool, generates data, calibrates
//   http::Server server(io.get_executor(), inventory.server_options(&registry));
//   inventory.mount(server);
//   server.listen("127.0.0.1", 0);
//
// Routes (JSON):
//   GET  /warehouses                        every warehouse
//   GET  /bins?warehouse=ID&first=N         the first N bins of a warehouse
//   GET  /bin?id=ID                         one bin's stock (fast)
//   GET  /valuation?warehouse=ID            the stock valuation (the slow statement)
//   POST /reservations {"binId":..,"qty":..} with Idempotency-Key: reserves stock in an effect
//                                           region; a repeated key returns the first answer.
//                                           The header is required: missing, repeated or invalid
//                                           (effects::check_idempotency_key: empty, over 255
//                                           bytes, control characters) is 400 invalid_argument
//   GET  /stock-changes?after=ID            reservations since ID (from the outbox), oldest first
//   POST /orders {"binId":..,"qty":..,"destination":".."} with Idempotency-Key (the order id):
//                                           runs the order saga (order_saga.hpp): reserve here,
//                                           then book the shipment at `shipping_url`; a repeated
//                                           key returns the saga's final outcome. 200 with
//                                           {"orderId","state":"completed","reservation",
//                                           "shipment"}; a refused shipment is 400 with the
//                                           reservation released; an unanswered booking is
//                                           commit_ambiguous ("step_ambiguous", nothing undone).
//                                           503 unavailable without a shipping service
//   GET  /orders?id=ID                      the order saga's journal (effects/saga_journal.hpp)
//
// How it bounds its work depends on the mode (mode.hpp):
//   cutoff    each request runs under the budget it was sent (and the route's), down to the
//             statement, which the database stops at the deadline;
//   timeouts  the service has a timeout of its own, like a request-timeout middleware: it
//             answers 504 when the timeout fires but leaves the work running, and that work
//             keeps its pooled connection until the statement ends; checking a connection out
//             of the pool has the same timeout;
//   none      nothing is bounded: every request runs to the end, however long it waits.
// Under cutoff a request whose budget is below its route's recent service time is refused
// with 504 deadline_exceeded before it takes a connection (`admission`, on by default;
// resilience/service_time_admission.hpp), so doomed work never holds the pool; and valuations,
// the heavy statement, run under an adaptive concurrency limit (`valuation_limit`, on by
// default; resilience/adaptive_limit.hpp) that lowers how many run at once when they slow
// down or are cut at their deadlines, leaving the other connections to the cheap routes.
#ifndef CUTOFF_APPS_WAREHOUSE_INVENTORY_HPP_
#define CUTOFF_APPS_WAREHOUSE_INVENTORY_HPP_

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cutoff/core/context.hpp"
#include "cutoff/effects/effects.hpp"
#include "cutoff/effects/saga.hpp"
#include "cutoff/grpc/client.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/resilience/adaptive_limit.hpp"
#include "cutoff/resilience/metrics.hpp"
#include "cutoff/resilience/service_time_admission.hpp"
#include "cutoff/sql/pool.hpp"
#include "warehouse/mode.hpp"
#include "warehouse/order_saga.hpp"
#include "warehouse/warehouse_db.hpp"

namespace cutoff::warehouse {

struct InventoryOptions {
  std::string db_url = "sqlite:warehouse.db";
  Mode mode = Mode::cutoff;
  std::size_t pool_size = 4;
  WarehouseDataOptions data;
  // How long the valuation statement takes (calibrated at start), and the simulation steps
  // that make it so (0: calibrate).
  std::chrono::milliseconds valuation_time{800};
  std::int64_t valuation_steps = 0;
  // `timeouts` mode: the service's own timeout for a request.
  std::chrono::milliseconds own_timeout{10'000};
  // `cutoff` mode: the most budget a caller is granted.
  std::chrono::milliseconds max_budget{30'000};
  std::chrono::milliseconds effect_timeout{2'000};
  // How long finished idempotency records and finished sagas (completed or compensated) are
  // kept; start_sweepers() forgets older ones. Ambiguous and unfinished sagas are never
  // forgotten.
  std::chrono::milliseconds retention{std::chrono::hours(24)};
  // The shipping service the order saga books with ("http://host:port"); empty: no orders.
  std::string shipping_url;
  // How long that service keeps idempotency keys (its ShippingOptions::retention): an order
  // left ambiguous at its booking is repeated by `resume` only within it.
  std::chrono::milliseconds shipping_retention{std::chrono::hours(24)};
  // POST /orders' declared budget (the whole saga's, tighten-only against the caller's).
  std::chrono::milliseconds order_budget{3'000};
  // Taken off the budget sent to the shipping service (http::ClientOptions::reply_margin): its
  // deadline fires first, so a booking it stopped comes back as a definite deadline_exceeded
  // (the reservation is released) instead of an unanswered, ambiguous call.
  std::chrono::milliseconds shipping_reply_margin{20};
  // `cutoff` mode: refuse doomed requests per route (see the top of this file); none: off.
  // Its metrics go to the registry mount() is given.
  std::optional<resilience::ServiceTimeAdmissionOptions> admission = resilience::ServiceTimeAdmissionOptions{};
  // `cutoff` mode: the pool refuses a caller whose budget cannot cover its wait for a
  // connection and a typical hold (sql::PoolOptions::refuse_doomed_waits). Off: with newest
  // first below, a new caller is served next rather than behind the queue the estimate
  // assumes, and in the lab's overload scenario the two together kept less goodput than
  // newest first alone (docs/lab.md).
  bool refuse_doomed_waits = false;
  // `cutoff` mode: once the longest caller has waited this long for a connection, the newest
  // is served first (sql::PoolOptions::newest_first_after); Duration::max(): FIFO throughout.
  Duration pool_newest_first_after = std::chrono::milliseconds(100);
  // `cutoff` mode: valuations run under an adaptive concurrency limit (see the top of this
  // file); none: off. `max_limit` is capped at `pool_size` (and `min_limit` with it),
  // `newest_first_after` is `pool_newest_first_after` unless set. The statements share the
  // machine's cores with everything else: past a few at once each one only gets slower, and
  // under overload every one overruns its callers' budgets. At least two run at once: with one,
  // the database idles between a run's end and the next one's start (the result's way back,
  // the permit handed on, the next statement's way there), and on two cores it finished half
  // as many (docs/lab.md). Its gauge goes to the registry mount() is given.
  std::optional<resilience::AdaptiveLimitOptions> valuation_limit = resilience::AdaptiveLimitOptions{.min_limit = 2};
  // Every statement's end as the database saw it (SQLite; see sql::DriverOptions).
  std::function<void(const sql::StatementEvent&)> statement_observer;
  // Where the SQL driver records statements stopped and orphaned work (sql::DriverOptions),
  // and the order saga its outcomes and compensations (effects::SagaOptions::registry);
  // null: nowhere. Must outlive the Inventory.
  observe::Registry* metrics = nullptr;
};

struct InventoryStats {
  std::size_t requests_in_flight = 0;      // route handlers running now
  std::size_t max_requests_in_flight = 0;  // the most at once since start
};

class Inventory {
 public:
  explicit Inventory(InventoryOptions options);
  ~Inventory();

  // Opens the pool, creates and fills the tables if needed, installs the effect tables and
  // calibrates the valuation.
  boost::asio::awaitable<void> start(const Context& ctx);

  // Server options for this service's mode (deadlines bound or not), with `metrics`.
  http::ServerOptions server_options(observe::Registry* metrics) const;
  // The routes; with `metrics`, the pool's gauges too. The gRPC service (inventory.proto) is
  // mounted by mount_inventory_grpc() (inventory_grpc.hpp); both may serve one Inventory.
  void mount(http::Server& server, observe::Registry* metrics = nullptr);

  // The operations behind every transport, each run as the mode says (see the top of this file)
  // for a caller whose context is `request`, answering the JSON the HTTP routes serve. They
  // throw cutoff::Error: not_found for an unknown bin, invalid_argument for a bad reservation.
  boost::asio::awaitable<std::string> warehouses(const Context& request);
  boost::asio::awaitable<std::string> bins(const Context& request, std::int64_t warehouse, std::int64_t first);
  boost::asio::awaitable<std::string> bin(const Context& request, std::int64_t id);
  boost::asio::awaitable<std::string> valuation(const Context& request, std::int64_t warehouse);
  // {"binId":..,"qty":..,"reserved":..,"replayed":..}; `key` is checked first
  // (effects::check_idempotency_key), then `qty` (positive).
  boost::asio::awaitable<std::string> reserve(const Context& request, std::string key, std::int64_t bin_id,
                                              std::int64_t qty);
  // [{"id":..,"binId":..,"qty":..,"reserved":..}, ...]
  boost::asio::awaitable<std::string> stock_changes(const Context& request, std::int64_t after);
  // Runs the order saga under `request` with `key` as the order id; the answer of POST /orders.
  // Throws the saga's error (SagaOutcome::to_error) when it did not complete.
  boost::asio::awaitable<std::string> order(const Context& request, std::string key, std::int64_t bin_id,
                                            std::int64_t qty, std::string destination);

  // The doomed-request check and the valuations' limit (see the top of this file), made once for
  // the service's mode and shared by its transports; `metrics` for their series (the first
  // caller's).
  void prepare_limits(observe::Registry* metrics);

  // Stops every request's work (with `shutdown`), whatever the mode: under `none` and
  // `timeouts` nothing else can (their requests are not bound to the server's stop).
  void stop_all() noexcept { stop_.request_stop(StopReason::shutdown); }

  // Forgets what `retention` no longer keeps (effects::Effects::sweep and
  // effects::SagaJournal::sweep) now and every `interval`, on `executor`, until
  // stop_sweepers() or stop_all(); without them both tables grow with every keyed request and
  // order. Call after start(), once. The executor must run the sweepers to their end after
  // the stop, before the Inventory is destroyed. Throws std::invalid_argument for an interval
  // that is not positive, std::logic_error when called twice.
  void start_sweepers(const boost::asio::any_io_executor& executor, std::chrono::milliseconds interval);
  void stop_sweepers() noexcept { sweep_stop_.request_stop(StopReason::shutdown); }

  sql::Pool& pool() noexcept { return *pool_; }
  effects::Effects& effects() noexcept { return *effects_; }
  // Takes orders, booking them with the shipping service at `shipping_url` through a client on
  // `executor`: what start() does when InventoryOptions::shipping_url is set, for a shipping
  // service whose address is known only later. Call after start() and before mount().
  // `tls`: the authorities an https:// shipping service's certificate must come from.
  void use_shipping(const boost::asio::any_io_executor& executor, std::string shipping_url,
                    http::TlsClientOptions tls = {});
  // The same, booking through the shipping service's gRPC service at `target` ("host:port").
  void use_shipping_grpc(const boost::asio::any_io_executor& executor, std::string target,
                         std::optional<grpc::TlsClientOptions> tls = std::nullopt);
  // The order saga's engine; null until start() (and without a shipping_url).
  effects::Sagas* sagas() noexcept { return sagas_.get(); }
  std::int64_t valuation_steps() const noexcept { return options_.valuation_steps; }
  const InventoryOptions& options() const noexcept { return options_; }
  InventoryStats stats() const noexcept;
  // The doomed-request check of the routes (cutoff mode with `admission` set); null otherwise.
  const resilience::ServiceTimeAdmission* admission() const noexcept { return admission_.get(); }
  resilience::ServiceTimeAdmission* admission() noexcept { return admission_.get(); }

 private:
  using Work = std::function<boost::asio::awaitable<std::string>(const Context&)>;
  // Runs an operation's work as the mode says (see the top of this file). Under `none` and
  // `timeouts` the work runs detached from the caller's context, so that a transport which
  // cancels its handler when the caller goes (gRPC's) leaves the work running as these
  // baselines do.
  boost::asio::awaitable<std::string> Serve(const Context& request, const Work& work);
  // The order saga over `order`'s client, with this service's order budget and metrics.
  void DefineOrderSaga(OrderSagaOptions order);
  // A pooled connection for `ctx`'s work: under `timeouts`, with the service's own timeout.
  boost::asio::awaitable<sql::Pool::Lease> Acquire(const Context& ctx);

  // Counts one request in flight for its lifetime.
  class InFlight {
   public:
    explicit InFlight(Inventory& owner) noexcept;
    ~InFlight();
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

   private:
    Inventory& owner_;
  };

  InventoryOptions options_;
  std::atomic<std::size_t> in_flight_{0};
  std::atomic<std::size_t> max_in_flight_{0};
  Context base_;  // unbound, but stopped by stop_all()
  CancelSource stop_;
  Context sweep_ctx_;  // base_'s child: stop_all() stops the sweepers too
  CancelSource sweep_stop_;
  std::unique_ptr<sql::Pool> pool_;
  std::unique_ptr<effects::SagaJournal> journal_;  // the sweepers'
  std::unique_ptr<resilience::ResilienceMetrics> resilience_metrics_;
  std::unique_ptr<resilience::ServiceTimeAdmission> admission_;
  std::unique_ptr<resilience::AdaptiveLimit> valuation_limit_;
  std::unique_ptr<effects::Effects> effects_;
  std::unique_ptr<http::Client> shipping_client_;
  std::unique_ptr<grpc::Client> shipping_grpc_;
  std::unique_ptr<effects::Sagas> sagas_;
};

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_INVENTORY_HPP_
