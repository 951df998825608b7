// The response walk: fields are resolved and their values completed (spec 6.4 ExecuteField,
// 6.4.3 CompleteValue) and written straight into the response text in selection order, nulls
// in non-null positions propagating to the nearest nullable ancestor. Everything else an
// execution needs lives beside this file (see execution.hpp). At some 600 lines it is one
// recursion (a field's value completes into lists and objects whose fields complete in turn)
// that reads best in one place; splitting it would scatter that recursion over files.
#include "cutoff/graphql/internal/execution.hpp"

#include <boost/asio/this_coro.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cutoff/core/cancel.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/core/json_text.hpp"
#include "cutoff/graphql/internal/coercion.hpp"
#include "cutoff/graphql/internal/execution_errors.hpp"
#include "cutoff/graphql/internal/field_collection.hpp"
#include "cutoff/graphql/internal/field_tasks.hpp"
#include "cutoff/graphql/internal/operation_setup.hpp"
#include "cutoff/graphql/internal/response_path.hpp"
#include "cutoff/graphql/internal/response_text.hpp"
#include "cutoff/graphql/internal/response_writer.hpp"
#include "cutoff/graphql/internal/text_buffer.hpp"
#include "cutoff/graphql/internal/walk_limits.hpp"
#include "cutoff/graphql/values.hpp"

namespace cutoff::graphql::internal {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

void AppendInt(TextBuffer& out, std::int64_t v) { out.append_int(v); }

void AppendNumber(TextBuffer& out, double v) {
  char buf[kJsNumberMax];
  out.append(buf, format_js_number(v, buf));
}

// A member name (`,"key":`), without its comma for an object's first.
void AppendMember(TextBuffer& out, const std::string& member, bool first) {
  out.append(member.data() + (first ? 1 : 0), member.size() - (first ? 1 : 0));
}

// The size of the last response on this thread, up to 64 KiB (below where malloc maps memory
// for a block of its own): a server answering similar operations writes each response
// without growing its text over and over.
constexpr std::size_t kMaxResponseSizeHint = 64 * 1024;
thread_local std::size_t response_size_hint = 0;

class Execution final : private FieldTasks::Host {
 public:
  // `event`: executing a subscription event (req.root_value is the event), where a root field
  // without a resolver takes the event itself as its value.
  Execution(const Schema& schema, const Request& req, Context ctx, ExecutionOptions options, OperationSetup setup,
            bool event)
      : schema_(schema),
        req_(req),
        ctx_(std::move(ctx)),
        options_(options),
        event_(event),
        op_(*setup.operation),
        root_type_(*setup.root_type),
        variables_(std::move(setup.variables)),
        fields_(schema_, *req_.document, variables_),
        errors_(schema_, options_, op_.name, ctx_),
        limits_(options_.max_response_bytes, options_.yield_after),
        tasks_(*this, schema_, variables_, ctx_, limits_) {}

  asio::awaitable<Response> Run() {
    // A mutation needs a ledger to tell a field whose effect may have landed from one that
    // cannot have written anything. Attached here only when the caller brought none: new
    // values make a context unrecognisable to whoever keys on them (see docs/architecture.md).
    if (op_.type == OperationType::mutation && !ctx_.commit_ledger())
      ctx_ = ctx_.with_commit_ledger(std::make_shared<CommitLedger>());
    Response resp;
    resp.has_data = true;
    tasks_.start(co_await asio::this_coro::executor);
    limits_.start_slice();

    // One registration for the whole operation: a stop cancels every resolver in flight.
    std::optional<CancelRegistration> on_stop;
    if (ctx_.bound()) {
      on_stop.emplace(ctx_.token(), [this](StopReason) {
        errors_.note_stop();
        tasks_.cancel_in_flight_soon();
      });
    }

    current_parent_type_ = &root_type_;
    const Collected& fields = fields_.collect(root_type_, op_.selection_set);
    root_data_ = req_.root_value;
    ResponseText::Part* data = writer_.root();
    out().reserve(response_size_hint);
    if (op_.type == OperationType::mutation) {
      co_await ExecuteSerially(fields, data);
    } else {
      BeginWalk(data);
      ExecuteFields(root_type_, root_data_, fields, nullptr, ctx_);
      EndWalk();
      co_await tasks_.wait();
    }
    on_stop.reset();
    if (internal_error_) std::rethrow_exception(internal_error_);
    if (limits_.aborted()) {
      resp.has_data = false;
      resp.errors.push_back({"The response grew past the limit of " + std::to_string(limits_.response_limit()) +
                                 " bytes; the operation was stopped.",
                             {},
                             {},
                             graphql_codes::kResponseTooLarge});
      co_return resp;
    }
    if (!errors_.finish(resp)) co_return resp;
    resp.data = std::move(writer_).render();
    response_size_hint = std::min<std::size_t>(resp.data.size(), kMaxResponseSizeHint);
    co_return resp;
  }

