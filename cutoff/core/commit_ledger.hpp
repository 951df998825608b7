// CommitLedger: whether an invocation may already have made something durable.
//
// A stop that lands after work was committed must not be reported as a safe failure. The
// layer that commits (an effect region, a transaction) notes the commit point in the ledger
// carried by the request's Context; the layer that reports the outcome (an operation
// invocation, a server) reads it when a stop arrives and answers `commit_ambiguous` instead of
// `deadline_exceeded` or `cancelled`.
//
//   auto ledger = std::make_shared<cutoff::CommitLedger>();
//   cutoff::Context inv = ctx.with_commit_ledger(ledger);  // children share it
//   ...                                                    // an effect region commits
//   if (inv.stop_requested() && ledger->may_have_written())
//     throw cutoff::Error(cutoff::ErrorCode::commit_ambiguous, "...");
//
// A ledger is shared by everything that works for one invocation, including nested
// invocations, so an outer hook that runs after an inner commit sees it. Thread-safe.
#ifndef CUTOFF_CORE_COMMIT_LEDGER_HPP_
#define CUTOFF_CORE_COMMIT_LEDGER_HPP_

#include <atomic>
#include <cstdint>

namespace cutoff {

class CommitLedger {
 public:
  // A transaction that could have written sent COMMIT (whatever its answer was).
  void note_commit_point() noexcept { commits_.fetch_add(1, std::memory_order_acq_rel); }
  // After-commit work (outbox dispatch, idempotency finalization) was queued and has not
  // finished yet; finished again.
  void note_after_commit_queued() noexcept { pending_after_commit_.fetch_add(1, std::memory_order_acq_rel); }
  void note_after_commit_done() noexcept { pending_after_commit_.fetch_sub(1, std::memory_order_acq_rel); }

  // How many commit points this invocation passed.
  std::uint32_t commit_points() const noexcept { return commits_.load(std::memory_order_acquire); }
  bool after_commit_pending() const noexcept {
    return pending_after_commit_.load(std::memory_order_acquire) > 0;
  }
  // True when a stop seen now must be reported as commit_ambiguous.
  bool may_have_written() const noexcept { return commit_points() > 0 || after_commit_pending(); }

 private:
  std::atomic<std::uint32_t> commits_{0};
  std::atomic<std::int32_t> pending_after_commit_{0};
};

}  // namespace cutoff

#endif  // CUTOFF_CORE_COMMIT_LEDGER_HPP_
