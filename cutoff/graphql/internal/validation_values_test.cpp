// The validation rules on arguments, values, directives and variables (internal/validation_values.cpp),
// through validate().

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cutoff/graphql/internal/validation_test_support.hpp"

namespace cutoff::graphql {
namespace {

// ---- 5.4 arguments ------------------------------------------------------------------------------------

TEST(KnownArgumentNames, KnownFieldAndDirectiveArguments) {
  ExpectValid("{ dog @include(if: true) { doesKnowCommand(command: SIT) isHouseTrained name @cached(ttl: 5) } }");
}

TEST(KnownArgumentNames, UnknownFieldArgumentWithSuggestion) {
  const std::string doc = "{ dog { doesKnowCommand(comand: SIT) } }";
  ExpectError(doc, "Unknown argument \"comand\" on field \"Dog.doesKnowCommand\". Did you mean \"command\"?",
              {At(doc, "comand")});
}

TEST(KnownArgumentNames, UnknownArgumentOnInterfaceField) {
  const std::string doc = "{ pet { name(upper: true) } }";
  ExpectOnlyError(doc, "Unknown argument \"upper\" on field \"Pet.name\".", {At(doc, "upper")});
}

TEST(KnownArgumentNames, UnknownDirectiveArgument) {
  const std::string doc = "{ dog @skip(if: true, unless: false) { name } }";
  ExpectOnlyError(doc, "Unknown argument \"unless\" on directive \"@skip\".", {At(doc, "unless")});
  const std::string s = "{ dog { name @cached(tll: 5) } }";
  ExpectOnlyError(s, "Unknown argument \"tll\" on directive \"@cached\". Did you mean \"ttl\"?", {At(s, "tll")});
}

TEST(UniqueArgumentNames, DistinctArgumentsAreValid) {
  ExpectValid("{ multipleReqs(req1: 1, req2: 2) dog @include(if: true) { name } }");
}

TEST(UniqueArgumentNames, RepeatedFieldArgument) {
  const std::string doc = "{ dog { isHouseTrained(atOtherHomes: true, atOtherHomes: false) } }";
  ExpectOnlyError(doc, "There can be only one argument named \"atOtherHomes\".",
                  {At(doc, "atOtherHomes"), At(doc, "atOtherHomes", 2)});
}

TEST(UniqueArgumentNames, RepeatedDirectiveArgument) {
  const std::string doc = "{ dog @include(if: true, if: false) { name } }";
  ExpectOnlyError(doc, "There can be only one argument named \"if\".", {At(doc, "if"), At(doc, "if", 2)});
}

TEST(ProvidedRequiredArguments, RequiredArgumentsProvidedOrDefaulted) {
  ExpectValid("{ multipleReqs(req1: 1, req2: 2) args dog { isHouseTrained } human(id: 4) { name } }");
}

TEST(ProvidedRequiredArguments, MissingFieldArgument) {
  const std::string doc = "{ dog { doesKnowCommand } }";
  ExpectOnlyError(doc,
                  "Field \"doesKnowCommand\" argument \"command\" of type \"DogCommand!\" is required, but it was not "
                  "provided.",
                  {At(doc, "doesKnowCommand")});
}

TEST(ProvidedRequiredArguments, EachMissingArgumentIsReported) {
  const std::string doc = "{ multipleReqs }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message,
            "Field \"multipleReqs\" argument \"req1\" of type \"Int!\" is required, but it was not provided.");
  EXPECT_EQ(errors[1].message,
            "Field \"multipleReqs\" argument \"req2\" of type \"Int!\" is required, but it was not provided.");
}

TEST(ProvidedRequiredArguments, MissingDirectiveArgument) {
  const std::string doc = "{ dog @include { name } }";
  ExpectOnlyError(doc, "Directive \"@include\" argument \"if\" of type \"Boolean!\" is required, but it was not provided.",
                  {At(doc, "@include")});
}

TEST(ProvidedRequiredArguments, MetaFieldArgument) {
  const std::string doc = "{ __type { name } }";
  ExpectOnlyError(doc, "Field \"__type\" argument \"name\" of type \"String!\" is required, but it was not provided.",
                  {At(doc, "__type")});
}

TEST(ProvidedRequiredArguments, ReportedAfterTheFieldsOwnErrors) {
  // graphql-js checks required arguments when leaving the field.
  const std::string doc = "{ dog { doesKnowCommand(comand: SIT) } }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[1].message,
            "Field \"doesKnowCommand\" argument \"command\" of type \"DogCommand!\" is required, but it was not "
            "provided.");
}


