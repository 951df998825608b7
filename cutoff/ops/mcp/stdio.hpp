// The MCP stdio transport: one Session over a pair of file descriptors, one JSON-RPC
// message per line (what `cutoff ops mcp` runs on standard input and output).
//
//   cutoff::ops::mcp::Server server(registry);
//   cutoff::ops::mcp::Session session(server);
//   co_await cutoff::ops::mcp::serve_stdio(ctx, session, STDIN_FILENO, STDOUT_FILENO);
//
// - Messages are handled concurrently as they arrive: a slow tool call does not hold back a
//   ping, a tools/list or the `notifications/cancelled` that stops it.
// - The end of the input means the client is gone: calls still running stop with
//   `cancelled`. A stop of `ctx` (e.g. SIGTERM) stops them with its reason. serve_stdio
//   returns once every call has returned and its reply has been written (or the output is
//   gone, or `flush_timeout` passed), so nothing keeps running behind the caller's back.
// - A line longer than the session's max_message_bytes is answered with a -32600 error and
//   skipped, without being held in memory. Empty lines are ignored; "\r\n" ends a line too.
// - A client that stops reading: replies queue up to `max_queued_output_bytes`, then no
//   further input is read until the queue drains, so memory stays bounded.
// - Blocking reads and writes run on two threads of their own: descriptors that cannot be
//   polled through Asio (a regular file as input) work too, and the event loop never blocks.
#ifndef CUTOFF_OPS_MCP_STDIO_HPP_
#define CUTOFF_OPS_MCP_STDIO_HPP_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/ops/mcp/session.hpp"

namespace cutoff::ops::mcp {

struct StdioOptions {
  std::size_t max_queued_output_bytes = 8 * 1024 * 1024;
  // After the last reply is queued, how long writing it may take before it is given up.
  Duration flush_timeout = std::chrono::seconds(5);
};

// Serves `session` until `in_fd` ends or `ctx` stops (see above). Does not close either
// descriptor. Throws std::system_error when a descriptor cannot be used at all.
boost::asio::awaitable<void> serve_stdio(Context ctx, Session& session, int in_fd, int out_fd,
                                         StdioOptions options = {});

}  // namespace cutoff::ops::mcp

#endif  // CUTOFF_OPS_MCP_STDIO_HPP_
