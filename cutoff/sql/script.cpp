#include "cutoff/sql/script.hpp"

#include <cctype>

namespace cutoff::sql {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool IsWordStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80); }
bool IsWordChar(char c) { return IsWordStart(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '$'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<std::string> split_statements(std::string_view s, Dialect dialect) {
  const bool pg = dialect == Dialect::postgresql;
  const std::size_t n = s.size();
  std::vector<std::string> out;
  std::size_t start = 0, i = 0;
  bool has_code = false;           // anything but whitespace and comments since `start`
  bool body = false;               // a body that ends with END: `;` inside it does not end the statement
  std::vector<std::string> words;  // the statement's first words, upper-cased
  std::string last;                // the last token, upper-cased when a word
  auto at = [&](std::size_t k) { return k < n ? s[k] : '\0'; };
  auto end_statement = [&](std::size_t end) {
    if (has_code) out.emplace_back(Trim(s.substr(start, end - start)));
    start = end + 1;
    has_code = false;
    body = false;
    words.clear();
    last.clear();
  };
  while (i < n) {
    const char c = s[i];
    if (IsSpace(c)) {
      ++i;
    } else if (c == '-' && at(i + 1) == '-') {
      while (i < n && s[i] != '\n') ++i;
    } else if (c == '/' && at(i + 1) == '*') {
      int depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (s[i] == '*' && at(i + 1) == '/') {
          --depth;
          i += 2;
        } else if (pg && s[i] == '/' && at(i + 1) == '*') {
          ++depth;
          i += 2;
        } else {
          ++i;
        }
      }
    } else if (c == ';') {
      if (body && last != "END") {
        last = ";";
        ++i;
      } else {
        end_statement(i);
        ++i;
      }
    } else {
      has_code = true;
      if (c == '\'') {
        const bool backslashes = pg && last == "E" && i > 0 && (s[i - 1] == 'E' || s[i - 1] == 'e');
        for (++i; i < n; ++i) {
          if (backslashes && s[i] == '\\') {
            ++i;
          } else if (s[i] == '\'') {
            if (at(i + 1) != '\'') break;
            ++i;
          }
        }
        ++i;
        last = "'";
      } else if (c == '"' || (!pg && c == '`')) {
        for (++i; i < n; ++i) {
          if (s[i] == c) {
            if (at(i + 1) != c) break;
            ++i;
          }
        }
        ++i;
        last = std::string(1, c);
      } else if (!pg && c == '[') {
        while (i < n && s[i] != ']') ++i;
        ++i;
        last = "[";
      } else if (pg && c == '$' && (at(i + 1) == '$' || IsWordStart(at(i + 1)))) {
        std::size_t j = i + 1;
        while (j < n && s[j] != '$' && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || (s[j] & 0x80)))
          ++j;
        if (at(j) == '$') {
          const std::string_view tag = s.substr(i, j + 1 - i);
          const std::size_t close = s.find(tag, j + 1);
          i = close == std::string_view::npos ? n : close + tag.size();
        } else {
          i = j;
        }
        last = "$";
      } else if (IsWordStart(c)) {
        const std::size_t from = i;
        while (i < n && IsWordChar(s[i])) ++i;
        std::string word(s.substr(from, i - from));
        for (char& ch : word) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        if (words.size() < 4) words.push_back(word);
        // CREATE [TEMP|TEMPORARY] TRIGGER ... BEGIN ... END in SQLite; BEGIN ATOMIC ... END in PostgreSQL.
        if (!pg && word == "TRIGGER" && words.size() <= 3 && words[0] == "CREATE") body = true;
        if (pg && word == "ATOMIC" && last == "BEGIN") body = true;
        last = std::move(word);
      } else {
        last = std::string(1, c);
        ++i;
      }
    }
  }
  end_statement(n);
  return out;
}

}  // namespace cutoff::sql
