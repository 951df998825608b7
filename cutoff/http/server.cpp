// The server's front: routes, listening and accepting (with the connection caps), shutdown.
// A connection's requests are served in internal/session.cpp; the pieces with a job of their
// own (request ids, header checks, timeouts, WebSockets, metrics, the log) are in internal/.
#include "cutoff/http/server.hpp"

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>

#include "cutoff/http/internal/responses.hpp"
#include "cutoff/http/internal/server_impl.hpp"
#include "cutoff/http/internal/tls_context.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/observe/process_metrics.hpp"

namespace cutoff::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using asio::as_tuple;
using asio::use_awaitable;
using internal::Connection;

namespace {

// Refused connections being answered at once; beyond this a refused connection is closed
// without an answer, so a connection flood costs no more than this many short coroutines.
constexpr std::size_t kMaxRefusing = 256;

std::string RemoteAddress(const tcp::endpoint& ep) {
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

}  // namespace

Server::Impl::Impl(asio::any_io_executor ex, ServerOptions opts)
    : executor(std::move(ex)),
      control(asio::make_strand(executor)),
      options(std::move(opts)),
      tls(options.tls ? internal::MakeServerTlsContext(*options.tls) : nullptr),
      at_capacity_refusal(internal::RefusalResponse("too many open connections")),
      peer_limit_refusal(internal::RefusalResponse("too many connections from this address")),
      peers(options.limits.max_connections_per_peer),
      metrics(options.metrics),
      log(options.log) {}

void Server::Impl::Refuse(std::shared_ptr<Connection> c, const std::string& response) {
  // A TLS peer could only read the answer after a handshake, and a handshake is the costliest
  // thing a connection flood can ask for: refused TLS connections are closed unanswered.
  if (c->stream.tls()) return;
  if (refusals_in_progress.fetch_add(1) >= kMaxRefusing) {
    refusals_in_progress.fetch_sub(1);
    return;  // `c` closes as it goes
  }
  asio::co_spawn(
      c->executor,
      [self = shared_from_this(), c, &response]() -> asio::awaitable<void> {
        beast::tcp_stream& stream = c->stream.tcp();
        stream.expires_after(std::chrono::seconds(1));  // answer and drain, in all
        auto [ec, n] = co_await asio::async_write(stream, asio::buffer(response), as_tuple(use_awaitable));
        boost::system::error_code e;
        stream.socket().shutdown(tcp::socket::shutdown_send, e);
        // Read what the client sent until it closes: closing with unread bytes resets the
        // connection, and a reset can destroy the 503 before the client reads it.
        std::array<char, 2048> sink;
        for (std::size_t drained = 0; !ec && drained < 64 * 1024;) {
          auto [rec, rn] = co_await stream.async_read_some(asio::buffer(sink), as_tuple(use_awaitable));
          ec = rec;
          drained += rn;
        }
        stream.socket().close(e);
        self->refusals_in_progress.fetch_sub(1);
      },
      asio::detached);
}

bool Server::Impl::Admit(const std::shared_ptr<Connection>& c, const tcp::endpoint& peer) {
  if (connections.fetch_add(1) >= options.limits.max_connections) {
    connections.fetch_sub(1);
    metrics.CountBadRequest("too_many_connections");
    Refuse(c, at_capacity_refusal);
    return false;
  }
  c->peer_key = internal::PeerKey(peer.address(), options.limits);
  if (!peers.Admit(c->peer_key)) {
    connections.fetch_sub(1);
    metrics.CountBadRequest("too_many_connections_per_peer");
    c->peer_key.clear();
    Refuse(c, peer_limit_refusal);
    return false;
  }
  return true;
}

asio::awaitable<void> Server::Impl::AcceptLoop(std::shared_ptr<Impl> self, tcp::acceptor& acceptor) {
  for (;;) {
    // Each connection on its own strand, unless the io_context runs on one thread anyway.
    asio::any_io_executor conn_executor =
        options.one_io_thread ? executor : asio::any_io_executor(asio::make_strand(executor));
    auto [ec, socket] = co_await acceptor.async_accept(conn_executor, as_tuple(use_awaitable));
    if (shutting_down.load()) co_return;
    if (ec) {
      if (ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor) co_return;
      // Out of descriptors or a transient network error: back off briefly, keep serving.
      asio::steady_timer pause(control, std::chrono::milliseconds(10));
      co_await pause.async_wait(as_tuple(use_awaitable));
      continue;
    }
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    socket.set_option(asio::socket_base::keep_alive(true), ignored);
    const tcp::endpoint peer = socket.remote_endpoint(ignored);
    auto c = std::make_shared<Connection>(std::move(socket), conn_executor, tls.get());
    if (!Admit(c, peer)) continue;
    c->remote = RemoteAddress(peer);
    metrics.ConnectionOpened();
    live.Add(c);
    asio::cancellation_signal& signal = c->cancel_signal;
    asio::co_spawn(conn_executor, Session(self, c), asio::bind_cancellation_slot(signal.slot(), asio::detached));
  }
}

void Server::Impl::ConnectionClosed(const Connection& c) {
  peers.Release(c.peer_key);
  metrics.ConnectionClosed();
  if (connections.fetch_sub(1) == 1 && shutting_down.load()) {
    // The last connection is gone: let the io_context run out of work.
    asio::post(control, [self = shared_from_this()] {
      if (self->grace_timer) self->grace_timer->cancel();
      if (self->sweeper) self->sweeper->Stop();
    });
  }
}

void Server::Impl::StartSweeper() {
  if (sweeper) return;
  sweeper = std::make_unique<internal::IoTimeoutSweeper>(control, internal::SweepInterval(options.limits));
  asio::post(control, [self = shared_from_this()] {
    self->sweeper->Start(self->live, self,
                         [impl = self.get()] { return impl->shutting_down.load() && impl->connections.load() == 0; });
  });
}

void Server::Impl::BeginShutdown(Duration grace) {
  if (shutting_down.exchange(true)) return;
  auto self = shared_from_this();
  asio::post(control, [self, grace] {
    for (auto& a : self->acceptors) {
      boost::system::error_code ignored;
      a->close(ignored);
    }
    if (self->signals) {
      boost::system::error_code ignored;
      self->signals->cancel(ignored);
    }
    // Idle connections close now; busy ones answer their request, then close.
    self->live.PostToEach([](Connection& c) {
      if (c.busy && !c.stop_source) return;
      if (c.busy) {
        c.close_after = true;
        return;
      }
      boost::system::error_code ignored;
      c.stream.socket().close(ignored);
    });
    if (self->connections.load() == 0) {
      if (self->sweeper) self->sweeper->Stop();
      return;
    }
    self->grace_timer = std::make_unique<asio::steady_timer>(self->control, grace);
    self->grace_timer->async_wait([self](const boost::system::error_code& ec) {
      if (ec) return;  // every connection closed in time
      self->live.PostToEach([](Connection& c) {
        if (c.stop_source) c.stop_source->request_stop(StopReason::shutdown);
        if (!c.stop_source || c.serving_websocket) {
          boost::system::error_code ignored;
          c.stream.socket().close(ignored);
        }
      });
    });
  });
}

Server::Server(asio::any_io_executor executor, ServerOptions options)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(options))) {
  if (impl_->options.metrics && impl_->options.serve_metrics) {
    observe::Registry* registry = impl_->options.metrics;
    // What every Prometheus client library serves, so a scrape tells processes apart.
    observe::register_process_metrics(*registry);
    observe::register_build_info(*registry);
    route("GET", "/metrics",
          [registry](const Request&, const Context&) -> asio::awaitable<Response> {
            co_return Response::text(200, registry->expose(), "text/plain; version=0.0.4; charset=utf-8");
          },
          {.name = "metrics", .bind_deadline = false});
  }
  if (impl_->options.serve_health) {
    Impl* impl = impl_.get();
    route("GET", "/healthz",
          [impl](const Request&, const Context&) -> asio::awaitable<Response> {
            if (impl->shutting_down.load()) co_return Response::text(503, "shutting down\n");
            co_return Response::text(200, "ok\n");
          },
          {.name = "healthz", .bind_deadline = false});
  }
}

