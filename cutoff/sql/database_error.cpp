#include "cutoff/sql/database_error.hpp"

namespace cutoff::sql {

ErrorCode error_code_for_sqlstate(std::string_view s) noexcept {
  if (s.size() != 5) return ErrorCode::internal;
  const std::string_view cls = s.substr(0, 2);
  if (s == "57014") return ErrorCode::attempt_timeout;            // query_canceled, not by us
  if (s == "40001" || s == "40P01") return ErrorCode::unavailable;  // serialization, deadlock
  if (s == "55P03") return ErrorCode::unavailable;                  // lock_not_available
  if (cls == "08" || cls == "57") return ErrorCode::unavailable;    // connection, operator intervention
  if (cls == "53") return ErrorCode::overloaded;                    // insufficient resources
  if (s == "42P01" || s == "42703" || s == "42883") return ErrorCode::not_found;  // table, column, function
  if (cls == "22" || cls == "23" || cls == "42" || cls == "25" || cls == "2B" || cls == "0A")
    return ErrorCode::invalid_argument;
  return ErrorCode::internal;
}

}  // namespace cutoff::sql
