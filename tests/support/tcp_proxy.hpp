// Test support: a loopback TCP proxy that can stall the client-to-server direction, so a test
// can hold a client in the middle of sending (its writes block once the socket buffers fill).
//
//   cutoff::test_support::TcpProxy proxy("127.0.0.1", 5432);
//   proxy.pause_upstream(true);        // stop reading what clients send
//   connect to 127.0.0.1:proxy.port() ...
#ifndef CUTOFF_TESTS_SUPPORT_TCP_PROXY_HPP_
#define CUTOFF_TESTS_SUPPORT_TCP_PROXY_HPP_

#include <array>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace cutoff::test_support {

class TcpProxy {
 public:
  TcpProxy(const std::string& host, unsigned short port)
      : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}),
        target_(boost::asio::ip::make_address(host), port) {
    boost::asio::co_spawn(io_, Accept(), boost::asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TcpProxy() {
    io_.stop();
    thread_.join();
  }

  unsigned short port() const { return acceptor_.local_endpoint().port(); }
  void pause_upstream(bool paused) { paused_ = paused; }

 private:
  using tcp = boost::asio::ip::tcp;

  boost::asio::awaitable<void> Accept() {
    for (;;) {
      auto client = std::make_shared<tcp::socket>(co_await acceptor_.async_accept(boost::asio::use_awaitable));
      auto server = std::make_shared<tcp::socket>(io_);
      co_await server->async_connect(target_, boost::asio::use_awaitable);
      boost::asio::co_spawn(io_, Pump(client, server, true), boost::asio::detached);
      boost::asio::co_spawn(io_, Pump(server, client, false), boost::asio::detached);
    }
  }

  boost::asio::awaitable<void> Pump(std::shared_ptr<tcp::socket> from, std::shared_ptr<tcp::socket> to,
                                    bool upstream) {
    std::array<char, 16384> buf;
    boost::asio::steady_timer nap(io_);
    try {
      for (;;) {
        while (upstream && paused_) {
          nap.expires_after(std::chrono::milliseconds(1));
          co_await nap.async_wait(boost::asio::use_awaitable);
        }
        std::size_t n = co_await from->async_read_some(boost::asio::buffer(buf), boost::asio::use_awaitable);
        co_await boost::asio::async_write(*to, boost::asio::buffer(buf.data(), n), boost::asio::use_awaitable);
      }
    } catch (...) {
      boost::system::error_code ignored;
      from->close(ignored);
      to->close(ignored);
    }
  }

  boost::asio::io_context io_;
  tcp::acceptor acceptor_;
  tcp::endpoint target_;
  std::atomic<bool> paused_{false};
  std::thread thread_;
};

}  // namespace cutoff::test_support

#endif  // CUTOFF_TESTS_SUPPORT_TCP_PROXY_HPP_
