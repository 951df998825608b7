#!/usr/bin/env bash
# The operation registry through the `cutoff` command line, on the example operations:
# - `ops list` shows each operation's deadline and where it came from (plan or patch);
# - `catalog --format openapi` is valid JSON with x-deadline-seconds and the budget sentence;
# - `ops call` exits 0 with the result, 6 on deadline_exceeded, 1 on commit_ambiguous (a
#   deadline after the commit point), 2 on bad --args, 130 on SIGINT; in-process and with --url
#   against `cutoff ops serve`;
# - `ops serve` honours Idempotency-Key: the same key twice is one order.
#
#   tests/ops/cli_ops_test.sh path/to/cutoff
set -euo pipefail

cutoff="$1"
scale=${CUTOFF_TEST_TIME_SCALE:-1}
tmp=$(mktemp -d)
server_pid=
flaky_pid=
cleanup() {
  if [[ -n $server_pid ]]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [[ -n $flaky_pid ]]; then kill "$flaky_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
failures=0

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok:   $*"; }

# --- ops list ---------------------------------------------------------------------------------
"$cutoff" ops list >"$tmp/list"
if grep -Eq '^example\.orders\.create +2 s +plan$' "$tmp/list" &&
   grep -Eq '^example\.sleep +10 s +patch example\.\*$' "$tmp/list" &&
   grep -Eq '^NAME +DEADLINE +SOURCE$' "$tmp/list"; then
  pass "ops list: deadlines with their source"
else
  fail "ops list"; cat "$tmp/list"
fi

# --- catalog ----------------------------------------------------------------------------------
"$cutoff" catalog --format openapi >"$tmp/openapi.json"
if node -e '
  const doc = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const create = doc.paths["/ops/example.orders.create"].post;
  const sleep = doc.paths["/ops/example.sleep"].post;
  const ok = doc.openapi === "3.1.0" && create["x-deadline-seconds"] === 2 &&
    create.description.includes("Time budget: 2 s.") && sleep["x-deadline-seconds"] === 10 &&
    sleep.requestBody.content["application/json"].schema.required[0] === "ms" &&
    create.responses["504"].headers["Deadline-Expired"] !== undefined;
  process.exit(ok ? 0 : 1);' "$tmp/openapi.json"; then
  pass "catalog --format openapi: x-deadline-seconds and the budget sentence"
else
  fail "catalog --format openapi"; head -c 2000 "$tmp/openapi.json"
fi
"$cutoff" catalog --format json >"$tmp/catalog.json"
if node -e '
  const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const echo = c.operations.find(o => o.name === "example.echo");
  process.exit(echo.deadline_seconds === 10 && echo.deadline_source === "patch" &&
               echo.deadline_selector === "example.*" ? 0 : 1);' "$tmp/catalog.json"; then
  pass "catalog --format json: patch-derived budgets"
else
  fail "catalog --format json"; cat "$tmp/catalog.json"
fi
rc=0; "$cutoff" catalog --format yaml >/dev/null 2>&1 || rc=$?
[[ $rc -eq 2 ]] && pass "catalog --format yaml: usage error" || fail "catalog --format yaml: exit $rc (want 2)"

# --- ops call, in-process and against a server ------------------------------------------------
# call LABEL WANT_RC STDERR_PATTERN ARGS...: runs `ops call` and checks its exit code and stderr.
call() {
  local label=$1 want=$2 pattern=$3; shift 3
  local rc=0 start took
  start=$(now_ms)
  "$cutoff" ops call "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  took=$(( $(now_ms) - start ))
  if [[ $rc -eq $want ]] && { [[ -z $pattern ]] || grep -q "$pattern" "$tmp/err"; }; then
    pass "$label: exit $rc in ${took} ms"
  else
    fail "$label: exit $rc (want $want)"; cat "$tmp/out" "$tmp/err"
  fi
}

# Budgets: the stop lands well inside a long wait; the order commits at `work` and then works on.
work=$((100 * scale))
budget=$((400 * scale))
run_calls() {
  local where=$1; shift
  call "$where echo" 0 "" example.echo --args '{"a":[1,"x"]}' "$@"
  if [[ $(cat "$tmp/out") == '{"a":[1,"x"]}' ]]; then pass "$where echo: result on stdout"; else fail "$where echo output: $(cat "$tmp/out")"; fi
  call "$where sleep past --budget-ms" 6 '"code":"deadline_exceeded"' example.sleep --args '{"ms":20000}' --budget-ms "$budget" "$@"
  call "$where order stopped after its commit" 1 '"code":"commit_ambiguous"' example.orders.create \
    --args "{\"sku\":\"A-1\",\"work_ms\":$work,\"after_commit_ms\":20000}" --budget-ms "$budget" "$@"
  call "$where order stopped before its commit" 6 '"code":"deadline_exceeded"' example.orders.create \
    --args '{"sku":"A-1","work_ms":20000}' --budget-ms "$budget" "$@"
  call "$where order within its budget" 0 "" example.orders.create --args '{"sku":"A-1","work_ms":1,"after_commit_ms":1}' "$@"
  call "$where spent budget" 6 '"code":"deadline_exceeded"' example.budget --budget-ms 0 "$@"
  call "$where unknown operation" 1 '"code":"not_found"' example.nope "$@"
  call "$where bad --args" 2 "" example.echo --args '{nope' "$@"
  call "$where invalid arguments" 2 '"code":"invalid_argument"' example.sleep --args '{"ms":-1}' "$@"

  # --budget-ms tightens the declared 10 s; it never extends it.
  "$cutoff" ops call example.budget --budget-ms 60000 "$@" >"$tmp/out"
  if node -e 'const r = JSON.parse(process.argv[1]); process.exit(r.remaining_ms > 0 && r.remaining_ms <= 10000 ? 0 : 1)' "$(cat "$tmp/out")"; then
    pass "$where --budget-ms 60000 does not extend the 10 s budget: $(cat "$tmp/out")"
  else
    fail "$where budget: $(cat "$tmp/out")"
  fi

  local rc=0 sent took
  "$cutoff" ops call example.sleep --args '{"ms":20000}' "$@" >"$tmp/out" 2>"$tmp/err" &
  local pid=$!
  sleep "$(awk "BEGIN { print 0.3 * $scale }")"
  sent=$(now_ms)
  kill -INT "$pid"
  wait "$pid" || rc=$?
  took=$(( $(now_ms) - sent ))
  # In-process the stop came before any commit point: 130. Against a service the request had
  # left, and the client cannot know what the service did with it: commit_ambiguous, 1.
  local want_rc=130 want_code=cancelled
  if [[ $where == --url ]]; then want_rc=1; want_code=commit_ambiguous; fi
  if [[ $rc -eq $want_rc && $took -lt $((1000 * scale)) ]] && grep -q "\"code\":\"$want_code\"" "$tmp/err"; then
    pass "$where SIGINT: exit $rc ${took} ms after the signal"
  else
    fail "$where SIGINT: exit $rc after ${took} ms (want $want_rc)"; cat "$tmp/err"
  fi
}

run_calls "in-process"

"$cutoff" ops serve --port 0 --quiet --db "sqlite:$tmp/ops.db" >"$tmp/serve.out" 2>"$tmp/serve.err" &
server_pid=$!
url=
for _ in $(seq 1 $((100 * scale))); do
  url=$(grep -o 'http://[0-9.]*:[0-9]*' "$tmp/serve.out" || true)
  [[ -n $url ]] && break
  sleep 0.05
done
if [[ -z $url ]]; then
  fail "ops serve did not print its address"; cat "$tmp/serve.out" "$tmp/serve.err"
else
  pass "ops serve: $url"
  run_calls "--url" --url "$url"
  # Idempotency-Key through the effects store: the same key twice is one order.
  order='{"sku":"K-1","work_ms":1,"after_commit_ms":1}'
  "$cutoff" ops call example.orders.create --args "$order" --idempotency-key "cli-key-$$" --url "$url" >"$tmp/o1" 2>&1 || true
  "$cutoff" ops call example.orders.create --args "$order" --idempotency-key "cli-key-$$" --url "$url" >"$tmp/o2" 2>&1 || true
  "$cutoff" ops call example.orders.create --args "$order" --url "$url" >"$tmp/o3" 2>&1 || true
  if node -e '
    const [a, b, c] = process.argv.slice(1).map(f => JSON.parse(require("fs").readFileSync(f, "utf8")));
    process.exit(a.order_id && a.order_id === b.order_id && a.replayed === false && b.replayed === true &&
                 c.order_id !== a.order_id ? 0 : 1);' "$tmp/o1" "$tmp/o2" "$tmp/o3"; then
    pass "--url: the same Idempotency-Key twice makes one order: $(cat "$tmp/o1")"
  else
    fail "--url idempotency: $(cat "$tmp/o1" "$tmp/o2" "$tmp/o3")"
  fi
  call "--url keyed, other arguments" 1 '"code":"idempotency_conflict"' example.orders.create \
    --args '{"sku":"K-2","work_ms":1,"after_commit_ms":1}' --idempotency-key "cli-key-$$" --url "$url"
  call "--url key for an operation without keys" 2 '"code":"invalid_argument"' example.echo \
    --idempotency-key "cli-key-$$" --url "$url"
  "$cutoff" ops call example.budget --budget-ms 250 --url "$url" >"$tmp/out"
  if node -e 'const r = JSON.parse(process.argv[1]); process.exit(r.remaining_ms > 0 && r.remaining_ms <= 250 ? 0 : 1)' "$(cat "$tmp/out")"; then
    pass "--url: Deadline-Budget-Ms from --budget-ms tightens the service's budget: $(cat "$tmp/out")"
  else
    fail "--url budget: $(cat "$tmp/out")"
  fi
  rc=0
  kill -TERM "$server_pid"; wait "$server_pid" || rc=$?
  server_pid=
  [[ $rc -eq 0 ]] && pass "ops serve: SIGTERM drains and exits 0" || fail "ops serve exit $rc after SIGTERM"
  rc=0
  "$cutoff" ops call example.echo --url "$url" >/dev/null 2>"$tmp/err" || rc=$?
  [[ $rc -eq 1 ]] && pass "--url with nothing listening: exit 1" || fail "--url with nothing listening: exit $rc"
fi

# A keyed call is retried (a refusal before anything ran is answered 503); an unkeyed one is not.
# The service here refuses the first request it gets on each path, then answers.
node -e '
  const seen = {};
  const server = require("http").createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen[req.url] = (seen[req.url] || 0) + 1;
      if (seen[req.url] === 1) {
        res.writeHead(503, {"Content-Type": "application/json"});
        res.end(JSON.stringify({error: {code: "unavailable", message: "warming up"}}));
      } else {
        res.writeHead(200, {"Content-Type": "application/json"});
        res.end(JSON.stringify({attempts: seen[req.url]}));
      }
    });
  });
  server.listen(0, "127.0.0.1", () => console.log("http://127.0.0.1:" + server.address().port));
  // Ends with this script even if it is killed (the trap below covers every other exit).
  const parent = process.ppid;
  setInterval(() => { try { process.kill(parent, 0); } catch { process.exit(0); } }, 500).unref();
