// Fuzzes the lab report page renderer. Input: any bytes; those that parse as JSON are
// rendered. Rendering must not crash, must give a whole page, and nothing from the document
// may break out of where it is written: the page always holds exactly one <script> (the
// embedded results, which do not run), one </script>, one </style> and no comment.
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lab/report_html.hpp"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

std::size_t Count(std::string_view haystack, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string_view::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  boost::system::error_code ec;
  const boost::json::value results = boost::json::parse(input, ec);
  if (ec) return 0;

  const std::string page = cutoff::lab::RenderLabReport(results);
  Require(page.starts_with("<!DOCTYPE html>\n"));
  Require(page.ends_with("</html>\n"));
  Require(Count(page, "<script") == 1);
  Require(Count(page, "</script") == 1);
  Require(Count(page, "</style") == 1);
  Require(Count(page, "<!--") == 0);
  Require(page == cutoff::lab::RenderLabReport(results));  // deterministic
  return 0;
}
