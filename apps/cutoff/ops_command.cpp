// `cutoff ops` and `cutoff catalog`: the operation registry from the command line.
//
//   cutoff ops list                                   # name, deadline, where the deadline came from
//   cutoff catalog --format openapi                   # the OpenAPI 3.1 document (or --format json)
//   cutoff ops call example.sleep --args '{"ms":5000}' --budget-ms 200       # exit 6
//   cutoff ops call example.echo --args @args.json     # or --args - to read standard input
//   cutoff ops serve --port 8080                      # POST /ops/{name}, /catalog.json, /openapi.json, /mcp
//   cutoff ops mcp                                    # the operations as MCP tools on stdin/stdout
//   cutoff ops call example.echo --args '{"a":1}' --url http://127.0.0.1:8080
//   cutoff ops call example.orders.create --args '{"sku":"A-1"}' --idempotency-key order-17 --url URL
//                                                     # the same key again returns the same order
//
// `ops serve` keeps its orders and their idempotency keys in a database (--db, by default a
// SQLite file in the temporary directory) through the effects store: POST
// /ops/example.orders.create with `Idempotency-Key: K` twice makes one order, and a
// commit_ambiguous answer to a keyed call says that retrying with the same key is safe.
//
// `ops call` prints the result as JSON on stdout and exits 0; on failure it prints the error
// document {"error":{"code","message","request_id"}} on stderr and exits with the taxonomy's
// code: 6 deadline_exceeded, 1 commit_ambiguous (and other errors), 130/143 when SIGINT or
// SIGTERM stopped it before a commit point (with --url: before the request left; after that
// the service may have acted on it, so it is commit_ambiguous), 2 for usage errors. `ops serve`
// exits 1 when its address cannot be bound (unavailable), 2 for an --address that is not one. Without --url it runs the
// example registry in this process; with --url it POSTs to a running service, sending
// --budget-ms as Deadline-Budget-Ms and waiting up to a second longer for the service's own
// answer (which says whether the stop came before or after the commit point).
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include "commands.hpp"
#include "conventions.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/core/json_text.hpp"
#include "cutoff/effects/effects.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/http/error_document.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/ops/catalog.hpp"
#include "cutoff/ops/http/mcp_http.hpp"
#include "cutoff/ops/http/operations_http.hpp"
#include "cutoff/ops/invoker.hpp"
#include "cutoff/ops/mcp/session.hpp"
#include "cutoff/ops/mcp/stdio.hpp"
#include "cutoff/sql/connect.hpp"
#include "cutoff/sql/pool.hpp"
#include "example_operations.hpp"
#include "warehouse/operations.hpp"
#include "serve_loop.hpp"
#include "tls_flags.hpp"
#include "signal_stop.hpp"
#include "stderr_log.hpp"

