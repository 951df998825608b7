// How the serving commands (graphql serve, http relay, ops serve, demo serve) bind their
// servers, stop on SIGINT or SIGTERM and say where they listen, so that each reports a port it
// cannot bind the same way (conventions.hpp, Listen), prints the same
// "listening on http://ADDRESS:PORT ..." line (https:// for a server with TLS) that scripts and tests wait for, and exits the
// same way once its servers have drained.
//
//   ServeLoop loop(io, "http relay", opts.address);
//   const std::optional<std::uint16_t> port = loop.listen(server, opts.port);
//   if (!port) return loop.exit_code();
//   loop.drain_on_signals(server, std::chrono::milliseconds(opts.grace_ms));
//   return loop.run(*port, " (GET /work, /metrics)");
#ifndef CUTOFF_APPS_CUTOFF_SERVE_LOOP_HPP_
#define CUTOFF_APPS_CUTOFF_SERVE_LOOP_HPP_

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cutoff/http/server.hpp"

namespace cutoff::cli {

class ServeLoop {
 public:
  // `command` names the command in messages ("graphql serve"); every server binds `address`.
  ServeLoop(boost::asio::io_context& io, std::string_view command, std::string address);
  ServeLoop(const ServeLoop&) = delete;
  ServeLoop& operator=(const ServeLoop&) = delete;
  ~ServeLoop();

  // The command's server; null after saying on stderr why its TLS certificate or key cannot be
  // used (exit_code() is then 2).
  std::unique_ptr<http::Server> make_server(const http::ServerOptions& options);

  // Binds `server` to the address and `port` (0: any free port). The port bound, or nullopt
  // after saying why on stderr; exit_code() is then what the command exits with (2 for an
  // --address that is not one, 1 for a port that cannot be bound).
  std::optional<std::uint16_t> listen(http::Server& server, int port);
  int exit_code() const noexcept { return exit_code_; }

  // On the first SIGINT or SIGTERM `server` logs {"event":"shutdown","signal":N} and lets
  // in-flight requests finish for `grace` (http::Server::stop_on_signals).
  void drain_on_signals(http::Server& server, std::chrono::milliseconds grace);
  // On the first SIGINT or SIGTERM, `stop` runs on the io_context instead (to stop several
  // servers together).
  void on_signal(std::function<void()> stop);

  // Prints "listening on http://ADDRESS:PORT" (https:// once a TLS server was bound) followed by `details`, then runs the io_context
  // on `threads` threads until every server has stopped. Returns the exit code: 0.
  int run(std::uint16_t port, std::string_view details = {}, int threads = 1);

 private:
  boost::asio::io_context& io_;
  std::string command_;
  std::string address_;
  int exit_code_ = 0;
  std::string scheme_ = "http";
  std::unique_ptr<boost::asio::signal_set> signals_;
};

}  // namespace cutoff::cli

#endif  // CUTOFF_APPS_CUTOFF_SERVE_LOOP_HPP_
