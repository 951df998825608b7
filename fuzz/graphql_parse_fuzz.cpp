// Fuzzes the GraphQL parser and the schema builder. Input: any bytes, read both as an
// executable document and as SDL. Neither may crash, and the results must respect the
// contract: a document or an error, never both; errors carry a message, and a syntax error
// exactly one location; a built schema has a query type.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cutoff/graphql/parser.hpp"
#include "cutoff/graphql/schema.hpp"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cutoff::graphql;
  const std::string input = size ? std::string(reinterpret_cast<const char*>(data), size) : std::string();

  ParseResult parsed = parse(input);
  Require(parsed.ok() != parsed.error.has_value());
  if (parsed.error) {
    Require(!parsed.error->message.empty());
    Require(parsed.error->locations.size() == 1);
    Require(parsed.error->locations[0].line >= 1 && parsed.error->locations[0].column >= 1);
  } else {
    const Document& doc = *parsed.document;
    Require(!doc.operations.empty() || !doc.fragments.empty() || !doc.type_system_locations.empty());
    Require(doc.type_system_locations.size() == doc.types.size() + doc.schemas.size() + doc.directives.size());
    for (const auto& op : doc.operations) Require(!op.selection_set.empty());
  }

  SchemaResult built = Schema::from_sdl(input);
  Require(built.ok() == built.errors.empty());
  if (built.ok()) Require(built.schema->query_type() != nullptr);
  for (const auto& e : built.errors) Require(!e.message.empty());
  return 0;
}
