// One accepted connection of the server, and the list of open ones the server reaches them
// through (the timeout sweeper, shutdown).
//
//   auto c = std::make_shared<Connection>(std::move(socket), executor, tls_context_or_null);
//   live.Add(c);
//   c->SetIoDeadline(limits.header_timeout);   // the pending read is cancelled once it passes
//   live.PostToEach([](Connection& c) { ... });  // on each connection's executor
#ifndef CUTOFF_HTTP_INTERNAL_CONNECTION_HPP_
#define CUTOFF_HTTP_INTERNAL_CONNECTION_HPP_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "cutoff/core/cancel.hpp"
#include "cutoff/core/clock.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/http/internal/io_timeouts.hpp"
#include "cutoff/http/internal/stream.hpp"

namespace cutoff::http::internal {

// Lives as long as its session coroutine; the server keeps a weak reference to reach it.
// Touched only on its executor, except the deadlines the sweeper reads.
//
// One cancellation signal serves the whole session: it cancels whatever the session awaits,
// a read (timeout, shutdown) or the handler (its context stopped). Emissions are posted to the
// connection's executor and checked against `generation`, so a late one never hits the next
// phase. This costs no timer and no extra coroutine per request.
struct Connection : std::enable_shared_from_this<Connection> {
  // `tls`: the server's TLS context, for a connection that starts with a TLS handshake; null
  // for plain HTTP.
  Connection(boost::asio::ip::tcp::socket socket, boost::asio::any_io_executor ex, boost::asio::ssl::context* tls)
      : stream(std::move(socket), tls),
        executor(std::move(ex)),
        accepted(std::chrono::steady_clock::now()) {}

  Stream stream;
  boost::asio::any_io_executor executor;
  std::chrono::steady_clock::time_point accepted;
  std::string remote;  // address:port, for Request::remote_address
  // The key it counts under for the per-peer limit; empty: not counted.
  std::string peer_key;
  // Cancels whatever the session awaits.
  boost::asio::cancellation_signal cancel_signal;
  std::uint64_t generation = 0;
  // When the pending read or write is cancelled by the sweeper (through `cancel_signal`).
  SweptDeadline io_deadline;
  bool io_timed_out = false;  // the last io deadline expired
  // Like io_deadline, for writes that are not the session's own await (a WebSocket message
  // written by a route's coroutine): when it passes, the sweeper closes the socket, which
  // fails every operation on it.
  SweptDeadline close_deadline;

  bool busy = false;      // a request (or a WebSocket) is being served
  bool watching = false;  // a disconnect watch is pending
  bool serving_websocket = false;
  bool close_after = false;  // answer the current request, then close
  // Stops the current request's (or WebSocket's) context; set while it runs.
  std::optional<CancelSource> stop_source;
  std::shared_ptr<ResponseMark> response_mark;  // the current (or last) request's
  std::shared_ptr<RequestValues> values;        // the current (or last) request's, reused when free

  void SetIoDeadline(Duration timeout) {
    io_timed_out = false;
    io_deadline.SetAfter(timeout);
  }
  void SetIoDeadlineAt(std::chrono::steady_clock::time_point at) {
    io_timed_out = false;
    io_deadline.SetAt(at);
  }
  void ClearIoDeadline() { io_deadline.Clear(); }
  void SetCloseDeadline(Duration timeout) { close_deadline.SetAfter(timeout); }
  void ClearCloseDeadline() { close_deadline.Clear(); }

  // On the connection's executor, from the sweeper: cancels the read or write if `due` is
  // still the io deadline pending.
  void IoExpired(std::int64_t due);
  // On the connection's executor, from the sweeper: closes the socket if `due` is still the
  // close deadline pending.
  void CloseExpired(std::int64_t due);

  // The next request's values, all empty: the previous request's object when nothing else
  // holds it any more (only this strand can share it, so a count of one cannot change under
  // us), a new one otherwise. Reset by assigning a whole new value, so no field of
  // RequestValues, present or added later, can carry over from one request to the next.
  RequestValues& NextRequestValues();
  // The next request's response mark, unset: reused like the values. Call after
  // NextRequestValues(), which lets go of the previous request's mark.
  const std::shared_ptr<ResponseMark>& NextResponseMark();

  // Sends FIN, then closes the socket.
  void Close() { stream.Close(); }
  // The current request's response went out, or never will (its client went away).
  void MarkResponseSent() {
    if (response_mark) response_mark->mark_sent(std::chrono::steady_clock::now());
  }

  // On the connection's executor: cancels the handler of request `gen`, after `grace`.
  void StopHandler(std::uint64_t gen, Duration grace);
  // Watches the socket while request `gen` is handled: a peer that closes (or resets) stops
  // the request's context with `cancelled`. Bytes of a pipelined request end the watch.
  void WatchDisconnect(std::uint64_t gen);
  // TLS bytes wait unread while request `gen` runs: checks every 20 ms whether the peer has
  // closed behind them (a TLS 1.3 close_notify, then FIN), until the request ends.
  void RecheckDisconnect(std::uint64_t gen);
  // Reads what the peer of request `gen` did (without consuming it) and acts on it: stops the
  // request when the peer is gone, otherwise keeps (or ends) the watch.
  void CheckPeer(std::uint64_t gen);
};

// The open connections, as weak references. Thread-safe.
class LiveConnections {
 public:
  void Add(const std::shared_ptr<Connection>& c);
  // Posts `f` to each open connection's executor.
  void PostToEach(const std::function<void(Connection&)>& f);
  // Calls `visit` for each open connection while holding the list's lock (the sweeper: it
  // must not block), and forgets the closed ones.
  template <typename Visit>
  void VisitLocked(Visit&& visit) {
    std::lock_guard lock(mu_);
    for (auto it = live_.begin(); it != live_.end();) {
      if (auto c = it->lock()) {
        visit(c);
        ++it;
      } else {
        it = live_.erase(it);
      }
    }
  }

 private:
  std::mutex mu_;
  std::list<std::weak_ptr<Connection>> live_;  // guarded by mu_
};

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_CONNECTION_HPP_
