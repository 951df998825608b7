#include "cutoff/http/retry_after.hpp"

#include <array>
#include <cstdint>

namespace cutoff::http {
namespace {

bool Digits(std::string_view s, std::size_t n, int& out) {
  if (s.size() < n) return false;
  int v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

// Days from 1970-01-01 to year-month-day in the proleptic Gregorian calendar.
std::int64_t DaysFromCivil(int y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int DaysInMonth(int y, int m) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[static_cast<std::size_t>(m - 1)];
}

// "Sun, 06 Nov 1994 08:49:37 GMT": seconds since the epoch.
std::optional<std::int64_t> ParseImfFixdate(std::string_view s) {
  static constexpr std::array<std::string_view, 7> kDayNames = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  static constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                               "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (s.size() != 29 || s.substr(3, 2) != ", " || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' || s[19] != ':' ||
      s[22] != ':' || s.substr(25) != " GMT")
    return std::nullopt;
  bool day_name = false;
  for (std::string_view d : kDayNames) day_name = day_name || s.substr(0, 3) == d;
  int month = 0;
  for (std::size_t i = 0; i < kMonths.size(); ++i)
    if (s.substr(8, 3) == kMonths[i]) month = static_cast<int>(i) + 1;
  int day = 0, year = 0, hour = 0, minute = 0, second = 0;
  if (!day_name || month == 0 || !Digits(s.substr(5), 2, day) || !Digits(s.substr(12), 4, year) ||
      !Digits(s.substr(17), 2, hour) || !Digits(s.substr(20), 2, minute) || !Digits(s.substr(23), 2, second))
    return std::nullopt;
  if (day < 1 || day > DaysInMonth(year, month) || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  return DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
}

}  // namespace

std::optional<Duration> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  const auto cap = std::chrono::duration_cast<std::chrono::seconds>(kMaxRetryAfter).count();
  if (value.front() >= '0' && value.front() <= '9') {
    std::int64_t seconds = 0;
    for (char c : value) {
      if (c < '0' || c > '9') return std::nullopt;
      if (seconds <= cap) seconds = seconds * 10 + (c - '0');  // past the cap it stays past it
    }
    return std::chrono::seconds(std::min(seconds, cap));
  }
  const auto at = ParseImfFixdate(value);
  if (!at) return std::nullopt;
  const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  if (*at <= now_s) return Duration::zero();
  return std::chrono::seconds(std::min(*at - now_s, cap));
}

std::string format_retry_after(Duration wait) {
  auto seconds = std::chrono::ceil<std::chrono::seconds>(std::min(wait, kMaxRetryAfter)).count();
  return std::to_string(seconds < 1 ? 1 : seconds);
}

}  // namespace cutoff::http
