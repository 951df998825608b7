// OverlappingFieldsCanBeMerged (internal/overlap_checker.hpp), through validate().

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "cutoff/graphql/internal/validation_test_support.hpp"

namespace cutoff::graphql {
namespace {

TEST(OverlappingFieldsCanBeMerged, IdenticalFieldsMerge) {
  ExpectValid("{ dog { name name otherName: name doesKnowCommand(command: SIT) doesKnowCommand(command: SIT) } }");
}

TEST(OverlappingFieldsCanBeMerged, DifferentFieldsUnderOneName) {
  const std::string doc = "{ dog { x: name x: nickname } }";
  ExpectOnlyError(doc,
                  "Fields \"x\" conflict because \"name\" and \"nickname\" are different fields. Use different "
                  "aliases on the fields to fetch both if this was intentional.",
                  {At(doc, "x: name"), At(doc, "x: nickname")});
}

TEST(OverlappingFieldsCanBeMerged, DifferingArguments) {
  const std::string doc = "{ dog { doesKnowCommand(command: SIT) doesKnowCommand(command: HEEL) } }";
  ExpectOnlyError(doc,
                  "Fields \"doesKnowCommand\" conflict because they have differing arguments. Use different aliases "
                  "on the fields to fetch both if this was intentional.",
                  {At(doc, "doesKnowCommand"), At(doc, "doesKnowCommand", 2)});
}

TEST(OverlappingFieldsCanBeMerged, ArgumentObjectsCompareRegardlessOfFieldOrder) {
  ExpectValid("{ search(filter: {limit: 1, color: RED}) { name } search(filter: {color: RED, limit: 1}) { name } }");
}

TEST(OverlappingFieldsCanBeMerged, DifferentObjectTypesMayDiverge) {
  ExpectValid("{ catOrDog { ... on Dog { x: name } ... on Cat { x: nickname } } }");
}

TEST(OverlappingFieldsCanBeMerged, InterfaceAndObjectMayNot) {
  const std::string doc = "{ pet { ... on Dog { n: name } ... on Pet { n: nickname } } }";
  ExpectError(doc,
              "Fields \"n\" conflict because \"name\" and \"nickname\" are different fields. Use different aliases "
              "on the fields to fetch both if this was intentional.",
              {At(doc, "n: name"), At(doc, "n: nickname")});
}

TEST(OverlappingFieldsCanBeMerged, ConflictingReturnTypesEvenOnDifferentObjects) {
  const std::string doc = "{ catOrDog { ... on Dog { v: barkVolume } ... on Cat { v: name } } }";
  ExpectOnlyError(doc,
                  "Fields \"v\" conflict because they return conflicting types \"Int\" and \"String\". Use different "
                  "aliases on the fields to fetch both if this was intentional.",
                  {At(doc, "v: barkVolume"), At(doc, "v: name")});
}

TEST(OverlappingFieldsCanBeMerged, NullabilityAndListShapesMustMatch) {
  const std::string doc = "{ node(id: 1) { ... on Dog { i: id } ... on Human { i: name } } }";
  ExpectError(doc,
              "Fields \"i\" conflict because they return conflicting types \"ID!\" and \"String\". Use different "
              "aliases on the fields to fetch both if this was intentional.",
              {At(doc, "i: id"), At(doc, "i: name")});
  const std::string lists = "{ dogOrHuman { ... on Human { f: friends { name } } ... on Dog { f: owner { name } } } }";
  ExpectError(lists,
              "Fields \"f\" conflict because they return conflicting types \"[Human!]!\" and \"Human\". Use "
              "different aliases on the fields to fetch both if this was intentional.",
              {At(lists, "f: friends"), At(lists, "f: owner")});
}

TEST(OverlappingFieldsCanBeMerged, ConflictsInSubSelections) {
  const std::string doc = "{ dog { owner { n: name } } dog { owner { n: iq } } }";
  ExpectOnlyError(doc,
                  "Fields \"dog\" conflict because subfields \"owner\" conflict because subfields \"n\" conflict "
                  "because \"name\" and \"iq\" are different fields. Use different aliases on the fields to fetch "
                  "both if this was intentional.",
                  {At(doc, "dog"), At(doc, "owner"), At(doc, "n: name"), At(doc, "dog", 2), At(doc, "owner", 2),
                   At(doc, "n: iq")});
}

TEST(OverlappingFieldsCanBeMerged, ConflictsBetweenFragments) {
  const std::string doc = "{ dog { ...A ...B } }\nfragment A on Dog { x: name }\nfragment B on Dog { x: barks }";
  ExpectOnlyError(doc,
                  "Fields \"x\" conflict because \"name\" and \"barks\" are different fields. Use different aliases "
                  "on the fields to fetch both if this was intentional.",
                  {At(doc, "x: name"), At(doc, "x: barks")});
}

TEST(OverlappingFieldsCanBeMerged, ConflictsBetweenFieldsAndNestedFragments) {
  const std::string doc =
      "{ dog { x: name ...A } }\nfragment A on Dog { ...B }\nfragment B on Dog { x: barks }";
  ExpectOnlyError(doc,
                  "Fields \"x\" conflict because \"name\" and \"barks\" are different fields. Use different aliases "
                  "on the fields to fetch both if this was intentional.",
                  {At(doc, "x: name"), At(doc, "x: barks")});
}

TEST(OverlappingFieldsCanBeMerged, ManyFragmentLevelsStayFast) {
  // L_i and R_i both spread L_{i-1} and R_{i-1} under the same field: without memoising
  // fragment pairs the comparisons double at every level.
  std::string doc = "{ human(id: 1) { ...L40 ...R40 } }\n"
                    "fragment L0 on Human { name }\nfragment R0 on Human { name }\n";
  for (int i = 1; i <= 40; ++i) {
    const std::string p = std::to_string(i - 1), n = std::to_string(i);
    doc += "fragment L" + n + " on Human { friends { ...L" + p + " ...R" + p + " } }\n";
    doc += "fragment R" + n + " on Human { friends { ...R" + p + " ...L" + p + " } }\n";
  }
  const auto start = std::chrono::steady_clock::now();
  ExpectValid(doc);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2 * kSlowdown));
}

