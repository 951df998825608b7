#include "cutoff/graphql/http/graphiql_route.hpp"

#include <zlib.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "cutoff/core/html_escape.hpp"
#include "cutoff/graphql/graphiql_page.hpp"

namespace cutoff::graphql {
namespace {

namespace asio = boost::asio;

std::string Gzip(std::string_view in) {
  z_stream z{};
  // 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("graphiql: zlib could not start");
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("graphiql: zlib could not compress the page");
  return out;
}

std::string Tag(std::string_view bytes, std::string_view suffix) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a: a content hash, not a secret
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return "\"" + std::string(hex) + std::string(suffix) + "\"";
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// Whether an Accept-Encoding value admits gzip: named (or `*` with gzip not named) with a q
// other than 0.
bool AcceptsGzip(std::string_view header) {
  bool star = false, named = false, gzip = false;
  while (!header.empty()) {
    const std::size_t comma = header.find(',');
    std::string_view item = Trim(header.substr(0, comma));
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    std::string_view coding = Trim(item.substr(0, item.find(';')));
    bool zero = false;
    for (std::size_t at = item.find(';'); at != std::string_view::npos; at = item.find(';', at + 1)) {
      std::string_view param = Trim(item.substr(at + 1, item.find(';', at + 1) - at - 1));
      if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
        std::string_view q = Trim(param.substr(2));
        zero = !q.empty() && q.find_first_not_of("0.") == std::string_view::npos;
      }
    }
    if (IEquals(coding, "gzip") || IEquals(coding, "x-gzip")) {
      named = true;
      gzip = gzip || !zero;
    } else if (coding == "*") {
      star = !zero;
    }
  }
  return gzip || (!named && star);
}

// Whether If-None-Match names `etag` (weak comparison, as RFC 9110 asks for this header).
bool Matches(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    const std::size_t comma = header.find(',');
    std::string_view item = Trim(header.substr(0, comma));
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    if (item == "*") return true;
    if (item.substr(0, 2) == "W/") item.remove_prefix(2);
    if (item == etag) return true;
  }
  return false;
}

struct PreparedPage {
  std::string plain, gzip, plain_tag, gzip_tag;
};

}  // namespace

std::string example_operation(const Schema& schema) {
  std::string fields;
  int count = 0;
  if (const Type* query = schema.query_type()) {
    for (const Field& f : query->fields) {
      if (count == 8 || f.name.starts_with("__") || !f.type || !f.type->named().is_leaf()) continue;
      bool required = false;
      for (const InputValue& a : f.args) required = required || (a.type && a.type->is_non_null() && !a.default_value);
      if (required) continue;
      fields += "  " + f.name + "\n";
      ++count;
    }
  }
  if (fields.empty()) fields = "  __typename\n";
  return "{\n" + fields + "}";
}

std::string graphiql_page_for(const GraphiqlOptions& options) {
  std::string page(graphiql_page());
  static constexpr std::string_view kEndpoint = "data-endpoint=\"/graphql\"";
  const std::size_t at = page.find(kEndpoint);
  if (at == std::string::npos) throw std::logic_error("graphiql: the page has no data-endpoint attribute");
  std::string attributes = "data-endpoint=\"" + html_escaped(options.endpoint) + "\"";
  if (!options.example.empty()) attributes += " data-example=\"" + html_escaped(options.example) + "\"";
  page.replace(at, kEndpoint.size(), attributes);
  return page;
}

void mount_graphiql(http::Server& server, const std::string& path, const GraphiqlOptions& options) {
  auto page = std::make_shared<PreparedPage>();
  page->plain = graphiql_page_for(options);
  page->gzip = Gzip(page->plain);
  page->plain_tag = Tag(page->plain, "");
  page->gzip_tag = Tag(page->plain, "-gzip");  // another representation, another tag
  server.route(
      "GET", path,
      [page](const http::Request& req, const Context&) -> asio::awaitable<http::Response> {
        const bool gzip = AcceptsGzip(req.headers.get("Accept-Encoding").value_or(""));
        const std::string& tag = gzip ? page->gzip_tag : page->plain_tag;
        http::Response r;
        r.headers.set("Vary", "Accept-Encoding");
        r.headers.set("ETag", tag);
        r.headers.set("Cache-Control", "no-cache");
        if (auto since = req.headers.get("If-None-Match"); since && Matches(*since, tag)) {
          r.status = 304;
          co_return r;
        }
        r.headers.set("Content-Type", "text/html; charset=utf-8");
        if (gzip) r.headers.set("Content-Encoding", "gzip");
        r.body = gzip ? page->gzip : page->plain;
        co_return r;
      },
      {.name = "graphiql", .bind_deadline = false});
}

}  // namespace cutoff::graphql
