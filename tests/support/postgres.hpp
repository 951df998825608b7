// Test support: the URL of the throwaway PostgreSQL server that CTest's `postgres` fixture
// started (scripts/pg-test-server), from CUTOFF_TEST_PG_URL or the file named by
// CUTOFF_TEST_PG_URL_FILE. Returns empty when neither is set.
#ifndef CUTOFF_TESTS_SUPPORT_POSTGRES_HPP_
#define CUTOFF_TESTS_SUPPORT_POSTGRES_HPP_

#include <cstdlib>
#include <fstream>
#include <string>

namespace cutoff::test_support {

inline std::string TestPostgresUrl() {
  if (const char* url = std::getenv("CUTOFF_TEST_PG_URL"); url && *url) return url;
  if (const char* file = std::getenv("CUTOFF_TEST_PG_URL_FILE"); file && *file) {
    std::ifstream in(file);
    std::string url;
    std::getline(in, url);
    return url;
  }
  return {};
}

}  // namespace cutoff::test_support

#endif  // CUTOFF_TESTS_SUPPORT_POSTGRES_HPP_
