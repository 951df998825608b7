// The server's shared state (Server::Impl), for the two files that make up the server:
// server.cpp (routes, listening, accepting, shutdown) and session.cpp (a connection's
// requests, from reading to writing the answer). The pieces with a job of their own are in
// the other files of this directory.
#ifndef CUTOFF_HTTP_INTERNAL_SERVER_IMPL_HPP_
#define CUTOFF_HTTP_INTERNAL_SERVER_IMPL_HPP_

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/http/internal/connection.hpp"
#include "cutoff/http/internal/io_timeouts.hpp"
#include "cutoff/http/internal/peer_limits.hpp"
#include "cutoff/http/internal/route_table.hpp"
#include "cutoff/http/internal/server_log.hpp"
#include "cutoff/http/internal/server_metrics.hpp"
#include "cutoff/http/server.hpp"

namespace cutoff::http {

namespace internal {

// What became of a dispatched request: its answer, and what its log line and metrics say.
struct DispatchResult {
  std::optional<Response> response;    // nullopt: the client went away, nothing to write
  std::optional<Duration> budget;      // the budget it was bound with; nullopt: unbound
  std::optional<ErrorCode> failed;     // the error the answer reports, if any
  StopReason stop = StopReason::none;  // why the handler's context stopped, if it did
};

}  // namespace internal

struct Server::Impl : std::enable_shared_from_this<Impl> {
  Impl(boost::asio::any_io_executor ex, ServerOptions opts);

  boost::asio::any_io_executor executor;
  // Where the server's own work runs: acceptors, signals, the grace timer, the sweeper.
  boost::asio::strand<boost::asio::any_io_executor> control;
  ServerOptions options;
  std::unique_ptr<boost::asio::ssl::context> tls;  // null: plain HTTP
  internal::RouteTable routes;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> acceptors;
  std::atomic<std::size_t> connections{0};  // open (admitted) connections
  std::atomic<std::size_t> in_flight{0};    // bound handlers running
  std::atomic<bool> shutting_down{false};
  std::atomic<int> signal_number{0};
  std::unique_ptr<boost::asio::signal_set> signals;
  std::unique_ptr<boost::asio::steady_timer> grace_timer;
  std::unique_ptr<internal::IoTimeoutSweeper> sweeper;  // started by the first listen()

  // Written once: the answers to connections refused at the caps.
  const std::string at_capacity_refusal;
  const std::string peer_limit_refusal;
  std::atomic<std::size_t> refusals_in_progress{0};

  internal::PeerCounts peers;
  internal::LiveConnections live;
  internal::ServerMetrics metrics;
  internal::ServerLog log;  // writes to options.log

  Context Background() const { return options.timers ? Context::background(*options.timers) : Context::background(); }

  // server.cpp: connections coming and going, shutdown.
  boost::asio::awaitable<void> AcceptLoop(std::shared_ptr<Impl> self, boost::asio::ip::tcp::acceptor& acceptor);
  // Admits `c` under the connection caps; false (and `c` refused) when it is over one.
  bool Admit(const std::shared_ptr<internal::Connection>& c, const boost::asio::ip::tcp::endpoint& peer);
  // Answers a connection refused at a cap with `response` and closes it.
  void Refuse(std::shared_ptr<internal::Connection> c, const std::string& response);
  void ConnectionClosed(const internal::Connection& c);
  void BeginShutdown(Duration grace);
  // Starts the sweeper, once.
  void StartSweeper();

  // session.cpp: one connection's requests. `self` holds the server state for as long as the
  // session runs.
  boost::asio::awaitable<void> Session(std::shared_ptr<Impl> self, std::shared_ptr<internal::Connection> c);
  // The TLS handshake of a connection that starts with one, within the first request's header
  // timeout (from accept). False: it failed or timed out (counted), and the session ends.
  boost::asio::awaitable<bool> Handshake(internal::Connection& c);
  // Answers a request that could not be read (or was refused), before the connection closes.
  boost::asio::awaitable<void> AnswerUnreadable(internal::Connection& c, int status, const std::string& message);
  // Binds the request's context and runs its handler; the response is nullopt when the client
  // went away. `started` is when its headers were read.
  boost::asio::awaitable<std::optional<Response>> Dispatch(internal::Connection& c, internal::RouteEntry& route,
                                                           const Request& req,
                                                           std::chrono::steady_clock::time_point started);
  // Asks the route's admission whether a request with `budget` can finish in the route's
  // recent service time: true with `timing` set, or false with `result` holding the 504.
  bool AdmitByServiceTime(const internal::RouteEntry& route, Duration budget, const std::string& request_id,
                          resilience::ServiceTimeAdmission::Ticket& timing, internal::DispatchResult& result);
  // Answers a request refused before its handler ran with `e` (deadline_exceeded: its budget
  // was spent on arrival, or is below the route's recent service time).
  void RefuseAtEntry(const internal::RouteEntry& route, const Error& e, internal::DispatchResult& result);
  // The request's budget: min(route budget, service maximum, every accepted inbound budget
  // header); rejected headers are counted and logged.
  Duration BindBudget(const internal::RouteEntry& route, const Request& req, const std::string& request_id);
  // Runs the route's handler and turns anything it throws into a response: the taxonomy's
  // status for cutoff::Error, 500 (details logged, not sent) for anything else. `failed`
  // receives the code of the error it turned into a response, for the request log.
  boost::asio::awaitable<Response> RunHandler(const internal::RouteEntry& route, const Request& req, const Context& ctx,
                                              std::optional<ErrorCode>& failed);
  // The answer for a handler's error, read against the request's ledger (a stop after the
  // handler's work committed is commit_ambiguous, never a safe failure).
  Response AnswerError(const internal::RouteEntry& route, const Context& ctx, const Error& raw,
                       std::optional<ErrorCode>& failed);
  void LogRequest(const RequestValues& values, const internal::DispatchResult& result,
                  std::chrono::steady_clock::time_point started, const std::string& trace_id) const;
  // Writes `r` in one gathered send, bounded by `timeout` (through the sweeper). False when
  // the connection failed or timed out.
  boost::asio::awaitable<bool> WriteResponse(internal::Connection& c, const Response& r, unsigned version,
                                             bool keep_alive, bool head_only, Duration timeout);
};

}  // namespace cutoff::http

#endif  // CUTOFF_HTTP_INTERNAL_SERVER_IMPL_HPP_
