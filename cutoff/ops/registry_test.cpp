#include "cutoff/ops/registry.hpp"

#include <gtest/gtest.h>

#include <functional>

namespace cutoff::ops {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;

asio::awaitable<json::value> Noop(const Call&) { co_return json::value(nullptr); }

// Expects `f` to throw ConfigError of `kind`; returns its message.
std::string ExpectConfigError(ConfigError::Kind kind, const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError(" << to_string(kind) << ")";
  return {};
}

const OperationInfo& Info(const Registry& r, std::string_view name) {
  const ResolvedOperation* op = r.find(name);
  EXPECT_NE(op, nullptr) << name;
  static const OperationInfo none;
  return op ? op->info : none;
}

TEST(Registry, BindsAndFreezesOperationsSortedByName) {
  Registry r;
  r.bind("orders.create").deadline(5s).describe("Creates an order").tag("orders").handler(Noop).finish().bind(
      "orders.cancel").handler(Noop);
  EXPECT_FALSE(r.frozen());
  EXPECT_EQ(&r.freeze(), &r);
  EXPECT_TRUE(r.frozen());
  auto ops = r.operations();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0]->info.name, "orders.cancel");
  EXPECT_EQ(ops[1]->info.name, "orders.create");
  const OperationInfo& create = Info(r, "orders.create");
  EXPECT_EQ(create.deadline, Duration(5s));
  EXPECT_EQ(create.deadline_source.to_string(), "plan");
  EXPECT_EQ(create.description, "Creates an order");
  EXPECT_EQ(create.tag, "orders");
  const OperationInfo& cancel = Info(r, "orders.cancel");
  EXPECT_FALSE(cancel.deadline);
  EXPECT_EQ(cancel.deadline_source.to_string(), "none");
  EXPECT_EQ(r.find("orders.nope"), nullptr);
  r.freeze();  // again: nothing happens
}

TEST(Registry, ConfigurationErrors) {
  Registry r;
  ExpectConfigError(ConfigError::Kind::invalid_name, [&] { r.bind("orders create"); });
  ExpectConfigError(ConfigError::Kind::invalid_name, [&] { r.bind(""); });
  ExpectConfigError(ConfigError::Kind::invalid_selector, [&] { r.patch("ns:"); });
  r.bind("a.b").handler(Noop);
  ExpectConfigError(ConfigError::Kind::duplicate_operation, [&] { r.bind("a.b"); });
  ExpectConfigError(ConfigError::Kind::non_positive_budget, [&] { r.bind("a.zero").deadline(0s); });
  ExpectConfigError(ConfigError::Kind::non_positive_budget, [&] { r.bind("a.negative").deadline(-5ms); });
  ExpectConfigError(ConfigError::Kind::non_positive_budget, [&] { r.patch("ns:a").deadline(0ms); });
  ExpectConfigError(ConfigError::Kind::non_positive_budget, [&] { r.patch("ns:a").deadline(-1s); });
  ExpectConfigError(ConfigError::Kind::not_frozen, [&] { r.find("a.b"); });
  ExpectConfigError(ConfigError::Kind::not_frozen, [&] { r.operations(); });
}

TEST(Registry, MissingHandlerIsReportedAtFreeze) {
  Registry r;
  r.bind("a.b").deadline(1s);
  const std::string message = ExpectConfigError(ConfigError::Kind::missing_handler, [&] { r.freeze(); });
  EXPECT_NE(message.find("a.b"), std::string::npos);
  EXPECT_FALSE(r.frozen());
}

TEST(Registry, OrphanPatchIsReportedAtFreeze) {
  Registry r;
  r.bind("orders.create").handler(Noop);
  r.patch("ns:orders").deadline(1s);
  r.patch("billing.*").deadline(2s);  // matches nothing
  const std::string message = ExpectConfigError(ConfigError::Kind::orphan_patch, [&] { r.freeze(); });
  EXPECT_NE(message.find("billing.*"), std::string::npos);
  EXPECT_FALSE(r.frozen());
  r.bind("billing.charge").handler(Noop);  // now it matches
  EXPECT_NO_THROW(r.freeze());
}

TEST(Registry, ChangesAfterFreezeAreErrors) {
  Registry r;
  auto op = r.bind("a.b").handler(Noop);
  auto patch = r.patch("ns:a").deadline(1s);
  r.freeze();
  ExpectConfigError(ConfigError::Kind::frozen, [&] { r.bind("a.c"); });
  ExpectConfigError(ConfigError::Kind::frozen, [&] { r.patch("ns:a"); });
  ExpectConfigError(ConfigError::Kind::frozen, [&] { op.deadline(1s); });
  ExpectConfigError(ConfigError::Kind::frozen, [&] { patch.deadline(10ms); });
  ExpectConfigError(ConfigError::Kind::frozen, [&] { r.materialize_patches(); });
  Registry other;
  ExpectConfigError(ConfigError::Kind::frozen, [&] { r.merge(other); });
  EXPECT_EQ(Info(r, "a.b").deadline, Duration(1s));
}

