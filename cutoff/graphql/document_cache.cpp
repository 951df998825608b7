#include "cutoff/graphql/document_cache.hpp"

#include <utility>

namespace cutoff::graphql {

namespace {

// Recursion is bounded by the parser's depth limit (selection sets, values, types).
std::size_t ValueBytes(const Value& v) {
  std::size_t n = sizeof(Value) + v.string.capacity();
  for (const Value& item : v.list) n += ValueBytes(item);
  for (const ObjectField& f : v.fields) n += sizeof(ObjectField) + ValueBytes(f.value) - sizeof(Value);
  return n;
}

std::size_t DirectivesBytes(const std::vector<Directive>& ds) {
  std::size_t n = 0;
  for (const Directive& d : ds) {
    n += sizeof(Directive);
    for (const Argument& a : d.arguments) n += sizeof(Argument) + ValueBytes(a.value) - sizeof(Value);
  }
  return n;
}

std::size_t SetBytes(const SelectionSet& set) {
  std::size_t n = 0;
  for (const Selection& s : set) {
    n += sizeof(Selection) + DirectivesBytes(s.directives) + SetBytes(s.selection_set);
    for (const Argument& a : s.arguments) n += sizeof(Argument) + ValueBytes(a.value) - sizeof(Value);
  }
  return n;
}

}  // namespace

std::size_t estimated_bytes(const Document& document) {
  std::size_t n = sizeof(Document) + (document.source ? document.source->capacity() : 0);
  for (const OperationDefinition& op : document.operations) {
    n += sizeof(OperationDefinition) + DirectivesBytes(op.directives) + SetBytes(op.selection_set);
    for (const VariableDefinition& v : op.variables)
      n += sizeof(VariableDefinition) + (v.default_value ? ValueBytes(*v.default_value) : 0) +
           DirectivesBytes(v.directives) + 2 * sizeof(TypeRef);
  }
  for (const FragmentDefinition& f : document.fragments)
    n += sizeof(FragmentDefinition) + DirectivesBytes(f.directives) + SetBytes(f.selection_set);
  // Type-system definitions make a document invalid for execution, so it is never cached;
  // count them roughly all the same.
  n += document.types.size() * sizeof(TypeDefinition) + document.directives.size() * sizeof(DirectiveDefinition);
  return n;
}

std::shared_ptr<const PreparedDocument> prepare_document(const Schema& schema, std::string query,
                                                         const ParseOptions& parse_options,
                                                         const ValidationOptions& validation_options) {
  auto prepared = std::make_shared<PreparedDocument>();
  ParseResult parsed = parse(std::move(query), parse_options);
  if (!parsed.ok()) {
    prepared->errors.push_back(std::move(*parsed.error));
    return prepared;
  }
  prepared->errors = validate(schema, *parsed.document, validation_options);
  if (prepared->errors.empty()) prepared->document = std::move(parsed.document);
  return prepared;
}

std::shared_ptr<const PreparedDocument> DocumentCache::prepare(const Schema& schema, const std::string& query,
                                                               const ParseOptions& parse_options,
                                                               const ValidationOptions& validation_options) {
  if (max_bytes_ > 0)
    if (auto hit = Find(query)) return hit;
  auto prepared = prepare_document(schema, query, parse_options, validation_options);
  if (max_bytes_ > 0 && prepared->ok()) {
    // The key is a second copy of the text.
    const std::size_t bytes = estimated_bytes(*prepared->document) + query.capacity() + sizeof(Entry) + 64;
    if (bytes <= max_bytes_ / 16) Insert(query, prepared, bytes);
  }
  return prepared;
}

std::shared_ptr<const PreparedDocument> DocumentCache::Find(const std::string& query) {
  std::lock_guard lock(mu_);
  auto it = index_.find(query);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->document;
}

void DocumentCache::Insert(const std::string& query, std::shared_ptr<const PreparedDocument> document,
                           std::size_t bytes) {
  std::list<Entry> evicted;  // released outside the lock
  {
    std::lock_guard lock(mu_);
    if (index_.contains(query)) return;  // another request prepared it meanwhile
    while (!lru_.empty() && bytes_ + bytes > max_bytes_) {
      index_.erase(lru_.back().query);
      bytes_ -= lru_.back().bytes;
      evicted.splice(evicted.begin(), lru_, std::prev(lru_.end()));
    }
    lru_.push_front(Entry{query, std::move(document), bytes});
    index_.emplace(lru_.front().query, lru_.begin());
    bytes_ += bytes;
  }
}

std::size_t DocumentCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

std::size_t DocumentCache::entries() const {
  std::lock_guard lock(mu_);
  return lru_.size();
}

}  // namespace cutoff::graphql
