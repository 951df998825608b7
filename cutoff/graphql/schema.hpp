// Schema: types from SDL, resolvers from C++.
//
//   auto built = cutoff::graphql::Schema::from_sdl(R"(
//     type Query { item(id: ID!): Item }
//     type Item { id: ID! name: String stock: Int @budget(ms: 120) }
//   )");
//   if (!built.ok()) fail(built.errors);
//   Schema& schema = *built.schema;
//   schema.resolve("Query", "item", [&](FieldContext& f) {
//     return Data::object(db.find(f.arg_string("id")));
//   });
//   schema.resolve_async("Item", "stock", [&](FieldContext& f) -> asio::awaitable<Data> {
//     co_return Data::from(co_await stock_service.count(f.ctx, f.parent.as<Item>()->id));
//   });
//   schema.member<&Item::name>("Item", "name");  // a data member: no resolver call
//   schema.subscribe("Subscription", "restocked", [&](FieldContext& f)
//                        -> asio::awaitable<std::unique_ptr<EventStream>> {
//     co_return std::make_unique<RestockStream>(bus.listen(f.arg_string("sku")));
//   });
//
// A field without a resolver reads its parent: the member of the same name of a JSON object
// parent (absent: null). Abstract types resolve from an object's `__typename` member (JSON),
// its Data::Object type name, or a callback set with `type_resolver`. Custom scalars pass
// values through unless a codec is set with `scalar`. `@budget(ms: N)` on a field definition
// caps that field's time: it runs under min(remaining, N ms), 1 <= N <= 3,600,000. A field of
// the subscription root type gets its events from a source resolver set with `subscribe`
// (event_stream.hpp); its ordinary resolver, if any, maps each event to the field's value.
//
// The cost directives of the GraphQL cost specification are read from the SDL, declared or
// not, so schemas written for other servers keep their weights: `@cost(weight: N)` on field
// definitions, arguments, objects, scalars and enums, and `@listSize(assumedSize:,
// slicingArguments:, sizedFields:, requireOneSlicingArgument:)` on list fields. The executor
// uses them for its cost limit (operation_limits.hpp). The introspection types get the list
// sizes of the schema itself (`__Schema.types` is as long as the schema has types).
//
// Directives used in the SDL are checked by the spec's type-system rules (known, at an allowed
// location, not repeated unless repeatable, known, unique, required and well-typed arguments):
// a violation is a schema error at its line and column, so a misspelt @budget never silently
// drops a cap. Unexpected resolver errors are masked (ErrorMasking, `mask_errors`).
//
// Resolvers must be registered before the schema is used by an executor; a Schema is then
// read-only and may be shared by concurrent executions.
#ifndef CUTOFF_GRAPHQL_SCHEMA_HPP_
#define CUTOFF_GRAPHQL_SCHEMA_HPP_

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cutoff/core/context.hpp"
#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/data.hpp"
#include "cutoff/graphql/error.hpp"
#include "cutoff/graphql/event_stream.hpp"

namespace cutoff::graphql {

struct Type;
struct Field;
class Schema;

// What a resolver gets.
struct FieldContext {
  const Context& ctx;  // the field's context: the operation's, tightened by @budget
  const Data& parent;
  const boost::json::object& args;  // coerced argument values (defaults applied)
  const Field& field;
  const Type& parent_type;
  const Schema& schema;
  const boost::json::object& variables;
  const Selection& selection;  // the (first) field node

