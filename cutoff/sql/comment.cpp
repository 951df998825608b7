#include "cutoff/sql/comment.hpp"

namespace cutoff::sql {
namespace {

// encodeURIComponent: keeps A-Z a-z 0-9 - _ . ! ~ * ' ( ), then sqlcommenter escapes the
// quote. We also encode `'`, `*`, `(` and `)` so that no value can close the comment or
// the quoted string.
void AppendEncoded(std::string& out, std::string_view v) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : v) {
    const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || c == '.' || c == '!' || c == '~';
    if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
}

void AppendPair(std::string& out, std::string_view key, std::string_view value) {
  if (value.empty()) return;
  if (out.size() > 2) out.push_back(',');
  out += key;
  out += "='";
  AppendEncoded(out, value);
  out.push_back('\'');
}

}  // namespace

std::string sql_comment(const RequestValues& values) {
  std::string out = "/*";
  // Sorted by key, as sqlcommenter asks.
  AppendPair(out, "operation", values.operation);
  AppendPair(out, "request_id", values.request_id);
  AppendPair(out, "traceparent", values.trace.traceparent);
  AppendPair(out, "tracestate", values.trace.tracestate);
  if (out.size() == 2) return {};
  out += "*/";
  return out;
}

std::string with_comment(std::string_view sql, const RequestValues& values) {
  std::string comment = sql_comment(values);
  if (comment.empty()) return std::string(sql);
  std::size_t end = sql.size();
  while (end > 0 && (sql[end - 1] == ' ' || sql[end - 1] == '\n' || sql[end - 1] == '\t' ||
                     sql[end - 1] == '\r'))
    --end;
  const bool semicolon = end > 0 && sql[end - 1] == ';';
  if (semicolon) --end;
  std::string out;
  out.reserve(end + comment.size() + 2);
  out.append(sql.substr(0, end));
  out.push_back(' ');
  out += comment;
  if (semicolon) out.push_back(';');
  return out;
}

}  // namespace cutoff::sql
