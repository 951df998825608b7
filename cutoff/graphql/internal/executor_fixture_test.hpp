// What the GraphQL executor's tests share: the Exec fixture, which builds a schema from SDL and
// runs an operation against a JSON root value. Test-only.
//
//   TEST_F(Exec, ResolvesFromJsonInSelectionOrder) {
//     Build("type Query { a: Int }");
//     EXPECT_EQ(Json("{ a }", R"({"a":1})"), R"({"data":{"a":1}})");
//   }
#ifndef CUTOFF_GRAPHQL_INTERNAL_EXECUTOR_FIXTURE_TEST_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_EXECUTOR_FIXTURE_TEST_HPP_

#include <gtest/gtest.h>

#include <boost/asio/awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <memory>
#include <string>

#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/parser.hpp"
#include "tests/support/run_sync.hpp"

namespace cutoff::graphql::executor_test {

namespace asio = boost::asio;

class Exec : public ::testing::Test {
 protected:
  void Build(const char* sdl) {
    SchemaResult r = Schema::from_sdl(sdl);
    ASSERT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0].message);
    schema_ = std::move(r.schema);
  }

  // Runs `query` against `root` (a JSON fixture read by the default resolver).
  Response Run(const std::string& query, const std::string& root_json = "{}", Context ctx = Context(),
               const std::string& variables = "{}", ExecutionOptions options = {}) {
    ParseResult parsed = parse(query);
    EXPECT_TRUE(parsed.ok()) << (parsed.error ? parsed.error->message : "");
    root_ = boost::json::parse(root_json);
    // The root value: a JSON object whose members the root fields read.
    for (const char* t : {"Query", "Mutation"})
      if (const Type* type = schema_->find_type(t))
        for (const Field& f : type->fields)
          if (!f.sync && !f.async)
            schema_->resolve(t, f.name, [this, name = f.name](FieldContext&) {
              auto it = root_.as_object().find(name);
              return it == root_.as_object().end() ? Data() : Data::json(&it->value());
            });
    Request req;
    req.document = parsed.document.get();
    req.variables = boost::json::parse(variables).as_object();
    doc_ = std::move(parsed.document);
    return cutoff::test_support::RunSync(
        [&]() -> asio::awaitable<Response> { co_return co_await execute(*schema_, req, ctx, options); });
  }

  std::string Json(const std::string& query, const std::string& root_json = "{}", Context ctx = Context()) {
    return Run(query, root_json, ctx).to_json();
  }

  std::unique_ptr<Schema> schema_;
  std::unique_ptr<Document> doc_;
  boost::json::value root_;
};

}  // namespace cutoff::graphql::executor_test

#endif  // CUTOFF_GRAPHQL_INTERNAL_EXECUTOR_FIXTURE_TEST_HPP_
