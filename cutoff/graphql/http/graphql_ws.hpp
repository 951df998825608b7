// GraphQL over WebSocket with the graphql-transport-ws protocol (the `graphql-ws` library's),
// on cutoff::http::Server: subscriptions whose every event gets its own deadline.
//
//   cutoff::graphql::mount_graphql_ws(server, "/graphql", schema, {.subscribe = {.event_budget = 2s}});
//
// The protocol: the client sends `connection_init` (answered `connection_ack`), then any
// number of `subscribe` messages with unique ids; the server sends `next` per result, `error`
// when an operation cannot start (parse, validation, variable or source errors) and `complete`
// when it ends; either side may `ping` (answered `pong`), and the client's `complete` ends one
// operation. Protocol violations close the socket with the protocol's codes (4400 bad message,
// 4401 subscribe before init, 4408 init timeout, 4409 duplicate id, 4429 second init).
//
// Deadlines: the stream has none of its own; each event executes under its own budget
// (`subscribe.event_budget`, tightened by `@budget` caps), so a slow event is cut with
// DEADLINE_EXCEEDED at its paths and the stream goes on. A query or mutation sent over the
// socket runs under `operation_budget`. A client `complete` or a disconnect cancels what is
// executing for that operation at once (its response is then not sent).
#ifndef CUTOFF_GRAPHQL_HTTP_GRAPHQL_WS_HPP_
#define CUTOFF_GRAPHQL_HTTP_GRAPHQL_WS_HPP_

#include <chrono>
#include <string>

#include "cutoff/core/clock.hpp"
#include "cutoff/graphql/data.hpp"
#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/parser.hpp"
#include "cutoff/graphql/schema.hpp"
#include "cutoff/graphql/validation.hpp"
#include "cutoff/http/server.hpp"

namespace cutoff::graphql {

inline constexpr std::string_view kGraphQLTransportWs = "graphql-transport-ws";

struct GraphQLWsOptions {
  SubscribeOptions subscribe;  // per-event budget, stop policy, recorder
  Duration operation_budget = std::chrono::seconds(30);  // queries and mutations over the socket
  Duration connection_init_timeout = std::chrono::seconds(3);
  std::size_t max_operations = 100;  // concurrent operations per socket; more closes with 4400
  ParseOptions parse;
  ValidationOptions validation;
  Data root_value;  // must outlive the route
};

// A WebSocket handler serving `schema` (which must outlive it).
http::WebSocketHandler graphql_ws_handler(const Schema& schema, GraphQLWsOptions options = {});

// Upgrades WebSocket requests at `path` offering graphql-transport-ws. Can share its path
// with mount_graphql(): plain requests go there, upgrades here.
void mount_graphql_ws(http::Server& server, const std::string& path, const Schema& schema,
                      GraphQLWsOptions options = {}, http::RouteOptions route = {});

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_HTTP_GRAPHQL_WS_HPP_
