#include "warehouse/outbound_limits.hpp"

#include <string>

#include "cutoff/core/error.hpp"

namespace cutoff::warehouse {

namespace asio = boost::asio;

namespace {

resilience::BulkheadOptions TotalOptions(const OutboundLimitOptions& o) {
  resilience::BulkheadOptions b;
  b.max_concurrent = std::max<std::size_t>(o.total, 1);
  b.max_queue = o.total_queue;
  b.name = "gateway.inventory_calls";
  b.metrics = o.metrics;
  return b;
}

}  // namespace

OutboundLimits::OutboundLimits(OutboundLimitOptions options)
    : options_(std::move(options)), total_(TotalOptions(options_)) {}

OutboundLimits::~OutboundLimits() = default;

OutboundLimits::Operation::~Operation() {
  if (owner_) owner_->Forget(&ctx_.values());
}

OutboundLimits::Operation OutboundLimits::begin_operation(const Context& ctx) {
  // Values of its own: the key is this allocation, alive as long as the Operation is, so no
  // other request (not even one sent with the same X-Request-Id) can share the scope.
  Context scoped = ctx.with_values(std::make_shared<const RequestValues>(ctx.values()));
  resilience::BulkheadOptions b;
  b.max_concurrent = std::max<std::size_t>(options_.per_operation, 1);
  b.max_queue = options_.per_operation_queue;
  b.name = "gateway.operation";  // no metrics: one per operation
  auto bulkhead = std::make_shared<resilience::Bulkhead>(std::move(b));
  {
    std::lock_guard lock(mu_);
    operations_[&scoped.values()] = std::move(bulkhead);
  }
  return Operation(this, std::move(scoped));
}

void OutboundLimits::Forget(const RequestValues* key) noexcept {
  std::shared_ptr<resilience::Bulkhead> gone;  // destroyed outside the lock
  std::lock_guard lock(mu_);
  auto it = operations_.find(key);
  if (it == operations_.end()) return;
  gone = std::move(it->second);
  operations_.erase(it);
}

std::size_t OutboundLimits::operations() const {
  std::lock_guard lock(mu_);
  return operations_.size();
}

std::shared_ptr<resilience::Bulkhead> OutboundLimits::Find(const Context& ctx) const {
  std::lock_guard lock(mu_);
  auto it = operations_.find(&ctx.values());
  return it == operations_.end() ? nullptr : it->second;
}

asio::awaitable<OutboundLimits::Permit> OutboundLimits::acquire(const Context& ctx) { return Acquire(this, ctx); }

asio::awaitable<OutboundLimits::Permit> OutboundLimits::Acquire(OutboundLimits* self, Context ctx) {
  Permit permit;
  permit.bulkhead_ = self->Find(ctx);
  // The bulkheads' own messages name the bulkhead; the client needs to know which limit it ran
  // into and what to do about it.
  if (permit.bulkhead_) {
    try {
      permit.operation_ = co_await permit.bulkhead_->acquire(ctx);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::overloaded) throw;
      if (self->options_.metrics)
        self->options_.metrics->bulkhead_rejected.with({"gateway.operation", "full"}).inc();
      throw Error(ErrorCode::overloaded,
                  "this operation already has " + std::to_string(self->options_.per_operation) +
                      " calls to the inventory running and " + std::to_string(self->options_.per_operation_queue) +
                      " waiting (the gateway's per-operation limit); ask for fewer fields at once",
                  ctx.request_id());
    }
  }
  try {
    permit.total_ = co_await self->total_.acquire(ctx);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::overloaded) throw;
    throw Error(ErrorCode::overloaded,
                "the gateway has " + std::to_string(self->options_.total) + " calls to the inventory running and " +
                    std::to_string(self->options_.total_queue) + " waiting; try again after a backoff",
                ctx.request_id());
  }
  co_return permit;
}

}  // namespace cutoff::warehouse
