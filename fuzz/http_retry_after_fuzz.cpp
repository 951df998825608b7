// Fuzzes the Retry-After parser: any input parses or is refused, and whatever parses is a wait
// between zero and the cap that formats back to a value parsing to at least that wait.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cutoff/http/retry_after.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  const auto wait = cutoff::http::parse_retry_after(input, now);
  if (!wait) return 0;
  if (*wait < cutoff::Duration::zero() || *wait > cutoff::http::kMaxRetryAfter) std::abort();
  const auto again = cutoff::http::parse_retry_after(cutoff::http::format_retry_after(*wait), now);
  if (!again || *again < *wait) std::abort();
  return 0;
}
