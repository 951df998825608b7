#include "cutoff/graphql/internal/suggestions.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_set>
#include <utility>

#include "cutoff/graphql/internal/natural_compare.hpp"

namespace cutoff::graphql::internal {

namespace {

constexpr std::size_t kMaxSuggestions = 5;

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Code points of `s`, ASCII letters lower-cased (names are ASCII; values may not be).
std::vector<std::uint32_t> LowerCodePoints(std::string_view s) {
  std::vector<std::uint32_t> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 1;
    std::uint32_t cp = c;
    if (c >= 0xF0 && i + 3 < s.size()) {
      len = 4;
      cp = c & 0x07u;
    } else if (c >= 0xE0 && i + 2 < s.size()) {
      len = 3;
      cp = c & 0x0Fu;
    } else if (c >= 0xC0 && i + 1 < s.size()) {
      len = 2;
      cp = c & 0x1Fu;
    }
    for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    if (cp >= 'A' && cp <= 'Z') cp = cp - 'A' + 'a';
    out.push_back(cp);
    i += len;
  }
  return out;
}

// Damerau-Levenshtein distance where a change of case alone counts as one edit.
class LexicalDistance {
 public:
  explicit LexicalDistance(std::string_view input)
      : input_(input), input_lower_(AsciiLower(input)), input_points_(LowerCodePoints(input)) {}

  std::optional<std::size_t> Measure(std::string_view option, std::size_t threshold) const {
    if (option == input_) return 0;
    if (AsciiLower(option) == input_lower_) return 1;
    std::vector<std::uint32_t> a = LowerCodePoints(option);
    std::vector<std::uint32_t> b = input_points_;
    if (a.size() < b.size()) std::swap(a, b);
    const std::size_t a_len = a.size(), b_len = b.size();
    if (a_len - b_len > threshold) return std::nullopt;
    std::vector<std::size_t> rows[3];
    for (auto& r : rows) r.assign(b_len + 1, 0);
    for (std::size_t j = 0; j <= b_len; ++j) rows[0][j] = j;
    for (std::size_t i = 1; i <= a_len; ++i) {
      const auto& up = rows[(i - 1) % 3];
      auto& current = rows[i % 3];
      std::size_t smallest = current[0] = i;
      for (std::size_t j = 1; j <= b_len; ++j) {
        const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
        std::size_t cell = std::min({up[j] + 1, current[j - 1] + 1, up[j - 1] + cost});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          cell = std::min(cell, rows[(i - 2) % 3][j - 2] + 1);
        smallest = std::min(smallest, cell);
        current[j] = cell;
      }
      if (smallest > threshold) return std::nullopt;
    }
    const std::size_t distance = rows[a_len % 3][b_len];
    if (distance > threshold) return std::nullopt;
    return distance;
  }

 private:
  std::string_view input_;
  std::string input_lower_;
  std::vector<std::uint32_t> input_points_;
};

}  // namespace

std::vector<std::string> suggestion_list(std::string_view input, const std::vector<std::string_view>& options) {
  const LexicalDistance distance(input);
  const std::size_t threshold = LowerCodePoints(input).size() * 2 / 5 + 1;
  std::vector<std::pair<std::string_view, std::size_t>> found;
  std::unordered_set<std::string_view> seen;
  for (std::string_view option : options) {
    if (!seen.insert(option).second) continue;
    if (auto d = distance.Measure(option, threshold)) found.emplace_back(option, *d);
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& x, const auto& y) {
    if (x.second != y.second) return x.second < y.second;
    return natural_compare(x.first, y.first) < 0;
  });
  std::vector<std::string> out;
  for (const auto& f : found) out.emplace_back(f.first);
  return out;
}

std::string did_you_mean(std::string_view sub_message, const std::vector<std::string>& suggestions) {
  if (suggestions.empty()) return {};
  std::string message = " Did you mean ";
  if (!sub_message.empty()) {
    message += sub_message;
    message += ' ';
  }
  if (suggestions.size() == 1) return message + quoted(suggestions[0]) + "?";
  if (suggestions.size() == 2) return message + quoted(suggestions[0]) + " or " + quoted(suggestions[1]) + "?";
  const std::size_t n = std::min(suggestions.size(), kMaxSuggestions);
  for (std::size_t i = 0; i + 1 < n; ++i) message += quoted(suggestions[i]) + ", ";
  return message + "or " + quoted(suggestions[n - 1]) + "?";
}

std::string did_you_mean(const std::vector<std::string>& suggestions) { return did_you_mean({}, suggestions); }

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace cutoff::graphql::internal