TEST(OverlappingFieldsCanBeMerged, TwoMegabytesOfRepeatedFieldsValidateQuickly) {
  std::string doc = "{ dog {";
  while (doc.size() < 2 * 1024 * 1024) doc += " name";
  doc += " } }";
  ParseOptions big;
  big.max_tokens = 1'000'000;
  ParseResult parsed = parse(doc, big);
  ASSERT_TRUE(parsed.ok());
  const auto start = std::chrono::steady_clock::now();
  const auto errors = validate(TestSchema(), *parsed.document);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2 * kSlowdown));
  EXPECT_TRUE(errors.empty()) << Messages(errors);
}

TEST(OverlappingFieldsCanBeMerged, RepeatedSelectionsAndSpreadsValidateQuickly) {
  std::string doc = "{ dog {";
  for (int i = 0; i < 20000; ++i) doc += " owner { friends { name } ...H } ...D";
  doc += " } }\nfragment D on Dog { name owner { name } }\nfragment H on Human { name friends { iq } }";
  const auto start = std::chrono::steady_clock::now();
  ExpectValid(doc);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2 * kSlowdown));
}

TEST(OverlappingFieldsCanBeMerged, ComparisonBudgetRejectsAdversarialDocuments) {
  // Distinct fields under one response name must be compared pairwise.
  std::string doc = "{ dog {";
  for (int i = 0; i < 200; ++i) doc += " owner { a" + std::to_string(i) + ": name }";
  doc += " } }";
  ValidationOptions options;
  options.max_field_comparisons = 1000;
  const auto errors = Validate(doc, options);
  ASSERT_EQ(errors.size(), 1u) << Messages(errors);
  EXPECT_EQ(errors[0].message,
            "Validation aborted: checking that fields can be merged needs more than 1000 comparisons.");
  EXPECT_TRUE(Validate(doc).empty());  // well within the default budget
}

TEST(OverlappingFieldsCanBeMerged, ManyConflictsStopAtTheErrorLimit) {
  // 1000 fields that all conflict pairwise: half a million conflicts, of which 100 are reported.
  std::string doc = "{ human(id: 1) {";
  for (int i = 0; i < 1000; ++i) doc += " r: relatives(first: " + std::to_string(i) + ") { name }";
  doc += " } }";
  const auto start = std::chrono::steady_clock::now();
  const auto errors = Validate(doc);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(kSlowdown));
  ASSERT_EQ(errors.size(), 101u);
  EXPECT_EQ(errors[0].message,
            "Fields \"r\" conflict because they have differing arguments. Use different aliases on the fields to "
            "fetch both if this was intentional.");
  EXPECT_EQ(errors[100].message, "Too many validation errors, error limit reached. Validation aborted.");
}

TEST(OverlappingFieldsCanBeMerged, DeepRecursionThroughFragmentsIsBounded) {
  // Two chains of fragments nest a field inside itself; comparing the chains recurses through
  // both. Reasonable depths are checked, absurd ones rejected without exhausting the stack.
  auto chains = [](int n) {
    std::string doc = "{ human(id: 1) { friends { ...A0 } friends { ...B0 } } }\n";
    for (int i = 0; i < n; ++i) {
      const std::string next = i + 1 < n ? std::to_string(i + 1) : "";
      for (const char* c : {"A", "B"})
        doc += "fragment " + std::string(c) + std::to_string(i) + " on Human { friends { " +
               (next.empty() ? std::string("name") : "..." + std::string(c) + next) + " } }\n";
    }
    return doc;
  };
  ExpectValid(chains(200));
  const auto errors = Validate(chains(3000));
  ASSERT_EQ(errors.size(), 1u) << Messages(errors);
  EXPECT_EQ(errors[0].message,
            "Validation aborted: fields are nested too deeply through fragments to check that they can be merged.");
}

}  // namespace
}  // namespace cutoff::graphql
