// Resolvers for the introspection types (__Schema, __Type, __Field, __InputValue,
// __EnumValue, __Directive) and the __schema / __type meta-fields, reading the Schema's own
// structures. Enough for GraphiQL and the official introspection query.
#include <boost/json/value.hpp>

#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql {
namespace {

Data Text(const std::string& s) { return s.empty() ? Data() : Data::from(s); }

// Budgets are part of the contract a client reads: a description gains a sentence saying it.
std::string WithBudget(std::string description, std::string_view subject, std::chrono::milliseconds budget) {
  if (!description.empty()) description += "\n\n";
  description += "Time budget: ";
  description += subject;
  description += std::to_string(budget.count()) + " ms.";
  return description;
}

bool IncludeDeprecated(FieldContext& f) {
  const boost::json::value* v = f.arg("includeDeprecated");
  return v && v->is_bool() && v->get_bool();
}

template <typename T>
Data ObjectList(const std::vector<T>& items, bool include_deprecated) {
  Data::List out;
  for (const T& item : items)
    if (include_deprecated || !item.deprecated) out.push_back(Data::object(&item));
  return Data::list(std::move(out));
}

Data TypeList(const std::vector<const Type*>& types) {
  Data::List out;
  out.reserve(types.size());
  for (const Type* t : types) out.push_back(Data::object(t));
  return Data::list(std::move(out));
}

Data InputValues(const std::vector<InputValue>& values, bool include_deprecated) {
  return ObjectList(values, include_deprecated);
}

}  // namespace

