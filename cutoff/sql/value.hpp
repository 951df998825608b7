// Values, rows and results: what statements take and return, independent of the driver.
//
//   std::vector<cutoff::sql::Value> params{std::int64_t{42}, "widget"};
//   cutoff::sql::Result r = co_await conn.execute(ctx, "select id, name from item where id = $1", params);
//   for (const auto& row : r.rows()) {
//     std::int64_t id = row.get<std::int64_t>(0);
//     std::optional<std::string> name = row.get<std::optional<std::string>>("name");
//   }
//
// Typed access converts where the conversion is lossless (an integer read as double, a
// numeric text read as an integer) and throws cutoff::Error(invalid_argument) otherwise,
// naming the column and what it held.
#ifndef CUTOFF_SQL_VALUE_HPP_
#define CUTOFF_SQL_VALUE_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace cutoff::sql {

// Bytes of a BLOB/bytea value (distinct from text).
struct Blob {
  std::string bytes;
  friend bool operator==(const Blob&, const Blob&) = default;
};

// One SQL value. Booleans are integers 0/1 (SQLite has no boolean; PostgreSQL `bool` reads as 0/1,
// and its column's JsonForm writes it as true/false).
class Value {
 public:
  using Storage = std::variant<std::monostate, std::int64_t, double, std::string, Blob>;

  Value() noexcept = default;  // NULL
  Value(std::nullptr_t) noexcept {}
  template <typename I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool> && !std::is_same_v<I, char>)
  Value(I v) noexcept : v_(static_cast<std::int64_t>(v)) {}
  Value(bool v) noexcept : v_(std::int64_t{v ? 1 : 0}) {}
  Value(double v) noexcept : v_(v) {}
  Value(std::string v) noexcept : v_(std::move(v)) {}
  Value(std::string_view v) : v_(std::string(v)) {}
  Value(const char* v) : v_(std::string(v)) {}
  Value(Blob v) noexcept : v_(std::move(v)) {}

  bool is_null() const noexcept { return v_.index() == 0; }
  const std::int64_t* if_int() const noexcept { return std::get_if<std::int64_t>(&v_); }
  const double* if_double() const noexcept { return std::get_if<double>(&v_); }
  const std::string* if_text() const noexcept { return std::get_if<std::string>(&v_); }
  const Blob* if_blob() const noexcept { return std::get_if<Blob>(&v_); }
  const Storage& storage() const noexcept { return v_; }

  // "null", "integer", "real", "text" or "blob".
  std::string_view type_name() const noexcept;
  // Appends the value as JSON (blobs as base64 strings, non-finite reals as null).
  void append_json(std::string& out) const;

  friend bool operator==(const Value&, const Value&) = default;

 private:
  Storage v_;
};

namespace internal {
[[noreturn]] void ThrowConversion(std::string_view column, const Value& v, std::string_view wanted);
std::optional<std::int64_t> ToInt(const Value& v) noexcept;
std::optional<double> ToDouble(const Value& v) noexcept;
}  // namespace internal

// Column names shared by every row of one result.
using Columns = std::shared_ptr<const std::vector<std::string>>;

// How Row::to_json writes a column whose database type says more than its Value holds (set by
// the PostgreSQL driver from the column's type; SQLite has none of these types).
enum class JsonForm : std::uint8_t {
  value,    // the Value as it is: integer, real, string, blob as base64, null
  boolean,  // bool, read as 0/1: false/true
  json,     // json/jsonb, read as text: the JSON itself, not a string holding it
  number,   // numeric, read as text: a JSON number with every digit kept (NaN, Infinity: strings)
  array,    // an array, read as PostgreSQL's text form ({1,2}, {"a b",NULL}, {{1},{2}}): a JSON
            // array, nested the same way, each element in `element`'s form (value: a string)
};
struct ColumnForm {
  JsonForm form = JsonForm::value;
  JsonForm element = JsonForm::value;  // for arrays
  friend bool operator==(const ColumnForm&, const ColumnForm&) = default;
};
// One per column, shared by every row of one result; null: every column is JsonForm::value.
using ColumnForms = std::shared_ptr<const std::vector<ColumnForm>>;

