#include "cutoff/graphql/validation.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cutoff/graphql/internal/validation_test_support.hpp"

// The rules on documents, operations, fields, fragments and the whole; OverlappingFieldsCanBeMerged
// is tested in internal/overlap_checker_test.cpp, the rules on values in
// internal/validation_values_test.cpp.
namespace cutoff::graphql {
namespace {

// ---- 5.1 ExecutableDefinitions ---------------------------------------------------------------------

TEST(ExecutableDefinitions, OperationsAndFragmentsAreExecutable) {
  ExpectValid("query Q { dog { ...F } }\nfragment F on Dog { name }");
}

TEST(ExecutableDefinitions, TypeDefinitionsAndExtensionsAreNot) {
  const std::string doc = "query Q { dog { name } }\ntype Cow { name: String }\nextend type Dog { color: String }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "The \"Cow\" definition is not executable.");
  EXPECT_EQ(errors[0].locations, (std::vector<Location>{{2, 1}}));
  EXPECT_EQ(errors[1].message, "The \"Dog\" definition is not executable.");
  EXPECT_EQ(errors[1].locations, (std::vector<Location>{{3, 1}}));
}

TEST(ExecutableDefinitions, SchemaAndDirectiveDefinitions) {
  ExpectError("{ dog { name } }\nschema { query: Query }", "The schema definition is not executable.", {{2, 1}});
  ExpectError("{ dog { name } }\ndirective @foo on FIELD", "The \"foo\" definition is not executable.", {{2, 1}});
}

// ---- 5.2 operations ----------------------------------------------------------------------------------

TEST(UniqueOperationNames, DistinctNamesAreValid) {
  ExpectValid("query Foo { dog { name } } query Bar { cat { name } } mutation Baz { setColor(color: RED) }");
}

TEST(UniqueOperationNames, RepeatedNameIsReportedAtBothNames) {
  const std::string doc = "query Foo { dog { name } }\nmutation Foo { setColor(color: RED) }";
  ExpectOnlyError(doc, "There can be only one operation named \"Foo\".", {At(doc, "Foo"), At(doc, "Foo", 2)});
}

TEST(LoneAnonymousOperation, OneAnonymousOperationIsValid) { ExpectValid("{ dog { name } }"); }

TEST(LoneAnonymousOperation, AnonymousBesideAnotherOperation) {
  const std::string doc = "{ dog { name } }\nquery Q { cat { name } }";
  ExpectOnlyError(doc, "This anonymous operation must be the only defined operation.", {{1, 1}});
}

TEST(LoneAnonymousOperation, TwoAnonymousOperationsAreBothReported) {
  const auto errors = Validate("{ dog { name } }\n{ cat { name } }");
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[1].locations, (std::vector<Location>{{2, 1}}));
}

TEST(SingleFieldSubscriptions, OneRootFieldIsValid) {
  ExpectValid("subscription S { newDog { name } }");
  ExpectValid("subscription S { ...F } fragment F on Subscription { ticks }");
  ExpectValid("subscription { newDog { name } newCat @skip(if: true) { name } }");
}

TEST(SingleFieldSubscriptions, MoreThanOneRootField) {
  const std::string doc = "subscription S { newDog { name } newCat { name } ticks }";
  ExpectOnlyError(doc, "Subscription \"S\" must select only one top level field.",
                  {At(doc, "newCat"), At(doc, "ticks")});
}

TEST(SingleFieldSubscriptions, FieldsFromFragmentsCount) {
  const std::string doc = "subscription { newDog { name } ...F }\nfragment F on Subscription { ticks }";
  ExpectOnlyError(doc, "Anonymous Subscription must select only one top level field.", {At(doc, "ticks")});
}

TEST(SingleFieldSubscriptions, NoIntrospectionRootField) {
  const std::string doc = "subscription S { __typename }";
  ExpectOnlyError(doc, "Subscription \"S\" must not select an introspection top level field.",
                  {At(doc, "__typename")});
}

// ---- 5.3 fields ----------------------------------------------------------------------------------------

TEST(FieldsOnCorrectType, KnownFieldsAndMetaFields) {
  ExpectValid(
      "{ dog { __typename name ... on Pet { nickname } } catOrDog { __typename ... on Cat { meows } } "
      "__schema { queryType { name } } __type(name: \"Dog\") { name } }");
}

TEST(FieldsOnCorrectType, UnknownFieldSuggestsSimilarNames) {
  const std::string doc = "{ dog { nam } }";
  ExpectOnlyError(doc, "Cannot query field \"nam\" on type \"Dog\". Did you mean \"name\"?", {At(doc, "nam")});
}

