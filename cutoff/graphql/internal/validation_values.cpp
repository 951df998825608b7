// The validation rules on arguments, directives, values and variables (the Validator's
// other rules are in validation.cpp).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cutoff/graphql/internal/suggestions.hpp"
#include "cutoff/graphql/internal/validator.hpp"
#include "cutoff/graphql/internal/value_printer.hpp"

namespace cutoff::graphql::internal {

namespace {

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

// The message of the scalar's or enum's literal parser, as graphql-js's built-in types word
// them; nullopt when `v` is a valid literal.
std::optional<std::string> LeafLiteralError(const Type& named, const Type& location_type, const Value& v) {
  using K = Value::Kind;
  if (named.kind == TypeKind::enum_) {
    std::vector<std::string_view> names;
    for (const EnumValue& e : named.enum_values) names.push_back(e.name);
    if (v.kind != K::enum_) {
      const std::string printed = literal_text(v);
      return "Enum " + quoted(named.name) + " cannot represent non-enum value: " + printed + "." +
             did_you_mean("the enum value", suggestion_list(printed, names));
    }
    if (!named.find_enum_value(v.raw))
      return "Value " + quoted(v.raw) + " does not exist in " + quoted(named.name) + " enum." +
             did_you_mean("the enum value", suggestion_list(v.raw, names));
    return std::nullopt;
  }
  const std::string& n = named.name;
  if (n == "Int") {
    if (v.kind != K::int_) return "Int cannot represent non-integer value: " + literal_text(v);
    std::int64_t value = 0;
    const auto r = std::from_chars(v.raw.data(), v.raw.data() + v.raw.size(), value);
    if (r.ec != std::errc() || value < std::numeric_limits<std::int32_t>::min() ||
        value > std::numeric_limits<std::int32_t>::max())
      return "Int cannot represent non 32-bit signed integer value: " + std::string(v.raw);
    return std::nullopt;
  }
  if (n == "Float") {
    if (v.kind != K::int_ && v.kind != K::float_) return "Float cannot represent non numeric value: " + literal_text(v);
    return std::nullopt;
  }
  if (n == "String") {
    if (v.kind != K::string) return "String cannot represent a non string value: " + literal_text(v);
    return std::nullopt;
  }
  if (n == "Boolean") {
    if (v.kind != K::boolean) return "Boolean cannot represent a non boolean value: " + literal_text(v);
    return std::nullopt;
  }
  if (n == "ID") {
    if (v.kind != K::string && v.kind != K::int_)
      return "ID cannot represent a non-string and non-integer value: " + literal_text(v);
    return std::nullopt;
  }
  // A custom scalar accepts any literal unless its codec says otherwise. Literals with
  // variables are left to execution, where the variables have values.
  if (!named.codec.parse || ContainsVariable(v)) return std::nullopt;
  const std::string expected =
      "Expected value of type " + quoted(location_type.display()) + ", found " + literal_text(v);
  try {
    if (!named.codec.parse(literal_to_json(v))) return expected + ".";
  } catch (const std::exception& e) {
    return expected + "; " + e.what();
  } catch (...) {
    return expected + ".";
  }
  return std::nullopt;
}

}  // namespace

// NoUndefinedVariables, NoUnusedVariables and VariablesInAllowedPosition, when leaving an
// operation: they follow the operation's fragments.
void Validator::CheckOperationVariables(const OperationDefinition& op) {
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
                           : "Variable " + var + " is not defined by operation " + quoted(op.name) + ".",
           {u.node->loc, op.loc});
  }

  std::unordered_set<std::string_view> used;
  for (const VariableUsage& u : usages) used.insert(u.node->raw);
  for (const VariableDefinition& v : op.variables) {
    if (used.count(v.name)) continue;
    const std::string var = "\"$" + std::string(v.name) + "\"";
    Report(op.name.empty() ? "Variable " + var + " is never used."
                           : "Variable " + var + " is never used in operation " + quoted(op.name) + ".",
           {v.loc});
  }

  for (const VariableUsage& u : usages) {
    auto it = defined.find(u.node->raw);
    if (it == defined.end() || !u.type) continue;
    const VariableDefinition& def = *it->second;
    const Type* var_type = schema_.type_from_ref(def.type);
    if (!var_type || AllowedVariableUsage(*var_type, def, *u.type, u.location_has_default)) continue;
    Report("Variable \"$" + std::string(u.node->raw) + "\" of type " + quoted(var_type->display()) +
               " used in position expecting type " + quoted(u.type->display()) + ".",
           {def.loc, u.node->loc});
  }
}

