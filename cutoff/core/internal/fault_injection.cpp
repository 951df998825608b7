#include "cutoff/core/internal/fault_injection.hpp"

#include <mutex>
#include <unordered_map>

namespace cutoff::internal::fault_detail {

std::atomic<int> armed_points{0};

namespace {

struct Registry {
  std::mutex mu;
  std::unordered_map<const void*, std::shared_ptr<const void>> actions;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;  // never destroyed: points may be reached during exit
  return *registry;
}

}  // namespace

std::shared_ptr<const void> Find(const void* point) {
  Registry& r = TheRegistry();
  std::lock_guard lock(r.mu);
  auto it = r.actions.find(point);
  return it == r.actions.end() ? nullptr : it->second;
}

void Arm(const void* point, std::shared_ptr<const void> action) {
  Registry& r = TheRegistry();
  std::lock_guard lock(r.mu);
  r.actions[point] = std::move(action);
  armed_points.store(static_cast<int>(r.actions.size()), std::memory_order_relaxed);
}

void Disarm(const void* point) {
  Registry& r = TheRegistry();
  std::lock_guard lock(r.mu);
  r.actions.erase(point);
  armed_points.store(static_cast<int>(r.actions.size()), std::memory_order_relaxed);
}

}  // namespace cutoff::internal::fault_detail
