#include "cutoff/ops/selector.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace cutoff::ops {
namespace {

ConfigError::Kind KindOf(std::string_view text) {
  try {
    Selector::parse(text);
  } catch (const ConfigError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "\"" << text << "\" parsed";
  return ConfigError::Kind::frozen;
}

TEST(OperationName, Validity) {
  EXPECT_TRUE(valid_operation_name("orders"));
  EXPECT_TRUE(valid_operation_name("orders.create"));
  EXPECT_TRUE(valid_operation_name("Shop-1.orders_v2.create"));
  EXPECT_FALSE(valid_operation_name(""));
  EXPECT_FALSE(valid_operation_name(".orders"));
  EXPECT_FALSE(valid_operation_name("orders."));
  EXPECT_FALSE(valid_operation_name("orders..create"));
  EXPECT_FALSE(valid_operation_name("orders/create"));
  EXPECT_FALSE(valid_operation_name("orders create"));
  EXPECT_FALSE(valid_operation_name("orders.*"));
  EXPECT_FALSE(valid_operation_name(std::string(kMaxNameLength + 1, 'a')));
  EXPECT_TRUE(valid_operation_name(std::string(kMaxNameLength, 'a')));
}

TEST(Selector, ParsesEachKindAndRoundTrips) {
  struct Case {
    std::string_view text;
    Selector::Kind kind;
    std::string_view inner;
  };
  for (const Case& c : {Case{"orders.create", Selector::Kind::exact, "orders.create"},
                        Case{"orders.*", Selector::Kind::glob, "orders.*"},
                        Case{"*.create", Selector::Kind::glob, "*.create"},
                        Case{"orders.**", Selector::Kind::glob, "orders.**"},
                        Case{"orders.cr?ate", Selector::Kind::glob, "orders.cr?ate"},
                        Case{"prefix:ord", Selector::Kind::prefix, "ord"},
                        Case{"ns:orders", Selector::Kind::in_namespace, "orders"},
                        Case{"ns:shop.orders", Selector::Kind::in_namespace, "shop.orders"}}) {
    const Selector s = Selector::parse(c.text);
    EXPECT_EQ(s.kind(), c.kind) << c.text;
    EXPECT_EQ(s.text(), c.inner) << c.text;
    EXPECT_EQ(s.to_string(), c.text);
    EXPECT_EQ(Selector::parse(s.to_string()), s);
  }
}

TEST(Selector, RejectsMalformedText) {
  for (std::string_view bad : {"", "ns:", "prefix:", "orders..create", "orders create", "ns:orders.", "ns:*",
                               "prefix:a b", "orders.*!", "a/b*", ".orders"}) {
    EXPECT_EQ(KindOf(bad), ConfigError::Kind::invalid_selector) << bad;
  }
  EXPECT_THROW(Selector::glob("orders.create"), ConfigError);  // no wildcard
  EXPECT_THROW(Selector::glob(std::string(300, '*')), ConfigError);
}

TEST(Selector, ExactMatchesOnlyTheName) {
  const Selector s = Selector::parse("orders.create");
  EXPECT_TRUE(s.matches("orders.create"));
  EXPECT_FALSE(s.matches("orders.create.v2"));
  EXPECT_FALSE(s.matches("orders"));
}

TEST(Selector, GlobStarStaysWithinASegment) {
  const Selector one = Selector::parse("orders.*");
  EXPECT_TRUE(one.matches("orders.create"));
  EXPECT_TRUE(one.matches("orders.x"));
  EXPECT_FALSE(one.matches("orders.items.add"));
  EXPECT_FALSE(one.matches("orders"));
  EXPECT_FALSE(one.matches("ordersx.create"));
  const Selector any = Selector::parse("orders.**");
  EXPECT_TRUE(any.matches("orders.create"));
  EXPECT_TRUE(any.matches("orders.items.add"));
  EXPECT_FALSE(any.matches("shop.orders.create"));
  const Selector mid = Selector::parse("*.create");
  EXPECT_TRUE(mid.matches("orders.create"));
  EXPECT_FALSE(mid.matches("shop.orders.create"));
  EXPECT_TRUE(Selector::parse("**.create").matches("shop.orders.create"));
  const Selector q = Selector::parse("orders.cr?ate");
  EXPECT_TRUE(q.matches("orders.create"));
  EXPECT_FALSE(q.matches("orders.crate"));
  EXPECT_FALSE(Selector::parse("orders?create").matches("orders.create"));  // '?' is not '.'
  EXPECT_TRUE(Selector::parse("o*s.c*e").matches("orders.create"));
}

TEST(Selector, PrefixIsRawTextAndNamespaceIsSegmentAware) {
  const Selector p = Selector::parse("prefix:ord");
  EXPECT_TRUE(p.matches("orders.create"));
  EXPECT_TRUE(p.matches("ord"));
  EXPECT_FALSE(p.matches("shop.orders"));
  const Selector ns = Selector::parse("ns:orders");
  EXPECT_TRUE(ns.matches("orders.create"));
  EXPECT_TRUE(ns.matches("orders.items.add"));
  EXPECT_FALSE(ns.matches("orders"));
  EXPECT_FALSE(ns.matches("ordersx.create"));
  EXPECT_FALSE(ns.matches("shop.orders.create"));
}

TEST(Selector, SpecificityRanksKindsThenLiteralText) {
  const auto spec = [](std::string_view s) { return Selector::parse(s).specificity(); };
  EXPECT_GT(spec("orders.create"), spec("orders.*"));
  EXPECT_GT(spec("a.*"), spec("prefix:orders.create.long.prefix"));  // kind first
  EXPECT_GT(spec("prefix:o"), spec("ns:orders.items"));
  EXPECT_GT(spec("orders.*"), spec("*.*"));
  EXPECT_GT(spec("prefix:orders.c"), spec("prefix:orders."));
  EXPECT_GT(spec("ns:shop.orders"), spec("ns:shop"));
  EXPECT_EQ(spec("orders.*"), spec("*.create"));  // 7 literal characters each
  EXPECT_EQ(spec("ab.*"), spec("a?.b*"));
}

TEST(Selector, GlobMatchingStaysFastOnPathologicalPatterns) {
  std::string pattern;
  for (int i = 0; i < 60; ++i) pattern += "*a";
  pattern += "*b";
  const std::string name(128, 'a');
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(glob_match(pattern, name));
  EXPECT_TRUE(glob_match("**", name));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

}  // namespace
}  // namespace cutoff::ops
