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
// invocations, so an outer hook that runs after an inner commit sees it. A scope that must
// tell its own commits from its siblings' (one GraphQL mutation root field among several)
// takes a child ledger: what the child notes, its parent notes too, never the other way.
//
//   auto field = std::make_shared<cutoff::CommitLedger>(request_ledger);  // a child
//   // ... the field's request left with an Idempotency-Key, no answer came back
//   field->note_commit_point(/*idempotency_keyed=*/true);
//   field->may_have_written();           // true, and so is request_ledger->may_have_written()
//   field->retry_with_same_key_safe();   // true: every possible commit was under a key
//
// Thread-safe.
#ifndef CUTOFF_CORE_COMMIT_LEDGER_HPP_
#define CUTOFF_CORE_COMMIT_LEDGER_HPP_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

#include "cutoff/core/error.hpp"

namespace cutoff {

class CommitLedger {
 public:
  CommitLedger() noexcept = default;
  // A child: everything noted here is noted in `parent` too (null: a root ledger).
  explicit CommitLedger(std::shared_ptr<CommitLedger> parent) noexcept : parent_(std::move(parent)) {}
  CommitLedger(const CommitLedger&) = delete;
  CommitLedger& operator=(const CommitLedger&) = delete;

  // Something that could have written passed its point of no return, whatever its answer
  // was: a transaction sent COMMIT, or a request that may write (POST, PUT, ...) left for
  // another service and no answer ruled the effect out. `idempotency_keyed`: it carried an
  // idempotency key, so repeating it with the same key cannot apply it twice.
  void note_commit_point(bool idempotency_keyed = false) noexcept {
    commits_.fetch_add(1, std::memory_order_acq_rel);
    if (!idempotency_keyed) unkeyed_commits_.fetch_add(1, std::memory_order_acq_rel);
    if (parent_) parent_->note_commit_point(idempotency_keyed);
  }
  // After-commit work (outbox dispatch, idempotency finalization) was queued and has not
  // finished yet; finished again.
  void note_after_commit_queued() noexcept {
    pending_after_commit_.fetch_add(1, std::memory_order_acq_rel);
    if (parent_) parent_->note_after_commit_queued();
  }
  void note_after_commit_done() noexcept {
    pending_after_commit_.fetch_sub(1, std::memory_order_acq_rel);
    if (parent_) parent_->note_after_commit_done();
  }

  // How many commit points this invocation passed.
  std::uint32_t commit_points() const noexcept { return commits_.load(std::memory_order_acquire); }
  // How many of them carried no idempotency key.
  std::uint32_t unkeyed_commit_points() const noexcept { return unkeyed_commits_.load(std::memory_order_acquire); }
  bool after_commit_pending() const noexcept {
    return pending_after_commit_.load(std::memory_order_acquire) > 0;
  }
  // True when a stop seen now must be reported as commit_ambiguous.
  bool may_have_written() const noexcept { return commit_points() > 0 || after_commit_pending(); }
  // True when something may have been written and every commit point was under an
  // idempotency key: the caller may repeat the request with the same key(s) to learn the
  // outcome without applying it twice.
  bool retry_with_same_key_safe() const noexcept {
    return commit_points() > 0 && unkeyed_commits_.load(std::memory_order_acquire) == 0;
  }

 private:
  std::shared_ptr<CommitLedger> parent_;
  std::atomic<std::uint32_t> commits_{0};
  std::atomic<std::uint32_t> unkeyed_commits_{0};
  std::atomic<std::int32_t> pending_after_commit_{0};
};

// What a scope whose work noted its commit points in `ledger` reports for `failure`:
// `failure` itself, unless it says nothing about the effect (ErrorCodeInfo::
// leaves_effect_unknown: a stop, a timeout, an unreachable or overloaded dependency) and a
// commit point has passed. Then commit_ambiguous, naming `what` ("operation orders.create")
// and the failure, and saying whether repeating it with the same idempotency key is safe.
// The one place this rule is written; every surface that reports an outcome calls it.
Error report_after_commit_point(const Error& failure, const CommitLedger& ledger, std::string_view what);

}  // namespace cutoff

#endif  // CUTOFF_CORE_COMMIT_LEDGER_HPP_
