// Preparing documents for the transports without holding the event loop, and giving the
// memory of large requests back afterwards.
//
//   PreparedOperation p = co_await prepare_operation(schema, query, operation_name, parse, validation, &cache);
//   if (!p.prepared->ok()) return send_errors(p.prepared->errors);
//   if (p.operation && p.operation->type == OperationType::subscription) ...
//   ...
//   if (p.large) return_freed_memory_soon();
#ifndef CUTOFF_GRAPHQL_INTERNAL_PREPARATION_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_PREPARATION_HPP_

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <memory>
#include <string>

#include "cutoff/graphql/document_cache.hpp"
#include "cutoff/graphql/executor.hpp"

namespace cutoff::graphql::internal {

// Documents from this size on are parsed and validated off the event loop.
inline constexpr std::size_t kPrepareInlineBytes = 16 * 1024;

// Prepares `query` (through `cache` when not null): inline when it is small, otherwise on one
// shared preparation thread while the caller's executor serves others (a 600 KB document
// takes ~30 ms). Resumes on the caller's executor. `schema` and `cache` must outlive it; the
// options are copied (a coroutine keeps its reference parameters, not what they refer to).
boost::asio::awaitable<std::shared_ptr<const PreparedDocument>> prepare_off_loop_if_large(
    const Schema& schema, std::string query, ParseOptions parse_options, ValidationOptions validation_options,
    DocumentCache* cache);

// A transport's request made ready to run: parsed, validated and its operation selected.
struct PreparedOperation {
  std::shared_ptr<const PreparedDocument> prepared;  // prepared->errors: why it cannot run
  // The operation the name selects (or the only one); null when there are errors or the name
  // selects none (execute() then reports why).
  const OperationDefinition* operation = nullptr;
  bool large = false;  // prepared off the loop: give memory back once the request is done
};

// Parse → validate → select, the sequence every transport runs on a request's document
// (prepare_off_loop_if_large, then select_operation).
boost::asio::awaitable<PreparedOperation> prepare_operation(const Schema& schema, std::string query,
                                                            std::string operation_name, ParseOptions parse_options,
                                                            ValidationOptions validation_options,
                                                            DocumentCache* cache);

// After a request that allocated a lot: glibc keeps freed pages, so a few hostile requests
// would leave the process tens of MB above its baseline for good. Returns them to the system
// (malloc_trim) on the preparation thread a moment later, at most once a second.
void return_freed_memory_soon();

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_PREPARATION_HPP_
