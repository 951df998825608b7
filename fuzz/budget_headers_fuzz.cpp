// Fuzzes the budget header parsers. Input: header lines "Name: value\n"; every line is
// parsed on its own and all of them together, and the results must respect the contract:
// no negative budget, nothing above the service maximum, nothing unbounded echoed back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "cutoff/core/budget_headers.hpp"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

void CheckRelative(const cutoff::BudgetOrRejection& r) {
  if (const auto* d = std::get_if<cutoff::Duration>(&r)) Require(*d >= cutoff::Duration::zero());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cutoff;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  CheckRelative(parse_budget_ms(input));
  CheckRelative(parse_grpc_timeout(input));
  (void)parse_rfc3339(input);

  std::vector<HeaderField> headers;
  std::size_t start = 0;
  while (start <= input.size() && headers.size() < 64) {
    std::size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    const std::string_view line = input.substr(start, end - start);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos) headers.push_back({line.substr(0, colon), line.substr(colon + 1)});
    start = end + 1;
  }
  BudgetPolicy policy;
  policy.max_budget = std::chrono::seconds(10);
  policy.legacy_ms_headers = {"X-Client-Timeout-Ms"};
  const auto now = std::chrono::sys_days(std::chrono::year(2026) / 11 / 30) + std::chrono::hours(17);
  const InboundBudget r = parse_inbound_budget(headers, policy, now);
  Require(r.budget >= cutoff::Duration::zero());
  Require(r.budget <= policy.max_budget);
  for (const auto& rejected : r.rejected) Require(rejected.value.size() <= kMaxBudgetValueLength);
  return 0;
}
