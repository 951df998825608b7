// Response paths as the executor builds them: a chain of nodes from a field or list item up to
// the root, living on the stack of the walk that writes the response, so that the hot path
// builds paths without allocating. Only errors and the recorder read them (path_of,
// path_text); a field that completes later keeps a copy of its path (PersistentPaths).
//
//   const PathNode bins{nullptr, "bins"};
//   const PathNode third{&bins, {}, 3};
//   path_text(&third);  // "bins.3"
#ifndef CUTOFF_GRAPHQL_INTERNAL_RESPONSE_PATH_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_RESPONSE_PATH_HPP_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/graphql/error.hpp"
#include "cutoff/graphql/internal/blocks.hpp"

namespace cutoff::graphql::internal {

struct PathNode {
  const PathNode* parent = nullptr;
  std::string_view key;                     // an object member's response key (unused for list items)
  std::int64_t index = -1;                  // a list item's position; -1 for object members
  mutable const PathNode* saved = nullptr;  // the persistent copy (itself once persistent)
};

// The path from the root to `n` (null: the root itself).
std::vector<PathSegment> path_of(const PathNode* n);

// "warehouse.bins.3.stock"
std::string path_text(const std::vector<PathSegment>& path);
std::string path_text(const PathNode* n);

// Copies of paths that outlive the walk that built them. Siblings share the copy of their
// common prefix (PathNode::saved).
class PersistentPaths {
 public:
  const PathNode* persist(const PathNode* p);

 private:
  Blocks<PathNode> nodes_;
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_RESPONSE_PATH_HPP_
