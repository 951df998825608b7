#include "cutoff/graphql/internal/schema_builder.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <utility>

#include "cutoff/graphql/internal/value_printer.hpp"

namespace cutoff::graphql::internal {

namespace {

// The longest @budget a field may declare. A cap is a per-field bound inside a request's own
// budget; anything past an hour is a typo (seconds written as milliseconds twice over, say).
constexpr long long kMaxBudgetMs = 60 * 60 * 1000;

TypeKind KindOf(TypeDefinition::Kind k) {
  switch (k) {
    case TypeDefinition::Kind::scalar: return TypeKind::scalar;
    case TypeDefinition::Kind::object: return TypeKind::object;
    case TypeDefinition::Kind::interface: return TypeKind::interface;
    case TypeDefinition::Kind::union_: return TypeKind::union_;
    case TypeDefinition::Kind::enum_: return TypeKind::enum_;
    case TypeDefinition::Kind::input_object: return TypeKind::input_object;
  }
  return TypeKind::scalar;
}

}  // namespace

void SchemaBuilder::build(const Document& doc) {
  // 1. Named types.
  for (const TypeDefinition& def : doc.types) {
    if (def.extension) continue;
    if (s_.by_name_.count(def.name)) {
      Error("There can be only one type named \"" + std::string(def.name) + "\".", def.loc);
      continue;
    }
    auto t = std::make_unique<Type>();
    t->name = std::string(def.name);
    t->description = def.description;
    t->kind = KindOf(def.kind);
    if (t->kind == TypeKind::scalar) {
      if (t->name == "Int") t->builtin = BuiltinScalar::int_;
      else if (t->name == "Float") t->builtin = BuiltinScalar::float_;
      else if (t->name == "String") t->builtin = BuiltinScalar::string;
      else if (t->name == "Boolean") t->builtin = BuiltinScalar::boolean;
      else if (t->name == "ID") t->builtin = BuiltinScalar::id;
    }
    s_.by_name_[t->name] = t.get();
    s_.types_.push_back(std::move(t));
  }
  for (const TypeDefinition& def : doc.types)
    if (def.extension && !s_.by_name_.count(def.name))
      Error("Cannot extend type \"" + std::string(def.name) + "\" because it is not defined.", def.loc);
  // Keys of by_name_ must view stable strings: re-point them at the Type's own name.
  std::unordered_map<std::string_view, Type*> stable;
  for (auto& t : s_.types_) stable[t->name] = t.get();
  s_.by_name_ = std::move(stable);

  // 2. Directives (before fields, whose directives are read below).
  for (const DirectiveDefinition& d : doc.directives) {
    if (s_.find_directive(d.name)) {
      Error("There can be only one directive named \"@" + std::string(d.name) + "\".", d.loc);
      continue;
    }
    DirectiveDef def;
    def.name = std::string(d.name);
    def.description = d.description;
    def.repeatable = d.repeatable;
    for (auto l : d.locations) def.locations.emplace_back(l);
    def.args = InputValues(d.arguments);
    s_.directives_.push_back(std::move(def));
  }
  AddImplicitCostDirectives();

  // 3. Members of each type, definitions then extensions in document order.
  for (const TypeDefinition& def : doc.types) {
    auto it = s_.by_name_.find(def.name);
    if (it == s_.by_name_.end()) continue;
    Type& t = *it->second;
    if (def.extension && KindOf(def.kind) != t.kind) {
      Error("Cannot extend non-" + std::string(to_string(KindOf(def.kind))) + " type \"" + t.name + "\".", def.loc);
      continue;
    }
    for (const FieldDefinition& fd : def.fields) {
      if (t.find_field(fd.name)) {
        Error("Field \"" + t.name + "." + std::string(fd.name) + "\" can only be defined once.", fd.loc);
        continue;
      }
      Field f;
      f.name = std::string(fd.name);
      f.description = fd.description;
      f.type = Resolve(fd.type);
      f.args = InputValues(fd.arguments);
      Deprecation(fd.directives, f.deprecated, f.deprecation_reason);
      f.cost = CostWeight(fd.directives);
      f.list_size = ListSizeOf(fd.directives, f, t.name);
      f.budget = Budget(fd.directives);
      if (f.type && !f.type->is_output())
        Error("The type of " + t.name + "." + f.name + " must be Output Type but got: " + f.type->display() + ".",
              fd.loc);
      t.fields.push_back(std::move(f));
    }
    for (auto name : def.interfaces) {
      const Type* i = s_.find_type(name);
      if (!i || i->kind != TypeKind::interface) {
        Error("Type " + t.name + " must only implement Interface types, it cannot implement " + std::string(name) + ".",
              def.loc);
        continue;
      }
      t.interfaces.push_back(i);
    }
    for (auto name : def.members) {
      const Type* m = s_.find_type(name);
      if (!m || m->kind != TypeKind::object) {
        Error("Union type " + t.name + " can only include Object types, it cannot include " + std::string(name) + ".",
              def.loc);
        continue;
      }
      t.possible_types.push_back(m);
    }
    for (const EnumValueDefinition& vd : def.values) {
      EnumValue v;
      v.name = std::string(vd.name);
      v.description = vd.description;
      Deprecation(vd.directives, v.deprecated, v.deprecation_reason);
      t.enum_values.push_back(std::move(v));
    }
    for (auto& iv : InputValues(def.input_fields)) t.input_fields.push_back(std::move(iv));
    if (auto weight = CostWeight(def.directives)) t.cost = weight;
    for (const Directive& d : def.directives)
      if (d.name == "specifiedBy")
        for (const Argument& a : d.arguments)
          if (a.name == "url") t.specified_by_url = a.value.string;
  }

  // Directive arguments are checked once every type has its members (an enum argument's
  // values, an input object's fields).
  CheckDirectiveUses(doc);
  CheckReservedNames(doc);
  CheckDeprecatedRequired(doc);
  CheckDirectiveCycles(doc);

  // 4. Interface implementations: objects and interfaces listed as possible types.
  for (auto& t : s_.types_) {
    if (t->kind != TypeKind::object) continue;
    for (const Type* i : t->interfaces) const_cast<Type*>(i)->possible_types.push_back(t.get());
  }

  // 5. Field lookup tables for wide types.
  for (auto& t : s_.types_) {
    if (t->fields.size() > 8)
      for (std::size_t i = 0; i < t->fields.size(); ++i) t->field_index[t->fields[i].name] = i;
    if (t->kind == TypeKind::object || t->kind == TypeKind::interface) {
      if (t->fields.empty() && t->name.substr(0, 2) != "__")
        Error("Type " + t->name + " must define one or more fields.", {});
      CheckImplementations(*t);
    }
    if (t->kind == TypeKind::union_ && t->possible_types.empty())
      Error("Union type " + t->name + " must define one or more member types.", {});
    if (t->kind == TypeKind::enum_ && t->enum_values.empty())
      Error("Enum type " + t->name + " must define one or more values.", {});
    if (t->kind == TypeKind::input_object && t->input_fields.empty())
      Error("Input Object type " + t->name + " must define one or more fields.", {});
  }

  // 6. Root types.
  const SchemaDefinition* def = nullptr;
  for (const SchemaDefinition& sd : doc.schemas) {
    if (!sd.extension) {
      if (def) Error("Must provide only one schema definition.", sd.loc);
      def = &sd;
      s_.description_ = sd.description;
    }
  }
  auto root = [&](OperationType op, std::string_view fallback) -> const Type* {
    for (const SchemaDefinition& sd : doc.schemas)
      for (const RootOperationType& r : sd.operation_types)
        if (r.operation == op) {
          const Type* t = s_.find_type(r.type);
          if (!t || t->kind != TypeKind::object)
            Error(std::string(to_string(op)) + " root type must be Object type, it cannot be " + std::string(r.type) + ".",
                  r.loc);
          return t && t->kind == TypeKind::object ? t : nullptr;
        }
    if (def) return nullptr;
    const Type* t = s_.find_type(fallback);
    return t && t->kind == TypeKind::object ? t : nullptr;
  };
  s_.query_ = root(OperationType::query, "Query");
  s_.mutation_ = root(OperationType::mutation, "Mutation");
  s_.subscription_ = root(OperationType::subscription, "Subscription");
  if (!s_.query_) Error("Query root type must be provided.", {});
}

void SchemaBuilder::Error(std::string message, Location loc) {
  GraphQLError e;
  e.message = std::move(message);
  if (loc.line) e.locations.push_back(loc);
  errors.push_back(std::move(e));
}

void SchemaBuilder::ErrorAt(std::string message, std::vector<Location> locations) {
  GraphQLError e;
  e.message = std::move(message);
  e.locations = std::move(locations);
  errors.push_back(std::move(e));
}

const Type* SchemaBuilder::Resolve(const TypeRef& ref) {
  const Type* t = s_.type_from_ref(ref);
  if (!t) Error("Unknown type \"" + std::string(ref.named_type()) + "\".", ref.loc);
  return t;
}

void SchemaBuilder::Deprecation(const std::vector<Directive>& ds, bool& deprecated, std::string& reason) {
  for (const Directive& d : ds) {
    if (d.name != "deprecated") continue;
    deprecated = true;
    reason = "No longer supported";
    for (const Argument& a : d.arguments)
      if (a.name == "reason" && a.value.kind == Value::Kind::string) reason = a.value.string;
  }
}

std::vector<InputValue> SchemaBuilder::InputValues(const std::vector<InputValueDefinition>& defs) {
  std::vector<InputValue> out;
  for (const InputValueDefinition& d : defs) {
    InputValue v;
    v.name = std::string(d.name);
    v.description = d.description;
    v.type = Resolve(d.type);
    if (v.type && !v.type->is_input())
      Error("The type of " + v.name + " must be Input Type but got: " + v.type->display() + ".", d.loc);
    if (d.default_value) {
      v.default_value = literal_to_json(*d.default_value);
      v.default_value_text = literal_text(*d.default_value, {.block_strings = false});
    }
    Deprecation(d.directives, v.deprecated, v.deprecation_reason);
    v.cost = CostWeight(d.directives);
    out.push_back(std::move(v));
  }
  return out;
}

// @cost(weight:): an Int, a Float, or a String holding a number (the cost specification
// writes weights as strings, other servers as integers).
std::optional<double> SchemaBuilder::CostWeight(const std::vector<Directive>& ds) {
  for (const Directive& d : ds) {
    if (d.name != "cost") continue;
    for (const Argument& a : d.arguments) {
      if (a.name != "weight") continue;
      std::string text;
      if (a.value.kind == Value::Kind::int_ || a.value.kind == Value::Kind::float_) text = std::string(a.value.raw);
      else if (a.value.kind == Value::Kind::string) text = a.value.string;
      char* end = nullptr;
      const double w = text.empty() ? -1 : std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(w) || w < 0) {
        Error("@cost(weight:) must be a non-negative number.", a.loc);
        return std::nullopt;
      }
      return w;
    }
  }
  return std::nullopt;
}

