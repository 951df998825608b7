// Deleting many rows a batch per statement, for the sweeps of the effects store.
//
//   std::vector<sql::Value> p{before_ms};
//   std::size_t gone = co_await DeleteInBatches(conn, ctx, "cutoff_outbox", "id",
//                                               "dispatched_ms < $1", p, 1000);
#ifndef CUTOFF_EFFECTS_INTERNAL_BATCHED_DELETE_HPP_
#define CUTOFF_EFFECTS_INTERNAL_BATCHED_DELETE_HPP_

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "cutoff/core/context.hpp"
#include "cutoff/sql/connection.hpp"

namespace cutoff::effects::internal {

// Autocommit: deletes the rows of `table` that meet `condition` (which reads `params`), at
// most `batch` per statement, each statement committed on its own, until a statement deletes
// fewer; returns how many went. `key` names the rows to the subquery that picks a batch: a
// column, or the columns of a composite key, "operation, idem_key". A sweep cut by its budget keeps the
// batches it finished, so a backlog longer than one round still shrinks round by round. The
// condition is repeated outside the subquery, so a row changed meanwhile is checked again
// (PostgreSQL re-reads the outer condition against the row's newest version).
boost::asio::awaitable<std::size_t> DeleteInBatches(sql::Connection& conn, const Context& ctx, const std::string& table,
                                                    std::string_view key, std::string_view condition,
                                                    std::span<const sql::Value> params, std::size_t batch);

}  // namespace cutoff::effects::internal

#endif  // CUTOFF_EFFECTS_INTERNAL_BATCHED_DELETE_HPP_