 private:
  // Root mutation fields run one after another, each to completion (spec 6.3.1
  // ExecuteFieldsSerially), into `data`.
  asio::awaitable<void> ExecuteSerially(const Collected& fields, ResponseText::Part* data) {
    BeginWalk(data);
    out().push_back('{');
    for (std::size_t k = 0; k < fields.groups.size(); ++k) {
      const FieldGroup& g = fields.groups[k];
      AppendMember(out(), g.member, k == 0);
      const PathNode path{nullptr, g.key};
      // One field at a time, so what the ledger gains from here until the field ends is
      // this field's.
      errors_.begin_mutation_field(ctx_.commit_ledger());
      ExecuteField(root_type_, root_data_, g, &path, ctx_);
      EndWalk();
      co_await tasks_.wait();
      errors_.end_mutation_field();
      BeginWalk(data);
      if (data->nulled) {
        // The data is gone, so the later fields have no place to be null in; under a stop
        // they still say that they did nothing, lest a client guess they ran.
        if (ctx_.stop_requested()) {
          const ErrorCodeInfo& i = info(error_code_for(ctx_.stop_reason()));
          for (std::size_t j = k + 1; j < fields.groups.size(); ++j)
            errors_.add(GraphQLError::of(
                i.code, "This mutation field was never started (" + std::string(i.summary) + "), so it did nothing.",
                fields.groups[j].locations(), {std::string(fields.groups[j].key)}));
        }
        break;
      }
    }
    out().push_back('}');
    EndWalk();
  }

  // ---- writing the response ----
  //
  // Values are written straight into the response text in selection order (writer_). Every
  // function that writes a value returns false when a null reached a non-null position
  // there: the error is already reported, and the caller's container must become null too.
  struct LateCompletion {
    FieldTask* task;
    std::exception_ptr error;
    Data result;
  };

  TextBuffer& out() noexcept { return writer_.out(); }

  void BeginWalk(ResponseText::Part* part) { writer_.begin(part); }
  void EndWalk() {
    writer_.end();
    // Completions that arrived during the walk (a resolver resumed inline by something the
    // walk called) write their holes now, in the order they arrived.
    while (!late_.empty()) {
      std::deque<LateCompletion> batch;
      batch.swap(late_);
      for (LateCompletion& c : batch) FinishAsync(*c.task, c.error, c.result);
    }
  }

  template <typename Write>
  bool Nullable(bool non_null, Write&& write) {
    return writer_.nullable(non_null, std::forward<Write>(write));
  }

  // A null reached a non-null position: the error (if any) is reported at the nearest
  // nullable position, unless an earlier error already nulled it there.
  bool NullInNonNull(GraphQLError* e) {
    if (writer_.null_in_non_null() && e) errors_.add(std::move(*e));
    return false;
  }

  // A field or item failed with `e`: null here, or further up from a non-null position.
  bool Fail(bool non_null, GraphQLError e) {
    if (non_null) return NullInNonNull(&e);
    errors_.add(std::move(e));
    out() += "null";
    return true;
  }