std::optional<ListSize> SchemaBuilder::ListSizeOf(const std::vector<Directive>& ds, const Field& f,
                                                  const std::string& type_name) {
  for (const Directive& d : ds) {
    if (d.name != "listSize") continue;
    ListSize size;
    // Argument names and types were checked with the other directive uses
    // (CheckDirectiveUses); what is left is what the types cannot say.
    auto strings = [&](const Argument& a, std::vector<std::string>& out) {
      if (a.value.kind == Value::Kind::string) out.push_back(a.value.string);  // a list of one
      for (const Value& v : a.value.list)
        if (v.kind == Value::Kind::string) out.push_back(v.string);
    };
    for (const Argument& a : d.arguments) {
      if (a.name == "assumedSize") {
        if (a.value.kind == Value::Kind::int_ && a.value.raw.front() != '-')
          size.assumed_size = std::strtod(std::string(a.value.raw).c_str(), nullptr);
        else if (a.value.kind == Value::Kind::int_)
          Error("@listSize(assumedSize:) must be a non-negative Int.", a.value.loc);
      } else if (a.name == "slicingArguments") {
        strings(a, size.slicing_arguments);
      } else if (a.name == "sizedFields") {
        strings(a, size.sized_fields);
      } else if (a.name == "requireOneSlicingArgument") {
        if (a.value.kind == Value::Kind::boolean) size.require_one_slicing_argument = a.value.boolean;
      }
    }
    for (const std::string& name : size.slicing_arguments) {
      bool found = false;
      for (const InputValue& arg : f.args) found = found || arg.name == name;
      if (!found)
        Error("@listSize on " + type_name + "." + f.name + " names the slicing argument \"" + name +
                  "\", which the field does not have.",
              d.loc);
    }
    return size;
  }
  return std::nullopt;
}

