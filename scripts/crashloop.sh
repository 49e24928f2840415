#!/usr/bin/env bash
# scripts/crashloop.sh FLUSH_MS|default: kmm replicate killed with SIGKILL 5 times at 2-4 s
# lifetimes (a crash-looping replicator under a supervisor) while it copies 1M records of 100 B,
# then run to the end; prints the duplicates the crashes cost. On the local bed (make
# testbed-up, KMM_TESTBED_PORT_OFFSET honoured), bin/kmm (make build).
set -u
flush=${1:-default}; tag=$$; topic=crashloop-$tag-$RANDOM; off=${KMM_TESTBED_PORT_OFFSET:-0}
ROOT="$(cd "$(dirname "$0")/.." && pwd)"; tool=$(mktemp); go build -o "$tool" "$ROOT/scripts/crashloop"
f=$(mktemp --suffix=.properties); log=$(mktemp)
cat > $f <<P
clusters = A, B
A.bootstrap.servers = 127.0.0.1:$((19092 + off))
B.bootstrap.servers = 127.0.0.1:$((29092 + off))
A->B.enabled = true
A->B.topics = $topic
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
offset.storage.replication.factor = 1
status.storage.replication.factor = 1
config.storage.replication.factor = 1
emit.heartbeats.enabled = false
P
[[ $flush != default ]] && echo "B.offset.flush.interval.ms = $flush" >> $f
N=1000000
"$tool" $f produce $topic $N
lifes=(2.0 3.5 2.5 4.0 3.0)
for l in "${lifes[@]}"; do
  "$ROOT/bin/kmm" replicate $f >"$log" 2>&1 & pid=$!
  sleep $l; kill -9 $pid; wait $pid 2>/dev/null
done
"$ROOT/bin/kmm" replicate $f >"$log" 2>&1 & pid=$!
prev=-1
for i in $(seq 1 120); do
  c=$("$tool" $f count $topic); if [[ $c == $prev && $c -ge $N ]]; then break; fi; prev=$c; sleep 3
done
kill -TERM $pid; wait $pid
echo "flush=$flush: $N records, 5 kills at 2-4 s lifetimes, target holds $c: duplicates $((c-N)), per kill $(((c-N)/5))"
rm -f "$tool" "$f" "$log"
