#include "cutoff/ops/selector.hpp"

#include <vector>

namespace cutoff::ops {
namespace {

constexpr std::size_t kMaxSelectorLength = 256;

bool NameChar(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

[[noreturn]] void Invalid(std::string_view text, std::string_view why) {
  throw ConfigError(ConfigError::Kind::invalid_selector,
                    "invalid selector \"" + std::string(text.substr(0, kMaxSelectorLength)) + "\": " + std::string(why));
}

}  // namespace

std::string_view to_string(ConfigError::Kind kind) noexcept {
  switch (kind) {
    case ConfigError::Kind::invalid_name: return "invalid_name";
    case ConfigError::Kind::invalid_selector: return "invalid_selector";
    case ConfigError::Kind::duplicate_operation: return "duplicate_operation";
    case ConfigError::Kind::non_positive_budget: return "non_positive_budget";
    case ConfigError::Kind::missing_handler: return "missing_handler";
    case ConfigError::Kind::orphan_patch: return "orphan_patch";
    case ConfigError::Kind::ambiguous_patches: return "ambiguous_patches";
    case ConfigError::Kind::frozen: return "frozen";
    case ConfigError::Kind::not_frozen: return "not_frozen";
  }
  return "unknown";
}

bool valid_operation_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  bool segment_empty = true;
  for (char c : name) {
    if (c == '.') {
      if (segment_empty) return false;
      segment_empty = true;
    } else if (NameChar(c)) {
      segment_empty = false;
    } else {
      return false;
    }
  }
  return !segment_empty;
}

bool glob_match(std::string_view pattern, std::string_view name) noexcept {
  // reach[i]: the pattern read so far can match name[0, i).
  const std::size_t n = name.size();
  std::vector<char> reach(n + 1, 0), next(n + 1, 0);
  reach[0] = 1;
  for (std::size_t p = 0; p < pattern.size(); ++p) {
    const char pc = pattern[p];
    std::fill(next.begin(), next.end(), 0);
    if (pc == '*') {
      const bool across = p + 1 < pattern.size() && pattern[p + 1] == '*';
      if (across) {
        while (p + 1 < pattern.size() && pattern[p + 1] == '*') ++p;
      }
      for (std::size_t i = 0; i <= n; ++i) {
        next[i] = reach[i] || (i > 0 && next[i - 1] && (across || name[i - 1] != '.'));
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        if (!reach[i]) continue;
        if (pc == '?' ? name[i] != '.' : name[i] == pc) next[i + 1] = 1;
      }
    }
    reach.swap(next);
  }
  return reach[n] != 0;
}

Selector Selector::exact(std::string_view name) {
  if (!valid_operation_name(name)) Invalid(name, "not an operation name (dot-separated [A-Za-z0-9_-] segments)");
  return Selector(Kind::exact, std::string(name));
}

Selector Selector::glob(std::string_view pattern) {
  if (pattern.empty() || pattern.size() > kMaxSelectorLength) Invalid(pattern, "empty or too long");
  bool wildcard = false;
  for (char c : pattern) {
    if (c == '*' || c == '?') {
      wildcard = true;
    } else if (!NameChar(c) && c != '.') {
      Invalid(pattern, "only name characters, '.', '*' and '?' may appear in a glob");
    }
  }
  if (!wildcard) Invalid(pattern, "a glob needs '*' or '?'; use the name itself for an exact selector");
  return Selector(Kind::glob, std::string(pattern));
}

Selector Selector::prefix(std::string_view text) {
  if (text.empty() || text.size() > kMaxNameLength) Invalid(text, "a prefix must be 1 to 128 characters");
  for (char c : text) {
    if (!NameChar(c) && c != '.') Invalid(text, "only name characters and '.' may appear in a prefix");
  }
  return Selector(Kind::prefix, std::string(text));
}

Selector Selector::in_namespace(std::string_view ns) {
  if (!valid_operation_name(ns)) Invalid(ns, "a namespace is written like an operation name (\"orders\", \"shop.orders\")");
  return Selector(Kind::in_namespace, std::string(ns));
}

Selector Selector::parse(std::string_view text) {
  if (text.starts_with("ns:")) return in_namespace(text.substr(3));
  if (text.starts_with("prefix:")) return prefix(text.substr(7));
  if (text.find_first_of("*?") != std::string_view::npos) return glob(text);
  return exact(text);
}

std::string Selector::to_string() const {
  switch (kind_) {
    case Kind::exact:
    case Kind::glob: return text_;
    case Kind::prefix: return "prefix:" + text_;
    case Kind::in_namespace: return "ns:" + text_;
  }
  return text_;
}

Specificity Selector::specificity() const noexcept {
  switch (kind_) {
    case Kind::exact: return {3, text_.size()};
    case Kind::glob: {
      std::size_t literal = 0;
      for (char c : text_) literal += (c != '*' && c != '?') ? 1 : 0;
      return {2, literal};
    }
    case Kind::prefix: return {1, text_.size()};
    case Kind::in_namespace: return {0, text_.size()};
  }
  return {};
}

bool Selector::matches(std::string_view name) const noexcept {
  switch (kind_) {
    case Kind::exact: return name == text_;
    case Kind::glob: return glob_match(text_, name);
    case Kind::prefix: return name.starts_with(text_);
    case Kind::in_namespace:
      return name.size() > text_.size() + 1 && name.starts_with(text_) && name[text_.size()] == '.';
  }
  return false;
}

}  // namespace cutoff::ops
