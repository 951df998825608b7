// The server-side backstop of a statement's budget: which `statement_timeout` the driver
// sends before a statement, and reading the session's own setting.
//
// The remaining budget becomes the session's statement_timeout, so the server ends the
// statement at the deadline even if this process dies. It goes through a statement prepared
// once per connection, so a change costs a Bind/Execute in the same round trip as the
// statement (no parse, no plan). It is set at session level and re-sent only when the value in
// force is tighter than the budget or looser by more than BackstopSlackMs: sending it with
// every statement measured +16% on a loopback `select 1` (docs/benchmarks.md). The client's
// cancel is what stops a statement on time; this is the backstop for a client that died.
//
//   std::int64_t send = cutoff::sql::internal::TimeoutToSend(budget_ms, session_ms, applied_ms);
//   if (send >= 0) { /* execute kBudgetStatement with std::to_string(send) before the statement */ }
#ifndef CUTOFF_SQL_PG_INTERNAL_PG_STATEMENT_TIMEOUT_HPP_
#define CUTOFF_SQL_PG_INTERNAL_PG_STATEMENT_TIMEOUT_HPP_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cutoff::sql::internal {

// The prepared statement that sets the timeout ($1: milliseconds as text), and its SQL.
inline constexpr const char* kBudgetStatement = "cutoff_budget";
inline constexpr const char* kBudgetSql = "select set_config('statement_timeout', $1, false)";

// How much later than the deadline the server-side backstop may fire: 1/16 of the budget,
// within [2 ms, 250 ms].
constexpr std::int64_t BackstopSlackMs(std::int64_t budget_ms) {
  return std::clamp<std::int64_t>(budget_ms / 16, 2, 250);
}

// "0", "250ms", "5s", "2min", "1h", "1d" (SHOW statement_timeout) → milliseconds; 0 = none.
std::int64_t ParseTimeoutSetting(std::string_view s);

// The statement_timeout in ms to send before a statement, or -1 when the one in force will do.
// `budget_ms` is the remaining budget, rounded up and above 0, or nullopt for a statement
// without a deadline, which restores the session's own setting. Tighten-only: `session_ms`,
// the session's own setting (role or connection options; 0: none), wins when it is smaller.
// `applied_ms` is the value in force (0: none, -1: unknown, e.g. after a rollback).
std::int64_t TimeoutToSend(std::optional<std::int64_t> budget_ms, std::int64_t session_ms, std::int64_t applied_ms);

}  // namespace cutoff::sql::internal

#endif  // CUTOFF_SQL_PG_INTERNAL_PG_STATEMENT_TIMEOUT_HPP_