  // As Fail, for an error ExecutionErrors decided; nullopt: null without an error of its own.
  bool Fail(bool non_null, std::optional<GraphQLError> e) {
    if (e) return Fail(non_null, std::move(*e));
    if (non_null) return NullInNonNull(nullptr);
    out() += "null";
    return true;
  }

  bool FailStopped(const PathNode* path, bool non_null, const FieldGroup& g, StopReason reason, Duration overshoot,
                   bool started = true) {
    return Fail(non_null, errors_.stopped(path, g, reason, overshoot, started));
  }

  bool FailWith(const PathNode* path, bool non_null, const FieldGroup& g, std::exception_ptr error,
                const Context& ctx) {
    return Fail(non_null, errors_.failed(path, g, error, ctx, tasks_.externally_cancelled()));
  }

  // ---- execution ----
  bool ExecuteFields(const Type& type, const Data& parent, const Collected& fields, const PathNode* path,
                     const Context& ctx) {
    out().push_back('{');
    if (!ExecuteFieldsFrom(0, type, parent, fields, path, ctx)) return false;
    out().push_back('}');
    return true;
  }

  // The fields of an object from the `first`-th on, each after its member name. When the
  // walk must yield, the fields left become one task (a hole here) that a later walk writes.
  bool ExecuteFieldsFrom(std::size_t first, const Type& type, const Data& parent, const Collected& fields,
                         const PathNode* path, const Context& ctx) {
    // The limits are looked at every kCheckpointEvery fields (Checkpoint): counted per
    // object, and within a wide one.
    const std::size_t n = fields.groups.size();
    if (limits_.count(static_cast<std::int64_t>(n - first))) [[unlikely]]
      Checkpoint();
    for (std::size_t k = first; k < n; ++k) {
      if (WalkLimits::due(k)) [[unlikely]]
        Checkpoint();
      const FieldGroup& g = fields.groups[k];
      // A non-null field failed: its siblings are not started. Once Checkpoint halts the
      // walk, fields take the slow path.
      if (limits_.halted()) [[unlikely]] {
        // A subscription event's root fields read the event itself (Resolve), so they are
        // not left for later with a copy of it.
        if (limits_.slice_exhausted() && !limits_.aborted() && !(event_ && &parent == &root_data_)) {
          tasks_.add_fields(writer_.hole(true), type, parent, fields, k, path, ctx);
          return true;
        }
        AppendMember(out(), g.member, k == 0);
        const PathNode field_path{path, g.key};
        if (!ExecuteHalted(type, parent, g, &field_path, ctx)) return false;
        continue;
      }
      AppendMember(out(), g.member, k == 0);
      const PathNode field_path{path, g.key};
      if (!ExecuteField(type, parent, g, &field_path, ctx)) return false;
    }
    return true;
  }

  static Data DefaultResolve(const Data& parent, std::string_view name) {
    const json::value* j = parent.if_json();
    if (!j || !j->is_object()) return Data();
    const json::object& o = j->get_object();
    auto it = o.find(name);
    return it == o.end() ? Data() : Data::json(&it->value());
  }

  bool ExecuteField(const Type& parent_type, const Data& parent, const FieldGroup& g, const PathNode* path,
                    const Context& ctx) {
    switch (g.kind) {
      case FieldGroup::Kind::sync_leaf: return ExecuteSyncLeaf(parent_type, parent, g, path, ctx);
      case FieldGroup::Kind::member_leaf:
        if (!ctx.stop_requested()) {  // a stop takes the general way, which reports it
          const Data::Object* o = parent.if_object();
          if (o && (o->type == g.def->member_owner || *o->type == *g.def->member_owner) &&
              WriteLeaf(g.def->read_member(o->ptr)))
            return true;
        }
        break;
      case FieldGroup::Kind::general: break;
    }
    const Field* def = g.def;
    if (!def) {  // unknown field: validation rejects it; null if it gets here
      out() += "null";
      return true;
    }
    if (def->budget) {
      const Context capped = ctx.with_timeout(*def->budget);
      return ExecuteFieldUnder(*def, parent_type, parent, g, path, capped);
    }
    return ExecuteFieldUnder(*def, parent_type, parent, g, path, ctx);
  }

