#include "cutoff/sql/pg/internal/pg_statement_timeout.hpp"

#include <charconv>
#include <climits>

namespace cutoff::sql::internal {

std::int64_t ParseTimeoutSetting(std::string_view s) {
  std::int64_t n = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), n);
  if (res.ec != std::errc() || n <= 0) return 0;
  const std::string_view unit(res.ptr, static_cast<std::size_t>(s.data() + s.size() - res.ptr));
  if (unit.empty() || unit == "ms") return n;
  if (unit == "s") return n * 1000;
  if (unit == "min") return n * 60'000;
  if (unit == "h") return n * 3'600'000;
  if (unit == "d") return n * 86'400'000;
  if (unit == "us") return std::max<std::int64_t>(1, n / 1000);
  return 0;
}

std::int64_t TimeoutToSend(std::optional<std::int64_t> budget_ms, std::int64_t session_ms, std::int64_t applied_ms) {
  if (!budget_ms) return applied_ms != session_ms ? session_ms : -1;
  const std::int64_t want = std::min<std::int64_t>(*budget_ms, session_ms > 0 ? session_ms : INT_MAX);
  const bool close_enough = applied_ms >= want && applied_ms - want <= BackstopSlackMs(want) && applied_ms > 0;
  return close_enough ? -1 : want;
}

}  // namespace cutoff::sql::internal
