// Fuzzes database URL parsing: cutoff's own dispatch (sqlite:/postgresql:) and, for
// PostgreSQL URLs, libpq's connection-string parser as the driver calls it. Every input must
// either parse or fail with cutoff::Error(invalid_argument); nothing else may escape.
#include <libpq-fe.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cutoff/core/error.hpp"
#include "cutoff/sql/connect.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  try {
    cutoff::sql::DatabaseUrl url = cutoff::sql::parse_database_url(input);
    if (url.target.empty()) std::abort();
    if (url.driver == cutoff::sql::Driver::postgresql) {
      char* err = nullptr;
      PQconninfoOption* opts = PQconninfoParse(url.target.c_str(), &err);
      if (opts) PQconninfoFree(opts);
      if (err) PQfreemem(err);
    }
  } catch (const cutoff::Error& e) {
    if (e.code() != cutoff::ErrorCode::invalid_argument) std::abort();
  }
  return 0;
}