  const boost::json::value* arg(std::string_view name) const {
    auto it = args.find(name);
    return it == args.end() ? nullptr : &it->value();
  }
  std::string arg_string(std::string_view name) const;  // "" when absent or not a string
};

// A resolver's field error with an optional extensions.code: its message is meant for the
// client. Any other exception becomes a field error too: a cutoff::Error with its message and
// taxonomy code (except code `internal`), anything else as an unexpected error, which the
// schema's ErrorMasking hides from clients.
struct FieldError : std::exception {
  FieldError(std::string message, std::string code = {}) : message(std::move(message)), code(std::move(code)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
  std::string code;
};

using SyncResolver = std::function<Data(FieldContext&)>;
using AsyncResolver = std::function<boost::asio::awaitable<Data>(FieldContext&)>;
// Creates a subscription's source stream. Runs under the subscription's context with the
// field's coerced arguments; the FieldContext is valid only during the call, so the stream
// copies what it keeps. Throwing fails the subscription before it starts.
using SourceResolver = std::function<boost::asio::awaitable<std::unique_ptr<EventStream>>(FieldContext&)>;

enum class TypeKind : std::uint8_t { scalar, object, interface, union_, enum_, input_object, list, non_null };
std::string_view to_string(TypeKind k) noexcept;  // "SCALAR", "OBJECT", ...

struct InputValue {
  std::string name;
  std::optional<double> cost;  // @cost(weight:): added when the argument is given
  std::string description;
  const Type* type = nullptr;
  std::optional<boost::json::value> default_value;  // the SDL literal as JSON (enums as strings)
  std::string default_value_text;                   // the SDL literal as introspection shows it
  bool deprecated = false;
  std::string deprecation_reason;
};

// @listSize on a list field: how many items to assume when estimating an operation's cost.
struct ListSize {
  std::optional<double> assumed_size;
  // Arguments whose value is the list's length (`first`, `limit`); the largest one given wins.
  std::vector<std::string> slicing_arguments;
  // Fields of the returned object that the slicing arguments size instead of the field itself
  // (a connection's `edges` and `nodes`).
  std::vector<std::string> sized_fields;
  bool require_one_slicing_argument = true;  // exactly one slicing argument must be given
};

// A leaf data member's value, as Schema::member reads it (string: borrowed from the object).
struct MemberLeaf {
  enum class Kind : std::uint8_t { absent, boolean, int32, number, string };
  Kind kind = Kind::absent;
  bool boolean = false;
  std::int32_t int32 = 0;
  double number = 0;
  std::string_view string;
};

struct Field {
  std::string name;
  std::string description;
  std::vector<InputValue> args;
  const Type* type = nullptr;
  bool deprecated = false;
  std::string deprecation_reason;
  std::optional<std::chrono::milliseconds> budget;  // @budget(ms: N)
  std::optional<double> cost;                       // @cost(weight:)
  std::optional<ListSize> list_size;                // @listSize(...)
  SyncResolver sync;
  AsyncResolver async;
  SourceResolver subscribe;  // subscription root fields: where the events come from
  // Set by Schema::member for a leaf whose C++ member maps straight onto the field's type:
  // reads the member of `object`, a `member_owner`, for the executor to write; `absent` when
  // the value does not fit the type (the executor then goes through `sync`, which reports it).
  const std::type_info* member_owner = nullptr;
  MemberLeaf (*read_member)(const void* object) = nullptr;

  const InputValue* find_arg(std::string_view name) const;
};

struct EnumValue {
  std::string name;
  std::string description;
  bool deprecated = false;
  std::string deprecation_reason;
};

// Custom scalar behaviour. Both default to passing JSON through unchanged.
struct ScalarCodec {
  // Output: a resolved value to its JSON form; nullopt means "cannot represent" (a field error).
  std::function<std::optional<boost::json::value>(const Data&)> serialize;
  // Input (variables and literals as JSON): nullopt means invalid.
  std::function<std::optional<boost::json::value>(const boost::json::value&)> parse;
};

using TypeResolver = std::function<const Type*(const Data&, const Schema&)>;

// The built-in scalars, recognised without comparing names on the hot path.
enum class BuiltinScalar : std::uint8_t { none, int_, float_, string, boolean, id };

struct Type {
  TypeKind kind = TypeKind::scalar;
  BuiltinScalar builtin = BuiltinScalar::none;
  std::string name;  // empty for list and non-null wrappers
  std::string description;
  std::vector<Field> fields;  // object, interface
  std::vector<const Type*> interfaces;
  std::vector<const Type*> possible_types;  // union members; objects implementing an interface
  std::vector<EnumValue> enum_values;
  std::vector<InputValue> input_fields;
  const Type* of_type = nullptr;  // list, non_null
  std::string specified_by_url;
  std::optional<double> cost;  // @cost(weight:) on an object, scalar or enum
  ScalarCodec codec;           // custom scalars
  TypeResolver resolve_type;   // interface, union (optional)

