// The GraphiQL page: one self-contained HTML document (GraphiQL 3, React and graphql-js,
// script and style inlined, fonts as data: URLs) built from web/graphiql/ at build time and
// embedded in the library, so serving it needs no files and nothing from a CDN. To serve it,
// mount_graphiql() (http/graphiql_route.hpp) sets its endpoint and example and compresses it.
//
//   std::string_view page = cutoff::graphql::graphiql_page();
//   response.set(http::field::content_type, "text/html; charset=utf-8");
//   response.body() = page;
//
// The page sends queries to "/graphql" on its own origin: POST, JSON body, and it shows any
// JSON answer (application/graphql-response+json or application/json) whatever the status. A
// server that mounts GraphQL elsewhere sets the root element's data-endpoint attribute (the
// page contains `data-endpoint="/graphql"` exactly once), or a same-origin ?endpoint=PATH on
// the page's URL overrides it. The script and style are inline: a Content-Security-Policy
// header must allow inline scripts and styles for this page.
#ifndef CUTOFF_GRAPHQL_GRAPHIQL_PAGE_HPP_
#define CUTOFF_GRAPHQL_GRAPHIQL_PAGE_HPP_

#include <string_view>

namespace cutoff::graphql {

// The page, UTF-8. Static storage: the view is valid for the life of the program.
std::string_view graphiql_page();

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_GRAPHIQL_PAGE_HPP_
