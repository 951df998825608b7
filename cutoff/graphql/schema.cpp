#include "cutoff/graphql/schema.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_set>

#include "cutoff/graphql/internal/value_printer.hpp"
#include "cutoff/graphql/parser.hpp"
#include "cutoff/graphql/values.hpp"

namespace cutoff::graphql {

namespace {

// The longest @budget a field may declare. A cap is a per-field bound inside a request's own
// budget; anything past an hour is a typo (seconds written as milliseconds twice over, say).
constexpr long long kMaxBudgetMs = 60 * 60 * 1000;

std::mutex g_wrap_mu;  // guards the lazily built wrapper types of every schema

// Built-in scalars, directives, cutoff's @budget, and the introspection types.
constexpr const char* kPrelude = R"(
"The `Int` scalar type represents non-fractional signed whole numeric values. Int can represent values between -(2^31) and 2^31 - 1."
scalar Int
"The `Float` scalar type represents signed double-precision fractional values as specified by [IEEE 754](https://en.wikipedia.org/wiki/IEEE_floating_point)."
scalar Float
"The `String` scalar type represents textual data, represented as UTF-8 character sequences. The String type is most often used by GraphQL to represent free-form human-readable text."
scalar String
"The `Boolean` scalar type represents `true` or `false`."
scalar Boolean
"The `ID` scalar type represents a unique identifier, often used to refetch an object or as key for a cache. The ID type appears in a JSON response as a String; however, it is not intended to be human-readable. When expected as an input type, any string (such as `\"4\"`) or integer (such as `4`) input value will be accepted as an ID."
scalar ID

"Directs the executor to include this field or fragment only when the `if` argument is true."
directive @include("Included when true." if: Boolean!) on FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT
"Directs the executor to skip this field or fragment when the `if` argument is true."
directive @skip("Skipped when true." if: Boolean!) on FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT
"Marks an element of a GraphQL schema as no longer supported."
directive @deprecated(
  "Explains why this element was deprecated, usually also including a suggestion for how to access supported similar data. Formatted using the Markdown syntax, as specified by [CommonMark](https://commonmark.org/)."
  reason: String = "No longer supported"
) on FIELD_DEFINITION | ARGUMENT_DEFINITION | INPUT_FIELD_DEFINITION | ENUM_VALUE
"Exposes a URL that specifies the behavior of this scalar."
directive @specifiedBy("The URL that specifies the behavior of this scalar." url: String!) on SCALAR
"Caps the time this field may take: it runs under min(the operation's remaining budget, ms). When the cap fires, only this field is cut."
directive @budget(ms: Int!) on FIELD_DEFINITION

type __Schema {
  description: String
  types: [__Type!]!
  queryType: __Type!
  mutationType: __Type
  subscriptionType: __Type
  directives: [__Directive!]!
}
type __Type {
  kind: __TypeKind!
  name: String
  description: String
  specifiedByURL: String
  fields(includeDeprecated: Boolean = false): [__Field!]
  interfaces: [__Type!]
  possibleTypes: [__Type!]
  enumValues(includeDeprecated: Boolean = false): [__EnumValue!]
  inputFields(includeDeprecated: Boolean = false): [__InputValue!]
  ofType: __Type
}
enum __TypeKind { SCALAR OBJECT INTERFACE UNION ENUM INPUT_OBJECT LIST NON_NULL }
type __Field {
  name: String!
  description: String
  args(includeDeprecated: Boolean = false): [__InputValue!]!
  type: __Type!
  isDeprecated: Boolean!
  deprecationReason: String
}
type __InputValue {
  name: String!
  description: String
  type: __Type!
  defaultValue: String
  isDeprecated: Boolean!
  deprecationReason: String
}
type __EnumValue {
  name: String!
  description: String
  isDeprecated: Boolean!
  deprecationReason: String
}
type __Directive {
  name: String!
  description: String
  isRepeatable: Boolean!
  locations: [__DirectiveLocation!]!
  args(includeDeprecated: Boolean = false): [__InputValue!]!
}
enum __DirectiveLocation {
  QUERY MUTATION SUBSCRIPTION FIELD FRAGMENT_DEFINITION FRAGMENT_SPREAD INLINE_FRAGMENT VARIABLE_DEFINITION
  SCHEMA SCALAR OBJECT FIELD_DEFINITION ARGUMENT_DEFINITION INTERFACE UNION ENUM ENUM_VALUE INPUT_OBJECT
  INPUT_FIELD_DEFINITION
}
)";

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
  return *this;
}

