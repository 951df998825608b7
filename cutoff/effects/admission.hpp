// AdmissionLimit: at most N effect regions in flight; the next one is refused at once.
//
// An effect region cannot be stopped once it commits, so letting an unbounded number of them
// start under overload only moves the failure past the commit point. The limit refuses before
// anything is written, with `overloaded` (retryable after a backoff).
//
//   cutoff::effects::AdmissionLimit limit(32);
//   auto ticket = limit.enter("orders.create");  // throws overloaded when 32 are in flight
//   ...                                          // the slot is freed when `ticket` dies
//
// Thread-safe; one relaxed compare-exchange loop to enter, one decrement to leave.
#ifndef CUTOFF_EFFECTS_ADMISSION_HPP_
#define CUTOFF_EFFECTS_ADMISSION_HPP_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cutoff::effects {

class AdmissionLimit {
 public:
  class Ticket {
   public:
    Ticket() noexcept = default;
    Ticket(Ticket&& other) noexcept : limit_(other.limit_) { other.limit_ = nullptr; }
    Ticket& operator=(Ticket&& other) noexcept {
      if (this != &other) {
        release();
        limit_ = other.limit_;
        other.limit_ = nullptr;
      }
      return *this;
    }
    ~Ticket() { release(); }
    explicit operator bool() const noexcept { return limit_ != nullptr; }

   private:
    friend class AdmissionLimit;
    explicit Ticket(AdmissionLimit* limit) noexcept : limit_(limit) {}
    void release() noexcept {
      if (limit_) limit_->in_flight_.fetch_sub(1, std::memory_order_acq_rel);
      limit_ = nullptr;
    }
    AdmissionLimit* limit_ = nullptr;
  };

  // `max_in_flight` of 0 admits nothing.
  explicit AdmissionLimit(std::size_t max_in_flight) noexcept : max_(max_in_flight) {}
  AdmissionLimit(const AdmissionLimit&) = delete;
  AdmissionLimit& operator=(const AdmissionLimit&) = delete;

  // A ticket, or nullopt when the limit is reached.
  std::optional<Ticket> try_enter() noexcept;
  // A ticket, or throws cutoff::Error(overloaded) naming `what`.
  Ticket enter(std::string_view what, std::string_view request_id = {});

  std::size_t in_flight() const noexcept { return in_flight_.load(std::memory_order_acquire); }
  std::size_t max_in_flight() const noexcept { return max_; }
  std::uint64_t rejected() const noexcept { return rejected_.load(std::memory_order_relaxed); }

 private:
  const std::size_t max_;
  std::atomic<std::size_t> in_flight_{0};
  std::atomic<std::uint64_t> rejected_{0};
};

}  // namespace cutoff::effects

#endif  // CUTOFF_EFFECTS_ADMISSION_HPP_