TEST(FieldsOnCorrectType, UnknownFieldWithoutSuggestions) {
  const std::string doc = "{ dog { xyzzy } }";
  ExpectOnlyError(doc, "Cannot query field \"xyzzy\" on type \"Dog\".", {At(doc, "xyzzy")});
}

TEST(FieldsOnCorrectType, OnInterfaceSuggestsImplementations) {
  const std::string doc = "{ pet { barks } }";
  ExpectOnlyError(doc, "Cannot query field \"barks\" on type \"Pet\". Did you mean to use an inline fragment on \"Dog\"?",
                  {At(doc, "barks")});
}

TEST(FieldsOnCorrectType, OnUnionSuggestsInterfacesFirst) {
  const std::string doc = "{ catOrDog { name } }";
  ExpectOnlyError(doc,
                  "Cannot query field \"name\" on type \"CatOrDog\". Did you mean to use an inline fragment on "
                  "\"Named\", \"Pet\", \"Cat\", or \"Dog\"?",
                  {At(doc, "name")});
}

TEST(FieldsOnCorrectType, SchemaMetaFieldOnlyOnQueryRoot) {
  const std::string doc = "{ dog { __schema { queryType { name } } } }";
  ExpectError(doc, "Cannot query field \"__schema\" on type \"Dog\".", {At(doc, "__schema")});
}

TEST(FieldsOnCorrectType, AliasedFieldIsReportedAtTheAlias) {
  const std::string doc = "{ dog { label: nickName } }";
  ExpectOnlyError(doc, "Cannot query field \"nickName\" on type \"Dog\". Did you mean \"nickname\" or \"name\"?",
                  {At(doc, "label")});
}


TEST(ScalarLeafs, LeavesWithoutAndObjectsWithSelections) {
  ExpectValid("{ dog { name barks owner { friends { name } } } cat { furColor } }");
}

TEST(ScalarLeafs, LeafWithSelection) {
  const std::string doc = "{ dog { name { x } } }";
  ExpectOnlyError(doc, "Field \"name\" must not have a selection since type \"String\" has no subfields.",
                  {At(doc, "{ x")});
  const std::string e = "{ cat { furColor { x } } }";
  ExpectOnlyError(e, "Field \"furColor\" must not have a selection since type \"Color\" has no subfields.",
                  {At(e, "{ x")});
}

TEST(ScalarLeafs, ObjectWithoutSelection) {
  const std::string doc = "{ dog }";
  ExpectOnlyError(doc, "Field \"dog\" of type \"Dog\" must have a selection of subfields. Did you mean \"dog { ... }\"?",
                  {At(doc, "dog")});
  const std::string list = "{ human(id: 1) { friends } }";
  ExpectOnlyError(list,
                  "Field \"friends\" of type \"[Human!]!\" must have a selection of subfields. Did you mean \"friends "
                  "{ ... }\"?",
                  {At(list, "friends")});
}


// ---- 5.5 fragments -------------------------------------------------------------------------------------

TEST(UniqueFragmentNames, DistinctNamesAreValid) {
  ExpectValid("{ dog { ...A ...B } }\nfragment A on Dog { name }\nfragment B on Dog { barks }");
}

TEST(UniqueFragmentNames, RepeatedName) {
  const std::string doc = "{ dog { ...F } }\nfragment F on Dog { name }\nfragment F on Dog { name }";
  ExpectOnlyError(doc, "There can be only one fragment named \"F\".", {At(doc, "F on"), At(doc, "F on", 2)});
}

TEST(KnownTypeNames, KnownTypesInVariablesAndConditions) {
  ExpectValid(
      "query Q($f: Filter, $c: Color!) { search(filter: {limit: 1, nested: $f}) { ... on Human { name } } args(ints: "
      "[1]) @include(if: true) ...F args2: args(color: GREEN) dog { ... { name } } c: args(color: $c) }\n"
      "fragment F on Query { dog { name } }");
}

TEST(KnownTypeNames, UnknownVariableType) {
  const std::string doc = "query Q($a: [Strin!]) { args(string: $a) }";
  ExpectError(doc, "Unknown type \"Strin\". Did you mean \"String\"?", {At(doc, "Strin")});
}

TEST(KnownTypeNames, UnknownFragmentTypeCondition) {
  const std::string doc = "{ dog { ...F } }\nfragment F on Dgo { name }";
  ExpectOnlyError(doc, "Unknown type \"Dgo\". Did you mean \"Dog\"?", {At(doc, "Dgo")});
}