Server::~Server() {
  // Sessions share the Impl; stop accepting and let them wind down on the io_context.
  impl_->BeginShutdown(Duration::zero());
}

void Server::route(std::string method, std::string path, Handler handler, RouteOptions options) {
  internal::RouteEntry& r = impl_->routes.Add(std::move(method), std::move(path), std::move(options));
  r.handler = std::move(handler);
  r.series = impl_->metrics.SeriesFor(r.name);
  if (r.options.admission && r.options.bind_deadline) r.admission_key = r.options.admission->key(r.name);
}

void Server::websocket(std::string path, WebSocketHandler handler, std::vector<std::string> subprotocols,
                       RouteOptions options) {
  internal::RouteEntry& r = impl_->routes.Add({}, std::move(path), std::move(options));
  r.ws_handler = std::move(handler);
  r.subprotocols = std::move(subprotocols);
  r.series = impl_->metrics.SeriesFor(r.name);
}

std::uint16_t Server::listen(std::string_view address, std::uint16_t port) {
  const tcp::endpoint endpoint(asio::ip::make_address(std::string(address)), port);
  auto acceptor = std::make_unique<tcp::acceptor>(impl_->control);
  acceptor->open(endpoint.protocol());
  acceptor->set_option(asio::socket_base::reuse_address(true));
  acceptor->bind(endpoint);
  acceptor->listen(asio::socket_base::max_listen_connections);
  const auto bound = acceptor->local_endpoint().port();
  tcp::acceptor& ref = *acceptor;
  impl_->acceptors.push_back(std::move(acceptor));
  impl_->StartSweeper();
  asio::co_spawn(impl_->control, impl_->AcceptLoop(impl_, ref), asio::detached);
  return bound;
}

void Server::shutdown(Duration grace) { impl_->BeginShutdown(grace); }

void Server::stop_on_signals(Duration grace) {
  impl_->signals = std::make_unique<asio::signal_set>(impl_->control, SIGINT, SIGTERM);
  impl_->signals->async_wait([impl = impl_, grace](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    impl->signal_number.store(signal);
    impl->log.ShutdownSignal(signal);
    impl->BeginShutdown(grace);
  });
}

int Server::stop_signal() const noexcept { return impl_->signal_number.load(); }
bool Server::serves_tls() const noexcept { return impl_->tls != nullptr; }
std::size_t Server::open_connections() const noexcept { return impl_->connections.load(); }
const std::function<void(std::string_view line)>& Server::log_sink() const noexcept { return impl_->options.log; }
std::size_t Server::requests_in_flight() const noexcept { return impl_->in_flight.load(); }

}  // namespace cutoff::http