// @budget(ms: N): the cap the executor applies and introspection shows. Its type (Int!) was
// checked with the other directive uses; the range is checked here.
std::optional<std::chrono::milliseconds> SchemaBuilder::Budget(const std::vector<Directive>& ds) {
  for (const Directive& d : ds) {
    if (d.name != "budget") continue;
    for (const Argument& a : d.arguments) {
      if (a.name != "ms" || a.value.kind != Value::Kind::int_) continue;
      long long ms = 0;
      const auto r = std::from_chars(a.value.raw.data(), a.value.raw.data() + a.value.raw.size(), ms);
      if (r.ec != std::errc() || ms > INT32_MAX) continue;  // not an Int: reported as such
      if (ms <= 0) {
        Error("@budget(ms:) must be positive.", a.value.loc);
      } else if (ms > kMaxBudgetMs) {
        Error("@budget(ms:) must be at most " + std::to_string(kMaxBudgetMs) +
                  " (one hour): a per-field cap longer than that is a mistake, not a budget.",
              a.value.loc);
      } else {
        return std::chrono::milliseconds(ms);
      }
    }
  }
  return std::nullopt;
}

// The cost specification's directives, known whether or not the schema declares them
// (schemas written for other servers use them without declaring them). A schema that
// declares them is checked against its own declaration instead.
void SchemaBuilder::AddImplicitCostDirectives() {
  auto arg = [&](const char* name, const Type* type, std::optional<boost::json::value> default_value = {}) {
    InputValue v;
    v.name = name;
    v.type = type;
    v.default_value = std::move(default_value);
    return v;
  };
  const Type* string_type = s_.find_type("String");
  const Type* strings = s_.list_of(s_.non_null(string_type));
  if (!s_.find_directive("cost")) {
    DirectiveDef cost;
    cost.name = "cost";
    // The specification types the weight as a String; other servers write an Int or a
    // Float. CostWeight accepts all three, so its type is not checked here.
    cost.args.push_back(arg("weight", s_.non_null(string_type)));
    cost.locations = {"ARGUMENT_DEFINITION", "ENUM", "FIELD_DEFINITION", "INPUT_FIELD_DEFINITION", "OBJECT",
                      "SCALAR"};
    implicit_.push_back(std::move(cost));
  }
  if (!s_.find_directive("listSize")) {
    DirectiveDef list_size;
    list_size.name = "listSize";
    list_size.args.push_back(arg("assumedSize", s_.find_type("Int")));
    list_size.args.push_back(arg("slicingArguments", strings));
    list_size.args.push_back(arg("sizedFields", strings));
    list_size.args.push_back(arg("requireOneSlicingArgument", s_.find_type("Boolean"), boost::json::value(true)));
    list_size.locations = {"FIELD_DEFINITION"};
    implicit_.push_back(std::move(list_size));
  }
}

const DirectiveDef* SchemaBuilder::FindDirective(std::string_view name) const {
  if (const DirectiveDef* d = s_.find_directive(name)) return d;
  for (const DirectiveDef& d : implicit_)
    if (d.name == name) return &d;
  return nullptr;
}

}  // namespace cutoff::graphql::internal
