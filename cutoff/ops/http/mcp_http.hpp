// The operations of a frozen Registry as MCP tools over the protocol's streamable HTTP
// transport, mounted on an http::Server beside the operations themselves.
//
//   cutoff::ops::mount_operations(server, registry);
//   cutoff::ops::mount_mcp(server, registry, {.server = {.name = "orders"}, .metrics = &metrics});
//   // POST /mcp  {"jsonrpc":"2.0","id":1,"method":"initialize",...}  -> 200, Mcp-Session-Id: ...
//   // POST /mcp  (Mcp-Session-Id: ...) tools/list, tools/call, notifications/cancelled
//   // DELETE /mcp (Mcp-Session-Id: ...) ends the session and stops its calls
//
// - Every request is one JSON-RPC message (ops/mcp/session.hpp says what each does). A reply
//   is `application/json`; a notification, or a call the client cancelled, is 202 with no
//   body. No server-to-client stream is offered: GET is 405, as the protocol allows.
// - `initialize` opens a session and answers with its `Mcp-Session-Id` (128 random bits);
//   every later request must carry it. An unknown or ended id is 404 (the client starts a new
//   session), a missing one 400. A request whose `MCP-Protocol-Version` this server does not
//   speak is 400.
// - A call runs under the HTTP request's context: the server's budget headers and maximum
//   shorten it, and a client that hangs up stops it with `cancelled`, like any other route.
//   `notifications/cancelled` on another request stops it too.
// - Limits: at most `max_sessions` sessions (a new one first evicts sessions idle for
//   `session_idle_timeout`, then is refused with 503); each session holds at most
//   `server.max_calls_in_flight` calls; a message is at most the server's body limit.
// - DNS rebinding: a request with an `Origin` header is served only when the origin is a
//   loopback one (http or https on localhost, 127.0.0.1 or [::1], any port) or listed in
//   `allowed_origins`; others get 403. Requests without Origin (not from a browser) pass.
#ifndef CUTOFF_OPS_HTTP_MCP_HTTP_HPP_
#define CUTOFF_OPS_HTTP_MCP_HTTP_HPP_

#include <chrono>
#include <string>
#include <vector>

#include "cutoff/core/clock.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/ops/mcp/session.hpp"
#include "cutoff/ops/registry.hpp"

namespace cutoff::ops {

struct McpMountOptions {
  std::string path = "/mcp";
  mcp::ServerOptions server;  // serverInfo, per-session limits, admission, metrics
  std::size_t max_sessions = 1024;
  Duration session_idle_timeout = std::chrono::minutes(30);
  std::vector<std::string> allowed_origins;  // besides loopback ones, e.g. "https://agent.example"
  // How long a call may take to report its own stop (deadline_exceeded or commit_ambiguous)
  // before the server cancels it.
  Duration stop_grace = std::chrono::milliseconds(250);
};

// Registers POST, GET and DELETE on `options.path` (before the server listens). `registry`
// must be frozen (ConfigError otherwise) and outlive the server.
void mount_mcp(http::Server& server, const Registry& registry, McpMountOptions options = {});

}  // namespace cutoff::ops

#endif  // CUTOFF_OPS_HTTP_MCP_HTTP_HPP_
