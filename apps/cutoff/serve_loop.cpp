#include "serve_loop.hpp"

#include <csignal>
#include <stdexcept>
#include <cstdio>
#include <thread>
#include <utility>
#include <vector>

#include "conventions.hpp"
#include "cutoff/http/server.hpp"

namespace cutoff::cli {

ServeLoop::ServeLoop(boost::asio::io_context& io, std::string_view command, std::string address)
    : io_(io), command_(command), address_(std::move(address)) {}

ServeLoop::~ServeLoop() = default;

std::unique_ptr<http::Server> ServeLoop::make_server(const http::ServerOptions& options) {
  try {
    return std::make_unique<http::Server>(io_.get_executor(), options);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "cutoff %s: %s\n", command_.c_str(), e.what());
    exit_code_ = 2;
    return nullptr;
  }
}

std::optional<std::uint16_t> ServeLoop::listen(http::Server& server, int port) {
  if (server.serves_tls()) scheme_ = "https";
  return Listen(server, command_, address_, port, &exit_code_);
}

void ServeLoop::drain_on_signals(http::Server& server, std::chrono::milliseconds grace) {
  server.stop_on_signals(grace);
}

void ServeLoop::on_signal(std::function<void()> stop) {
  signals_ = std::make_unique<boost::asio::signal_set>(io_, SIGINT, SIGTERM);
  signals_->async_wait([stop = std::move(stop)](const boost::system::error_code& ec, int) {
    if (!ec) stop();
  });
}

int ServeLoop::run(std::uint16_t port, std::string_view details, int threads) {
  std::printf("listening on %s://%s:%u%.*s\n", scheme_.c_str(), address_.c_str(), port,
              static_cast<int>(details.size()), details.data());
  std::fflush(stdout);
  std::vector<std::thread> workers;
  for (int i = 1; i < threads; ++i) workers.emplace_back([this] { io_.run(); });
  io_.run();
  for (auto& t : workers) t.join();
  return 0;
}

}  // namespace cutoff::cli
