// The gateway: the reference GraphQL service in front of the inventory service.
//
//   cutoff::warehouse::GatewayOptions opts;
//   opts.inventory_url = "http://127.0.0.1:8081";
//   cutoff::warehouse::Gateway gateway(io.get_executor(), opts);
//   http::Server server(io.get_executor(), gateway.server_options(&registry));
//   gateway.mount(server, &registry);   // /graphql (HTTP and WebSocket), /graphiql
//
// Its schema (schema_sdl()) has warehouses, bins, their stock, an expensive `stockValuation`
// capped with @budget, a `reserveStock` mutation with an idempotency key and a `stockChanged`
// subscription. Every resolver calls the inventory service over HTTP.
//
// Modes (mode.hpp): under `cutoff` each operation runs under min(the caller's budget,
// `operation_budget`), and calls carry what is left; under `timeouts` the gateway's HTTP
// client gives up after `operation_budget` per call and stockValuation has its cap, but
// nothing downstream hears of either; under `none` it waits as long as it takes (no cap).
#ifndef CUTOFF_APPS_WAREHOUSE_GATEWAY_HPP_
#define CUTOFF_APPS_WAREHOUSE_GATEWAY_HPP_

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "cutoff/graphql/schema.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "warehouse/mode.hpp"

namespace cutoff::graphql {
class MetricsRecorder;
}

namespace cutoff::warehouse {

struct GatewayOptions {
  std::string inventory_url = "http://127.0.0.1:8081";
  Mode mode = Mode::cutoff;
  // The gateway's own budget for an operation (its route budget under `cutoff`, its client
  // timeout per call under `timeouts`).
  std::chrono::milliseconds operation_budget{2'000};
  // @budget on Warehouse.stockValuation.
  std::chrono::milliseconds valuation_cap{1'500};
  std::chrono::milliseconds max_budget{30'000};
  std::chrono::milliseconds subscription_poll{200};
};

// The warehouse schema, with the valuation cap filled in (none: no @budget).
std::string schema_sdl(std::optional<std::chrono::milliseconds> valuation_cap);

class Gateway {
 public:
  Gateway(boost::asio::any_io_executor executor, GatewayOptions options);
  ~Gateway();

  http::ServerOptions server_options(observe::Registry* metrics) const;
  void mount(http::Server& server, observe::Registry* metrics = nullptr);
  const graphql::Schema& schema() const noexcept { return *schema_; }

 private:
  GatewayOptions options_;
  std::unique_ptr<http::Client> client_;
  std::unique_ptr<graphql::Schema> schema_;
  std::unique_ptr<graphql::MetricsRecorder> recorder_;
};

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_GATEWAY_HPP_