namespace cutoff::cli {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

// How much longer than --budget-ms `ops call --url` waits for the service to answer.
constexpr auto kAnswerGrace = std::chrono::milliseconds(1000);

struct CallOptions {
  std::string name;
  std::string args = "{}";      // inline, @FILE or -
  std::int64_t budget_ms = -1;  // -1: none
  std::string url;
  std::string idempotency_key;  // empty: none
  TlsFlags tls;                 // --ca-file, for an https:// --url
};

struct ServeOptions {
  std::string address = "127.0.0.1";
  int port = 8080;
  std::int64_t max_budget_ms = 30'000;
  std::int64_t grace_ms = 5'000;
  bool quiet = false;
  std::string db;  // empty: a SQLite file in the temporary directory
  TlsFlags tls;
};

struct McpOptions {
  std::string db;  // empty: a SQLite file in the temporary directory
  bool quiet = false;
  std::size_t max_calls = 64;
};

void PrintOut(std::string text) {
  text.push_back('\n');
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void PrintErr(std::string text) {
  text.push_back('\n');
  std::fwrite(text.data(), 1, text.size(), stderr);
}

std::string ErrorDocument(const Error& e) {
  std::string out = "{\"error\":{\"code\":";
  append_json_string(out, to_string(e.code()));
  out += ",\"message\":";
  append_json_string(out, e.message());
  if (!e.request_id().empty()) {
    out += ",\"request_id\":";
    append_json_string(out, e.request_id());
  }
  out += "}}";
  return out;
}

int Usage(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "cutoff %s: %s\n", command.c_str(), message.c_str());
  return 2;
}

std::string Table(const ops::Registry& registry) {
  std::vector<std::array<std::string, 3>> rows = {{"NAME", "DEADLINE", "SOURCE"}};
  for (const ops::ResolvedOperation* op : registry.operations()) {
    const ops::OperationInfo& info = op->info;
    rows.push_back({info.name, info.deadline ? ops::format_seconds(*info.deadline) + " s" : "-",
                    info.deadline_source.to_string()});
  }
  std::size_t w0 = 0, w1 = 0;
  for (const auto& r : rows) {
    w0 = std::max(w0, r[0].size());
    w1 = std::max(w1, r[1].size());
  }
  std::string out;
  for (const auto& r : rows) {
    out += r[0] + std::string(w0 - r[0].size() + 2, ' ') + r[1] + std::string(w1 - r[1].size() + 2, ' ') + r[2] + "\n";
  }
  return out;
}

int RunCallInProcess(const CallOptions& opts, json::value args) {
  const ops::Registry registry = MakeExampleRegistry();
  const ops::Invoker invoker(registry);
  asio::io_context io(1);
  auto [ctx, stop] = Context().with_cancel();
  SignalStop signals(io, stop);
  ops::InvokeOptions options;
  if (opts.budget_ms >= 0) options.budget = std::chrono::milliseconds(opts.budget_ms);
  if (!opts.idempotency_key.empty()) options.idempotency_key = opts.idempotency_key;
  int exit_code = 0;
  auto run = [&, ctx = ctx]() -> asio::awaitable<void> {
    try {
      json::value result = co_await invoker.invoke(ctx, opts.name, std::move(args), options);
      PrintOut(json::serialize(result));
    } catch (const Error& e) {
      PrintErr(ErrorDocument(e));
      exit_code = cli_exit_code(e.code(), signals.signal());
    }
    signals.cancel();
  };
  asio::co_spawn(io, run(), asio::detached);
  io.run();
  return exit_code;
}

int RunCallRemote(const CallOptions& opts, const std::string& body) {
  std::string base = opts.url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string url = base + "/ops/" + opts.name;
  if (!http::parse_url(url)) return Usage("ops call", "--url must be an http:// or https:// URL");
  asio::io_context io(1);
  Context base_ctx;
  if (opts.budget_ms >= 0) base_ctx = base_ctx.with_timeout(std::chrono::milliseconds(opts.budget_ms) + kAnswerGrace);
  auto [ctx, stop] = base_ctx.with_cancel();
  SignalStop signals(io, stop);
  // A keyed call may be repeated safely: connection failures and 502/503/504 answers are
  // tried again (three attempts in all, within the budget).
  const bool keyed = !opts.idempotency_key.empty();
  std::optional<http::Client> client_storage;
  try {
    client_storage.emplace(io.get_executor(),
                           http::ClientOptions{.policy = {.attempt_timeout = std::chrono::hours(24),
                                                          .retry = {.max_attempts = keyed ? 3 : 1,
                                                                    .backoff = {.initial = std::chrono::milliseconds(100),
                                                                                .jitter = resilience::Jitter::none}}},
                                               .tls = opts.tls.client()});
  } catch (const std::invalid_argument& e) {  // a --ca-file OpenSSL cannot use
    return Usage("ops call", e.what());
  }
  http::Client& client = *client_storage;
  int exit_code = 0;
  auto run = [&, ctx = ctx]() -> asio::awaitable<void> {
    try {
      http::ClientRequest req{.method = "POST", .url = url, .body = body};
      req.headers.set("Content-Type", "application/json");
      if (opts.budget_ms >= 0) req.headers.set(cutoff::kBudgetHeader, std::to_string(opts.budget_ms));
      if (!opts.idempotency_key.empty()) {
        req.headers.set("Idempotency-Key", opts.idempotency_key);
        req.idempotent = true;
      }
      http::Response res = co_await client.request(ctx, std::move(req));
      if (res.status >= 200 && res.status < 300) {
        PrintOut(res.body);
      } else {
        PrintErr(res.body.empty() ? "HTTP " + std::to_string(res.status) : res.body);
        const auto remote = http::parse_error_document(res.body);
        exit_code = remote && remote->code ? cli_exit_code(*remote->code, signals.signal()) : 1;
      }
    } catch (const Error& e) {
      PrintErr(ErrorDocument(e));
      exit_code = cli_exit_code(e.code(), signals.signal());
    }
    signals.cancel();
  };
  asio::co_spawn(io, run(), asio::detached);
  io.run();
  return exit_code;
}

int RunCall(const CallOptions& opts) {
  std::string error;
  std::optional<Input> text = ReadInput("--args", opts.args, &error);
  if (!text) return Usage("ops call", error);
  std::optional<json::value> args = ParseJson(*text, &error);
  if (!args) {
    if (std::string hint = FileHint("--args", opts.args); !hint.empty()) error += "\n  " + hint;
    return Usage("ops call", error);
  }
  if (!opts.url.empty()) return RunCallRemote(opts, json::serialize(*args));
  return RunCallInProcess(opts, std::move(*args));
}

// The example operations' database: orders and their idempotency keys, recorded in one
// transaction through the effects store.
struct ExampleStore {
  explicit ExampleStore(std::string db_url)
      : url(std::move(db_url)), pool(sql::connection_factory(Options(url)), {.max_size = 4}), effects(pool, {}) {}
  static sql::DatabaseOptions Options(const std::string& url) {
    sql::DatabaseOptions options;
    options.url = url;
    return options;
  }
  std::string url;
  sql::Pool pool;
  effects::Effects effects;
};

// Opens --db (default: a SQLite file in the temporary directory) and creates the tables;
// null after saying why on stderr, with the exit code in *exit_code.
std::unique_ptr<ExampleStore> OpenExampleStore(asio::io_context& io, const char* command, std::string db, int* exit_code) {
  if (db.empty()) db = "sqlite:" + (std::filesystem::temp_directory_path() / "cutoff-ops-serve.db").string();
  try {
    (void)sql::parse_database_url(db);
  } catch (const Error& e) {
    *exit_code = Usage(command, std::string("--db: ") + e.what());
    return nullptr;
  }
  auto store = std::make_unique<ExampleStore>(db);
  try {
    const Context setup = Context().with_timeout(std::chrono::seconds(30));  // outlives the coroutine
    auto installed = asio::co_spawn(io, InstallExampleTables(store->effects, store->pool, setup), asio::use_future);
    io.run();
    io.restart();
    installed.get();
  } catch (const Error& e) {
    // A malformed --db is the command line's fault (2); a database that cannot be reached is not (1).
    Usage(command, "cannot prepare the database " + db + ": " + e.what());
    *exit_code = cli_exit_code(e.code());
    return nullptr;
  } catch (const std::exception& e) {
    Usage(command, "cannot prepare the database " + db + ": " + e.what());
    *exit_code = cli_exit_code(ErrorCode::internal);
    return nullptr;
  }
  return store;
}

// The MCP server's identity and, unless --quiet, a log line on stderr per tool call:
// {"mcp_tool":"example.sleep","outcome":"deadline_exceeded","ms":201,"cancelled_by_client":false}
ops::mcp::ServerOptions ExampleMcpOptions(bool quiet) {
  ops::mcp::ServerOptions options;
  options.name = "cutoff-example-operations";
  options.version = CUTOFF_VERSION;
  options.instructions =
      "Each tool states its time budget. A call that runs out of it stops and reports deadline_exceeded; one "
      "that reports commit_ambiguous may have taken effect, so check before calling it again, or pass an "
      "idempotency_key where the tool takes one.";
  if (!quiet) {
    options.on_call = [log = StderrLines()](const ops::mcp::CallRecord& r) {
      std::string line = "{\"mcp_tool\":";
      append_json_string(line, r.tool);
      line += ",\"outcome\":";
      append_json_string(line, r.outcome);
      line += ",\"ms\":" + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(r.took).count());
      line += ",\"cancelled_by_client\":";
      line += r.cancelled_by_client ? "true}" : "false}";
      log(line);
    };
  }
  return options;
}

