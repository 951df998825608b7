// http_bench_server: the servers bench/http-compare drives with wrk, side by side.
//
//   build/bin/http_bench_server --mode full      # cutoff: budgets bound, disconnect watch, metrics
//   build/bin/http_bench_server --mode plain     # cutoff's server with deadlines and metrics off
//   build/bin/http_bench_server --mode beast     # a minimal Beast keep-alive server, no cutoff
//   build/bin/http_bench_server --mode graphql   # the warehouse schema at POST /graphql (full stack)
//
// With --tls-cert and --tls-key (cutoff's modes) it serves https:// instead.
// Every mode but graphql answers GET /hello with a 6-byte body. Prints
// "listening on http://127.0.0.1:PORT" once bound; runs until SIGINT/SIGTERM.
#include <CLI/CLI.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cutoff/core/heap_tuning.hpp"
#include "cutoff/graphql/http/graphql_over_http.hpp"
#include "cutoff/graphql/metrics_recorder.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "warehouse.hpp"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

// The baseline: what a careful Beast user writes without cutoff (keep-alive, one coroutine per
// connection, no limits beyond Beast's defaults).
asio::awaitable<void> BeastSession(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    bhttp::request<bhttp::string_body> req;
    auto [ec, n] = co_await bhttp::async_read(stream, buffer, req, asio::as_tuple(asio::use_awaitable));
    if (ec) break;
    bhttp::response<bhttp::string_body> res{bhttp::status::ok, req.version()};
    res.set(bhttp::field::content_type, "text/plain; charset=utf-8");
    res.body() = req.target() == "/hello" ? "hello\n" : "";
    if (req.target() != "/hello") res.result(bhttp::status::not_found);
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    auto [wec, wn] = co_await bhttp::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
    if (wec || !req.keep_alive()) break;
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> BeastAccept(tcp::acceptor& acceptor) {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    socket.set_option(tcp::no_delay(true));
    asio::co_spawn(acceptor.get_executor(), BeastSession(std::move(socket)), asio::detached);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"HTTP servers for bench/http-compare (cutoff full stack, cutoff plain, bare Beast, GraphQL)"};
  std::string mode = "full";
  int port = 0;
  int threads = 1;
  app.add_option("--mode", mode, "full | plain | beast | graphql")
      ->check(CLI::IsMember({"full", "plain", "beast", "graphql"}))
      ->capture_default_str();
  app.add_option("--port", port, "Port (0: any free port)")->check(CLI::Range(0, 65535));
  app.add_option("--threads", threads, "I/O threads")->check(CLI::Range(1, 64))->capture_default_str();
  std::string tls_cert, tls_key;
  app.add_option("--tls-cert", tls_cert, "Serve https:// with this PEM certificate (not with --mode beast)")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-key", tls_key, "The PEM key of --tls-cert")->check(CLI::ExistingFile);
  bool default_heap = false;
  app.add_flag("--default-heap", default_heap,
               "Keep glibc's adaptive heap thresholds instead of cutoff::tune_heap_for_serving()'s");
  CLI11_PARSE(app, argc, argv);
  if (!default_heap) cutoff::tune_heap_for_serving();

  asio::io_context io(threads);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  cutoff::observe::Registry registry;
  std::unique_ptr<cutoff::http::Server> server;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<cutoff::graphql::Schema> schema;
  std::unique_ptr<cutoff::graphql::MetricsRecorder> recorder;
  std::uint16_t bound = 0;

  if (mode == "beast") {
    acceptor = std::make_unique<tcp::acceptor>(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    bound = acceptor->local_endpoint().port();
    asio::co_spawn(io, BeastAccept(*acceptor), asio::detached);
    signals.async_wait([&](auto, int) { acceptor->close(); io.stop(); });
  } else {
    cutoff::http::ServerOptions options;
    if (mode != "plain") options.metrics = &registry;
    options.one_io_thread = threads == 1;
    if (!tls_cert.empty()) options.tls = cutoff::http::TlsServerOptions{tls_cert, tls_key};
    server = std::make_unique<cutoff::http::Server>(io.get_executor(), options);
    // `plain`: the baseline, a route with no deadline binding and no disconnect watch.
    server->route(
        "GET", "/hello",
        [](const cutoff::http::Request&, const cutoff::Context&) -> asio::awaitable<cutoff::http::Response> {
          co_return cutoff::http::Response::text(200, "hello\n");
        },
        {.bind_deadline = mode != "plain"});
    if (mode == "graphql") {
      schema = cutoff::bench::BuildWarehouseSchema(false);
      recorder = std::make_unique<cutoff::graphql::MetricsRecorder>(registry);
      cutoff::graphql::GraphQLHttpOptions gql_options;
      gql_options.execution.recorder = recorder.get();
      cutoff::graphql::mount_graphql(*server, "/graphql", *schema, gql_options, {.name = "warehouse"});
    }
    bound = server->listen("127.0.0.1", static_cast<std::uint16_t>(port));
    server->stop_on_signals(std::chrono::seconds(1));
  }
  std::printf("listening on %s://127.0.0.1:%u (mode %s)\n", server && server->serves_tls() ? "https" : "http", bound,
              mode.c_str());
  std::fflush(stdout);
  std::vector<std::thread> workers;
  for (int i = 1; i < threads; ++i) workers.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : workers) t.join();
  return 0;
}