  // Executes the field under `fctx`, its own context.
  bool ExecuteFieldUnder(const Field& def, const Type& parent_type, const Data& parent, const FieldGroup& g,
                         const PathNode* path, const Context& fctx) {
    const bool non_null = def.type->is_non_null();
    if (&def == &schema_.typename_meta_field()) {
      append_json_string_to(out(), parent_type.name);
      return true;
    }
    if (fctx.stop_requested())  // never start a field after the stop
      return FailStopped(path, non_null, g, fctx.stop_reason(), Duration::zero(), /*started=*/false);
    if (def.read_member && def.args.empty()) {  // a data member written straight out (Schema::member)
      const Data::Object* o = parent.if_object();
      if (o && (o->type == def.member_owner || *o->type == *def.member_owner) && WriteLeaf(def.read_member(o->ptr)))
        return true;
    }
    static const json::object kNoArguments;
    const json::object* args = &kNoArguments;
    std::optional<json::object> coerced;
    if (!def.args.empty()) {
      std::string error;
      coerced.emplace(coerce_argument_values(def, *g.nodes[0], variables_, &error));
      if (!error.empty()) return Fail(non_null, GraphQLError{error, g.locations(), path_of(path), {}});
      args = &*coerced;
    }
    if (def.async) {
      Defer(parent_type, parent, g, path, fctx, std::move(coerced), def.type, nullptr);
      return true;
    }
    std::exception_ptr error;
    Data result = Resolve(def, parent_type, parent, *args, g, fctx, error);
    if (error) return FailWith(path, non_null, g, error, fctx);
    const std::size_t deferred = tasks_.count();
    const bool ok = Complete(*def.type, g, result, path, fctx);
    if (tasks_.count() != deferred) tasks_.retain(std::move(result));
    return ok;
  }

  // A synchronous resolver of a built-in scalar with no arguments and no @budget
  // (FieldGroup::Kind::sync_leaf): ExecuteFieldUnder's steps without the decisions that cannot
  // apply, and the value written straight out when it is a plain one of the field's type;
  // anything else is completed the general way.
  bool ExecuteSyncLeaf(const Type& parent_type, const Data& parent, const FieldGroup& g, const PathNode* path,
                       const Context& fctx) {
    const Field& def = *g.def;
    if (fctx.stop_requested())  // never start a field after the stop
      return FailStopped(path, def.type->is_non_null(), g, fctx.stop_reason(), Duration::zero(), /*started=*/false);
    static const json::object kNoArguments;
    std::exception_ptr error;
    Data result = Resolve(def, parent_type, parent, kNoArguments, g, fctx, error);
    if (error) return FailWith(path, def.type->is_non_null(), g, error, fctx);
    const Data::Storage& v = result.storage();
    switch (def.type->nullable().builtin) {
      case BuiltinScalar::string:
      case BuiltinScalar::id:
        if (const auto* sv = std::get_if<std::string_view>(&v)) {
          append_json_string_to(out(), *sv);
          return true;
        }
        if (const auto* str = std::get_if<std::string>(&v)) {
          append_json_string_to(out(), *str);
          return true;
        }
        break;
      case BuiltinScalar::int_:
        if (const auto* i = std::get_if<std::int64_t>(&v); i && *i >= INT32_MIN && *i <= INT32_MAX) {
          AppendInt(out(), *i);
          return true;
        }
        break;
      case BuiltinScalar::float_:
        if (const auto* d = std::get_if<double>(&v); d && std::isfinite(*d)) {
          AppendNumber(out(), *d);
          return true;
        }
        break;
      case BuiltinScalar::boolean:
        if (const auto* b = std::get_if<bool>(&v)) {
          out() += *b ? "true" : "false";
          return true;
        }
        break;
      case BuiltinScalar::none: break;
    }
    const std::size_t deferred = tasks_.count();
    const bool ok = Complete(*def.type, g, result, path, fctx);
    if (tasks_.count() != deferred) tasks_.retain(std::move(result));
    return ok;
  }

