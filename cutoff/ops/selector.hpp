// Operation names and the selectors that patches use to pick operations.
//
// An operation name is dot-separated segments of letters, digits, '_' and '-'
// ("orders.create", "example.orders.create"); at most 128 characters. A selector is written as
// a string whose form says its kind:
//
//   "orders.create"     exact       that operation only
//   "orders.*"          glob        '*' is any run of characters within one segment (no '.'),
//   "orders.**"                     '**' any run across segments, '?' one character (not '.')
//   "prefix:ord"        prefix      every name that starts with the text ("ord", "orders.x")
//   "ns:orders"         namespace   every operation inside namespace "orders" at any depth
//                                   ("orders.create", "orders.items.add"; not "orders" itself)
//
//   auto s = cutoff::ops::Selector::parse("orders.*");   // throws ConfigError when malformed
//   s.matches("orders.create");                          // true
//   s.matches("orders.items.add");                       // false: '*' stays within a segment
//
// Specificity decides which patch's single-valued settings win when several match one
// operation: kinds rank exact > glob > prefix > namespace; within a kind, more literal
// characters (characters that are not '*' or '?') are more specific. See docs/operations.md.
#ifndef CUTOFF_OPS_SELECTOR_HPP_
#define CUTOFF_OPS_SELECTOR_HPP_

#include <compare>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cutoff::ops {

// A mistake in how operations or patches were configured. Thrown while building or freezing
// a registry, never while serving a request.
class ConfigError : public std::logic_error {
 public:
  enum class Kind {
    invalid_name,         // an operation name that is not dot-separated [A-Za-z0-9_-] segments
    invalid_selector,     // a selector that does not parse
    duplicate_operation,  // the same name bound twice (also across merged registries)
    non_positive_budget,  // a declared deadline of zero or less
    missing_handler,      // an operation without a handler, found at freeze
    orphan_patch,         // a patch that matches no operation, found at freeze/materialize
    ambiguous_patches,    // two equally specific patches give one operation different values
    frozen,               // changing a registry after freeze()
    not_frozen,           // serving or listing a registry that was not frozen
  };
  ConfigError(Kind kind, const std::string& message) : std::logic_error(message), kind_(kind) {}
  Kind kind() const noexcept { return kind_; }

 private:
  Kind kind_;
};

std::string_view to_string(ConfigError::Kind kind) noexcept;

inline constexpr std::size_t kMaxNameLength = 128;

// Whether `name` is a valid operation name.
bool valid_operation_name(std::string_view name) noexcept;

// Ordered: a greater Specificity is more specific.
struct Specificity {
  int rank = 0;             // namespace 0, prefix 1, glob 2, exact 3
  std::size_t literal = 0;  // literal characters in the selector's text
  friend constexpr auto operator<=>(const Specificity&, const Specificity&) = default;
};

class Selector {
 public:
  enum class Kind { exact, glob, prefix, in_namespace };

  // Parses the string form above; throws ConfigError(invalid_selector).
  static Selector parse(std::string_view text);
  static Selector exact(std::string_view name);
  static Selector glob(std::string_view pattern);
  static Selector prefix(std::string_view text);
  static Selector in_namespace(std::string_view ns);

  Kind kind() const noexcept { return kind_; }
  // The text without the kind's marker ("orders" for "ns:orders").
  const std::string& text() const noexcept { return text_; }
  // The string form, which parse() reads back ("ns:orders", "orders.*").
  std::string to_string() const;
  Specificity specificity() const noexcept;
  bool matches(std::string_view name) const noexcept;

  friend bool operator==(const Selector&, const Selector&) = default;

 private:
  Selector(Kind kind, std::string text) : kind_(kind), text_(std::move(text)) {}
  Kind kind_;
  std::string text_;
};

// Glob matching as Selector::glob describes it; linear memory, no backtracking blow-up.
bool glob_match(std::string_view pattern, std::string_view name) noexcept;

}  // namespace cutoff::ops

#endif  // CUTOFF_OPS_SELECTOR_HPP_
