#include "cutoff/graphql/fixture.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace cutoff::graphql {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

const json::value* Member(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it == o.end() ? nullptr : &it->value();
}

[[noreturn]] void Raise(const json::object& o) {
  const json::value* msg = Member(o, "$error");
  const json::value* code = Member(o, "$code");
  throw FieldError(msg && msg->is_string() ? std::string(msg->get_string()) : "error",
                   code && code->is_string() ? std::string(code->get_string()) : std::string());
}

Data Interpret(const json::value* v, const json::object& args, const Type& type, bool in_list);

// A marker evaluated later: a delay, a hang, or (inside lists) an error at the item's path.
Data Later(const json::value* v, const json::object& args, const Type& type) {
  return Data::pending([v, args, &type]() -> asio::awaitable<Data> {
    const json::object& o = v->get_object();
    if (Member(o, "$error")) Raise(o);
    asio::steady_timer timer(co_await asio::this_coro::executor);
    if (Member(o, "$hang")) {
      timer.expires_at(asio::steady_timer::time_point::max());
      co_await timer.async_wait(asio::use_awaitable);  // only a cancellation ends this
    }
    const json::value* ms = Member(o, "$delay_ms");
    timer.expires_after(std::chrono::milliseconds(ms && ms->is_number() ? ms->to_number<std::int64_t>() : 0));
    co_await timer.async_wait(asio::use_awaitable);
    co_return Interpret(Member(o, "$value"), args, type, false);
  });
}

// `type` is what `v` completes as; arrays are lists only where the type is a list (a custom
// scalar may hold any JSON).
Data Interpret(const json::value* v, const json::object& args, const Type& type, bool in_list) {
  if (!v || v->is_null()) return Data();
  if (v->is_object()) {
    const json::object& o = v->get_object();
    if (Member(o, "$error")) {
      if (in_list) return Later(v, args, type);  // an item's error belongs to the item
      Raise(o);
    }
    if (Member(o, "$delay_ms") || Member(o, "$hang")) return Later(v, args, type);
    if (const json::value* name = Member(o, "$arg")) {
      if (!name->is_string()) return Data();
      const json::value* a = Member(args, name->get_string());
      return a ? Data::json_value(*a) : Data();
    }
    return Data::json(v);
  }
  if (v->is_array() && type.nullable().is_list()) {
    const Type& item_type = *type.nullable().of_type;
    Data::List items;
    items.reserve(v->get_array().size());
    for (const json::value& item : v->get_array()) items.push_back(Interpret(&item, args, item_type, true));
    return Data::list(std::move(items));
  }
  return Data::json(v);
}

// The source stream of the subscription root field `name` from its fixture value `v`:
// {"$events": [...], "$interval_ms": N} streams the events (then fails with "$error", if
// given); "$events" holding an error marker fails the subscription; any other value is a
// stream of one event. Each event reaches the root field as {name: event}, the shape its
// ordinary fixture resolver reads, so markers inside an event are interpreted only when the
// event executes.
std::unique_ptr<EventStream> SourceStream(const json::value* v, const std::string& name) {
  auto wrap = [&](const json::value* event) {
    json::object root;
    root[name] = event ? *event : json::value();
    return Data::json_value(json::value(std::move(root)));
  };
  const json::value* events = v && v->is_object() ? Member(v->get_object(), "$events") : nullptr;
  if (!events) return events_from({wrap(v)});
  const json::object& o = v->get_object();
  if (events->is_object() && Member(events->get_object(), "$error")) Raise(events->get_object());
  if (!events->is_array()) throw FieldError("fixture: \"$events\" must be an array");
  std::vector<Data> list;
  list.reserve(events->get_array().size());
  for (const json::value& e : events->get_array()) list.push_back(wrap(&e));
  const json::value* ms = Member(o, "$interval_ms");
  const auto interval = std::chrono::milliseconds(ms && ms->is_number() ? ms->to_number<std::int64_t>() : 0);
  std::exception_ptr end_error;
  if (Member(o, "$error")) {
    try {
      Raise(o);
    } catch (...) {
      end_error = std::current_exception();
    }
  }
  return std::make_unique<ListEventStream>(std::move(list), interval, end_error);
}

}  // namespace

void install_fixture_resolvers(Schema& schema) {
  if (const Type* root = schema.subscription_type()) {
    for (const Field& f : root->fields) {
      if (f.subscribe) continue;
      schema.subscribe(root->name, f.name,
                       [name = f.name](FieldContext& fc) -> asio::awaitable<std::unique_ptr<EventStream>> {
                         const json::value* parent = fc.parent.if_json();
                         const json::value* v = parent && parent->is_object() ? Member(parent->get_object(), name)
                                                                               : nullptr;
                         co_return SourceStream(v, name);
                       });
    }
  }
  for (const auto& type : schema.types()) {
    if (type->kind != TypeKind::object || type->name.rfind("__", 0) == 0) continue;
    for (const Field& f : type->fields) {
      if (f.sync || f.async) continue;
      schema.resolve(type->name, f.name, [name = f.name](FieldContext& fc) -> Data {
        const json::value* parent = fc.parent.if_json();
        if (!parent || !parent->is_object()) return Data();
        return Interpret(Member(parent->get_object(), name), fc.args, *fc.field.type, false);
      });
    }
  }
}

}  // namespace cutoff::graphql
