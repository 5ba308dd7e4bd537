#!/usr/bin/env bash
# run-sharded.sh N GTEST_BINARY [ARGS...]: runs a GoogleTest binary as N processes at once, each
# on its share of the tests (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX), and fails when any shard
# fails or a shard ran no test. Each shard's output is printed whole, one shard after another.
set -uo pipefail
n="$1"; shift
[ "$n" -ge 1 ] 2>/dev/null || { echo "run-sharded.sh: the shard count must be a positive number, not '$n'" >&2; exit 2; }
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
pids=()
for ((i = 0; i < n; i++)); do
  GTEST_TOTAL_SHARDS="$n" GTEST_SHARD_INDEX="$i" "$@" > "$logs/$i.log" 2>&1 &
  pids+=("$!")
done
status=0
for ((i = 0; i < n; i++)); do
  wait "${pids[$i]}" || status=1
  echo "--- shard $((i + 1)) of $n"
  cat "$logs/$i.log"
  grep -qE '^\[==========\] [1-9][0-9]* tests? from' "$logs/$i.log" || { echo "shard $((i + 1)) of $n ran no test" >&2; status=1; }
done
exit "$status"