Schema& Schema::resolve_async(std::string_view type, std::string_view field, AsyncResolver r) {
  Field* f = nullptr;
  MutableField(type, field, &f);
  f->async = std::move(r);
  f->sync = nullptr;
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

// Builds a Schema from a parsed SDL document (prelude first).
class SchemaBuilder {
 public:
  // Lines up to `prelude_lines` are the built-in prelude, which may use reserved names.
  SchemaBuilder(Schema& s, std::uint32_t prelude_lines) : s_(s), prelude_lines_(prelude_lines) {}

  void Build(const Document& doc) {
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

  std::vector<GraphQLError> errors;

 private:
  static TypeKind KindOf(TypeDefinition::Kind k) {
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

  void Error(std::string message, Location loc) {
    GraphQLError e;
    e.message = std::move(message);
    if (loc.line) e.locations.push_back(loc);
    errors.push_back(std::move(e));
  }
  void ErrorAt(std::string message, std::vector<Location> locations) {
    GraphQLError e;
    e.message = std::move(message);
    e.locations = std::move(locations);
    errors.push_back(std::move(e));
  }

  const Type* Resolve(const TypeRef& ref) {
    const Type* t = s_.type_from_ref(ref);
    if (!t) Error("Unknown type \"" + std::string(ref.named_type()) + "\".", ref.loc);
    return t;
  }

  void Deprecation(const std::vector<Directive>& ds, bool& deprecated, std::string& reason) {
    for (const Directive& d : ds) {
      if (d.name != "deprecated") continue;
      deprecated = true;
      reason = "No longer supported";
      for (const Argument& a : d.arguments)
        if (a.name == "reason" && a.value.kind == Value::Kind::string) reason = a.value.string;
    }
  }

  std::vector<InputValue> InputValues(const std::vector<InputValueDefinition>& defs) {
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
        v.default_value_text = internal::literal_text(*d.default_value, {.block_strings = false});
      }
      Deprecation(d.directives, v.deprecated, v.deprecation_reason);
      v.cost = CostWeight(d.directives);
      out.push_back(std::move(v));
    }
    return out;
  }

  // @cost(weight:): an Int, a Float, or a String holding a number (the cost specification
  // writes weights as strings, other servers as integers).
  std::optional<double> CostWeight(const std::vector<Directive>& ds) {
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

  std::optional<ListSize> ListSizeOf(const std::vector<Directive>& ds, const Field& f, const std::string& type_name) {
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
  std::optional<std::chrono::milliseconds> Budget(const std::vector<Directive>& ds) {
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
  void AddImplicitCostDirectives() {
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

  const DirectiveDef* FindDirective(std::string_view name) const {
    if (const DirectiveDef* d = s_.find_directive(name)) return d;
    for (const DirectiveDef& d : implicit_)
      if (d.name == name) return &d;
    return nullptr;
  }

  // The type-system rules for directives (spec 3.13, as graphql-js's SDL rules check them):
  // every directive used is defined and allowed where it is used, is used once per location
  // unless repeatable (a type and its extensions are one location, as are the schema and its
  // extensions), and has known, unique, required and well-typed arguments.
  void CheckDirectiveUses(const Document& doc) {
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

  using Seen = std::unordered_map<std::string_view, Location>;  // directive name → first use

  static std::string_view LocationOf(TypeDefinition::Kind k) {
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

  void CheckUses(const std::vector<Directive>& ds, std::string_view location, Seen* seen = nullptr) {
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
  void CheckReservedNames(const Document& doc) {
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
  void CheckDeprecatedRequired(const Document& doc) {
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
  void CheckDirectiveCycles(const Document& doc) {
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

  void CheckImplementations(const Type& t) {
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

  Schema& s_;
  std::uint32_t prelude_lines_;
  std::vector<DirectiveDef> implicit_;  // @cost and @listSize when the schema does not declare them
};

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
  SchemaBuilder builder(*schema, prelude_lines);
  builder.Build(*parsed.document);
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
