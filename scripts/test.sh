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
#
# The e2e halves run with -parallel 4: only the fault suite's TestFaultKill9x10 and
# TestFaultNetwork (its two sides) are parallel tests, and they need three slots to overlap
# (the default is GOMAXPROCS, 2 here).
#
# `scripts/test.sh --split` prints the two halves and exits.
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
  2) ;;
  *) echo "test.sh: KMM_TEST_SHARDS must be 1 or 2, not '$SHARDS'" >&2; exit 2 ;;
esac

# Split e2e's top-level tests: heaviest first, each to the lighter half. The first half also
# carries the other packages (weight of their serial run).
mapfile -t tests < <("$GO" test -list '^Test' ./e2e | grep '^Test')
declare -A weight=()
while read -r name secs; do
  [[ -n "$name" && "$name" != \#* ]] && weight[$name]=$secs
done <"$ROOT/scripts/e2e-weights.txt"
others="${weight[__other_packages__]:-300}"
sorted=$(for t in "${tests[@]}"; do echo "${weight[$t]:-30} $t"; done | sort -rn)
w1=$others w2=0 half1=() half2=()
while read -r secs name; do
  [[ -z "$name" ]] && continue
  if ((w1 <= w2)); then half1+=("$name"); w1=$((w1 + secs)); else half2+=("$name"); w2=$((w2 + secs)); fi
done <<<"$sorted"
anyOf() { local IFS='|'; echo "^($*)\$"; }
echo "test.sh: e2e split: ${#half1[@]} tests after the other packages (~${w1}s), ${#half2[@]} on a second bed (~${w2}s)" >&2

if [[ "${1:-}" == "--split" ]]; then
  printf 'first half:  %s\n' "${half1[*]}"; printf 'second half: %s\n' "${half2[*]}"; exit 0
fi

BED1="${KMM_TESTBED_DIR:-$ROOT/.testbed}"
OFF1="${KMM_TESTBED_PORT_OFFSET:-0}"
BED2="$BED1-shard2"
OFF2=$((OFF1 + 1000))
mkdir -p "$BED2"
for libs in "$BED1"/kafka-*; do # share the fetched jars: nothing is downloaded twice
  [[ -d "$libs" ]] && ln -sfn "$libs" "$BED2/$(basename "$libs")"
done
bed2() { KMM_TESTBED_DIR="$BED2" KMM_TESTBED_PORT_OFFSET="$OFF2" "$ROOT/scripts/testbed.sh" "$@"; }
trap 'bed2 down >/dev/null 2>&1 || true' EXIT
bed2 up >"$BED2.up.log" 2>&1 &
up_pid=$!

pkgs=$("$GO" list ./... | grep -v '/e2e$')
(
  set +e
  "$GO" test -p 1 -count=1 -timeout "$TIMEOUT" $pkgs; rc=$?
  "$GO" test -count=1 -parallel 4 -timeout "$TIMEOUT" -run "$(anyOf "${half1[@]}")" ./e2e || rc=1
  exit $rc
) &
first=$!

second_rc=0
if ! wait "$up_pid"; then
  echo "test.sh: the second bed did not start:" >&2
  cat "$BED2.up.log" >&2
  second_rc=1
else
  set +e # a failing half must not end the script before the other half is waited for
  KMM_TESTBED_DIR="$BED2" KMM_TESTBED_PORT_OFFSET="$OFF2" \
    "$GO" test -count=1 -parallel 4 -timeout "$TIMEOUT" -run "$(anyOf "${half2[@]}")" ./e2e 2>&1 | sed -u 's/^/[e2e shard 2] /'
  second_rc=${PIPESTATUS[0]}
  set -e
fi
first_rc=0
wait "$first" || first_rc=$?
if ((first_rc != 0 || second_rc != 0)); then
  echo "test.sh: FAILED (first half exit $first_rc, second half exit $second_rc)" >&2
  exit 1
fi
