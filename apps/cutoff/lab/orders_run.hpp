// The orders scenario in one mode: users place orders with the inventory's order saga (reserve
// stock there, then book the shipment with the shipping service), some with a tight budget and
// some hanging up half-way; then the lab settles what was left ambiguous and checks what the
// services did against what the users were told.
//
//   OrdersRun run(options, OrdersSpec(options), wh::Mode::cutoff, db, postgres, &steps);
//   boost::json::object figures = run.Run();   // the common figures, and sagas, resumed,
//                                              // orphan_shipments, false_failures, ...
//
// Users (the same in every mode, by order number): patient ones wait the user's patience;
// hurried ones a quarter of it; some hang up at a moment drawn between 10 ms and 150 ms (scaled
// 0.2 s to 3 s); one in eight orders more items than a shipment holds, which shipping refuses.
// Under `cutoff` each user sends its patience (less a reply margin) as the budget. A booking
// takes 20 ms to 160 ms (scaled 0.4 s to 3.2 s). The shipping service runs in the same mode as
// the inventory: under `timeouts` it answers 504 after its own timeout (100 ms, 2 s scaled) and
// books anyway. docs/lab.md ("orders") has the reasoning and the figures.
#ifndef CUTOFF_APPS_CUTOFF_LAB_ORDERS_RUN_HPP_
#define CUTOFF_APPS_CUTOFF_LAB_ORDERS_RUN_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lab/mode_run.hpp"

namespace cutoff::lab::internal {

// The orders scenario's name, title and rate.
ScenarioSpec OrdersSpec(const LabOptions& options);

class OrdersRun final : public ModeRun {
 public:
  OrdersRun(const LabOptions& lab, const ScenarioSpec& spec, wh::Mode mode, std::string db, bool postgres,
            std::int64_t* valuation_steps);
  ~OrdersRun() override;

 private:
  enum class Kind { patient, hurried, hangs_up, too_big };
  struct Placed {
    std::string id;  // the order id: its Idempotency-Key, its saga's id and its request id
    Kind kind = Kind::patient;
    std::int64_t bin = 0, qty = 0;
    std::string told;  // what the user was told: "completed", an error code, "client_gave_up", "hung_up"
  };
  struct ShippingHost;

  void Configure(wh::InventoryOptions& options) override;
  void Started(boost::asio::io_context& inventory_io) override;
  boost::asio::awaitable<void> Load() override;
  void Settle(boost::asio::io_context& inventory_io) override;
  void AddFigures(json::object& figures) override;

  boost::asio::awaitable<void> PlaceOrder(int n);
  // Runs `body` on `io`'s thread and waits for it.
  template <class Body>
  static auto On(boost::asio::io_context& io, Body body);

  std::unique_ptr<ShippingHost> shipping_;
  std::unique_ptr<http::Client> users_client_;
  std::string stamp_;               // unique to this run: order ids never repeat across runs
  std::vector<std::int64_t> bins_;  // the bins orders take stock from
  std::vector<Placed> placed_;
  json::object settled_;  // the figures Settle() found
};

}  // namespace cutoff::lab::internal

#endif  // CUTOFF_APPS_CUTOFF_LAB_ORDERS_RUN_HPP_
