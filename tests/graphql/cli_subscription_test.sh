#!/usr/bin/env bash
# Subscriptions through the `cutoff graphql exec` command line, on a fixture with "$events":
# - one JSON line per event, in order, each printed as it comes; exit 0 at the end of a
#   stream without errors, else the first error's code;
# - an event overrunning --event-budget-ms is cut (DEADLINE_EXCEEDED at its path, so exit 6)
#   and the next event still comes on its schedule;
# - --budget-ms bounds the whole stream (exit 6); SIGINT stops it (exit 130) with the
#   event in flight cut as CANCELLED;
# - a source that fails prints one errors line without data (exit 1 for NOT_FOUND); any other
#   fixture value is one event, as a query would be.
#
#   tests/graphql/cli_subscription_test.sh path/to/cutoff
set -euo pipefail

cutoff="$1"
scale=${CUTOFF_TEST_TIME_SCALE:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok:   $*"; }

cat >"$tmp/schema.graphql" <<'SDL'
type Query { a: Int }
type Subscription { ticks: Tick count: Int }
type Tick { n: Int slow: Int }
SDL
echo 'subscription { ticks { n slow } }' >"$tmp/ticks.graphql"
echo 'subscription { count }' >"$tmp/count.graphql"
interval=$((300 * scale))
cat >"$tmp/fixture.json" <<JSON
{"count": 7,
 "ticks": {"\$interval_ms": $interval, "\$events": [
   {"n": 1, "slow": 1},
   {"n": 2, "slow": {"\$delay_ms": 10000, "\$value": 2}},
   {"n": 3, "slow": 3}]}}
JSON

exec_cutoff() { "$cutoff" graphql exec --schema "$tmp/schema.graphql" --fixture "$tmp/fixture.json" "$@"; }

# Each line is stamped with the time it was read, to check the schedule.
start=$(now_ms)
rc=0
exec_cutoff --query "@$tmp/ticks.graphql" --event-budget-ms $((100 * scale)) 2>"$tmp/err" |
  while IFS= read -r line; do echo "$(( $(now_ms) - start )) $line"; done >"$tmp/out" || rc=$?
lines=$(wc -l <"$tmp/out")
first=$(sed -n 1p "$tmp/out" | cut -d' ' -f2-)
second=$(sed -n 2p "$tmp/out" | cut -d' ' -f2-)
third_at=$(sed -n 3p "$tmp/out" | cut -d' ' -f1)
if [[ $rc -eq 6 && $lines -eq 3 && $first == '{"data":{"ticks":{"n":1,"slow":1}}}' &&
      $second == *'"path":["ticks","slow"],"extensions":{"code":"DEADLINE_EXCEEDED"}'*'"data":{"ticks":{"n":2,"slow":null}}'* &&
      $third_at -ge $((2 * interval - 50)) && $third_at -lt $((2 * interval + 1000 * scale)) ]]; then
  pass "three events in order, the slow one cut at its budget, the third at ${third_at} ms"
else
  fail "events: exit $rc (want 6), $lines lines, third at ${third_at:-?} ms"; cat "$tmp/out" "$tmp/err"
fi

rc=0
exec_cutoff --query "@$tmp/ticks.graphql" --event-budget-ms $((100 * scale)) --budget-ms $((interval + 200 * scale)) \
  >"$tmp/out" 2>"$tmp/err" || rc=$?
if [[ $rc -eq 6 && $(wc -l <"$tmp/out") -eq 2 ]] && grep -q deadline_exceeded "$tmp/err"; then
  pass "--budget-ms stops the stream: exit $rc after 2 events"
else
  fail "--budget-ms: exit $rc (want 6)"; cat "$tmp/out" "$tmp/err"
fi

cat >"$tmp/hang.json" <<'JSON'
{"ticks": {"$interval_ms": 100000, "$events": [{"n": 1, "slow": {"$hang": true}}, {"n": 2}]}}
JSON
rc=0
"$cutoff" graphql exec --schema "$tmp/schema.graphql" --fixture "$tmp/hang.json" --query "@$tmp/ticks.graphql" \
  >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep "$(awk "BEGIN { print 0.3 * $scale }")"
sent=$(now_ms)
kill -INT "$pid"
wait "$pid" || rc=$?
took=$(( $(now_ms) - sent ))
if [[ $rc -eq 130 && $took -lt $((500 * scale)) ]] && grep -q '"code":"CANCELLED"' "$tmp/out"; then
  pass "SIGINT: exit $rc ${took} ms after the signal, the event in flight cut as CANCELLED"
else
  fail "SIGINT: exit $rc after ${took} ms (want 130)"; cat "$tmp/out" "$tmp/err"
fi

cat >"$tmp/source-error.json" <<'JSON'
{"ticks": {"$events": {"$error": "no such feed", "$code": "NOT_FOUND"}}}
JSON
rc=0
out=$("$cutoff" graphql exec --schema "$tmp/schema.graphql" --fixture "$tmp/source-error.json" \
        --query "@$tmp/ticks.graphql") || rc=$?
if [[ $rc -eq 1 && $out == '{"errors":[{"message":"no such feed","locations":[{"line":1,"column":16}],"path":["ticks"],"extensions":{"code":"NOT_FOUND"}}]}' ]]; then
  pass "a failing source: one errors line without data"
else
  fail "failing source: exit $rc (want 1): $out"
fi

rc=0
out=$(exec_cutoff --query "@$tmp/count.graphql") || rc=$?
if [[ $rc -eq 0 && $out == '{"data":{"count":7}}' ]]; then
  pass "a plain fixture value is one event"
else
  fail "plain value: exit $rc: $out"
fi

[[ $failures -eq 0 ]]
