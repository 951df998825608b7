// DatabaseError: an error the database reported, with its SQLSTATE, mapped onto the taxonomy.
//
//   std::vector<cutoff::sql::Value> params{std::int64_t{7}};
//   try {
//     co_await conn.execute(ctx, "insert into item(id) values ($1)", params);
//   } catch (const cutoff::sql::DatabaseError& e) {
//     if (e.sqlstate() == "23505") ...;  // unique_violation
//   }
//
// Stops are not DatabaseErrors: a statement ended because its context stopped throws plain
// cutoff::Error (deadline_exceeded, cancelled, shutdown or commit_ambiguous), whatever the
// server said, because the server's words ("canceling statement due to user request") do
// not say who asked.
#ifndef CUTOFF_SQL_DATABASE_ERROR_HPP_
#define CUTOFF_SQL_DATABASE_ERROR_HPP_

#include <string>
#include <string_view>

#include "cutoff/core/error.hpp"

namespace cutoff::sql {

class DatabaseError : public Error {
 public:
  DatabaseError(ErrorCode code, std::string sqlstate, std::string message, std::string request_id = {})
      : Error(code, std::move(message), std::move(request_id)), sqlstate_(std::move(sqlstate)) {}

  // Five-character SQLSTATE ("42601"); SQLite errors use the closest PostgreSQL class.
  const std::string& sqlstate() const noexcept { return sqlstate_; }

 private:
  std::string sqlstate_;
};

// The taxonomy code for an SQLSTATE the server returned (not caused by our own stop):
// connection failures, operator intervention, lock_not_available and serialization/deadlock
// conflicts are `unavailable` (retryable), resource exhaustion is `overloaded`, an undefined
// table, column or function `not_found`, the other data, constraint, syntax, transaction-state
// and unsupported-feature errors `invalid_argument`, a statement timeout we did not set
// `attempt_timeout`, the rest `internal`.
ErrorCode error_code_for_sqlstate(std::string_view sqlstate) noexcept;

}  // namespace cutoff::sql

#endif  // CUTOFF_SQL_DATABASE_ERROR_HPP_