void install_introspection(Schema& s) {
  // Meta-fields.
  const_cast<Field&>(s.schema_meta_field()).sync = [](FieldContext& f) { return Data::object(&f.schema); };
  const_cast<Field&>(s.type_meta_field()).sync = [](FieldContext& f) {
    return Data::object(f.schema.find_type(f.arg_string("name")));
  };

  // __Schema
  s.resolve("__Schema", "description", [](FieldContext& f) {
    const Schema* schema = f.parent.as<Schema>();
    std::string d(schema->description());
    if (auto b = schema->operation_budget()) d = WithBudget(std::move(d), "each operation runs under at most ", *b);
    return Text(d);
  });
  s.resolve("__Schema", "types", [](FieldContext& f) {
    Data::List out;
    for (const auto& t : f.parent.as<Schema>()->types()) out.push_back(Data::object(t.get()));
    return Data::list(std::move(out));
  });
  s.resolve("__Schema", "queryType", [](FieldContext& f) { return Data::object(f.parent.as<Schema>()->query_type()); });
  s.resolve("__Schema", "mutationType",
            [](FieldContext& f) { return Data::object(f.parent.as<Schema>()->mutation_type()); });
  s.resolve("__Schema", "subscriptionType",
            [](FieldContext& f) { return Data::object(f.parent.as<Schema>()->subscription_type()); });
  s.resolve("__Schema", "directives", [](FieldContext& f) {
    Data::List out;
    for (const auto& d : f.parent.as<Schema>()->directives()) out.push_back(Data::object(&d));
    return Data::list(std::move(out));
  });

  // __Type
  s.resolve("__Type", "kind", [](FieldContext& f) { return Data::from(to_string(f.parent.as<Type>()->kind)); });
  s.resolve("__Type", "name", [](FieldContext& f) { return Text(f.parent.as<Type>()->name); });
  s.resolve("__Type", "description", [](FieldContext& f) { return Text(f.parent.as<Type>()->description); });
  s.resolve("__Type", "specifiedByURL", [](FieldContext& f) { return Text(f.parent.as<Type>()->specified_by_url); });
  s.resolve("__Type", "fields", [](FieldContext& f) {
    const Type* t = f.parent.as<Type>();
    if (t->kind != TypeKind::object && t->kind != TypeKind::interface) return Data();
    return ObjectList(t->fields, IncludeDeprecated(f));
  });
  s.resolve("__Type", "interfaces", [](FieldContext& f) {
    const Type* t = f.parent.as<Type>();
    if (t->kind != TypeKind::object && t->kind != TypeKind::interface) return Data();
    return TypeList(t->interfaces);
  });
  s.resolve("__Type", "possibleTypes", [](FieldContext& f) {
    const Type* t = f.parent.as<Type>();
    if (!t->is_abstract()) return Data();
    return TypeList(t->possible_types);
  });
  s.resolve("__Type", "enumValues", [](FieldContext& f) {
    const Type* t = f.parent.as<Type>();
    if (t->kind != TypeKind::enum_) return Data();
    return ObjectList(t->enum_values, IncludeDeprecated(f));
  });
  s.resolve("__Type", "inputFields", [](FieldContext& f) {
    const Type* t = f.parent.as<Type>();
    if (t->kind != TypeKind::input_object) return Data();
    return InputValues(t->input_fields, IncludeDeprecated(f));
  });
  s.resolve("__Type", "ofType", [](FieldContext& f) { return Data::object(f.parent.as<Type>()->of_type); });

  // __Field
  s.resolve("__Field", "name", [](FieldContext& f) { return Data::from(f.parent.as<Field>()->name); });
  s.resolve("__Field", "description", [](FieldContext& f) {
    const Field* x = f.parent.as<Field>();
    if (!x->budget) return Text(x->description);
    return Text(WithBudget(x->description, "this field is cut after ", *x->budget));
  });
  s.resolve("__Field", "args",
            [](FieldContext& f) { return InputValues(f.parent.as<Field>()->args, IncludeDeprecated(f)); });
  s.resolve("__Field", "type", [](FieldContext& f) { return Data::object(f.parent.as<Field>()->type); });
  s.resolve("__Field", "isDeprecated", [](FieldContext& f) { return Data::from(f.parent.as<Field>()->deprecated); });
  s.resolve("__Field", "deprecationReason", [](FieldContext& f) {
    const Field* x = f.parent.as<Field>();
    return x->deprecated ? Data::from(x->deprecation_reason) : Data();
  });

  // __InputValue
  s.resolve("__InputValue", "name", [](FieldContext& f) { return Data::from(f.parent.as<InputValue>()->name); });
  s.resolve("__InputValue", "description",
            [](FieldContext& f) { return Text(f.parent.as<InputValue>()->description); });
  s.resolve("__InputValue", "type", [](FieldContext& f) { return Data::object(f.parent.as<InputValue>()->type); });
  s.resolve("__InputValue", "defaultValue", [](FieldContext& f) {
    const InputValue* v = f.parent.as<InputValue>();
    return v->default_value ? Data::from(v->default_value_text) : Data();
  });
  s.resolve("__InputValue", "isDeprecated",
            [](FieldContext& f) { return Data::from(f.parent.as<InputValue>()->deprecated); });
  s.resolve("__InputValue", "deprecationReason", [](FieldContext& f) {
    const InputValue* v = f.parent.as<InputValue>();
    return v->deprecated ? Data::from(v->deprecation_reason) : Data();
  });

  // __EnumValue
  s.resolve("__EnumValue", "name", [](FieldContext& f) { return Data::from(f.parent.as<EnumValue>()->name); });
  s.resolve("__EnumValue", "description", [](FieldContext& f) { return Text(f.parent.as<EnumValue>()->description); });
  s.resolve("__EnumValue", "isDeprecated",
            [](FieldContext& f) { return Data::from(f.parent.as<EnumValue>()->deprecated); });
  s.resolve("__EnumValue", "deprecationReason", [](FieldContext& f) {
    const EnumValue* v = f.parent.as<EnumValue>();
    return v->deprecated ? Data::from(v->deprecation_reason) : Data();
  });

  // __Directive
  s.resolve("__Directive", "name", [](FieldContext& f) { return Data::from(f.parent.as<DirectiveDef>()->name); });
  s.resolve("__Directive", "description",
            [](FieldContext& f) { return Text(f.parent.as<DirectiveDef>()->description); });
  s.resolve("__Directive", "isRepeatable",
            [](FieldContext& f) { return Data::from(f.parent.as<DirectiveDef>()->repeatable); });
  s.resolve("__Directive", "locations", [](FieldContext& f) {
    Data::List out;
    for (const auto& l : f.parent.as<DirectiveDef>()->locations) out.push_back(Data::from(l));
    return Data::list(std::move(out));
  });
  s.resolve("__Directive", "args",
            [](FieldContext& f) { return InputValues(f.parent.as<DirectiveDef>()->args, IncludeDeprecated(f)); });
}

}  // namespace cutoff::graphql