// ---- 5.6 values ----------------------------------------------------------------------------------------

TEST(ValuesOfCorrectType, GoodLiterals) {
  ExpectValid(
      "{ args(int: -2147483648, float: 1, string: \"s\", boolean: false, id: 4, color: RED, ints: [1, 2], "
      "when: \"2021-10-01T00:00:00Z\", json: {a: [1, \"x\", {b: null, c: RED}]}, point: {x: 1, y: 2.5}, "
      "withDefault: 3, matrix: [[1], [2, null]], filters: [{limit: 1}]) "
      "a2: args(id: \"x\", float: -1.5e3, int: 2147483647, ints: null, string: \"\"\"block\"\"\") }");
}

TEST(ValuesOfCorrectType, SingleValueForAList) {
  ExpectValid("{ args(ints: 1, matrix: 1, filters: {limit: 2}) nonNull(int: 1, ints: 3) }");
}

TEST(ValuesOfCorrectType, IntFromString) {
  const std::string doc = "{ args(int: \"3\") }";
  ExpectOnlyError(doc, "Int cannot represent non-integer value: \"3\"", {At(doc, "\"3\"")});
}

TEST(ValuesOfCorrectType, IntFromFloat) {
  const std::string doc = "{ args(int: 1.5) }";
  ExpectOnlyError(doc, "Int cannot represent non-integer value: 1.5", {At(doc, "1.5")});
}

TEST(ValuesOfCorrectType, IntOutside32Bits) {
  const std::string doc = "{ args(int: 2147483648) }";
  ExpectOnlyError(doc, "Int cannot represent non 32-bit signed integer value: 2147483648", {At(doc, "2147483648")});
  const std::string huge = "{ args(int: -99999999999999999999999) }";
  ExpectOnlyError(huge, "Int cannot represent non 32-bit signed integer value: -99999999999999999999999",
                  {At(huge, "-9")});
}

TEST(ValuesOfCorrectType, FloatFromString) {
  const std::string doc = "{ args(float: \"1.5\") }";
  ExpectOnlyError(doc, "Float cannot represent non numeric value: \"1.5\"", {At(doc, "\"1.5\"")});
}

TEST(ValuesOfCorrectType, StringFromNumberWithEscapesInTheMessage) {
  const std::string doc = "{ args(string: 1) }";
  ExpectOnlyError(doc, "String cannot represent a non string value: 1", {At(doc, "1")});
  const std::string s = "{ args(int: \"a\\\"b\\n\") }";
  ExpectOnlyError(s, "Int cannot represent non-integer value: \"a\\\"b\\n\"", {At(s, "\"a")});
}

TEST(ValuesOfCorrectType, BooleanFromEnum) {
  const std::string doc = "{ args(boolean: TRUE) }";
  ExpectOnlyError(doc, "Boolean cannot represent a non boolean value: TRUE", {At(doc, "TRUE")});
}

TEST(ValuesOfCorrectType, IdFromFloat) {
  const std::string doc = "{ args(id: 1.5) }";
  ExpectOnlyError(doc, "ID cannot represent a non-string and non-integer value: 1.5", {At(doc, "1.5")});
}

TEST(ValuesOfCorrectType, EnumFromString) {
  const std::string doc = "{ args(color: \"RED\") }";
  ExpectOnlyError(doc, "Enum \"Color\" cannot represent non-enum value: \"RED\". Did you mean the enum value \"RED\" or \"GREEN\"?",
                  {At(doc, "\"RED\"")});
}

TEST(ValuesOfCorrectType, UnknownEnumValue) {
  const std::string doc = "{ args(color: red) }";
  ExpectOnlyError(doc, "Value \"red\" does not exist in \"Color\" enum. Did you mean the enum value \"RED\"?",
                  {At(doc, "red")});
  const std::string far = "{ args(color: PURPLE) }";
  ExpectOnlyError(far, "Value \"PURPLE\" does not exist in \"Color\" enum.", {At(far, "PURPLE")});
}

