#include "cutoff/graphql/validation.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cutoff/graphql/internal/natural_compare.hpp"
#include "cutoff/graphql/internal/suggestions.hpp"
#include "cutoff/graphql/internal/validator.hpp"

// The rules on documents, operations, fragments and selections; those on arguments,
// directives, values and variables are in internal/validation_values.cpp.

namespace cutoff::graphql {

namespace internal {

namespace {

using graphql_codes::kValidationFailed;

// Thrown by Report once the error limit is reached; caught in run().
struct ErrorLimitReached {};

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

// Sorts with a comparator that need not be a strict weak order (graphql-js's type
// suggestions); never reads out of bounds. Lists are short.
template <typename T, typename Less>
void InsertionSort(std::vector<T>& v, Less less) {
  for (std::size_t i = 1; i < v.size(); ++i)
    for (std::size_t j = i; j > 0 && less(v[j], v[j - 1]); --j) std::swap(v[j], v[j - 1]);
}

// The literal value of a directive's `if:` argument, if it has one.
bool LiteralIf(const Directive& d, bool& value) {
  for (const Argument& a : d.arguments)
    if (a.name == "if" && a.value.kind == Value::Kind::boolean) {
      value = a.value.boolean;
      return true;
    }
  return false;
}

// @skip/@include with literal arguments; a variable counts as included (no values here).
bool ShouldInclude(const std::vector<Directive>& directives) {
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

}  // namespace

MetaFields::MetaFields(const Schema& schema) {
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

Validator::Validator(const Schema& schema, const Document& document, const ValidationOptions& options)
    : schema_(schema),
      doc_(document),
      options_(options),
      meta_(schema),
      overlaps_(schema, fragments_, options.max_field_comparisons,
                 [this](std::string message, std::vector<Location> locations) {
                   Report(std::move(message), std::move(locations));
                 }) {
  for (const FragmentDefinition& f : doc_.fragments) fragments_[f.name] = &f;  // the last of a name wins
  for (const TypeDefinition& t : doc_.types)
    if (!t.extension) defined_types_.insert(t.name);
}

std::vector<GraphQLError> Validator::run() {
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

void Validator::Report(std::string message, std::vector<Location> locations) {
  if (errors_.size() >= options_.max_errors) {
    errors_.push_back(GraphQLError{"Too many validation errors, error limit reached. Validation aborted.", {}, {},
                                   kValidationFailed});
    throw ErrorLimitReached{};
  }
  errors_.push_back(GraphQLError{std::move(message), std::move(locations), {}, kValidationFailed});
}

std::size_t Validator::ErrorsLeft() const {
  return options_.max_errors > errors_.size() ? options_.max_errors - errors_.size() : 0;
}

const FragmentDefinition* Validator::Fragment(std::string_view name) const {
  auto it = fragments_.find(name);
  return it == fragments_.end() ? nullptr : it->second;
}

// graphql-js TypeInfo.getFieldDef: the meta-fields, then the type's own fields.
const Field* Validator::FieldDef(const Type& parent, std::string_view name) const {
  if (name == "__schema" && &parent == schema_.query_type() && meta_.schema_field.type) return &meta_.schema_field;
  if (name == "__type" && &parent == schema_.query_type() && meta_.type_field.type) return &meta_.type_field;
  if (name == "__typename" && parent.is_composite() && meta_.typename_field.type) return &meta_.typename_field;
  if (parent.kind == TypeKind::object || parent.kind == TypeKind::interface) return parent.find_field(name);
  return nullptr;
}

// The spreads anywhere in `set`, in graphql-js's getFragmentSpreads order.
const std::vector<const Selection*>& Validator::FragmentSpreads(const SelectionSet& set) {
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
std::vector<const FragmentDefinition*> Validator::RecursivelyReferencedFragments(const OperationDefinition& op) {
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

void Validator::CheckExecutableDefinitions() {
  struct NonExecutable {
    Location loc;
    std::string label;
  };
  std::vector<NonExecutable> found;
  for (const auto& t : doc_.types) found.push_back({t.loc, quoted(t.name)});
  for (const auto& s : doc_.schemas) found.push_back({s.loc, "schema"});
  for (const auto& d : doc_.directives) found.push_back({d.loc, quoted(d.name)});
  std::stable_sort(found.begin(), found.end(), [](const NonExecutable& a, const NonExecutable& b) {
    return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.column < b.loc.column;
  });
  for (const auto& n : found) Report("The " + n.label + " definition is not executable.", {n.loc});
}

// ---- operations

void Validator::VisitOperation(const OperationDefinition& op) {
  // UniqueOperationNames
  if (!op.name.empty()) {
    auto [it, inserted] = operation_names_.emplace(op.name, op.name_loc);
    if (!inserted)
      Report("There can be only one operation named " + quoted(op.name) + ".", {it->second, op.name_loc});
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

void Validator::VisitVariableDefinition(const VariableDefinition& v) {
  const Type* type = schema_.type_from_ref(v.type);
  // VariablesAreInputTypes
  if (type && !type->is_input())
    Report("Variable \"$" + std::string(v.name) + "\" cannot be non-input type " + quoted(v.type.to_string()) + ".",
           {v.type.loc});
  CheckUniqueDirectives(v.directives);
  // KnownTypeNames
  const TypeRef& named = NamedRef(v.type);
  CheckKnownType(named.name, named.loc);
  if (v.default_value) VisitValue(*v.default_value, type && type->is_input() ? type : nullptr, true);
  VisitDirectives(v.directives, "VARIABLE_DEFINITION");
}

// ---- 5.2.3.1 SingleFieldSubscriptions

bool Validator::ConditionMatches(std::string_view type_condition, const Type& runtime) const {
  if (type_condition.empty()) return true;
  const Type* t = schema_.find_type(type_condition);
  if (t == &runtime) return true;
  return t && t->is_abstract() && IsPossibleSubtype(*t, runtime);
}

void Validator::CheckSingleFieldSubscription(const OperationDefinition& op) {
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
  const std::string subject = op.name.empty() ? "Anonymous Subscription" : "Subscription " + quoted(op.name);
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

void Validator::VisitFragment(const FragmentDefinition& f) {
  const Type* type = schema_.find_type(f.type_condition);
  // FragmentsOnCompositeTypes
  if (type && !type->is_composite())
    Report("Fragment " + quoted(f.name) + " cannot condition on non composite type " + quoted(f.type_condition) + ".",
           {f.type_condition_loc});
  // UniqueFragmentNames
  auto [it, inserted] = fragment_names_.emplace(f.name, f.name_loc);
  if (!inserted) Report("There can be only one fragment named " + quoted(f.name) + ".", {it->second, f.name_loc});
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
void Validator::DetectFragmentCycles(const FragmentDefinition& start) {
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
          via += quoted(spread_path_[i]->name);
        }
      }
      Report("Cannot spread fragment " + quoted(spread->name) + " within itself" +
                 (via.empty() ? std::string(".") : " via " + via + "."),
             std::move(locations));
    }
    spread_path_.pop_back();
  }
}

// 5.5.1.4 NoUnusedFragments, when leaving the document.
void Validator::CheckUnusedFragments() {
  std::unordered_set<std::string_view> used;
  for (const OperationDefinition& op : doc_.operations)
    for (const FragmentDefinition* f : RecursivelyReferencedFragments(op)) used.insert(f->name);
  std::vector<const FragmentDefinition*> in_order;
  for (const FragmentDefinition& f : doc_.fragments) in_order.push_back(&f);
  std::stable_sort(in_order.begin(), in_order.end(), [](const FragmentDefinition* a, const FragmentDefinition* b) {
    return a->loc.line != b->loc.line ? a->loc.line < b->loc.line : a->loc.column < b->loc.column;
  });
  for (const FragmentDefinition* f : in_order)
    if (!used.count(f->name)) Report("Fragment " + quoted(f->name) + " is never used.", {f->loc});
}

// ---- selections

void Validator::VisitSelectionSet(const SelectionSet& set, const Type* type) {
  const Type* parent = type && type->named().is_composite() ? &type->named() : nullptr;
  // OverlappingFieldsCanBeMerged
  overlaps_.check(set, parent, ErrorsLeft());
  for (const Selection& s : set) {
    switch (s.kind) {
      case Selection::Kind::field: VisitField(s, parent); break;
      case Selection::Kind::fragment_spread: VisitFragmentSpread(s, parent); break;
      case Selection::Kind::inline_fragment: VisitInlineFragment(s, parent, type); break;
    }
  }
}

void Validator::VisitField(const Selection& f, const Type* parent) {
  const Field* def = parent ? FieldDef(*parent, f.name) : nullptr;
  const Type* type = def ? def->type : nullptr;
  // ScalarLeafs
  if (type) {
    if (type->named().is_leaf()) {
      if (!f.selection_set.empty())
        Report("Field " + quoted(f.name) + " must not have a selection since type " + quoted(type->display()) +
                   " has no subfields.",
               {f.selection_set_loc});
    } else if (f.selection_set.empty()) {
      Report("Field " + quoted(f.name) + " of type " + quoted(type->display()) +
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
      Report("Unknown argument " + quoted(a.name) + " on field " + quoted(parent->name + "." + def->name) + "." +
                 did_you_mean(suggestion_list(a.name, names)),
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
        Report("Field " + quoted(def->name) + " argument " + quoted(arg.name) + " of type " +
                   quoted(arg.type->display()) + " is required, but it was not provided.",
               {f.loc});
    }
  }
}

// 5.3.1 FieldsOnCorrectType, with graphql-js's suggestions: first the types on which the
// field exists (for abstract parents), else similarly named fields.
void Validator::ReportUnknownField(const Type& parent, const Selection& f) {
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
      return natural_compare(a->name, b->name) < 0;
    });
    for (const Type* t : suggested) type_names.push_back(t->name);
  }
  std::string suggestion = did_you_mean("to use an inline fragment on", type_names);
  if (suggestion.empty() && (parent.kind == TypeKind::object || parent.kind == TypeKind::interface)) {
    std::vector<std::string_view> names;
    for (const Field& field : parent.fields) names.push_back(field.name);
    suggestion = did_you_mean(suggestion_list(f.name, names));
  }
  Report("Cannot query field " + quoted(f.name) + " on type " + quoted(parent.name) + "." + suggestion, {f.loc});
}

void Validator::VisitFragmentSpread(const Selection& s, const Type* parent) {
  // KnownFragmentNames
  const FragmentDefinition* f = Fragment(s.name);
  if (!f) Report("Unknown fragment " + quoted(s.name) + ".", {s.name_loc});
  // PossibleFragmentSpreads
  if (f && parent) {
    const Type* type = schema_.find_type(f->type_condition);
    if (type && type->is_composite() && !schema_.overlap(*type, *parent))
      Report("Fragment " + quoted(s.name) + " cannot be spread here as objects of type " + quoted(parent->name) +
                 " can never be of type " + quoted(type->name) + ".",
             {s.loc});
  }
  CheckUniqueDirectives(s.directives);
  VisitDirectives(s.directives, "FRAGMENT_SPREAD");
}

void Validator::VisitInlineFragment(const Selection& s, const Type* parent, const Type* enclosing_type) {
  const Type* condition = s.type_condition.empty() ? nullptr : schema_.find_type(s.type_condition);
  const Type* type = s.type_condition.empty() ? (enclosing_type ? &enclosing_type->named() : nullptr) : condition;
  if (type && !type->is_output()) type = nullptr;
  // FragmentsOnCompositeTypes
  if (condition && !condition->is_composite())
    Report("Fragment cannot condition on non composite type " + quoted(s.type_condition) + ".", {s.type_condition_loc});
  // PossibleFragmentSpreads
  if (type && type->is_composite() && parent && !schema_.overlap(*type, *parent))
    Report("Fragment cannot be spread here as objects of type " + quoted(parent->name) + " can never be of type " +
               quoted(type->name) + ".",
           {s.loc});
  CheckUniqueDirectives(s.directives);
  // KnownTypeNames
  if (!s.type_condition.empty()) CheckKnownType(s.type_condition, s.type_condition_loc);
  VisitDirectives(s.directives, "INLINE_FRAGMENT");
  VisitSelectionSet(s.selection_set, type);
}

// ---- 5.5.1.2 KnownTypeNames

void Validator::CheckKnownType(std::string_view name, Location loc) {
  if (schema_.find_type(name) || defined_types_.count(name)) return;
  std::vector<std::string_view> names;
  for (const auto& t : schema_.types()) names.push_back(t->name);
  for (std::string_view t : defined_types_) names.push_back(t);
  Report("Unknown type " + quoted(name) + "." + did_you_mean(suggestion_list(name, names)), {loc});
}

}  // namespace internal

std::vector<GraphQLError> validate(const Schema& schema, const Document& document, const ValidationOptions& options) {
  return internal::Validator(schema, document, options).run();
}

}  // namespace cutoff::graphql
