// Data: what resolvers return and what child fields receive as their parent.
//
//   Data::from(42);                          // Int
//   Data::from("widget");                    // String (owned)
//   Data::borrow(item.name);                 // String viewed, not copied
//   Data::json(&fixture["item"]);            // borrows a boost::json value (the default
//                                            // resolver reads its members by field name)
//   Data::object(&bin);                      // a C++ object; child resolvers use parent.as<Bin>()
//   Data::object(std::make_shared<Bin>(..)); // the same, owned
//   Data::list(std::move(items));            // a list of Data
//   Data::pending([]() -> asio::awaitable<Data> { ... });  // produced later (e.g. one list
//                                            // item at a time); completed concurrently
//
// Borrowed JSON and object pointers must outlive the execution that uses them.
#ifndef CUTOFF_GRAPHQL_DATA_HPP_
#define CUTOFF_GRAPHQL_DATA_HPP_

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

namespace cutoff::graphql {

class Data {
 public:
  struct Object {
    const void* ptr = nullptr;
    const std::type_info* type = nullptr;
    std::shared_ptr<const void> keep;  // set when the object is owned
    std::string_view type_name;        // optional: the GraphQL type, for abstract fields
  };
  using List = std::vector<Data>;
  using Producer = std::function<boost::asio::awaitable<Data>()>;
  struct Pending {
    std::shared_ptr<const Producer> produce;
  };
  using OwnedJson = std::shared_ptr<const boost::json::value>;
  using Storage = std::variant<std::monostate, bool, std::int64_t, double, std::string, const boost::json::value*,
                               Object, List, OwnedJson, Pending, std::string_view>;

  Data() noexcept = default;  // null
  static Data null() noexcept { return Data(); }
  static Data from(bool v) noexcept { return Data(std::in_place_type<bool>, v); }
  template <typename I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
  static Data from(I v) noexcept {
    return Data(std::in_place_type<std::int64_t>, static_cast<std::int64_t>(v));
  }
  static Data from(double v) noexcept { return Data(std::in_place_type<double>, v); }
  static Data from(std::string v) noexcept { return Data(std::in_place_type<std::string>, std::move(v)); }
  static Data from(std::string_view v) { return Data(std::in_place_type<std::string>, v); }
  static Data from(const char* v) { return Data(std::in_place_type<std::string>, v); }
  // A string that outlives the execution (e.g. a member of an object the resolver returns a
  // pointer to): no copy is made.
  static Data borrow(std::string_view v) noexcept { return Data(std::in_place_type<std::string_view>, v); }
  const std::string_view* if_view() const noexcept { return std::get_if<std::string_view>(&v_); }
  // Borrows `v` (null pointer: null).
  static Data json(const boost::json::value* v) noexcept {
    return v ? Data(std::in_place_type<const boost::json::value*>, v) : Data();
  }
  template <typename T>
  static Data object(const T* p, std::string_view type_name = {}) noexcept {
    return p ? Data(std::in_place_type<Object>, Object{p, &typeid(T), nullptr, type_name}) : Data();
  }
  template <typename T>
  static Data object(std::shared_ptr<const T> p, std::string_view type_name = {}) noexcept {
    if (!p) return Data();
    const T* raw = p.get();
    return Data(std::in_place_type<Object>, Object{raw, &typeid(T), std::move(p), type_name});
  }
  template <typename T>
  static Data object(std::shared_ptr<T> p, std::string_view type_name = {}) noexcept {
    return object(std::shared_ptr<const T>(std::move(p)), type_name);
  }
  static Data list(List items) noexcept { return Data(std::in_place_type<List>, std::move(items)); }
  // Owns a JSON value (for values computed during execution).
  static Data json_value(boost::json::value v) {
    return Data(std::in_place_type<OwnedJson>, std::make_shared<const boost::json::value>(std::move(v)));
  }
  // A value that is produced asynchronously; the executor awaits it like an asynchronous
  // resolver (cancellable, at this value's own path).
  static Data pending(Producer produce) {
    return Data(std::in_place_type<Pending>, Pending{std::make_shared<const Producer>(std::move(produce))});
  }

  // A borrowed JSON null counts as null.
  bool is_null() const noexcept {
    if (v_.index() == 0) return true;
    if (const boost::json::value* j = if_json()) return j->is_null();
    return false;
  }
  const Storage& storage() const noexcept { return v_; }
  Storage& mutable_storage() noexcept { return v_; }
  const boost::json::value* if_json() const noexcept {
    if (auto* j = std::get_if<const boost::json::value*>(&v_)) return *j;
    if (auto* o = std::get_if<OwnedJson>(&v_)) return o->get();
    return nullptr;
  }
  const Pending* if_pending() const noexcept { return std::get_if<Pending>(&v_); }
  const Object* if_object() const noexcept { return std::get_if<Object>(&v_); }
  const List* if_list() const noexcept { return std::get_if<List>(&v_); }

  // The object as T, or nullptr when it holds something else.
  template <typename T>
  const T* as() const noexcept {
    auto* o = if_object();
    return o && *o->type == typeid(T) ? static_cast<const T*>(o->ptr) : nullptr;
  }

 private:
  // Each factory builds its alternative in place: no variant is moved (or destroyed) on
  // the way, which the executor's per-field cost notices.
  template <typename T, typename... Args>
  explicit Data(std::in_place_type_t<T> t, Args&&... args) noexcept(std::is_nothrow_constructible_v<T, Args...>)
      : v_(t, std::forward<Args>(args)...) {}
  Storage v_;
};

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_DATA_HPP_
