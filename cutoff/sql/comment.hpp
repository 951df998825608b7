// sqlcommenter-style statement comments: who a statement works for, visible to the server.
//
//   std::string sql = cutoff::sql::with_comment("select * from item", ctx.values());
//   // select * from item /*operation='GetItem',request_id='req-42'*/
//
// PostgreSQL shows the comment in `pg_stat_activity.query`, so a running statement can be
// traced to its request. Keys are sorted; values are URL-encoded (so `*/` cannot appear) and
// quoted as sqlcommenter specifies. A trailing `;` stays at the end. Empty values are left out,
// and a statement with nothing to say is returned unchanged.
#ifndef CUTOFF_SQL_COMMENT_HPP_
#define CUTOFF_SQL_COMMENT_HPP_

#include <string>
#include <string_view>

#include "cutoff/core/context.hpp"

namespace cutoff::sql {

std::string with_comment(std::string_view sql, const RequestValues& values);

// The comment alone ("/*...*/"), or empty when there is nothing to record.
std::string sql_comment(const RequestValues& values);

}  // namespace cutoff::sql

#endif  // CUTOFF_SQL_COMMENT_HPP_
