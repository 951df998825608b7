// Model Context Protocol (MCP) server sessions over a frozen operation Registry: every
// operation is a tool (tools.hpp) whose calls run through the Invoker with their budget bound.
// Transport-neutral: a transport feeds each JSON-RPC message in and writes back the reply
// (stdio.hpp for standard input and output; cutoff/ops/http/mcp_http.hpp for streamable HTTP).
//
//   cutoff::ops::mcp::Server server(registry, {.name = "orders", .version = "1.4.0"});
//   cutoff::ops::mcp::Session session(server);
//   std::optional<std::string> reply = co_await session.handle(ctx, line);
//   if (reply) write(*reply);
//   // on the transport's end: session.stop_calls(cutoff::StopReason::cancelled);
//
// What a session does:
// - `initialize` (protocol versions 2024-11-05 to 2025-11-25; the client's when known, else
//   the newest), `ping`, `tools/list`, `tools/call`, and the notifications `initialized` and
//   `cancelled`. Tools are usable once `initialize` has been answered.
// - `tools/call` runs the operation under the transport's context (a disconnect stops it)
//   with the operation's declared budget, shortened by `_meta["dev.cutoff/budget-ms"]` when
//   the client sends one. An idempotency key comes in the `idempotency_key` argument or in
//   `_meta["dev.cutoff/idempotency-key"]`. Outcomes, including deadline_exceeded and
//   commit_ambiguous, are tool results with isError (tools.hpp), not protocol errors.
// - `notifications/cancelled` stops the named call with `cancelled` within the time the
//   operation takes to notice a stop (its awaits are cancelled at once); no reply is sent for
//   a cancelled request, as the protocol asks.
// - Calls run concurrently; each session holds at most `max_calls_in_flight`, and a call
//   over that is refused at once with an `overloaded` tool result.
// - Bad input is a JSON-RPC error reply and the session carries on: -32700 for text that is
//   not JSON (or nested deeper than 64), -32600 for a message over `max_message_bytes`, a
//   batch, or a malformed message, -32601 for an unknown method, -32602 for an unknown tool
//   or malformed parameters.
//
// Thread-safe: messages of one session may be handled concurrently, from any thread.
#ifndef CUTOFF_OPS_MCP_SESSION_HPP_
#define CUTOFF_OPS_MCP_SESSION_HPP_

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "cutoff/core/context.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/ops/invoker.hpp"
#include "cutoff/ops/registry.hpp"

namespace cutoff::ops::mcp {

// The protocol versions a session speaks, newest first.
inline constexpr std::string_view kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

// One finished tools/call, for a log line.
struct CallRecord {
  std::string_view tool;
  std::string_view outcome;  // "ok" or the error code
  Duration took;
  bool cancelled_by_client;  // stopped by notifications/cancelled (no reply was sent)
};

struct ServerOptions {
  std::string name = "cutoff";  // serverInfo
  std::string version = "0.1.0";
  std::string instructions;  // initialize's `instructions`; empty: none
  std::size_t max_calls_in_flight = 64;         // per session
  std::size_t max_message_bytes = 1024 * 1024;  // one JSON-RPC message
  // Refuses calls whose budget is below the operation's recent service time
  // (InvokerOptions::admission). Null: off. Must outlive the server.
  resilience::ServiceTimeAdmission* admission = nullptr;
  // Counts calls in cutoff_mcp_tool_calls_total{tool, outcome} (outcome "ok" or the error
  // code). Null: none. Must outlive the server.
  observe::Registry* metrics = nullptr;
  // Called once per finished call, on the thread that ran it. Empty: none.
  std::function<void(const CallRecord&)> on_call;
};

// The registry's tools and the options, shared by every session.
class Server {
 public:
  // `registry` must be frozen (ConfigError otherwise) and outlive the server.
  explicit Server(const Registry& registry, ServerOptions options = {});
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  const Invoker& invoker() const noexcept { return invoker_; }
  const ServerOptions& options() const noexcept { return options_; }
  // The serialized `tools/list` result.
  const std::string& tools_list() const noexcept { return tools_list_; }
  // Counts and reports one finished call.
  void record_call(const CallRecord& record) const;

 private:
  const Registry* registry_;
  ServerOptions options_;
  Invoker invoker_;
  std::string tools_list_;
  observe::Family<observe::Counter>* calls_ = nullptr;
};

class Session {
 public:
  // `server` must outlive the session.
  explicit Session(const Server& server) : server_(&server) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Handles one JSON-RPC message. The reply to send, or nullopt for a notification, a
  // response from the client, or a request the client cancelled. Never throws for bad input.
  boost::asio::awaitable<std::optional<std::string>> handle(Context ctx, std::string_view message);

  // Stops every call in flight with `reason`, and refuses later calls with it: for a
  // transport whose client went away (cancelled) or a server shutting down (shutdown).
  void stop_calls(StopReason reason);

  std::size_t calls_in_flight() const;
  std::size_t max_message_bytes() const noexcept { return server_->options().max_message_bytes; }
  // The -32600 reply to a message over max_message_bytes, for a transport that dropped it
  // unread.
  std::string too_large_reply() const;
  // The version agreed by `initialize`; empty before it.
  std::string protocol_version() const;

 private:
  struct InFlight {
    CancelSource stop;
    bool cancelled_by_client = false;
  };

  boost::asio::awaitable<std::optional<std::string>> Call(Context ctx, std::string id_key, const boost::json::value& id,
                                                          const boost::json::value* params);
  std::string Initialize(const boost::json::value& id, const boost::json::value* params);
  void Cancel(const boost::json::value* params);

  const Server* server_;
  mutable std::mutex mu_;
  std::string protocol_version_;                 // guarded by mu_
  StopReason closed_ = StopReason::none;         // guarded by mu_
  std::map<std::string, InFlight, std::less<>> calls_;  // by serialized id; guarded by mu_
};

}  // namespace cutoff::ops::mcp

#endif  // CUTOFF_OPS_MCP_SESSION_HPP_