TEST(Registry, PatchGivesADefaultBudget) {
  Registry r;
  r.bind("example.echo").handler(Noop);
  r.bind("example.sleep").handler(Noop);
  r.bind("other.op").handler(Noop);
  r.patch("ns:example").deadline(10s);
  r.freeze();
  EXPECT_EQ(Info(r, "example.echo").deadline, Duration(10s));
  EXPECT_EQ(Info(r, "example.echo").deadline_source.to_string(), "patch ns:example");
  EXPECT_EQ(Info(r, "example.sleep").deadline, Duration(10s));
  EXPECT_FALSE(Info(r, "other.op").deadline);
}

TEST(Registry, TightestBudgetWinsAcrossPlanAndPatches) {
  Registry r;
  r.bind("orders.create").deadline(5s).handler(Noop);   // plan tighter than the patch
  r.bind("orders.export").deadline(60s).handler(Noop);  // the patch tightens the plan
  r.bind("orders.list").handler(Noop);
  r.patch("ns:orders").deadline(10s);
  r.patch("orders.list").deadline(30s);  // more specific, but looser: cannot extend
  r.patch("orders.*").deadline(20s);
  r.freeze();
  EXPECT_EQ(Info(r, "orders.create").deadline, Duration(5s));
  EXPECT_EQ(Info(r, "orders.create").deadline_source.to_string(), "plan");
  EXPECT_EQ(Info(r, "orders.export").deadline, Duration(10s));
  EXPECT_EQ(Info(r, "orders.export").deadline_source.to_string(), "patch ns:orders");
  EXPECT_EQ(Info(r, "orders.list").deadline, Duration(10s));
  EXPECT_EQ(Info(r, "orders.list").deadline_source.to_string(), "patch ns:orders");
}

TEST(Registry, EqualBudgetsNameThePlanThenTheMostSpecificThenTheFirstPatch) {
  Registry r;
  r.bind("a.plan").deadline(3s).handler(Noop);
  r.bind("a.specific").handler(Noop);
  r.bind("b.first").handler(Noop);
  r.patch("ns:a").deadline(3s);
  r.patch("a.*").deadline(3s);
  r.patch("b.*t").deadline(4s);
  r.patch("*.fi*").deadline(4s);  // equally specific (3 literal characters), registered later
  r.freeze();
  EXPECT_EQ(Info(r, "a.plan").deadline_source.to_string(), "plan");
  EXPECT_EQ(Info(r, "a.specific").deadline_source.to_string(), "patch a.*");
  EXPECT_EQ(Info(r, "b.first").deadline_source.to_string(), "patch b.*t");
}

TEST(Registry, TagComesFromTheMostSpecificPatch) {
  Registry r;
  r.bind("shop.orders.create").handler(Noop);
  r.bind("shop.orders.list").handler(Noop);
  r.bind("shop.stock").handler(Noop);
  r.bind("shop.own").tag("mine").handler(Noop);
  r.patch("ns:shop").tag("namespace");
  r.patch("prefix:shop.orders").tag("prefix");
  r.patch("shop.orders.*").tag("glob");
  r.patch("shop.orders.create").tag("exact");
  r.freeze();
  EXPECT_EQ(Info(r, "shop.orders.create").tag, "exact");
  EXPECT_EQ(Info(r, "shop.orders.list").tag, "glob");
  EXPECT_EQ(Info(r, "shop.stock").tag, "namespace");
  EXPECT_EQ(Info(r, "shop.own").tag, "mine");  // the operation's own setting beats patches
}

