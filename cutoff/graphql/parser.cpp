#include "cutoff/graphql/parser.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cutoff/graphql/internal/lexer.hpp"

namespace cutoff::graphql {

std::string_view to_string(OperationType t) noexcept {
  switch (t) {
    case OperationType::query: return "query";
    case OperationType::mutation: return "mutation";
    case OperationType::subscription: return "subscription";
  }
  return "query";
}

std::string TypeRef::to_string() const {
  switch (kind) {
    case Kind::named: return std::string(name);
    case Kind::list: return "[" + of->to_string() + "]";
    case Kind::non_null: return of->to_string() + "!";
  }
  return {};
}

namespace {

using internal::Lexer;
using internal::SyntaxError;
using internal::Tok;
using internal::Token;
using internal::token_name;

class Parser {
 public:
  Parser(std::string_view src, const ParseOptions& options) : lex_(src, options.max_tokens), options_(options) {
    tok_ = lex_.next();
  }

  void ParseDocument(Document& doc) {
    if (tok_.kind == Tok::eof) throw SyntaxError{"Syntax Error: Unexpected <EOF>.", tok_.loc};
    while (tok_.kind != Tok::eof) ParseDefinition(doc);
  }

 private:
  // ---- token helpers ----
  std::string_view Text() const { return lex_.text(tok_); }
  bool Peek(Tok k) const { return tok_.kind == k; }
  bool PeekName(std::string_view n) const { return tok_.kind == Tok::name && Text() == n; }
  Token Advance() {
    Token t = std::move(tok_);
    tok_ = lex_.next();
    return t;
  }
  [[noreturn]] void Unexpected() {
    std::string what = tok_.kind == Tok::eof ? "<EOF>"
                       : tok_.kind == Tok::name || tok_.kind == Tok::int_ || tok_.kind == Tok::float_
                           ? std::string(token_name(tok_.kind)) + " \"" + std::string(Text()) + "\""
                           : std::string(token_name(tok_.kind));
    throw SyntaxError{"Syntax Error: Unexpected " + what + ".", tok_.loc};
  }
  Token Expect(Tok k) {
    if (tok_.kind != k) {
      std::string found =
          tok_.kind == Tok::name ? "Name \"" + std::string(Text()) + "\"" : std::string(token_name(tok_.kind));
      throw SyntaxError{"Syntax Error: Expected " + std::string(token_name(k)) + ", found " + found + ".", tok_.loc};
    }
    return Advance();
  }
  bool Skip(Tok k) {
    if (tok_.kind != k) return false;
    Advance();
    return true;
  }
  void ExpectKeyword(std::string_view kw) {
    if (!PeekName(kw))
      throw SyntaxError{"Syntax Error: Expected \"" + std::string(kw) + "\", found " +
                            (tok_.kind == Tok::name ? "Name \"" + std::string(Text()) + "\""
                                                    : std::string(token_name(tok_.kind))) +
                            ".",
                        tok_.loc};
    Advance();
  }
  std::string_view ParseName() {
    Token t = Expect(Tok::name);
    return lex_.text(t);
  }

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser, Location loc) : p(parser) {
      if (++p.depth_ > p.options_.max_depth)
        throw SyntaxError{"Syntax Error: Document is nested too deeply (more than " +
                              std::to_string(p.options_.max_depth) + " levels).",
                          loc};
    }
    ~DepthGuard() { --p.depth_; }
  };

  // ---- definitions ----
  void ParseDefinition(Document& doc) {
    if (Peek(Tok::brace_l)) {
      OperationDefinition op;
      op.loc = tok_.loc;
      op.selection_set = ParseSelectionSet();
      doc.operations.push_back(std::move(op));
      return;
    }
    std::string description;
    const bool has_description = Peek(Tok::string) || Peek(Tok::block_string);
    Location start = tok_.loc;
    if (has_description) description = Advance().value;
    if (!Peek(Tok::name)) Unexpected();
    const std::string_view kw = Text();
    if (!has_description) {
      if (kw == "query" || kw == "mutation" || kw == "subscription") {
        doc.operations.push_back(ParseOperation());
        return;
      }
      if (kw == "fragment") {
        doc.fragments.push_back(ParseFragment());
        return;
      }
      if (kw == "extend") {
        doc.type_system_locations.push_back(start);
        ParseExtension(doc);
        return;
      }
    }
    if (kw == "schema" || kw == "scalar" || kw == "type" || kw == "interface" || kw == "union" || kw == "enum" ||
        kw == "input" || kw == "directive") {
      doc.type_system_locations.push_back(start);
      ParseTypeSystemDefinition(doc, std::move(description), start, false);
      return;
    }
    Unexpected();
  }

