// OutboundLimits: how many calls the gateway has out to the inventory at once, per operation
// and in all.
//
//   OutboundLimits limits({.per_operation = 16, .per_operation_queue = 256, .total = 256,
//                          .total_queue = 1024});
//   // Where an operation enters (the /graphql handler, one WebSocket connection):
//   OutboundLimits::Operation op = limits.begin_operation(ctx);
//   co_await handler(req, op.context());   // resolvers run under op.context() or its children
//   // In a resolver, around each outbound call:
//   OutboundLimits::Permit slot = co_await limits.acquire(field_ctx);
//   http::Response r = co_await client.get(field_ctx, url);
//
// Without these, one query with thousands of aliases starts thousands of calls at once: the
// inventory's connection limit answers the excess by closing connections (the client saw
// "partial message", reported as UNAVAILABLE) and everybody else's calls wait behind them.
//
// - Each operation has a bulkhead of its own (`per_operation` calls running, `per_operation_queue`
//   waiting), and every call also takes a slot of the gateway-wide bulkhead (`total`,
//   `total_queue`). `total` should stay below the inventory's connection limit.
// - A call whose queue is full fails at once with `overloaded` (GraphQL OVERLOADED at its field's
//   path); a queued call whose context stops (deadline, client gone) leaves its queue at once with
//   the stop's error (DEADLINE_EXCEEDED, CANCELLED). See resilience/bulkhead.hpp.
// - The operation is recognised by its context's request values, which every child context the
//   executor makes shares (Context::with_deadline, with_cancel, with_timeout). A context made with
//   new values (with_request_id, with_values) is another operation's or none's: acquire() with
//   the field's context, before renaming it for the call. A call under no operation takes only a
//   gateway-wide slot.
//
// Thread-safe. Must outlive its operations and permits.
#ifndef CUTOFF_APPS_WAREHOUSE_OUTBOUND_LIMITS_HPP_
#define CUTOFF_APPS_WAREHOUSE_OUTBOUND_LIMITS_HPP_

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "cutoff/core/context.hpp"
#include "cutoff/resilience/bulkhead.hpp"
#include "cutoff/resilience/metrics.hpp"

namespace cutoff::warehouse {

struct OutboundLimitOptions {
  std::size_t per_operation = 16;         // calls one operation has running (at least 1)
  std::size_t per_operation_queue = 256;  // calls of one operation waiting for one of those
  std::size_t total = 256;                // calls the gateway has running (at least 1)
  std::size_t total_queue = 1024;         // calls waiting for one of those
  resilience::ResilienceMetrics* metrics = nullptr;  // the gateway-wide bulkhead's series
};

class OutboundLimits {
 public:
  // One operation's scope: calls under context() (or its children) share its limit until the
  // Operation is destroyed. Movable.
  class Operation {
   public:
    Operation(Operation&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)), ctx_(std::move(other.ctx_)) {}
    Operation& operator=(Operation&&) = delete;
    ~Operation();
    const Context& context() const noexcept { return ctx_; }

   private:
    friend class OutboundLimits;
    Operation(OutboundLimits* owner, Context ctx) noexcept : owner_(owner), ctx_(std::move(ctx)) {}
    OutboundLimits* owner_;
    Context ctx_;
  };

  // Slots for one call: the operation's and the gateway's, given back when destroyed.
  class Permit {
   public:
    Permit() noexcept = default;
    Permit(Permit&&) noexcept = default;
    Permit& operator=(Permit&& other) noexcept {
      if (this != &other) {
        release();
        total_ = std::move(other.total_);
        operation_ = std::move(other.operation_);
        bulkhead_ = std::move(other.bulkhead_);
      }
      return *this;
    }
    ~Permit() { release(); }
    void release() noexcept {
      total_.release();
      operation_.release();  // before `bulkhead_` may go
      bulkhead_.reset();
    }

   private:
    friend class OutboundLimits;
    std::shared_ptr<resilience::Bulkhead> bulkhead_;
    resilience::Bulkhead::Permit operation_;
    resilience::Bulkhead::Permit total_;
  };

  explicit OutboundLimits(OutboundLimitOptions options);
  OutboundLimits(const OutboundLimits&) = delete;
  OutboundLimits& operator=(const OutboundLimits&) = delete;
  ~OutboundLimits();

  // Starts an operation's scope for `ctx` (a child sharing its stop state, with values of its
  // own so the scope cannot be confused with another request's).
  Operation begin_operation(const Context& ctx);

  // Waits for a slot of `ctx`'s operation, then for a gateway-wide one. Throws cutoff::Error:
  // overloaded (a queue is full) or the stop's error.
  boost::asio::awaitable<Permit> acquire(const Context& ctx);

  const OutboundLimitOptions& options() const noexcept { return options_; }
  resilience::BulkheadStats total_stats() const { return total_.stats(); }
  // Operations open now (for tests).
  std::size_t operations() const;

 private:
  static boost::asio::awaitable<Permit> Acquire(OutboundLimits* self, Context ctx);
  std::shared_ptr<resilience::Bulkhead> Find(const Context& ctx) const;
  void Forget(const RequestValues* key) noexcept;

  OutboundLimitOptions options_;
  resilience::Bulkhead total_;
  mutable std::mutex mu_;
  std::unordered_map<const RequestValues*, std::shared_ptr<resilience::Bulkhead>> operations_;
};

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_OUTBOUND_LIMITS_HPP_
