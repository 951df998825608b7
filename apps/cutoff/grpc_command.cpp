// `cutoff grpc relay` and `cutoff grpc call`: gRPC's side of `cutoff http relay`, and a unary
// call from the command line.
//
//   cutoff grpc relay --name C --port 9003 --work-ms 10000
//   cutoff grpc relay --name B --port 9002 --work-ms 50 --next 127.0.0.1:9003
//   cutoff grpc call 127.0.0.1:9002 /cutoff.relay.v1.Relay/Work --budget-ms 300   # exit 6
//
// A relay serves one method, /cutoff.relay.v1.Relay/Work: it waits --work-ms under the call's
// context, runs --sql on --db if given, calls --next with what is left of the budget, and
// answers a JSON document (as the message's bytes) saying what it saw. When the first hop's
// budget runs out or its caller cancels, every later hop stops within milliseconds.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "conventions.hpp"
#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/core/json_text.hpp"
#include "cutoff/grpc/client.hpp"
#include "cutoff/grpc/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/sql/connect.hpp"
#include "policy_flags.hpp"
#include "signal_stop.hpp"
#include "stderr_log.hpp"

namespace cutoff::cli {
namespace {

namespace asio = boost::asio;

constexpr const char* kRelayMethod = "/cutoff.relay.v1.Relay/Work";

struct GrpcTlsFlags {
  std::string cert_file;    // --tls-cert
  std::string key_file;     // --tls-key
  std::string ca_file;      // --ca-file
  std::string server_name;  // --server-name

  std::optional<grpc::TlsServerOptions> server() const {
    if (cert_file.empty()) return std::nullopt;
    return grpc::TlsServerOptions{cert_file, key_file};
  }
  // TLS for the calls out when a CA file or a server name is given; plaintext otherwise.
  std::optional<grpc::TlsClientOptions> client() const {
    if (ca_file.empty() && server_name.empty()) return std::nullopt;
    return grpc::TlsClientOptions{ca_file, server_name};
  }
};

void AddServerTls(CLI::App* app, GrpcTlsFlags& f) {
  CLI::Option* cert =
      app->add_option("--tls-cert", f.cert_file, "Serve over TLS with this PEM certificate chain (default: plaintext)")
          ->check(CLI::ExistingFile);
  CLI::Option* key =
      app->add_option("--tls-key", f.key_file, "The PEM private key of --tls-cert (default: none)")->check(CLI::ExistingFile);
  cert->needs(key);
  key->needs(cert);
}

void AddClientTls(CLI::App* app, GrpcTlsFlags& f, const std::string& what) {
  app->add_option("--ca-file", f.ca_file, "Call " + what + " over TLS, trusting these PEM authorities (default: plaintext)")
      ->check(CLI::ExistingFile);
  app->add_option("--server-name", f.server_name,
                  "The name " + what + "'s certificate must carry, when not the target's host (implies TLS)");
}

struct RelayOptions {
  std::string name = "relay";
  std::string address = "127.0.0.1";
  int port = 0;
  std::int64_t work_ms = 0;
  std::string db;
  std::string sql;
  std::string next;
  std::int64_t max_budget_ms = 30'000;
  std::int64_t grace_ms = 2'000;
  PolicyFlags policy = [] {
    PolicyFlags f;
    f.attempt_timeout_ms = 30'000;
    return f;
  }();
  GrpcTlsFlags tls;
  bool quiet = false;
};

std::int64_t Millis(Duration d) {
  return d == Duration::max() ? -1 : std::chrono::ceil<std::chrono::milliseconds>(d).count();
}

int RunRelay(const RelayOptions& opts) {
  if (!opts.sql.empty() && opts.db.empty()) {
    std::fprintf(stderr, "cutoff grpc relay: --sql needs --db\n");
    return 2;
  }
  asio::io_context io(1);
  auto work_guard = asio::make_work_guard(io);
  observe::Registry registry;
  const std::string name = opts.name;

  std::unique_ptr<sql::Pool> pool;
  if (!opts.db.empty()) {
    try {
      sql::DatabaseOptions db;
      db.url = opts.db;
      sql::PoolOptions pool_options;
      pool_options.max_size = 8;
      pool = std::make_unique<sql::Pool>(sql::connection_factory(db), pool_options);
    } catch (const Error& e) {
      std::fprintf(stderr, "cutoff grpc relay: --db: %s\n", e.message().c_str());
      return 2;
    }
  }

  std::unique_ptr<grpc::Client> client;
  if (!opts.next.empty()) {
    grpc::ClientOptions client_options;
    client_options.policy = opts.policy.policy();
    client_options.metrics = &registry;
    client_options.tls = opts.tls.client();
    try {
      client = std::make_unique<grpc::Client>(io.get_executor(), opts.next, client_options);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "cutoff grpc relay: %s\n", e.what());
      return 2;
    }
  }

