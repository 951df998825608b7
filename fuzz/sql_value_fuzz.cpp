// Fuzzes typed row access and JSON output over arbitrary database text and bytes: the
// conversions (text to integer, real, bool) must either succeed losslessly or throw
// cutoff::Error(invalid_argument), and the JSON line must be well formed (checked by a
// small structural scan: balanced quotes, no raw control characters).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "cutoff/core/error.hpp"
#include "cutoff/sql/value.hpp"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

template <typename T>
void TryGet(const cutoff::sql::Row& row, std::size_t i) {
  try {
    (void)row.get<T>(i);
  } catch (const cutoff::Error& e) {
    Require(e.code() == cutoff::ErrorCode::invalid_argument);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto names = std::make_shared<std::vector<std::string>>(std::vector<std::string>{text, "b", "n"});
  cutoff::sql::Row row(names, {cutoff::sql::Value(text), cutoff::sql::Value(cutoff::sql::Blob{text}),
                               cutoff::sql::Value()});
  TryGet<std::int64_t>(row, 0);
  TryGet<int>(row, 0);
  TryGet<double>(row, 0);
  TryGet<bool>(row, 0);
  TryGet<std::optional<std::int64_t>>(row, 2);
  TryGet<std::string>(row, 1);
  const std::string json = row.to_json();
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(json[i]);
    Require(c >= 0x20);
    if (in_string && c == '\\') {
      ++i;
      continue;
    }
    if (c == '"') in_string = !in_string;
  }
  Require(!in_string && json.front() == '{' && json.back() == '}');
  return 0;
}
