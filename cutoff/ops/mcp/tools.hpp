// The operations of a frozen Registry as Model Context Protocol tools: what `tools/list`
// shows and how a `tools/call` outcome reads to an agent.
//
//   boost::json::object list = cutoff::ops::mcp::tools_list_result(registry);
//   // {"tools":[{"name":"example.sleep","description":"Waits ... Time budget: 10 s.",
//   //            "inputSchema":{...},"outputSchema":{...},"_meta":{"dev.cutoff/deadline-seconds":10}}]}
//   boost::json::object ok = cutoff::ops::mcp::tool_success(result, tool_has_output_schema);
//   boost::json::object failed = cutoff::ops::mcp::tool_failure(error, keyed);
//
// - Each operation is one tool named after it. Its description is the operation's
//   description followed by the same budget sentence as the OpenAPI document ("Time budget:
//   2 s."), so a model reading the list knows how long a call may take.
// - `inputSchema` is the operation's declared request schema when it is a JSON object schema,
//   otherwise any object. An operation that takes idempotency keys gains an optional
//   `idempotency_key` string argument (unless its own schema already has one), because an
//   agent can only set arguments; the key can also come in `_meta` (session.hpp).
// - `outputSchema` is the declared response schema when it is an object schema; a successful
//   call then carries the result as `structuredContent` as well as text.
// - A failed call is a tool result with `isError: true` (not a protocol error), so the agent
//   sees it: the text states the code, whether retrying makes sense and what to do, and
//   `_meta["dev.cutoff/error"]` holds {code, message, retryable, request_id} for programs.
//   A commit_ambiguous result says the effect may exist and not to retry without the
//   idempotency key (or that retrying with the same key is safe, when one was given).
#ifndef CUTOFF_OPS_MCP_TOOLS_HPP_
#define CUTOFF_OPS_MCP_TOOLS_HPP_

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string_view>

#include "cutoff/core/error.hpp"
#include "cutoff/ops/registry.hpp"

namespace cutoff::ops::mcp {

// The argument name that carries an idempotency key for operations that take one.
inline constexpr std::string_view kIdempotencyKeyArgument = "idempotency_key";
// `_meta` keys a client may set on tools/call: a budget in milliseconds that can only
// shorten the operation's, and an idempotency key.
inline constexpr std::string_view kBudgetMetaKey = "dev.cutoff/budget-ms";
inline constexpr std::string_view kIdempotencyKeyMetaKey = "dev.cutoff/idempotency-key";
// `_meta` keys the server sets: a tool's budget in seconds; a failed call's error.
inline constexpr std::string_view kDeadlineMetaKey = "dev.cutoff/deadline-seconds";
inline constexpr std::string_view kErrorMetaKey = "dev.cutoff/error";

// One tool definition; `op` must belong to a frozen registry.
boost::json::object tool_definition(const ResolvedOperation& op);
// {"tools":[...]} in the registry's order (by name). ConfigError(not_frozen) before freeze().
boost::json::object tools_list_result(const Registry& registry);

// True when the tool takes its idempotency key as the `idempotency_key` argument.
bool takes_key_argument(const OperationInfo& info);
// True when tool_definition() declares an outputSchema for the operation.
bool has_output_schema(const OperationInfo& info);

// The CallToolResult for a successful invocation.
boost::json::object tool_success(const boost::json::value& result, bool structured);
// The CallToolResult (isError) for a failed one; `keyed`: the call carried an idempotency key.
boost::json::object tool_failure(const Error& error, bool keyed);

}  // namespace cutoff::ops::mcp

#endif  // CUTOFF_OPS_MCP_TOOLS_HPP_
