#include "cutoff/core/commit_ledger.hpp"

#include <string>

namespace cutoff {

Error report_after_commit_point(const Error& failure, const CommitLedger& ledger, std::string_view what) {
  if (!failure.info().leaves_effect_unknown || !ledger.may_have_written()) return failure;
  std::string m(what);
  m += failure.stop_reason() != StopReason::none ? " was stopped (" : " failed (";
  m += to_string(failure.code());
  m += ") at or after its commit point; it may have taken effect, so ";
  m += ledger.retry_with_same_key_safe()
           ? "retry with the same Idempotency-Key (safe: it returns the first outcome)"
           : "reconcile before running it again";
  return Error(ErrorCode::commit_ambiguous, std::move(m), failure.request_id());
}

}  // namespace cutoff
