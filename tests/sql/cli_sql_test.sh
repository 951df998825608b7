#!/usr/bin/env bash
# End-to-end proof through the `cutoff sql exec` command line, against the throwaway
# PostgreSQL server of the `postgres` CTest fixture and an SQLite file:
# - a 5 s statement under a 100 ms deadline exits 6 on time, and 50 ms later
#   pg_stat_activity shows nothing running for its request id;
# - the same with --propagation off also exits 6 on time, but the statement is still running;
# - SQLite: an endless recursive query stops at the deadline;
# - SIGINT exits 130; a bad URL or invalid SQL exits 2; other database errors exit 1;
# - statements from arguments, @FILE, - and standard input; several in one text run one by
#   one; column names carry no statement comment; PostgreSQL rows in their JSON types;
# - --budget-ms is the budget (--budget-ms still works, deprecated).
#
#   tests/sql/cli_sql_test.sh path/to/cutoff path/to/postgres-url-file
set -euo pipefail

cutoff="$1"
url=$(cat "$2")
# Time limits include process start-up, which sanitizer builds slow down (see the Makefile).
limit=$(( 600 * ${CUTOFF_TEST_TIME_SCALE:-1} ))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok:   $*"; }

# run_timed VAR_RC VAR_MS args...: runs cutoff, records exit code and wall time.
run_timed() {
  local __rc=$1 __ms=$2; shift 2
  local __start __end __code=0
  __start=$(now_ms)
  "$cutoff" "$@" >"$tmp/out" 2>"$tmp/err" || __code=$?
  __end=$(now_ms)
  printf -v "$__rc" '%s' "$__code"
  printf -v "$__ms" '%s' "$((__end - __start))"
}

active_for() {
  "$cutoff" sql exec --db "$url" \
    "select count(*) as n from pg_stat_activity where state = 'active' and query like '%request_id=''$1''%' and pid <> pg_backend_pid()" |
    sed 's/.*"n":\([0-9]*\).*/\1/'
}

id="cli-deadline-$$-$RANDOM"
run_timed rc ms sql exec --db "$url" --budget-ms 100 --request-id "$id" "select pg_sleep(5)"
sleep 0.05
active=$(active_for "$id")
if [[ $rc -eq 6 && $ms -lt $limit && $active -eq 0 ]]; then
  pass "postgres, propagation on: exit $rc after ${ms} ms, $active active 50 ms later"
else
  fail "postgres, propagation on: exit $rc after ${ms} ms, $active active (want 6, <$limit ms, 0)"; cat "$tmp/err"
fi

id="cli-zombie-$$-$RANDOM"
run_timed rc ms sql exec --db "$url" --budget-ms 100 --propagation off --request-id "$id" "select pg_sleep(3)"
sleep 0.05
active=$(active_for "$id")
if [[ $rc -eq 6 && $ms -lt $limit && $active -eq 1 ]]; then
  pass "postgres, propagation off: exit $rc after ${ms} ms, $active still active 50 ms later (the zombie)"
else
  fail "postgres, propagation off: exit $rc after ${ms} ms, $active active (want 6, <$limit ms, 1)"; cat "$tmp/err"
fi
"$cutoff" sql exec --db "$url" \
  "select pg_cancel_backend(pid) from pg_stat_activity where query like '%request_id=''$id''%' and pid <> pg_backend_pid()" >/dev/null

# A client that dies without sending a cancel: the server-side backstop still ends the
# statement at the deadline (plus a few ms of slack).
id="cli-killed-$$-$RANDOM"
budget=$(( 1000 * ${CUTOFF_TEST_TIME_SCALE:-1} ))
"$cutoff" sql exec --db "$url" --budget-ms "$budget" --request-id "$id" "select pg_sleep(30)" >/dev/null 2>&1 &
pid=$!
start=$(now_ms)
before=0
while (( $(now_ms) - start < budget / 2 )); do  # wait until the statement runs, then kill the client
  before=$(active_for "$id")
  [[ $before -eq 1 ]] && break
  sleep 0.05
done
kill -KILL "$pid"; wait "$pid" 2>/dev/null || true
sleep "$(( (budget + 300) / 1000 )).$(( (budget + 300) % 1000 / 100 ))"
after=$(active_for "$id")
if [[ $before -eq 1 && $after -eq 0 ]]; then
  pass "postgres, client killed: the server ended the statement at its deadline"
else
  fail "postgres, client killed: active before deadline $before (want 1), after $after (want 0)"
fi

run_timed rc ms sql exec --db "sqlite:$tmp/app.db" --budget-ms 100 \
  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
if [[ $rc -eq 6 && $ms -lt $limit ]]; then
  pass "sqlite: endless query exit $rc after ${ms} ms"
else
  fail "sqlite: endless query exit $rc after ${ms} ms (want 6, <$limit ms)"; cat "$tmp/err"
fi