  grpc::ServerOptions server_options;
  server_options.budget.max_budget = std::chrono::milliseconds(opts.max_budget_ms);
  server_options.metrics = &registry;
  server_options.tls = opts.tls.server();
  if (!opts.quiet) server_options.log = StderrLinesOf(name);  // several relays can share a terminal
  auto server = std::make_unique<grpc::Server>(io.get_executor(), server_options);
  server->unary(kRelayMethod, [&](std::string, const Context& ctx) -> asio::awaitable<std::string> {
    const std::int64_t received = Millis(ctx.remaining());
    asio::steady_timer work(co_await asio::this_coro::executor, std::chrono::milliseconds(opts.work_ms));
    co_await with_context(ctx, work.async_wait(asio::use_awaitable));
    std::string body = "{\"service\":";
    append_json_string(body, name);
    body += ",\"budget_ms\":" + std::to_string(received);
    if (pool) {
      auto lease = co_await pool->acquire(ctx);
      auto running = lease->execute(ctx, opts.sql, {});
      const sql::Result rows = co_await std::move(running);
      body += ",\"rows\":" + std::to_string(rows.size());
    }
    if (client) {
      grpc::CallOptions read;  // the next hop only reads (as http relay's GET), so a stop stays a stop
      read.may_write = false;
      auto calling = client->call(ctx, kRelayMethod, "", read);
      std::string downstream = co_await std::move(calling);
      body += ",\"downstream\":" + (downstream.empty() ? std::string("null") : downstream);
    }
    body += "}";
    co_return body;
  });

  std::uint16_t port = 0;
  try {
    port = server->listen(opts.address, static_cast<std::uint16_t>(opts.port));
  } catch (const std::invalid_argument& e) {  // a certificate or key gRPC cannot read
    std::fprintf(stderr, "cutoff grpc relay: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cutoff grpc relay: %s\n", e.what());
    return 1;
  }

  // The first SIGINT or SIGTERM drains: calls in flight get --grace-ms, then stop with
  // `shutdown`. The server is destroyed (waiting for its calls) while the io_context still runs.
  asio::signal_set signals(io, SIGINT, SIGTERM);
  std::thread closer;
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    StderrLinesOf(name)("{\"event\":\"shutdown\",\"signal\":" + std::to_string(signal) + "}");
    server->shutdown(std::chrono::milliseconds(opts.grace_ms));
    closer = std::thread([&] {
      server.reset();
      asio::post(io, [&] { work_guard.reset(); });
    });
  });
  std::printf("listening on grpc%s://%s:%u (%s)\n", opts.tls.server() ? "s" : "", opts.address.c_str(),
              static_cast<unsigned>(port), kRelayMethod);
  std::fflush(stdout);
  io.run();
  if (closer.joinable()) closer.join();
  return 0;
}

struct CallOptions {
  std::string target;
  std::string method;
  std::string data;
  std::int64_t budget_ms = 30'000;
  bool read = false;
  bool idempotent = false;
  std::vector<std::string> metadata;  // key=value
  GrpcTlsFlags tls;
};

int RunCall(const CallOptions& opts) {
  std::string error;
  std::string request;
  if (!opts.data.empty()) {
    std::optional<Input> input = ReadInput("--data", opts.data, &error);
    if (!input) {
      std::fprintf(stderr, "cutoff grpc call: %s\n", error.c_str());
      return 2;
    }
    request = std::move(input->text);
  }
  grpc::CallOptions call;
  call.may_write = !opts.read;
  call.idempotent = opts.idempotent;
  for (const std::string& kv : opts.metadata) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "cutoff grpc call: --metadata takes KEY=VALUE, not '%s'\n", kv.c_str());
      return 2;
    }
    call.metadata.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  asio::io_context io(1);
  grpc::ClientOptions client_options;
  client_options.tls = opts.tls.client();
  std::unique_ptr<grpc::Client> client;
  try {
    client = std::make_unique<grpc::Client>(io.get_executor(), opts.target, client_options);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "cutoff grpc call: %s\n", e.what());
    return 2;
  }
  auto [ctx, stop] = Context::background().with_timeout(std::chrono::milliseconds(opts.budget_ms)).with_cancel();
  SignalStop signals(io, stop);
  int exit_code = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        try {
          auto calling = client->call(ctx, opts.method, request, call);
          const std::string response = co_await std::move(calling);
          std::fwrite(response.data(), 1, response.size(), stdout);
          if (!response.empty() && response.back() != '\n') std::fputc('\n', stdout);
        } catch (const Error& e) {
          std::fprintf(stderr, "cutoff grpc call: %s: %s\n", std::string(to_string(e.code())).c_str(),
                       e.message().c_str());
          exit_code = cli_exit_code(e.code(), signals.signal());
        }
        signals.cancel();
      },
      asio::detached);
  io.run();
  return exit_code;
}

}  // namespace

