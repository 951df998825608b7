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
//
// Slow readers: a socket's outbound queue is bounded in bytes (`max_queued_bytes`) with
// backpressure; a client that stops reading stops getting work done for it, is closed with
// 1013 (try again later) when replies already under way overflow the bound, and is dropped
// when a write stalls for `write_timeout`.
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
  // Concurrent operations per socket; one more closes with 4400. An operation holds its slot
  // until its last message has been written to the socket, not merely queued.
  std::size_t max_operations = 100;
  // Bytes of replies queued for one socket and not yet written (the one being written
  // included). At a quarter of it the socket stops taking work: no message from the client is
  // read (so no operation starts) and no subscription pulls its next event, until the queue is
  // down to an eighth. Past the whole bound (operations already running replied at once) the
  // queue is dropped and the socket is closed with 1013. A single reply larger than the bound
  // is replaced by an `error` for its operation (RESPONSE_TOO_LARGE), which then ends.
  std::size_t max_queued_bytes = 4 * 1024 * 1024;
  // How long one outbound message (or the close handshake) may take to be written. A peer
  // that does not read for that long is dropped without a close frame (none could reach it)
  // and everything running for it is cancelled.
  Duration write_timeout = std::chrono::seconds(30);
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