TEST(KnownTypeNames, UnknownInlineFragmentTypeCondition) {
  const std::string doc = "{ pet { ... on Kitten { name } } }";
  ExpectOnlyError(doc, "Unknown type \"Kitten\". Did you mean \"Filter\"?", {At(doc, "Kitten")});
  const std::string far = "{ pet { ... on Zebra { name } } }";
  ExpectOnlyError(far, "Unknown type \"Zebra\".", {At(far, "Zebra")});
}

TEST(FragmentsOnCompositeTypes, ObjectInterfaceAndUnionConditions) {
  ExpectValid("{ dog { ...F ... on Pet { name } } catOrDog { ... on CatOrDog { __typename } } }\n"
              "fragment F on Dog { name }");
}

TEST(FragmentsOnCompositeTypes, FragmentOnScalar) {
  const std::string doc = "{ dog { ...F } }\nfragment F on Color { x }";
  ExpectOnlyError(doc, "Fragment \"F\" cannot condition on non composite type \"Color\".", {At(doc, "Color")});
}

TEST(FragmentsOnCompositeTypes, InlineFragmentOnScalarOrInput) {
  const std::string doc = "{ dog { ... on Boolean { x } } }";
  ExpectOnlyError(doc, "Fragment cannot condition on non composite type \"Boolean\".", {At(doc, "Boolean")});
  const std::string input = "{ dog { ... on Filter { x } } }";
  ExpectOnlyError(input, "Fragment cannot condition on non composite type \"Filter\".", {At(input, "Filter")});
}

TEST(NoUnusedFragments, FragmentsUsedTransitively) {
  ExpectValid("query Q { dog { ...A } }\nfragment A on Dog { owner { ...B } }\nfragment B on Human { name }");
}

TEST(NoUnusedFragments, UnusedFragment) {
  const std::string doc = "{ dog { name } }\nfragment Unused on Dog { name }";
  ExpectOnlyError(doc, "Fragment \"Unused\" is never used.", {{2, 1}});
}

TEST(NoUnusedFragments, FragmentUsedOnlyByUnusedFragment) {
  const std::string doc = "{ dog { name } }\nfragment A on Dog { ...B }\nfragment B on Dog { name }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "Fragment \"A\" is never used.");
  EXPECT_EQ(errors[1].message, "Fragment \"B\" is never used.");
  EXPECT_EQ(errors[1].locations, (std::vector<Location>{{3, 1}}));
}

TEST(KnownFragmentNames, KnownFragments) { ExpectValid("{ dog { ...F } }\nfragment F on Dog { name }"); }

TEST(KnownFragmentNames, UnknownFragmentIsReportedAtItsName) {
  const std::string doc = "{ dog { ...Missing } }";
  ExpectOnlyError(doc, "Unknown fragment \"Missing\".", {At(doc, "Missing")});
}

TEST(NoFragmentCycles, SharedFragmentsAreNotCycles) {
  ExpectValid("{ dog { ...A ...B } }\nfragment A on Dog { ...C }\nfragment B on Dog { ...C }\nfragment C on Dog { name }");
}

TEST(NoFragmentCycles, SpreadWithinItself) {
  const std::string doc = "{ dog { ...A } }\nfragment A on Dog { ...A }";
  ExpectOnlyError(doc, "Cannot spread fragment \"A\" within itself.", {At(doc, "...A", 2)});
}

TEST(NoFragmentCycles, CycleThroughAnotherFragment) {
  const std::string doc = "{ dog { ...A } }\nfragment A on Dog { owner { name } ...B }\nfragment B on Dog { ...A }";
  ExpectOnlyError(doc, "Cannot spread fragment \"A\" within itself via \"B\".", {At(doc, "...B"), At(doc, "...A", 2)});
}

TEST(NoFragmentCycles, LongCycleIsReportedOnceWithoutRecursion) {
  constexpr int kFragments = 20000;
  std::string doc = "{ dog { ...F0 } }\n";
  for (int i = 0; i < kFragments; ++i)
    doc += "fragment F" + std::to_string(i) + " on Dog { ...F" + std::to_string((i + 1) % kFragments) + " }\n";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 1u) << errors[0].message.substr(0, 200);
  EXPECT_EQ(errors[0].message.rfind("Cannot spread fragment \"F0\" within itself via \"F1\", \"F2\", ", 0), 0u);
  EXPECT_EQ(errors[0].locations.size(), static_cast<std::size_t>(kFragments));
}

