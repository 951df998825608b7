// The fields of an execution that complete later: asynchronous resolvers, pending values
// (Data::pending), synchronous fields queued when a walk yielded, and the rest of a list or
// an object a walk yielded inside (one task for all its remaining items or fields, so a long
// list or a wide object costs one task per yield rather than one per field). Each leaves a
// hole in the response and becomes a
// task in a FIFO queue; this runs the tasks and cancels the ones in flight when the
// operation (or a field's @budget cap) stops. Writing a task's value into its hole is the
// execution's (Host).
//
// Runners start the queued tasks: a runner is a coroutine that takes tasks one at a time
// and awaits each. pump() spawns a runner, which runs inline until its task suspends (or the
// queue is empty); the next one then goes on with the queue. Resolvers that finish without
// suspending (a cache hit, a value already at hand) so cost a coroutine call each instead of
// a spawn, while those that suspend still all run concurrently: every queued task is
// started before any suspended one resumes. A runner resumed after its task suspended
// finishes that task only (its completion writes the hole), and pumps what the completion
// queued.
//
//   FieldTasks tasks(host, schema, variables, ctx, limits);
//   tasks.start(co_await asio::this_coro::executor);
//   ... tasks.add(hole, ...) while walking ...
//   co_await tasks.wait();  // every task completed
//
// Runs on one strand, like the execution; only cancel_in_flight_soon may be called from
// another thread.
#ifndef CUTOFF_GRAPHQL_INTERNAL_FIELD_TASKS_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_FIELD_TASKS_HPP_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/object.hpp>
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "cutoff/core/cancel.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/graphql/data.hpp"
#include "cutoff/graphql/internal/blocks.hpp"
#include "cutoff/graphql/internal/field_collection.hpp"
#include "cutoff/graphql/internal/response_path.hpp"
#include "cutoff/graphql/internal/response_text.hpp"
#include "cutoff/graphql/internal/walk_limits.hpp"
#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql::internal {

struct TaskRunner;

// A run [from, to) of a list's items: a Data list's or a JSON array's (one of the two).
struct ListItems {
  const Data* data = nullptr;
  const boost::json::value* json = nullptr;
  std::size_t from = 0;
  std::size_t to = 0;

  explicit operator bool() const noexcept { return data != nullptr || json != nullptr; }
  ListItems from_item(std::size_t k) const noexcept {
    ListItems rest = *this;
    rest.from = k;
    return rest;
  }
};

struct FieldTask {
  const Type* parent_type = nullptr;
  Data parent;
  const FieldGroup* group = nullptr;
  ResponseText::Part* hole = nullptr;
  const PathNode* path = nullptr;  // persistent
  // The field's context: the operation's, or own_ctx when a @budget cap applies here or
  // above. Pointing at the operation's saves a copy per task.
  const Context* ctx = nullptr;
  Context own_ctx;
  // The field's coerced arguments; none for a field that takes none (most fields), which
  // then costs no object made and destroyed per task.
  std::optional<boost::json::object> args;
  const Type* type = nullptr;  // what the produced value completes as (the field's or a list item's type)
  std::shared_ptr<const Data::Producer> produce;  // a pending value; null: the field's resolver
  bool capped = false;                            // ctx is a cap's: its own stop cancels this task only
  bool sync = false;                              // a synchronous field queued when its walk yielded
  // The rest of a list or an object whose walk yielded inside it. Such a task resolves
  // nothing and is never skipped for a stop: its walk reports each field it does not start,
  // as the first walk would have.
  // - a list's items (kept alive by retain()); `type` is the item type;
  ListItems items;
  // - an object's fields from `first_field` on; `parent` is the object, `parent_type` its type.
  const Collected* fields = nullptr;
  std::size_t first_field = 0;

  bool continues_walk() const noexcept { return items || fields != nullptr; }
  const boost::json::object& arguments() const noexcept {
    static const boost::json::object kNone;
    return args ? *args : kNone;
  }
  // Kept by FieldTasks while the task runs.
  std::optional<CancelRegistration> cap_stop;  // for @budget-capped fields
  TaskRunner* runner = nullptr;                // the runner awaiting it
  bool done = false;
};

