#include "lab/report_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>

#include "cutoff/core/html_escape.hpp"

namespace cutoff::lab::report {

std::string Fixed(double v, int decimals) {
  if (!std::isfinite(v)) return std::string(kMissing);
  v = std::clamp(v, -kLimit, kLimit);
  if (std::abs(v) < 0.5 * std::pow(10.0, -decimals)) v = 0.0;
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  return std::string(buf, r.ptr);
}

std::string Shortest(double v) {
  if (!std::isfinite(v)) return std::string(kMissing);
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string Display(double v, int decimals) {
  const std::string s = Fixed(v, decimals);
  const std::size_t begin = s[0] == '-' ? 1 : 0;
  const std::size_t end = std::min(s.find('.'), s.size());
  if (end - begin <= 4) return s;
  // Built anew rather than with insert(), which GCC 12 warns about here (-Wrestrict, wrongly).
  std::string grouped(s, 0, begin);
  for (std::size_t i = begin; i < end; ++i) {
    if (i > begin && (end - i) % 3 == 0) grouped += ',';
    grouped += s[i];
  }
  grouped.append(s, end);
  return grouped;
}

int CountDecimals(double v) { return v == std::floor(v) ? 0 : 2; }

std::string Count(double v) { return Display(v, CountDecimals(v)); }

std::string Percent(double share) {
  const double p = share * 100;
  return Display(p, p != 0 && std::abs(p) < 9.95 ? 1 : 0) + "%";
}

std::string Capitalized(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

void AppendHtml(std::string& out, std::string_view s) {
  std::size_t run = 0;  // the start of the text not yet written
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t') continue;
    append_html_escaped(out, s.substr(run, i - run));
    out += "&#xFFFD;";
    run = i + 1;
  }
  append_html_escaped(out, s.substr(run));
}

void AppendSwatch(std::string& out, const Mode& mode) {
  out += "<span class=\"swatch\" style=\"background:";
  out += mode.color;
  out += "\"></span>";
}

}  // namespace cutoff::lab::report
