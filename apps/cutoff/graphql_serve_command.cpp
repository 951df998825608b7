// `cutoff graphql serve`: a schema served from a JSON fixture over HTTP, with each request's
// deadline bound from its budget headers and reaching every resolver.
//
//   cutoff graphql serve --schema s.graphql --fixture f.json --port 4000 --max-budget-ms 2000
//   curl -H 'Deadline-Budget-Ms: 150' -H 'Content-Type: application/json'
//        -d '{"query":"{ fast slow }"}' http://127.0.0.1:4000/graphql
//
// Serves POST/GET /graphql, subscriptions over WebSocket at /graphql (graphql-transport-ws,
// each event under --event-budget-ms), the GraphiQL page at /graphiql, /metrics and /healthz. Prints
// "listening on http://ADDRESS:PORT" once bound, one JSON log line per request on stderr,
// and drains for --grace-ms on SIGINT/SIGTERM.
#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "conventions.hpp"
#include "cutoff/graphql/http/graphiql_route.hpp"
#include "cutoff/graphql/http/graphql_over_http.hpp"
#include "cutoff/graphql/http/graphql_ws.hpp"
#include "cutoff/graphql/metrics_recorder.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "fixture/fixture_resolvers.hpp"
#include "fixture_schema.hpp"
#include "serve_loop.hpp"
#include "tls_flags.hpp"
#include "stderr_log.hpp"

