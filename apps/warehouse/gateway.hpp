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
// subscription. Every resolver calls the inventory service, over HTTP or gRPC
// (`inventory_transport`, inventory_client.hpp).
//
// Modes (mode.hpp): under `cutoff` each operation runs under min(the caller's budget,
// `operation_budget`), and calls carry what is left; under `timeouts` the gateway's HTTP
// client gives up after `operation_budget` per call and stockValuation has its cap, but
// nothing downstream hears of either; under `none` it waits as long as it takes (no cap).
//
// Outbound fan-out is bounded in every mode (outbound_limits.hpp): one operation (or one
// WebSocket connection) has at most `max_calls_per_operation` calls to the inventory running
// and `max_queued_calls_per_operation` waiting, the whole gateway `max_calls` running and
// `max_queued_calls` waiting. A call that finds its queue full fails at once with OVERLOADED at
// its field's path; a queued call leaves its queue when its deadline passes (DEADLINE_EXCEEDED;
// under `timeouts` the wait is bounded by `operation_budget`, under `none` by nothing).
// Every call to the inventory runs through the client's policy for it (`inventory_policy`,
// http/client.hpp, resilience/policy.hpp): by default up to 3 attempts under a retry budget of
// 10% of calls, and a breaker that opens after 5 failures in a row for 5 s. Reads and keyed
// reservations are retried; a spent budget, a stop or commit_ambiguous never are. Its metrics
// are the cutoff_resilience_* families with name="inventory".
// reserveStock refuses an invalid idempotency key (empty, over 255 bytes, control characters,
// outer spaces: effects::check_idempotency_key) with BAD_USER_INPUT before calling anything.
#ifndef CUTOFF_APPS_WAREHOUSE_GATEWAY_HPP_
#define CUTOFF_APPS_WAREHOUSE_GATEWAY_HPP_

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "cutoff/graphql/schema.hpp"
#include "cutoff/grpc/tls.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/http/tls.hpp"
#include "cutoff/observe/metrics.hpp"
#include "warehouse/inventory_client.hpp"
#include "warehouse/mode.hpp"
#include "warehouse/outbound_limits.hpp"

namespace cutoff::graphql {
class MetricsRecorder;
}

namespace cutoff::warehouse {

// Up to 3 attempts (backoff from 25 ms, full jitter) under a retry budget of 10% of calls, a
// breaker that opens for 5 s after 5 failures in a row, and client-side throttling with k = 2
// per inventory route (resilience/throttle.hpp): once the inventory refuses more than half of
// one route's calls, the excess fails in the gateway without being sent.
resilience::PolicyOptions default_inventory_policy();

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
  // Under `cutoff`, taken off the budget sent to the inventory (http::ClientOptions::
  // reply_margin): its deadline fires first, so a reservation it stopped before committing
  // comes back as a definite DEADLINE_EXCEEDED instead of an unanswered, ambiguous call.
  std::chrono::milliseconds inventory_reply_margin{3};
  // Outbound fan-out (see the top of this file). `max_calls` must stay below the inventory's
  // connection limit (http::ServerLimits::max_connections, 1024 by default).
  std::size_t max_calls_per_operation = 16;
  std::size_t max_queued_calls_per_operation = 256;
  std::size_t max_calls = 256;
  std::size_t max_queued_calls = 1024;
  // How calls to the inventory are tried. Its attempt_timeout, when zero, comes from the mode:
  // `max_budget` under cutoff (the budget bounds each attempt), `operation_budget` under
  // timeouts, an hour under none.
  resilience::PolicyOptions inventory_policy = default_inventory_policy();
  // For an https:// inventory_url: the authorities its certificate must come from (http/tls.hpp).
  http::TlsClientOptions inventory_tls;
  // How the gateway reaches the inventory: its HTTP routes at `inventory_url`, or its gRPC
  // service (inventory.proto) at `inventory_grpc_target` ("host:port"), over TLS when
  // `inventory_grpc_tls` is set. The same calls, budgets, policy and limits either way.
  InventoryTransport inventory_transport = InventoryTransport::http;
  std::string inventory_grpc_target;
  std::optional<grpc::TlsClientOptions> inventory_grpc_tls;
  // Where the client to the inventory records its policy's counts and the calls it stopped
  // (http::ClientOptions); null: nowhere. Must outlive the Gateway.
  observe::Registry* metrics = nullptr;
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
  const OutboundLimits& outbound_limits() const noexcept { return *limits_; }

 private:
  // A slot for one call to the inventory under `ctx` (a field's context, or a subscription's).
  boost::asio::awaitable<OutboundLimits::Permit> CallSlot(const Context& ctx);

  GatewayOptions options_;
  std::unique_ptr<resilience::ResilienceMetrics> resilience_metrics_;
  std::unique_ptr<OutboundLimits> limits_;
  std::unique_ptr<InventoryClient> inventory_;
  std::unique_ptr<graphql::Schema> schema_;
  std::unique_ptr<graphql::MetricsRecorder> recorder_;
};

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_GATEWAY_HPP_