  OperationDefinition ParseOperation() {
    OperationDefinition op;
    op.loc = tok_.loc;
    const std::string_view kw = ParseName();
    op.type = kw == "mutation" ? OperationType::mutation
              : kw == "subscription" ? OperationType::subscription
                                     : OperationType::query;
    if (Peek(Tok::name)) {
      op.name_loc = tok_.loc;
      op.name = ParseName();
    }
    if (Skip(Tok::paren_l)) {
      do {
        VariableDefinition v;
        v.loc = tok_.loc;
        Expect(Tok::dollar);
        v.name_loc = tok_.loc;
        v.name = ParseName();
        Expect(Tok::colon);
        v.type = ParseType();
        if (Skip(Tok::equals)) v.default_value = ParseValue(true);
        v.directives = ParseDirectives(true);
        op.variables.push_back(std::move(v));
      } while (!Skip(Tok::paren_r));
    }
    op.directives = ParseDirectives(false);
    op.selection_set = ParseSelectionSet();
    return op;
  }

  FragmentDefinition ParseFragment() {
    FragmentDefinition f;
    f.loc = tok_.loc;
    ExpectKeyword("fragment");
    if (PeekName("on")) Unexpected();
    f.name_loc = tok_.loc;
    f.name = ParseName();
    ExpectKeyword("on");
    f.type_condition_loc = tok_.loc;
    f.type_condition = ParseName();
    f.directives = ParseDirectives(false);
    f.selection_set = ParseSelectionSet();
    return f;
  }

  SelectionSet ParseSelectionSet() {
    DepthGuard guard(*this, tok_.loc);
    Expect(Tok::brace_l);
    SelectionSet set;
    do {
      set.push_back(ParseSelection());
    } while (!Skip(Tok::brace_r));
    return set;
  }

  Selection ParseSelection() {
    Selection s;
    s.loc = tok_.loc;
    if (Skip(Tok::spread)) {
      if (Peek(Tok::name) && !PeekName("on")) {
        s.kind = Selection::Kind::fragment_spread;
        s.name_loc = tok_.loc;
        s.name = ParseName();
        s.directives = ParseDirectives(false);
        return s;
      }
      s.kind = Selection::Kind::inline_fragment;
      if (PeekName("on")) {
        Advance();
        s.type_condition_loc = tok_.loc;
        s.type_condition = ParseName();
      }
      s.directives = ParseDirectives(false);
      s.selection_set_loc = tok_.loc;
      s.selection_set = ParseSelectionSet();
      return s;
    }
    s.kind = Selection::Kind::field;
    s.name_loc = tok_.loc;
    std::string_view first = ParseName();
    if (Skip(Tok::colon)) {
      s.alias = first;
      s.name_loc = tok_.loc;
      s.name = ParseName();
    } else {
      s.name = first;
    }
    s.arguments = ParseArguments(false);
    s.directives = ParseDirectives(false);
    if (Peek(Tok::brace_l)) {
      s.selection_set_loc = tok_.loc;
      s.selection_set = ParseSelectionSet();
    }
    return s;
  }

  std::vector<Argument> ParseArguments(bool is_const) {
    std::vector<Argument> args;
    if (!Skip(Tok::paren_l)) return args;
    do {
      Argument a;
      a.loc = tok_.loc;
      a.name = ParseName();
      Expect(Tok::colon);
      a.value = ParseValue(is_const);
      args.push_back(std::move(a));
    } while (!Skip(Tok::paren_r));
    return args;
  }

  std::vector<Directive> ParseDirectives(bool is_const) {
    std::vector<Directive> out;
    while (Peek(Tok::at)) {
      Directive d;
      d.loc = tok_.loc;
      Advance();
      d.name = ParseName();
      d.arguments = ParseArguments(is_const);
      out.push_back(std::move(d));
    }
    return out;
  }

