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
//
// Subscription root fields get a source stream (Schema::subscribe) from their value:
//   {"$events": [E1, E2, ...], "$interval_ms": N}
//                                         a stream of the events E1, E2, ... (the first at
//                                         once, then one every N ms; default 0), then the end;
//                                         markers inside an event ($delay_ms, $hang, $error,
//                                         ...) apply when that event executes, so an event can
//                                         overrun its event budget
//   {"$events": [...], "$error": "msg", "$code": "X"}
//                                         the same, but the stream fails after the events
//   {"$events": {"$error": "msg", "$code": "X"}}
//                                         the source resolver raises: the subscription does
//                                         not start
//   any other value V                     a stream of one event, V (so executing a
//                                         subscription once behaves like a query)
// The root field's value for an event is the event itself, its markers interpreted as above.
#ifndef CUTOFF_GRAPHQL_FIXTURE_HPP_
#define CUTOFF_GRAPHQL_FIXTURE_HPP_

#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql {

// Sets the fixture resolver on every field of every object type that has no resolver yet
// (introspection types excluded), and the fixture source on every subscription root field
// that has no source resolver yet.
void install_fixture_resolvers(Schema& schema);

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_FIXTURE_HPP_
