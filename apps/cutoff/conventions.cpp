#include "conventions.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/json/stream_parser.hpp>
#include <boost/system/system_error.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

#include "cutoff/core/error.hpp"
#include "cutoff/http/server.hpp"

namespace cutoff::cli {
namespace {

bool stdin_taken = false;

std::optional<Input> ReadStdin(std::string_view option, std::string* error) {
  if (stdin_taken) {
    *error = std::string(option) + ": standard input was already read by another option";
    return std::nullopt;
  }
  stdin_taken = true;
  Input in{std::string(std::istreambuf_iterator<char>(std::cin), {}), "standard input"};
  if (std::cin.bad()) {
    *error = "cannot read " + std::string(option) + " from standard input";
    return std::nullopt;
  }
  return in;
}

std::optional<Input> ReadPath(std::string_view option, const std::string& path, std::string* error) {
  if (path.empty()) {
    *error = std::string(option) + ": '@' must be followed by a file name";
    return std::nullopt;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    *error = "cannot read " + std::string(option) + " file " + path + ": it is a directory";
    return std::nullopt;
  }
  errno = 0;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    const int e = errno;
    *error = "cannot read " + std::string(option) + " file " + path + ": " +
             (e ? std::strerror(e) : "cannot open it");
    return std::nullopt;
  }
  Input in{std::string(std::istreambuf_iterator<char>(file), {}), path};
  if (file.bad()) {
    *error = "cannot read " + std::string(option) + " file " + path;
    return std::nullopt;
  }
  return in;
}

std::string_view JsonKind(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::array: return "an array";
    case boost::json::kind::string: return "a string";
    case boost::json::kind::bool_: return "a boolean";
    case boost::json::kind::null: return "null";
    case boost::json::kind::object: return "an object";
    default: return "a number";
  }
}

}  // namespace

std::optional<Input> ReadInput(std::string_view option, const std::string& value, std::string* error) {
  if (value == "-" || value == "@-") return ReadStdin(option, error);
  if (value.starts_with('@')) return ReadPath(option, value.substr(1), error);
  return Input{value, std::string(option)};
}

std::optional<Input> ReadFileInput(std::string_view option, const std::string& value, std::string* error) {
  if (value == "-" || value == "@-") return ReadStdin(option, error);
  return ReadPath(option, value.starts_with('@') ? value.substr(1) : value, error);
}

std::string FileHint(std::string_view option, const std::string& value) {
  if (value.empty() || value.starts_with('@') || value.find('\n') != std::string::npos) return {};
  std::error_code ec;
  if (!std::filesystem::is_regular_file(value, ec)) return {};
  return std::string(option) + " takes the text itself; to read the file " + value + ", write " +
         std::string(option) + " @" + value;
}

std::string Where(const Input& input, std::size_t offset) {
  offset = std::min(offset, input.text.size());
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (input.text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return input.source + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::optional<boost::json::value> ParseJson(const Input& input, std::string* error) {
  boost::json::stream_parser parser;
  boost::system::error_code ec;
  std::size_t consumed = parser.write(input.text.data(), input.text.size(), ec);
  if (!ec) parser.finish(ec);
  if (ec) {
    if (ec == boost::json::error::incomplete || ec == boost::json::error::exponent_overflow) consumed = input.text.size();
    *error = Where(input, consumed) + ": invalid JSON: " + ec.message();
    return std::nullopt;
  }
  return parser.release();
}

std::optional<boost::json::object> ParseJsonObject(const Input& input, std::string_view what, std::string* error) {
  std::optional<boost::json::value> v = ParseJson(input, error);
  if (!v) return std::nullopt;
  if (!v->is_object()) {
    *error = (input.source == what ? std::string(what) : input.source + ": " + std::string(what)) +
             " must be a JSON object, not " + std::string(JsonKind(*v));
    return std::nullopt;
  }
  return std::move(v->as_object());
}

CLI::Option* AddBudgetOption(CLI::App* app, std::int64_t& ms, const std::string& help,
                             std::initializer_list<const char*> deprecated) {
  CLI::Option* budget = app->add_option("--budget-ms", ms, help)->check(Number<std::int64_t>(0, 86'400'000));
  std::vector<CLI::Option*> old_options;
  for (const char* name : deprecated) {
    const std::string old = name;
    old_options.push_back(app->add_option(old, ms, "Deprecated name of --budget-ms")
                              ->check(Number<std::int64_t>(0, 86'400'000))
                              ->group(kDeprecatedGroup)  // HelpFormatter leaves it out
                              ->each([old](const std::string&) {
                                std::fprintf(stderr, "cutoff: %s is deprecated; use --budget-ms\n", old.c_str());
                              }));
  }
  // Two names for one value is a mistake, not a choice of the last one.
  app->parse_complete_callback([budget, old_options] {
    const CLI::Option* given = budget->count() > 0 ? budget : nullptr;
    for (const CLI::Option* old : old_options) {
      if (old->count() == 0) continue;
      if (given) throw CLI::ValidationError(old->get_name(), "give the budget once, as --budget-ms");
      given = old;
    }
  });
  return budget;
}

std::optional<std::uint16_t> Listen(http::Server& server, std::string_view command, const std::string& address,
                                    int port, int* exit_code) {
  const std::string where = address + ":" + std::to_string(port);
  boost::system::error_code ec;
  (void)boost::asio::ip::make_address(address, ec);
  if (ec) {
    std::fprintf(stderr, "cutoff %.*s: --address: '%s' is not an IP address (e.g. 127.0.0.1 or ::1)\n",
                 static_cast<int>(command.size()), command.data(), address.c_str());
    *exit_code = cli_exit_code(ErrorCode::invalid_argument);
    return std::nullopt;
  }
  std::string why;
  try {
    return server.listen(address, static_cast<std::uint16_t>(port));
  } catch (const boost::system::system_error& e) {
    why = e.code().message();  // what() would add the library's source location
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!why.empty()) why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
  std::fprintf(stderr, "cutoff %.*s: cannot listen on %s: %s\n", static_cast<int>(command.size()), command.data(),
               where.c_str(), why.c_str());
  *exit_code = cli_exit_code(ErrorCode::unavailable);
  return std::nullopt;
}

std::string HelpFormatter::make_group(std::string group, bool is_positional,
                                      std::vector<const CLI::Option*> opts) const {
  if (group == kDeprecatedGroup) return {};
  return CLI::Formatter::make_group(std::move(group), is_positional, std::move(opts));
}

}  // namespace cutoff::cli