  Value ParseValue(bool is_const) {
    Value v;
    v.loc = tok_.loc;
    switch (tok_.kind) {
      case Tok::bracket_l: {
        DepthGuard guard(*this, tok_.loc);
        Advance();
        v.kind = Value::Kind::list;
        while (!Skip(Tok::bracket_r)) v.list.push_back(ParseValue(is_const));
        return v;
      }
      case Tok::brace_l: {
        DepthGuard guard(*this, tok_.loc);
        Advance();
        v.kind = Value::Kind::object;
        while (!Skip(Tok::brace_r)) {
          ObjectField f;
          f.loc = tok_.loc;
          f.name = ParseName();
          Expect(Tok::colon);
          f.value = ParseValue(is_const);
          v.fields.push_back(std::move(f));
        }
        return v;
      }
      case Tok::int_:
        v.kind = Value::Kind::int_;
        v.raw = Text();
        Advance();
        return v;
      case Tok::float_:
        v.kind = Value::Kind::float_;
        v.raw = Text();
        Advance();
        return v;
      case Tok::string:
      case Tok::block_string:
        v.kind = Value::Kind::string;
        v.block = tok_.kind == Tok::block_string;
        v.string = Advance().value;
        return v;
      case Tok::name: {
        const std::string_view n = Text();
        if (n == "true" || n == "false") {
          v.kind = Value::Kind::boolean;
          v.boolean = n == "true";
        } else if (n == "null") {
          v.kind = Value::Kind::null;
        } else {
          v.kind = Value::Kind::enum_;
          v.raw = n;
        }
        Advance();
        return v;
      }
      case Tok::dollar: {
        Advance();
        if (is_const) {
          const std::string name = Peek(Tok::name) ? std::string(Text()) : std::string();
          throw SyntaxError{"Syntax Error: Unexpected variable \"$" + name + "\" in constant value.", v.loc};
        }
        v.kind = Value::Kind::variable;
        v.raw = ParseName();
        return v;
      }
      default: Unexpected();
    }
  }

  TypeRef ParseType() {
    TypeRef t;
    t.loc = tok_.loc;
    if (Peek(Tok::bracket_l)) {
      DepthGuard guard(*this, tok_.loc);
      Advance();
      t.kind = TypeRef::Kind::list;
      t.of = std::make_unique<TypeRef>(ParseType());
      Expect(Tok::bracket_r);
    } else {
      t.kind = TypeRef::Kind::named;
      t.name = ParseName();
    }
    if (Peek(Tok::bang)) {
      Advance();
      TypeRef nn;
      nn.loc = t.loc;
      nn.kind = TypeRef::Kind::non_null;
      nn.of = std::make_unique<TypeRef>(std::move(t));
      return nn;
    }
    return t;
  }

  // ---- type system ----
  std::string ParseDescription() {
    if (Peek(Tok::string) || Peek(Tok::block_string)) return Advance().value;
    return {};
  }

  std::vector<std::string_view> ParseImplements() {
    std::vector<std::string_view> out;
    if (!PeekName("implements")) return out;
    Advance();
    Skip(Tok::amp);
    do {
      out.push_back(ParseName());
    } while (Skip(Tok::amp));
    return out;
  }

  std::vector<InputValueDefinition> ParseArgumentDefs(Tok open, Tok close) {
    std::vector<InputValueDefinition> out;
    if (!Skip(open)) return out;
    do {
      InputValueDefinition d;
      d.description = ParseDescription();
      d.loc = tok_.loc;
      d.name = ParseName();
      Expect(Tok::colon);
      d.type = ParseType();
      if (Skip(Tok::equals)) d.default_value = ParseValue(true);
      d.directives = ParseDirectives(true);
      out.push_back(std::move(d));
    } while (!Skip(close));
    return out;
  }

  std::vector<FieldDefinition> ParseFieldDefs() {
    std::vector<FieldDefinition> out;
    if (!Skip(Tok::brace_l)) return out;
    do {
      FieldDefinition f;
      f.description = ParseDescription();
      f.loc = tok_.loc;
      f.name = ParseName();
      f.arguments = ParseArgumentDefs(Tok::paren_l, Tok::paren_r);
      Expect(Tok::colon);
      f.type = ParseType();
      f.directives = ParseDirectives(true);
      out.push_back(std::move(f));
    } while (!Skip(Tok::brace_r));
    return out;
  }

  std::vector<RootOperationType> ParseRootOperationTypes() {
    std::vector<RootOperationType> out;
    Expect(Tok::brace_l);
    do {
      RootOperationType r;
      r.loc = tok_.loc;
      const std::string_view op = ParseName();
      if (op == "query") r.operation = OperationType::query;
      else if (op == "mutation") r.operation = OperationType::mutation;
      else if (op == "subscription") r.operation = OperationType::subscription;
      else throw SyntaxError{"Syntax Error: Unexpected Name \"" + std::string(op) + "\".", r.loc};
      Expect(Tok::colon);
      r.type = ParseName();
      out.push_back(r);
    } while (!Skip(Tok::brace_r));
    return out;
  }

