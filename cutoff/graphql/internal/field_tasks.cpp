#include "cutoff/graphql/internal/field_tasks.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <utility>
#include <variant>

namespace cutoff::graphql::internal {

namespace asio = boost::asio;

struct TaskRunner {
  asio::cancellation_signal signal;  // cancels the task the runner awaits
  FieldTask* task = nullptr;         // the task it awaits
  bool draining = true;              // false once it suspended: it finishes its task only
  bool started = false;
  bool deferred = false;        // spawned off the executor: pumps the queue when it runs
  bool yielded = false;         // waiting for other work on the executor to run
  std::shared_ptr<bool> alive;  // the execution's
};

void FieldTasks::start(asio::any_io_executor executor) {
  executor_ = std::move(executor);
  done_.emplace(executor_, asio::steady_timer::time_point::max());
}

FieldTask& FieldTasks::Queue(ResponseText::Part* hole, const Type& parent_type, const FieldGroup& g,
                             const PathNode* path, const Context& fctx, const Type* type) {
  FieldTask& t = tasks_.emplace();
  t.parent_type = &parent_type;
  t.group = &g;
  t.hole = hole;
  t.path = paths_.persist(path);
  // Anything but the operation's own context is a cap's (the field's, or an ancestor's that
  // this field, list item or pending value inherited): its stop must cancel the task.
  const bool capped = &fctx != &ctx_;
  if (capped) {
    t.own_ctx = fctx;
    t.ctx = &t.own_ctx;
  } else {
    t.ctx = &ctx_;
  }
  t.type = type;
  t.capped = capped;
  queue_.push_back(&t);
  ++pending_;
  return t;
}

FieldTask& FieldTasks::add(ResponseText::Part* hole, const Type& parent_type, const Data& parent, const FieldGroup& g,
                           const PathNode* path, const Context& fctx, std::optional<boost::json::object>&& args,
                           const Type* type, std::shared_ptr<const Data::Producer>&& produce) {
  FieldTask& t = Queue(hole, parent_type, g, path, fctx, type);
  t.parent = parent;
  if (args) t.args = std::move(args);
  t.produce = std::move(produce);
  return t;
}

FieldTask& FieldTasks::add_items(ResponseText::Part* hole, const Type& parent_type, const FieldGroup& g,
                                 const PathNode* path, const Context& fctx, const Type& item_type, ListItems items) {
  FieldTask& t = Queue(hole, parent_type, g, path, fctx, &item_type);
  t.items = items;
  return t;
}

FieldTask& FieldTasks::add_fields(ResponseText::Part* hole, const Type& type, const Data& object,
                                  const Collected& fields, std::size_t first, const PathNode* path,
                                  const Context& fctx) {
  FieldTask& t = Queue(hole, type, fields.groups[first], path, fctx, &type);
  t.parent = object;
  t.fields = &fields;
  t.first_field = first;
  return t;
}

void FieldTasks::retain(Data value) {
  // Moving keeps what the value points to in place (the JSON, the list's items, an owned
  // object).
  const Data::Storage& s = value.storage();
  const auto* object = std::get_if<Data::Object>(&s);
  if (std::holds_alternative<Data::OwnedJson>(s) || std::holds_alternative<Data::List>(s) || (object && object->keep))
    retained_.push_back(std::move(value));
}

void FieldTasks::pump() {
  if (pumping_) return;  // a pump further up the stack goes on with the queue
  pumping_ = true;
  while (next_queued_ < queue_.size()) {
    auto runner = std::make_shared<TaskRunner>();
    runner->alive = alive_;
    runners_.push_back(runner);
    // Runs inline (the executor is the current one) until the runner's task suspends.
    asio::co_spawn(executor_, Drain(runner.get()),
                   asio::bind_cancellation_slot(runner->signal.slot(), [runner](std::exception_ptr) {}));
    // Not started inline: this code does not run on the executor (the execution must run on
    // its strand). The runner pumps the queue from there when it runs.
    if (!runner->started) {
      runner->deferred = true;
      break;
    }
    if (runner->yielded) break;  // it pumps again once other work has run
    if (runner->task) runner->draining = false;
  }
  if (next_queued_ == queue_.size()) {
    queue_.clear();
    next_queued_ = 0;
  }
  pumping_ = false;
}

asio::awaitable<void> FieldTasks::Drain(TaskRunner* r) {
  r->started = true;
  if (r->deferred) {
    if (*r->alive) pump();  // `this` may be gone when the execution ended first
    co_return;
  }
  while (r->draining && next_queued_ < queue_.size()) {
    if (limits_.slice_exhausted()) [[unlikely]] {
      r->yielded = true;
      co_await asio::post(executor_, asio::use_awaitable);
      // Queued tasks keep the execution waiting in wait(), so `this` is alive.
      r->yielded = false;
      limits_.start_slice();
      pump();
      co_return;
    }
    FieldTask& t = *queue_[next_queued_++];
    if (limits_.count(1)) [[unlikely]]
      host_.checkpoint();
    if (limits_.aborted()) [[unlikely]] {  // the response is discarded: nothing more starts
      t.done = true;
      finished();
      continue;
    }
    if (t.ctx->stop_requested() && !t.continues_walk()) {  // never start a field after the stop
      t.done = true;
      host_.complete_stopped(t);
      continue;
    }
    if (t.capped) {
      // The cap is this field's own stop: it cancels only this resolver.
      t.cap_stop.emplace(t.ctx->token(), [task = &t, alive = alive_, ex = executor_](StopReason) {
        asio::post(ex, [task, alive] {
          if (*alive && !task->done && task->runner) task->runner->signal.emit(asio::cancellation_type::terminal);
        });
      });
    }
    r->task = &t;
    t.runner = r;
    std::exception_ptr error;
    Data result;
    try {
      if (t.produce) {
        result = co_await (*t.produce)();
      } else if (t.continues_walk()) {
        // Nothing to resolve: completing the task walks the items or fields.
      } else if (t.sync) {
        result = host_.resolve(t, error);
      } else {
        FieldContext fc{*t.ctx,         t.parent, t.arguments(), *t.group->def,
                        *t.parent_type, schema_,  variables_,    *t.group->nodes[0]};
        result = co_await t.group->def->async(fc);
      }
    } catch (...) {
      error = std::current_exception();
    }
    r->task = nullptr;
    t.runner = nullptr;
    t.done = true;
    t.cap_stop.reset();
    // Resumed inside a walk: the walk completes the task when it ends, and whoever runs
    // that walk pumps what it queues.
    if (!host_.complete(t, error, result)) co_return;
  }
  if (!r->draining) pump();
}

void FieldTasks::CancelInFlight() {
  // Emitting may complete handlers inline on some operations; iterate over a copy.
  std::vector<TaskRunner*> copy;
  for (const auto& r : runners_)
    if (r->task && !r->task->done) copy.push_back(r.get());
  for (TaskRunner* r : copy)
    if (r->task && !r->task->done) r->signal.emit(asio::cancellation_type::terminal);
}

void FieldTasks::cancel_in_flight_soon() {
  asio::post(executor_, [this, alive = alive_] {
    if (*alive) CancelInFlight();
  });
}

asio::awaitable<void> FieldTasks::wait() {
  pump();
  while (pending_ > 0) {
    done_->expires_at(asio::steady_timer::time_point::max());
    auto [ec] = co_await done_->async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec && pending_ > 0 && !externally_cancelled_) {
      // Our caller was cancelled through Asio: cancel the resolvers in flight, and still
      // wait for them (they point into this execution).
      externally_cancelled_ = true;
      co_await asio::this_coro::throw_if_cancelled(false);
      CancelInFlight();
    }
  }
}

}  // namespace cutoff::graphql::internal
