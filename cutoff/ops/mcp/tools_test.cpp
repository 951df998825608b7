#include "cutoff/ops/mcp/tools.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>

namespace cutoff::ops::mcp {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;

asio::awaitable<json::value> Nothing(const Call&) { co_return json::value(); }

Registry MakeRegistry() {
  Registry r;
  r.bind("a.fast").describe("Quick").deadline(250ms).handler(Nothing);
  r.bind("a.keyed_own")
      .takes_idempotency_key()
      .request_schema(json::parse(R"({"type":"object","properties":{"idempotency_key":{"type":"integer"}}})"))
      .handler(Nothing);
  r.bind("a.array_input").request_schema(json::parse(R"({"type":"array"})")).response_schema(json::parse(R"({"type":"string"})")).handler(Nothing);
  r.freeze();
  return r;
}

TEST(ToolsTest, DefinitionsCarryTheBudgetSentenceAndSchemas) {
  const Registry registry = MakeRegistry();
  const json::object fast = tool_definition(*registry.find("a.fast"));
  EXPECT_EQ(fast.at("description"), "Quick. Time budget: 0.25 s.");
  EXPECT_EQ(fast.at("_meta").at("dev.cutoff/deadline-seconds").to_number<double>(), 0.25);
  // An operation whose schema already has the argument keeps its own; the key then comes in _meta.
  const json::object own = tool_definition(*registry.find("a.keyed_own"));
  EXPECT_EQ(own.at("inputSchema").at("properties").at("idempotency_key").at("type"), "integer");
  EXPECT_FALSE(takes_key_argument(registry.find("a.keyed_own")->info));
  // Tools take objects: a non-object schema is not passed on, nor a non-object output.
  const json::object array = tool_definition(*registry.find("a.array_input"));
  EXPECT_EQ(array.at("inputSchema"), json::parse(R"({"type":"object"})"));
  EXPECT_FALSE(array.contains("outputSchema"));
  EXPECT_EQ(array.at("_meta").at("dev.cutoff/deadline-seconds"), nullptr);
}

TEST(ToolsTest, FailuresSayWhetherRetryingMakesSense) {
  const json::object deadline = tool_failure(Error(ErrorCode::deadline_exceeded, "the time budget ran out", "r-1"), false);
  EXPECT_EQ(deadline.at("isError"), true);
  const json::object& detail = deadline.at("_meta").at("dev.cutoff/error").as_object();
  EXPECT_EQ(detail.at("code"), "deadline_exceeded");
  EXPECT_EQ(detail.at("retryable"), false);
  EXPECT_EQ(detail.at("request_id"), "r-1");
  const std::string text(deadline.at("content").at(0).at("text").as_string());
  EXPECT_EQ(text.rfind("deadline_exceeded (not retryable): the time budget ran out.", 0), 0u) << text;

  const auto text_of = [](const json::object& r) { return std::string(r.at("content").at(0).at("text").as_string()); };
  EXPECT_NE(text_of(tool_failure(Error(ErrorCode::commit_ambiguous, "stopped after commit"), false))
                .find("Do not retry it without an idempotency key"),
            std::string::npos);
  EXPECT_NE(text_of(tool_failure(Error(ErrorCode::commit_ambiguous, "stopped after commit"), true))
                .find("Retrying with the same idempotency key is safe"),
            std::string::npos);
  EXPECT_NE(text_of(tool_failure(Error(ErrorCode::overloaded, "busy"), false)).find("(retryable)"), std::string::npos);
  EXPECT_NE(text_of(tool_failure(Error(ErrorCode::invalid_argument, "bad"), false)).find("change the request"),
            std::string::npos);
}

TEST(ToolsTest, SuccessIsTextAndOptionallyStructured) {
  const json::value result = json::parse(R"({"a":1})");
  const json::object plain = tool_success(result, false);
  EXPECT_EQ(plain.at("content").at(0).at("text"), R"({"a":1})");
  EXPECT_FALSE(plain.contains("structuredContent"));
  EXPECT_EQ(tool_success(result, true).at("structuredContent"), result);
  // Only objects can be structured content.
  EXPECT_FALSE(tool_success(json::value(3), true).contains("structuredContent"));
}

}  // namespace
}  // namespace cutoff::ops::mcp
