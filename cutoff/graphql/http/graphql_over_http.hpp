// GraphQL over HTTP: serving a schema at an HTTP route, following the GraphQL-over-HTTP spec,
// with the request's deadline feeding the executor.
//
//   cutoff::http::Server server(io.get_executor(), {.budget = {.max_budget = 5s}});
//   cutoff::graphql::MetricsRecorder recorder(registry);
//   cutoff::graphql::mount_graphql(server, "/graphql", schema, {.execution = {.recorder = &recorder}},
//                                  {.name = "graphql", .budget = 2s});
//
// - POST with a JSON body {"query", "variables", "operationName", "extensions"} and GET with
//   the same as URL parameters (`variables` and `extensions` as JSON text). Mutations over GET
//   are refused with 405.
// - Media types: `application/graphql-response+json` when the client accepts it, otherwise
//   `application/json` (also for a missing Accept or */*); anything else is 406.
// - Status codes: malformed HTTP-level requests (bad JSON, missing query, wrong content type)
//   are 400/415. With application/graphql-response+json, a response without data (parse,
//   validation and variable errors) is 400 and one with data is 200, partial or not; with
//   application/json every GraphQL response is 200.
// - Deadlines: the server binds the request's budget (route budget, service maximum, inbound
//   headers) and the executor honours it per field: a deadline that fires mid-way gives a
//   partial result with DEADLINE_EXCEEDED errors (or, with StopPolicy::whole_response, a 504
//   with Deadline-Expired: 1 when the client accepts application/graphql-response+json).
// - Valid documents are cached by query text, bounded in bytes, so a hot query is parsed
//   once; invalid ones are never kept.
// - Limits: operations nested too deep or estimated too costly are refused before execution,
//   and a response that outgrows `execution.max_response_bytes` is stopped (executor.hpp);
//   both answer with one error and no data (400 with application/graphql-response+json).
#ifndef CUTOFF_GRAPHQL_HTTP_GRAPHQL_OVER_HTTP_HPP_
#define CUTOFF_GRAPHQL_HTTP_GRAPHQL_OVER_HTTP_HPP_

#include <cstddef>
#include <functional>
#include <string>

#include "cutoff/graphql/data.hpp"
#include "cutoff/graphql/document_cache.hpp"
#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/parser.hpp"
#include "cutoff/graphql/schema.hpp"
#include "cutoff/graphql/validation.hpp"
#include "cutoff/http/server.hpp"

namespace cutoff::graphql {

struct GraphQLHttpOptions {
  ExecutionOptions execution;
  ParseOptions parse;
  ValidationOptions validation;
  bool allow_get = true;
  // Valid documents are cached by query text up to about this many bytes (document_cache.hpp);
  // 0: no cache.
  std::size_t document_cache_bytes = 16 * 1024 * 1024;
  // The root value for every operation (e.g. a JSON fixture); must outlive the route.
  Data root_value;
};

// A handler serving `schema`, which must outlive it.
http::Handler graphql_http_handler(const Schema& schema, GraphQLHttpOptions options = {});

// Routes POST (and GET, when allowed) `path` to graphql_http_handler(). Unless set, the
// route's stop_grace is 250 ms: the executor returns its partial result well within it.
void mount_graphql(http::Server& server, const std::string& path, const Schema& schema,
                   GraphQLHttpOptions options = {}, http::RouteOptions route = {});

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_HTTP_GRAPHQL_OVER_HTTP_HPP_
