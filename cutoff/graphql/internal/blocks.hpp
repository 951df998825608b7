// Blocks<T>: objects that keep their address until the whole collection goes, allocated a
// block at a time (for the executor's tasks and paths and the response text's parts, where a
// std::deque would allocate every few objects).
//
//   Blocks<Segment> segments;
//   Segment& s = segments.emplace(Segment{0, 4, nullptr, nullptr});
#ifndef CUTOFF_GRAPHQL_INTERNAL_BLOCKS_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_BLOCKS_HPP_

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace cutoff::graphql::internal {

template <typename T, std::size_t kPerBlock = 128>
class Blocks {
 public:
  Blocks() = default;
  Blocks(const Blocks&) = delete;
  Blocks& operator=(const Blocks&) = delete;
  ~Blocks() {
    for (std::size_t i = 0; i < size_; ++i) std::destroy_at(At(i));
  }

  template <typename... Args>
  T& emplace(Args&&... args) {
    if (size_ % kPerBlock == 0) blocks_.push_back(std::make_unique<Storage[]>(kPerBlock));
    T* p = ::new (static_cast<void*>(&blocks_.back()[size_ % kPerBlock])) T(std::forward<Args>(args)...);
    ++size_;
    return *p;
  }

  std::size_t size() const noexcept { return size_; }

 private:
  struct Storage {
    alignas(T) unsigned char bytes[sizeof(T)];
  };
  T* At(std::size_t i) noexcept {
    return std::launder(reinterpret_cast<T*>(blocks_[i / kPerBlock][i % kPerBlock].bytes));
  }

  std::vector<std::unique_ptr<Storage[]>> blocks_;
  std::size_t size_ = 0;
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_BLOCKS_HPP_
