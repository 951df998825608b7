#include "cutoff/ops/catalog.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace cutoff::ops {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;

asio::awaitable<json::value> Noop(const Call&) { co_return json::value(nullptr); }

Registry MakeRegistry() {
  Registry r;
  r.bind("orders.create")
      .deadline(5s)
      .describe("Creates an order")
      .tag("orders")
      .request_schema(json::parse(R"({"type":"object","required":["sku"],"properties":{"sku":{"type":"string"}}})"))
      .response_schema(json::parse(R"({"type":"object","properties":{"order_id":{"type":"string"}}})"))
      .handler(Noop);
  r.bind("orders.quick").deadline(250ms).handler(Noop);
  r.bind("orders.list").handler(Noop);
  r.bind("misc.free").describe("No budget").handler(Noop);
  r.patch("ns:orders").deadline(10s);
  r.freeze();
  return r;
}

TEST(FormatSeconds, WholeAndFractionalRoundedUpToMilliseconds) {
  EXPECT_EQ(format_seconds(5s), "5");
  EXPECT_EQ(format_seconds(250ms), "0.25");
  EXPECT_EQ(format_seconds(1500ms), "1.5");
  EXPECT_EQ(format_seconds(1001ms), "1.001");
  EXPECT_EQ(format_seconds(std::chrono::microseconds(1)), "0.001");  // never 0 for a live budget
  EXPECT_EQ(json::serialize(deadline_seconds_json(5s)), "5");
  EXPECT_EQ(deadline_seconds_json(250ms).as_double(), 0.25);
}

TEST(Catalog, ListsEveryOperationWithItsBudgetAndSource) {
  const Registry r = MakeRegistry();
  const json::value catalog = catalog_json(r);
  const json::array& ops = catalog.at("operations").as_array();
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].at("name"), "misc.free");
  EXPECT_TRUE(ops[0].at("deadline_seconds").is_null());
  EXPECT_EQ(ops[0].at("deadline_source"), "none");
  EXPECT_EQ(ops[0].at("description"), "No budget");
  const json::object& create = ops[1].as_object();
  EXPECT_EQ(create.at("name"), "orders.create");
  EXPECT_EQ(create.at("deadline_seconds"), 5);
  EXPECT_EQ(create.at("deadline_source"), "plan");
  EXPECT_FALSE(create.contains("deadline_selector"));
  EXPECT_EQ(create.at("tag"), "orders");
  EXPECT_EQ(create.at("request_schema").at("required").at(0), "sku");
  EXPECT_TRUE(create.contains("response_schema"));
  const json::object& list = ops[2].as_object();
  EXPECT_EQ(list.at("name"), "orders.list");
  EXPECT_EQ(list.at("deadline_seconds"), 10);
  EXPECT_EQ(list.at("deadline_source"), "patch");
  EXPECT_EQ(list.at("deadline_selector"), "ns:orders");
  EXPECT_FALSE(list.contains("request_schema"));
  EXPECT_EQ(ops[3].at("deadline_seconds").as_double(), 0.25);
}

TEST(Catalog, RequiresAFrozenRegistry) {
  Registry r;
  r.bind("a.b").handler(Noop);
  EXPECT_THROW(catalog_json(r), ConfigError);
  EXPECT_THROW(openapi_document(r), ConfigError);
}

TEST(OpenApi, EachOperationIsAPostRouteWithItsBudget) {
  const Registry r = MakeRegistry();
  const json::value doc = openapi_document(r, {.title = "shop", .version = "2.0.0"});
  // The document survives a round trip through text.
  const json::value reparsed = json::parse(json::serialize(doc));
  EXPECT_EQ(reparsed, doc);
  EXPECT_EQ(doc.at("openapi"), "3.1.0");
  EXPECT_EQ(doc.at("info").at("title"), "shop");
  EXPECT_EQ(doc.at("info").at("version"), "2.0.0");
  const json::object& paths = doc.at("paths").as_object();
  EXPECT_EQ(paths.size(), 4u);

  const json::object& create = paths.at("/ops/orders.create").at("post").as_object();
  EXPECT_EQ(create.at("operationId"), "orders.create");
  EXPECT_EQ(create.at("x-deadline-seconds"), 5);
  EXPECT_EQ(create.at("description"), "Creates an order. Time budget: 5 s.");
  EXPECT_EQ(create.at("tags").at(0), "orders");
  EXPECT_EQ(create.at("requestBody").at("content").at("application/json").at("schema").at("required").at(0), "sku");
  EXPECT_TRUE(create.at("responses").at("200").at("content").at("application/json").at("schema").at("properties")
                  .as_object()
                  .contains("order_id"));
  EXPECT_EQ(create.at("parameters").at(0).at("name"), "Deadline-Budget-Ms");
  const json::object& timeout = create.at("responses").at("504").as_object();
  EXPECT_TRUE(timeout.at("headers").as_object().contains("Deadline-Expired"));
  EXPECT_EQ(timeout.at("content").at("application/json").at("schema").at("$ref"), "#/components/schemas/Error");
  EXPECT_NE(create.at("responses").at("500").at("description").as_string().find("commit_ambiguous"),
            std::string::npos);

  const json::object& quick = paths.at("/ops/orders.quick").at("post").as_object();
  EXPECT_EQ(quick.at("x-deadline-seconds").as_double(), 0.25);
  EXPECT_EQ(quick.at("description"), "Time budget: 0.25 s.");
  EXPECT_EQ(quick.at("requestBody").at("content").at("application/json").at("schema"), json::parse(R"({"type":"object"})"));

  const json::object& list = paths.at("/ops/orders.list").at("post").as_object();
  EXPECT_EQ(list.at("x-deadline-seconds"), 10);  // patch-derived
  EXPECT_NE(list.at("description").as_string().find("Time budget: 10 s."), std::string::npos);

  const json::object& free = paths.at("/ops/misc.free").at("post").as_object();
  EXPECT_FALSE(free.contains("x-deadline-seconds"));
  EXPECT_EQ(free.at("description").as_string().find("Time budget"), std::string::npos);

  EXPECT_TRUE(doc.at("components").at("schemas").as_object().contains("Error"));
}

TEST(OpenApi, PathPrefixIsConfigurable) {
  const Registry r = MakeRegistry();
  const json::value doc = openapi_document(r, {.path_prefix = "/api/v1"});
  EXPECT_TRUE(doc.at("paths").as_object().contains("/api/v1/orders.create"));
}

}  // namespace
}  // namespace cutoff::ops
