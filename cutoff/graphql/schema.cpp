#include "cutoff/graphql/schema.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "cutoff/graphql/internal/prelude.hpp"
#include "cutoff/graphql/internal/schema_builder.hpp"
#include "cutoff/graphql/internal/value_printer.hpp"
#include "cutoff/graphql/parser.hpp"

// The Schema's own members: its types and how they relate, resolver registration, and
// from_sdl, which builds it (internal/schema_builder.hpp). Also the SDL literal helpers.

namespace cutoff::graphql {

namespace {

using internal::kPrelude;

std::mutex g_wrap_mu;  // guards the lazily built wrapper types of every schema

}  // namespace

std::string_view to_string(TypeKind k) noexcept {
  switch (k) {
    case TypeKind::scalar: return "SCALAR";
    case TypeKind::object: return "OBJECT";
    case TypeKind::interface: return "INTERFACE";
    case TypeKind::union_: return "UNION";
    case TypeKind::enum_: return "ENUM";
    case TypeKind::input_object: return "INPUT_OBJECT";
    case TypeKind::list: return "LIST";
    case TypeKind::non_null: return "NON_NULL";
  }
  return "SCALAR";
}

std::string FieldContext::arg_string(std::string_view name) const {
  const boost::json::value* v = arg(name);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

const InputValue* Field::find_arg(std::string_view name) const {
  for (const auto& a : args)
    if (a.name == name) return &a;
  return nullptr;
}

const InputValue* DirectiveDef::find_arg(std::string_view name) const {
  for (const auto& a : args)
    if (a.name == name) return &a;
  return nullptr;
}

const Field* Type::find_field(std::string_view name) const {
  if (!field_index.empty()) {
    auto it = field_index.find(name);
    return it == field_index.end() ? nullptr : &fields[it->second];
  }
  for (const auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

const InputValue* Type::find_input_field(std::string_view name) const {
  for (const auto& f : input_fields)
    if (f.name == name) return &f;
  return nullptr;
}

const EnumValue* Type::find_enum_value(std::string_view name) const {
  for (const auto& v : enum_values)
    if (v.name == name) return &v;
  return nullptr;
}

bool Type::is_input() const noexcept {
  const Type& n = named();
  return n.kind == TypeKind::scalar || n.kind == TypeKind::enum_ || n.kind == TypeKind::input_object;
}

bool Type::is_output() const noexcept { return named().kind != TypeKind::input_object; }

std::string Type::display() const {
  switch (kind) {
    case TypeKind::list: return "[" + of_type->display() + "]";
    case TypeKind::non_null: return of_type->display() + "!";
    default: return name;
  }
}

const Type* Schema::root_type(OperationType op) const noexcept {
  switch (op) {
    case OperationType::query: return query_;
    case OperationType::mutation: return mutation_;
    case OperationType::subscription: return subscription_;
  }
  return nullptr;
}

const Type* Schema::find_type(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const DirectiveDef* Schema::find_directive(std::string_view name) const {
  for (const auto& d : directives_)
    if (d.name == name) return &d;
  return nullptr;
}

const Type* Schema::list_of(const Type* t) const {
  std::lock_guard lock(g_wrap_mu);
  auto& slot = lists_[t];
  if (!slot) {
    slot = std::make_unique<Type>();
    slot->kind = TypeKind::list;
    slot->of_type = t;
  }
  return slot.get();
}

const Type* Schema::non_null(const Type* t) const {
  std::lock_guard lock(g_wrap_mu);
  auto& slot = non_nulls_[t];
  if (!slot) {
    slot = std::make_unique<Type>();
    slot->kind = TypeKind::non_null;
    slot->of_type = t;
  }
  return slot.get();
}

const Type* Schema::type_from_ref(const TypeRef& ref) const {
  switch (ref.kind) {
    case TypeRef::Kind::named: return find_type(ref.name);
    case TypeRef::Kind::list: {
      const Type* inner = type_from_ref(*ref.of);
      return inner ? list_of(inner) : nullptr;
    }
    case TypeRef::Kind::non_null: {
      const Type* inner = type_from_ref(*ref.of);
      return inner ? non_null(inner) : nullptr;
    }
  }
  return nullptr;
}

bool Schema::is_possible_type(const Type& abstract, const Type& object) const {
  if (&abstract == &object) return true;
  for (const Type* t : abstract.possible_types)
    if (t == &object) return true;
  return false;
}

bool Schema::is_subtype(const Type& sub, const Type& super) const {
  if (&sub == &super) return true;
  if (super.kind == TypeKind::non_null) return sub.kind == TypeKind::non_null && is_subtype(*sub.of_type, *super.of_type);
  if (sub.kind == TypeKind::non_null) return is_subtype(*sub.of_type, super);
  if (super.kind == TypeKind::list) return sub.kind == TypeKind::list && is_subtype(*sub.of_type, *super.of_type);
  if (sub.kind == TypeKind::list) return false;
  if (super.is_abstract() && (sub.kind == TypeKind::object || sub.kind == TypeKind::interface)) {
    if (is_possible_type(super, sub)) return true;
    for (const Type* i : sub.interfaces)
      if (i == &super) return true;
  }
  return false;
}

bool Schema::overlap(const Type& a, const Type& b) const {
  if (&a == &b) return true;
  if (a.is_abstract()) {
    if (b.is_abstract()) {
      for (const Type* t : a.possible_types)
        if (is_possible_type(b, *t)) return true;
      return false;
    }
    return is_possible_type(a, b);
  }
  if (b.is_abstract()) return is_possible_type(b, a);
  return false;
}

Type& Schema::MutableField(std::string_view type, std::string_view field, Field** out) {
  auto it = by_name_.find(type);
  if (it == by_name_.end()) throw std::invalid_argument("no type named '" + std::string(type) + "' in the schema");
  Type& t = *it->second;
  for (auto& f : t.fields) {
    if (f.name == field) {
      *out = &f;
      return t;
    }
  }
  throw std::invalid_argument("type '" + std::string(type) + "' has no field '" + std::string(field) + "'");
}

Schema& Schema::resolve(std::string_view type, std::string_view field, SyncResolver r) {
  Field* f = nullptr;
  MutableField(type, field, &f);
  f->sync = std::move(r);
  f->async = nullptr;
  f->member_owner = nullptr;
  f->read_member = nullptr;
  return *this;
}

Schema& Schema::resolve_async(std::string_view type, std::string_view field, AsyncResolver r) {
  Field* f = nullptr;
  MutableField(type, field, &f);
  f->async = std::move(r);
  f->sync = nullptr;
  f->member_owner = nullptr;
  f->read_member = nullptr;
  return *this;
}

Schema& Schema::subscribe(std::string_view type, std::string_view field, SourceResolver r) {
  if (!subscription_ || subscription_->name != type)
    throw std::invalid_argument("'" + std::string(type) + "' is not the subscription root type");
  Field* f = nullptr;
  MutableField(type, field, &f);
  f->subscribe = std::move(r);
  return *this;
}

Schema& Schema::scalar(std::string_view name, ScalarCodec codec) {
  auto it = by_name_.find(name);
  if (it == by_name_.end() || it->second->kind != TypeKind::scalar)
    throw std::invalid_argument("no scalar named '" + std::string(name) + "' in the schema");
  it->second->codec = std::move(codec);
  return *this;
}

Schema& Schema::type_resolver(std::string_view abstract_type, TypeResolver r) {
  auto it = by_name_.find(abstract_type);
  if (it == by_name_.end() || !it->second->is_abstract())
    throw std::invalid_argument("no interface or union named '" + std::string(abstract_type) + "' in the schema");
  it->second->resolve_type = std::move(r);
  return *this;
}

boost::json::value literal_to_json(const Value& v) {
  switch (v.kind) {
    case Value::Kind::int_: {
      std::int64_t n = 0;
      auto r = std::from_chars(v.raw.data(), v.raw.data() + v.raw.size(), n);
      if (r.ec == std::errc()) return n;
      return std::strtod(std::string(v.raw).c_str(), nullptr);
    }
    case Value::Kind::float_: return std::strtod(std::string(v.raw).c_str(), nullptr);
    case Value::Kind::string: return boost::json::string(v.string);
    case Value::Kind::boolean: return v.boolean;
    case Value::Kind::enum_: return boost::json::string(v.raw);
    case Value::Kind::list: {
      boost::json::array a;
      for (const auto& item : v.list) a.push_back(literal_to_json(item));
      return a;
    }
    case Value::Kind::object: {
      boost::json::object o;
      for (const auto& f : v.fields) o[f.name] = literal_to_json(f.value);
      return o;
    }
    case Value::Kind::null:
    case Value::Kind::variable: return nullptr;
  }
  return nullptr;
}

std::string print_literal(const Value& v) { return internal::literal_text(v); }

void Schema::SizeIntrospectionLists() {
  std::size_t fields = 0, args = 0, interfaces = 0, possible = 0, values = 0, inputs = 0, directive_args = 0;
  for (const auto& t : types_) {
    fields = std::max(fields, t->fields.size());
    for (const Field& f : t->fields) args = std::max(args, f.args.size());
    interfaces = std::max(interfaces, t->interfaces.size());
    possible = std::max(possible, t->possible_types.size());
    values = std::max(values, t->enum_values.size());
    inputs = std::max(inputs, t->input_fields.size());
  }
  for (const DirectiveDef& d : directives_) directive_args = std::max(directive_args, d.args.size());
  auto size = [&](std::string_view type, std::string_view field, std::size_t n) {
    Field* f = nullptr;
    MutableField(type, field, &f);
    f->list_size = ListSize{static_cast<double>(n), {}, {}, false};
  };
  size("__Schema", "types", types_.size());
  size("__Schema", "directives", directives_.size());
  size("__Type", "fields", fields);
  size("__Type", "interfaces", interfaces);
  size("__Type", "possibleTypes", possible);
  size("__Type", "enumValues", values);
  size("__Type", "inputFields", inputs);
  size("__Field", "args", args);
  size("__Directive", "args", directive_args);
}

SchemaResult Schema::from_sdl(std::string sdl) {
  SchemaResult result;
  ParseResult parsed = parse(std::string(kPrelude) + "\n" + sdl);
  // Errors are located within the caller's SDL, not the prelude before it.
  const std::uint32_t prelude_lines =
      static_cast<std::uint32_t>(std::count(kPrelude, kPrelude + std::char_traits<char>::length(kPrelude), '\n')) + 1;
  auto relocate = [&](GraphQLError& e) {
    for (auto& l : e.locations)
      if (l.line > prelude_lines) l.line -= prelude_lines;
  };
  if (!parsed.ok()) {
    GraphQLError e = *parsed.error;
    relocate(e);
    result.errors.push_back(std::move(e));
    return result;
  }
  if (!parsed.document->operations.empty() || !parsed.document->fragments.empty()) {
    result.errors.push_back(GraphQLError{"A schema document must not contain operations or fragments.", {}, {}, {}});
    return result;
  }
  std::unique_ptr<Schema> schema(new Schema());
  internal::SchemaBuilder builder(*schema, prelude_lines);
  builder.build(*parsed.document);
  if (!builder.errors.empty()) {
    for (GraphQLError& e : builder.errors) relocate(e);
    result.errors = std::move(builder.errors);
    return result;
  }
  schema->sdl_ = std::move(parsed.document);
  auto meta = [&](const char* name, const Type* type) {
    auto f = std::make_unique<Field>();
    f->name = name;
    f->type = type;
    return f;
  };
  schema->schema_field_ = meta("__schema", schema->non_null(schema->find_type("__Schema")));
  schema->schema_field_->description = "Access the current type schema of this server.";
  schema->type_field_ = meta("__type", schema->find_type("__Type"));
  schema->type_field_->description = "Request the type information of a single type.";
  InputValue name_arg;
  name_arg.name = "name";
  name_arg.type = schema->non_null(schema->find_type("String"));
  schema->type_field_->args.push_back(std::move(name_arg));
  schema->typename_field_ = meta("__typename", schema->non_null(schema->find_type("String")));
  schema->typename_field_->description = "The name of the current Object type at runtime.";
  install_introspection(*schema);
  schema->SizeIntrospectionLists();
  result.schema = std::move(schema);
  return result;
}

}  // namespace cutoff::graphql