class FieldTasks {
 public:
  // What the tasks need from the execution.
  class Host {
   public:
    // Calls the synchronous resolver (or the default one) of a field queued when its walk
    // yielded; what it throws lands in `error`.
    virtual Data resolve(const FieldTask& task, std::exception_ptr& error) = 0;
    // Writes the task's value (`error`: its failure) into its hole, then calls finished().
    // False when a walk is writing the response: the completion then waits for it to end.
    virtual bool complete(FieldTask& task, std::exception_ptr error, Data& result) = 0;
    // Writes the error of a task whose context stopped before it started, then calls
    // finished().
    virtual void complete_stopped(FieldTask& task) = 0;
    // Checks the walk's limits (WalkLimits), every kCheckpointEvery tasks started.
    virtual void checkpoint() = 0;

   protected:
    ~Host() = default;
  };

  // `variables`, `operation_ctx` and `limits` are the execution's, which outlive this.
  FieldTasks(Host& host, const Schema& schema, const boost::json::object& variables, const Context& operation_ctx,
             WalkLimits& limits)
      : host_(host), schema_(schema), variables_(variables), ctx_(operation_ctx), limits_(limits) {}
  FieldTasks(const FieldTasks&) = delete;
  FieldTasks& operator=(const FieldTasks&) = delete;
  ~FieldTasks() { *alive_ = false; }  // posts still to come find the execution gone

  // Before the first task: the executor the execution runs on.
  void start(boost::asio::any_io_executor executor);

  // Queues a task that writes into `hole`: the field `g` of `parent` under `fctx` (the
  // operation's context, or a cap's), completing as `type`, from `produce` (a pending
  // value) or else the field's resolver. `path` is copied.
  FieldTask& add(ResponseText::Part* hole, const Type& parent_type, const Data& parent, const FieldGroup& g,
                 const PathNode* path, const Context& fctx, std::optional<boost::json::object>&& args, const Type* type,
                 std::shared_ptr<const Data::Producer>&& produce);

  // Queues the rest of a list (`items`, of `item_type`) at `path` for a later walk, which
  // writes them into `hole`.
  FieldTask& add_items(ResponseText::Part* hole, const Type& parent_type, const FieldGroup& g, const PathNode* path,
                       const Context& fctx, const Type& item_type, ListItems items);
  // Queues the fields of `object` (of `type`) from `first` on, at `path`, for a later walk.
  FieldTask& add_fields(ResponseText::Part* hole, const Type& type, const Data& object, const Collected& fields,
                        std::size_t first, const PathNode* path, const Context& fctx);

  // How many tasks were ever queued: a change tells that completing a value queued some.
  std::size_t count() const noexcept { return tasks_.size(); }

  // Tasks queued while completing `value` may point into it (a list's JSON items, the
  // members the default resolver reads): it lives as long as the tasks.
  void retain(Data value);

  // Starts queued tasks until none is left.
  void pump();

  // A task's hole is written (Host::complete, Host::complete_stopped).
  void finished() {
    if (--pending_ == 0 && done_) done_->cancel();
  }

  // Pumps, then waits until every task has finished. When the caller is cancelled through
  // Asio, the tasks in flight are cancelled and still awaited (they point into the
  // execution).
  boost::asio::awaitable<void> wait();

  // The caller cancelled the execution through Asio (an abort is then a stop).
  bool externally_cancelled() const noexcept { return externally_cancelled_; }

  // Cancels the tasks in flight soon, on the executor (callable from any thread, after
  // start()).
  void cancel_in_flight_soon();

 private:
  FieldTask& Queue(ResponseText::Part* hole, const Type& parent_type, const FieldGroup& g, const PathNode* path,
                   const Context& fctx, const Type* type);
  boost::asio::awaitable<void> Drain(TaskRunner* r);
  void CancelInFlight();

  Host& host_;
  const Schema& schema_;
  const boost::json::object& variables_;
  const Context& ctx_;
  WalkLimits& limits_;
  boost::asio::any_io_executor executor_;
  std::optional<boost::asio::steady_timer> done_;  // cancelled when the last task finishes
  std::size_t pending_ = 0;
  Blocks<FieldTask, 64> tasks_;    // every task of the execution
  std::vector<FieldTask*> queue_;  // tasks not started yet, from next_queued_ on
  std::size_t next_queued_ = 0;
  bool pumping_ = false;
  std::vector<std::shared_ptr<TaskRunner>> runners_;
  PersistentPaths paths_;       // tasks' paths
  std::vector<Data> retained_;  // values tasks may point into
  bool externally_cancelled_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for posts that may outlive us
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_FIELD_TASKS_HPP_