' >"$tmp/flaky.out" &
flaky_pid=$!
flaky=
for _ in $(seq 1 $((100 * scale))); do
  flaky=$(grep -o 'http://[0-9.]*:[0-9]*' "$tmp/flaky.out" || true)
  [[ -n $flaky ]] && break
  sleep 0.05
done
if [[ -z $flaky ]]; then
  fail "the refusing test service did not start"
else
  rc=0
  "$cutoff" ops call example.orders.create --idempotency-key "retry-$$" --url "$flaky" >"$tmp/out" 2>&1 || rc=$?
  if [[ $rc -eq 0 ]] && grep -q '"attempts":2' "$tmp/out"; then
    pass "--idempotency-key: a refused call is retried: $(cat "$tmp/out")"
  else
    fail "--idempotency-key retry: exit $rc, $(cat "$tmp/out")"
  fi
  rc=0
  "$cutoff" ops call example.echo --url "$flaky" >"$tmp/out" 2>&1 || rc=$?
  if [[ $rc -eq 1 ]] && grep -q '"code":"unavailable"' "$tmp/out"; then
    pass "no key: a refused call is not retried (exit 1)"
  else
    fail "unkeyed call against a refusing service: exit $rc, $(cat "$tmp/out")"
  fi
fi
kill "$flaky_pid" 2>/dev/null || true
wait "$flaky_pid" 2>/dev/null || true

[[ $failures -eq 0 ]]
