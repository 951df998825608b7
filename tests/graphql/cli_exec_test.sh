#!/usr/bin/env bash
# `cutoff graphql exec` as a user meets it:
# - exit codes follow the error table, the response still printed on stdout: 0 no errors,
#   6 a deadline cut (partial data or --whole-response), 2 parse/validation errors and
#   BAD_USER_INPUT, 1 other field errors, 143 SIGTERM;
# - --query and --variables are inline text, @FILE or - (standard input); --schema and
#   --fixture are PATH or @PATH; `--query FILE` says how to write @FILE;
# - errors name the input and where in it: schema path:line:column, fixture JSON
#   path:line:column, "must be a JSON object, not an array";
# - --budget-ms is the budget; --deadline-ms still works, deprecated; numbers are checked.
#
#   tests/graphql/cli_exec_test.sh path/to/cutoff
set -uo pipefail

cutoff=$(realpath "$1")
scale=${CUTOFF_TEST_TIME_SCALE:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok:   $*"; }

cat >schema.graphql <<'SDL'
type Query { hello: String slow: Int missing: Int bad: Int hang: Int echo(s: String): String }
SDL
cat >fixture.json <<'JSON'
{"hello": "hi", "slow": {"$delay_ms": 5000, "$value": 1},
 "missing": {"$error": "no such thing", "$code": "NOT_FOUND"},
 "bad": {"$error": "bad input", "$code": "BAD_USER_INPUT"},
 "hang": {"$hang": true}, "echo": {"$arg": "s"}}
JSON
echo '{ hello }' >hello.graphql

# expect NAME WANT_RC STDOUT_GLOB STDERR_GLOB args...: runs graphql exec with the schema and fixture.
expect() {
  local name=$1 want=$2 out_glob=$3 err_glob=$4; shift 4
  local rc=0
  "$cutoff" graphql exec --schema schema.graphql --fixture fixture.json "$@" >out 2>err </dev/null || rc=$?
  # shellcheck disable=SC2053
  if [[ $rc -eq $want && "$(cat out)" == $out_glob && "$(cat err)" == $err_glob ]]; then
    pass "$name: exit $rc"
  else
    fail "$name: exit $rc (want $want); stdout: $(cat out); stderr: $(cat err)"
  fi
}

# --- exit codes -------------------------------------------------------------------------------
expect "no errors" 0 '{"data":{"hello":"hi"}}' '' --query '{ hello }'
expect "parse error" 2 '{"errors":[*"GRAPHQL_PARSE_FAILED"*' '' --query '{ hello'
expect "validation error" 2 '{"errors":[*"GRAPHQL_VALIDATION_FAILED"*' '' --query '{ nope }'
expect "partial response cut at the deadline" 6 \
  '{"errors":[*"path":["slow"]*"DEADLINE_EXCEEDED"*"data":{"hello":"hi","slow":null}}' '' \
  --query '{ hello slow }' --budget-ms $((50 * scale))
expect "--whole-response at the deadline" 6 '{"errors":[*"DEADLINE_EXCEEDED"*' '' \
  --query '{ hello slow }' --budget-ms $((50 * scale)) --whole-response
expect "a spent budget" 6 '*"DEADLINE_EXCEEDED"*' '' --query '{ slow }' --budget-ms 0
expect "NOT_FOUND field error" 1 '*"NOT_FOUND"*"data":{"hello":"hi","missing":null}}' '' --query '{ hello missing }'
expect "the first error decides" 2 '*"BAD_USER_INPUT"*"NOT_FOUND"*' '' --query '{ bad missing }'
expect "a variable of the wrong type" 2 '{"errors":[*' '' \
  --query 'query ($s: String) { echo(s: $s) }' --variables '{"s": [1]}'

"$cutoff" graphql exec --schema schema.graphql --fixture fixture.json --query '{ hello hang }' >out 2>err &
pid=$!
sleep "$(awk "BEGIN { print 0.3 * $scale }")"
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
if [[ $rc -eq 143 && "$(cat out)" == *'"CANCELLED"'*'"hello":"hi"'* ]]; then
  pass "SIGTERM: exit 143, the response printed with the field cut as CANCELLED"
else
  fail "SIGTERM: exit $rc (want 143): $(cat out) $(cat err)"
fi

# --- inline, @FILE, - -------------------------------------------------------------------------
expect "--query @FILE" 0 '{"data":{"hello":"hi"}}' '' --query @hello.graphql
rc=0; out=$(echo '{ hello }' | "$cutoff" graphql exec --schema schema.graphql --fixture fixture.json --query -) || rc=$?
if [[ $rc -eq 0 && $out == '{"data":{"hello":"hi"}}' ]]; then pass "--query - reads standard input"; else fail "--query -: $rc $out"; fi
rc=0; out=$(echo '{"s": "piped"}' | "$cutoff" graphql exec --schema @schema.graphql --fixture @fixture.json \
              --query 'query ($s: String) { echo(s: $s) }' --variables @-) || rc=$?
if [[ $rc -eq 0 && $out == '{"data":{"echo":"piped"}}' ]]; then
  pass "--variables @- and --schema/--fixture @PATH"
else
  fail "--variables @-: $rc $out"
fi
echo '{"s": "from a file"}' >vars.json
expect "--variables @FILE" 0 '{"data":{"echo":"from a file"}}' '' \
  --query 'query ($s: String) { echo(s: $s) }' --variables @vars.json
expect "--query FILE (the old way) says to write @FILE" 2 '*GRAPHQL_PARSE_FAILED*' \
  '*--query takes the text itself; to read the file hello.graphql, write --query @hello.graphql*' --query hello.graphql
expect "two options reading standard input" 2 '' '*standard input was already read*' --query - --variables -
expect "a missing @FILE" 2 '' '*cannot read --query file nope.graphql: No such file or directory*' --query @nope.graphql

# --- errors name the input and where ----------------------------------------------------------
expect "--variables not JSON" 2 '' '*--variables:1:6: invalid JSON*' --query '{ hello }' --variables '{"a":'
expect "--variables not an object" 2 '' '*--variables must be a JSON object, not an array*' \
  --query '{ hello }' --variables '[1]'
printf '{"hello": "hi",\n "x": 1,}\n' >broken.json
rc=0; "$cutoff" graphql exec --schema schema.graphql --fixture broken.json --query '{ hello }' 2>err || rc=$?
if [[ $rc -eq 2 && "$(cat err)" == *"broken.json:2:9: invalid JSON: "* ]]; then
  pass "a fixture that is not JSON: file:line:column"
else
  fail "broken fixture: exit $rc: $(cat err)"
fi
echo '[1, 2]' >array.json
rc=0; "$cutoff" graphql exec --schema schema.graphql --fixture array.json --query '{ hello }' 2>err || rc=$?
if [[ $rc -eq 2 && "$(cat err)" == *"array.json: the fixture must be a JSON object, not an array"* ]]; then
  pass "a fixture that is not an object says what it is"
else
  fail "array fixture: exit $rc: $(cat err)"
fi
printf 'type Query {\n  a: Strin\n}\n' >bad.graphql
rc=0; "$cutoff" graphql exec --schema bad.graphql --fixture fixture.json --query '{ a }' 2>err || rc=$?
if [[ $rc -eq 2 && "$(cat err)" == *'bad.graphql:2:6: Unknown type "Strin".'* ]]; then
  pass "a schema error: file:line:column"
else
  fail "schema error: exit $rc: $(cat err)"
fi

# --- the budget's name, numbers, usage lines --------------------------------------------------
expect "--deadline-ms still works, deprecated" 6 '*DEADLINE_EXCEEDED*' '*--deadline-ms is deprecated; use --budget-ms*' \
  --query '{ slow }' --deadline-ms $((50 * scale))
expect "--budget-ms and --deadline-ms together" 2 '' '*give the budget once*' --query '{ hello }' --budget-ms 5 --deadline-ms 5
expect "a budget that is not a number" 2 '' "--budget-ms: 'abc' is not a number*" --query '{ hello }' --budget-ms abc
expect "a budget out of range" 2 '' "--budget-ms: '-1' is out of range: 0 to 86400000*" --query '{ hello }' --budget-ms=-1
"$cutoff" graphql exec --help >help
if grep -q '^Usage: cutoff graphql exec' help && grep -q -- '--budget-ms' help && ! grep -q -- '--deadline-ms' help &&
   grep -q -- '--query TEXT REQUIRED .*@FILE.*standard input' help && grep -q -- '--variables TEXT={}' help; then
  pass "--help: 'cutoff' usage, --budget-ms only, the @FILE rule and defaults"
else
  fail "--help:"; cat help
fi

exit $(( failures > 0 ))