TEST(ValuesOfCorrectType, NullForNonNull) {
  const std::string doc = "{ nonNull(int: null) }";
  ExpectOnlyError(doc, "Expected value of type \"Int!\", found null.", {At(doc, "null")});
}

TEST(ValuesOfCorrectType, NullListItemForNonNullItems) {
  const std::string doc = "{ nonNull(int: 1, ints: [1, null]) }";
  ExpectOnlyError(doc, "Expected value of type \"Int!\", found null.", {At(doc, "null")});
}

TEST(ValuesOfCorrectType, BadListItem) {
  const std::string doc = "{ args(ints: [1, \"2\", 3]) }";
  ExpectOnlyError(doc, "Int cannot represent non-integer value: \"2\"", {At(doc, "\"2\"")});
}

TEST(ValuesOfCorrectType, ListWhereAScalarIsExpectedIsReportedWhole) {
  const std::string doc = "{ args(int: [1, \"x\"]) }";
  ExpectOnlyError(doc, "Int cannot represent non-integer value: [1, \"x\"]", {At(doc, "[")});
}

TEST(ValuesOfCorrectType, ObjectWhereAScalarIsExpected) {
  const std::string doc = "{ args(int: {a: 1, b: \"c\"}) }";
  ExpectOnlyError(doc, "Int cannot represent non-integer value: {a: 1, b: \"c\"}", {At(doc, "{a")});
}

TEST(ValuesOfCorrectType, ScalarWhereAnInputObjectIsExpected) {
  const std::string doc = "{ search(filter: 1) { name } }";
  ExpectOnlyError(doc, "Expected value of type \"Filter!\", found 1.", {At(doc, "1")});
}

TEST(ValuesOfCorrectType, NestedInputObjectFields) {
  const std::string doc = "{ search(filter: {limit: 1, nested: {limit: \"x\"}, tags: [\"a\", 2]}) { name } }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "Int cannot represent non-integer value: \"x\"");
  EXPECT_EQ(errors[0].locations, (std::vector<Location>{At(doc, "\"x\"")}));
  EXPECT_EQ(errors[1].message, "String cannot represent a non string value: 2");
}

TEST(ValuesOfCorrectType, CustomScalarAcceptsAnyLiteralWithoutCodec) {
  ExpectValid("{ a: args(json: 1) b: args(json: \"x\") c: args(json: [ENUM, {deep: [null]}]) d: args(json: null) }");
}

TEST(ValuesOfCorrectType, CustomScalarCodecRejects) {
  const std::string doc = "{ args(when: 12) }";
  ExpectOnlyError(doc, "Expected value of type \"DateTime\", found 12.", {At(doc, "12")});
}

TEST(ValuesOfCorrectType, CustomScalarCodecThrows) {
  const std::string doc = "{ args(when: \"yesterday\") }";
  ExpectOnlyError(doc, "Expected value of type \"DateTime\", found \"yesterday\"; not an RFC 3339 date-time",
                  {At(doc, "\"yesterday\"")});
}

TEST(ValuesOfCorrectType, VariableDefaultValues) {
  ExpectValid("query Q($i: Int = 1, $c: Color = RED, $f: Filter = {limit: 2}) { args(int: $i, color: $c) "
              "search(filter: $f) { name } }");
  const std::string doc = "query Q($i: Int = \"x\") { args(int: $i) }";
  ExpectOnlyError(doc, "Int cannot represent non-integer value: \"x\"", {At(doc, "\"x\"")});
  const std::string nn = "query Q($i: Int! = null) { args(int: $i) }";
  ExpectOnlyError(nn, "Expected value of type \"Int!\", found null.", {At(nn, "null")});
}

TEST(ValuesOfCorrectType, DirectiveArguments) {
  const std::string doc = "{ dog @include(if: \"yes\") { name } }";
  ExpectOnlyError(doc, "Boolean cannot represent a non boolean value: \"yes\"", {At(doc, "\"yes\"")});
}