TEST(PossibleFragmentSpreads, SpreadsThatCanApply) {
  ExpectValid(
      "{ pet { ... on Dog { barks } ...CatF } dog { ... on Pet { name } ... on CatOrDog { __typename } } "
      "catOrDog { ... on Pet { name } } dogOrHuman { ... on CatOrDog { __typename } } named { ... on Pet { name } } }\n"
      "fragment CatF on Cat { meows }");
}

TEST(PossibleFragmentSpreads, InlineObjectOnDifferentObject) {
  const std::string doc = "{ dog { ... on Cat { meows } } }";
  ExpectOnlyError(doc, "Fragment cannot be spread here as objects of type \"Dog\" can never be of type \"Cat\".",
                  {At(doc, "...")});
}

TEST(PossibleFragmentSpreads, NamedFragmentOnDifferentObject) {
  const std::string doc = "{ dog { ...CatFields } }\nfragment CatFields on Cat { meows }";
  ExpectOnlyError(doc,
                  "Fragment \"CatFields\" cannot be spread here as objects of type \"Dog\" can never be of type "
                  "\"Cat\".",
                  {At(doc, "...")});
}

TEST(PossibleFragmentSpreads, ObjectOutsideUnion) {
  const std::string doc = "{ catOrDog { ... on Human { name } } }";
  ExpectOnlyError(doc,
                  "Fragment cannot be spread here as objects of type \"CatOrDog\" can never be of type \"Human\".",
                  {At(doc, "...")});
}

TEST(PossibleFragmentSpreads, DisjointAbstractTypes) {
  const std::string doc = "{ humanOrAlien { ... on Pet { name } } }";
  ExpectOnlyError(doc,
                  "Fragment cannot be spread here as objects of type \"HumanOrAlien\" can never be of type \"Pet\".",
                  {At(doc, "...")});
}


// ---- the whole -----------------------------------------------------------------------------------------

TEST(Validate, RichValidDocument) {
  ExpectValid(R"(
    query Everything($id: ID!, $withOwner: Boolean = true, $filter: Filter = {limit: 10}, $when: DateTime) @onQuery {
      human(id: $id) { ...HumanFields relatives(first: 2) { name } }
      search(filter: $filter) {
        __typename
        ... on Human { name iq }
        ... on Alien { name numEyes }
        ... on Pet { nickname }
      }
      pet { name ... on Dog { owner @include(if: $withOwner) { ...HumanFields } doesKnowCommand(command: HEEL) } }
      args(when: $when, json: {anything: [1, true]})
      __schema { types { name kind } }
    }
    fragment HumanFields on Human { id name friends { name } }
    mutation Adopt { createDog(name: "Rex") { id ... on Named { name } } }
  )");
}

TEST(Validate, ErrorsComeInDocumentOrderWithCodes) {
  const std::string doc = "{ dog { nme } }\nquery Q { cat { meow } }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 3u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "This anonymous operation must be the only defined operation.");
  EXPECT_EQ(errors[1].message, "Cannot query field \"nme\" on type \"Dog\". Did you mean \"name\"?");
  EXPECT_EQ(errors[2].message, "Cannot query field \"meow\" on type \"Cat\". Did you mean \"meows\"?");
  for (const auto& e : errors) EXPECT_EQ(e.code, "GRAPHQL_VALIDATION_FAILED");
  EXPECT_EQ(errors[2].to_json(),
            "{\"message\":\"Cannot query field \\\"meow\\\" on type \\\"Cat\\\". Did you mean \\\"meows\\\"?\","
            "\"locations\":[{\"line\":2,\"column\":17}],\"extensions\":{\"code\":\"GRAPHQL_VALIDATION_FAILED\"}}");
}

TEST(Validate, ErrorLimitAbortsWithAFinalError) {
  std::string doc = "{ dog {";
  for (int i = 0; i < 10; ++i) doc += " unknown" + std::to_string(i);
  doc += " } }";
  ValidationOptions options;
  options.max_errors = 3;
  const auto errors = Validate(doc, options);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[2].message, "Cannot query field \"unknown2\" on type \"Dog\".");
  EXPECT_EQ(errors[3].message, "Too many validation errors, error limit reached. Validation aborted.");
  EXPECT_TRUE(errors[3].locations.empty());
  EXPECT_EQ(Validate(doc).size(), 10u);
}

TEST(Validate, MissingRootTypesLeaveOperationsUnchecked) {
  SchemaResult r = Schema::from_sdl("type Query { a: Int }");
  ASSERT_TRUE(r.ok());
  ParseResult parsed = parse("mutation { anything { goes } }");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(validate(*r.schema, *parsed.document).empty());
}

}  // namespace
}  // namespace cutoff::graphql
