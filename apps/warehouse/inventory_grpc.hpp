// The inventory's gRPC service (inventory.proto, package cutoff.warehouse.v1): the operations
// of its HTTP routes over gRPC, on a cutoff::grpc::Server.
//
//   cutoff::grpc::Server grpc_server(io.get_executor(), cutoff::warehouse::inventory_grpc_options(inventory, &registry));
//   cutoff::warehouse::mount_inventory_grpc(inventory, grpc_server);
//   grpc_server.listen("127.0.0.1", 0);
//
// Under `cutoff` each call runs under its gRPC deadline (and a deadline-budget-ms metadata
// entry, whichever is sooner), tightened by the service's per-operation budget, down to the
// statement; a cancelled call stops its statement; a call whose budget is below the
// operation's recent service time is refused with DEADLINE_EXCEEDED before it takes a
// connection (the same admission as the HTTP routes, keyed by the same operation names). Under
// `timeouts` and `none` the work runs detached from the call as the HTTP baselines' does: the
// call ends at its deadline, the statement runs on.
//
// Methods are "/cutoff.warehouse.v1.Inventory/<Name>" (inventory_grpc_method()). A request that
// does not parse as its message fails INVALID_ARGUMENT.
#ifndef CUTOFF_APPS_WAREHOUSE_INVENTORY_GRPC_HPP_
#define CUTOFF_APPS_WAREHOUSE_INVENTORY_GRPC_HPP_

#include <string>
#include <string_view>

#include "cutoff/grpc/server.hpp"
#include "warehouse/inventory.hpp"

namespace cutoff::warehouse {

inline constexpr std::string_view kInventoryGrpcService = "cutoff.warehouse.v1.Inventory";

// gRPC's path of one of the service's methods: "/cutoff.warehouse.v1.Inventory/" + `name`.
inline std::string inventory_grpc_method(std::string_view name) {
  return "/" + std::string(kInventoryGrpcService) + "/" + std::string(name);
}

// Server options for the inventory's mode: the caller's budget at most `max_budget`, and
// `metrics`.
grpc::ServerOptions inventory_grpc_options(const Inventory& inventory, observe::Registry* metrics);

// Registers the service's methods on `server` (before it listens). `metrics` takes the
// admission's and the valuation limit's series unless Inventory::mount made them already
// (the pool's gauges come only with the HTTP routes).
void mount_inventory_grpc(Inventory& inventory, grpc::Server& server, observe::Registry* metrics = nullptr);

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_INVENTORY_GRPC_HPP_
