#include "cutoff/sql/pg/internal/pg_values.hpp"

#include <charconv>
#include <cstdint>
#include <cstring>

namespace cutoff::sql::internal {
namespace {

// Type OIDs from pg_type.h (stable across versions).
constexpr Oid kBool = 16, kBytea = 17, kInt8 = 20, kInt2 = 21, kInt4 = 23, kOid = 26, kFloat4 = 700,
              kFloat8 = 701, kJson = 114, kJsonb = 3802, kNumeric = 1700;

// How a column of `type` is written as JSON (Row::to_json): booleans as true/false, json and
// jsonb embedded, numeric as exact numbers, arrays of the built-in types as JSON arrays.
ColumnForm FormFor(Oid type) {
  switch (type) {
    case kBool: return {JsonForm::boolean};
    case kJson:
    case kJsonb: return {JsonForm::json};
    case kNumeric: return {JsonForm::number};
    case 1000: return {JsonForm::array, JsonForm::boolean};  // bool[]
    case 1005:                                                // int2[]
    case 1007:                                                // int4[]
    case 1016:                                                // int8[]
    case 1028:                                                // oid[]
    case 1021:                                                // float4[]
    case 1022:                                                // float8[]
    case 1231: return {JsonForm::array, JsonForm::number};    // numeric[]
    case 199:                                                 // json[]
    case 3807: return {JsonForm::array, JsonForm::json};      // jsonb[]
    case 1009:                                                // text[]
    case 1015:                                                // varchar[]
    case 1014:                                                // bpchar[]
    case 1003:                                                // name[]
    case 2951:                                                // uuid[]
    case 1182:                                                // date[]
    case 1115:                                                // timestamp[]
    case 1185: return {JsonForm::array, JsonForm::value};     // timestamptz[]
    default: return {};
  }
}

Value ToValue(PGresult* r, int row, int col, Oid type) {
  if (PQgetisnull(r, row, col)) return Value();
  const char* text = PQgetvalue(r, row, col);
  const int len = PQgetlength(r, row, col);
  switch (type) {
    case kBool: return Value(std::int64_t{text[0] == 't' ? 1 : 0});
    case kInt2:
    case kInt4:
    case kInt8:
    case kOid: {
      std::int64_t v = 0;
      auto res = std::from_chars(text, text + len, v);
      if (res.ec == std::errc()) return Value(v);
      break;
    }
    case kFloat4:
    case kFloat8: {
      double v = 0;
      auto res = std::from_chars(text, text + len, v);
      if (res.ec == std::errc()) return Value(v);
      break;
    }
    case kBytea: {
      std::size_t n = 0;
      unsigned char* bytes = PQunescapeBytea(reinterpret_cast<const unsigned char*>(text), &n);
      if (bytes) {
        Blob b{std::string(reinterpret_cast<char*>(bytes), n)};
        PQfreemem(bytes);
        return Value(std::move(b));
      }
      break;
    }
    default: break;
  }
  return Value(std::string(text, static_cast<std::size_t>(len)));
}

}  // namespace

Result ToResult(PGresult* r) {
  const int nf = PQnfields(r);
  const int nt = PQntuples(r);
  auto names = std::make_shared<std::vector<std::string>>();
  std::vector<Oid> types;
  auto forms = std::make_shared<std::vector<ColumnForm>>();
  names->reserve(static_cast<std::size_t>(nf));
  bool any_form = false;
  for (int c = 0; c < nf; ++c) {
    names->emplace_back(PQfname(r, c));
    types.push_back(PQftype(r, c));
    forms->push_back(FormFor(types.back()));
    any_form = any_form || forms->back() != ColumnForm{};
  }
  const ColumnForms shared_forms = any_form ? ColumnForms(std::move(forms)) : nullptr;
  std::vector<Row> rows;
  rows.reserve(static_cast<std::size_t>(nt));
  for (int i = 0; i < nt; ++i) {
    std::vector<Value> values;
    values.reserve(static_cast<std::size_t>(nf));
    for (int c = 0; c < nf; ++c) values.push_back(ToValue(r, i, c, types[static_cast<std::size_t>(c)]));
    rows.emplace_back(names, std::move(values), shared_forms);
  }
  std::int64_t affected = 0;
  const char* tuples = PQcmdTuples(r);
  if (tuples && *tuples) std::from_chars(tuples, tuples + std::strlen(tuples), affected);
  return Result(std::move(names), std::move(rows), affected);
}

PgParams::PgParams(std::span<const Value> params) {
  const std::size_t n = params.size();
  text_.resize(n);
  values_.resize(n);
  lengths_.resize(n);
  formats_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Value& v = params[i];
    if (v.is_null()) {
      values_[i] = nullptr;
      continue;
    }
    if (auto* b = v.if_blob()) {
      values_[i] = b->bytes.data();
      lengths_[i] = static_cast<int>(b->bytes.size());
      formats_[i] = 1;
      continue;
    }
    if (auto* s = v.if_text()) {
      values_[i] = s->c_str();
      continue;
    }
    if (auto* n64 = v.if_int()) {
      text_[i] = std::to_string(*n64);
    } else {
      char buf[32];
      auto res = std::to_chars(buf, buf + sizeof buf, *v.if_double());
      text_[i].assign(buf, res.ptr);
    }
    values_[i] = text_[i].c_str();
  }
}

}  // namespace cutoff::sql::internal
