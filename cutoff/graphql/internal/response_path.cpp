#include "cutoff/graphql/internal/response_path.hpp"

#include <variant>

namespace cutoff::graphql::internal {

std::vector<PathSegment> path_of(const PathNode* n) {
  std::vector<PathSegment> out;
  for (; n; n = n->parent) {
    if (n->index >= 0) out.emplace_back(n->index);
    else out.emplace_back(std::string(n->key));
  }
  return {out.rbegin(), out.rend()};
}

std::string path_text(const std::vector<PathSegment>& path) {
  std::string out;
  for (const auto& seg : path) {
    if (!out.empty()) out.push_back('.');
    if (auto* k = std::get_if<std::string>(&seg)) out += *k;
    else out += std::to_string(std::get<std::int64_t>(seg));
  }
  return out;
}

std::string path_text(const PathNode* n) { return path_text(path_of(n)); }

const PathNode* PersistentPaths::persist(const PathNode* p) {
  if (!p) return nullptr;
  if (p->saved) return p->saved;
  PathNode& copy = nodes_.emplace(PathNode{persist(p->parent), p->key, p->index});
  copy.saved = &copy;
  p->saved = &copy;
  return &copy;
}

}  // namespace cutoff::graphql::internal
