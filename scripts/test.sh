#!/usr/bin/env bash
# scripts/test.sh — the body of `make test`: every package's tests, the real-cluster tiers
# included, against the running test bed (KMM_TESTBED_PORT_OFFSET, KMM_TESTBED_DIR).
#
# KMM_TEST_SHARDS=1 (default): one `go test -p 1 ./...`, as it always was.
# KMM_TEST_SHARDS=2: the e2e package's top-level tests are split in two halves by their usual
# duration (scripts/e2e-weights.txt; a test not listed there counts 30 s). The first half runs
# after the other packages against the running bed; the second half runs at the same time
# against a second bed that this script starts (directory <bed>-shard2, port offset +1000,
# the first bed's Kafka jars) and always stops. The e2e tests use their own topics, groups and
# ephemeral ports, so the halves do not meet; on two cores they take ~60 % of the serial time.
# KMM_TEST_SHARDS=3 (what CI runs): as 2, plus a third bed (<bed>-shard3, +2000) that runs the
# tests tagged `idle` in the weights file — broker outages, stops, freezes, network faults:
# tests that mostly wait out a fault — so their waiting overlaps the CPU-bound halves instead of
# adding to them. The other tests are split between the first two shards.
#
# The e2e shards run with -parallel 4: only the fault suite's TestFaultKill9x10 and
# TestFaultNetwork (its two sides) are parallel tests, and they need three slots to overlap
# (the default is GOMAXPROCS, 2 here).
#
# `scripts/test.sh --split` prints the shards and exits.
# Environment: GO (default go), TEST_TIMEOUT (default 50m), KMM_BIN, plus the bed's variables.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
GO="${GO:-go}"
TIMEOUT="${TEST_TIMEOUT:-50m}"
SHARDS="${KMM_TEST_SHARDS:-1}"
export KMM_REQUIRE_TESTBED=1 KMM_REQUIRE_JARS=1 KMM_REQUIRE_TOOLS=1

case "$SHARDS" in
  1) [[ "${1:-}" == "--split" ]] && exit 0; exec "$GO" test -p 1 -count=1 -timeout "$TIMEOUT" ./... ;;
  2 | 3) ;;
  *) echo "test.sh: KMM_TEST_SHARDS must be 1, 2 or 3, not '$SHARDS'" >&2; exit 2 ;;
esac

