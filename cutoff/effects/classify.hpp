// How a stop that lands inside an effect is reported: the commit-ambiguity rules in one place.
//
// An effect goes through fixed steps. A stop before the commit point leaves nothing behind
// (the transaction rolls back), so it is reported as what it is: deadline_exceeded, cancelled
// or shutdown, and a fresh invocation may try again. A stop at or after the commit point may
// have missed a write that is already durable, so it is `commit_ambiguous` (never retryable),
// with one exception: a read-only transaction that the backend enforces, that was the
// region's own (not a savepoint in somebody else's transaction) and queued no after-commit
// work, cannot have written anything.
//
//   cutoff::effects::TransactionShape shape{.read_only = true, .read_only_enforced = true};
//   cutoff::Error e = cutoff::effects::classify_stop(cutoff::effects::Step::commit_in_flight,
//                                                    cutoff::StopReason::deadline_exceeded, shape);
//   // e.code() == ErrorCode::deadline_exceeded: nothing could have been written
#ifndef CUTOFF_EFFECTS_CLASSIFY_HPP_
#define CUTOFF_EFFECTS_CLASSIFY_HPP_

#include <cstdint>
#include <string>
#include <string_view>

#include "cutoff/core/error.hpp"
#include "cutoff/core/stop_reason.hpp"

namespace cutoff::effects {

// The steps of an effect region, in order.
enum class Step : std::uint8_t {
  before_begin,       // admitted; no transaction yet
  body,               // the transaction is open and the effect's statements run
  sending_commit,     // the decision to commit is taken; COMMIT is being sent
  commit_in_flight,   // COMMIT was sent; no answer yet
  after_commit,       // COMMIT answered
  after_commit_work,  // outbox dispatch, after-commit callbacks
};
std::string_view to_string(Step step) noexcept;

// Whether `step` is at or after the commit point.
constexpr bool past_commit_point(Step step) noexcept { return step >= Step::sending_commit; }

// What is known about the transaction a stop landed in.
struct TransactionShape {
  bool read_only = false;            // opened read-only
  bool read_only_enforced = false;   // and the backend refuses writes in it
  bool nested = false;               // a savepoint in a transaction opened outside the region
  bool after_commit_queued = false;  // after-commit work was queued (it runs after COMMIT and may write)
};

// True when nothing the region did can have become durable, whatever its step.
constexpr bool cannot_have_written(const TransactionShape& shape) noexcept {
  return shape.read_only && shape.read_only_enforced && !shape.nested && !shape.after_commit_queued;
}

// The error to report for a stop with `reason` that landed at `step`.
Error classify_stop(Step step, StopReason reason, const TransactionShape& shape,
                    std::string request_id = {});

}  // namespace cutoff::effects

#endif  // CUTOFF_EFFECTS_CLASSIFY_HPP_
