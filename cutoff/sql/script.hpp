// Splitting a script of several SQL statements, for running them one by one.
//
//   for (const std::string& statement : cutoff::sql::split_statements(text, Dialect::sqlite))
//     co_await conn.execute(ctx, statement, {});
//
// A Connection runs one statement per call (PostgreSQL refuses several in one; SQLite would
// run them all and return only the last one's rows), so a script is split first.
#ifndef CUTOFF_SQL_SCRIPT_HPP_
#define CUTOFF_SQL_SCRIPT_HPP_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cutoff::sql {

enum class Dialect : std::uint8_t { sqlite, postgresql };

// The statements of `script` in order, split at the `;` that end them, which are none inside
// a string ('...'; E'...' with backslash escapes in PostgreSQL), a quoted name ("...", and `...`
// or [...] in SQLite), a dollar-quoted body ($$...$$, $tag$...$tag$ in PostgreSQL), a comment
// (-- to the end of the line, /* */, nested in PostgreSQL), or a body that ends with END
// (SQLite's CREATE TRIGGER, PostgreSQL's BEGIN ATOMIC). Each statement is its text as written,
// without the `;` and the whitespace around it; one that is only whitespace and comments is
// left out.
std::vector<std::string> split_statements(std::string_view script, Dialect dialect);

}  // namespace cutoff::sql

#endif  // CUTOFF_SQL_SCRIPT_HPP_