// A nullable variable may flow into a non-null position when a default fills the gap: its
// own non-null default, or the position's default.
bool Validator::AllowedVariableUsage(const Type& var_type, const VariableDefinition& def, const Type& location_type,
                                     bool location_has_default) const {
  if (location_type.is_non_null() && !var_type.is_non_null()) {
    const bool non_null_default = def.default_value && def.default_value->kind != Value::Kind::null;
    if (!non_null_default && !location_has_default) return false;
    return schema_.is_subtype(var_type, *location_type.of_type);
  }
  return schema_.is_subtype(var_type, location_type);
}

// ---- arguments and directives

// 5.4.2 UniqueArgumentNames
void Validator::CheckUniqueArguments(const std::vector<Argument>& args) {
  if (args.size() < 2) return;
  std::vector<std::pair<std::string_view, std::vector<Location>>> groups;
  std::unordered_map<std::string_view, std::size_t> index;
  for (const Argument& a : args) {
    auto [it, inserted] = index.emplace(a.name, groups.size());
    if (inserted) groups.push_back({a.name, {}});
    groups[it->second].second.push_back(a.loc);
  }
  for (auto& [name, locations] : groups)
    if (locations.size() > 1)
      Report("There can be only one argument named " + quoted(name) + ".", std::move(locations));
}

// 5.7.2 UniqueDirectivesPerLocation
void Validator::CheckUniqueDirectives(const std::vector<Directive>& directives) {
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

void Validator::VisitDirectives(const std::vector<Directive>& directives, std::string_view location) {
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
        Report("Unknown argument " + quoted(a.name) + " on directive " + at_name + "." +
                   did_you_mean(suggestion_list(a.name, names)),
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
          Report("Directive " + at_name + " argument " + quoted(arg.name) + " of type " + quoted(arg.type->display()) +
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

void Validator::VisitValue(const Value& v, const Type* type, bool check) {
  switch (v.kind) {
    case Value::Kind::variable: return;
    case Value::Kind::null:
      if (check && type && type->is_non_null())
        Report("Expected value of type " + quoted(type->display()) + ", found null.", {v.loc});
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
              Report("Field " + quoted(named->name + "." + field.name) + " of required type " +
                         quoted(field.type->display()) + " was not provided.",
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
          Report("Field " + quoted(f.name) + " is not defined by type " + quoted(named->name) + "." +
                     did_you_mean(suggestion_list(f.name, names)),
                 {f.loc});
        }
        auto [it, inserted] = seen.emplace(f.name, f.loc);
        if (!inserted) Report("There can be only one input field named " + quoted(f.name) + ".", {it->second, f.loc});
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
void Validator::CheckLeafValue(const Value& v, const Type* location_type) {
  if (!location_type) return;
  const Type& named = location_type->named();
  if (!named.is_leaf()) {
    Report("Expected value of type " + quoted(location_type->display()) + ", found " + literal_text(v) + ".", {v.loc});
    return;
  }
  if (auto message = LeafLiteralError(named, *location_type, v)) Report(std::move(*message), {v.loc});
}

// ---- variable usages (graphql-js's getVariableUsages), per operation and per fragment

void Validator::CollectUsages(const Value& v, const Type* type, bool has_default,
                              std::vector<VariableUsage>& out) const {
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

void Validator::CollectUsages(const std::vector<Directive>& directives, std::vector<VariableUsage>& out) const {
  for (const Directive& d : directives) {
    const DirectiveDef* def = schema_.find_directive(d.name);
    for (const Argument& a : d.arguments) {
      const InputValue* arg = def ? def->find_arg(a.name) : nullptr;
      CollectUsages(a.value, arg ? arg->type : nullptr, arg && arg->default_value.has_value(), out);
    }
  }
}

void Validator::CollectUsages(const SelectionSet& set, const Type* type, std::vector<VariableUsage>& out) const {
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
        const Type* t =
            s.type_condition.empty() ? (type ? &type->named() : nullptr) : schema_.find_type(s.type_condition);
        if (t && !t->is_output()) t = nullptr;
        CollectUsages(s.directives, out);
        CollectUsages(s.selection_set, t, out);
        break;
      }
    }
  }
}

std::vector<VariableUsage> Validator::OperationUsages(const OperationDefinition& op) const {
  std::vector<VariableUsage> out;
  CollectUsages(op.directives, out);
  CollectUsages(op.selection_set, schema_.root_type(op.type), out);
  return out;
}

const std::vector<VariableUsage>& Validator::FragmentUsages(const FragmentDefinition& f) {
  auto [it, inserted] = fragment_usages_.try_emplace(&f);
  if (inserted) {
    const Type* type = schema_.find_type(f.type_condition);
    CollectUsages(f.directives, it->second);
    CollectUsages(f.selection_set, type && type->is_output() ? type : nullptr, it->second);
  }
  return it->second;
}

}  // namespace cutoff::graphql::internal