int RunServe(const ServeOptions& opts) {
  int exit_code_on_failure = 0;
  asio::io_context io(1);
  const std::unique_ptr<ExampleStore> store = OpenExampleStore(io, "ops serve", opts.db, &exit_code_on_failure);
  if (!store) return exit_code_on_failure;
  const std::string& db = store->url;
  const ops::Registry registry = MakeExampleRegistry(&store->effects);
  observe::Registry metrics;
  http::ServerOptions server_options;
  server_options.budget.max_budget = std::chrono::milliseconds(opts.max_budget_ms);
  server_options.metrics = &metrics;
  server_options.one_io_thread = true;
  if (!opts.quiet) server_options.log = StderrLines();
  server_options.tls = opts.tls.server();
  ServeLoop loop(io, "ops serve", opts.address);
  const std::unique_ptr<http::Server> served = loop.make_server(server_options);
  if (!served) return loop.exit_code();
  http::Server& server = *served;
  ops::mount_operations(server, registry, {.title = "cutoff example operations"});
  ops::McpMountOptions mcp;
  mcp.server = ExampleMcpOptions(opts.quiet);
  mcp.server.metrics = &metrics;
  ops::mount_mcp(server, registry, std::move(mcp));
  const std::optional<std::uint16_t> port = loop.listen(server, opts.port);
  if (!port) return loop.exit_code();
  loop.drain_on_signals(server, std::chrono::milliseconds(opts.grace_ms));
  return loop.run(*port, " (POST /ops/{name}, /catalog.json, /openapi.json, /mcp, /metrics); orders in " + db);
}

