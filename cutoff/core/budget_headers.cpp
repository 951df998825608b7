#include "cutoff/core/budget_headers.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace cutoff {
namespace {

using std::chrono::duration_cast;

std::string_view TrimOws(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsDigit(char c) noexcept { return c >= '0' && c <= '9'; }

bool IEquals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// Parses exactly `digits` (all decimal digits, at most 18 of them).
std::uint64_t ParseDigits(std::string_view digits) noexcept {
  std::uint64_t v = 0;
  for (char c : digits) v = v * 10 + static_cast<std::uint64_t>(c - '0');
  return v;
}

// `count` units of `unit_ns` nanoseconds, saturating at Duration::max().
Duration Saturating(std::uint64_t count, std::uint64_t unit_ns) noexcept {
  const auto max = static_cast<std::uint64_t>(Duration::max().count());
  if (count != 0 && unit_ns > max / count) return Duration::max();
  return Duration(static_cast<Duration::rep>(count * unit_ns));
}

// Reads exactly `n` digits at `pos`, advancing it.
bool ReadFixed(std::string_view s, std::size_t& pos, int n, int& out) noexcept {
  if (pos + static_cast<std::size_t>(n) > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[pos + static_cast<std::size_t>(i)];
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  pos += static_cast<std::size_t>(n);
  out = v;
  return true;
}

bool Expect(std::string_view s, std::size_t& pos, char c) noexcept {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

constexpr std::int64_t kMaxSkewSeconds = 3'000'000'000;

Duration SaturatingAdd(Duration a, Duration b) noexcept {
  if (b > Duration::zero() && a > Duration::max() - b) return Duration::max();
  return a + b;
}

enum class Kind { none, budget_ms, grpc_timeout, request_deadline, legacy_ms };

Kind Classify(std::string_view name, const BudgetPolicy& policy) noexcept {
  if (IEquals(name, kBudgetHeader)) return Kind::budget_ms;
  if (policy.accept_grpc_timeout && IEquals(name, kGrpcTimeoutHeader)) return Kind::grpc_timeout;
  if (policy.accept_request_deadline && IEquals(name, kRequestDeadlineHeader)) return Kind::request_deadline;
  for (const auto& legacy : policy.legacy_ms_headers) {
    if (IEquals(name, legacy)) return Kind::legacy_ms;
  }
  return Kind::none;
}

}  // namespace

std::string_view to_string(Rejection r) noexcept {
  switch (r) {
    case Rejection::malformed: return "malformed";
    case Rejection::negative: return "negative";
    case Rejection::overflow: return "overflow";
    case Rejection::bad_unit: return "bad_unit";
    case Rejection::clock_skew: return "clock_skew";
    case Rejection::conflicting: return "conflicting";
  }
  return "unknown";
}

BudgetOrRejection parse_budget_ms(std::string_view value) noexcept {
  if (value.size() > kMaxBudgetValueLength) return Rejection::malformed;
  value = TrimOws(value);
  if (value.empty()) return Rejection::malformed;
  if (value.front() == '-') {
    return value.size() > 1 && std::all_of(value.begin() + 1, value.end(), IsDigit) ? Rejection::negative
                                                                                    : Rejection::malformed;
  }
  if (!std::all_of(value.begin(), value.end(), IsDigit)) return Rejection::malformed;
  const auto first_nonzero = value.find_first_not_of('0');
  const std::string_view significant = first_nonzero == std::string_view::npos ? "" : value.substr(first_nonzero);
  if (significant.size() > 18) return Rejection::overflow;
  const std::uint64_t ms = ParseDigits(significant);
  const Duration d = Saturating(ms, 1'000'000);
  if (d == Duration::max()) return Rejection::overflow;
  return d;
}

BudgetOrRejection parse_grpc_timeout(std::string_view value) noexcept {
  if (value.size() > kMaxBudgetValueLength) return Rejection::malformed;
  value = TrimOws(value);
  if (value.empty()) return Rejection::malformed;
  if (value.front() == '-') return Rejection::negative;
  const char unit = value.back();
  const std::string_view digits = value.substr(0, value.size() - 1);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), IsDigit)) return Rejection::malformed;
  if (digits.size() > 8) return Rejection::overflow;  // the gRPC spec allows at most 8 digits
  std::uint64_t unit_ns = 0;
  switch (unit) {
    case 'H': unit_ns = 3'600'000'000'000ULL; break;
    case 'M': unit_ns = 60'000'000'000ULL; break;
    case 'S': unit_ns = 1'000'000'000ULL; break;
    case 'm': unit_ns = 1'000'000ULL; break;
    case 'u': unit_ns = 1'000ULL; break;
    case 'n': unit_ns = 1ULL; break;
    default: return IsDigit(unit) ? Rejection::malformed : Rejection::bad_unit;
  }
  return Saturating(ParseDigits(digits), unit_ns);
}

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view s) noexcept {
  if (s.size() > kMaxBudgetValueLength) return std::nullopt;
  s = TrimOws(s);
  std::size_t pos = 0;
  int year, month, day, hour, minute, second;
  if (!ReadFixed(s, pos, 4, year) || !Expect(s, pos, '-') || !ReadFixed(s, pos, 2, month) ||
      !Expect(s, pos, '-') || !ReadFixed(s, pos, 2, day)) {
    return std::nullopt;
  }
  if (pos >= s.size() || (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ')) return std::nullopt;
  ++pos;
  if (!ReadFixed(s, pos, 2, hour) || !Expect(s, pos, ':') || !ReadFixed(s, pos, 2, minute) ||
      !Expect(s, pos, ':') || !ReadFixed(s, pos, 2, second)) {
    return std::nullopt;
  }
  std::chrono::nanoseconds fraction{0};
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    const std::size_t start = pos;
    std::int64_t ns = 0;
    int used = 0;
    while (pos < s.size() && IsDigit(s[pos])) {
      if (used < 9) {
        ns = ns * 10 + (s[pos] - '0');
        ++used;
      }
      ++pos;
    }
    if (pos == start) return std::nullopt;
    for (; used < 9; ++used) ns *= 10;
    fraction = std::chrono::nanoseconds(ns);
  }
  std::chrono::minutes offset{0};
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    const int sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    int oh, om;
    if (!ReadFixed(s, pos, 2, oh) || !Expect(s, pos, ':') || !ReadFixed(s, pos, 2, om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset = std::chrono::minutes(sign * (oh * 60 + om));
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year(year), std::chrono::month(static_cast<unsigned>(month)),
                                        std::chrono::day(static_cast<unsigned>(day))};
  if (!ymd.ok() || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  if (second == 60) second = 59;  // a leap second: close enough for a deadline
  // In whole seconds first: any 4-digit year fits there, but not in system_clock's
  // nanoseconds (about 1678 to 2262), which would overflow.
  const std::chrono::sys_seconds whole = std::chrono::sys_days(ymd) + std::chrono::hours(hour) +
                                         std::chrono::minutes(minute) + std::chrono::seconds(second) - offset;
  using SysClock = std::chrono::system_clock;
  const auto lowest = std::chrono::ceil<std::chrono::seconds>(SysClock::time_point::min()) + std::chrono::seconds(1);
  const auto highest = std::chrono::floor<std::chrono::seconds>(SysClock::time_point::max()) - std::chrono::seconds(1);
  if (whole < lowest || whole > highest) return std::nullopt;
  return std::chrono::time_point_cast<SysClock::duration>(whole) + duration_cast<SysClock::duration>(fraction);
}

namespace {

// `wall_clock()` gives local wall-clock time; it is called only for X-Request-Deadline.
template <typename WallClock>
InboundBudget ParseInbound(std::span<const HeaderField> headers, const BudgetPolicy& policy, WallClock wall_clock) {
  InboundBudget out;
  std::optional<std::chrono::system_clock::time_point> wall_now;
  out.budget = std::max(policy.max_budget, Duration::zero());
  std::string_view first_value[5] = {};  // by Kind: the first value seen, to spot conflicts
  bool seen[5] = {};
  auto reject = [&](const HeaderField& h, Rejection r) {
    out.rejected.push_back({std::string(h.name), std::string(h.value.substr(0, kMaxBudgetValueLength)), r});
  };
  auto consider = [&](const HeaderField& h, Kind kind) {
    BudgetOrRejection parsed = Rejection::malformed;
    switch (kind) {
      case Kind::budget_ms:
      case Kind::legacy_ms: parsed = parse_budget_ms(h.value); break;
      case Kind::grpc_timeout: parsed = parse_grpc_timeout(h.value); break;
      case Kind::request_deadline: {
        const auto when = parse_rfc3339(h.value);
        if (!when) break;
        if (!wall_now) wall_now = wall_clock();  // read once, and only when needed
        const std::chrono::system_clock::time_point now = *wall_now;
        // Differences beyond ~95 years are skew under any policy, and would overflow below.
        const auto whole_seconds = std::chrono::floor<std::chrono::seconds>(*when).time_since_epoch().count() -
                                   std::chrono::floor<std::chrono::seconds>(now).time_since_epoch().count();
        if (whole_seconds > kMaxSkewSeconds || whole_seconds < -kMaxSkewSeconds) {
          parsed = Rejection::clock_skew;
          break;
        }
        const auto left = duration_cast<Duration>(*when - now);
        if (left < -policy.max_clock_skew || left > SaturatingAdd(policy.max_budget, policy.max_clock_skew)) {
          parsed = Rejection::clock_skew;
        } else {
          parsed = std::max(left, Duration::zero());
        }
        break;
      }
      case Kind::none: break;
    }
    if (const auto* r = std::get_if<Rejection>(&parsed)) {
      reject(h, *r);
      return;
    }
    const auto k = static_cast<std::size_t>(kind);
    const std::string_view trimmed = TrimOws(h.value);
    if (seen[k] && trimmed != first_value[k]) reject(h, Rejection::conflicting);  // still tighten-only below
    if (!seen[k]) {
      seen[k] = true;
      first_value[k] = trimmed;
    }
    out.budget = std::min(out.budget, std::get<Duration>(parsed));
    out.from_caller = true;
  };
  for (const HeaderField& h : headers) {
    const Kind kind = Classify(h.name, policy);
    if (kind == Kind::none) continue;
    // A proxy may have folded repeated fields into one comma-separated list (RFC 9110, 5.3):
    // each element counts as its own value. Overlong lists are rejected whole.
    if (h.value.find(',') == std::string_view::npos) {
      consider(h, kind);
    } else if (h.value.size() > 4 * kMaxBudgetValueLength) {
      reject(h, Rejection::malformed);
    } else {
      std::string_view rest = h.value;
      while (true) {
        const auto comma = rest.find(',');
        consider(HeaderField{h.name, rest.substr(0, comma)}, kind);
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
      }
    }
  }
  return out;
}

}  // namespace

InboundBudget parse_inbound_budget(std::span<const HeaderField> headers, const BudgetPolicy& policy,
                                   std::chrono::system_clock::time_point now) {
  return ParseInbound(headers, policy, [now] { return now; });
}

InboundBudget parse_inbound_budget(std::span<const HeaderField> headers, const BudgetPolicy& policy,
                                   std::chrono::system_clock::time_point (*wall_clock)()) {
  return ParseInbound(headers, policy, wall_clock);
}

std::optional<std::string> format_budget_ms(Deadline deadline, const Clock& clock) {
  if (deadline.is_never()) return std::nullopt;
  const std::int64_t ms = deadline.remaining_ms_ceil(clock);  // >= 1 while any time is left
  if (ms <= 0) return std::nullopt;
  return std::to_string(ms);
}

std::optional<std::string> format_budget_ms(Deadline deadline, Duration reply_margin, const Clock& clock) {
  if (reply_margin <= Duration::zero() || deadline.is_never()) return format_budget_ms(deadline, clock);
  const Duration left = deadline.remaining(clock);
  if (left <= Duration::zero()) return std::nullopt;
  return format_budget_ms(Deadline::after(left - std::min(reply_margin, left / 2), clock), clock);
}

}  // namespace cutoff
