// The warehouse's order saga: reserve stock in the inventory's database, then book the
// shipment with the shipping service (shipping.hpp); a refused shipment releases the
// reservation.
//
//   cutoff::effects::Sagas sagas(inventory.effects());
//   sagas.define(cutoff::warehouse::order_saga({.client = &client, .shipping_url = "http://127.0.0.1:8083"}));
//   auto out = co_await sagas.run(ctx, cutoff::warehouse::kOrderSaga,
//                                 cutoff::warehouse::order_input(7, 2, "Lyon"), "order-42");
//
// Steps:
//   reserve  local: bin.reserved += qty where that many are available (a stock.changed message
//            in the same transaction); undone by releasing them again.
//   ship     remote: POST <shipping_url>/shipments with Idempotency-Key "<order id>/ship" (or
//            Shipping/Book over gRPC with that key in the request), so a
//            resumed saga repeats it safely. The shipping service's refusal (400) is a safe
//            failure and the reservation is released; a call left unanswered is ambiguous, and
//            the reservation stays until `cutoff saga resume` settles it.
#ifndef CUTOFF_APPS_WAREHOUSE_ORDER_SAGA_HPP_
#define CUTOFF_APPS_WAREHOUSE_ORDER_SAGA_HPP_

#include <chrono>
#include <cstdint>
#include <string>

#include "cutoff/effects/saga.hpp"
#include "cutoff/grpc/client.hpp"
#include "cutoff/http/client.hpp"

namespace cutoff::warehouse {

inline constexpr const char* kOrderSaga = "warehouse.order";

struct OrderSagaOptions {
  // How the ship step reaches the shipping service: its HTTP route at `shipping_url` through
  // `client`, or its gRPC service (shipping.proto) through `grpc_client` when that is set.
  // Either must outlive the saga's runs.
  http::Client* client = nullptr;
  std::string shipping_url;        // "http://host:port"
  grpc::Client* grpc_client = nullptr;
  std::chrono::milliseconds budget{3'000};
  // How long the shipping service keeps idempotency keys (ShippingOptions::retention): a
  // booking left ambiguous is repeated by `resume` only within it (SagaStepOptions::key_lifetime).
  std::chrono::milliseconds shipping_key_lifetime{std::chrono::hours(24)};
};

effects::SagaDefinition order_saga(OrderSagaOptions options);

// The saga's input: {"binId":..,"qty":..,"destination":".."}.
std::string order_input(std::int64_t bin_id, std::int64_t qty, const std::string& destination);

struct Order {
  std::int64_t bin_id = 0;
  std::int64_t qty = 0;
  std::string destination;
};
// An order as order_input() writes it (POST /orders' body too); invalid_argument otherwise.
Order parse_order(const std::string& input, const std::string& request_id = {});

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_ORDER_SAGA_HPP_