  const Field* find_field(std::string_view name) const;
  const InputValue* find_input_field(std::string_view name) const;
  const EnumValue* find_enum_value(std::string_view name) const;
  bool is_non_null() const noexcept { return kind == TypeKind::non_null; }
  bool is_list() const noexcept { return kind == TypeKind::list; }
  bool is_abstract() const noexcept { return kind == TypeKind::interface || kind == TypeKind::union_; }
  bool is_composite() const noexcept { return kind == TypeKind::object || is_abstract(); }
  bool is_leaf() const noexcept { return kind == TypeKind::scalar || kind == TypeKind::enum_; }
  // Unwraps lists and non-null.
  const Type& named() const noexcept { return of_type ? of_type->named() : *this; }
  // Unwraps one non-null.
  const Type& nullable() const noexcept { return kind == TypeKind::non_null ? *of_type : *this; }
  bool is_input() const noexcept;
  bool is_output() const noexcept;
  std::string display() const;  // "[Int!]!"

  std::unordered_map<std::string_view, std::size_t> field_index;  // built by Schema
};

struct DirectiveDef {
  std::string name;
  std::string description;
  std::vector<InputValue> args;
  std::vector<std::string> locations;
  bool repeatable = false;
  const InputValue* find_arg(std::string_view name) const;
};

// What clients see of an unexpected error: an exception thrown by a resolver, a type
// resolver, a scalar codec or a source stream that is neither a FieldError nor a
// cutoff::Error with a public code (every code but `internal`). Such messages carry whatever
// the code that threw put in them (a connection string, a query, a file name), so by
// default the client gets `message` with the request id (Context's request values), and
// extensions.code INTERNAL_SERVER_ERROR; the exception's own message goes to the
// ExecutionRecorder (`internal_error`), which the HTTP transport writes to the server's log
// with the same request id.
struct ErrorMasking {
  // Off: unexpected errors are shown as thrown (a development server, a local tool).
  bool enabled = true;
  std::string message = "Internal server error";
};

class Schema;
namespace internal {
class SchemaBuilder;
}  // namespace internal

struct SchemaResult {
  std::unique_ptr<Schema> schema;
  std::vector<GraphQLError> errors;
  bool ok() const noexcept { return schema != nullptr; }
};

class Schema {
 public:
  static SchemaResult from_sdl(std::string sdl);

  Schema(const Schema&) = delete;
  Schema& operator=(const Schema&) = delete;

  const Type* query_type() const noexcept { return query_; }
  const Type* mutation_type() const noexcept { return mutation_; }
  const Type* subscription_type() const noexcept { return subscription_; }
  const Type* root_type(OperationType op) const noexcept;

  const Type* find_type(std::string_view name) const;
  const DirectiveDef* find_directive(std::string_view name) const;
  // Named types in definition order, built-ins and introspection types included.
  const std::vector<std::unique_ptr<Type>>& types() const noexcept { return types_; }
  const std::vector<DirectiveDef>& directives() const noexcept { return directives_; }
  std::string_view description() const noexcept { return description_; }

  // The budget every operation on this schema runs under (the transport's route budget),
  // declared so introspection can show it: `__schema { description }` ends with a
  // "Time budget" sentence. Fields capped by @budget say theirs in their description.
  // Call before the schema is shared.
  Schema& declare_operation_budget(std::chrono::milliseconds budget) {
    operation_budget_ = budget;
    return *this;
  }
  std::optional<std::chrono::milliseconds> operation_budget() const noexcept { return operation_budget_; }

  // How unexpected errors reach clients (masked by default). Call before the schema is shared.
  Schema& mask_errors(ErrorMasking masking) {
    masking_ = std::move(masking);
    return *this;
  }
  const ErrorMasking& error_masking() const noexcept { return masking_; }

  // The wrapper types, interned: the same pointer for the same wrapped type.
  const Type* list_of(const Type* t) const;
  const Type* non_null(const Type* t) const;
  // A type reference from a document (variables), or nullptr if it names an unknown type.
  const Type* type_from_ref(const TypeRef& ref) const;

  // The meta-fields every query can select: __schema and __type(name:) on the query root,
  // __typename anywhere.
  const Field& schema_meta_field() const noexcept { return *schema_field_; }
  const Field& type_meta_field() const noexcept { return *type_field_; }
  const Field& typename_meta_field() const noexcept { return *typename_field_; }

  bool is_possible_type(const Type& abstract, const Type& object) const;
  // Whether `sub` can be used where `super` is expected (output types).
  bool is_subtype(const Type& sub, const Type& super) const;
  // Whether two composite types share at least one possible object type.
  bool overlap(const Type& a, const Type& b) const;

