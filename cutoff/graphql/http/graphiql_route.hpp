// Serving the GraphiQL page (graphiql_page.hpp) at a route: pointed at the server's GraphQL
// endpoint, opening with an example operation, compressed when the browser accepts it, and
// revalidated rather than sent again.
//
//   cutoff::graphql::mount_graphiql(server, "/graphiql",
//                                   {.endpoint = "/graphql", .example = "{ warehouse(id: 1) { name } }"});
//
// - The page is prepared once, at mount: its endpoint and example set, and a gzip copy made.
// - `Accept-Encoding: gzip` (any q but 0) gets the gzip copy with `Content-Encoding: gzip`;
//   every answer says `Vary: Accept-Encoding`.
// - Each answer carries a strong `ETag` (of the page and its encoding) and
//   `Cache-Control: no-cache`: a browser keeps the page and asks again with `If-None-Match`,
//   which is answered 304 with no body, so a reload costs a round trip, not 1.6 MB, and a
//   server upgrade is seen at once.
// - In the page, `?query=`, `?variables=` and `?operationName=` open that operation (and the
//   URL follows what is typed, so it can be shared); without them, the last operation typed
//   in this browser, or else `example`. The schema's description (where the operation budget
//   is declared) is shown at the top of the documentation explorer.
#ifndef CUTOFF_GRAPHQL_HTTP_GRAPHIQL_ROUTE_HPP_
#define CUTOFF_GRAPHQL_HTTP_GRAPHIQL_ROUTE_HPP_

#include <string>

#include "cutoff/graphql/schema.hpp"
#include "cutoff/http/server.hpp"

namespace cutoff::graphql {

struct GraphiqlOptions {
  std::string endpoint = "/graphql";  // where the page sends operations (same origin)
  std::string example;                // the operation a first visit opens with ("": a comment)
};

// A first operation for a schema that has no example of its own: the query root's fields that
// take no required argument and return a scalar or an enum (at most 8), or a __typename query.
std::string example_operation(const Schema& schema);

// The page with `options` applied, as served uncompressed.
std::string graphiql_page_for(const GraphiqlOptions& options);

// Routes GET (and so HEAD) `path` to the page. The route has no deadline of its own.
void mount_graphiql(http::Server& server, const std::string& path, const GraphiqlOptions& options = {});

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_HTTP_GRAPHIQL_ROUTE_HPP_
