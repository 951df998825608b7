// The type-system rules SchemaBuilder checks (spec 3, as graphql-js's SDL validation words
// them); the building itself is in schema_builder.cpp.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cutoff/graphql/internal/schema_builder.hpp"
#include "cutoff/graphql/values.hpp"

namespace cutoff::graphql::internal {

namespace {

std::string_view LocationOf(TypeDefinition::Kind k) {
  switch (k) {
    case TypeDefinition::Kind::scalar: return "SCALAR";
    case TypeDefinition::Kind::object: return "OBJECT";
    case TypeDefinition::Kind::interface: return "INTERFACE";
    case TypeDefinition::Kind::union_: return "UNION";
    case TypeDefinition::Kind::enum_: return "ENUM";
    case TypeDefinition::Kind::input_object: return "INPUT_OBJECT";
  }
  return "OBJECT";
}

}  // namespace

// The type-system rules for directives (spec 3.13, as graphql-js's SDL rules check them):
// every directive used is defined and allowed where it is used, is used once per location
// unless repeatable (a type and its extensions are one location, as are the schema and its
// extensions), and has known, unique, required and well-typed arguments.
void SchemaBuilder::CheckDirectiveUses(const Document& doc) {
  Seen schema_seen;
  for (const SchemaDefinition& sd : doc.schemas) CheckUses(sd.directives, "SCHEMA", &schema_seen);
  std::unordered_map<std::string_view, Seen> type_seen;
  for (const TypeDefinition& def : doc.types) {
    CheckUses(def.directives, LocationOf(def.kind), &type_seen[def.name]);
    for (const FieldDefinition& fd : def.fields) {
      CheckUses(fd.directives, "FIELD_DEFINITION");
      for (const InputValueDefinition& a : fd.arguments) CheckUses(a.directives, "ARGUMENT_DEFINITION");
    }
    for (const InputValueDefinition& iv : def.input_fields) CheckUses(iv.directives, "INPUT_FIELD_DEFINITION");
    for (const EnumValueDefinition& v : def.values) CheckUses(v.directives, "ENUM_VALUE");
  }
  for (const DirectiveDefinition& d : doc.directives)
    for (const InputValueDefinition& a : d.arguments) CheckUses(a.directives, "ARGUMENT_DEFINITION");
}

void SchemaBuilder::CheckUses(const std::vector<Directive>& ds, std::string_view location, Seen* seen) {
  if (ds.empty()) return;
  Seen local;
  if (!seen) seen = &local;
  for (const Directive& d : ds) {
    const std::string at = "\"@" + std::string(d.name) + "\"";
    const DirectiveDef* def = FindDirective(d.name);
    if (!def) {
      Error("Unknown directive " + at + ".", d.loc);
      continue;
    }
    if (std::find(def->locations.begin(), def->locations.end(), location) == def->locations.end())
      Error("Directive " + at + " may not be used on " + std::string(location) + ".", d.loc);
    if (!def->repeatable) {
      auto [first, inserted] = seen->try_emplace(d.name, d.loc);
      if (!inserted)
        ErrorAt("The directive " + at + " can only be used once at this location.", {first->second, d.loc});
    }
    const bool implicit_cost = def->name == "cost" && !s_.find_directive("cost");
    for (std::size_t i = 0; i < d.arguments.size(); ++i) {
      const Argument& a = d.arguments[i];
      bool repeated = false;
      for (std::size_t j = 0; j < i; ++j) {
        if (d.arguments[j].name != a.name) continue;
        ErrorAt("There can be only one argument named \"" + std::string(a.name) + "\".", {d.arguments[j].loc, a.loc});
        repeated = true;
        break;
      }
      if (repeated) continue;
      const InputValue* arg = def->find_arg(a.name);
      if (!arg) {
        Error("Unknown argument \"" + std::string(a.name) + "\" on directive " + at + ".", a.loc);
        continue;
      }
      if (!arg->type || implicit_cost) continue;  // an unknown type is reported where it is declared
      std::string error;
      static const boost::json::object kNoVariables;
      if (!coerce_literal(a.value, *arg->type, kNoVariables, &error))
        Error(error.empty() ? "Expected value of type \"" + arg->type->display() + "\", found " +
                                  print_literal(a.value) + "."
                            : error,
              a.value.loc);
    }
    for (const InputValue& arg : def->args) {
      if (!arg.type || !arg.type->is_non_null() || arg.default_value) continue;
      const bool given = std::any_of(d.arguments.begin(), d.arguments.end(),
                                     [&](const Argument& a) { return a.name == arg.name; });
      if (!given)
        Error("Directive " + at + " argument \"" + arg.name + "\" of type \"" + arg.type->display() +
                  "\" is required, but it was not provided.",
              d.loc);
    }
  }
}

// Names beginning with "__" belong to introspection (spec 3.3, "Reserved Names"): the
// prelude defines them, a schema may not.
void SchemaBuilder::CheckReservedNames(const Document& doc) {
  auto check = [&](std::string_view name, Location loc) {
    if (loc.line <= prelude_lines_ || name.substr(0, 2) != "__") return;
    Error("Name \"" + std::string(name) + "\" must not begin with \"__\", which is reserved by GraphQL introspection.",
          loc);
  };
  auto inputs = [&](const std::vector<InputValueDefinition>& defs) {
    for (const InputValueDefinition& d : defs) check(d.name, d.loc);
  };
  for (const TypeDefinition& def : doc.types) {
    if (!def.extension) check(def.name, def.loc);
    for (const FieldDefinition& fd : def.fields) {
      check(fd.name, fd.loc);
      inputs(fd.arguments);
    }
    inputs(def.input_fields);
    for (const EnumValueDefinition& v : def.values) check(v.name, v.loc);
  }
  for (const DirectiveDefinition& d : doc.directives) {
    check(d.name, d.loc);
    inputs(d.arguments);
  }
}

// A required argument or input field (non-null, no default) cannot be deprecated: a client
// told to stop sending it could not (spec 3.6.1, 3.10.1, 3.13).
void SchemaBuilder::CheckDeprecatedRequired(const Document& doc) {
  auto check = [&](const InputValueDefinition& d, const std::string& what) {
    if (d.type.kind != TypeRef::Kind::non_null || d.default_value) return;
    for (const Directive& use : d.directives)
      if (use.name == "deprecated") Error("Required " + what + " cannot be deprecated.", use.loc);
  };
  for (const TypeDefinition& def : doc.types) {
    const std::string type(def.name);
    for (const FieldDefinition& fd : def.fields)
      for (const InputValueDefinition& a : fd.arguments)
        check(a, "argument " + type + "." + std::string(fd.name) + "(" + std::string(a.name) + ":)");
    for (const InputValueDefinition& iv : def.input_fields)
      check(iv, "input field " + type + "." + std::string(iv.name));
  }
  for (const DirectiveDefinition& d : doc.directives)
    for (const InputValueDefinition& a : d.arguments)
      check(a, "argument @" + std::string(d.name) + "(" + std::string(a.name) + ":)");
}

// A directive definition must not use itself, directly on its own arguments or through the
// types and directives those arguments reach (spec 3.13): evaluating it would never end.
void SchemaBuilder::CheckDirectiveCycles(const Document& doc) {
  std::unordered_map<std::string_view, const DirectiveDefinition*> directives;
  std::unordered_map<std::string_view, std::vector<const TypeDefinition*>> types;  // with extensions
  for (const DirectiveDefinition& d : doc.directives) directives.emplace(d.name, &d);
  for (const TypeDefinition& t : doc.types) types[t.name].push_back(&t);
  for (const DirectiveDefinition& root : doc.directives) {
    std::unordered_set<std::string_view> seen_directives{root.name}, seen_types;
    std::vector<const InputValueDefinition*> work;  // an explicit stack: input types nest deeply
    std::vector<const std::vector<Directive>*> uses;
    for (const InputValueDefinition& a : root.arguments) work.push_back(&a);
    std::optional<Location> found;
    auto visit_uses = [&](const std::vector<Directive>& ds) {
      for (const Directive& use : ds) {
        if (use.name == root.name) {
          if (!found) found = use.loc;
          return;
        }
        auto it = directives.find(use.name);
        if (it == directives.end() || !seen_directives.insert(use.name).second) continue;
        for (const InputValueDefinition& a : it->second->arguments) work.push_back(&a);
      }
    };
    while (!work.empty() && !found) {
      const InputValueDefinition* iv = work.back();
      work.pop_back();
      visit_uses(iv->directives);
      auto it = types.find(iv->type.named_type());
      if (it == types.end() || !seen_types.insert(it->first).second) continue;
      for (const TypeDefinition* t : it->second) {
        visit_uses(t->directives);
        for (const EnumValueDefinition& v : t->values) visit_uses(v.directives);
        for (const InputValueDefinition& f : t->input_fields) work.push_back(&f);
      }
    }
    if (found) ErrorAt("Directive \"@" + std::string(root.name) + "\" must not reference itself.", {root.loc, *found});
  }
}

void SchemaBuilder::CheckImplementations(const Type& t) {
  for (const Type* i : t.interfaces) {
    for (const Field& f : i->fields) {
      const Field* own = t.find_field(f.name);
      if (!own) {
        Error("Interface field " + i->name + "." + f.name + " expected but " + t.name + " does not provide it.", {});
        continue;
      }
      if (own->type && f.type && !s_.is_subtype(*own->type, *f.type))
        Error("Interface field " + i->name + "." + f.name + " expects type " + f.type->display() + " but " + t.name +
                  "." + f.name + " is type " + own->type->display() + ".",
              {});
    }
  }
}

}  // namespace cutoff::graphql::internal
