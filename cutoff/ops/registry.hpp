// Operation registry: operations bound with a handler and a declared deadline, patches that
// set defaults for many operations by selector, and the frozen, resolved result an Invoker
// runs.
//
//   cutoff::ops::Registry registry;
//   registry.bind("orders.create")
//       .deadline(5s)                                   // the operation's own budget
//       .describe("Creates an order")
//       .handler([](const cutoff::ops::Call& call) -> asio::awaitable<boost::json::value> {
//         co_return co_await create_order(call.ctx, call.args);   // honours call.ctx
//       });
//   registry.patch("ns:orders").deadline(10s);          // a default for every orders.* op
//   registry.freeze();                                  // validates; then read-only
//
// Budgets merge tighten-only: an operation's effective deadline is the minimum of its own
// and of every patch that matches it, and a caller's budget can only shorten that further.
// To give one operation more room than a broad patch allows, narrow the patch's selector.
//
// Single-valued settings (the tag) come from the operation itself, else from the most
// specific matching patch; two equally specific patches that would give one operation
// different values are a ConfigError at freeze. Hooks accumulate: before hooks of patches run
// from the least to the most specific (ties in registration order), then the operation's own;
// after hooks run in the mirror order. See docs/operations.md.
//
// Errors in the configuration (bad names or selectors, duplicate names, non-positive
// budgets, operations without a handler, patches matching nothing, ambiguous patches,
// changes after freeze) throw ConfigError, never a cutoff::Error.
//
// A frozen registry is immutable and may be shared by any number of threads and invokers.
// It must outlive them and must not be moved while they exist.
#ifndef CUTOFF_OPS_REGISTRY_HPP_
#define CUTOFF_OPS_REGISTRY_HPP_

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/ops/selector.hpp"

namespace cutoff::ops {

class Invoker;
class Registry;
struct OpSpec;
struct PatchSpec;

// How a caller invokes an operation.
struct InvokeOptions {
  // The caller's own budget, combined with the context's deadline and the operation's by
  // `min`. Zero or less: already spent (fails fast with deadline_exceeded).
  std::optional<Duration> budget;
  // The caller's idempotency key (HTTP `Idempotency-Key`): the operation must declare that it
  // takes one (OperationBuilder::takes_idempotency_key), else the invocation is refused with
  // invalid_argument: a key nobody honours would make the caller believe its retries safe.
  // Nested invocations do not inherit it; a key names one invocation.
  std::optional<std::string> idempotency_key;
};

// What a handler and its hooks receive. Valid until the handler's (or hook's) awaitable
// completes.
struct Call {
  std::string_view operation;
  // The invocation's context: its deadline is min(caller, plan), it carries the invocation's
  // CommitLedger, and it stops the whole plan when it stops.
  Context ctx;
  boost::json::value args;
  const Invoker* invoker = nullptr;
  // The caller's idempotency key, for an operation that takes one: pass it to the effect
  // region that records the outcome (effects::EffectRequest::idempotency_key).
  std::optional<std::string> idempotency_key;

  // Dispatches another operation as part of this one: it inherits `ctx` (deadline, stop,
  // ledger) and can only tighten it.
  boost::asio::awaitable<boost::json::value> invoke(std::string_view name, boost::json::value args,
                                                    InvokeOptions options = {}) const;
};

using Handler = std::function<boost::asio::awaitable<boost::json::value>(const Call&)>;
using BeforeHook = std::function<boost::asio::awaitable<void>(const Call&)>;
// May change the result.
using AfterHook = std::function<boost::asio::awaitable<void>(const Call&, boost::json::value& result)>;

// Where an operation's effective deadline came from.
struct DeadlineSource {
  enum class Kind { none, plan, patch };
  Kind kind = Kind::none;
  std::string selector;  // the patch's selector in string form, for Kind::patch