namespace cutoff::cli {
namespace {

namespace asio = boost::asio;
namespace gql = cutoff::graphql;

struct ServeOptions {
  std::string schema_path;
  std::string fixture_path;
  std::string address = "127.0.0.1";
  int port = 4000;
  std::int64_t max_budget_ms = 30'000;
  std::int64_t route_budget_ms = 0;
  std::int64_t grace_ms = 5'000;
  std::int64_t event_budget_ms = 5'000;
  int threads = 1;
  std::size_t max_depth = gql::OperationLimits{}.max_depth;
  double max_cost = gql::OperationLimits{}.max_cost;
  std::size_t max_response_bytes = gql::ExecutionOptions{}.max_response_bytes;
  bool whole_response = false;
  bool quiet = false;
  TlsFlags tls;
};

int Fail(const std::string& message) {
  std::fprintf(stderr, "cutoff graphql serve: %s\n", message.c_str());
  return 2;
}

int RunServe(const ServeOptions& opts) {
  std::string error;
  std::optional<FixtureSchema> loaded = LoadFixtureSchema(opts.schema_path, opts.fixture_path, &error);
  if (!loaded) return Fail(error);
  const boost::json::value& fixture = loaded->fixture;
  gql::Schema* schema = loaded->schema.get();

  asio::io_context io(opts.threads);
  observe::Registry registry;
  gql::MetricsRecorder recorder(registry);
  http::ServerOptions server_options;
  server_options.budget.max_budget = std::chrono::milliseconds(opts.max_budget_ms);
  server_options.budget.legacy_ms_headers = {"X-Client-Timeout-Ms"};
  server_options.metrics = &registry;
  server_options.one_io_thread = opts.threads == 1;
  if (!opts.quiet) server_options.log = StderrLines();
  server_options.tls = opts.tls.server();
  ServeLoop loop(io, "graphql serve", opts.address);
  const std::unique_ptr<http::Server> served = loop.make_server(server_options);
  if (!served) return loop.exit_code();
  http::Server& server = *served;

  gql::GraphQLHttpOptions graphql_options;
  graphql_options.execution.recorder = &recorder;
  graphql_options.execution.limits.max_depth = opts.max_depth;
  graphql_options.execution.limits.max_cost = opts.max_cost;
  graphql_options.execution.max_response_bytes = opts.max_response_bytes;
  if (opts.whole_response) graphql_options.execution.policy = gql::StopPolicy::whole_response;
  graphql_options.root_value = gql::Data::json(&fixture);
  http::RouteOptions route{.name = "graphql"};
  if (opts.route_budget_ms > 0) route.budget = std::chrono::milliseconds(opts.route_budget_ms);
  // What an operation is granted at most, shown in the schema's description.
  schema->declare_operation_budget(std::chrono::milliseconds(
      opts.route_budget_ms > 0 ? std::min(opts.route_budget_ms, opts.max_budget_ms) : opts.max_budget_ms));
  gql::mount_graphql(server, "/graphql", *schema, graphql_options, route);
  gql::GraphQLWsOptions ws_options;
  ws_options.subscribe.execution = graphql_options.execution;
  ws_options.subscribe.event_budget = std::chrono::milliseconds(opts.event_budget_ms);
  ws_options.operation_budget = std::chrono::milliseconds(opts.max_budget_ms);
  ws_options.root_value = graphql_options.root_value;
  gql::mount_graphql_ws(server, "/graphql", *schema, ws_options, {.name = "graphql-ws"});
  gql::mount_graphiql(server, "/graphiql", {.endpoint = "/graphql", .example = gql::example_operation(*schema)});

  const std::optional<std::uint16_t> port = loop.listen(server, opts.port);
  if (!port) return loop.exit_code();
  loop.drain_on_signals(server, std::chrono::milliseconds(opts.grace_ms));
  return loop.run(*port, " (GraphQL at /graphql, GraphiQL at /graphiql, metrics at /metrics)", opts.threads);
}

}  // namespace

void AddGraphqlServeCommand(CLI::App& app) {
  CLI::App* graphql = app.get_subcommand("graphql");
  CLI::App* serve = graphql->add_subcommand(
      "serve",
      "Serve a schema from a JSON fixture over HTTP: /graphql (GraphQL over HTTP, and subscriptions over\n"
      "WebSocket with graphql-transport-ws), /graphiql, /metrics, /healthz.\n"
      "Each request's deadline comes from Deadline-Budget-Ms, grpc-timeout, X-Request-Deadline or\n"
      "X-Client-Timeout-Ms, capped by --max-budget-ms. Fixture markers as in `cutoff graphql exec`.");
  static ServeOptions opts;
  serve->add_option("--schema", opts.schema_path, std::string("Schema in SDL: ") + kFileHelp)->required();
  serve->add_option("--fixture", opts.fixture_path, std::string("JSON object holding the root fields: ") + kFileHelp)
      ->required();
  serve->add_option("--address", opts.address, "Address to bind")->capture_default_str();
  serve->add_option("--port", opts.port, "Port to bind (0: any free port)")
      ->check(Number(0, 65535))
      ->capture_default_str();
  serve->add_option("--max-budget-ms", opts.max_budget_ms, "The most budget any request is granted")
      ->check(Number(std::int64_t{1}, std::int64_t{86'400'000}))
      ->capture_default_str();
  serve->add_option("--route-budget-ms", opts.route_budget_ms, "The /graphql route's declared budget (0: none)")
      ->check(Number(std::int64_t{0}, std::int64_t{86'400'000}))
      ->capture_default_str();
  serve->add_option("--event-budget-ms", opts.event_budget_ms,
                    "Each subscription event's budget (WebSocket, graphql-transport-ws)")
      ->check(Number(std::int64_t{1}, std::int64_t{86'400'000}))
      ->capture_default_str();
  AddTlsServerFlags(serve, opts.tls);
  serve->add_option("--grace-ms", opts.grace_ms, "On SIGINT/SIGTERM, how long in-flight requests may finish")
      ->check(Number(std::int64_t{0}, std::int64_t{3'600'000}))
      ->capture_default_str();
  serve->add_option("--threads", opts.threads, "I/O threads")->check(Number(1, 256))->capture_default_str();
  serve->add_option("--max-depth", opts.max_depth, "Deepest field nesting an operation may have, fragments expanded (0: no limit)")
      ->check(Number(std::size_t{0}, std::size_t{1'000'000}))
      ->capture_default_str();
  serve->add_option("--max-cost", opts.max_cost, "Highest estimated cost an operation may have (@cost, @listSize; 0: no limit)")
      ->check(Number(0.0, 1e300))
      ->capture_default_str();
  serve->add_option("--max-response-bytes", opts.max_response_bytes, "Largest response data; past it the operation stops (0: no limit)")
      ->check(Number(std::size_t{0}, std::size_t{1} << 40))
      ->capture_default_str();
  serve->add_flag("--whole-response", opts.whole_response, "Fail the whole response on a stop (default: partial)");
  serve->add_flag("--quiet", opts.quiet, "No request log on stderr");
  serve->callback([] {
    const int code = RunServe(opts);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace cutoff::cli
