#include "cutoff/graphql/internal/natural_compare.hpp"

#include <cstddef>

namespace cutoff::graphql::internal {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

int natural_compare(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      double an = 0, bn = 0;
      do {
        an = an * 10 + (a[i++] - '0');
      } while (i < a.size() && IsDigit(a[i]) && an > 0);
      do {
        bn = bn * 10 + (b[j++] - '0');
      } while (j < b.size() && IsDigit(b[j]) && bn > 0);
      if (an < bn) return -1;
      if (an > bn) return 1;
    } else {
      const auto ac = static_cast<unsigned char>(a[i]), bc = static_cast<unsigned char>(b[j]);
      if (ac < bc) return -1;
      if (ac > bc) return 1;
      ++i;
      ++j;
    }
  }
  // Lengths of what is left, as graphql-js compares the whole strings' lengths.
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

}  // namespace cutoff::graphql::internal
