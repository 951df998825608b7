#!/usr/bin/env bash
# @budget through the `cutoff graphql exec` command line (the fixture engine, whose delays are
# pending values):
# - a field capped at 100 ms whose value takes 2 s answers at about 100 ms, null with
#   DEADLINE_EXCEEDED, its sibling keeping its value; the partial response exits 6;
# - a malformed @budget or an unknown directive is a schema error naming file:line:column
#   (exit 2), never a schema that silently has no cap.
#
#   tests/graphql/cli_budget_test.sh path/to/cutoff
set -euo pipefail

cutoff="$1"
scale=${CUTOFF_TEST_TIME_SCALE:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok:   $*"; }

echo 'type Query { slow: Int @budget(ms: 100) fast: Int }' >"$tmp/schema.graphql"
echo '{"slow": {"$delay_ms": 2000, "$value": 1}, "fast": 2}' >"$tmp/fixture.json"
echo '{ slow fast }' >"$tmp/query.graphql"

start=$(now_ms)
rc=0
out=$("$cutoff" graphql exec --schema "$tmp/schema.graphql" --fixture "$tmp/fixture.json" --query "@$tmp/query.graphql") || rc=$?
took=$(( $(now_ms) - start ))
if [[ $rc -eq 6 && "$out" == *'"path":["slow"],"extensions":{"code":"DEADLINE_EXCEEDED"}'* && "$out" == *'"data":{"slow":null,"fast":2}'* ]]; then
  pass "the capped field is cut, its sibling kept"
else
  fail "unexpected response (exit $rc, want 6): $out"
fi
if (( took < 1000 * scale )); then pass "answered in ${took} ms"; else fail "answered in ${took} ms, not about 100"; fi

printf 'type Query {\n  slow: Int @budget(msec: 100)\n  x: Int @nope\n}\n' >"$tmp/bad.graphql"
set +e
err=$("$cutoff" graphql exec --schema "$tmp/bad.graphql" --fixture "$tmp/fixture.json" --query "@$tmp/query.graphql" 2>&1)
rc=$?
set -e
if (( rc == 2 )); then pass "a bad schema exits 2"; else fail "a bad schema exited $rc"; fi
for want in "bad.graphql:2:21: Unknown argument \"msec\" on directive \"@budget\"." \
            "bad.graphql:2:13: Directive \"@budget\" argument \"ms\" of type \"Int!\" is required" \
            "bad.graphql:3:10: Unknown directive \"@nope\"."; do
  if [[ "$err" == *"$want"* ]]; then pass "reports $want"; else fail "no \"$want\" in: $err"; fi
done

exit $(( failures > 0 ))
