// Fixture resolvers: a schema served from one JSON document, with markers for errors,
// delays, hangs and argument echoes. Used by `cutoff graphql exec`, the differential tests
// against graphql-js, and the lab.
//
//   install_fixture_resolvers(schema);                 // every field without a resolver
//   Request req{.document = doc, .root_value = Data::json(&fixture)};
//
// Each field resolves to its parent's member of the same name (absent: null), except:
//   {"$error": "msg", "$code": "X"}       the resolver raises a field error (code optional)
//   {"$delay_ms": N, "$value": V}         V after N ms (cancellable; V may hold markers)
//   {"$hang": true}                       never completes unless stopped
//   {"$arg": "name"}                      the coerced value of the field's argument `name`
// Markers also apply to list items, each at its own path. Objects of abstract types carry
// "__typename".
#ifndef CUTOFF_GRAPHQL_FIXTURE_HPP_
#define CUTOFF_GRAPHQL_FIXTURE_HPP_

#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql {

// Sets the fixture resolver on every field of every object type that has no resolver yet
// (introspection types excluded).
void install_fixture_resolvers(Schema& schema);

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_FIXTURE_HPP_
