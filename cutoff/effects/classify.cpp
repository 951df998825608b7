#include "cutoff/effects/classify.hpp"

namespace cutoff::effects {

std::string_view to_string(Step step) noexcept {
  switch (step) {
    case Step::before_begin: return "before_begin";
    case Step::body: return "body";
    case Step::sending_commit: return "sending_commit";
    case Step::commit_in_flight: return "commit_in_flight";
    case Step::after_commit: return "after_commit";
    case Step::after_commit_work: return "after_commit_work";
  }
  return "?";
}

Error classify_stop(Step step, StopReason reason, const TransactionShape& shape, std::string request_id) {
  if (step == Step::before_begin || cannot_have_written(shape)) return Error::stopped(reason, std::move(request_id));
  // A savepoint is released into a transaction that commits later, out of the region's
  // hands: once the body ran, what it wrote may still be committed by the owner.
  if (shape.nested) {
    return Error(ErrorCode::commit_ambiguous,
                 "stopped (" + std::string(cutoff::to_string(reason)) +
                     ") inside a transaction opened outside the effect region: its owner may still commit",
                 std::move(request_id));
  }
  if (!past_commit_point(step)) return Error::stopped(reason, std::move(request_id));
  return Error(ErrorCode::commit_ambiguous,
               "stopped (" + std::string(cutoff::to_string(reason)) + ") at " + std::string(to_string(step)) +
                   ": the effect may have been committed",
               std::move(request_id));
}

}  // namespace cutoff::effects
