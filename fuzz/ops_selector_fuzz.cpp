// Fuzzes operation selectors: the input's first line is a selector, the second an operation
// name. Any selector parses or is rejected with ConfigError; one that parses prints back to
// itself, and matching never crashes. An exact selector matches exactly its own name, a
// "**" glob matches every valid name, and a namespace never matches itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cutoff/ops/selector.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto nl = input.find('\n');
  const std::string_view text = input.substr(0, nl);
  const std::string_view name = nl == std::string_view::npos ? std::string_view() : input.substr(nl + 1);
  const bool valid_name = cutoff::ops::valid_operation_name(name);
  if (valid_name && !cutoff::ops::glob_match("**", name)) std::abort();
  try {
    const auto s = cutoff::ops::Selector::parse(text);
    if (!(cutoff::ops::Selector::parse(s.to_string()) == s)) std::abort();
    const bool m = s.matches(name);
    if (s.kind() == cutoff::ops::Selector::Kind::exact && m != (name == s.text())) std::abort();
    if (s.kind() == cutoff::ops::Selector::Kind::in_namespace && name == s.text() && m) std::abort();
    (void)s.specificity();
  } catch (const cutoff::ops::ConfigError&) {
  }
  return 0;
}