run_timed rc ms sql exec --db "sqlite:$tmp/app.db" "create table t(x)" "insert into t values (1), (2)" "select x from t"
if [[ $rc -eq 0 && "$(cat "$tmp/out")" == $'{"x":1}\n{"x":2}' ]]; then
  pass "sqlite: statements run in order, rows as JSON lines"
else
  fail "sqlite: rc $rc, output: $(cat "$tmp/out")"; cat "$tmp/err"
fi

"$cutoff" sql exec --db sqlite::memory: \
  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c" \
  >/dev/null 2>&1 &
pid=$!
sleep 0.2
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
if [[ $rc -eq 130 ]]; then pass "SIGINT stops the statement, exit 130"; else fail "SIGINT: exit $rc (want 130)"; fi

rc=0; "$cutoff" sql exec --db sqlite::memory: "select * from missing" 2>/dev/null || rc=$?
if [[ $rc -eq 1 ]]; then pass "missing table exits 1"; else fail "missing table: exit $rc (want 1)"; fi

rc=0; "$cutoff" sql exec --db "mysql://x" "select 1" 2>/dev/null || rc=$?
if [[ $rc -eq 2 ]]; then pass "unsupported URL exits 2"; else fail "unsupported URL: exit $rc (want 2)"; fi

rc=0; "$cutoff" sql exec --db sqlite::memory: "selec 1" 2>"$tmp/err" || rc=$?
if [[ $rc -eq 2 ]] && grep -q "SQLSTATE 42000" "$tmp/err"; then
  pass "invalid SQL exits 2 (invalid_argument) with its SQLSTATE"
else
  fail "database error: exit $rc: $(cat "$tmp/err")"
fi

# --- where statements come from, and what comes out ----------------------------------------------
rc=0; out=$("$cutoff" sql exec --db sqlite::memory: "select 1; select 2 as two" "select 'x'" 2>"$tmp/err") || rc=$?
if [[ $rc -eq 0 && "$out" == $'{"1":1}\n{"two":2}\n{"\'x\'":"x"}' ]]; then
  pass "sqlite: several statements in one argument each run, column names without the comment"
else
  fail "sqlite: several statements: rc $rc, output: $out"; cat "$tmp/err"
fi
printf 'create table t(x);\ninsert into t values (1), (2); -- two rows\n' >"$tmp/schema.sql"
rc=0; out=$(echo "select count(*) as n from t" | "$cutoff" sql exec --db "sqlite:$tmp/files.db" @"$tmp/schema.sql" - \
              2>"$tmp/err") || rc=$?
if [[ $rc -eq 0 && "$out" == '{"n":2}' ]]; then pass "sqlite: @FILE and - (standard input)"; else fail "@FILE and -: rc $rc: $out"; cat "$tmp/err"; fi
rc=0; out=$(printf 'select 3 as three;\nselect 4 as four;\n' | "$cutoff" sql exec --db sqlite::memory: 2>"$tmp/err") || rc=$?
if [[ $rc -eq 0 && "$out" == $'{"three":3}\n{"four":4}' ]]; then
  pass "sqlite: no statement argument reads standard input"
else
  fail "stdin: rc $rc: $out"; cat "$tmp/err"
fi
rc=0; "$cutoff" sql exec --db sqlite::memory: @"$tmp/missing.sql" 2>"$tmp/err" || rc=$?
if [[ $rc -eq 2 ]] && grep -q "cannot read SQL file $tmp/missing.sql: No such file or directory" "$tmp/err"; then
  pass "a missing @FILE exits 2, naming it"
else
  fail "missing @FILE: exit $rc: $(cat "$tmp/err")"
fi
rc=0; "$cutoff" sql exec --db sqlite::memory: --deadline-ms 1000 "select 1" >/dev/null 2>"$tmp/err" || rc=$?
if [[ $rc -eq 0 ]] && grep -q -- "--deadline-ms is deprecated; use --budget-ms" "$tmp/err"; then
  pass "--deadline-ms still works, deprecated"
else
  fail "--deadline-ms: exit $rc: $(cat "$tmp/err")"
fi
rc=0; "$cutoff" sql exec --db sqlite::memory: --budget-ms 0 "select 1" >/dev/null 2>&1 || rc=$?
if [[ $rc -eq 6 ]]; then pass "--budget-ms 0: already spent, exit 6"; else fail "--budget-ms 0: exit $rc (want 6)"; fi

rc=0; out=$("$cutoff" sql exec --db "$url" \
  "select true as t, false as f, '{\"a\": 1}'::jsonb as j, array[1, 2] as a, 1.50::numeric as n, array['a b', 'c'] as s; select 2" \
  2>"$tmp/err") || rc=$?
if [[ $rc -eq 0 && "$out" == $'{"t":true,"f":false,"j":{"a": 1},"a":[1,2],"n":1.50,"s":["a b","c"]}\n{"?column?":2}' ]]; then
  pass "postgres: bool, jsonb, arrays and numeric in their JSON types; two statements in one argument"
else
  fail "postgres types: rc $rc: $out"; cat "$tmp/err"
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
