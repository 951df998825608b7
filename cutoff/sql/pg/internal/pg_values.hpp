// cutoff's sql values on libpq's wire: a result (text format) read into a Result whose rows
// keep what the column types say about JSON, and statement parameters encoded into the
// arrays PQsendQueryParams takes.
//
// Integers, reals and booleans become numbers (a bool is 0/1), bytea a Blob, every other type
// its text. Parameters go as text, except blobs, which go binary and need no escaping.
//
//   cutoff::sql::internal::PgParams p(params);
//   PQsendQueryParams(conn, sql, p.size(), nullptr, p.values(), p.lengths(), p.formats(), 0);
//   cutoff::sql::internal::PgResult r(PQgetResult(conn));
//   cutoff::sql::Result result = cutoff::sql::internal::ToResult(r.get());
#ifndef CUTOFF_SQL_PG_INTERNAL_PG_VALUES_HPP_
#define CUTOFF_SQL_PG_INTERNAL_PG_VALUES_HPP_

#include <libpq-fe.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cutoff/sql/value.hpp"

namespace cutoff::sql::internal {

struct PgResultDeleter {
  void operator()(PGresult* r) const noexcept { PQclear(r); }
};
// A PGresult, cleared with PQclear.
using PgResult = std::unique_ptr<PGresult, PgResultDeleter>;

// The rows of a successful result (none for a command) and the rows it changed. Each column's
// type sets its ColumnForm: bool, json/jsonb, numeric and arrays of the built-in types keep
// their JSON shape in Row::to_json.
Result ToResult(PGresult* r);

// Parameters as libpq wants them: NULL as a null pointer, blobs binary, everything else as
// text. Points into `params`, which must outlive it.
class PgParams {
 public:
  explicit PgParams(std::span<const Value> params);

  int size() const noexcept { return static_cast<int>(values_.size()); }
  const char* const* values() const noexcept { return values_.data(); }
  const int* lengths() const noexcept { return lengths_.data(); }  // read for binary ones only
  const int* formats() const noexcept { return formats_.data(); }  // 0 text, 1 binary

 private:
  std::vector<std::string> text_;  // numbers, written out
  std::vector<const char*> values_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
};

}  // namespace cutoff::sql::internal

#endif  // CUTOFF_SQL_PG_INTERNAL_PG_VALUES_HPP_
