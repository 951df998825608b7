// The GraphQL lexer (spec 2.1, "Source Text"): the tokens of a document, one at a time, as the
// parser asks for them. White space, commas, comments and byte order marks are skipped;
// strings are decoded (block strings to their BlockStringValue()); every token knows its
// line and column (columns count UTF-16 units, as graphql-js does).
//
//   internal::Lexer lex(source, /*max_tokens=*/250'000);
//   for (internal::Token t = lex.next(); t.kind != internal::Tok::eof; t = lex.next())
//     use(t.kind, lex.text(t), t.loc);
//
// Bad input throws SyntaxError with graphql-js's message ("Syntax Error: Unterminated
// string."); so does a document of more than `max_tokens` tokens, which bounds the work.
#ifndef CUTOFF_GRAPHQL_INTERNAL_LEXER_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_LEXER_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cutoff/graphql/ast.hpp"

namespace cutoff::graphql::internal {

enum class Tok : std::uint8_t {
  eof, bang, dollar, amp, paren_l, paren_r, spread, colon, equals, at, bracket_l, bracket_r,
  brace_l, pipe, brace_r, name, int_, float_, string, block_string,
};

// A token kind as messages name it: "\"{\"", "Name", "<EOF>".
std::string_view token_name(Tok t);

struct Token {
  Tok kind = Tok::eof;
  std::size_t start = 0, end = 0;  // its bytes in the source
  Location loc;
  std::string value;  // decoded strings
};

// A syntax error, thrown by the lexer and by the parser; parse() reports it as its error.
struct SyntaxError {
  std::string message;
  Location loc;
};

class Lexer {
 public:
  // `src` must outlive the lexer.
  Lexer(std::string_view src, std::size_t max_tokens);

  // The next token; eof at the end.
  Token next();

  // The source text of `t`.
  std::string_view text(const Token& t) const { return src_.substr(t.start, t.end - t.start); }

 private:
  Location LocAt(std::size_t pos);
  void SkipIgnored();
  Token ReadNumber(Token t);
  std::uint32_t ReadUnicodeEscape(std::size_t& p);
  Token ReadString(Token t);
  Token ReadBlockString(Token t);

  std::string_view src_;
  std::size_t pos_ = 0;
  std::size_t scan_ = 0;
  std::size_t line_start_ = 0;
  std::uint32_t line_ = 1;
  std::uint32_t column_ = 1;  // at scan_
  std::size_t count_ = 0;
  std::size_t max_tokens_;
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_LEXER_HPP_
