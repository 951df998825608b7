// The example operation registry behind `cutoff ops` and `cutoff catalog`: a few operations
// in namespace `example.` that do real cooperative work under the invocation's deadline.
//
//   example.echo           returns its arguments
//   example.sleep          {"ms": N}: waits N ms, stopped by the deadline
//   example.budget         returns the budget it was given ({"remaining_ms": N or null})
//   example.orders.create  declared deadline 2 s; {"sku", "qty", "work_ms" = 200,
//                          "after_commit_ms" = 400}: works, notes a commit point in the
//                          invocation's CommitLedger, then does after-commit work. A stop in
//                          that second window is reported as commit_ambiguous.
//
// One patch, "example.*" with a 10 s deadline, gives the single-segment operations their
// budget ("example.orders.create" is two segments deep, so it keeps its own).
#ifndef CUTOFF_APPS_CUTOFF_EXAMPLE_OPERATIONS_HPP_
#define CUTOFF_APPS_CUTOFF_EXAMPLE_OPERATIONS_HPP_

#include "cutoff/ops/registry.hpp"

namespace cutoff::cli {

// A frozen registry holding the example operations.
ops::Registry MakeExampleRegistry();

}  // namespace cutoff::cli

#endif  // CUTOFF_APPS_CUTOFF_EXAMPLE_OPERATIONS_HPP_
