// Blocks<T>: objects that keep their address until the whole collection goes, allocated a
// block at a time (for the executor's tasks and paths and the response text's parts, where a
// std::deque would allocate every few objects). Freed blocks wait on their thread for the
// next collection of the same type, so executions in a row reuse their memory.
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
    // Blocks go back to this thread's spares (up to a bound), so that the next execution
    // on the thread reuses them instead of growing the heap again (and faulting its pages in).
    if (std::vector<std::unique_ptr<Storage[]>>* spare = Spare()) {
      while (!blocks_.empty() && spare->size() < kMaxSpare) {
        spare->push_back(std::move(blocks_.back()));
        blocks_.pop_back();
      }
    }
  }

  template <typename... Args>
  T& emplace(Args&&... args) {
    if (size_ % kPerBlock == 0) AddBlock();
    T* p = ::new (static_cast<void*>(&blocks_.back()[size_ % kPerBlock])) T(std::forward<Args>(args)...);
    ++size_;
    return *p;
  }

  std::size_t size() const noexcept { return size_; }

 private:
  struct Storage {
    alignas(T) unsigned char bytes[sizeof(T)];
  };
  // At most this many blocks (of all collections of this type) wait on a thread for reuse.
  static constexpr std::size_t kMaxSpare = 16;

  // This thread's spares; null once they are gone (a collection destroyed while the thread
  // or the program ends, after its thread_local objects).
  static std::vector<std::unique_ptr<Storage[]>>* Spare() {
    thread_local bool gone = false;
    if (gone) return nullptr;
    struct Holder {
      bool* gone;
      std::vector<std::unique_ptr<Storage[]>> blocks;
      ~Holder() { *gone = true; }
    };
    thread_local Holder holder{&gone, {}};
    return &holder.blocks;
  }
  void AddBlock() {
    std::vector<std::unique_ptr<Storage[]>>* spare = Spare();
    if (spare && !spare->empty()) {
      blocks_.push_back(std::move(spare->back()));
      spare->pop_back();
    } else {
      blocks_.push_back(std::unique_ptr<Storage[]>(new Storage[kPerBlock]));  // not zeroed
    }
  }
  T* At(std::size_t i) noexcept {
    return std::launder(reinterpret_cast<T*>(blocks_[i / kPerBlock][i % kPerBlock].bytes));
  }

  std::vector<std::unique_ptr<Storage[]>> blocks_;
  std::size_t size_ = 0;
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_BLOCKS_HPP_