  // Writes a data member's value; false when it did not fit the field's type (absent).
  bool WriteLeaf(const MemberLeaf& leaf) {
    switch (leaf.kind) {
      case MemberLeaf::Kind::boolean: out() += leaf.boolean ? "true" : "false"; return true;
      case MemberLeaf::Kind::int32: AppendInt(out(), leaf.int32); return true;
      case MemberLeaf::Kind::number: AppendNumber(out(), leaf.number); return true;
      case MemberLeaf::Kind::string: append_json_string_to(out(), leaf.string); return true;
      case MemberLeaf::Kind::absent: return false;
    }
    return false;
  }

  // A field met while the walk is halted (out of line: the hot path only tests halted()).
  // When the response is abandoned nothing more is written; when the walk must yield, the
  // field becomes a task that a runner starts after letting other work run. A subscription
  // event's root field reads the event itself, so it is executed now.
  [[gnu::noinline]] bool ExecuteHalted(const Type& parent_type, const Data& parent, const FieldGroup& g,
                                       const PathNode* path, const Context& ctx) {
    if (limits_.aborted()) {
      out() += "null";
      return true;
    }
    const Field* field = g.def;
    if (!field || field == &schema_.typename_meta_field() || (event_ && &parent == &root_data_))
      return ExecuteField(parent_type, parent, g, path, ctx);
    if (field->budget) {
      const Context capped = ctx.with_timeout(*field->budget);  // Defer copies a cap's context
      return DeferHalted(*field, parent_type, parent, g, path, capped);
    }
    return DeferHalted(*field, parent_type, parent, g, path, ctx);
  }

  bool DeferHalted(const Field& def, const Type& parent_type, const Data& parent, const FieldGroup& g,
                   const PathNode* path, const Context& fctx) {
    const bool non_null = def.type->is_non_null();
    if (fctx.stop_requested()) return FailStopped(path, non_null, g, fctx.stop_reason(), Duration::zero());
    std::optional<json::object> args;
    if (!def.args.empty()) {
      std::string error;
      args.emplace(coerce_argument_values(def, *g.nodes[0], variables_, &error));
      if (!error.empty()) return Fail(non_null, GraphQLError{error, g.locations(), path_of(path), {}});
    }
    Defer(parent_type, parent, g, path, fctx, std::move(args), def.type, nullptr).sync = !def.async;
    return true;
  }

  // Calls the field's synchronous resolver (or the default one); what it throws lands in
  // `error`. Returns the value in place (no moves on the hot path).
  Data Resolve(const Field& def, const Type& parent_type, const Data& parent, const json::object& args,
               const FieldGroup& g, const Context& fctx, std::exception_ptr& error) {
    try {
      if (def.sync) {
        FieldContext fc{fctx, parent, args, def, parent_type, schema_, variables_, *g.nodes[0]};
        return def.sync(fc);
      }
      // A subscription event's root field is the event itself unless a resolver maps it.
      if (event_ && &parent == &root_data_) return parent;
      return DefaultResolve(parent, def.name);
    } catch (...) {
      error = std::current_exception();
      return Data();
    }
  }

  std::string CannotReturnNull(const FieldGroup& g) const {
    return "Cannot return null for non-nullable field " + ParentName() + "." + std::string(g.nodes[0]->name) + ".";
  }

