// `cutoff demo serve`: the reference warehouse services, gateway, inventory and shipping, in one
// process.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "commands.hpp"
#include "conventions.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/grpc/server.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/ops/http/mcp_http.hpp"
#include "cutoff/ops/http/operations_http.hpp"
#include "policy_flags.hpp"
#include "serve_loop.hpp"
#include "tls_flags.hpp"
#include "warehouse/gateway.hpp"
#include "warehouse/inventory.hpp"
#include "warehouse/inventory_grpc.hpp"
#include "warehouse/operations.hpp"
#include "warehouse/shipping.hpp"
#include "warehouse/shipping_grpc.hpp"

namespace cutoff::cli {
namespace {

namespace asio = boost::asio;
namespace wh = cutoff::warehouse;

struct DemoServeOptions {
  std::string db;  // empty: a SQLite file in the temporary directory
  std::string address = "127.0.0.1";
  int gateway_port = 8080;
  int inventory_port = 8081;
  int inventory_grpc_port = 8082;
  int shipping_port = 8083;
  int shipping_grpc_port = 8084;
  std::string shipping_transport = "http";
  std::string shipping_db;  // empty: a SQLite file in the temporary directory
  std::int64_t shipping_booking_ms = 200;
  std::int64_t order_budget_ms = 3000;
  // Finished idempotency records and sagas: how long they are kept, how often older ones go.
  std::int64_t retention_s = 24 * 3600;
  std::int64_t sweep_interval_s = 60;
  std::string inventory_transport = "http";
  std::string mode = "cutoff";
  std::int64_t valuation_ms = 800;
  std::int64_t operation_budget_ms = 2000;
  std::int64_t valuation_cap_ms = 1500;
  int pool_size = 4;
  std::int64_t grace_ms = 2000;
  // Outbound fan-out from the gateway (gateway.hpp) and the inventory's connection limit, which
  // the gateway-wide cap must stay below.
  std::size_t max_calls_per_operation = wh::GatewayOptions().max_calls_per_operation;
  std::size_t max_queued_calls_per_operation = wh::GatewayOptions().max_queued_calls_per_operation;
  std::size_t max_inventory_calls = wh::GatewayOptions().max_calls;
  std::size_t max_queued_inventory_calls = wh::GatewayOptions().max_queued_calls;
  std::size_t inventory_max_connections = http::ServerLimits().max_connections;
  // How the gateway tries its calls to the inventory (retries, retry budget, breaker, hedging).
  PolicyFlags inventory_policy = PolicyFlags::from(wh::default_inventory_policy());
  // The inventory's refusal of doomed requests (cutoff mode).
  bool no_admission = false;
  bool no_valuation_limit = false;
  double admission_quantile = resilience::ServiceTimeAdmissionOptions().quantile;
  // Both services serve https:// with --tls-cert/--tls-key; the gateway trusts --ca-file.
  TlsFlags tls;
};

// Says why on stderr; returns `code` (2: the options are wrong; 1: anything else).
int Fail(const std::string& message, int code = 1) {
  std::fprintf(stderr, "cutoff demo serve: %s\n", message.c_str());
  return code;
}

int RunDemoServe(const DemoServeOptions& o) {
  const auto mode = wh::parse_mode(o.mode);
  if (!mode) return Fail("--mode must be none, timeouts or cutoff", 2);  // CLI11 checks it first
  // Otherwise the inventory answers the excess by closing connections, which the gateway can
  // only report as a transport failure.
  if (o.max_inventory_calls >= o.inventory_max_connections)
    return Fail("--max-inventory-calls (" + std::to_string(o.max_inventory_calls) +
                    ") must be below --inventory-max-connections (" + std::to_string(o.inventory_max_connections) + ")",
                2);
  std::string db = o.db;
  if (db.empty()) db = "sqlite:" + (std::filesystem::temp_directory_path() / "cutoff-warehouse-demo.db").string();

  asio::io_context io(1);
  observe::Registry inventory_metrics, gateway_metrics;
  wh::InventoryOptions inv;
  inv.db_url = db;
  inv.mode = *mode;
  inv.pool_size = static_cast<std::size_t>(o.pool_size);
  inv.valuation_time = std::chrono::milliseconds(o.valuation_ms);
  inv.metrics = &inventory_metrics;
  if (o.no_valuation_limit) inv.valuation_limit.reset();
  if (o.no_admission) inv.admission.reset();
  else inv.admission->quantile = o.admission_quantile;
  inv.order_budget = std::chrono::milliseconds(o.order_budget_ms);
  inv.retention = std::chrono::seconds(o.retention_s);
  inv.shipping_retention = std::chrono::seconds(o.retention_s);
  wh::Inventory inventory(inv);
  wh::ShippingOptions ship;
  ship.db_url = o.shipping_db.empty()
                    ? "sqlite:" + (std::filesystem::temp_directory_path() / "cutoff-shipping-demo.db").string()
                    : o.shipping_db;
  ship.booking_time = std::chrono::milliseconds(o.shipping_booking_ms);
  ship.retention = std::chrono::seconds(o.retention_s);
  wh::Shipping shipping(ship);
  // Declared before the servers that serve it, so it outlives them.
  const ops::Registry operations = wh::warehouse_registry(inventory, &shipping);
  std::printf("preparing the warehouse database (%s) and the shipping database (%s)...\n", db.c_str(),
              ship.db_url.c_str());
  std::fflush(stdout);
  try {
    const Context setup = Context().with_timeout(std::chrono::minutes(5));  // outlives the coroutines
    auto started = asio::co_spawn(io, inventory.start(setup), asio::use_future);
    auto shipping_started = asio::co_spawn(io, shipping.start(setup), asio::use_future);
    io.run();
    io.restart();
    started.get();
    shipping_started.get();
  } catch (const Error& e) {
    // A malformed --db is the command line's fault (2); a database that cannot be reached is not (1).
    return Fail(std::string("cannot prepare the database: ") + e.what(), cli_exit_code(e.code()));
  } catch (const std::exception& e) {
    return Fail(std::string("cannot prepare the database: ") + e.what());
  }

  // The shipping service first: the inventory's order saga books with it.
  observe::Registry shipping_metrics;
  http::ServerOptions shipping_server_options = shipping.server_options(&shipping_metrics);
  shipping_server_options.one_io_thread = true;
  shipping_server_options.tls = o.tls.server();
  ServeLoop loop(io, "demo serve", o.address);
  const std::unique_ptr<http::Server> shipping_served = loop.make_server(shipping_server_options);
  if (!shipping_served) return loop.exit_code();
  http::Server& shipping_server = *shipping_served;
  shipping.mount(shipping_server);
  const std::optional<std::uint16_t> shipping_port = loop.listen(shipping_server, o.shipping_port);
  if (!shipping_port) return loop.exit_code();
  const std::string scheme = shipping_server.serves_tls() ? "https://" : "http://";
  // Shipping over gRPC too (shipping.proto), with the same TLS; --shipping-transport picks
  // which one the order saga books through. The guard keeps the loop up while the gRPC
  // servers, destroyed on another thread at shutdown, wait for their calls.
  auto keep_running = asio::make_work_guard(io);
  grpc::ServerOptions shipping_grpc_options = wh::shipping_grpc_options(shipping, &shipping_metrics);
  if (const auto tls = o.tls.server())
    shipping_grpc_options.tls = grpc::TlsServerOptions{tls->certificate_chain_file, tls->private_key_file};
  auto shipping_grpc = std::make_unique<grpc::Server>(io.get_executor(), shipping_grpc_options);
  wh::mount_shipping_grpc(shipping, *shipping_grpc);
  std::uint16_t shipping_grpc_port = 0;
  try {
    shipping_grpc_port = shipping_grpc->listen(o.address, static_cast<std::uint16_t>(o.shipping_grpc_port));
  } catch (const std::exception& e) {
    return Fail("the shipping service's gRPC service cannot listen on " + o.address + ":" +
                std::to_string(o.shipping_grpc_port) + ": " + e.what());
  }
  if (o.shipping_transport == "grpc") {
    std::optional<grpc::TlsClientOptions> grpc_tls;
    if (o.tls.server()) grpc_tls = grpc::TlsClientOptions{.ca_file = o.tls.client().ca_file};
    inventory.use_shipping_grpc(io.get_executor(), o.address + ":" + std::to_string(shipping_grpc_port), grpc_tls);
  } else {
    inventory.use_shipping(io.get_executor(), scheme + o.address + ":" + std::to_string(*shipping_port),
                           o.tls.client());
  }

  http::ServerOptions inventory_server_options = inventory.server_options(&inventory_metrics);
  inventory_server_options.one_io_thread = true;
  inventory_server_options.limits.max_connections = o.inventory_max_connections;
  inventory_server_options.tls = o.tls.server();
  const std::unique_ptr<http::Server> inventory_served = loop.make_server(inventory_server_options);
  if (!inventory_served) return loop.exit_code();
  http::Server& inventory_server = *inventory_served;
  inventory.mount(inventory_server, &inventory_metrics);
  // The warehouse's operations on the inventory's port too: /ops/{name}, /catalog.json,
  // /openapi.json, and /mcp for agents.
  ops::MountOptions ops_mount;
  ops_mount.title = "cutoff warehouse";
  ops::mount_operations(inventory_server, operations, ops_mount);
  ops::McpMountOptions mcp_mount;
  mcp_mount.server.name = "cutoff-warehouse";
  ops::mount_mcp(inventory_server, operations, mcp_mount);
  const std::optional<std::uint16_t> inventory_port = loop.listen(inventory_server, o.inventory_port);
  if (!inventory_port) return loop.exit_code();

  // The inventory over gRPC too (inventory.proto), with the same TLS. The gRPC server keeps no
  // work on the io_context of its own: the guard keeps it running while the server, destroyed on
  // another thread at shutdown, waits for its calls.
  grpc::ServerOptions inventory_grpc_options = wh::inventory_grpc_options(inventory, &inventory_metrics);
  if (const auto tls = o.tls.server())
    inventory_grpc_options.tls = grpc::TlsServerOptions{tls->certificate_chain_file, tls->private_key_file};
  auto inventory_grpc = std::make_unique<grpc::Server>(io.get_executor(), inventory_grpc_options);
  wh::mount_inventory_grpc(inventory, *inventory_grpc, &inventory_metrics);
  std::uint16_t inventory_grpc_port = 0;
  try {
    inventory_grpc_port = inventory_grpc->listen(o.address, static_cast<std::uint16_t>(o.inventory_grpc_port));
  } catch (const std::exception& e) {
    return Fail("the inventory's gRPC service cannot listen on " + o.address + ":" +
                std::to_string(o.inventory_grpc_port) + ": " + e.what());
  }
  std::thread grpc_closer;
  struct JoinAtExit {
    std::thread& t;
    ~JoinAtExit() {
      if (t.joinable()) t.join();
    }
  } join_closer{grpc_closer};

  wh::GatewayOptions gw;
  gw.inventory_transport = *wh::parse_inventory_transport(o.inventory_transport);  // CLI11 checked it
  gw.inventory_grpc_target = o.address + ":" + std::to_string(inventory_grpc_port);
  if (o.tls.server()) gw.inventory_grpc_tls = grpc::TlsClientOptions{.ca_file = o.tls.client().ca_file};
  gw.inventory_url = scheme + o.address + ":" + std::to_string(*inventory_port);
  gw.inventory_tls = o.tls.client();
  gw.mode = *mode;
  gw.operation_budget = std::chrono::milliseconds(o.operation_budget_ms);
  gw.valuation_cap = std::chrono::milliseconds(o.valuation_cap_ms);
  gw.max_calls_per_operation = o.max_calls_per_operation;
  gw.max_queued_calls_per_operation = o.max_queued_calls_per_operation;
  gw.max_calls = o.max_inventory_calls;
  gw.max_queued_calls = o.max_queued_inventory_calls;
  gw.inventory_policy = o.inventory_policy.policy(wh::default_inventory_policy());
  gw.metrics = &gateway_metrics;
  std::optional<wh::Gateway> gateway_storage;
  try {
    gateway_storage.emplace(io.get_executor(), gw);
  } catch (const std::invalid_argument& e) {  // a --ca-file OpenSSL cannot use
    return Fail(e.what(), 2);
  }
  wh::Gateway& gateway = *gateway_storage;
  http::ServerOptions gateway_server_options = gateway.server_options(&gateway_metrics);
  gateway_server_options.one_io_thread = true;
  gateway_server_options.tls = o.tls.server();
  const std::unique_ptr<http::Server> gateway_served = loop.make_server(gateway_server_options);
  if (!gateway_served) return loop.exit_code();
  http::Server& gateway_server = *gateway_served;
  gateway.mount(gateway_server, &gateway_metrics);
  const std::optional<std::uint16_t> gateway_port = loop.listen(gateway_server, o.gateway_port);
  if (!gateway_port) return loop.exit_code();

  // Ctrl-C: both servers drain, then the process ends.
  loop.on_signal([&] {
    std::printf("stopping...\n");
    std::fflush(stdout);
    inventory.stop_sweepers();
    shipping.stop_sweeper();
    gateway_server.shutdown(std::chrono::milliseconds(o.grace_ms));
    inventory_server.shutdown(std::chrono::milliseconds(o.grace_ms));
    shipping_server.shutdown(std::chrono::milliseconds(o.grace_ms));
    inventory_grpc->shutdown(std::chrono::milliseconds(o.grace_ms));
    shipping_grpc->shutdown(std::chrono::milliseconds(o.grace_ms));
    grpc_closer = std::thread([&] {
      inventory_grpc.reset();
      shipping_grpc.reset();
      asio::post(io, [&] { keep_running.reset(); });
    });
  });
  // Started once every server listens, so that no early return leaves them running.
  if (o.sweep_interval_s > 0) {
    inventory.start_sweepers(io.get_executor(), std::chrono::seconds(o.sweep_interval_s));
    shipping.start_sweeper(io.get_executor(), std::chrono::seconds(o.sweep_interval_s));
  }
  std::printf("mode %s; valuation statement ~%lld ms (%lld simulation steps)\n", o.mode.c_str(),
              static_cast<long long>(o.valuation_ms), static_cast<long long>(inventory.valuation_steps()));
  std::printf("gateway   %s%s:%u/graphql  (GraphiQL at /graphiql, metrics at /metrics)\n", scheme.c_str(),
              o.address.c_str(), *gateway_port);
  std::printf("inventory %s%s:%u/warehouses  (metrics at /metrics; operations at /ops/{name}, /openapi.json, /mcp)\n",
              scheme.c_str(), o.address.c_str(), *inventory_port);
  std::printf("inventory grpc%s://%s:%u  (%s; the gateway calls the inventory over %s)\n",
              o.tls.server() ? "s" : "", o.address.c_str(), static_cast<unsigned>(inventory_grpc_port),
              std::string(wh::kInventoryGrpcService).c_str(), o.inventory_transport.c_str());
  std::printf("shipping  %s%s:%u/shipments  (orders: POST %s%s:%u/orders with an Idempotency-Key)\n",
              scheme.c_str(), o.address.c_str(), static_cast<unsigned>(*shipping_port), scheme.c_str(),
              o.address.c_str(), static_cast<unsigned>(*inventory_port));
  std::printf("shipping grpc%s://%s:%u  (cutoff.warehouse.v1.Shipping; orders book over %s)\n",
              o.tls.server() ? "s" : "", o.address.c_str(), static_cast<unsigned>(shipping_grpc_port),
              o.shipping_transport.c_str());
  return loop.run(*gateway_port);
}

}  // namespace

void AddDemoServeCommand(CLI::App& demo) {
  CLI::App* serve = demo.add_subcommand(
      "serve",
      "Run the reference warehouse services in one process: the GraphQL gateway (/graphql, /graphiql),\n"
      "the inventory service that owns the database, and the shipping service its order saga books\n"
      "with (POST /orders). Stops cleanly on Ctrl-C.");
  static DemoServeOptions opts;
  serve->add_option("--db", opts.db,
                    "Database URL: sqlite:PATH or postgresql://... (default: a SQLite file in $TMPDIR)");
  serve->add_option("--address", opts.address, "Address to bind")->capture_default_str();
  serve->add_option("--port", opts.gateway_port, "Gateway port (0: any free port)")
      ->check(Number(0, 65535))
      ->capture_default_str();
  serve->add_option("--inventory-port", opts.inventory_port, "Inventory port (0: any free port)")
      ->check(Number(0, 65535))
      ->capture_default_str();
  serve->add_option("--inventory-grpc-port", opts.inventory_grpc_port,
                    "The inventory's gRPC service, cutoff.warehouse.v1.Inventory (0: any free port)")
      ->check(Number(0, 65535))
      ->capture_default_str();
  serve->add_option("--shipping-port", opts.shipping_port, "Shipping service port (0: any free port)")
      ->check(Number(0, 65535))
      ->capture_default_str();
  serve->add_option("--shipping-grpc-port", opts.shipping_grpc_port,
                    "The shipping service's gRPC service, cutoff.warehouse.v1.Shipping (0: any free port)")
      ->check(Number(0, 65535))
      ->capture_default_str();
  serve->add_option("--shipping-transport", opts.shipping_transport,
                    "How the order saga books with the shipping service: http or grpc")
      ->check(CLI::IsMember({"http", "grpc"}))
      ->capture_default_str();
  serve->add_option("--shipping-db", opts.shipping_db,
                    "The shipping service's database URL (default: a SQLite file in $TMPDIR)");
  serve->add_option("--shipping-booking-ms", opts.shipping_booking_ms,
                    "How long booking a shipment waits for the carrier's confirmation")
      ->check(Number(std::int64_t{0}, std::int64_t{600'000}))
      ->capture_default_str();
  serve->add_option("--order-budget-ms", opts.order_budget_ms, "POST /orders' budget (the whole order saga's)")
      ->check(Number(std::int64_t{1}, std::int64_t{600'000}))
      ->capture_default_str();
  serve->add_option("--retention-s", opts.retention_s,
                    "How long finished idempotency records and finished orders' sagas are kept (ambiguous and "
                    "unfinished sagas are kept until settled)")
      ->check(Number(std::int64_t{1}, std::int64_t{365} * 24 * 3600))
      ->capture_default_str();
  serve->add_option("--sweep-interval-s", opts.sweep_interval_s,
                    "How often records past --retention-s are deleted (0: never)")
      ->check(Number(std::int64_t{0}, std::int64_t{24} * 3600))
      ->capture_default_str();
  serve->add_option("--inventory-transport", opts.inventory_transport,
                    "How the gateway calls the inventory: http or grpc")
      ->check(CLI::IsMember({"http", "grpc"}))
      ->capture_default_str();
  serve->add_option("--mode", opts.mode, "none, timeouts or cutoff")
      ->check(CLI::IsMember({"none", "timeouts", "cutoff"}))
      ->capture_default_str();
  serve->add_option("--valuation-ms", opts.valuation_ms, "How long the valuation statement takes (calibrated)")
      ->check(Number(std::int64_t{10}, std::int64_t{600'000}))
      ->capture_default_str();
  serve->add_option("--operation-budget-ms", opts.operation_budget_ms, "The gateway's budget per operation")
      ->check(Number(std::int64_t{1}, std::int64_t{600'000}))
      ->capture_default_str();
  serve->add_option("--valuation-cap-ms", opts.valuation_cap_ms, "@budget on Warehouse.stockValuation")
      ->check(Number(std::int64_t{1}, std::int64_t{600'000}))
      ->capture_default_str();
  serve->add_option("--pool-size", opts.pool_size, "Database connections")
      ->check(Number(1, 256))
      ->capture_default_str();
  serve
      ->add_option("--max-calls-per-operation", opts.max_calls_per_operation,
                   "Calls to the inventory one GraphQL operation (or WebSocket connection) may have running")
      ->check(Number(std::size_t{1}, std::size_t{100'000}))
      ->capture_default_str();
  serve
      ->add_option("--max-queued-calls-per-operation", opts.max_queued_calls_per_operation,
                   "Calls of one operation waiting for those; more fail with OVERLOADED at their field")
      ->check(Number(std::size_t{0}, std::size_t{1'000'000}))
      ->capture_default_str();
  serve
      ->add_option("--max-inventory-calls", opts.max_inventory_calls,
                   "Calls to the inventory the whole gateway may have running (below --inventory-max-connections)")
      ->check(Number(std::size_t{1}, std::size_t{100'000}))
      ->capture_default_str();
  serve
      ->add_option("--max-queued-inventory-calls", opts.max_queued_inventory_calls,
                   "Calls waiting for those; more fail with OVERLOADED at their field")
      ->check(Number(std::size_t{0}, std::size_t{1'000'000}))
      ->capture_default_str();
  serve
      ->add_option("--inventory-max-connections", opts.inventory_max_connections,
                   "Connections the inventory accepts at once (more are answered 503 and closed)")
      ->check(Number(std::size_t{2}, std::size_t{1'000'000}))
      ->capture_default_str();
  serve->add_flag("--no-admission", opts.no_admission,
                  "Under --mode cutoff, let the inventory start requests whose budget is below the recent service "
                  "time of their route (by default they are refused at once with 504 deadline_exceeded)");
  serve->add_flag("--no-valuation-limit", opts.no_valuation_limit,
                  "Under --mode cutoff, run as many valuations at once as the pool has connections (by default an "
                  "adaptive limit lowers that while they slow down or are cut at their deadlines)");
  serve
      ->add_option("--admission-quantile", opts.admission_quantile,
                   "The inventory refuses a request whose budget is below this quantile of its route's recent "
                   "service times")
      ->check(Number(0.0, 1.0))
      ->capture_default_str();
  AddPolicyFlags(serve, "inventory-", "the gateway's calls to the inventory", opts.inventory_policy,
                 /*bulkhead=*/false, /*attempt_timeout=*/true);
  AddTlsServerFlags(serve, opts.tls);
  AddTlsClientFlags(serve, opts.tls, "calls from the gateway to the inventory");
  serve->callback([] {
    const int code = RunDemoServe(opts);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace cutoff::cli
