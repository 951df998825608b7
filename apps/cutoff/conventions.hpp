// The conventions every `cutoff` command follows, in one place (see docs/cli.md):
//
// - Documents and JSON (graphql exec --query/--variables, ops call --args, sql exec's
//   statements) are inline text by default; "@PATH" reads the file PATH; "-" or "@-" reads
//   standard input (curl's convention). Options that name a file (--schema, --fixture) take
//   PATH or "@PATH", and "-" for standard input. Standard input can be read once per command.
// - The caller's time budget for a command or request is --budget-ms, the name of the
//   Deadline-Budget-Ms header; --deadline-ms and --timeout-ms are hidden, deprecated aliases.
// - Numbers are checked with their option named: "--port: 'abc' is not a number".
// - Exit codes come from the error table (cutoff/core/error.hpp): 0 ok, 2 invalid input or
//   usage, 6 deadline_exceeded, 130/143 SIGINT/SIGTERM, 1 anything else, including an address
//   that cannot be bound (unavailable).
//
//   std::string error;
//   std::optional<Input> query = ReadInput("--query", opts.query, &error);
//   if (!query) return Fail(error);
//   std::optional<boost::json::object> vars = ParseJsonObject(*variables, "--variables", &error);
#ifndef CUTOFF_APPS_CUTOFF_CONVENTIONS_HPP_
#define CUTOFF_APPS_CUTOFF_CONVENTIONS_HPP_

#include <CLI/CLI.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace cutoff::http {
class Server;
}

namespace cutoff::cli {

// For help texts: how an option that takes a document or JSON reads it.
inline constexpr const char* kInputHelp = "inline text, @FILE reads FILE, - reads standard input";
// For help texts: how an option that names a file reads it.
inline constexpr const char* kFileHelp = "PATH (or @PATH), - reads standard input";

struct Input {
  std::string text;
  std::string source;  // for messages: the file's path, "standard input", or the option's name
};

// An option's value as a document: inline, @PATH or -/@-. nullopt with *error set when the
// file or standard input cannot be read ("cannot read --query file q.graphql: No such file...").
std::optional<Input> ReadInput(std::string_view option, const std::string& value, std::string* error);
// An option's value as a file: PATH or @PATH, or -/@- for standard input.
std::optional<Input> ReadFileInput(std::string_view option, const std::string& value, std::string* error);

// When an inline value that failed to parse names an existing file: a hint to write @PATH
// ("--query takes the text itself; to read the file q.graphql, write --query @q.graphql").
// Empty otherwise.
std::string FileHint(std::string_view option, const std::string& value);

// "SOURCE:LINE:COLUMN" for byte `offset` of `input` (1-based, as compilers print them).
std::string Where(const Input& input, std::size_t offset);

// `input` as JSON. On failure *error says what is wrong and where ("f.json:2:13: invalid
// JSON: syntax error").
std::optional<boost::json::value> ParseJson(const Input& input, std::string* error);
// The same, required to be an object; `what` names it ("the fixture", "--variables"):
// "f.json: the fixture must be a JSON object, not an array".
std::optional<boost::json::object> ParseJsonObject(const Input& input, std::string_view what, std::string* error);

// A number within [lo, hi]; a value that is none says so ("'abc' is not a number",
// "'1.5' is not a whole number", "'70000' is out of range: 0 to 65535").
template <typename T>
CLI::Validator Number(T lo, T hi) {
  std::ostringstream desc;
  desc << (std::is_integral_v<T> ? "INT" : "NUMBER") << " in [" << lo << " - " << hi << "]";
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        long double v = 0;
        if (!CLI::detail::lexical_cast(s, v) || std::isnan(v)) return "'" + s + "' is not a number";
        if constexpr (std::is_integral_v<T>) {
          if (std::trunc(v) != v) return "'" + s + "' is not a whole number";
        }
        T parsed{};
        if (v < static_cast<long double>(lo) || v > static_cast<long double>(hi) ||
            !CLI::detail::lexical_cast(s, parsed) || parsed < lo || parsed > hi) {
          std::ostringstream out;
          out << "'" << s << "' is out of range: " << lo << " to " << hi;
          return out.str();
        }
        return {};
      },
      desc.str());
}

// Options in this group still work but are left out of --help (HelpFormatter).
inline constexpr const char* kDeprecatedGroup = "Deprecated";

// The help formatter of every command: as CLI11's, without the deprecated options.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_group(std::string group, bool is_positional, std::vector<const CLI::Option*> opts) const override;
};

// The caller's time budget for this command (or request): --budget-ms, 0 meaning already
// spent. `deprecated` are older names kept working, hidden from --help, with a note on stderr;
// giving two of the names is a usage error.
CLI::Option* AddBudgetOption(CLI::App* app, std::int64_t& ms, const std::string& help,
                             std::initializer_list<const char*> deprecated = {});

// Binds `server` to address:port. On failure prints "cutoff COMMAND: cannot listen on
// 127.0.0.1:8080: address already in use" (no library internals), sets *exit_code (2 when
// `address` is not an IP address, 1 when it cannot be bound: unavailable) and returns nullopt.
std::optional<std::uint16_t> Listen(http::Server& server, std::string_view command, const std::string& address,
                                    int port, int* exit_code);

}  // namespace cutoff::cli

#endif  // CUTOFF_APPS_CUTOFF_CONVENTIONS_HPP_
