// Fuzzes the W3C traceparent parser: any input parses or is rejected, and whatever parses
// prints back to a header that parses to the same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cutoff/observe/trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto t = cutoff::observe::parse_traceparent(input);
  if (!t) return 0;
  auto again = cutoff::observe::parse_traceparent(t->to_string());
  if (!again || again->trace_id != t->trace_id || again->parent_id != t->parent_id || again->flags != t->flags)
    std::abort();
  return 0;
}
