// Fault injection: the one way tests make a driver fail, stall or stop at a chosen point.
//
// A driver declares the points where a fault is worth injecting, each with the signature of
// what runs there, next to the code that reaches it; a test arms a point for as long as a
// ScopedFault lives. Nothing of it is in a public options struct, and nothing is installed.
//
//   // the driver's internal header (sql/sqlite/internal/fault_points.hpp):
//   inline constexpr FaultPoint<void()> kSqliteCommit{"sqlite.commit"};
//   // the driver, on its worker thread inside COMMIT:
//   if (auto fault = internal::armed_fault(internal::kSqliteCommit)) (*fault)();
//   // a test:
//   internal::ScopedFault slow(internal::kSqliteCommit, [] { std::this_thread::sleep_for(50ms); });
//
// While nothing is armed a point costs one relaxed atomic load. Points are process-wide (a
// test arms them for every driver in its process); arming is thread-safe, and an armed action
// may run on any thread the point is reached on.
#ifndef CUTOFF_CORE_INTERNAL_FAULT_INJECTION_HPP_
#define CUTOFF_CORE_INTERNAL_FAULT_INJECTION_HPP_

#include <atomic>
#include <functional>
#include <memory>
#include <utility>

namespace cutoff::internal {

// A named point with the signature of the action armed on it. Declare points `inline
// constexpr` in the driver's internal header; their addresses identify them.
template <typename Signature>
struct FaultPoint {
  const char* name;
};

namespace fault_detail {
extern std::atomic<int> armed_points;
std::shared_ptr<const void> Find(const void* point);
void Arm(const void* point, std::shared_ptr<const void> action);
void Disarm(const void* point);
}  // namespace fault_detail

// The action armed on `point`, or null (the common case, read without a lock).
template <typename Signature>
std::shared_ptr<const std::function<Signature>> armed_fault(const FaultPoint<Signature>& point) {
  if (fault_detail::armed_points.load(std::memory_order_relaxed) == 0) [[likely]]
    return nullptr;
  return std::static_pointer_cast<const std::function<Signature>>(fault_detail::Find(&point));
}

// Arms `point` with `action` until destroyed. One arming per point at a time: a second
// ScopedFault on the same point replaces the first, and the first's destruction disarms it.
class ScopedFault {
 public:
  template <typename Signature, typename Action>
  ScopedFault(const FaultPoint<Signature>& point, Action action) : point_(&point) {
    fault_detail::Arm(point_, std::make_shared<const std::function<Signature>>(std::move(action)));
  }
  ~ScopedFault() { fault_detail::Disarm(point_); }
  ScopedFault(const ScopedFault&) = delete;
  ScopedFault& operator=(const ScopedFault&) = delete;

 private:
  const void* point_;
};

}  // namespace cutoff::internal

#endif  // CUTOFF_CORE_INTERNAL_FAULT_INJECTION_HPP_