  // Resolvers and codecs. Throw std::invalid_argument naming the unknown type or field.
  Schema& resolve(std::string_view type, std::string_view field, SyncResolver r);
  Schema& resolve_async(std::string_view type, std::string_view field, AsyncResolver r);
  // A field that reads M of its parent, an object of M's class T (Data::object): a data member
  // (V T::*), a const getter (R (T::*)() const) or a function of the parent (R (*)(const T&)):
  //
  //   schema.member<&Bin::sku>("Bin", "sku");
  //   schema.member<&Bin::available>("Bin", "available");  // int Bin::available() const
  //   schema.member<&ValueOf>("Bin", "value");             // double ValueOf(const Bin&)
  //
  // No resolver is called through a std::function: a string (std::string, std::string_view;
  // a getter's by reference or as a view) of a String or ID field, an integral value of an Int
  // field, a floating-point one of a Float field and a bool of a Boolean field are written
  // straight into the response. Anything else is read as a resolver returning it would be: a
  // string returned by value is copied, a class member or a reference returned as the object,
  // a pointer as the object it points to (null: null). A class returned by value does not
  // compile (the object would not outlive the call). A parent that is not a T fails the field
  // with an error.
  template <auto M>
  Schema& member(std::string_view type, std::string_view field);
  // The source stream of a field of the subscription root type (std::invalid_argument for
  // any other type).
  Schema& subscribe(std::string_view type, std::string_view field, SourceResolver r);
  Schema& scalar(std::string_view name, ScalarCodec codec);
  Schema& type_resolver(std::string_view abstract_type, TypeResolver r);

 private:
  Schema() = default;
  friend class internal::SchemaBuilder;
  Type& MutableField(std::string_view type, std::string_view field, Field** out);
  // The introspection types' list fields get @listSize from this schema's own sizes.
  void SizeIntrospectionLists();