  // Completes `data` of type `type` (which may be non-null) at `path`.
  bool Complete(const Type& type, const FieldGroup& g, const Data& data, const PathNode* path, const Context& ctx) {
    const bool non_null = type.is_non_null();
    const Type& t = type.nullable();
    if (const Data::Pending* p = data.if_pending()) {
      // Under the field's context: a @budget cap above this value cancels its producer too.
      Defer(*current_parent_type_, Data(), g, path, ctx, {}, &type, p->produce);
      return true;
    }
    if (data.is_null()) {
      if (non_null) return Fail(true, GraphQLError{CannotReturnNull(g), g.locations(), path_of(path), {}});
      out() += "null";
      return true;
    }
    switch (t.kind) {
      case TypeKind::list: return CompleteList(t, non_null, g, data, path, ctx);
      case TypeKind::scalar:
      case TypeKind::enum_: return CompleteLeaf(t, non_null, g, data, path);
      case TypeKind::object: return Nullable(non_null, [&] { return CompleteObject(t, g, data, path, ctx); });
      case TypeKind::interface:
      case TypeKind::union_: {
        const Type* object_type = nullptr;
        try {  // a type resolver that throws is the field's error, as in graphql-js
          object_type = ResolveAbstract(t, data);
        } catch (...) {
          return FailWith(path, non_null, g, std::current_exception(), ctx);
        }
        if (!object_type) {
          return Fail(
              non_null,
              GraphQLError{"Abstract type \"" + t.name + "\" must resolve to an Object type at runtime for field \"" +
                               ParentName() + "." + std::string(g.nodes[0]->name) + "\". Either the \"" + t.name +
                               "\" type should provide a \"resolveType\" function or each possible type "
                               "should provide an \"isTypeOf\" function.",
                           g.locations(),
                           path_of(path),
                           {}});
        }
        if (!schema_.is_possible_type(t, *object_type)) {
          return Fail(non_null, GraphQLError{"Runtime Object type \"" + object_type->name +
                                                 "\" is not a possible type for \"" + t.name + "\".",
                                             g.locations(),
                                             path_of(path),
                                             {}});
        }
        return Nullable(non_null, [&] { return CompleteObject(*object_type, g, data, path, ctx); });
      }
      default: out() += "null"; return true;
    }
  }

  // The parent type's name for messages: the nearest object's type, tracked while executing.
  std::string ParentName() const { return current_parent_type_ ? current_parent_type_->name : "?"; }

  const Type* ResolveAbstract(const Type& abstract, const Data& data) const {
    if (abstract.resolve_type) return abstract.resolve_type(data, schema_);
    if (const auto* o = data.if_object(); o && !o->type_name.empty()) return schema_.find_type(o->type_name);
    if (const json::value* j = data.if_json(); j && j->is_object()) {
      auto it = j->get_object().find("__typename");
      if (it != j->get_object().end() && it->value().is_string()) {
        const Type* t = schema_.find_type(it->value().get_string());
        return t && t->kind == TypeKind::object ? t : nullptr;
      }
    }
    return nullptr;
  }

  bool CompleteLeaf(const Type& t, bool non_null, const FieldGroup& g, const Data& data, const PathNode* path) {
    // Fast paths for the built-in scalars from plain values.
    const auto& s = data.storage();
    if (t.kind == TypeKind::scalar) {
      if (t.builtin == BuiltinScalar::string || t.builtin == BuiltinScalar::id) {
        if (const auto* v = std::get_if<std::string_view>(&s)) {
          append_json_string_to(out(), *v);
          return true;
        }
        if (const auto* v = std::get_if<std::string>(&s)) {
          append_json_string_to(out(), *v);
          return true;
        }
      }
      if (t.builtin == BuiltinScalar::int_) {
        if (const auto* v = std::get_if<std::int64_t>(&s); v && *v >= INT32_MIN && *v <= INT32_MAX) {
          AppendInt(out(), *v);
          return true;
        }
      }
      if (t.builtin == BuiltinScalar::float_) {
        if (const auto* v = std::get_if<double>(&s); v && std::isfinite(*v)) {
          AppendNumber(out(), *v);
          return true;
        }
      }
    }
    std::string error;
    std::optional<json::value> v;
    try {  // a custom scalar's serialize that throws is the field's error
      v = serialize_leaf(data, t, &error);
    } catch (...) {
      return FailWith(path, non_null, g, std::current_exception(), ctx_);
    }
    if (!v) return Fail(non_null, GraphQLError{error, g.locations(), path_of(path), {}});
    if (v->is_null()) {
      if (non_null) return Fail(true, GraphQLError{CannotReturnNull(g), g.locations(), path_of(path), {}});
      out() += "null";
      return true;
    }
    std::string text;  // a custom scalar's JSON: off the fast path
    append_json(text, *v);
    out() += text;
    return true;
  }

