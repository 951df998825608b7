// A gRPC server (gRPC C++'s callback API) that binds each call's deadline at entry and stops
// its handler when the budget runs out, the client cancels or the process shuts down: the
// same contract as http::Server, on the transport C++ services mostly speak.
//
//   boost::asio::io_context io;
//   cutoff::observe::Registry metrics;
//   cutoff::grpc::ServerOptions options;
//   options.budget.max_budget = 10s;
//   options.metrics = &metrics;
//   cutoff::grpc::Server server(io.get_executor(), options);
//   cutoff::grpc::MethodOptions get_stock;
//   get_stock.budget = 2s;
//   server.unary("/inventory.v1.Inventory/GetStock",
//                [&](std::string request, const cutoff::Context& ctx) -> boost::asio::awaitable<std::string> {
//                  co_return co_await stock.answer(ctx, request);  // serialized messages in and out
//                }, get_stock);
//   server.listen("127.0.0.1", 50051);
//   io.run();
//
// What happens to a call:
// - The deadline is bound once, before the handler runs: min(the gRPC deadline the client
//   sent as grpc-timeout, the service maximum, the method's declared budget, and every
//   budget header of budget_headers.hpp sent as metadata: deadline-budget-ms,
//   x-request-deadline within the clock-skew bound, legacy names). Rejected values are counted
//   and never used. A call whose budget is already spent fails with DEADLINE_EXCEEDED before
//   any handler runs.
// - The client's cancellation (RST_STREAM; gRPC's OnCancel) stops the handler's context with
//   `cancelled`; gRPC's own deadline with `deadline_exceeded`; shutdown with `shutdown`. The
//   handler coroutine is cancelled (Asio terminal) when its context stops.
// - A handler that throws cutoff::Error is answered with the status of the core error table
//   (DEADLINE_EXCEEDED, CANCELLED, UNAVAILABLE, ...) and the taxonomy's code in the trailer
//   `cutoff-error-code`; internal details are not sent. A call whose work passed a commit
//   point (its ledger) and then failed or stopped is answered `commit_ambiguous` (UNKNOWN).
// - `x-request-id` is accepted (or generated) and echoed in the initial metadata;
//   `traceparent` is continued. One JSON log line per call goes to `options.log`.
// - A server-streaming method produces its messages one at a time under the call's deadline
//   (gRPC's: it bounds the whole stream), each with its own budget when the method sets one.
// - Limits: request message size, calls in flight (past it: RESOURCE_EXHAUSTED before the
//   handler), concurrent streams per connection and metadata size.
//
// Threads: gRPC runs the calls' callbacks on its own threads; handlers run on `executor`, each
// call on a strand of its own, except unary_inline's, which run on gRPC's thread.
#ifndef CUTOFF_GRPC_SERVER_HPP_
#define CUTOFF_GRPC_SERVER_HPP_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cutoff/core/budget_headers.hpp"
#include "cutoff/core/clock.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/grpc/tls.hpp"

namespace cutoff {
class DeadlineTimerService;
namespace observe {
class Registry;
}
}  // namespace cutoff

namespace cutoff::grpc {

// A unary method: the serialized request message in, the serialized response out. Throw
// cutoff::Error to fail the call with its status.
using UnaryHandler = std::function<boost::asio::awaitable<std::string>(std::string request, const Context& ctx)>;

// A unary method that answers at once, on the gRPC thread that read the request: no hop to the
// server's executor and no coroutine, for work that never waits (an in-memory lookup, a
// computation). It must not block: gRPC's callback threads are few and shared by every call.
// Its context is bound exactly as an awaitable handler's; since nothing can interrupt a
// function mid-call, it sees a stop through ctx.check() or ctx.stop_requested().
using InlineUnaryHandler = std::function<std::string(std::string request, const Context& ctx)>;

// A server-streaming method: called for message `index` = 0, 1, 2, ... until it returns
// nullopt, which ends the stream with OK. `message_ctx` is the call's context, tightened by
// MethodOptions::message_budget: a message its producer cannot make in time is skipped (and
// counted) and the stream goes on, as a GraphQL subscription's slow event is cut; the call's
// own deadline ends the whole stream.
using ServerStreamHandler = std::function<boost::asio::awaitable<std::optional<std::string>>(
    const std::string& request, std::size_t index, const Context& message_ctx)>;

struct MethodOptions {
  std::optional<Duration> budget;          // the method's declared budget (tightens the caller's)
  std::optional<Duration> message_budget;  // server streaming: each message's own, within the call's
};

struct ServerLimits {
  std::size_t max_request_bytes = 4 * 1024 * 1024;  // a larger message fails RESOURCE_EXHAUSTED
  std::size_t max_calls_in_flight = 1024;           // past it: RESOURCE_EXHAUSTED at once
  std::size_t max_streams_per_connection = 100;     // HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS
  std::size_t max_metadata_bytes = 16 * 1024;       // request headers and metadata
  // From accept to a complete HTTP/2 (and TLS) handshake; a connection that says nothing is
  // closed then.
  Duration handshake_timeout = std::chrono::seconds(10);
  // A connection with no call for this long is closed (gracefully, with GOAWAY).
  Duration idle_timeout = std::chrono::seconds(60);
};

struct ServerOptions {
  std::optional<TlsServerOptions> tls;  // set: TLS (gRPC's SSL credentials); throws if unreadable
  ServerLimits limits;
  BudgetPolicy budget;  // the service maximum, the clock-skew bound, legacy header names
  observe::Registry* metrics = nullptr;
  std::function<void(std::string_view line)> log;  // one JSON line per call; null: discarded
  DeadlineTimerService* timers = nullptr;           // null: the process-wide service
};

class Server {
 public:
  Server(boost::asio::any_io_executor executor, ServerOptions options);
  // Shuts down at once if shutdown() was not called, and waits for the calls. Calls finish on
  // `executor`: destroy the server on another thread while the executor still runs (never
  // from one of its own handlers, never after its io_context stopped), or it waits forever.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // `full_method` is gRPC's path, "/package.Service/Method". Register before listen().
  void unary(std::string full_method, UnaryHandler handler, MethodOptions options = {});
  // The same for a handler that answers at once on gRPC's thread (InlineUnaryHandler).
  void unary_inline(std::string full_method, InlineUnaryHandler handler, MethodOptions options = {});
  // A server-streaming method: one request message, then the messages `next` produces, each
  // written once the client's flow control takes it (a client that stops reading holds one
  // message, not a queue).
  void server_streaming(std::string full_method, ServerStreamHandler next, MethodOptions options = {});

  // Starts serving; returns the bound port (0 picks a free one). Throws std::runtime_error
  // when the address cannot be bound. Once only.
  std::uint16_t listen(std::string_view address, std::uint16_t port);

  // Stops taking calls; calls in flight may finish within `grace`, then their contexts stop
  // with `shutdown` (answered UNAVAILABLE). Returns at once; the destructor waits for the end.
  // Thread-safe; once only.
  void shutdown(Duration grace);

  std::size_t calls_in_flight() const noexcept;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace cutoff::grpc

#endif  // CUTOFF_GRPC_SERVER_HPP_
