#!/usr/bin/env bash
# The conventions every `cutoff` command keeps (docs/cli.md), checked across commands:
# - usage lines say `cutoff ...`, not the binary's path; every option with a value shows its
#   default (or says it has none) in --help; deprecated names are not shown;
# - a busy port: "cannot listen on 127.0.0.1:PORT: address already in use", exit 1, in every
#   serve-like command (graphql serve, ops serve, http relay, demo serve); an --address that is
#   no IP address exits 2;
# - invalid arguments exit 2 (demo serve --mode foo too); a non-number says "'abc' is not a number";
# - ops call --args: inline, @FILE, -; `--args FILE` says to write @FILE; --timeout-ms still works;
# - `cutoff demo` says what it stopped, or that it stopped nothing.
#
#   tests/cli/cli_conventions_test.sh path/to/cutoff
set -uo pipefail

cutoff=$(realpath "$1")
tmp=$(mktemp -d)
holder_pid=
cleanup() {
  if [[ -n $holder_pid ]]; then kill -TERM "$holder_pid" 2>/dev/null; wait "$holder_pid" 2>/dev/null; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 1
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok:   $*"; }

# --- help -------------------------------------------------------------------------------------
for command in "" "demo" "demo serve" "sql exec" "graphql exec" "graphql serve" "http relay" "lab" "lab report" \
               "ops call" "ops serve" "catalog" "saga" "saga list" "saga show" "saga resume" "saga resolve"; do
  # shellcheck disable=SC2086
  "$cutoff" $command --help >help 2>&1
  usage=$(grep '^Usage:' help)
  if [[ $usage != "Usage: cutoff ${command:+$command }"* ]]; then fail "cutoff $command --help: $usage"; continue; fi
  # Each option line (with its wrapped description) that takes a value must show a default.
  missing=$(awk '
    function check() { if (opt ~ /^ *(-h,)?--[a-z-]+ (TEXT|INT|UINT|FLOAT|NUMBER)/ && opt !~ /=[^ ]|REQUIRED|default/) print opt }
    /^  +-/ { if (opt) check(); opt = $0; next }
    /^  +[^ -]/ && opt { opt = opt " " $0; next }
    { if (opt) check(); opt = "" }
    END { if (opt) check() }' help)
  if [[ -n $missing ]]; then fail "cutoff $command --help: no default shown for: $missing"; continue; fi
  if grep -Eq -- '--(deadline|timeout)-ms' help; then fail "cutoff $command --help shows a deprecated name"; continue; fi
  pass "cutoff $command --help: usage names cutoff, defaults shown"
done

# --- a busy port ------------------------------------------------------------------------------
"$cutoff" http relay --port 0 --quiet >holder.out 2>&1 &
holder_pid=$!
for _ in $(seq 100); do grep -q listening holder.out && break; sleep 0.05; done
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' holder.out | head -1)
echo 'type Query { a: Int }' >schema.graphql
echo '{"a": 1}' >fixture.json
busy() {  # NAME args...
  local name=$1; shift
  local rc=0
  timeout 60 "$cutoff" "$@" >busy.out 2>busy.err </dev/null || rc=$?
  if [[ $rc -eq 1 && "$(cat busy.err)" == *"cutoff $name: cannot listen on 127.0.0.1:$port: address already in use" &&
        "$(cat busy.err)" != *boost* && "$(cat busy.err)" != *"system:"* ]]; then
    pass "$name on a busy port: exit 1, $(tail -1 busy.err)"
  else
    fail "$name on a busy port: exit $rc: $(cat busy.err)"
  fi
}
if [[ -n $port ]]; then
  busy "graphql serve" graphql serve --schema schema.graphql --fixture fixture.json --port "$port"
  busy "ops serve" ops serve --port "$port" --db "sqlite:$tmp/ops.db"
  busy "http relay" http relay --port "$port"
  busy "demo serve" demo serve --inventory-port "$port" --inventory-grpc-port 0 --shipping-port 0 --shipping-grpc-port 0 --port 0 --db "sqlite:$tmp/demo.db" --shipping-db "sqlite:$tmp/shipping.db"
else
  fail "the port holder did not start: $(cat holder.out)"
fi
rc=0; "$cutoff" ops serve --address localhost.invalid --port 0 --db "sqlite:$tmp/ops.db" 2>err || rc=$?
if [[ $rc -eq 2 && "$(cat err)" == *"--address: 'localhost.invalid' is not an IP address"* ]]; then
  pass "an --address that is not one exits 2"
else
  fail "bad --address: exit $rc: $(cat err)"
fi

rc=0; "$cutoff" ops serve --port 0 --db mysql://x 2>err || rc=$?
if [[ $rc -eq 2 ]]; then pass "ops serve with a malformed --db exits 2"; else fail "ops serve --db mysql://x: exit $rc: $(cat err)"; fi
rc=0; timeout 60 "$cutoff" ops serve --port 0 --db postgresql://postgres@127.0.0.1:1/x 2>err || rc=$?
if [[ $rc -eq 1 ]]; then pass "ops serve with an unreachable database exits 1"; else fail "unreachable --db: exit $rc: $(cat err)"; fi

# --- invalid arguments ------------------------------------------------------------------------
rc=0; "$cutoff" demo serve --mode foo 2>err || rc=$?
if [[ $rc -eq 2 && "$(cat err)" == *"--mode: foo not in {none,timeouts,cutoff}"* ]]; then
  pass "demo serve --mode foo exits 2"
else
  fail "demo serve --mode foo: exit $rc: $(cat err)"
fi
rc=0; "$cutoff" demo serve --max-inventory-calls 300 --inventory-max-connections 200 2>err || rc=$?
if [[ $rc -eq 2 ]]; then pass "demo serve: conflicting limits exit 2"; else fail "conflicting limits: exit $rc: $(cat err)"; fi
for args in "http relay --port abc" "demo --budget-ms abc" "ops serve --grace-ms x1" "lab --scale abc"; do
  flag=$(echo "$args" | awk '{ for (i = 1; i <= NF; ++i) if ($i ~ /^--/) print $i }')
  value=${args##* }
  rc=0
  # shellcheck disable=SC2086
  "$cutoff" $args 2>err || rc=$?
  if [[ $rc -eq 2 && "$(head -1 err)" == "$flag: '$value' is not a number" ]]; then
    pass "cutoff $args: $(head -1 err)"
  else
    fail "cutoff $args: exit $rc: $(cat err)"
  fi
done

# --- ops call --args --------------------------------------------------------------------------
echo '{"a": [1, "x"]}' >args.json
out=$("$cutoff" ops call example.echo --args @args.json) && [[ $out == '{"a":[1,"x"]}' ]] &&
  pass "ops call --args @FILE" || fail "ops call --args @FILE: $out"
out=$(echo '{"b": 2}' | "$cutoff" ops call example.echo --args -) && [[ $out == '{"b":2}' ]] &&
  pass "ops call --args -" || fail "ops call --args -: $out"
rc=0; "$cutoff" ops call example.echo --args args.json 2>err || rc=$?
if [[ $rc -eq 2 && "$(cat err)" == *"--args:1:1: invalid JSON"*"write --args @args.json"* ]]; then
  pass "ops call --args FILE: exit 2, says to write @FILE"
else
  fail "ops call --args FILE: exit $rc: $(cat err)"
fi
rc=0; "$cutoff" ops call example.sleep --args '{"ms": 20000}' --timeout-ms 50 >/dev/null 2>err || rc=$?
if [[ $rc -eq 6 && "$(cat err)" == *"--timeout-ms is deprecated; use --budget-ms"* ]]; then
  pass "ops call --timeout-ms still works, deprecated: exit 6"
else
  fail "ops call --timeout-ms: exit $rc: $(cat err)"
fi

# --- cutoff demo says what happened ------------------------------------------------------------
"$cutoff" demo --budget-ms 100 --slow-ms 400 >demo.out
if grep -Eq "it stopped stock.valuation at [0-9]+\.[0-9] ms \(deadline_exceeded" demo.out &&
   ! grep -q "stopped nothing" demo.out; then
  pass "cutoff demo names what it stopped and when"
else
  fail "cutoff demo with a slow branch:"; cat demo.out
fi
"$cutoff" demo --budget-ms 200 --slow-ms 20 >demo.out
if grep -q "cutoff stopped nothing" demo.out && ! grep -q "is stopped at the deadline\|it stopped " demo.out; then
  pass "cutoff demo with nothing to stop says so"
else
  fail "cutoff demo with nothing to stop:"; cat demo.out
fi

exit $(( failures > 0 ))