  bool CompleteObject(const Type& object_type, const FieldGroup& g, const Data& data, const PathNode* path,
                      const Context& ctx) {
    const Collected& fields = fields_.sub_fields(object_type, g);
    const Type* saved = current_parent_type_;
    current_parent_type_ = &object_type;
    const bool ok = ExecuteFields(object_type, data, fields, path, ctx);
    current_parent_type_ = saved;
    return ok;
  }

  bool CompleteList(const Type& list_type, bool non_null, const FieldGroup& g, const Data& data, const PathNode* path,
                    const Context& ctx) {
    // Items: a Data list, or a borrowed JSON array.
    const Data::List* items = data.if_list();
    const json::array* jitems = nullptr;
    if (!items) {
      const json::value* j = data.if_json();
      if (j && j->is_array()) jitems = &j->get_array();
    }
    if (!items && !jitems) {
      return Fail(non_null, GraphQLError{"Expected Iterable, but did not find one for field \"" + ParentName() + "." +
                                             std::string(g.nodes[0]->name) + "\".",
                                         g.locations(),
                                         path_of(path),
                                         {}});
    }
    const Type& item_type = *list_type.of_type;
    const ListItems all = items ? ListItems{items->data(), nullptr, 0, items->size()}
                                : ListItems{nullptr, jitems->data(), 0, jitems->size()};
    return Nullable(non_null, [&] {
      out().push_back('[');
      if (!CompleteItems(item_type, g, all, path, ctx)) return false;
      out().push_back(']');
      return true;
    });
  }

  // Writes `items`, each after a comma but a list's first. When the walk must yield, the
  // items left become one task (a hole here) that a later walk writes.
  bool CompleteItems(const Type& item_type, const FieldGroup& g, const ListItems& items, const PathNode* path,
                     const Context& ctx) {
    for (std::size_t k = items.from; k < items.to; ++k) {
      if (WalkLimits::due(k) && Checkpoint() == WalkLimits::Result::abandoned) [[unlikely]]
        break;
      if (limits_.slice_exhausted()) [[unlikely]] {
        tasks_.add_items(writer_.hole(item_type.is_non_null()), *current_parent_type_, g, path, ctx, item_type,
                         items.from_item(k));
        break;
      }
      if (k) out().push_back(',');
      const PathNode item_path{path, {}, static_cast<std::int64_t>(k)};
      const bool ok = items.data ? Complete(item_type, g, items.data[k], &item_path, ctx)
                                 : Complete(item_type, g, Data::json(&items.json[k]), &item_path, ctx);
      if (!ok) return false;
    }
    return true;
  }

  // Every kCheckpointEvery fields and list items: has the response outgrown its limit (then
  // nothing more is written, resolvers in flight are cancelled, and Run answers
  // RESPONSE_TOO_LARGE), and has this walk held the executor too long?
  [[gnu::noinline]] WalkLimits::Result Checkpoint() {
    if (limits_.over_response_limit(writer_.size())) tasks_.cancel_in_flight_soon();
    return limits_.check();
  }

  // ---- fields that complete later ----

