#include "cutoff/graphql/validation.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace cutoff::graphql {

namespace {

using graphql_codes::kValidationFailed;
constexpr std::size_t kMaxSuggestions = 5;
// Recursion of the merge check through nested fields and fragments. A document nested this
// deeply is not a real query; the bound keeps the stack small.
constexpr std::size_t kMaxMergeDepth = 1000;

// Thrown by Report once the error limit is reached; caught in validate().
struct ErrorLimitReached {};

using FragmentMap = std::unordered_map<std::string_view, const FragmentDefinition*>;

// ---- suggestions, as graphql-js's suggestionList and didYouMean ------------------------------------

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

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Orders runs of digits by their numeric value ("f2" < "f10"), everything else by byte.
int NaturalCompare(std::string_view a, std::string_view b) {
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

// Sorts with a comparator that need not be a strict weak order (graphql-js's type
// suggestions); never reads out of bounds. Lists are short.
template <typename T, typename Less>
void InsertionSort(std::vector<T>& v, Less less) {
  for (std::size_t i = 1; i < v.size(); ++i)
    for (std::size_t j = i; j > 0 && less(v[j], v[j - 1]); --j) std::swap(v[j], v[j - 1]);
}

std::vector<std::string> SuggestionList(std::string_view input, const std::vector<std::string_view>& options) {
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
    return NaturalCompare(x.first, y.first) < 0;
  });
  std::vector<std::string> out;
  for (const auto& f : found) out.emplace_back(f.first);
  return out;
}

// " Did you mean "a", "b", or "c"?" (empty without suggestions).
std::string DidYouMean(std::string_view sub_message, const std::vector<std::string>& suggestions) {
  if (suggestions.empty()) return {};
  std::string message = " Did you mean ";
  if (!sub_message.empty()) {
    message += sub_message;
    message += ' ';
  }
  auto quoted = [](const std::string& s) { return "\"" + s + "\""; };
  if (suggestions.size() == 1) return message + quoted(suggestions[0]) + "?";
  if (suggestions.size() == 2) return message + quoted(suggestions[0]) + " or " + quoted(suggestions[1]) + "?";
  const std::size_t n = std::min(suggestions.size(), kMaxSuggestions);
  for (std::size_t i = 0; i + 1 < n; ++i) message += quoted(suggestions[i]) + ", ";
  return message + "or " + quoted(suggestions[n - 1]) + "?";
}

std::string DidYouMean(const std::vector<std::string>& suggestions) { return DidYouMean({}, suggestions); }

// ---- printing values, as graphql-js's print() -------------------------------------------------------

void PrintString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  auto escape_unit = [&](unsigned c) {
    out += "\\u00";
    out.push_back(kHex[(c >> 4) & 0xF]);
    out.push_back(kHex[c & 0xF]);
  };
  out.push_back('"');
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          escape_unit(c);
        } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
          escape_unit(static_cast<unsigned char>(s[++i]));  // C1 controls U+0080..U+009F
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

void PrintValue(std::string& out, const Value& v, bool sort_fields);

void PrintValue(std::string& out, const Value& v, bool sort_fields) {
  switch (v.kind) {
    case Value::Kind::variable:
      out.push_back('$');
      out += v.raw;
      return;
    case Value::Kind::int_:
    case Value::Kind::float_:
    case Value::Kind::enum_: out += v.raw; return;
    case Value::Kind::string:
      if (v.block) {
        std::string body = v.string;
        for (std::size_t p = 0; (p = body.find("\"\"\"", p)) != std::string::npos; p += 4) body.insert(p, "\\");
        out += "\"\"\"" + body + "\"\"\"";
      } else {
        PrintString(out, v.string);
      }
      return;
    case Value::Kind::boolean: out += v.boolean ? "true" : "false"; return;
    case Value::Kind::null: out += "null"; return;
    case Value::Kind::list:
      out.push_back('[');
      for (std::size_t i = 0; i < v.list.size(); ++i) {
        if (i) out += ", ";
        PrintValue(out, v.list[i], sort_fields);
      }
      out.push_back(']');
      return;
    case Value::Kind::object: {
      std::vector<const ObjectField*> fields;
      for (const auto& f : v.fields) fields.push_back(&f);
      if (sort_fields)
        std::stable_sort(fields.begin(), fields.end(),
                         [](const ObjectField* a, const ObjectField* b) { return NaturalCompare(a->name, b->name) < 0; });
      out.push_back('{');
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i) out += ", ";
        out += fields[i]->name;
        out += ": ";
        PrintValue(out, fields[i]->value, sort_fields);
      }
      out.push_back('}');
      return;
    }
  }
}

std::string Print(const Value& v, bool sort_fields = false) {
  std::string out;
  PrintValue(out, v, sort_fields);
  return out;
}