# Split e2e's top-level tests: heaviest first, each to the lighter of the first two shards (the
# first also carries the other packages: the weight of their serial run); with 3 shards the
# tests tagged idle go to the third.
mapfile -t tests < <("$GO" test -list '^Test' ./e2e | grep '^Test')
declare -A weight=() tag=()
while read -r name secs what; do
  [[ -n "$name" && "$name" != \#* ]] && weight[$name]=$secs && tag[$name]=$what
done <"$ROOT/scripts/e2e-weights.txt"
others="${weight[__other_packages__]:-300}"
sorted=$(for t in "${tests[@]}"; do echo "${weight[$t]:-30} $t"; done | sort -rn)
w1=$others w2=0 w3=0 half1=() half2=() half3=() alone=()
while read -r secs name; do
  [[ -z "$name" ]] && continue
  if [[ "${tag[$name]:-}" == alone ]]; then alone+=("$name")
  elif ((SHARDS == 3)) && [[ "${tag[$name]:-}" == idle ]]; then half3+=("$name"); w3=$((w3 + secs))
  elif ((w1 <= w2)); then half1+=("$name"); w1=$((w1 + secs)); else half2+=("$name"); w2=$((w2 + secs)); fi
done <<<"$sorted"
anyOf() { local IFS='|'; echo "^($*)\$"; }
echo "test.sh: e2e split: ${#half1[@]} tests after the other packages (~${w1}s), ${#half2[@]} on a second bed (~${w2}s)$( ((SHARDS == 3)) && echo ", ${#half3[@]} idle ones on a third (~${w3}s)")" >&2

if [[ "${1:-}" == "--split" ]]; then
  printf 'first:  %s\n' "${half1[*]}"; printf 'second: %s\n' "${half2[*]}"
  ((SHARDS == 3)) && printf 'third:  %s\n' "${half3[*]}"
  ((${#alone[@]} > 0)) && printf 'alone:  %s\n' "${alone[*]}"
  exit 0
fi

BED1="${KMM_TESTBED_DIR:-$ROOT/.testbed}"
OFF1="${KMM_TESTBED_PORT_OFFSET:-0}"
# bedN K CMD...: scripts/testbed.sh CMD for shard K's bed (K >= 2: <bed>-shardK, ports +1000*(K-1)).
bedN() {
  local k=$1; shift
  KMM_TESTBED_DIR="$BED1-shard$k" KMM_TESTBED_PORT_OFFSET=$((OFF1 + 1000 * (k - 1))) "$ROOT/scripts/testbed.sh" "$@"
}
extra=(2)
((SHARDS == 3)) && ((${#half3[@]})) && extra+=(3)
for k in "${extra[@]}"; do
  mkdir -p "$BED1-shard$k"
  for libs in "$BED1"/kafka-*; do # share the fetched jars: nothing is downloaded twice
    [[ -d "$libs" ]] && ln -sfn "$libs" "$BED1-shard$k/$(basename "$libs")"
  done
done
stopExtra() { for k in "${extra[@]}"; do bedN "$k" down >/dev/null 2>&1 || true; done; rm -rf "${LOGS:-/nonexistent}"; }
trap stopExtra EXIT

# The shards' output is also kept in $LOGS, so that a failed run ends with what failed (a
# failing test's broker log dump can push its own error lines out of a CI log's tail).
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/kmm-test.XXXXXX")
summary() {
  echo "test.sh: what failed (the '--- FAIL' lines, each test's own error lines, panics and timeouts):" >&2
  grep -h -E -e '--- FAIL|^(\[e2e shard [0-9]\] )?(FAIL|panic:)|_test\.go:[0-9]+:|test timed out' "$LOGS"/shard*.log |
    grep -v -E 'INFO|WARN|DEBUG' | cut -c1-400 | tail -n 200 >&2 || true
  # The failing tests' tails of kmm's stderr (what kmm said before the test gave up on it).
  awk '/stderr \(tail\):/ { n = 25; print; next }
    n > 0 { l = $0; sub(/^\[e2e shard [0-9]\] /, "", l); if (l ~ /^        /) { print; n-- } else n = 0 }' "$LOGS"/shard*.log | cut -c1-400 | tail -n 150 >&2 || true
}

# shard K RUN-REGEX: starts shard K's bed, then runs the e2e tests matching RUN-REGEX on it.
shard() {
  local k=$1 run=$2
  if ! bedN "$k" up >"$BED1-shard$k.up.log" 2>&1; then
    echo "test.sh: bed $k did not start:" >&2
    cat "$BED1-shard$k.up.log" >&2
    return 1
  fi
  set +e # a failing shard must not end the script before the others are waited for
  KMM_TESTBED_DIR="$BED1-shard$k" KMM_TESTBED_PORT_OFFSET=$((OFF1 + 1000 * (k - 1))) \
    "$GO" test -count=1 -parallel 4 -timeout "$TIMEOUT" -run "$run" ./e2e 2>&1 | sed -u "s/^/[e2e shard $k] /" | tee "$LOGS/shard$k.log"
  return "${PIPESTATUS[0]}"
}
shard 2 "$(anyOf "${half2[@]}")" &
second=$!
if [[ " ${extra[*]} " == *" 3 "* ]]; then
  shard 3 "$(anyOf "${half3[@]}")" &
  third=$!
fi

pkgs=$("$GO" list ./... | grep -v '/e2e$')
set +e
"$GO" test -p 1 -count=1 -timeout "$TIMEOUT" $pkgs 2>&1 | tee "$LOGS/shard1.log"; first_rc=${PIPESTATUS[0]}
"$GO" test -count=1 -parallel 4 -timeout "$TIMEOUT" -run "$(anyOf "${half1[@]}")" ./e2e 2>&1 | tee -a "$LOGS/shard1.log"
((PIPESTATUS[0] == 0)) || first_rc=1
second_rc=0 third_rc=0
wait "$second" || second_rc=$?
[[ -n "${third:-}" ]] && { wait "$third" || third_rc=$?; }
# Tests tagged `alone` (10,000 partitions: they load both cores for minutes, and the fault
# tests beside them missed their timings) run last, on the first bed, with nothing else running.
if ((${#alone[@]} > 0)); then
  "$GO" test -count=1 -timeout "$TIMEOUT" -run "$(anyOf "${alone[@]}")" ./e2e 2>&1 | tee -a "$LOGS/shard1.log"
  ((PIPESTATUS[0] == 0)) || first_rc=1
fi
set -e
if ((first_rc != 0 || second_rc != 0 || third_rc != 0)); then
  summary
  echo "test.sh: FAILED (first shard exit $first_rc, second $second_rc, third $third_rc)" >&2
  exit 1
fi
