#!/usr/bin/env bash
# scripts/pg-test-server: PG_NICE starts the server's processes at that niceness, and a value
# that is not a niceness is refused with exit 2 before anything starts.
set -euo pipefail
script="$1/scripts/pg-test-server"
dir=$(mktemp -d "${TMPDIR:-/tmp}/pg-nice-test.XXXXXX")
trap '"$script" stop "$dir/pg" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for bad in abc -1 20 ' 5'; do
  set +e
  out=$(PG_NICE="$bad" "$script" start "$dir/pg" 2>&1)
  rc=$?
  set -e
  [[ $rc -eq 2 ]] || fail "PG_NICE='$bad': exit $rc, expected 2"
  [[ "$out" == *"PG_NICE must be a whole number from 0 to 19"* ]] || fail "PG_NICE='$bad': $out"
  [[ ! -e "$dir/pg" ]] || fail "PG_NICE='$bad' left $dir/pg behind"
done

PG_NICE=7 "$script" start "$dir/pg" >/dev/null
base=$(cat "$dir/pg/datadir")
pid=$(head -n1 "$base/data/postmaster.pid")
nice=$(ps -o ni= -p "$pid" | tr -d ' ')
[[ "$nice" == 7 ]] || fail "postmaster $pid runs at niceness '$nice', expected 7"
# The server answers (its backends are forked from the postmaster, and inherit its niceness).
psql "$(cat "$dir/pg/url")" -Atc "select 1" >/dev/null || fail "the server does not answer"
"$script" stop "$dir/pg"
[[ ! -e "$base" ]] || fail "stop left $base behind"
echo "ok: PG_NICE refused bad values and started the server at niceness 7"
