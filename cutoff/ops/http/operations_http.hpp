// Serving a frozen operation Registry over HTTP.
//
//   cutoff::http::Server server(io.get_executor(), {.budget = {.max_budget = 30s}});
//   cutoff::ops::mount_operations(server, registry);
//   // POST /ops/orders.create   {"sku":"A-1","qty":2}   -> 200 {"order_id":...}
//   // GET  /catalog.json, GET /openapi.json
//
// - `POST {prefix}/{name}` for each operation: the body is the arguments as JSON (an empty
//   body is `{}`), the answer the result as JSON. The route's budget is the operation's
//   effective deadline, so the server binds min(that, the service maximum, the inbound
//   budget headers): Deadline-Budget-Ms can shorten an operation's budget, never lengthen it.
// - Errors use the taxonomy (docs/http.md): a JSON document
//   {"error":{"code":..,"message":..,"request_id":..}} with its status: 400 for a body that is
//   not JSON, 404 for an unknown operation, 504 with `Deadline-Expired: 1` for
//   deadline_exceeded, 500 for commit_ambiguous.
// - `Idempotency-Key: K` is passed to the invocation (InvokeOptions::idempotency_key): an
//   operation that takes keys records K with its effect, so the same key again returns the
//   first answer; an operation that does not is refused with 400 rather than run unprotected.
//   More than one Idempotency-Key header is 400.
// - `GET /catalog.json` and `GET /openapi.json` serve catalog_json() and openapi_document().
#ifndef CUTOFF_OPS_HTTP_OPERATIONS_HTTP_HPP_
#define CUTOFF_OPS_HTTP_OPERATIONS_HTTP_HPP_

#include <string>

#include "cutoff/core/clock.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/ops/catalog.hpp"
#include "cutoff/ops/registry.hpp"

namespace cutoff::ops {

struct MountOptions {
  std::string prefix = "/ops";            // operations at POST {prefix}/{name}
  std::string catalog_path = "/catalog.json";  // empty: not served
  std::string openapi_path = "/openapi.json";  // empty: not served
  std::string title = "cutoff operations";     // OpenAPI info.title
  std::string version = "0.1.0";               // OpenAPI info.version
  // How long an invocation may take to report its own stop (deadline_exceeded or
  // commit_ambiguous) before the server cancels it.
  Duration stop_grace = std::chrono::milliseconds(250);
  // Refuses an invocation whose budget is below the operation's recent service time with 504
  // deadline_exceeded before it runs (InvokerOptions::admission). Null (the default): off.
  // Set it here rather than on the routes: the invoker judges after every tightening.
  resilience::ServiceTimeAdmission* admission = nullptr;
};

// Registers the routes on `server` (before it listens). `registry` must be frozen
// (ConfigError otherwise) and outlive the server.
void mount_operations(http::Server& server, const Registry& registry, MountOptions options = {});

}  // namespace cutoff::ops

#endif  // CUTOFF_OPS_HTTP_OPERATIONS_HTTP_HPP_
