// The shipping service's gRPC service (shipping.proto, package cutoff.warehouse.v1): the
// booking of its HTTP route over gRPC, on a cutoff::grpc::Server, and the client side the
// order saga uses.
//
//   cutoff::grpc::Server grpc_server(io.get_executor(), cutoff::warehouse::shipping_grpc_options(shipping, &registry));
//   cutoff::warehouse::mount_shipping_grpc(shipping, grpc_server);
//   grpc_server.listen("127.0.0.1", 0);
//
//   // a caller: the same JSON answer as POST /shipments
//   std::string shipment = co_await cutoff::warehouse::book_over_grpc(client, ctx, key, order);
//
// A call runs under its gRPC deadline (and a deadline-budget-ms metadata entry), tightened by
// the service's route budget, inside the booking's transaction; a cancelled call rolls the
// booking back. A request that does not parse as a BookRequest fails INVALID_ARGUMENT.
#ifndef CUTOFF_APPS_WAREHOUSE_SHIPPING_GRPC_HPP_
#define CUTOFF_APPS_WAREHOUSE_SHIPPING_GRPC_HPP_

#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>

#include "cutoff/grpc/client.hpp"
#include "cutoff/grpc/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "warehouse/shipping.hpp"

namespace cutoff::warehouse {

inline constexpr std::string_view kShippingGrpcBook = "/cutoff.warehouse.v1.Shipping/Book";

grpc::ServerOptions shipping_grpc_options(const Shipping& shipping, observe::Registry* metrics);
// Registers Book on `server` (before it listens).
void mount_shipping_grpc(Shipping& shipping, grpc::Server& server);

// Books `shipment` under `key` through `client`; the answer as POST /shipments' JSON. Throws
// cutoff::Error (commit_ambiguous for a call that left and was not answered).
boost::asio::awaitable<std::string> book_over_grpc(grpc::Client& client, const Context& ctx, std::string key,
                                                   Shipment shipment);

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_SHIPPING_GRPC_HPP_