int RunMcp(const McpOptions& opts) {
  asio::io_context io(1);
  int exit_code_on_failure = 0;
  const std::unique_ptr<ExampleStore> store = OpenExampleStore(io, "ops mcp", opts.db, &exit_code_on_failure);
  if (!store) return exit_code_on_failure;
  const ops::Registry registry = MakeExampleRegistry(&store->effects);
  ops::mcp::ServerOptions options = ExampleMcpOptions(opts.quiet);
  options.max_calls_in_flight = opts.max_calls;
  const ops::mcp::Server server(registry, std::move(options));
  ops::mcp::Session session(server);
  // SIGINT or SIGTERM: the calls still running stop with `shutdown` and their replies go out.
  auto [ctx, stop] = Context().with_cancel();
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([stop = stop](const boost::system::error_code& ec, int) {
    if (!ec) stop.request_stop(StopReason::shutdown);
  });
  std::exception_ptr failure;
  asio::co_spawn(io, ops::mcp::serve_stdio(ctx, session, STDIN_FILENO, STDOUT_FILENO),
                 [&](std::exception_ptr e) {
                   failure = e;
                   signals.cancel();
                 });
  io.run();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cutoff ops mcp: %s\n", e.what());
    }
    return 1;
  }
  return 0;
}

void Check(int code) {
  if (code != 0) throw CLI::RuntimeError(code);
}

}  // namespace

