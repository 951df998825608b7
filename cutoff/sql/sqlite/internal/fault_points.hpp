// Where tests inject faults into the SQLite driver (see core/internal/fault_injection.hpp).
//
//   internal::ScopedFault slow(sql::internal::kSqliteCommit, [] { std::this_thread::sleep_for(50ms); });
#ifndef CUTOFF_SQL_SQLITE_INTERNAL_FAULT_POINTS_HPP_
#define CUTOFF_SQL_SQLITE_INTERNAL_FAULT_POINTS_HPP_

#include "cutoff/core/internal/fault_injection.hpp"

namespace cutoff::sql::internal {

// On the connection's worker thread, inside COMMIT once it is decided and before it completes
// (sqlite3_commit_hook); also for autocommit statements that write.
inline constexpr cutoff::internal::FaultPoint<void()> kSqliteCommit{"sqlite.commit"};

}  // namespace cutoff::sql::internal

#endif  // CUTOFF_SQL_SQLITE_INTERNAL_FAULT_POINTS_HPP_
