// The example operation registry behind `cutoff ops` and `cutoff catalog`: a few operations
// in namespace `example.` that do real cooperative work under the invocation's deadline.
//
//   example.echo           returns its arguments
//   example.sleep          {"ms": N}: waits N ms, stopped by the deadline
//   example.budget         returns the budget it was given ({"remaining_ms": N or null})
//   example.orders.create  declared deadline 2 s; {"sku", "qty", "work_ms" = 200,
//                          "after_commit_ms" = 400}: works, commits, then does after-commit
//                          work. A stop in that second window is reported as
//                          commit_ambiguous. With an effects store (`cutoff ops serve`) the
//                          order is a row written in an effect region that records the
//                          caller's Idempotency-Key in the same transaction: the same key
//                          again returns the first order instead of creating another. Without
//                          one (in-process `ops call`) it notes the commit point by hand and
//                          refuses keys.
//
// One patch, "example.*" with a 10 s deadline, gives the single-segment operations their
// budget ("example.orders.create" is two segments deep, so it keeps its own).
#ifndef CUTOFF_APPS_CUTOFF_EXAMPLE_OPERATIONS_HPP_
#define CUTOFF_APPS_CUTOFF_EXAMPLE_OPERATIONS_HPP_

#include <boost/asio/awaitable.hpp>

#include "cutoff/effects/effects.hpp"
#include "cutoff/ops/registry.hpp"

namespace cutoff::cli {

// A frozen registry holding the example operations; `effects` (null: none) stores orders and
// their idempotency keys, and must outlive the registry.
ops::Registry MakeExampleRegistry(effects::Effects* effects = nullptr);

// Creates the table example.orders.create writes with an effects store (and the store's own).
boost::asio::awaitable<void> InstallExampleTables(effects::Effects& effects, sql::Pool& pool, const Context& ctx);

}  // namespace cutoff::cli

#endif  // CUTOFF_APPS_CUTOFF_EXAMPLE_OPERATIONS_HPP_