TEST(ValuesOfCorrectType, UnknownArgumentValuesAreNotTypeChecked) {
  const std::string doc = "{ args(nope: {x: [1, \"a\"]}) }";
  ExpectOnlyError(doc, "Unknown argument \"nope\" on field \"Query.args\".", {At(doc, "nope")});
}

TEST(InputObjectRequiredFields, AllRequiredFieldsProvidedOrDefaulted) {
  ExpectValid("{ search(filter: {limit: 1}) { name } args(point: {x: 1, y: 2}) }");
}

TEST(InputObjectRequiredFields, MissingRequiredField) {
  const std::string doc = "{ search(filter: {color: RED}) { name } }";
  ExpectOnlyError(doc, "Field \"Filter.limit\" of required type \"Int!\" was not provided.", {At(doc, "{color")});
}

TEST(InputObjectRequiredFields, NullForRequiredField) {
  const std::string doc = "{ args(point: {x: 1, y: null}) }";
  ExpectOnlyError(doc, "Expected value of type \"Float!\", found null.", {At(doc, "null")});
}

TEST(InputObjectRequiredFields, InsideListsAndNestedObjects) {
  const std::string doc = "{ args(filters: [{limit: 1}, {color: RED}]) search(filter: {limit: 1, nested: {}}) { name } }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "Field \"Filter.limit\" of required type \"Int!\" was not provided.");
  EXPECT_EQ(errors[0].locations, (std::vector<Location>{At(doc, "{color")}));
  EXPECT_EQ(errors[1].locations, (std::vector<Location>{At(doc, "{}")}));
}

TEST(InputObjectFieldNames, KnownFields) { ExpectValid("{ search(filter: {limit: 1, tags: [\"a\"], size: LARGE}) { name } }"); }

TEST(InputObjectFieldNames, UnknownFieldWithSuggestion) {
  const std::string doc = "{ search(filter: {limit: 1, colour: RED}) { name } }";
  ExpectOnlyError(doc, "Field \"colour\" is not defined by type \"Filter\". Did you mean \"color\"?", {At(doc, "colour")});
}

TEST(InputObjectFieldNames, UnknownFieldInNestedObject) {
  const std::string doc = "{ args(point: {x: 1, y: 2, z: 3}) }";
  ExpectOnlyError(doc, "Field \"z\" is not defined by type \"Point\". Did you mean \"x\" or \"y\"?", {At(doc, "z:")});
}

TEST(UniqueInputFieldNames, SameNamesInDifferentObjects) {
  ExpectValid("{ search(filter: {limit: 1, nested: {limit: 2, nested: {limit: 3}}}) { name } }");
}

TEST(UniqueInputFieldNames, RepeatedField) {
  const std::string doc = "{ search(filter: {limit: 1, limit: 2}) { name } }";
  ExpectOnlyError(doc, "There can be only one input field named \"limit\".", {At(doc, "limit"), At(doc, "limit", 2)});
}

TEST(UniqueInputFieldNames, RepeatedFieldInsideACustomScalar) {
  const std::string doc = "{ args(json: {a: 1, a: 2}) }";
  ExpectOnlyError(doc, "There can be only one input field named \"a\".", {At(doc, "a:"), At(doc, "a:", 2)});
}

// ---- 5.7 directives ------------------------------------------------------------------------------------

TEST(KnownDirectives, DirectivesInTheirLocations) {
  ExpectValid(
      "query Q($v: Int @onVariable) @onQuery @tag(name: \"q\") { args(int: $v) dog @skip(if: false) { ...F @tag(name: "
      "\"s\") ... @include(if: true) { name } } }\nfragment F on Dog @onFragment { name }\n"
      "mutation M @onMutation { setColor(color: RED) }\nsubscription S @onSubscription { ticks }");
}

TEST(KnownDirectives, UnknownDirective) {
  const std::string doc = "{ dog @unknown { name } }";
  ExpectOnlyError(doc, "Unknown directive \"@unknown\".", {At(doc, "@unknown")});
}

