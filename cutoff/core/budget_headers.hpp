// Time budgets on the wire: parsing the inbound headers, formatting the outbound one.
//
// A service accepts a caller's budget from any of these headers and combines everything
// it finds (and its own maximum) tighten-only:
//   Deadline-Budget-Ms: 1500                      milliseconds left (cutoff's own header)
//   grpc-timeout: 1500m                           gRPC's <1-8 digits><H|M|S|m|u|n>
//   X-Request-Deadline: 2026-11-30T17:00:00.250Z  absolute RFC 3339, within a clock-skew bound
//   X-Client-Timeout-Ms: 1500                     configurable legacy names, milliseconds
// Bad values (negative, non-numeric, overflow, bad units, times far off local time,
// duplicates that disagree) never extend anything and never throw: they are reported back
// so the caller can count and log them. "0" means already expired.
//
//   cutoff::BudgetPolicy policy{.max_budget = 10s, .legacy_ms_headers = {"X-Client-Timeout-Ms"}};
//   std::vector<cutoff::HeaderField> headers = {{"Deadline-Budget-Ms", "250"}};
//   auto inbound = cutoff::parse_inbound_budget(headers, policy, std::chrono::system_clock::now());
//   auto ctx = cutoff::Context::background().with_timeout(inbound.budget);  // <= 250ms
//   for (const auto& r : inbound.rejected) metrics.header_rejected(r.header, to_string(r.reason));
//
//   // Outbound: nothing is sent when the budget is spent; a live budget never reads as 0.
//   if (auto value = cutoff::format_budget_ms(ctx.deadline())) request.set("Deadline-Budget-Ms", *value);
#ifndef CUTOFF_CORE_BUDGET_HEADERS_HPP_
#define CUTOFF_CORE_BUDGET_HEADERS_HPP_

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/deadline.hpp"

namespace cutoff {

inline constexpr std::string_view kBudgetHeader = "Deadline-Budget-Ms";
inline constexpr std::string_view kGrpcTimeoutHeader = "grpc-timeout";
inline constexpr std::string_view kRequestDeadlineHeader = "X-Request-Deadline";
inline constexpr std::string_view kDeadlineExpiredHeader = "Deadline-Expired";

// Longest header value looked at; longer values are rejected unread.
inline constexpr std::size_t kMaxBudgetValueLength = 64;

enum class Rejection {
  malformed,    // not the header's syntax (includes NaN, decimals, empty, too long)
  negative,     // a minus sign
  overflow,     // more than the parser's range (e.g. > 8 digits in grpc-timeout)
  bad_unit,     // grpc-timeout with a unit other than H, M, S, m, u, n
  clock_skew,   // an absolute time too far from local time to trust
  conflicting,  // the same header more than once with different values
};
std::string_view to_string(Rejection r) noexcept;

// A parsed relative budget (always >= 0; zero means already expired) or why it was rejected.
using BudgetOrRejection = std::variant<Duration, Rejection>;

// `<digits>` milliseconds, optional surrounding spaces/tabs. At most 18 digits.
BudgetOrRejection parse_budget_ms(std::string_view value) noexcept;
// gRPC `<1-8 digits><H|M|S|m|u|n>`.
BudgetOrRejection parse_grpc_timeout(std::string_view value) noexcept;
// RFC 3339 date-time, e.g. `2026-11-30T17:00:00Z`, `2026-11-30t17:00:00.123456+01:00`.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view value) noexcept;

struct HeaderField {
  std::string_view name;
  std::string_view value;
};

struct BudgetPolicy {
  Duration max_budget = std::chrono::seconds(30);  // the most this service grants anyone
  Duration max_clock_skew = std::chrono::seconds(2);
  bool accept_grpc_timeout = true;
  bool accept_request_deadline = true;
  std::vector<std::string> legacy_ms_headers;  // extra names carrying milliseconds
};

struct RejectedHeader {
  std::string name;
  std::string value;  // truncated to kMaxBudgetValueLength
  Rejection reason;
};

struct InboundBudget {
  Duration budget;                 // min(max_budget, every accepted value); zero: expired
  bool from_caller = false;        // at least one header was accepted
  std::vector<RejectedHeader> rejected;
};

// Combines every budget header in `headers` (names case-insensitive) tighten-only. A field
// holding a comma-separated list (repeated fields folded by a proxy) counts as its elements.
// `now` is local wall-clock time, used only for X-Request-Deadline.
InboundBudget parse_inbound_budget(std::span<const HeaderField> headers, const BudgetPolicy& policy,
                                   std::chrono::system_clock::time_point now);
// The same, reading the wall clock (e.g. std::chrono::system_clock::now) only when an
// X-Request-Deadline header needs it: the server's per-request path.
InboundBudget parse_inbound_budget(std::span<const HeaderField> headers, const BudgetPolicy& policy,
                                   std::chrono::system_clock::time_point (*wall_clock)());

// The outbound `Deadline-Budget-Ms` value: milliseconds left rounded up, or nullopt when the
// deadline has passed (then the call must not be sent) or when there is no deadline.
std::optional<std::string> format_budget_ms(Deadline deadline, const Clock& clock = Clock::steady());

// The same, less a reply margin (never more than half of what is left): the callee's deadline
// then comes first, and its answer to a stop there (a definite one, before its commit point)
// still arrives inside the caller's. A zero margin sends the whole budget.
std::optional<std::string> format_budget_ms(Deadline deadline, Duration reply_margin,
                                            const Clock& clock = Clock::steady());

}  // namespace cutoff

#endif  // CUTOFF_CORE_BUDGET_HEADERS_HPP_