  // Leaves a hole for the field (or a pending value), which its task fills.
  FieldTask& Defer(const Type& parent_type, const Data& parent, const FieldGroup& g, const PathNode* path,
                   const Context& fctx, std::optional<json::object> args, const Type* type,
                   std::shared_ptr<const Data::Producer> produce) {
    return tasks_.add(writer_.hole(type->is_non_null()), parent_type, parent, g, path, fctx, std::move(args), type,
                      std::move(produce));
  }

  void FinishStopped(FieldTask& task) {
    const Type* saved = current_parent_type_;
    current_parent_type_ = task.parent_type;
    BeginWalk(task.hole);
    FailStopped(task.path, task.type->is_non_null(), *task.group, task.ctx->stop_reason(), Duration::zero(),
                /*started=*/false);
    EndWalk();
    current_parent_type_ = saved;
    tasks_.finished();
  }

  void FinishAsync(FieldTask& task, std::exception_ptr error, Data& result) {
    const Type* saved = current_parent_type_;
    current_parent_type_ = task.parent_type;
    const FieldGroup& g = *task.group;
    BeginWalk(task.hole);
    if (error) {  // a cancellation caused by a stop reports the stop
      FailWith(task.path, task.type->is_non_null(), g, error, *task.ctx);
    } else if (task.items) {
      CompleteItems(*task.type, g, task.items, task.path, *task.ctx);  // a null in a non-null item went up
    } else if (task.fields) {
      ExecuteFieldsFrom(task.first_field, *task.parent_type, task.parent, *task.fields, task.path, *task.ctx);
    } else {
      const std::size_t deferred = tasks_.count();
      Complete(*task.type, g, result, task.path, *task.ctx);
      if (tasks_.count() != deferred) tasks_.retain(std::move(result));
    }
    EndWalk();
    current_parent_type_ = saved;
    tasks_.finished();
  }

  // FieldTasks::Host
  Data resolve(const FieldTask& t, std::exception_ptr& error) override {
    return Resolve(*t.group->def, *t.parent_type, t.parent, t.arguments(), *t.group, *t.ctx, error);
  }
  bool complete(FieldTask& t, std::exception_ptr error, Data& result) override {
    if (writer_.walking()) {  // resumed inside a walk: the walk completes the task when it ends
      late_.push_back(LateCompletion{&t, error, std::move(result)});
      return false;
    }
    try {
      FinishAsync(t, error, result);
    } catch (...) {  // out of memory, say: the execution ends with it rather than hang
      writer_.abort();
      if (!internal_error_) internal_error_ = std::current_exception();
      tasks_.finished();
    }
    return true;
  }
  void complete_stopped(FieldTask& t) override { FinishStopped(t); }
  void checkpoint() override { Checkpoint(); }

  const Schema& schema_;
  const Request& req_;
  Context ctx_;
  ExecutionOptions options_;
  bool event_ = false;
  const OperationDefinition& op_;
  const Type& root_type_;
  json::object variables_;
  FieldCollector fields_;
  ExecutionErrors errors_;
  WalkLimits limits_;
  FieldTasks tasks_;
  ResponseWriter writer_;
  std::deque<LateCompletion> late_;    // completions that arrived during a walk
  std::exception_ptr internal_error_;  // what interrupted a completion (rethrown by Run)
  Data root_data_;
  const Type* current_parent_type_ = nullptr;
};

}  // namespace

asio::awaitable<Response> execute_operation(const Schema& schema, const Request& request, Context ctx,
                                            ExecutionOptions options, bool event) {
  Response resp;
  if (!request.document) {
    resp.errors.push_back({"Must provide document.", {}, {}, {}});
    co_return resp;
  }
  std::optional<OperationSetup> setup =
      setup_operation(schema, request, options.limits, /*subscription=*/false, resp.errors);
  if (!setup) co_return resp;
  Execution ex(schema, request, std::move(ctx), options, std::move(*setup), event);
  co_return co_await ex.Run();
}

}  // namespace cutoff::graphql::internal