  std::vector<std::unique_ptr<Type>> types_;
  std::unordered_map<std::string_view, Type*> by_name_;
  std::vector<DirectiveDef> directives_;
  std::string description_;
  std::optional<std::chrono::milliseconds> operation_budget_;
  ErrorMasking masking_;
  const Type* query_ = nullptr;
  const Type* mutation_ = nullptr;
  const Type* subscription_ = nullptr;
  mutable std::map<const Type*, std::unique_ptr<Type>> lists_;
  mutable std::map<const Type*, std::unique_ptr<Type>> non_nulls_;
  std::unique_ptr<Document> sdl_;  // keeps the parsed SDL alive
  std::unique_ptr<Field> schema_field_, type_field_, typename_field_;
};

// Installs the resolvers of the introspection types and meta-fields (called by from_sdl).
void install_introspection(Schema& schema);

// The SDL literal `v` as JSON: enums become strings, variables are not allowed (null).
boost::json::value literal_to_json(const Value& v);
// Prints a literal back as GraphQL, as graphql-js's print() does ("\"x\"", "[1, 2]", "{a: FAST}"):
// every error that shows a literal, in the schema, in validation or in execution, shows it so.
std::string print_literal(const Value& v);

namespace internal {

// The class M reads from, and what it reads: a data member, a const getter, or a function
// of a const T&.
template <typename>
struct MemberPointer;
template <typename T, typename V>
struct MemberPointer<V T::*> {
  using Owner = T;
};
template <typename T, typename R>
struct MemberPointer<R (T::*)() const> {
  using Owner = T;
};
template <typename T, typename R>
struct MemberPointer<R (T::*)() const noexcept> {
  using Owner = T;
};
template <typename T, typename R>
struct MemberPointer<R (T::*)() const&> {
  using Owner = T;
};
template <typename T, typename R>
struct MemberPointer<R (T::*)() const& noexcept> {
  using Owner = T;
};
template <typename T, typename R>
struct MemberPointer<R (*)(const T&)> {
  using Owner = T;
};
template <typename T, typename R>
struct MemberPointer<R (*)(const T&) noexcept> {
  using Owner = T;
};

template <auto M>
using MemberOwner = typename MemberPointer<decltype(M)>::Owner;
// What reading M gives: a reference for a data member, the getter's or function's result.
template <auto M>
using MemberResult = decltype(std::invoke(M, std::declval<const MemberOwner<M>&>()));
template <auto M>
using MemberValue = std::remove_cvref_t<MemberResult<M>>;

template <typename V>
constexpr bool kStringMember = std::is_convertible_v<const V&, std::string_view>;
// A string that lives in the parent: a member, a reference, or a view.
template <auto M>
constexpr bool kBorrowedString = kStringMember<MemberValue<M>> && (std::is_reference_v<MemberResult<M>> ||
                                                                   std::is_same_v<MemberValue<M>, std::string_view>);

template <auto M>
Data MemberData(const MemberOwner<M>& owner) {
  using V = MemberValue<M>;
  if constexpr (std::is_arithmetic_v<V>) {
    const V v = std::invoke(M, owner);
    if constexpr (std::is_floating_point_v<V>)
      return Data::from(static_cast<double>(v));
    else
      return Data::from(v);
  } else if constexpr (kBorrowedString<M>) {
    return Data::borrow(std::string_view(std::invoke(M, owner)));
  } else if constexpr (kStringMember<V>) {
    return Data::from(std::string(std::string_view(std::invoke(M, owner))));  // returned by value: copied
  } else if constexpr (std::is_pointer_v<V>) {
    static_assert(std::is_class_v<std::remove_pointer_t<V>>, "Schema::member: a pointer to a class");
    const auto* p = std::invoke(M, owner);
    return p ? Data::object(p) : Data();
  } else {
    static_assert(std::is_class_v<V>, "Schema::member: an arithmetic, string, class or pointer value");
    static_assert(std::is_reference_v<MemberResult<M>>,
                  "Schema::member: a class returned by value would not outlive the call; return a reference");
    return Data::object(&std::invoke(M, owner));
  }
}

template <auto M>
MemberLeaf ReadMemberLeaf(const void* object) {
  using V = MemberValue<M>;
  decltype(auto) v = std::invoke(M, *static_cast<const MemberOwner<M>*>(object));
  MemberLeaf leaf;
  if constexpr (std::is_same_v<V, bool>) {
    leaf.kind = MemberLeaf::Kind::boolean;
    leaf.boolean = v;
  } else if constexpr (std::is_integral_v<V>) {
    if (!std::in_range<std::int32_t>(v)) return leaf;  // not an Int: the error is the resolver path's
    leaf.kind = MemberLeaf::Kind::int32;
    leaf.int32 = static_cast<std::int32_t>(v);
  } else if constexpr (std::is_floating_point_v<V>) {
    if (!std::isfinite(v)) return leaf;
    leaf.kind = MemberLeaf::Kind::number;
    leaf.number = static_cast<double>(v);
  } else {
    leaf.kind = MemberLeaf::Kind::string;
    leaf.string = std::string_view(v);
  }
  return leaf;
}

// The reader for M on a field of scalar `builtin`, when the two match; null otherwise.
template <auto M>
MemberLeaf (*MemberLeafReader(BuiltinScalar builtin))(const void*) {
  using V = MemberValue<M>;
  bool match = false;
  if constexpr (std::is_same_v<V, bool>)
    match = builtin == BuiltinScalar::boolean;
  else if constexpr (std::is_integral_v<V>)
    match = builtin == BuiltinScalar::int_;
  else if constexpr (std::is_floating_point_v<V>)
    match = builtin == BuiltinScalar::float_;
  else if constexpr (kStringMember<V>)
    match = builtin == BuiltinScalar::string || builtin == BuiltinScalar::id;
  if constexpr (std::is_arithmetic_v<V> || kBorrowedString<M>) return match ? &ReadMemberLeaf<M> : nullptr;
  else return nullptr;  // an object, or a string made by the call: read through Data
}

}  // namespace internal

template <auto M>
Schema& Schema::member(std::string_view type, std::string_view field) {
  using Owner = internal::MemberOwner<M>;
  Field* f = nullptr;
  MutableField(type, field, &f);
  f->sync = [](FieldContext& fc) -> Data {
    const Owner* o = fc.parent.as<Owner>();
    if (!o) throw FieldError("The parent of " + fc.field.name + " is not the C++ type its member belongs to.");
    return internal::MemberData<M>(*o);
  };
  f->async = nullptr;
  const Type& t = f->type->nullable();
  f->member_owner = &typeid(Owner);
  f->read_member = t.kind == TypeKind::scalar ? internal::MemberLeafReader<M>(t.builtin) : nullptr;
  return *this;
}

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_SCHEMA_HPP_
