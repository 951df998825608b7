// Parsed and validated documents, shared by the requests that send the same query text, in a
// cache bounded in bytes.
//
//   DocumentCache cache(16 * 1024 * 1024);
//   std::shared_ptr<const PreparedDocument> doc = cache.prepare(schema, query_text, parse_opts, validation_opts);
//   if (!doc->ok()) return respond_errors(doc->errors);
//   Request request{.document = doc->document.get()};  // named: see docs/sql.md on g++ 12
//   co_await execute(schema, std::move(request), ctx);
//
// Only valid documents are kept: a client sending distinct invalid documents costs the
// parser's time, never memory that stays. A document's size is estimated from its syntax
// tree (nodes and strings), and the least recently used documents leave first; one document
// larger than a sixteenth of the cache is prepared but not kept. Thread-safe.
#ifndef CUTOFF_GRAPHQL_DOCUMENT_CACHE_HPP_
#define CUTOFF_GRAPHQL_DOCUMENT_CACHE_HPP_

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/error.hpp"
#include "cutoff/graphql/parser.hpp"
#include "cutoff/graphql/schema.hpp"
#include "cutoff/graphql/validation.hpp"

namespace cutoff::graphql {

struct PreparedDocument {
  std::unique_ptr<Document> document;  // null when there are errors
  std::vector<GraphQLError> errors;    // the parse error, or the validation errors
  bool ok() const noexcept { return document != nullptr && errors.empty(); }
};

// Parses and validates `query`.
std::shared_ptr<const PreparedDocument> prepare_document(const Schema& schema, std::string query,
                                                         const ParseOptions& parse_options,
                                                         const ValidationOptions& validation_options);

// About how many bytes `document` holds: its source text, syntax nodes and decoded strings.
std::size_t estimated_bytes(const Document& document);

class DocumentCache {
 public:
  // 0 bytes: nothing is cached.
  explicit DocumentCache(std::size_t max_bytes) : max_bytes_(max_bytes) {}
  DocumentCache(const DocumentCache&) = delete;
  DocumentCache& operator=(const DocumentCache&) = delete;

  // The prepared `query`: the cached one, or one prepared now (kept when valid and small
  // enough).
  std::shared_ptr<const PreparedDocument> prepare(const Schema& schema, const std::string& query,
                                                  const ParseOptions& parse_options,
                                                  const ValidationOptions& validation_options);

  std::size_t bytes() const;
  std::size_t entries() const;

 private:
  struct Entry {
    std::string query;
    std::shared_ptr<const PreparedDocument> document;
    std::size_t bytes;
  };
  std::shared_ptr<const PreparedDocument> Find(const std::string& query);
  void Insert(const std::string& query, std::shared_ptr<const PreparedDocument> document, std::size_t bytes);

  const std::size_t max_bytes_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;  // keys view Entry::query
  std::size_t bytes_ = 0;
};

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_DOCUMENT_CACHE_HPP_
