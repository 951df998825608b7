// `cutoff http relay`: one hop of a chain of services. Each request does --work-ms of work
// (an awaitable wait that honours the request's context), then calls --next with what is left
// of the budget, and answers with what it saw.
//
//   cutoff http relay --name C --port 8003 --work-ms 10000
//   cutoff http relay --name B --port 8002 --work-ms 50 --next http://127.0.0.1:8003/work
//   cutoff http relay --name A --port 8001 --work-ms 50 --next http://127.0.0.1:8002/work
//   curl -H 'Deadline-Budget-Ms: 300' http://127.0.0.1:8001/work
//
// Any hop can serve https:// (--tls-cert, --tls-key) and call an https:// --next (--ca-file).
//
// When A's budget runs out (or its caller hangs up), B and C stop within milliseconds: their
// budgets came from A's, and A's client closes its connection to B when A stops.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "conventions.hpp"
#include "cutoff/core/asio.hpp"
#include "cutoff/core/json_text.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "policy_flags.hpp"
#include "serve_loop.hpp"
#include "stderr_log.hpp"
#include "tls_flags.hpp"

namespace cutoff::cli {
namespace {

namespace asio = boost::asio;

struct RelayOptions {
  std::string name = "relay";
  std::string address = "127.0.0.1";
  int port = 0;
  std::int64_t work_ms = 0;
  std::string next;
  std::int64_t max_budget_ms = 30'000;
  std::int64_t grace_ms = 2'000;
  // How the call to --next is tried: one attempt of at most 30 s unless told otherwise.
  PolicyFlags policy = [] {
    PolicyFlags f;
    f.attempt_timeout_ms = 30'000;
    return f;
  }();
  TlsFlags tls;
  bool quiet = false;
};

std::int64_t Millis(Duration d) {
  return d == Duration::max() ? -1 : std::chrono::ceil<std::chrono::milliseconds>(d).count();
}

int RunRelay(const RelayOptions& opts) {
  if (!opts.next.empty() && !http::parse_url(opts.next)) {
    std::fprintf(stderr, "cutoff http relay: --next must be an http:// or https:// URL\n");
    return 2;
  }
  asio::io_context io(1);
  observe::Registry registry;
  http::ServerOptions server_options;
  server_options.budget.max_budget = std::chrono::milliseconds(opts.max_budget_ms);
  server_options.metrics = &registry;
  server_options.one_io_thread = true;
  server_options.tls = opts.tls.server();
  const std::string name = opts.name;
  if (!opts.quiet) server_options.log = StderrLinesOf(name);  // several relays can share a terminal
  ServeLoop loop(io, "http relay", opts.address);
  const std::unique_ptr<http::Server> served = loop.make_server(server_options);
  if (!served) return loop.exit_code();
  http::Server& server = *served;
  std::optional<http::Client> client_storage;
  try {
    client_storage.emplace(io.get_executor(), http::ClientOptions{.policy = opts.policy.policy(),
                                                                  .metrics = &registry,
                                                                  .tls = opts.tls.client()});
  } catch (const std::invalid_argument& e) {  // a --ca-file OpenSSL cannot use
    std::fprintf(stderr, "cutoff http relay: %s\n", e.what());
    return 2;
  }
  http::Client& client = *client_storage;

  server.route(
      "GET", "/work",
      [&](const http::Request&, const Context& ctx) -> asio::awaitable<http::Response> {
        const std::int64_t received = Millis(ctx.remaining());
        asio::steady_timer work(co_await asio::this_coro::executor, std::chrono::milliseconds(opts.work_ms));
        co_await with_context(ctx, work.async_wait(asio::use_awaitable));
        std::string body = "{\"service\":";
        append_json_string(body, name);
        body += ",\"budget_ms\":" + std::to_string(received);
        int status = 200;
        if (!opts.next.empty()) {
          http::Response downstream = co_await client.get(ctx, opts.next);
          body += ",\"downstream_status\":" + std::to_string(downstream.status);
          const bool json = downstream.headers.get("Content-Type").value_or("").starts_with("application/json");
          body += ",\"downstream\":" + (json && !downstream.body.empty() ? downstream.body : std::string("null"));
          if (http::deadline_expired(downstream)) {
            http::Response r = http::Response::json(504, body + "}");
            r.headers.set(cutoff::kDeadlineExpiredHeader, "1");
            co_return r;
          }
          if (downstream.status >= 500) status = 502;
        }
        body += "}";
        co_return http::Response::json(status, std::move(body));
      },
      {.name = "work"});

  const std::optional<std::uint16_t> port = loop.listen(server, opts.port);
  if (!port) return loop.exit_code();
  loop.drain_on_signals(server, std::chrono::milliseconds(opts.grace_ms));
  return loop.run(*port, " (GET /work, /metrics)");
}

}  // namespace

void AddHttpCommand(CLI::App& app) {
  CLI::App* http_app = app.add_subcommand("http", "HTTP tools");
  http_app->require_subcommand(1);
  CLI::App* relay = http_app->add_subcommand(
      "relay",
      "Serve GET /work: wait --work-ms under the request's deadline, then call --next with the rest of the\n"
      "budget. Chain several to watch a deadline cross services; /metrics shows what each one stopped.");
  static RelayOptions opts;
  relay->add_option("--name", opts.name, "Service name, in responses and log lines")->capture_default_str();
  relay->add_option("--address", opts.address, "Address to bind")->capture_default_str();
  relay->add_option("--port", opts.port, "Port to bind (0: any free port)")
      ->check(Number(0, 65535))
      ->capture_default_str();
  relay->add_option("--work-ms", opts.work_ms, "Work per request before calling --next")
      ->check(Number(std::int64_t{0}, std::int64_t{86'400'000}))
      ->capture_default_str();
  relay->add_option("--next", opts.next, "URL of the next hop (default: none, this is the last)");
  relay->add_option("--max-budget-ms", opts.max_budget_ms, "The most budget any request is granted")
      ->check(Number(std::int64_t{1}, std::int64_t{86'400'000}))
      ->capture_default_str();
  AddPolicyFlags(relay, "", "calls to --next", opts.policy, /*bulkhead=*/true, /*attempt_timeout=*/true);
  relay->add_option("--grace-ms", opts.grace_ms, "On SIGINT/SIGTERM, how long in-flight requests may finish")
      ->check(Number(std::int64_t{0}, std::int64_t{3'600'000}))
      ->capture_default_str();
  AddTlsServerFlags(relay, opts.tls);
  AddTlsClientFlags(relay, opts.tls, "calls to --next");
  relay->add_flag("--quiet", opts.quiet, "No request log on stderr");
  relay->callback([] {
    const int code = RunRelay(opts);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace cutoff::cli
