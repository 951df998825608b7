// The GraphQL syntax tree: executable documents and the type-system language (October 2021).
//
//   cutoff::graphql::ParseResult r = cutoff::graphql::parse("{ warehouse(id: \"w1\") { name } }");
//   if (!r.ok()) print(r.error->message, r.error->locations[0].line);
//   const auto& op = r.document->operations[0];
//
// A Document owns its source text; names are string_views into it. Documents move but do not
// copy. String values are decoded (escapes,
// block-string indentation) into owned strings.
#ifndef CUTOFF_GRAPHQL_AST_HPP_
#define CUTOFF_GRAPHQL_AST_HPP_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cutoff::graphql {

struct Location {
  std::uint32_t line = 0;    // 1-based
  std::uint32_t column = 0;  // 1-based, in UTF-16 code units (as graphql-js reports them)
  friend bool operator==(const Location&, const Location&) = default;
};

// ---- values ----------------------------------------------------------------------------------

struct ObjectField;

struct Value {
  enum class Kind : std::uint8_t { variable, int_, float_, string, boolean, null, enum_, list, object };
  Kind kind = Kind::null;
  Location loc;
  std::string_view raw;      // variable name, enum name, or the int/float literal as written
  std::string string;        // decoded string value
  bool boolean = false;
  bool block = false;        // a block string
  std::vector<Value> list;
  std::vector<ObjectField> fields;
};

struct ObjectField {
  std::string_view name;
  Location loc;
  Value value;
};

// ---- types -----------------------------------------------------------------------------------

struct TypeRef {
  enum class Kind : std::uint8_t { named, list, non_null };
  Kind kind = Kind::named;
  std::string_view name;       // for `named`
  std::unique_ptr<TypeRef> of;  // for `list` and `non_null`
  Location loc;

  // The innermost named type.
  std::string_view named_type() const { return kind == Kind::named ? name : of->named_type(); }
  // As written: "[Int!]!".
  std::string to_string() const;
};

// ---- directives and arguments ------------------------------------------------------------------

struct Argument {
  std::string_view name;
  Location loc;
  Value value;
};

struct Directive {
  std::string_view name;
  Location loc;
  std::vector<Argument> arguments;
};

// ---- executable definitions --------------------------------------------------------------------

struct Selection;
using SelectionSet = std::vector<Selection>;

struct Selection {
  enum class Kind : std::uint8_t { field, fragment_spread, inline_fragment };
  Kind kind = Kind::field;
  Location loc;
  std::string_view alias;           // field: empty when none
  std::string_view name;            // field name, or the spread fragment's name
  std::string_view type_condition;  // inline fragment: empty when none
  std::vector<Argument> arguments;  // field
  std::vector<Directive> directives;
  SelectionSet selection_set;  // field (may be empty) and inline fragment
  // Where the parts start, for error locations (graphql-js points at them).
  Location name_loc;            // field name (after any alias), spread fragment name
  Location type_condition_loc;  // inline fragment with a type condition
  Location selection_set_loc;   // the "{" of a non-empty selection set

  std::string_view response_key() const { return alias.empty() ? name : alias; }
};

enum class OperationType : std::uint8_t { query, mutation, subscription };
std::string_view to_string(OperationType t) noexcept;

struct VariableDefinition {
  std::string_view name;
  Location loc;
  TypeRef type;
  std::optional<Value> default_value;
  std::vector<Directive> directives;
  Location name_loc;  // the name after "$"
};

struct OperationDefinition {
  OperationType type = OperationType::query;
  std::string_view name;  // empty: anonymous
  Location loc;
  std::vector<VariableDefinition> variables;
  std::vector<Directive> directives;
  SelectionSet selection_set;
  Location name_loc;
};

struct FragmentDefinition {
  std::string_view name;
  std::string_view type_condition;
  Location loc;
  std::vector<Directive> directives;
  SelectionSet selection_set;
  Location name_loc;
  Location type_condition_loc;
};

// ---- type-system definitions ---------------------------------------------------------------------

struct InputValueDefinition {  // arguments and input object fields
  std::string description;
  std::string_view name;
  Location loc;
  TypeRef type;
  std::optional<Value> default_value;
  std::vector<Directive> directives;
};

struct FieldDefinition {
  std::string description;
  std::string_view name;
  Location loc;
  std::vector<InputValueDefinition> arguments;
  TypeRef type;
  std::vector<Directive> directives;
};

struct EnumValueDefinition {
  std::string description;
  std::string_view name;
  Location loc;
  std::vector<Directive> directives;
};

struct TypeDefinition {
  enum class Kind : std::uint8_t { scalar, object, interface, union_, enum_, input_object };
  Kind kind = Kind::scalar;
  bool extension = false;  // `extend type ...`
  std::string description;
  std::string_view name;
  Location loc;
  std::vector<std::string_view> interfaces;  // object, interface
  std::vector<Directive> directives;
  std::vector<FieldDefinition> fields;             // object, interface
  std::vector<std::string_view> members;           // union
  std::vector<EnumValueDefinition> values;         // enum
  std::vector<InputValueDefinition> input_fields;  // input object
};

struct RootOperationType {
  OperationType operation;
  std::string_view type;
  Location loc;
};

struct SchemaDefinition {
  bool extension = false;
  std::string description;
  Location loc;
  std::vector<Directive> directives;
  std::vector<RootOperationType> operation_types;
};

struct DirectiveDefinition {
  std::string description;
  std::string_view name;
  Location loc;
  std::vector<InputValueDefinition> arguments;
  bool repeatable = false;
  std::vector<std::string_view> locations;  // "QUERY", "FIELD_DEFINITION", ...
};

// ---- the document --------------------------------------------------------------------------------

struct Document {
  // Names and raw literals point into this buffer, which never moves.
  std::shared_ptr<const std::string> source;
  std::vector<OperationDefinition> operations;
  std::vector<FragmentDefinition> fragments;
  std::vector<TypeDefinition> types;
  std::vector<SchemaDefinition> schemas;
  std::vector<DirectiveDefinition> directives;
  // Locations of type-system definitions and extensions, in order (a document sent for
  // execution must not contain any).
  std::vector<Location> type_system_locations;

  Document() = default;
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;
  Document(Document&&) = default;
  Document& operator=(Document&&) = default;
};

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_AST_HPP_
