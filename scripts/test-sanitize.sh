#!/usr/bin/env bash
# scripts/test-sanitize.sh — the body of `make test-sanitize`: the tests of the C data plane
# (pkg/rdkafka's dataplane.c and scan.c) under AddressSanitizer (with LeakSanitizer) and
# UndefinedBehaviorSanitizer. Any finding fails the run.
#
# The test binaries are built with `go test -asan` (Go instruments its own accesses, to C memory
# too, and links the ASan runtime; the cgo C gets -fsanitize=address) and with UBSan added to
# every cgo compile and link, -fno-sanitize-recover: the first undefined behaviour aborts the
# test binary. librdkafka itself is the prebuilt static library inside confluent-kafka-go: not
# instrumented, but its malloc and free are ASan's, so kmm's C overrunning a librdkafka buffer,
# or freeing one twice, is caught.
#
# Tests run (the C plane's): the in-process kfake tier (no broker) and the real-bed tests of
# pkg/rdkafka, so the bed must be up (make test-sanitize starts it; KMM_REQUIRE_TESTBED=1 fails a
# test that does not find it). A test binary of each package is built once, then run in its
# package directory as `go test` would.
#
# Leaks: LeakSanitizer checks at exit. confluent-kafka-go v2.11.1 leaks a little on some admin
# calls, and those leaks alone are suppressed:
# - the C strings it makes for librdkafka calls that copy them (CreateTopics' topic names and
#   configs, DeleteTopics' names: C.CString never freed), allocated by its package's C.malloc
#   wrapper _cgo_<hash>_Cfunc__Cmalloc (the hash is that package's, read from the binary);
# - the rd_kafka_AdminOptions_t of CreateACLs, DescribeACLs and DeleteACLs and DescribeACLs'
#   filter (rd_kafka_AclBindingFilter_new, allocated in rd_kafka_AclBinding_new0), never
#   destroyed; kmm's own C calls neither function.
# A leak of kmm's own C, or of a C.CString of kmm's Go code, is reported.
#
# Environment: GO (default go), SANITIZE_TIMEOUT (default 10m per package), the bed's variables.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
GO="${GO:-go}"
TIMEOUT="${SANITIZE_TIMEOUT:-10m}"

# A package and its tests that drive the C plane: top-level test names, or prefixes (Name*).
# Each must match at least one test: a test renamed away from this list fails the run.
tests=(
  # scan.c (digests, XXH64), the C copier on kfake (idle at a transaction's tail, remove and
  # re-add, throttle), the C copier and PollDigests on the real bed
  "./pkg/rdkafka TestScanXXH64 TestScanDigestMatchesRecordHash TestCopierIdleAtTransactionTail TestCopierRemoveAndThrottle TestDataPlaneCopy TestRealPollDigests"
  # the engine on kfake (the C plane is the default): resume positions, retries, rejections
  "./pkg/replicator TestKfake*"
  # kmm verify --level full on kfake: scan.c through the command
  "./pkg/cmd/verifycmd TestRunFullOverKfake"
)

# -O1 and frame pointers: ASan's advice for usable stack traces at a moderate cost.
export CGO_CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=undefined -fno-sanitize-recover=undefined"
export CGO_LDFLAGS="-fsanitize=undefined"
export KMM_REQUIRE_TESTBED=1

OUT=$(mktemp -d "${TMPDIR:-/tmp}/kmm-sanitize.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
t0=$SECONDS
pkgs=()
for t in "${tests[@]}"; do pkgs+=("${t%% *}"); done
# One build of the packages' test binaries (-o DIR/: each as DIR/<name>.test).
"$GO" test -asan -c -o "$OUT/" "${pkgs[@]}"
echo "test-sanitize: test binaries built in $((SECONDS - t0))s" >&2

first="$OUT/$(basename "${pkgs[0]}").test"
cmalloc=$("$GO" tool nm "$first" | awk '$3 ~ /^github\.com\/confluentinc\/confluent-kafka-go\/v2\/kafka\._cgo_[0-9a-f]+_Cfunc__Cmalloc$/ && !found { sub(/^.*\/kafka\./, "", $3); print $3; found = 1 }')
if [[ -z "$cmalloc" ]]; then
  echo "test-sanitize: confluent-kafka-go's C.malloc wrapper not found in $first (its leak suppression would match nothing)" >&2
  exit 1
fi
cat >"$OUT/lsan.supp" <<EOF
# confluent-kafka-go's own leaks (scripts/test-sanitize.sh says which)
leak:$cmalloc
leak:rd_kafka_AdminOptions_new
leak:rd_kafka_AclBinding_new0
EOF
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1"
export LSAN_OPTIONS="suppressions=$OUT/lsan.supp:print_suppressions=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

rc=0
for t in "${tests[@]}"; do
  read -r pkg names <<<"$t"
  bin="$OUT/$(basename "$pkg").test"
  run="^($(sed -e 's/\*/.*/g' -e 's/ /|/g' <<<"$names"))\$"
  listed=$(cd "$pkg" && "$bin" -test.list "$run")
  for name in $names; do
    if ! grep -q -E "^${name//\*/.*}\$" <<<"$listed"; then
      echo "test-sanitize: $pkg has no test $name (renamed? update scripts/test-sanitize.sh)" >&2
      rc=1
    fi
  done
  echo "test-sanitize: $pkg -run '$run'" >&2
  set +e
  (cd "$pkg" && "$bin" -test.count=1 -test.timeout="$TIMEOUT" -test.run "$run" -test.v) 2>&1 | tee "$OUT/run.log" | grep -v -E '^\s*=== (RUN|PAUSE|CONT|NAME)|^\s+--- PASS'
  r=${PIPESTATUS[0]}
  set -e
  # a finding exits the binary non-zero (halt_on_error, LeakSanitizer's exit code); its report
  # is also looked for, so nothing passes with one printed
  if grep -q -E 'ERROR: (AddressSanitizer|LeakSanitizer)|SUMMARY: (AddressSanitizer|UndefinedBehaviorSanitizer)|: runtime error: ' "$OUT/run.log"; then
    echo "test-sanitize: $pkg: a sanitizer report (above)" >&2
    ((r == 0)) && r=1
  fi
  # running these tests is the point: one that skips fails the run
  if grep -q -E '^\s*--- SKIP' "$OUT/run.log"; then
    echo "test-sanitize: $pkg: a test skipped (above)" >&2
    r=1
  fi
  ((r == 0)) || rc=1
done
if ((rc != 0)); then
  echo "test-sanitize: FAILED ($((SECONDS - t0))s)" >&2
  exit 1
fi
echo "test-sanitize: ok, no sanitizer findings ($((SECONDS - t0))s)" >&2
