// The warehouse services' operations as one registry (ops/registry.hpp): what `cutoff catalog
// --services warehouse`, the OpenAPI document and the MCP tool list show, with the budgets the
// services' own routes bind (they read the same options), and what `cutoff demo serve` serves
// at /ops/{name}, /catalog.json, /openapi.json and /mcp on the inventory's port.
//
//   cutoff::ops::Registry registry = cutoff::warehouse::warehouse_registry(inventory, &shipping);
//   cutoff::ops::mount_operations(server, registry, {.title = "cutoff warehouse"});
//
// Operations (arguments as JSON objects; results are the routes' answers):
//   warehouse.warehouses                             every warehouse
//   warehouse.bins {warehouse, first = 10}           the first bins of a warehouse
//   warehouse.bin {id}                               one bin's stock
//   warehouse.valuation {warehouse}                  the stock valuation (the slow statement)
//   warehouse.stock_changes {after = 0}              reservations since a change id
//   warehouse.reserve {binId, qty}                   reserves stock; takes an idempotency key
//   warehouse.order {binId, qty, destination}        the order saga (order_saga.hpp); the
//                                                    idempotency key is the order's id
//   shipping.book {orderId, binId, qty, destination} books a shipment; takes a key
//   shipping.find {order}                            an order's shipment
// The shipping operations are there when `shipping` is given.
#ifndef CUTOFF_APPS_WAREHOUSE_OPERATIONS_HPP_
#define CUTOFF_APPS_WAREHOUSE_OPERATIONS_HPP_

#include "cutoff/ops/registry.hpp"
#include "warehouse/inventory.hpp"
#include "warehouse/shipping.hpp"

namespace cutoff::warehouse {

// A frozen registry; `inventory` (and `shipping`) must outlive it. Listing it needs neither to
// be started; invoking an operation does.
ops::Registry warehouse_registry(Inventory& inventory, Shipping* shipping = nullptr);

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_OPERATIONS_HPP_