  void ParseTypeSystemDefinition(Document& doc, std::string description, Location start, bool extension) {
    const std::string_view kw = ParseName();
    if (kw == "schema") {
      SchemaDefinition s;
      s.extension = extension;
      s.description = std::move(description);
      s.loc = start;
      s.directives = ParseDirectives(true);
      if (!extension || Peek(Tok::brace_l)) s.operation_types = ParseRootOperationTypes();
      doc.schemas.push_back(std::move(s));
      return;
    }
    if (kw == "directive") {
      if (extension) throw SyntaxError{"Syntax Error: Unexpected Name \"directive\".", start};
      DirectiveDefinition d;
      d.description = std::move(description);
      d.loc = start;
      Expect(Tok::at);
      d.name = ParseName();
      d.arguments = ParseArgumentDefs(Tok::paren_l, Tok::paren_r);
      if (PeekName("repeatable")) {
        Advance();
        d.repeatable = true;
      }
      ExpectKeyword("on");
      Skip(Tok::pipe);
      do {
        d.locations.push_back(ParseName());
      } while (Skip(Tok::pipe));
      doc.directives.push_back(std::move(d));
      return;
    }
    TypeDefinition t;
    t.extension = extension;
    t.description = std::move(description);
    t.loc = start;
    t.name = ParseName();
    if (kw == "scalar") {
      t.kind = TypeDefinition::Kind::scalar;
      t.directives = ParseDirectives(true);
    } else if (kw == "type" || kw == "interface") {
      t.kind = kw == "type" ? TypeDefinition::Kind::object : TypeDefinition::Kind::interface;
      t.interfaces = ParseImplements();
      t.directives = ParseDirectives(true);
      t.fields = ParseFieldDefs();
    } else if (kw == "union") {
      t.kind = TypeDefinition::Kind::union_;
      t.directives = ParseDirectives(true);
      if (Skip(Tok::equals)) {
        Skip(Tok::pipe);
        do {
          t.members.push_back(ParseName());
        } while (Skip(Tok::pipe));
      }
    } else if (kw == "enum") {
      t.kind = TypeDefinition::Kind::enum_;
      t.directives = ParseDirectives(true);
      if (Skip(Tok::brace_l)) {
        do {
          EnumValueDefinition v;
          v.description = ParseDescription();
          v.loc = tok_.loc;
          v.name = ParseName();
          if (v.name == "true" || v.name == "false" || v.name == "null")
            throw SyntaxError{"Syntax Error: Name \"" + std::string(v.name) + "\" is reserved and cannot be used for an enum value.",
                              v.loc};
          v.directives = ParseDirectives(true);
          t.values.push_back(std::move(v));
        } while (!Skip(Tok::brace_r));
      }
    } else if (kw == "input") {
      t.kind = TypeDefinition::Kind::input_object;
      t.directives = ParseDirectives(true);
      t.input_fields = ParseArgumentDefs(Tok::brace_l, Tok::brace_r);
    } else {
      throw SyntaxError{"Syntax Error: Unexpected Name \"" + std::string(kw) + "\".", start};
    }
    doc.types.push_back(std::move(t));
  }

  void ParseExtension(Document& doc) {
    Location start = tok_.loc;
    ExpectKeyword("extend");
    if (!Peek(Tok::name)) Unexpected();
    ParseTypeSystemDefinition(doc, {}, start, true);
  }

  Lexer lex_;
  const ParseOptions& options_;
  Token tok_;
  std::size_t depth_ = 0;
};

}  // namespace

std::string block_string_value(std::string_view raw) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\n' || raw[i] == '\r') {
      lines.push_back(raw.substr(start, i - start));
      if (raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  lines.push_back(raw.substr(start));
  auto indent_of = [](std::string_view l) {
    std::size_t n = 0;
    while (n < l.size() && (l[n] == ' ' || l[n] == '\t')) ++n;
    return n;
  };
  std::size_t common = std::string_view::npos;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::size_t ind = indent_of(lines[i]);
    if (ind < lines[i].size() && ind < common) common = ind;
  }
  if (common != std::string_view::npos)
    for (std::size_t i = 1; i < lines.size(); ++i) lines[i] = lines[i].substr(std::min(common, lines[i].size()));
  auto blank = [&](std::string_view l) { return indent_of(l) == l.size(); };
  std::size_t first = 0, last = lines.size();
  while (first < last && blank(lines[first])) ++first;
  while (last > first && blank(lines[last - 1])) --last;
  std::string out;
  for (std::size_t i = first; i < last; ++i) {
    if (i > first) out.push_back('\n');
    out.append(lines[i]);
  }
  return out;
}

ParseResult parse(std::string source, const ParseOptions& options) {
  ParseResult result;
  auto doc = std::make_unique<Document>();
  doc->source = std::make_shared<const std::string>(std::move(source));
  try {
    Parser parser(*doc->source, options);
    parser.ParseDocument(*doc);
    result.document = std::move(doc);
  } catch (const SyntaxError& e) {
    result.error = GraphQLError{e.message, {e.loc}, {}, graphql_codes::kParseFailed};
  }
  return result;
}

}  // namespace cutoff::graphql
