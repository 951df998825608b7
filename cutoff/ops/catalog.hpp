// The operation catalog of a frozen Registry, as JSON and as an OpenAPI 3.1 document, so
// clients can read each operation's time budget and set their own timeouts.
//
//   boost::json::value catalog = cutoff::ops::catalog_json(registry);
//   boost::json::value openapi = cutoff::ops::openapi_document(registry, {.title = "orders"});
//   std::string text = boost::json::serialize(openapi);
//
// Catalog: {"operations":[{"name", "description", "tag", "deadline_seconds" (null when none),
// "deadline_source" ("plan", "patch" or "none"), "deadline_selector" (for "patch"),
// "request_schema", "response_schema" (when declared)}, ...]}, sorted by name.
//
// OpenAPI: one `POST {path_prefix}/{name}` per operation with operationId = name, the
// description ending with "Time budget: N s." and `x-deadline-seconds: N` when a deadline is
// declared, the declared request/response schemas (a generic object otherwise), the
// Deadline-Budget-Ms request header, and the error responses of the taxonomy (400, 404, 500
// for commit_ambiguous, 503, 504 with Deadline-Expired) sharing one Error schema.
#ifndef CUTOFF_OPS_CATALOG_HPP_
#define CUTOFF_OPS_CATALOG_HPP_

#include <boost/json/value.hpp>
#include <string>

#include "cutoff/core/clock.hpp"
#include "cutoff/ops/registry.hpp"

namespace cutoff::ops {

struct OpenApiOptions {
  std::string title = "cutoff operations";
  std::string version = "0.1.0";
  std::string path_prefix = "/ops";
};

// Seconds as a JSON number, at millisecond precision rounded up (a live budget never reads
// as 0): whole seconds as an integer (5), otherwise a decimal (0.25).
boost::json::value deadline_seconds_json(Duration d);
// "5", "0.25", "1.5": the same number as text.
std::string format_seconds(Duration d);

// The operation's description followed by the sentence that states its budget ("Time
// budget: 2 s." or that none is declared): what OpenAPI and the MCP tool list show.
std::string describe_with_budget(const OperationInfo& info);

// Both throw ConfigError(not_frozen) before registry.freeze().
boost::json::value catalog_json(const Registry& registry);
boost::json::value openapi_document(const Registry& registry, const OpenApiOptions& options = {});

}  // namespace cutoff::ops

#endif  // CUTOFF_OPS_CATALOG_HPP_
