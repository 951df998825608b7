// Fuzzes the client's URL parser: any input parses or is rejected, and what parses is
// something the client can connect to and send (non-empty host, target starting with '/',
// no whitespace or control characters in the target).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cutoff/http/client.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto url = cutoff::http::parse_url(input);
  if (!url) return 0;
  if (url->host.empty() || url->port == 0 || url->target.empty() || url->target.front() != '/') std::abort();
  for (char c : url->target)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) std::abort();
  return 0;
}
