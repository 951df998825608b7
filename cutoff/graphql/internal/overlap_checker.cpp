#include "cutoff/graphql/internal/overlap_checker.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <unordered_set>
#include <utility>

#include "cutoff/graphql/internal/suggestions.hpp"
#include "cutoff/graphql/internal/value_printer.hpp"

namespace cutoff::graphql::internal {

namespace {

// Recursion of the merge check through nested fields and fragments. A document nested this
// deeply is not a real query; the bound keeps the stack small.
constexpr std::size_t kMaxMergeDepth = 1000;

bool IsObject(const Type* t) { return t && t->kind == TypeKind::object; }

}  // namespace

class OverlapChecker::Impl {
 public:
  Impl(const Schema& schema, const FragmentMap& fragments, std::size_t max_comparisons, Reporter report)
      : schema_(schema), fragments_(fragments), max_comparisons_(max_comparisons), report_(std::move(report)) {}

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
    explicit DepthGuard(Impl& c) : c_(c) {
      if (++c_.depth_ > kMaxMergeDepth)
        throw TooComplex{"Validation aborted: fields are nested too deeply through fragments to check that they can "
                         "be merged."};
    }
    ~DepthGuard() { --c_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Impl& c_;
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
          append_literal(key, a->value, {.sorted_fields = true});
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
      if (literal_text(arg1.value, {.sorted_fields = true}) != literal_text(arg2->value, {.sorted_fields = true}))
        return false;
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
                        quoted(node1.name) + " and " + quoted(node2.name) + " are different fields",
                        {&node1},
                        {&node2}};
      if (!SameArguments(node1, node2)) return Conflict{response_name, "they have differing arguments", {&node1}, {&node2}};
    }
    const Type* type1 = e1.def ? e1.def->type : nullptr;
    const Type* type2 = e2.def ? e2.def->type : nullptr;
    if (type1 && type2 && DoTypesConflict(*type1, *type2))
      return Conflict{response_name,
                      "they return conflicting types " + quoted(type1->display()) + " and " + quoted(type2->display()),
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
      c.reason += "subfields " + quoted(sub[i].response_name) + " conflict because " + sub[i].reason;
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

OverlapChecker::OverlapChecker(const Schema& schema, const FragmentMap& fragments, std::size_t max_comparisons,
                               Reporter report)
    : impl_(std::make_unique<Impl>(schema, fragments, max_comparisons, std::move(report))) {}

OverlapChecker::~OverlapChecker() = default;

void OverlapChecker::check(const SelectionSet& set, const Type* parent_type, std::size_t wanted) {
  impl_->Check(set, parent_type, wanted);
}

}  // namespace cutoff::graphql::internal