void AddOpsCommand(CLI::App& app) {
  CLI::App* ops_app = app.add_subcommand("ops", "The operation registry: list, call and serve operations");
  ops_app->require_subcommand(1);

  CLI::App* list = ops_app->add_subcommand("list", "List the example operations: name, deadline and its source");
  list->callback([] { std::fputs(Table(MakeExampleRegistry()).c_str(), stdout); });

  CLI::App* call = ops_app->add_subcommand(
      "call",
      "Invoke one operation and print its result as JSON.\n"
      "Exit codes: 0 ok, 6 deadline_exceeded, 1 commit_ambiguous or another error, 130/143 on SIGINT/SIGTERM\n"
      "(before a commit point; after one it is commit_ambiguous), 2 usage.");
  static CallOptions call_opts;
  call->add_option("name", call_opts.name, "Operation name, e.g. example.sleep")->required();
  call->add_option("--args", call_opts.args, std::string("Arguments, JSON: ") + kInputHelp)->capture_default_str();
  AddBudgetOption(call, call_opts.budget_ms,
                  "The caller's time budget; it can only shorten the operation's (0: already spent; default: "
                  "none, the operation's own)",
                  {"--timeout-ms"});
  call->add_option("--url", call_opts.url,
                   "Call a running service (cutoff ops serve) at this base URL (default: run in-process)");
  call->add_option("--idempotency-key", call_opts.idempotency_key,
                   "Send this Idempotency-Key: repeating the call with the same key returns the first outcome "
                   "(operations that take keys only; default: none)");
  AddTlsClientFlags(call, call_opts.tls, "calls (an https:// --url)");
  call->callback([] { Check(RunCall(call_opts)); });

  CLI::App* serve = ops_app->add_subcommand(
      "serve",
      "Serve the example operations over HTTP: POST /ops/{name}, /catalog.json, /openapi.json, /metrics, and as MCP "
      "tools at /mcp (streamable HTTP)");
  static ServeOptions serve_opts;
  serve->add_option("--address", serve_opts.address, "Address to bind")->capture_default_str();
  serve->add_option("--port", serve_opts.port, "Port to bind (0: any free port)")
      ->check(Number(0, 65535))
      ->capture_default_str();
  serve->add_option("--max-budget-ms", serve_opts.max_budget_ms, "The most budget any request is granted")
      ->check(Number(std::int64_t{1}, std::int64_t{86'400'000}))
      ->capture_default_str();
  AddTlsServerFlags(serve, serve_opts.tls);
  serve->add_option("--grace-ms", serve_opts.grace_ms, "On SIGINT/SIGTERM, how long in-flight requests may finish")
      ->check(Number(std::int64_t{0}, std::int64_t{3'600'000}))
      ->capture_default_str();
  serve->add_flag("--quiet", serve_opts.quiet, "No request log on stderr");
  serve->add_option("--db", serve_opts.db,
                    "Where orders and idempotency keys are kept: sqlite:PATH or postgresql://... "
                    "(default: a SQLite file in $TMPDIR)");
  serve->callback([] { Check(RunServe(serve_opts)); });

  CLI::App* mcp = ops_app->add_subcommand(
      "mcp",
      "Serve the example operations as Model Context Protocol tools on standard input and output (one JSON-RPC "
      "message per line; a log line per call on stderr). Each tool's description states its budget; a call "
      "runs under it. Ends when the input ends (calls still running stop with cancelled) or on SIGINT/SIGTERM "
      "(they stop with shutdown). Exit codes: 0, 1 when the input or output cannot be used, 2 usage.");
  static McpOptions mcp_opts;
  mcp->add_option("--db", mcp_opts.db,
                  "Where orders and idempotency keys are kept: sqlite:PATH or postgresql://... "
                  "(default: a SQLite file in $TMPDIR)");
  mcp->add_option("--max-calls", mcp_opts.max_calls, "Tool calls run at once; more are refused as overloaded")
      ->check(Number(std::size_t{1}, std::size_t{10'000}))
      ->capture_default_str();
  mcp->add_flag("--quiet", mcp_opts.quiet, "No log line per call on stderr");
  mcp->callback([] { Check(RunMcp(mcp_opts)); });

  CLI::App* catalog = app.add_subcommand(
      "catalog", "Print an operation catalog as JSON or OpenAPI 3.1: the example operations, or the warehouse's");
  static std::string format = "json";
  static std::string services = "example";
  catalog->add_option("--format", format, "json or openapi")
      ->check(CLI::IsMember({"json", "openapi"}))
      ->capture_default_str();
  catalog->add_option("--services", services,
                      "example (the operations of `cutoff ops`) or warehouse (those `cutoff demo serve` runs, with "
                      "its default budgets)")
      ->check(CLI::IsMember({"example", "warehouse"}))
      ->capture_default_str();
  catalog->callback([] {
    json::value doc;
    if (services == "warehouse") {
      // Listing needs neither service started: the budgets come from their options.
      warehouse::Inventory inventory{warehouse::InventoryOptions{}};
      warehouse::Shipping shipping{warehouse::ShippingOptions{}};
      const ops::Registry registry = warehouse::warehouse_registry(inventory, &shipping);
      doc = format == "openapi" ? ops::openapi_document(registry, {.title = "cutoff warehouse"})
                                : ops::catalog_json(registry);
    } else {
      const ops::Registry registry = MakeExampleRegistry();
      doc = format == "openapi" ? ops::openapi_document(registry, {.title = "cutoff example operations"})
                                : ops::catalog_json(registry);
    }
    PrintOut(json::serialize(doc));
  });
}

}  // namespace cutoff::cli
