// How the reference services bound their work: the three setups the lab compares.
//
//   none      nobody sets a deadline or a timeout; only the user gives up
//   timeouts  every layer has a timeout of its own and nothing is propagated (the usual setup):
//             the gateway's HTTP client gives up, the inventory service has its own timeout,
//             statements keep running when their caller stops waiting
//   cutoff    the deadline is bound at the gateway and reaches every layer, down to the
//             statement on the database
#ifndef CUTOFF_APPS_WAREHOUSE_MODE_HPP_
#define CUTOFF_APPS_WAREHOUSE_MODE_HPP_

#include <optional>
#include <string_view>

namespace cutoff::warehouse {

enum class Mode { none, timeouts, cutoff };

constexpr std::string_view to_string(Mode m) noexcept {
  switch (m) {
    case Mode::none: return "none";
    case Mode::timeouts: return "timeouts";
    case Mode::cutoff: return "cutoff";
  }
  return "?";
}

inline std::optional<Mode> parse_mode(std::string_view s) noexcept {
  if (s == "none") return Mode::none;
  if (s == "timeouts") return Mode::timeouts;
  if (s == "cutoff") return Mode::cutoff;
  return std::nullopt;
}

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_MODE_HPP_
