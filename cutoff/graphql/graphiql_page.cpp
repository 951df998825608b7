#include "cutoff/graphql/graphiql_page.hpp"

#include <cstddef>

// Defined in graphiql_page.S, around the bytes of the generated graphiql.html.
extern "C" {
extern const char cutoff_graphql_graphiql_html[] __attribute__((visibility("hidden")));
extern const char cutoff_graphql_graphiql_html_end[] __attribute__((visibility("hidden")));
}

namespace cutoff::graphql {

std::string_view graphiql_page() {
  return {cutoff_graphql_graphiql_html,
          static_cast<std::size_t>(cutoff_graphql_graphiql_html_end - cutoff_graphql_graphiql_html)};
}

}  // namespace cutoff::graphql