void AddGrpcCommand(CLI::App& app) {
  CLI::App* grpc_app = app.add_subcommand("grpc", "gRPC tools");
  grpc_app->require_subcommand(1);

  CLI::App* relay = grpc_app->add_subcommand(
      "relay",
      std::string("Serve ") + kRelayMethod +
          ": wait --work-ms under the call's deadline, run --sql, then call --next with the rest of the\n"
          "budget. Chain several to watch a deadline cross gRPC services.");
  static RelayOptions relay_opts;
  relay->add_option("--name", relay_opts.name, "Service name, in responses and log lines")->capture_default_str();
  relay->add_option("--address", relay_opts.address, "Address to bind")->capture_default_str();
  relay->add_option("--port", relay_opts.port, "Port to bind (0: any free port)")
      ->check(Number(0, 65535))
      ->capture_default_str();
  relay->add_option("--work-ms", relay_opts.work_ms, "Work per call before --sql and --next")
      ->check(Number(std::int64_t{0}, std::int64_t{86'400'000}))
      ->capture_default_str();
  relay->add_option("--db", relay_opts.db, "Database URL for --sql (sqlite:PATH or postgresql://...)");
  relay->add_option("--sql", relay_opts.sql, "A statement each call runs under its context (needs --db)");
  relay->add_option("--next", relay_opts.next, "HOST:PORT of the next relay (default: none, this is the last)");
  relay->add_option("--max-budget-ms", relay_opts.max_budget_ms, "The most budget any call is granted")
      ->check(Number(std::int64_t{1}, std::int64_t{86'400'000}))
      ->capture_default_str();
  AddPolicyFlags(relay, "", "calls to --next", relay_opts.policy, /*bulkhead=*/true, /*attempt_timeout=*/true);
  relay->add_option("--grace-ms", relay_opts.grace_ms, "On SIGINT/SIGTERM, how long calls in flight may finish")
      ->check(Number(std::int64_t{0}, std::int64_t{3'600'000}))
      ->capture_default_str();
  AddServerTls(relay, relay_opts.tls);
  AddClientTls(relay, relay_opts.tls, "--next");
  relay->add_flag("--quiet", relay_opts.quiet, "No call log on stderr");
  relay->callback([] {
    const int code = RunRelay(relay_opts);
    if (code != 0) throw CLI::RuntimeError(code);
  });

  CLI::App* call = grpc_app->add_subcommand(
      "call",
      "One unary call: the request message's bytes from --data, the response's to standard output. Exit\n"
      "codes from the error table: 6 deadline_exceeded, 1 commit_ambiguous or any other failure.");
  static CallOptions call_opts;
  call->add_option("target", call_opts.target, "HOST:PORT")->required();
  call->add_option("method", call_opts.method, "/package.Service/Method")->required();
  call->add_option("--data", call_opts.data, std::string("The request message (") + kInputHelp + "; default: empty)");
  AddBudgetOption(call, call_opts.budget_ms, "The call's budget, sent as its gRPC deadline (0: already spent)",
                  {"--deadline-ms"})
      ->capture_default_str();
  call->add_option("--metadata", call_opts.metadata, "KEY=VALUE request metadata (repeatable)");
  call->add_flag("--read", call_opts.read, "The call only reads: a stop after it was sent is not commit_ambiguous");
  call->add_flag("--idempotent", call_opts.idempotent, "Repeating the call cannot apply it twice");
  AddClientTls(call, call_opts.tls, "the target");
  call->callback([] {
    const int code = RunCall(call_opts);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace cutoff::cli