TEST(Registry, EquallySpecificPatchesWithDifferentValuesAreAmbiguous) {
  Registry r;
  r.bind("orders.create").handler(Noop);
  r.patch("orders.*").tag("a");
  r.patch("*.create").tag("b");  // 7 literal characters each
  const std::string message = ExpectConfigError(ConfigError::Kind::ambiguous_patches, [&] { r.freeze(); });
  EXPECT_NE(message.find("orders.create"), std::string::npos);
  EXPECT_NE(message.find("orders.*"), std::string::npos);
  EXPECT_NE(message.find("*.create"), std::string::npos);
  EXPECT_FALSE(r.frozen());

  // The same value is no conflict; a more specific patch or the operation's own tag settles it.
  Registry same;
  same.bind("orders.create").handler(Noop);
  same.patch("orders.*").tag("a").deadline(1s);
  same.patch("*.create").tag("a").deadline(2s);  // budgets never conflict: min
  EXPECT_NO_THROW(same.freeze());
  EXPECT_EQ(Info(same, "orders.create").deadline, Duration(1s));

  Registry settled;
  settled.bind("orders.create").handler(Noop);
  settled.patch("orders.*").tag("a");
  settled.patch("*.create").tag("b");
  settled.patch("orders.create").tag("c");
  EXPECT_NO_THROW(settled.freeze());
  EXPECT_EQ(Info(settled, "orders.create").tag, "c");

  Registry own;
  own.bind("orders.create").tag("own").handler(Noop);
  own.patch("orders.*").tag("a");
  own.patch("*.create").tag("b");
  EXPECT_NO_THROW(own.freeze());
  EXPECT_EQ(Info(own, "orders.create").tag, "own");

  // Equal specificity is checked only among the patches that would win.
  Registry shadowed;
  shadowed.bind("orders.create").handler(Noop);
  shadowed.patch("ns:orders").tag("x");
  shadowed.patch("prefix:orders").tag("y");  // ranks above the namespace
  shadowed.patch("ns:orders").tag("z");      // ties with the first, but both lose
  EXPECT_NO_THROW(shadowed.freeze());
  EXPECT_EQ(Info(shadowed, "orders.create").tag, "y");
}

TEST(Registry, PatchHooksAccumulate) {
  Registry r;
  std::vector<std::string> order;
  auto before = [&order](std::string label) {
    return [&order, label](const Call&) -> asio::awaitable<void> {
      order.push_back(label);
      co_return;
    };
  };
  r.bind("a.b").handler(Noop).before(before("own"));
  r.patch("a.b").before(before("exact"));
  r.patch("ns:a").before(before("ns1"));
  r.patch("ns:a").before(before("ns2"));
  r.patch("a.*").before(before("glob"));
  r.freeze();
  EXPECT_EQ(r.find("a.b")->before.size(), 5u);
  EXPECT_EQ(r.find("a.b")->after.size(), 0u);
  // Their running order is checked in invoker_test.cpp.
}

TEST(Registry, MaterializeSettlesPatchesIntoPlans) {
  Registry r;
  r.bind("example.echo").handler(Noop);
  r.bind("example.slow").deadline(30s).handler(Noop);
  r.patch("ns:example").deadline(10s).tag("examples");
  r.materialize_patches();
  EXPECT_EQ(r.patch_count(), 0u);
  r.freeze();
  EXPECT_EQ(Info(r, "example.echo").deadline, Duration(10s));
  EXPECT_EQ(Info(r, "example.echo").deadline_source.to_string(), "patch ns:example");
  EXPECT_EQ(Info(r, "example.echo").tag, "examples");
  EXPECT_EQ(Info(r, "example.slow").deadline, Duration(10s));
}

TEST(Registry, MaterializeReportsOrphansAndAmbiguity) {
  Registry orphan;
  orphan.bind("a.b").handler(Noop);
  orphan.patch("c.*").deadline(1s);
  ExpectConfigError(ConfigError::Kind::orphan_patch, [&] { orphan.materialize_patches(); });
  Registry ambiguous;
  ambiguous.bind("a.b").handler(Noop);
  ambiguous.patch("a.*").tag("x");
  ambiguous.patch("*.b").tag("y");
  ExpectConfigError(ConfigError::Kind::ambiguous_patches, [&] { ambiguous.materialize_patches(); });
}

TEST(Registry, UnmaterializedPatchesLeakIntoAMergedRegistry) {
  auto make_billing = [] {
    Registry billing;
    billing.bind("billing.charge").handler(Noop);
    billing.patch("**").deadline(1s);  // meant for billing only
    return billing;
  };
  Registry shop;
  shop.bind("shop.order").handler(Noop);
  shop.merge(make_billing()).freeze();
  EXPECT_EQ(Info(shop, "shop.order").deadline, Duration(1s));  // leaked

  Registry settled;
  settled.bind("shop.order").handler(Noop);
  Registry billing = make_billing();
  billing.materialize_patches();
  settled.merge(billing).freeze();
  EXPECT_FALSE(Info(settled, "shop.order").deadline);
  EXPECT_EQ(Info(settled, "billing.charge").deadline, Duration(1s));
}

TEST(Registry, MergeRejectsDuplicateNames) {
  Registry a, b;
  a.bind("x.y").handler(Noop);
  b.bind("x.y").handler(Noop);
  ExpectConfigError(ConfigError::Kind::duplicate_operation, [&] { a.merge(b); });
}

}  // namespace
}  // namespace cutoff::ops