  // "none", "plan" or "patch <selector>".
  std::string to_string() const;
  friend bool operator==(const DeadlineSource&, const DeadlineSource&) = default;
};

// An operation as the catalog shows it, after patches are applied.
struct OperationInfo {
  std::string name;
  std::string description;
  std::string tag;                    // empty: none
  std::optional<Duration> deadline;   // none: only the caller's budget applies
  DeadlineSource deadline_source;
  std::optional<boost::json::value> request_schema;   // JSON Schema of the args, if declared
  std::optional<boost::json::value> response_schema;  // JSON Schema of the result, if declared
  bool takes_idempotency_key = false;  // honours InvokeOptions::idempotency_key
};

// An operation ready to run: patches applied, hooks in running order.
struct ResolvedOperation {
  OperationInfo info;
  Handler handler;
  std::vector<BeforeHook> before;
  std::vector<AfterHook> after;
};

class Registry {
 public:
  // Sets up one operation. Every setter applies at once; the builder is only a handle.
  class OperationBuilder {
   public:
    // The operation's declared budget; zero or less is a ConfigError(non_positive_budget).
    OperationBuilder& deadline(Duration budget);
    OperationBuilder& handler(Handler h);
    OperationBuilder& before(BeforeHook hook);
    OperationBuilder& after(AfterHook hook);
    OperationBuilder& describe(std::string description);
    OperationBuilder& tag(std::string tag);
    OperationBuilder& request_schema(boost::json::value schema);
    OperationBuilder& response_schema(boost::json::value schema);
    // The handler honours Call::idempotency_key: a repeat with the same key returns the first
    // outcome instead of applying the operation again (it records the key with its effect).
    OperationBuilder& takes_idempotency_key();
    Registry& finish() noexcept { return *registry_; }

   private:
    friend class Registry;
    OperationBuilder(Registry* r, std::size_t index) : registry_(r), index_(index) {}
    OpSpec& spec() const;
    Registry* registry_;
    std::size_t index_;
  };

  // Sets defaults for every operation its selector matches.
  class PatchBuilder {
   public:
    // A default budget for the matched operations (merged with theirs by `min`); zero or
    // less is a ConfigError(non_positive_budget).
    PatchBuilder& deadline(Duration budget);
    PatchBuilder& tag(std::string tag);
    PatchBuilder& before(BeforeHook hook);
    PatchBuilder& after(AfterHook hook);
    Registry& finish() noexcept { return *registry_; }

   private:
    friend class Registry;
    PatchBuilder(Registry* r, std::size_t index) : registry_(r), index_(index) {}
    PatchSpec& spec() const;
    Registry* registry_;
    std::size_t index_;
  };

  Registry();
  ~Registry();
  Registry(Registry&&) noexcept;
  Registry& operator=(Registry&&) noexcept;

  // Adds an operation; ConfigError for an invalid or duplicate name, or after freeze().
  OperationBuilder bind(std::string name);
  // Adds a patch; `selector` in Selector::parse() form.
  PatchBuilder patch(std::string_view selector);
  PatchBuilder patch(Selector selector);

  // Copies `other`'s operations and patches into this registry. Patches of either side then
  // apply to the operations of both: materialize a registry's patches first to keep them to
  // its own operations.
  Registry& merge(const Registry& other);

  // Settles every patch into the plans of the operations it matches (deadline with its
  // source, tag, hooks) and removes the patches. Throws ConfigError for an orphan or
  // ambiguous patch.
  Registry& materialize_patches();

  // Validates (handlers present, no orphan or ambiguous patches), resolves every operation
  // and makes the registry read-only. Calling it again does nothing.
  Registry& freeze();
  bool frozen() const noexcept;

  // The operation named `name`; null when there is none. ConfigError(not_frozen) before freeze().
  const ResolvedOperation* find(std::string_view name) const;
  // Every operation, sorted by name. ConfigError(not_frozen) before freeze().
  std::vector<const ResolvedOperation*> operations() const;

  std::size_t operation_count() const noexcept;
  std::size_t patch_count() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cutoff::ops

#endif  // CUTOFF_OPS_REGISTRY_HPP_