bool ContainsVariable(const Value& v) {
  switch (v.kind) {
    case Value::Kind::variable: return true;
    case Value::Kind::list:
      for (const auto& item : v.list)
        if (ContainsVariable(item)) return true;
      return false;
    case Value::Kind::object:
      for (const auto& f : v.fields)
        if (ContainsVariable(f.value)) return true;
      return false;
    default: return false;
  }
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

bool IsObject(const Type* t) { return t && t->kind == TypeKind::object; }

// schema.isSubType(abstract, maybe_sub) of graphql-js: union members; the objects and
// interfaces implementing an interface.
bool IsPossibleSubtype(const Type& abstract, const Type& maybe_sub) {
  if (abstract.kind == TypeKind::union_ || maybe_sub.kind == TypeKind::object) {
    return std::find(abstract.possible_types.begin(), abstract.possible_types.end(), &maybe_sub) !=
           abstract.possible_types.end();
  }
  if (abstract.kind == TypeKind::interface && maybe_sub.kind == TypeKind::interface)
    return std::find(maybe_sub.interfaces.begin(), maybe_sub.interfaces.end(), &abstract) != maybe_sub.interfaces.end();
  return false;
}

const TypeRef& NamedRef(const TypeRef& ref) { return ref.kind == TypeRef::Kind::named ? ref : NamedRef(*ref.of); }

// A variable as used somewhere, with the type the position expects (graphql-js's
// getVariableUsages).
struct VariableUsage {
  const Value* node = nullptr;
  const Type* type = nullptr;  // null: unknown position
  bool location_has_default = false;
};

// Fields the document may select beyond a type's own (the introspection meta-fields).
struct MetaFields {
  Field typename_field;
  Field schema_field;
  Field type_field;

  explicit MetaFields(const Schema& schema) {
    auto named = [&](std::string_view name) { return schema.find_type(name); };
    auto non_null = [&](const Type* t) { return t ? schema.non_null(t) : nullptr; };
    typename_field.name = "__typename";
    typename_field.type = non_null(named("String"));
    schema_field.name = "__schema";
    schema_field.type = non_null(named("__Schema"));
    type_field.name = "__type";
    type_field.type = named("__Type");
    InputValue name_arg;
    name_arg.name = "name";
    name_arg.type = non_null(named("String"));
    type_field.args.push_back(std::move(name_arg));
  }
};

// graphql-js TypeInfo.getFieldDef: the meta-fields, then the type's own fields.
const Field* FieldDefinition(const Schema& schema, const MetaFields& meta, const Type& parent, std::string_view name) {
  if (name == "__schema" && &parent == schema.query_type() && meta.schema_field.type) return &meta.schema_field;
  if (name == "__type" && &parent == schema.query_type() && meta.type_field.type) return &meta.type_field;
  if (name == "__typename" && parent.is_composite() && meta.typename_field.type) return &meta.typename_field;
  if (parent.kind == TypeKind::object || parent.kind == TypeKind::interface) return parent.find_field(name);
  return nullptr;
}

// ---- OverlappingFieldsCanBeMerged ------------------------------------------------------------------
//
// graphql-js's algorithm: each selection set compares the fields it collects (through inline
// fragments) among themselves, with the fragments it spreads, and those fragments with each
// other; two fields of the same response name compare their sub-selections in turn. Fragment
// pairs are memoised, and within a group of fields with one response name only structurally
// distinct fields are compared (identical ones give identical results), which keeps
// repetition linear.

class MergeChecker {
 public:
  using Reporter = std::function<void(std::string, std::vector<Location>)>;

  MergeChecker(const Schema& schema, const FragmentMap& fragments, std::size_t max_comparisons, Reporter report)
      : schema_(schema), fragments_(fragments), max_comparisons_(max_comparisons), report_(std::move(report)) {}

  // Reports the conflicts among the fields of `set`. Only about `wanted` are needed (the errors
  // still allowed), which bounds the memory an invalid document can make this take.
  void Check(const SelectionSet& set, const Type* parent_type, std::size_t wanted) {
    if (gave_up_ || set.empty()) return;
    conflicts_made_ = 0;
    max_conflicts_ = std::min<std::size_t>(wanted, 1'000'000) + 1000;
    std::vector<Conflict> conflicts;
    try {
      FindConflictsWithin(conflicts, parent_type, set);
    } catch (const TooComplex& e) {
      gave_up_ = true;
      depth_ = 0;
      report_(e.message, {set.front().loc});
      return;
    }
    for (Conflict& c : conflicts) {
      std::vector<Location> locations;
      for (const Selection* s : c.fields1) locations.push_back(s->loc);
      for (const Selection* s : c.fields2) locations.push_back(s->loc);
      report_("Fields \"" + std::string(c.response_name) + "\" conflict because " + c.reason +
                  ". Use different aliases on the fields to fetch both if this was intentional.",
              std::move(locations));
    }
  }

 private:
  struct TooComplex {
    std::string message;
  };

  struct Entry {
    const Type* parent;  // the named type the field is selected on; null when unknown
    const Selection* node;
    const Field* def;  // null when unknown
  };

  struct Group {
    std::string_view response_name;
    std::vector<Entry> entries;
    std::vector<const Entry*> distinct;  // computed on first use
  };

  struct Collected {
    std::vector<Group> groups;
    std::unordered_map<std::string_view, std::size_t> index;
    std::vector<std::string_view> fragment_names;  // spread here, each once
    Group* Find(std::string_view response_name) {
      auto it = index.find(response_name);
      return it == index.end() ? nullptr : &groups[it->second];
    }
  };

  struct Conflict {
    std::string_view response_name;
    std::string reason;
    std::vector<const Selection*> fields1, fields2;
  };

  struct PairHash {
    std::size_t operator()(const std::pair<std::string_view, std::string_view>& p) const noexcept {
      const std::size_t a = std::hash<std::string_view>()(p.first), b = std::hash<std::string_view>()(p.second);
      return a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
    }
  };

  struct ShapeKeyHash {
    std::size_t operator()(const std::pair<const Type*, std::uint32_t>& p) const noexcept {
      return std::hash<const void*>()(p.first) * 31 + p.second;
    }
  };

  class DepthGuard {
   public:
    explicit DepthGuard(MergeChecker& c) : c_(c) {
      if (++c_.depth_ > kMaxMergeDepth)
        throw TooComplex{"Validation aborted: fields are nested too deeply through fragments to check that they can "
                         "be merged."};
    }
    ~DepthGuard() { --c_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    MergeChecker& c_;
  };

  // Fragment pairs already compared; "not mutually exclusive" covers "mutually exclusive".
  bool PairCompared(std::string_view a, std::string_view b, bool mutually_exclusive) const {
    auto it = compared_pairs_.find(a < b ? std::pair(a, b) : std::pair(b, a));
    if (it == compared_pairs_.end()) return false;
    return mutually_exclusive || !it->second;
  }
  void AddPair(std::string_view a, std::string_view b, bool mutually_exclusive) {
    compared_pairs_[a < b ? std::pair(a, b) : std::pair(b, a)] = mutually_exclusive;
  }

  const FragmentDefinition* Fragment(std::string_view name) const {
    auto it = fragments_.find(name);
    return it == fragments_.end() ? nullptr : it->second;
  }

  void Collect(const Type* parent_type, const SelectionSet& set, Collected& out,
               std::unordered_set<std::string_view>& fragment_names) {
    for (const Selection& s : set) {
      switch (s.kind) {
        case Selection::Kind::field: {
          const Field* def = nullptr;
          if (parent_type && (parent_type->kind == TypeKind::object || parent_type->kind == TypeKind::interface))
            def = parent_type->find_field(s.name);
          auto [it, inserted] = out.index.emplace(s.response_key(), out.groups.size());
          if (inserted) out.groups.push_back(Group{s.response_key(), {}, {}});
          out.groups[it->second].entries.push_back(Entry{parent_type, &s, def});
          break;
        }
        case Selection::Kind::fragment_spread:
          if (fragment_names.insert(s.name).second) out.fragment_names.push_back(s.name);
          break;
        case Selection::Kind::inline_fragment: {
          const Type* t = s.type_condition.empty() ? parent_type : schema_.find_type(s.type_condition);
          Collect(t, s.selection_set, out, fragment_names);
          break;
        }
      }
    }
  }

  Collected& FieldsAndFragmentNames(const Type* parent_type, const SelectionSet& set) {
    std::unique_ptr<Collected>& slot = cache_[&set];
    if (!slot) {
      slot = std::make_unique<Collected>();
      std::unordered_set<std::string_view> names;
      Collect(parent_type, set, *slot, names);
    }
    return *slot;
  }

  Collected& ReferencedFieldsAndFragmentNames(const FragmentDefinition& fragment) {
    auto it = cache_.find(&fragment.selection_set);
    if (it != cache_.end()) return *it->second;
    return FieldsAndFragmentNames(schema_.find_type(fragment.type_condition), fragment.selection_set);
  }

  // A number per distinct field shape (alias, name, arguments, sub-selections, recursively;
  // directives do not matter for merging).
  std::uint32_t ShapeOf(const Selection& s) {
    auto known = shapes_.find(&s);
    if (known != shapes_.end()) return known->second;
    std::string key;
    switch (s.kind) {
      case Selection::Kind::field: {
        key = "F";
        key += s.alias;
        key += ':';
        key += s.name;
        key += '(';
        std::vector<const Argument*> args;
        for (const Argument& a : s.arguments) args.push_back(&a);
        std::stable_sort(args.begin(), args.end(), [](const Argument* x, const Argument* y) { return x->name < y->name; });
        for (const Argument* a : args) {
          key += a->name;
          key += ':';
          PrintValue(key, a->value, true);
          key += ',';
        }
        key += ')';
        break;
      }
      case Selection::Kind::fragment_spread:
        key = "S";
        key += s.name;
        break;
      case Selection::Kind::inline_fragment:
        key = "I";
        key += s.type_condition;
        break;
    }
    if (!s.selection_set.empty()) {
      key += '{';
      for (const Selection& child : s.selection_set) key += std::to_string(ShapeOf(child)) + ",";
      key += '}';
    }
    auto [it, inserted] = interned_.emplace(std::move(key), static_cast<std::uint32_t>(interned_.size()));
    shapes_.emplace(&s, it->second);
    return it->second;
  }

  const std::vector<const Entry*>& Distinct(Group& g) {
    if (g.distinct.empty()) {
      if (g.entries.size() == 1) {
        g.distinct.push_back(&g.entries[0]);
      } else {
        std::unordered_set<std::pair<const Type*, std::uint32_t>, ShapeKeyHash> seen;
        for (const Entry& e : g.entries)
          if (seen.emplace(e.parent, ShapeOf(*e.node)).second) g.distinct.push_back(&e);
      }
    }
    return g.distinct;
  }

  void FindConflictsWithin(std::vector<Conflict>& conflicts, const Type* parent_type, const SelectionSet& set) {
    Collected& fields = FieldsAndFragmentNames(parent_type, set);
    CollectConflictsWithin(conflicts, fields);
    if (fields.fragment_names.empty()) return;
    std::vector<std::pair<std::string_view, std::string_view>> discovered;
    const auto& names = fields.fragment_names;
    for (std::size_t i = 0; i < names.size(); ++i) {
      CollectConflictsBetweenFieldsAndFragment(conflicts, false, fields, names[i], discovered);
      for (std::size_t j = i + 1; j < names.size(); ++j)
        CollectConflictsBetweenFragments(conflicts, false, names[i], names[j]);
    }
    ProcessDiscoveredFragments(conflicts, false, fields, discovered);
  }

  void CollectConflictsBetweenFieldsAndFragment(std::vector<Conflict>& conflicts, bool mutually_exclusive,
                                                Collected& fields, std::string_view fragment_name,
                                                std::vector<std::pair<std::string_view, std::string_view>>& discovered) {
    const FragmentDefinition* fragment = Fragment(fragment_name);
    if (!fragment) return;
    Collected& fields2 = ReferencedFieldsAndFragmentNames(*fragment);
    if (&fields == &fields2) return;  // a fragment's fields are not compared with themselves
    CollectConflictsBetween(conflicts, mutually_exclusive, fields, fields2);
    for (std::string_view referenced : fields2.fragment_names) discovered.emplace_back(fragment_name, referenced);
  }

  // Fragments spread inside fragments, compared with `fields` from an explicit stack (a
  // long chain of fragments must not recurse).
  void ProcessDiscoveredFragments(std::vector<Conflict>& conflicts, bool mutually_exclusive, Collected& fields,
                                  std::vector<std::pair<std::string_view, std::string_view>>& discovered) {
    while (!discovered.empty()) {
      const auto [fragment_name, referenced] = discovered.back();
      discovered.pop_back();
      if (PairCompared(referenced, fragment_name, mutually_exclusive)) continue;
      AddPair(referenced, fragment_name, mutually_exclusive);
      CollectConflictsBetweenFieldsAndFragment(conflicts, mutually_exclusive, fields, referenced, discovered);
    }
  }

  void CollectConflictsBetweenFragments(std::vector<Conflict>& conflicts, bool mutually_exclusive,
                                        std::string_view name1, std::string_view name2) {
    if (name1 == name2) return;
    if (PairCompared(name1, name2, mutually_exclusive)) return;
    AddPair(name1, name2, mutually_exclusive);
    const FragmentDefinition* f1 = Fragment(name1);
    const FragmentDefinition* f2 = Fragment(name2);
    if (!f1 || !f2) return;
    DepthGuard guard(*this);
    Collected& fields1 = ReferencedFieldsAndFragmentNames(*f1);
    Collected& fields2 = ReferencedFieldsAndFragmentNames(*f2);
    CollectConflictsBetween(conflicts, mutually_exclusive, fields1, fields2);
    for (std::string_view referenced2 : fields2.fragment_names)
      CollectConflictsBetweenFragments(conflicts, mutually_exclusive, name1, referenced2);
    for (std::string_view referenced1 : fields1.fragment_names)
      CollectConflictsBetweenFragments(conflicts, mutually_exclusive, referenced1, name2);
  }

  std::vector<Conflict> FindConflictsBetweenSubSelectionSets(bool mutually_exclusive, const Type* parent1,
                                                             const SelectionSet& set1, const Type* parent2,
                                                             const SelectionSet& set2) {
    std::vector<Conflict> conflicts;
    Collected& fields1 = FieldsAndFragmentNames(parent1, set1);
    Collected& fields2 = FieldsAndFragmentNames(parent2, set2);
    CollectConflictsBetween(conflicts, mutually_exclusive, fields1, fields2);
    std::vector<std::pair<std::string_view, std::string_view>> discovered;
    for (std::string_view name2 : fields2.fragment_names)
      CollectConflictsBetweenFieldsAndFragment(conflicts, mutually_exclusive, fields1, name2, discovered);
    ProcessDiscoveredFragments(conflicts, mutually_exclusive, fields1, discovered);
    for (std::string_view name1 : fields1.fragment_names)
      CollectConflictsBetweenFieldsAndFragment(conflicts, mutually_exclusive, fields2, name1, discovered);
    ProcessDiscoveredFragments(conflicts, mutually_exclusive, fields2, discovered);
    for (std::string_view name1 : fields1.fragment_names)
      for (std::string_view name2 : fields2.fragment_names)
        CollectConflictsBetweenFragments(conflicts, mutually_exclusive, name1, name2);
    return conflicts;
  }

  void CollectConflictsWithin(std::vector<Conflict>& conflicts, Collected& fields) {
    for (Group& group : fields.groups) {
      if (group.entries.size() < 2) continue;
      const auto& distinct = Distinct(group);
      for (std::size_t i = 0; i < distinct.size() && !Full(); ++i)
        for (std::size_t j = i + 1; j < distinct.size() && !Full(); ++j)
          if (auto c = FindConflict(false, group.response_name, *distinct[i], *distinct[j]))
            conflicts.push_back(std::move(*c));
    }
  }

  void CollectConflictsBetween(std::vector<Conflict>& conflicts, bool mutually_exclusive, Collected& fields1,
                               Collected& fields2) {
    for (Group& group1 : fields1.groups) {
      Group* group2 = fields2.Find(group1.response_name);
      if (!group2) continue;
      const auto& distinct1 = Distinct(group1);
      const auto& distinct2 = Distinct(*group2);
      for (std::size_t i = 0; i < distinct1.size() && !Full(); ++i)
        for (std::size_t j = 0; j < distinct2.size() && !Full(); ++j)
          if (auto c = FindConflict(mutually_exclusive, group1.response_name, *distinct1[i], *distinct2[j]))
            conflicts.push_back(std::move(*c));
    }
  }

  static bool SameArguments(const Selection& a, const Selection& b) {
    if (a.arguments.empty()) return b.arguments.empty();
    if (b.arguments.size() != a.arguments.size()) return false;
    for (const Argument& arg1 : a.arguments) {
      const Argument* arg2 = nullptr;
      for (const Argument& candidate : b.arguments)
        if (candidate.name == arg1.name) arg2 = &candidate;  // the last, as a JS Map built from the list
      if (!arg2) return false;
      if (Print(arg1.value, true) != Print(arg2->value, true)) return false;
    }
    return true;
  }

  // Two types conflict when no value could have both shapes: lists and non-null must match,
  // leaf types must be the same; composite types are compared through their fields.
  static bool DoTypesConflict(const Type& t1, const Type& t2) {
    if (t1.is_list()) return t2.is_list() ? DoTypesConflict(*t1.of_type, *t2.of_type) : true;
    if (t2.is_list()) return true;
    if (t1.is_non_null()) return t2.is_non_null() ? DoTypesConflict(*t1.of_type, *t2.of_type) : true;
    if (t2.is_non_null()) return true;
    if (t1.is_leaf() || t2.is_leaf()) return &t1 != &t2;
    return false;
  }

  // Enough conflicts for every error still allowed: the rest would not be reported.
  bool Full() const { return conflicts_made_ >= max_conflicts_; }

  std::optional<Conflict> FindConflict(bool parents_mutually_exclusive, std::string_view response_name,
                                       const Entry& e1, const Entry& e2) {
    if (++comparisons_ > max_comparisons_)
      throw TooComplex{"Validation aborted: checking that fields can be merged needs more than " +
                       std::to_string(max_comparisons_) + " comparisons."};
    std::optional<Conflict> found = FindConflictUncounted(parents_mutually_exclusive, response_name, e1, e2);
    if (found) ++conflicts_made_;
    return found;
  }

  std::optional<Conflict> FindConflictUncounted(bool parents_mutually_exclusive, std::string_view response_name,
                                                const Entry& e1, const Entry& e2) {
    // Fields on two different object types can never apply to the same object, so they may
    // differ in name and arguments; interfaces and unions might overlap.
    const bool mutually_exclusive =
        parents_mutually_exclusive || (e1.parent != e2.parent && IsObject(e1.parent) && IsObject(e2.parent));
    const Selection& node1 = *e1.node;
    const Selection& node2 = *e2.node;
    if (!mutually_exclusive) {
      if (node1.name != node2.name)
        return Conflict{response_name,
                        Quote(node1.name) + " and " + Quote(node2.name) + " are different fields",
                        {&node1},
                        {&node2}};
      if (!SameArguments(node1, node2)) return Conflict{response_name, "they have differing arguments", {&node1}, {&node2}};
    }
    const Type* type1 = e1.def ? e1.def->type : nullptr;
    const Type* type2 = e2.def ? e2.def->type : nullptr;
    if (type1 && type2 && DoTypesConflict(*type1, *type2))
      return Conflict{response_name,
                      "they return conflicting types " + Quote(type1->display()) + " and " + Quote(type2->display()),
                      {&node1},
                      {&node2}};
    if (node1.selection_set.empty() || node2.selection_set.empty()) return std::nullopt;
    DepthGuard guard(*this);
    std::vector<Conflict> sub = FindConflictsBetweenSubSelectionSets(
        mutually_exclusive, type1 ? &type1->named() : nullptr, node1.selection_set, type2 ? &type2->named() : nullptr,
        node2.selection_set);
    if (sub.empty()) return std::nullopt;
    Conflict c{response_name, {}, {&node1}, {&node2}};
    for (std::size_t i = 0; i < sub.size(); ++i) {
      if (i) c.reason += " and ";
      c.reason += "subfields " + Quote(sub[i].response_name) + " conflict because " + sub[i].reason;
      c.fields1.insert(c.fields1.end(), sub[i].fields1.begin(), sub[i].fields1.end());
      c.fields2.insert(c.fields2.end(), sub[i].fields2.begin(), sub[i].fields2.end());
    }
    return c;
  }

  const Schema& schema_;
  const FragmentMap& fragments_;
  const std::size_t max_comparisons_;
  Reporter report_;
  std::size_t comparisons_ = 0;
  std::size_t depth_ = 0;
  std::size_t conflicts_made_ = 0;
  std::size_t max_conflicts_ = 0;
  bool gave_up_ = false;
  std::unordered_map<const SelectionSet*, std::unique_ptr<Collected>> cache_;
  std::unordered_map<std::pair<std::string_view, std::string_view>, bool, PairHash> compared_pairs_;
  std::unordered_map<const Selection*, std::uint32_t> shapes_;
  std::unordered_map<std::string, std::uint32_t> interned_;
};

// ---- the validator ---------------------------------------------------------------------------------
//
// One walk over the document in graphql-js's visiting order, tracking what graphql-js's
// TypeInfo tracks (parent type, field, input type); at each node the rules run in the order of
// graphql-js's specifiedRules, so that errors come out in the same order.

class Validator {
 public:
  Validator(const Schema& schema, const Document& document, const ValidationOptions& options)
      : schema_(schema),
        doc_(document),
        options_(options),
        meta_(schema),
        merge_(schema, fragments_, options.max_field_comparisons,
               [this](std::string message, std::vector<Location> locations) {
                 Report(std::move(message), std::move(locations));
               }) {
    for (const FragmentDefinition& f : doc_.fragments) fragments_[f.name] = &f;  // the last of a name wins
    for (const TypeDefinition& t : doc_.types)
      if (!t.extension) defined_types_.insert(t.name);
  }

  std::vector<GraphQLError> Run() {
    try {
      CheckExecutableDefinitions();
      // Operations and fragments in document order.
      struct Definition {
        Location loc;
        const OperationDefinition* operation;
        const FragmentDefinition* fragment;
      };
      std::vector<Definition> definitions;
      for (const auto& op : doc_.operations) definitions.push_back({op.loc, &op, nullptr});
      for (const auto& f : doc_.fragments) definitions.push_back({f.loc, nullptr, &f});
      std::stable_sort(definitions.begin(), definitions.end(), [](const Definition& a, const Definition& b) {
        return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.column < b.loc.column;
      });
      for (const Definition& d : definitions) {
        if (d.operation) VisitOperation(*d.operation);
        else VisitFragment(*d.fragment);
      }
      CheckUnusedFragments();
    } catch (const ErrorLimitReached&) {
    }
    return std::move(errors_);
  }

 private:
  void Report(std::string message, std::vector<Location> locations) {
    if (errors_.size() >= options_.max_errors) {
      errors_.push_back(GraphQLError{"Too many validation errors, error limit reached. Validation aborted.", {}, {},
                                     kValidationFailed});
      throw ErrorLimitReached{};
    }
    errors_.push_back(GraphQLError{std::move(message), std::move(locations), {}, kValidationFailed});
  }

  std::size_t ErrorsLeft() const {
    return options_.max_errors > errors_.size() ? options_.max_errors - errors_.size() : 0;
  }

  const FragmentDefinition* Fragment(std::string_view name) const {
    auto it = fragments_.find(name);
    return it == fragments_.end() ? nullptr : it->second;
  }

  const Field* FieldDef(const Type& parent, std::string_view name) const {
    return FieldDefinition(schema_, meta_, parent, name);
  }

  // The spreads anywhere in `set`, in graphql-js's getFragmentSpreads order.
  const std::vector<const Selection*>& FragmentSpreads(const SelectionSet& set) {
    auto [it, inserted] = spreads_.try_emplace(&set);
    if (!inserted) return it->second;
    std::vector<const Selection*>& spreads = it->second;
    std::vector<const SelectionSet*> to_visit{&set};
    while (!to_visit.empty()) {
      const SelectionSet* s = to_visit.back();
      to_visit.pop_back();
      for (const Selection& sel : *s) {
        if (sel.kind == Selection::Kind::fragment_spread) spreads.push_back(&sel);
        else if (!sel.selection_set.empty()) to_visit.push_back(&sel.selection_set);
      }
    }
    return spreads;
  }

  // The fragments an operation uses, directly or through other fragments.
  std::vector<const FragmentDefinition*> RecursivelyReferencedFragments(const OperationDefinition& op) {
    std::vector<const FragmentDefinition*> fragments;
    std::unordered_set<std::string_view> collected;
    std::vector<const SelectionSet*> to_visit{&op.selection_set};
    while (!to_visit.empty()) {
      const SelectionSet* set = to_visit.back();
      to_visit.pop_back();
      for (const Selection* spread : FragmentSpreads(*set)) {
        if (!collected.insert(spread->name).second) continue;
        if (const FragmentDefinition* f = Fragment(spread->name)) {
          fragments.push_back(f);
          to_visit.push_back(&f->selection_set);
        }
      }
    }
    return fragments;
  }

  // ---- 5.1 ExecutableDefinitions

  void CheckExecutableDefinitions() {
    struct NonExecutable {
      Location loc;
      std::string label;
    };
    std::vector<NonExecutable> found;
    for (const auto& t : doc_.types) found.push_back({t.loc, Quote(t.name)});
    for (const auto& s : doc_.schemas) found.push_back({s.loc, "schema"});
    for (const auto& d : doc_.directives) found.push_back({d.loc, Quote(d.name)});
    std::stable_sort(found.begin(), found.end(), [](const NonExecutable& a, const NonExecutable& b) {
      return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.column < b.loc.column;
    });
    for (const auto& n : found) Report("The " + n.label + " definition is not executable.", {n.loc});
  }

  // ---- operations

  void VisitOperation(const OperationDefinition& op) {
    // UniqueOperationNames
    if (!op.name.empty()) {
      auto [it, inserted] = operation_names_.emplace(op.name, op.name_loc);
      if (!inserted)
        Report("There can be only one operation named " + Quote(op.name) + ".", {it->second, op.name_loc});
    }
    // LoneAnonymousOperation
    if (op.name.empty() && doc_.operations.size() > 1)
      Report("This anonymous operation must be the only defined operation.", {op.loc});
    // SingleFieldSubscriptions
    if (op.type == OperationType::subscription) CheckSingleFieldSubscription(op);
    // UniqueVariableNames
    {
      std::vector<std::pair<std::string_view, std::vector<Location>>> groups;
      std::unordered_map<std::string_view, std::size_t> index;
      for (const VariableDefinition& v : op.variables) {
        auto [it, inserted] = index.emplace(v.name, groups.size());
        if (inserted) groups.push_back({v.name, {}});
        groups[it->second].second.push_back(v.name_loc);
      }
      for (auto& [name, locations] : groups)
        if (locations.size() > 1)
          Report("There can be only one variable named \"$" + std::string(name) + "\".", std::move(locations));
    }
    CheckUniqueDirectives(op.directives);

    for (const VariableDefinition& v : op.variables) VisitVariableDefinition(v);
    VisitDirectives(op.directives, op.type == OperationType::query      ? "QUERY"
                                   : op.type == OperationType::mutation ? "MUTATION"
                                                                        : "SUBSCRIPTION");
    VisitSelectionSet(op.selection_set, schema_.root_type(op.type));

    CheckOperationVariables(op);
  }

  void VisitVariableDefinition(const VariableDefinition& v) {
    const Type* type = schema_.type_from_ref(v.type);
    // VariablesAreInputTypes
    if (type && !type->is_input())
      Report("Variable \"$" + std::string(v.name) + "\" cannot be non-input type " + Quote(v.type.to_string()) + ".",
             {v.type.loc});
    CheckUniqueDirectives(v.directives);
    // KnownTypeNames
    const TypeRef& named = NamedRef(v.type);
    CheckKnownType(named.name, named.loc);
    if (v.default_value) VisitValue(*v.default_value, type && type->is_input() ? type : nullptr, true);
    VisitDirectives(v.directives, "VARIABLE_DEFINITION");
  }

  // NoUndefinedVariables, NoUnusedVariables and VariablesInAllowedPosition, when leaving an
  // operation: they follow the operation's fragments.
  void CheckOperationVariables(const OperationDefinition& op) {
    std::vector<VariableUsage> usages = OperationUsages(op);
    for (const FragmentDefinition* f : RecursivelyReferencedFragments(op)) {
      const std::vector<VariableUsage>& more = FragmentUsages(*f);
      usages.insert(usages.end(), more.begin(), more.end());
    }
    std::unordered_map<std::string_view, const VariableDefinition*> defined;
    for (const VariableDefinition& v : op.variables) defined[v.name] = &v;  // the last of a name wins

    for (const VariableUsage& u : usages) {
      if (defined.count(u.node->raw)) continue;
      const std::string var = "\"$" + std::string(u.node->raw) + "\"";
      Report(op.name.empty() ? "Variable " + var + " is not defined."
                             : "Variable " + var + " is not defined by operation " + Quote(op.name) + ".",
             {u.node->loc, op.loc});
    }

    std::unordered_set<std::string_view> used;
    for (const VariableUsage& u : usages) used.insert(u.node->raw);
    for (const VariableDefinition& v : op.variables) {
      if (used.count(v.name)) continue;
      const std::string var = "\"$" + std::string(v.name) + "\"";
      Report(op.name.empty() ? "Variable " + var + " is never used."
                             : "Variable " + var + " is never used in operation " + Quote(op.name) + ".",
             {v.loc});
    }

    for (const VariableUsage& u : usages) {
      auto it = defined.find(u.node->raw);
      if (it == defined.end() || !u.type) continue;
      const VariableDefinition& def = *it->second;
      const Type* var_type = schema_.type_from_ref(def.type);
      if (!var_type || AllowedVariableUsage(*var_type, def, *u.type, u.location_has_default)) continue;
      Report("Variable \"$" + std::string(u.node->raw) + "\" of type " + Quote(var_type->display()) +
                 " used in position expecting type " + Quote(u.type->display()) + ".",
             {def.loc, u.node->loc});
    }
  }

  // A nullable variable may flow into a non-null position when a default fills the gap: its
  // own non-null default, or the position's default.
  bool AllowedVariableUsage(const Type& var_type, const VariableDefinition& def, const Type& location_type,
                            bool location_has_default) const {
    if (location_type.is_non_null() && !var_type.is_non_null()) {
      const bool non_null_default = def.default_value && def.default_value->kind != Value::Kind::null;
      if (!non_null_default && !location_has_default) return false;
      return schema_.is_subtype(var_type, *location_type.of_type);
    }
    return schema_.is_subtype(var_type, location_type);
  }

  // ---- 5.2.3.1 SingleFieldSubscriptions

  static bool LiteralIf(const Directive& d, bool& value) {
    for (const Argument& a : d.arguments)
      if (a.name == "if" && a.value.kind == Value::Kind::boolean) {
        value = a.value.boolean;
        return true;
      }
    return false;
  }

  // @skip/@include with literal arguments; a variable counts as included (no values here).
  static bool ShouldInclude(const std::vector<Directive>& directives) {
    for (const Directive& d : directives) {
      if (d.name != "skip") continue;
      bool v = false;
      if (LiteralIf(d, v) && v) return false;
      break;
    }
    for (const Directive& d : directives) {
      if (d.name != "include") continue;
      bool v = true;
      if (LiteralIf(d, v) && !v) return false;
      break;
    }
    return true;
  }

  bool ConditionMatches(std::string_view type_condition, const Type& runtime) const {
    if (type_condition.empty()) return true;
    const Type* t = schema_.find_type(type_condition);
    if (t == &runtime) return true;
    return t && t->is_abstract() && IsPossibleSubtype(*t, runtime);
  }

  void CheckSingleFieldSubscription(const OperationDefinition& op) {
    const Type* root = schema_.subscription_type();
    if (!root) return;
    // The root fields as execution collects them, without variables.
    std::vector<std::pair<std::string_view, std::vector<const Selection*>>> fields;
    std::unordered_map<std::string_view, std::size_t> index;
    std::unordered_set<std::string_view> visited_fragments;
    std::vector<std::pair<const SelectionSet*, std::size_t>> stack{{&op.selection_set, 0}};
    while (!stack.empty()) {
      const SelectionSet* set = stack.back().first;
      const std::size_t i = stack.back().second++;
      if (i == set->size()) {
        stack.pop_back();
        continue;
      }
      const Selection& s = (*set)[i];
      switch (s.kind) {
        case Selection::Kind::field: {
          if (!ShouldInclude(s.directives)) break;
          auto [it, inserted] = index.emplace(s.response_key(), fields.size());
          if (inserted) fields.push_back({s.response_key(), {}});
          fields[it->second].second.push_back(&s);
          break;
        }
        case Selection::Kind::inline_fragment:
          if (ShouldInclude(s.directives) && ConditionMatches(s.type_condition, *root))
            stack.push_back({&s.selection_set, 0});
          break;
        case Selection::Kind::fragment_spread: {
          if (visited_fragments.count(s.name) || !ShouldInclude(s.directives)) break;
          visited_fragments.insert(s.name);
          const FragmentDefinition* f = Fragment(s.name);
          if (f && ConditionMatches(f->type_condition, *root)) stack.push_back({&f->selection_set, 0});
          break;
        }
      }
    }
    const std::string subject = op.name.empty() ? "Anonymous Subscription" : "Subscription " + Quote(op.name);
    if (fields.size() > 1) {
      std::vector<Location> extra;
      for (std::size_t i = 1; i < fields.size(); ++i)
        for (const Selection* s : fields[i].second) extra.push_back(s->loc);
      Report(subject + " must select only one top level field.", std::move(extra));
    }
    for (const auto& [key, nodes] : fields) {
      if (nodes[0]->name.substr(0, 2) != "__") continue;
      std::vector<Location> locations;
      for (const Selection* s : nodes) locations.push_back(s->loc);
      Report(subject + " must not select an introspection top level field.", std::move(locations));
    }
  }

  // ---- fragments

  void VisitFragment(const FragmentDefinition& f) {
    const Type* type = schema_.find_type(f.type_condition);
    // FragmentsOnCompositeTypes
    if (type && !type->is_composite())
      Report("Fragment " + Quote(f.name) + " cannot condition on non composite type " + Quote(f.type_condition) + ".",
             {f.type_condition_loc});
    // UniqueFragmentNames
    auto [it, inserted] = fragment_names_.emplace(f.name, f.name_loc);
    if (!inserted) Report("There can be only one fragment named " + Quote(f.name) + ".", {it->second, f.name_loc});
    // NoFragmentCycles
    DetectFragmentCycles(f);
    CheckUniqueDirectives(f.directives);
    // KnownTypeNames
    CheckKnownType(f.type_condition, f.type_condition_loc);
    VisitDirectives(f.directives, "FRAGMENT_DEFINITION");
    VisitSelectionSet(f.selection_set, type && type->is_output() ? type : nullptr);
  }

  // 5.5.2.2 NoFragmentCycles: graphql-js's depth-first search over spreads, on an explicit
  // stack. Each fragment is entered once, so each cycle is reported once.
  void DetectFragmentCycles(const FragmentDefinition& start) {
    struct Frame {
      std::string_view name;
      const std::vector<const Selection*>* spreads;
      std::size_t next = 0;
    };
    std::vector<Frame> stack;
    auto enter = [&](const FragmentDefinition& f) {
      visited_fragments_.insert(f.name);
      const std::vector<const Selection*>& spreads = FragmentSpreads(f.selection_set);
      if (spreads.empty()) return false;
      spread_path_index_[f.name] = spread_path_.size();
      stack.push_back(Frame{f.name, &spreads, 0});
      return true;
    };
    if (visited_fragments_.count(start.name)) return;
    enter(start);
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next == top.spreads->size()) {
        spread_path_index_.erase(top.name);
        stack.pop_back();
        if (!stack.empty()) spread_path_.pop_back();  // the spread that led into the fragment just left
        continue;
      }
      const Selection* spread = (*top.spreads)[top.next++];
      spread_path_.push_back(spread);
      auto cycle = spread_path_index_.find(spread->name);
      if (cycle == spread_path_index_.end()) {
        const FragmentDefinition* f = Fragment(spread->name);
        if (f && !visited_fragments_.count(f->name) && enter(*f)) continue;  // the spread stays on the path
      } else {
        std::vector<Location> locations;
        std::string via;
        for (std::size_t i = cycle->second; i < spread_path_.size(); ++i) {
          locations.push_back(spread_path_[i]->loc);
          if (i + 1 < spread_path_.size()) {
            if (!via.empty()) via += ", ";
            via += Quote(spread_path_[i]->name);
          }
        }
        Report("Cannot spread fragment " + Quote(spread->name) + " within itself" +
                   (via.empty() ? std::string(".") : " via " + via + "."),
               std::move(locations));
      }
      spread_path_.pop_back();
    }
  }

  // 5.5.1.4 NoUnusedFragments, when leaving the document.
  void CheckUnusedFragments() {
    std::unordered_set<std::string_view> used;
    for (const OperationDefinition& op : doc_.operations)
      for (const FragmentDefinition* f : RecursivelyReferencedFragments(op)) used.insert(f->name);
    std::vector<const FragmentDefinition*> in_order;
    for (const FragmentDefinition& f : doc_.fragments) in_order.push_back(&f);
    std::stable_sort(in_order.begin(), in_order.end(), [](const FragmentDefinition* a, const FragmentDefinition* b) {
      return a->loc.line != b->loc.line ? a->loc.line < b->loc.line : a->loc.column < b->loc.column;
    });
    for (const FragmentDefinition* f : in_order)
      if (!used.count(f->name)) Report("Fragment " + Quote(f->name) + " is never used.", {f->loc});
  }

  // ---- selections

  void VisitSelectionSet(const SelectionSet& set, const Type* type) {
    const Type* parent = type && type->named().is_composite() ? &type->named() : nullptr;
    // OverlappingFieldsCanBeMerged
    merge_.Check(set, parent, ErrorsLeft());
    for (const Selection& s : set) {
      switch (s.kind) {
        case Selection::Kind::field: VisitField(s, parent); break;
        case Selection::Kind::fragment_spread: VisitFragmentSpread(s, parent); break;
        case Selection::Kind::inline_fragment: VisitInlineFragment(s, parent, type); break;
      }
    }
  }

  void VisitField(const Selection& f, const Type* parent) {
    const Field* def = parent ? FieldDef(*parent, f.name) : nullptr;
    const Type* type = def ? def->type : nullptr;
    // ScalarLeafs
    if (type) {
      if (type->named().is_leaf()) {
        if (!f.selection_set.empty())
          Report("Field " + Quote(f.name) + " must not have a selection since type " + Quote(type->display()) +
                     " has no subfields.",
                 {f.selection_set_loc});
      } else if (f.selection_set.empty()) {
        Report("Field " + Quote(f.name) + " of type " + Quote(type->display()) +
                   " must have a selection of subfields. Did you mean \"" + std::string(f.name) + " { ... }\"?",
               {f.loc});
      }
    }
    // FieldsOnCorrectType
    if (parent && !def) ReportUnknownField(*parent, f);
    CheckUniqueDirectives(f.directives);
    CheckUniqueArguments(f.arguments);

    for (const Argument& a : f.arguments) {
      const InputValue* arg = def ? def->find_arg(a.name) : nullptr;
      // KnownArgumentNames
      if (!arg && def && parent) {
        std::vector<std::string_view> names;
        for (const InputValue& known : def->args) names.push_back(known.name);
        Report("Unknown argument " + Quote(a.name) + " on field " + Quote(parent->name + "." + def->name) + "." +
                   DidYouMean(SuggestionList(a.name, names)),
               {a.loc});
      }
      VisitValue(a.value, arg ? arg->type : nullptr, true);
    }
    VisitDirectives(f.directives, "FIELD");
    if (!f.selection_set.empty()) VisitSelectionSet(f.selection_set, type);

    // ProvidedRequiredArguments
    if (def) {
      for (const InputValue& arg : def->args) {
        if (!arg.type || !arg.type->is_non_null() || arg.default_value) continue;
        const bool provided = std::any_of(f.arguments.begin(), f.arguments.end(),
                                          [&](const Argument& a) { return a.name == arg.name; });
        if (!provided)
          Report("Field " + Quote(def->name) + " argument " + Quote(arg.name) + " of type " +
                     Quote(arg.type->display()) + " is required, but it was not provided.",
                 {f.loc});
      }
    }
  }

  // 5.3.1 FieldsOnCorrectType, with graphql-js's suggestions: first the types on which the
  // field exists (for abstract parents), else similarly named fields.
  void ReportUnknownField(const Type& parent, const Selection& f) {
    std::vector<std::string> type_names;
    if (parent.is_abstract()) {
      std::vector<const Type*> suggested;
      std::unordered_map<const Type*, int> usage;
      for (const Type* possible : parent.possible_types) {
        if (!possible->find_field(f.name)) continue;
        if (!usage.count(possible)) suggested.push_back(possible);
        usage[possible] = 1;
        for (const Type* iface : possible->interfaces) {
          if (!iface->find_field(f.name)) continue;
          if (!usage.count(iface)) suggested.push_back(iface);
          usage[iface] += 1;
        }
      }
      InsertionSort(suggested, [&](const Type* a, const Type* b) {
        if (usage[a] != usage[b]) return usage[a] > usage[b];
        if (a->kind == TypeKind::interface && IsPossibleSubtype(*a, *b)) return true;
        if (b->kind == TypeKind::interface && IsPossibleSubtype(*b, *a)) return false;
        return NaturalCompare(a->name, b->name) < 0;
      });
      for (const Type* t : suggested) type_names.push_back(t->name);
    }
    std::string suggestion = DidYouMean("to use an inline fragment on", type_names);
    if (suggestion.empty() && (parent.kind == TypeKind::object || parent.kind == TypeKind::interface)) {
      std::vector<std::string_view> names;
      for (const Field& field : parent.fields) names.push_back(field.name);
      suggestion = DidYouMean(SuggestionList(f.name, names));
    }
    Report("Cannot query field " + Quote(f.name) + " on type " + Quote(parent.name) + "." + suggestion, {f.loc});
  }

  void VisitFragmentSpread(const Selection& s, const Type* parent) {
    // KnownFragmentNames
    const FragmentDefinition* f = Fragment(s.name);
    if (!f) Report("Unknown fragment " + Quote(s.name) + ".", {s.name_loc});
    // PossibleFragmentSpreads
    if (f && parent) {
      const Type* type = schema_.find_type(f->type_condition);
      if (type && type->is_composite() && !schema_.overlap(*type, *parent))
        Report("Fragment " + Quote(s.name) + " cannot be spread here as objects of type " + Quote(parent->name) +
                   " can never be of type " + Quote(type->name) + ".",
               {s.loc});
    }
    CheckUniqueDirectives(s.directives);
    VisitDirectives(s.directives, "FRAGMENT_SPREAD");
  }

  void VisitInlineFragment(const Selection& s, const Type* parent, const Type* enclosing_type) {
    const Type* condition = s.type_condition.empty() ? nullptr : schema_.find_type(s.type_condition);
    const Type* type = s.type_condition.empty() ? (enclosing_type ? &enclosing_type->named() : nullptr) : condition;
    if (type && !type->is_output()) type = nullptr;
    // FragmentsOnCompositeTypes
    if (condition && !condition->is_composite())
      Report("Fragment cannot condition on non composite type " + Quote(s.type_condition) + ".", {s.type_condition_loc});
    // PossibleFragmentSpreads
    if (type && type->is_composite() && parent && !schema_.overlap(*type, *parent))
      Report("Fragment cannot be spread here as objects of type " + Quote(parent->name) + " can never be of type " +
                 Quote(type->name) + ".",
             {s.loc});
    CheckUniqueDirectives(s.directives);
    // KnownTypeNames
    if (!s.type_condition.empty()) CheckKnownType(s.type_condition, s.type_condition_loc);
    VisitDirectives(s.directives, "INLINE_FRAGMENT");
    VisitSelectionSet(s.selection_set, type);
  }

  // ---- 5.5.1.2 KnownTypeNames

  void CheckKnownType(std::string_view name, Location loc) {
    if (schema_.find_type(name) || defined_types_.count(name)) return;
    std::vector<std::string_view> names;
    for (const auto& t : schema_.types()) names.push_back(t->name);
    for (std::string_view t : defined_types_) names.push_back(t);
    Report("Unknown type " + Quote(name) + "." + DidYouMean(SuggestionList(name, names)), {loc});
  }

  // ---- arguments and directives

  // 5.4.2 UniqueArgumentNames
  void CheckUniqueArguments(const std::vector<Argument>& args) {
    if (args.size() < 2) return;
    std::vector<std::pair<std::string_view, std::vector<Location>>> groups;
    std::unordered_map<std::string_view, std::size_t> index;
    for (const Argument& a : args) {
      auto [it, inserted] = index.emplace(a.name, groups.size());
      if (inserted) groups.push_back({a.name, {}});
      groups[it->second].second.push_back(a.loc);
    }
    for (auto& [name, locations] : groups)
      if (locations.size() > 1) Report("There can be only one argument named " + Quote(name) + ".", std::move(locations));
  }

  // 5.7.2 UniqueDirectivesPerLocation
  void CheckUniqueDirectives(const std::vector<Directive>& directives) {
    if (directives.size() < 2) return;
    std::unordered_map<std::string_view, Location> seen;
    for (const Directive& d : directives) {
      const DirectiveDef* def = schema_.find_directive(d.name);
      if (!def || def->repeatable) continue;
      auto [it, inserted] = seen.emplace(d.name, d.loc);
      if (!inserted)
        Report("The directive \"@" + std::string(d.name) + "\" can only be used once at this location.",
               {it->second, d.loc});
    }
  }

  void VisitDirectives(const std::vector<Directive>& directives, std::string_view location) {
    for (const Directive& d : directives) {
      const DirectiveDef* def = schema_.find_directive(d.name);
      const std::string at_name = "\"@" + std::string(d.name) + "\"";
      // KnownDirectives
      if (!def) {
        Report("Unknown directive " + at_name + ".", {d.loc});
      } else if (std::find(def->locations.begin(), def->locations.end(), location) == def->locations.end()) {
        Report("Directive " + at_name + " may not be used on " + std::string(location) + ".", {d.loc});
      }
      // KnownArgumentNames (on directives)
      if (def) {
        for (const Argument& a : d.arguments) {
          if (def->find_arg(a.name)) continue;
          std::vector<std::string_view> names;
          for (const InputValue& known : def->args) names.push_back(known.name);
          Report("Unknown argument " + Quote(a.name) + " on directive " + at_name + "." +
                     DidYouMean(SuggestionList(a.name, names)),
                 {a.loc});
        }
      }
      CheckUniqueArguments(d.arguments);
      for (const Argument& a : d.arguments) {
        const InputValue* arg = def ? def->find_arg(a.name) : nullptr;
        VisitValue(a.value, arg ? arg->type : nullptr, true);
      }
      // ProvidedRequiredArguments (on directives)
      if (def) {
        for (const InputValue& arg : def->args) {
          if (!arg.type || !arg.type->is_non_null() || arg.default_value) continue;
          const bool provided = std::any_of(d.arguments.begin(), d.arguments.end(),
                                            [&](const Argument& a) { return a.name == arg.name; });
          if (!provided)
            Report("Directive " + at_name + " argument " + Quote(arg.name) + " of type " + Quote(arg.type->display()) +
                       " is required, but it was not provided.",
                   {d.loc});
        }
      }
    }
  }

  // ---- values: 5.6.1 ValuesOfCorrectType, 5.6.2 InputObjectFieldNames, 5.6.3
  // UniqueInputFieldNames, 5.6.4 input object required fields.
  //
  // `type` is the type expected where `v` stands (null: unknown, nothing to check). `check` is
  // off below a value already reported as a whole.

  void VisitValue(const Value& v, const Type* type, bool check) {
    switch (v.kind) {
      case Value::Kind::variable: return;
      case Value::Kind::null:
        if (check && type && type->is_non_null())
          Report("Expected value of type " + Quote(type->display()) + ", found null.", {v.loc});
        return;
      case Value::Kind::list: {
        // A list where no list is expected is checked whole, against the item type graphql-js
        // computes (the expected type, without non-null).
        const Type* item = nullptr;
        if (type) item = type->nullable().is_list() ? type->nullable().of_type : &type->nullable();
        if (check && !(type && type->nullable().is_list())) {
          CheckLeafValue(v, item);
          check = false;
        }
        for (const Value& x : v.list) VisitValue(x, item, check);
        return;
      }
      case Value::Kind::object: {
        const Type* named = type ? &type->named() : nullptr;
        const bool input_object = named && named->kind == TypeKind::input_object;
        if (check) {
          if (!input_object) {
            CheckLeafValue(v, type);
            check = false;
          } else {
            for (const InputValue& field : named->input_fields) {
              if (!field.type || !field.type->is_non_null() || field.default_value) continue;
              const bool provided = std::any_of(v.fields.begin(), v.fields.end(),
                                                [&](const ObjectField& f) { return f.name == field.name; });
              if (!provided)
                Report("Field " + Quote(named->name + "." + field.name) + " of required type " +
                           Quote(field.type->display()) + " was not provided.",
                       {v.loc});
            }
          }
        }
        std::unordered_map<std::string_view, Location> seen;
        for (const ObjectField& f : v.fields) {
          const InputValue* field = input_object ? named->find_input_field(f.name) : nullptr;
          if (check && !field) {
            std::vector<std::string_view> names;
            for (const InputValue& known : named->input_fields) names.push_back(known.name);
            Report("Field " + Quote(f.name) + " is not defined by type " + Quote(named->name) + "." +
                       DidYouMean(SuggestionList(f.name, names)),
                   {f.loc});
          }
          auto [it, inserted] = seen.emplace(f.name, f.loc);
          if (!inserted) Report("There can be only one input field named " + Quote(f.name) + ".", {it->second, f.loc});
          VisitValue(f.value, field ? field->type : nullptr, check);
        }
        return;
      }
      default:
        if (check) CheckLeafValue(v, type);
        return;
    }
  }

  // graphql-js's isValidValueNode: a literal against the leaf type expected where it stands.
  void CheckLeafValue(const Value& v, const Type* location_type) {
    if (!location_type) return;
    const Type& named = location_type->named();
    if (!named.is_leaf()) {
      Report("Expected value of type " + Quote(location_type->display()) + ", found " + Print(v) + ".", {v.loc});
      return;
    }
    if (auto message = LeafLiteralError(named, *location_type, v)) Report(std::move(*message), {v.loc});
  }

  // The message of the scalar's or enum's literal parser, as graphql-js's built-in types word
  // them; nullopt when `v` is a valid literal.
  static std::optional<std::string> LeafLiteralError(const Type& named, const Type& location_type, const Value& v) {
    using K = Value::Kind;
    if (named.kind == TypeKind::enum_) {
      std::vector<std::string_view> names;
      for (const EnumValue& e : named.enum_values) names.push_back(e.name);
      if (v.kind != K::enum_) {
        const std::string printed = Print(v);
        return "Enum " + Quote(named.name) + " cannot represent non-enum value: " + printed + "." +
               DidYouMean("the enum value", SuggestionList(printed, names));
      }
      if (!named.find_enum_value(v.raw))
        return "Value " + Quote(v.raw) + " does not exist in " + Quote(named.name) + " enum." +
               DidYouMean("the enum value", SuggestionList(v.raw, names));
      return std::nullopt;
    }
    const std::string& n = named.name;
    if (n == "Int") {
      if (v.kind != K::int_) return "Int cannot represent non-integer value: " + Print(v);
      std::int64_t value = 0;
      const auto r = std::from_chars(v.raw.data(), v.raw.data() + v.raw.size(), value);
      if (r.ec != std::errc() || value < std::numeric_limits<std::int32_t>::min() ||
          value > std::numeric_limits<std::int32_t>::max())
        return "Int cannot represent non 32-bit signed integer value: " + std::string(v.raw);
      return std::nullopt;
    }
    if (n == "Float") {
      if (v.kind != K::int_ && v.kind != K::float_) return "Float cannot represent non numeric value: " + Print(v);
      return std::nullopt;
    }
    if (n == "String") {
      if (v.kind != K::string) return "String cannot represent a non string value: " + Print(v);
      return std::nullopt;
    }
    if (n == "Boolean") {
      if (v.kind != K::boolean) return "Boolean cannot represent a non boolean value: " + Print(v);
      return std::nullopt;
    }
    if (n == "ID") {
      if (v.kind != K::string && v.kind != K::int_) return "ID cannot represent a non-string and non-integer value: " + Print(v);
      return std::nullopt;
    }
    // A custom scalar accepts any literal unless its codec says otherwise. Literals with
    // variables are left to execution, where the variables have values.
    if (!named.codec.parse || ContainsVariable(v)) return std::nullopt;
    const std::string expected = "Expected value of type " + Quote(location_type.display()) + ", found " + Print(v);
    try {
      if (!named.codec.parse(literal_to_json(v))) return expected + ".";
    } catch (const std::exception& e) {
      return expected + "; " + e.what();
    } catch (...) {
      return expected + ".";
    }
    return std::nullopt;
  }

  // ---- variable usages (graphql-js's getVariableUsages), per operation and per fragment

  void CollectUsages(const Value& v, const Type* type, bool has_default, std::vector<VariableUsage>& out) const {
    switch (v.kind) {
      case Value::Kind::variable: out.push_back({&v, type, has_default}); return;
      case Value::Kind::list: {
        const Type* item = nullptr;
        if (type) item = type->nullable().is_list() ? type->nullable().of_type : &type->nullable();
        for (const Value& x : v.list) CollectUsages(x, item, false, out);
        return;
      }
      case Value::Kind::object: {
        const Type* named = type ? &type->named() : nullptr;
        for (const ObjectField& f : v.fields) {
          const InputValue* field =
              named && named->kind == TypeKind::input_object ? named->find_input_field(f.name) : nullptr;
          CollectUsages(f.value, field ? field->type : nullptr, field && field->default_value.has_value(), out);
        }
        return;
      }
      default: return;
    }
  }

  void CollectUsages(const std::vector<Directive>& directives, std::vector<VariableUsage>& out) const {
    for (const Directive& d : directives) {
      const DirectiveDef* def = schema_.find_directive(d.name);
      for (const Argument& a : d.arguments) {
        const InputValue* arg = def ? def->find_arg(a.name) : nullptr;
        CollectUsages(a.value, arg ? arg->type : nullptr, arg && arg->default_value.has_value(), out);
      }
    }
  }

  void CollectUsages(const SelectionSet& set, const Type* type, std::vector<VariableUsage>& out) const {
    const Type* parent = type && type->named().is_composite() ? &type->named() : nullptr;
    for (const Selection& s : set) {
      switch (s.kind) {
        case Selection::Kind::field: {
          const Field* def = parent ? FieldDef(*parent, s.name) : nullptr;
          for (const Argument& a : s.arguments) {
            const InputValue* arg = def ? def->find_arg(a.name) : nullptr;
            CollectUsages(a.value, arg ? arg->type : nullptr, arg && arg->default_value.has_value(), out);
          }
          CollectUsages(s.directives, out);
          if (!s.selection_set.empty()) CollectUsages(s.selection_set, def ? def->type : nullptr, out);
          break;
        }
        case Selection::Kind::fragment_spread: CollectUsages(s.directives, out); break;
        case Selection::Kind::inline_fragment: {
          const Type* t = s.type_condition.empty() ? (type ? &type->named() : nullptr) : schema_.find_type(s.type_condition);
          if (t && !t->is_output()) t = nullptr;
          CollectUsages(s.directives, out);
          CollectUsages(s.selection_set, t, out);
          break;
        }
      }
    }
  }

  std::vector<VariableUsage> OperationUsages(const OperationDefinition& op) const {
    std::vector<VariableUsage> out;
    CollectUsages(op.directives, out);
    CollectUsages(op.selection_set, schema_.root_type(op.type), out);
    return out;
  }

  const std::vector<VariableUsage>& FragmentUsages(const FragmentDefinition& f) {
    auto [it, inserted] = fragment_usages_.try_emplace(&f);
    if (inserted) {
      const Type* type = schema_.find_type(f.type_condition);
      CollectUsages(f.directives, it->second);
      CollectUsages(f.selection_set, type && type->is_output() ? type : nullptr, it->second);
    }
    return it->second;
  }

  const Schema& schema_;
  const Document& doc_;
  const ValidationOptions& options_;
  const MetaFields meta_;
  FragmentMap fragments_;
  MergeChecker merge_;
  std::unordered_set<std::string_view> defined_types_;
  std::vector<GraphQLError> errors_;

  std::unordered_map<std::string_view, Location> operation_names_;
  std::unordered_map<std::string_view, Location> fragment_names_;
  std::unordered_map<const SelectionSet*, std::vector<const Selection*>> spreads_;
  std::unordered_map<const FragmentDefinition*, std::vector<VariableUsage>> fragment_usages_;
  // NoFragmentCycles
  std::unordered_set<std::string_view> visited_fragments_;
  std::vector<const Selection*> spread_path_;
  std::unordered_map<std::string_view, std::size_t> spread_path_index_;
};

}  // namespace

std::vector<GraphQLError> validate(const Schema& schema, const Document& document, const ValidationOptions& options) {
  return Validator(schema, document, options).Run();
}

}  // namespace cutoff::graphql