TEST(KnownDirectives, MisplacedDirectives) {
  const std::string doc = "query Q @include(if: true) { dog { name } }";
  ExpectOnlyError(doc, "Directive \"@include\" may not be used on QUERY.", {At(doc, "@include")});
  const std::string f = "{ dog { ...F } }\nfragment F on Dog @onQuery { name }";
  ExpectOnlyError(f, "Directive \"@onQuery\" may not be used on FRAGMENT_DEFINITION.", {At(f, "@onQuery")});
  const std::string d = "{ dog { name @deprecated } }";
  ExpectOnlyError(d, "Directive \"@deprecated\" may not be used on FIELD.", {At(d, "@deprecated")});
  const std::string s = "subscription @onQuery { ticks }";
  ExpectOnlyError(s, "Directive \"@onQuery\" may not be used on SUBSCRIPTION.", {At(s, "@onQuery")});
  const std::string v = "query Q($v: Int @onQuery) { args(int: $v) }";
  ExpectOnlyError(v, "Directive \"@onQuery\" may not be used on VARIABLE_DEFINITION.", {At(v, "@onQuery")});
}

TEST(UniqueDirectivesPerLocation, RepeatableAndSpreadOverLocations) {
  ExpectValid("{ dog @skip(if: false) { name @skip(if: false) @tag(name: \"a\") @tag(name: \"b\") } }");
}

TEST(UniqueDirectivesPerLocation, RepeatedDirective) {
  const std::string doc = "{ dog @skip(if: false) @skip(if: true) { name } }";
  ExpectOnlyError(doc, "The directive \"@skip\" can only be used once at this location.",
                  {At(doc, "@skip"), At(doc, "@skip", 2)});
}

TEST(UniqueDirectivesPerLocation, RepeatedOnOperationAndFragmentSpread) {
  const std::string doc = "query Q @onQuery @onQuery { dog { ...F @include(if: true) @include(if: true) } }\n"
                          "fragment F on Dog { name }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "The directive \"@onQuery\" can only be used once at this location.");
  EXPECT_EQ(errors[1].message, "The directive \"@include\" can only be used once at this location.");
}

// ---- 5.8 variables -------------------------------------------------------------------------------------

TEST(UniqueVariableNames, DistinctNames) { ExpectValid("query Q($a: Int, $b: Int) { args(int: $a, withDefault: $b) }"); }

TEST(UniqueVariableNames, RepeatedName) {
  const std::string doc = "query Q($a: Int, $a: Int) { args(int: $a) }";
  ExpectOnlyError(doc, "There can be only one variable named \"$a\".", {At(doc, "a:"), At(doc, "a:", 2)});
}

TEST(VariablesAreInputTypes, ScalarsEnumsAndInputObjects) {
  ExpectValid("query Q($a: Int, $b: [Int!], $c: Filter!, $e: Color) { args(int: $a, ints: $b, color: $e) "
              "search(filter: $c) { name } }");
}

TEST(VariablesAreInputTypes, ObjectTypeVariable) {
  const std::string doc = "query Q($d: Dog, $l: [Pet!]!) { dog { name } }";
  ExpectError(doc, "Variable \"$d\" cannot be non-input type \"Dog\".", {At(doc, "Dog")});
  const auto errors = Validate(doc);
  ASSERT_GE(errors.size(), 2u);
  EXPECT_EQ(errors[1].message, "Variable \"$l\" cannot be non-input type \"[Pet!]!\".");
  EXPECT_EQ(errors[1].locations, (std::vector<Location>{At(doc, "[Pet")}));
}

TEST(NoUndefinedVariables, DefinedDirectlyAndThroughFragments) {
  ExpectValid("query Q($a: Int, $b: Boolean!) { ...F dog @include(if: $b) { name } }\n"
              "fragment F on Query { args(int: $a) }");
}

TEST(NoUndefinedVariables, UndefinedInNamedOperation) {
  const std::string doc = "query Q { args(int: $x) }";
  ExpectOnlyError(doc, "Variable \"$x\" is not defined by operation \"Q\".", {At(doc, "$x"), At(doc, "query")});
}

TEST(NoUndefinedVariables, UndefinedInAnonymousOperation) {
  const std::string doc = "{ args(int: $x) }";
  ExpectOnlyError(doc, "Variable \"$x\" is not defined.", {At(doc, "$x"), {1, 1}});
}