class Row {
 public:
  Row(Columns columns, std::vector<Value> values, ColumnForms forms = nullptr) noexcept
      : columns_(std::move(columns)), values_(std::move(values)), forms_(std::move(forms)) {}

  std::size_t size() const noexcept { return values_.size(); }
  const Value& operator[](std::size_t i) const { return values_.at(i); }
  const Value& operator[](std::string_view column) const { return values_.at(index_of(column)); }
  std::span<const Value> values() const noexcept { return values_; }
  const std::vector<std::string>& columns() const noexcept { return *columns_; }

  // Index of `column`; throws invalid_argument when there is no such column.
  std::size_t index_of(std::string_view column) const;

  // T is std::int64_t (or another integer), double, bool, std::string, Blob, or
  // std::optional<T> of those (NULL reads as nullopt; a plain T throws on NULL).
  template <typename T>
  T get(std::size_t i) const {
    return Convert<T>(name_of(i), (*this)[i]);
  }
  template <typename T>
  T get(std::string_view column) const {
    return Convert<T>(column, (*this)[column]);
  }
  bool is_null(std::size_t i) const { return (*this)[i].is_null(); }

  // {"col":value,...}, each value in its column's JsonForm.
  std::string to_json() const;

 private:
  template <typename T>
  struct IsOptional : std::false_type {};
  template <typename T>
  struct IsOptional<std::optional<T>> : std::true_type {};

  std::string_view name_of(std::size_t i) const noexcept {
    return i < columns_->size() ? std::string_view((*columns_)[i]) : std::string_view("?");
  }

  template <typename T>
  static T Convert(std::string_view column, const Value& v) {
    if constexpr (IsOptional<T>::value) {
      if (v.is_null()) return std::nullopt;
      return Convert<typename T::value_type>(column, v);
    } else if constexpr (std::is_same_v<T, bool>) {
      auto i = internal::ToInt(v);
      if (!i || (*i != 0 && *i != 1)) internal::ThrowConversion(column, v, "bool");
      return *i == 1;
    } else if constexpr (std::is_integral_v<T>) {
      auto i = internal::ToInt(v);
      if (!i || !std::in_range<T>(*i)) internal::ThrowConversion(column, v, "integer");
      return static_cast<T>(*i);
    } else if constexpr (std::is_floating_point_v<T>) {
      auto d = internal::ToDouble(v);
      if (!d) internal::ThrowConversion(column, v, "real");
      return static_cast<T>(*d);
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (auto* s = v.if_text()) return *s;
      internal::ThrowConversion(column, v, "text");
    } else if constexpr (std::is_same_v<T, Blob>) {
      if (auto* b = v.if_blob()) return *b;
      internal::ThrowConversion(column, v, "blob");
    } else {
      static_assert(sizeof(T) == 0, "unsupported type for Row::get");
    }
  }

  Columns columns_;
  std::vector<Value> values_;
  ColumnForms forms_;
};

// The outcome of one statement: its rows (if any) and how many rows it changed.
class Result {
 public:
  Result() : columns_(std::make_shared<std::vector<std::string>>()) {}
  Result(Columns columns, std::vector<Row> rows, std::int64_t rows_affected) noexcept
      : columns_(std::move(columns)), rows_(std::move(rows)), rows_affected_(rows_affected) {}

  const std::vector<std::string>& columns() const noexcept { return *columns_; }
  const std::vector<Row>& rows() const noexcept { return rows_; }
  bool empty() const noexcept { return rows_.empty(); }
  std::size_t size() const noexcept { return rows_.size(); }
  const Row& operator[](std::size_t i) const { return rows_.at(i); }
  // Rows inserted, updated or deleted (0 for queries).
  std::int64_t rows_affected() const noexcept { return rows_affected_; }

 private:
  Columns columns_;
  std::vector<Row> rows_;
  std::int64_t rows_affected_ = 0;
};

}  // namespace cutoff::sql

#endif  // CUTOFF_SQL_VALUE_HPP_