TEST(NoUndefinedVariables, UndefinedThroughFragmentPerOperation) {
  const std::string doc = "query A($a: Int) { ...F }\nquery B { ...F }\nfragment F on Query { args(int: $a) }";
  ExpectOnlyError(doc, "Variable \"$a\" is not defined by operation \"B\".", {At(doc, "$a)"), {2, 1}});
}

TEST(NoUnusedVariables, UsedDirectlyAndThroughNestedFragments) {
  ExpectValid("query Q($a: Int) { dog { ...F } }\nfragment F on Dog { owner { ...G } }\n"
              "fragment G on Human { relatives(first: $a) { name } r2: relatives(first: 1) @skip(if: false) { ...H } }\n"
              "fragment H on Human { id ... on Human { name } n: name @tag(name: \"x\") }\n"
              "query R($b: [Int]) { args(ints: $b) }");
}

TEST(NoUnusedVariables, UnusedInNamedOperation) {
  const std::string doc = "query Q($a: Int, $b: Int) { args(int: $a) }";
  ExpectOnlyError(doc, "Variable \"$b\" is never used in operation \"Q\".", {At(doc, "$b")});
}

TEST(NoUnusedVariables, UnusedInAnonymousOperation) {
  const std::string doc = "query ($a: Int) { dog { name } }";
  ExpectOnlyError(doc, "Variable \"$a\" is never used.", {At(doc, "$a")});
}

TEST(VariablesInAllowedPosition, CompatibleTypes) {
  ExpectValid(
      "query Q($i: Int!, $n: Int, $d: Int = 1, $l: [Int!], $b: Boolean!, $f: Filter!, $lim: Int!) { nonNull(int: $i, "
      "ints: [$i]) args(int: $i, withDefault: $n, ints: $l) multipleReqs(req1: $d, req2: $i) "
      "dog @include(if: $b) { name } search(filter: $f) { name } s2: search(filter: {limit: $lim, offset: $n}) { name "
      "} }");
}

TEST(VariablesInAllowedPosition, NullableIntoNonNull) {
  const std::string doc = "query Q($i: Int) { nonNull(int: $i) }";
  ExpectOnlyError(doc, "Variable \"$i\" of type \"Int\" used in position expecting type \"Int!\".",
                  {At(doc, "$i"), At(doc, "$i", 2)});
}

TEST(VariablesInAllowedPosition, NullDefaultDoesNotHelp) {
  const std::string doc = "query Q($i: Int = null) { nonNull(int: $i) }";
  ExpectOnlyError(doc, "Variable \"$i\" of type \"Int\" used in position expecting type \"Int!\".",
                  {At(doc, "$i"), At(doc, "$i", 2)});
}

TEST(VariablesInAllowedPosition, WrongNamedOrListType) {
  const std::string doc = "query Q($s: String) { args(ints: $s) }";
  ExpectOnlyError(doc, "Variable \"$s\" of type \"String\" used in position expecting type \"[Int]\".",
                  {At(doc, "$s"), At(doc, "$s", 2)});
  const std::string l = "query Q($l: [Int]) { args(int: $l) }";
  ExpectOnlyError(l, "Variable \"$l\" of type \"[Int]\" used in position expecting type \"Int\".",
                  {At(l, "$l"), At(l, "$l", 2)});
}

TEST(VariablesInAllowedPosition, InputObjectFieldAndDirective) {
  const std::string doc = "query Q($l: Int, $b: Boolean) { search(filter: {limit: $l}) { name @skip(if: $b) } }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "Variable \"$l\" of type \"Int\" used in position expecting type \"Int!\".");
  EXPECT_EQ(errors[1].message, "Variable \"$b\" of type \"Boolean\" used in position expecting type \"Boolean!\".");
  EXPECT_EQ(errors[1].locations, (std::vector<Location>{At(doc, "$b"), At(doc, "$b", 2)}));
}

TEST(VariablesInAllowedPosition, ThroughFragments) {
  const std::string doc = "query Q($c: Color) { args(color: $c) ...G }\n"
                          "fragment G on Query { setColor: args(color: $c) }\n"
                          "query R($c: String) { ...G }";
  ExpectOnlyError(doc, "Variable \"$c\" of type \"String\" used in position expecting type \"Color\".",
                  {At(doc, "$c", 4), At(doc, "$c", 3)});
}

}  // namespace
}  // namespace cutoff::graphql
