#!/usr/bin/env bash
# kmm test bed: independent single-node Apache Kafka (KRaft) clusters on loopback.
#
#   scripts/testbed.sh fetch            fetch Kafka jars from Maven Central (cached; no-op when present)
#   scripts/testbed.sh up [A B C]       start clusters (default all three), wait until they answer metadata
#   scripts/testbed.sh down [A B C]     stop exactly the processes this script started (pid files)
#   scripts/testbed.sh reset            stop everything and wipe data and logs (keeps the jar cache)
#   scripts/testbed.sh status           print which clusters run
#   scripts/testbed.sh classpath        print the Java classpath of the fetched jars
#   scripts/testbed.sh logs A [N]       print the last N lines of cluster A's broker log
#   scripts/testbed.sh wan B [50ms]     WAN profile: a toxiproxy link in front of B's PROXIED listener adding
#                                       50 ms each way, in the foreground until Ctrl-C (see below)
#
# Clusters and listeners (all 127.0.0.1):
#   A: PLAINTEXT 19092  CONTROLLER 19093  SASL_PLAINTEXT 19094  SSL 19095  SASL_SSL 19096  PROXIED 19099 (advertised 19100)
#   B: PLAINTEXT 29092  CONTROLLER 29093  SASL_PLAINTEXT 29094  SSL 29095  SASL_SSL 29096  PROXIED 29099 (advertised 29100)
#   C: PLAINTEXT 14092  CONTROLLER 14093  SASL_PLAINTEXT 14094  SSL 14095  SASL_SSL 14096  PROXIED 14099 (advertised 14100)
# PROXIED (base+7) is PLAINTEXT like the first, but the broker advertises base+8, where a
# toxiproxy listens and forwards to base+7: a client bootstrapped at base+8 goes through the
# proxy for every connection, since the metadata it gets names base+8. Nothing listens on base+8
# unless a proxy runs: the fault suite's (e2e/testbed/netfault, in the test process) or the WAN
# profile's link with injected latency (scripts/wanlink: started by the bench, the WAN e2e tests
# or `scripts/testbed.sh wan B 50ms`). One proxy per cluster at a time.
# PLAINTEXT is the trusted test listener (principal User:ANONYMOUS is a super user).
# SASL_PLAINTEXT knows PLAIN and SCRAM-SHA-512 users admin/admin-secret (super user) and
# alice/alice-secret, bob/bob-secret (ordinary principals, for ACL tests).
# SSL requires a client certificate signed by the bed's CA ($KMM_TESTBED_DIR/pki/ca.{crt,key}).
# SASL_SSL: TLS with the same broker certificate (no client certificate) and SCRAM-SHA-512 or
# PLAIN with the same users as SASL_PLAINTEXT.
# Authorizer: StandardAuthorizer everywhere. On A and B a resource without ACLs is open to every
# principal (allow.everyone.if.no.acl.found=true); on C it is closed: alice and bob may do there
# only what an ACL allows them (the ACL-limited principal tests), admin and ANONYMOUS everything.
#
# Environment: KMM_TESTBED_DIR (default <repo>/.testbed), KAFKA_VERSION (default from the pom),
# KMM_BROKER_HEAP (default -Xms256m -Xmx768m), KMM_TESTBED_PORT_OFFSET (default 0: added to every
# port above, so two beds — two checkouts — can run side by side; e2e/testbed reads it too).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BED="${KMM_TESTBED_DIR:-$ROOT/.testbed}"
POM="$ROOT/scripts/kafka/pom.xml"
KAFKA_VERSION="${KAFKA_VERSION:-$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$POM")}"
LIBS="$BED/kafka-$KAFKA_VERSION/libs"
HEAP="${KMM_BROKER_HEAP:--Xms256m -Xmx768m}"
ALL_CLUSTERS=(A B C)

log() { printf 'testbed: %s\n' "$*" >&2; }
die() { printf 'testbed: error: %s\n' "$*" >&2; exit 1; }

PORT_OFFSET="${KMM_TESTBED_PORT_OFFSET:-0}"
[[ "$PORT_OFFSET" =~ ^[0-9]+$ ]] || die "KMM_TESTBED_PORT_OFFSET must be a non-negative integer, not '$PORT_OFFSET'"

base_port() {
  case "$1" in
    A) echo $((19092 + PORT_OFFSET)) ;; B) echo $((29092 + PORT_OFFSET)) ;; C) echo $((14092 + PORT_OFFSET)) ;;
    *) die "unknown cluster '$1' (known: A B C)" ;;
  esac
}

fetch() {
  if [[ -f "$LIBS/.complete" ]]; then return 0; fi
  command -v mvn >/dev/null || die "mvn not found (install Maven)"
  command -v java >/dev/null || die "java not found (install a JDK 17+)"
  log "fetching Apache Kafka $KAFKA_VERSION jars from Maven Central into $LIBS"
  rm -rf "$LIBS.tmp"
  mvn -q -B -f "$POM" -Dkafka.version="$KAFKA_VERSION" dependency:copy-dependencies \
      -DoutputDirectory="$LIBS.tmp" -DincludeScope=runtime >&2
  rm -rf "$LIBS"; mv "$LIBS.tmp" "$LIBS"
  touch "$LIBS/.complete"
  log "fetched $(ls "$LIBS" | wc -l) jars"
}

classpath() { fetch; echo "$LIBS/*"; }

# pki: a CA and one broker certificate (PEM, PKCS8 key) valid for 127.0.0.1 and localhost.
pki() {
  local d="$BED/pki"
  if [[ -f "$d/.complete" ]]; then return 0; fi
  command -v openssl >/dev/null || die "openssl not found"
  mkdir -p "$d"
  (
    cd "$d"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
      -subj "/CN=kmm-testbed-ca" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout broker.key.rsa -out broker.csr \
      -subj "/CN=localhost" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > san.ext
    openssl x509 -req -in broker.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out broker.crt \
      -days 3650 -extfile san.ext 2>/dev/null
    openssl pkcs8 -topk8 -nocrypt -in broker.key.rsa -out broker.key
    cat broker.key broker.crt > broker-keystore.pem
    rm -f broker.csr broker.key.rsa san.ext
  )
  touch "$d/.complete"
}

write_config() {
  local c="$1" p; p="$(base_port "$c")"
  local dir="$BED/$c"
  mkdir -p "$dir/data" "$dir/logs"
  cat > "$dir/server.properties" <<PROPS
# generated by scripts/testbed.sh for cluster $c
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$((p+1))
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://127.0.0.1:$p,CONTROLLER://127.0.0.1:$((p+1)),SASL_PLAINTEXT://127.0.0.1:$((p+2)),SSL://127.0.0.1:$((p+3)),SASL_SSL://127.0.0.1:$((p+4)),PROXIED://127.0.0.1:$((p+7))
advertised.listeners=PLAINTEXT://127.0.0.1:$p,SASL_PLAINTEXT://127.0.0.1:$((p+2)),SSL://127.0.0.1:$((p+3)),SASL_SSL://127.0.0.1:$((p+4)),PROXIED://127.0.0.1:$((p+8))
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL,PROXIED:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/data
num.partitions=1
# A deleted topic's files are closed after 1 s (default 60 s): tests create and delete 10,000
# partitions, and every open file counts against the broker's limit.
file.delete.delay.ms=1000
# Offset and time indexes of 64 KiB (default 10 MiB; a segment rolls when its index is full:
# here at ~32 MiB). The broker maps each partition's indexes, and on this machine's kernel a
# first write to a mapped sparse index read the file ahead, zeroing pages: loading 10,000 fresh
# partitions kept the broker at 90 % system CPU in memset (with 10 MiB indexes and with 1 MiB)
# and timed produce requests out (2026-12-07).
log.index.size.max.bytes=65536
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
auto.create.topics.enable=false
group.initial.rebalance.delay.ms=0
log.segment.bytes=67108864
log.retention.check.interval.ms=5000
log.cleaner.backoff.ms=1000
delete.topic.enable=true
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=$([[ $c == C ]] && echo false || echo true)
super.users=User:ANONYMOUS;User:admin
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.ssl.client.auth=none
ssl.keystore.type=PEM
ssl.keystore.location=$BED/pki/broker-keystore.pem
ssl.truststore.type=PEM
ssl.truststore.location=$BED/pki/ca.crt
ssl.client.auth=required
ssl.endpoint.identification.algorithm=
PROPS
  cat > "$dir/log4j2.properties" <<'PROPS'
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.state.name = state.change.logger
logger.state.level = WARN
logger.authorizer.name = kafka.authorizer.logger
logger.authorizer.level = WARN
PROPS
}

pid_alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_one() {
  local c="$1" dir="$BED/$1" p; p="$(base_port "$c")"
  if pid_alive "$dir/broker.pid"; then log "$c already running (pid $(cat "$dir/broker.pid"))"; return 0; fi
  if port_open "$p"; then die "port $p for cluster $c is taken by a process this script did not start"; fi
  write_config "$c"
  local cp="$LIBS/*"
  if [[ ! -f "$dir/data/meta.properties" ]]; then
    # A random Kafka Uuid (base64url of 16 bytes); like Kafka's own, never starting with '-'.
    local id="-"
    while [[ "$id" == -* ]]; do id="$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"; done
    java -cp "$cp" -Dlog4j2.configurationFile="$dir/log4j2.properties" kafka.tools.StorageTool format \
      --cluster-id="$id" -c "$dir/server.properties" \
      --add-scram 'SCRAM-SHA-512=[name=alice,password=alice-secret]' \
      --add-scram 'SCRAM-SHA-512=[name=bob,password=bob-secret]' \
      --add-scram 'SCRAM-SHA-512=[name=admin,password=admin-secret]' >"$dir/logs/format.log" 2>&1 \
      || { cat "$dir/logs/format.log" >&2; die "formatting storage of $c failed"; }
  fi
  # A broker keeps a file open per partition (a deleted topic's until file.delete.delay.ms
  # passes): 10,000 partitions replaced by 10,000 new ones exhausted a limit of 20,000 ("Too many
  # open files" accepting connections). The soft limit is raised to the hard one where it is lower.
  ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
  # A bed made before log.index.size.max.bytes=65536 holds larger index files, which the broker
  # refuses to load ("newPosition > limit"): removed, the broker rebuilds them from the segment.
  find "$dir/data" \( -name '*.index' -o -name '*.timeindex' \) -size +64k -delete 2>/dev/null || true
  # shellcheck disable=SC2086
  nohup java $HEAP -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$dir/log4j2.properties" \
    -cp "$cp" kafka.Kafka "$dir/server.properties" >>"$dir/logs/broker.log" 2>&1 </dev/null &
  echo $! > "$dir/broker.pid"
}

ping_tool() {
  local bin="$BED/bin/kping"
  if [[ ! -x "$bin" || "$ROOT/scripts/kping/main.go" -nt "$bin" ]]; then
    (cd "$ROOT" && CGO_ENABLED=0 go build -o "$bin" ./scripts/kping) || die "building kping failed"
  fi
  echo "$bin"
}

wait_ready() {
  local c="$1" dir="$BED/$1" p; p="$(base_port "$c")"
  local kping; kping="$(ping_tool)"
  local deadline=$((SECONDS + ${KMM_TESTBED_TIMEOUT:-120}))
  while (( SECONDS < deadline )); do
    if ! pid_alive "$dir/broker.pid"; then
      tail -n 40 "$dir/logs/broker.log" >&2 || true
      die "broker of cluster $c exited during start (log: $dir/logs/broker.log)"
    fi
    if port_open "$p" && "$kping" "127.0.0.1:$p" >/dev/null 2>&1; then
      # First start of this cluster: let it create its internal topics now, not in a test.
      if [[ ! -f "$dir/.warm" ]]; then
        "$kping" -warm "127.0.0.1:$p" >/dev/null || die "warming up cluster $c failed"
        touch "$dir/.warm"
      fi
      echo "$c 127.0.0.1:$p $("$kping" "127.0.0.1:$p")"
      return 0
    fi
    sleep 0.5
  done
  tail -n 40 "$dir/logs/broker.log" >&2 || true
  die "cluster $c did not answer metadata within ${KMM_TESTBED_TIMEOUT:-120}s"
}

up() {
  local clusters=("$@"); (( ${#clusters[@]} )) || clusters=("${ALL_CLUSTERS[@]}")
  local t0=$SECONDS
  fetch; pki; ping_tool >/dev/null
  for c in "${clusters[@]}"; do start_one "$c"; done
  for c in "${clusters[@]}"; do wait_ready "$c"; done
  log "ready in $((SECONDS - t0))s: ${clusters[*]}"
}

stop_one() {
  local c="$1" f="$BED/$1/broker.pid"
  if ! pid_alive "$f"; then rm -f "$f"; return 0; fi
  local pid; pid="$(cat "$f")"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then log "$c (pid $pid) did not stop in 30s; killing"; kill -KILL "$pid" 2>/dev/null || true; fi
  rm -f "$f"
  log "stopped $c (pid $pid)"
}

down() {
  local clusters=("$@"); (( ${#clusters[@]} )) || clusters=("${ALL_CLUSTERS[@]}")
  for c in "${clusters[@]}"; do base_port "$c" >/dev/null; stop_one "$c" & done
  wait
}

reset() {
  down
  for c in "${ALL_CLUSTERS[@]}"; do rm -rf "${BED:?}/$c"; done
  log "wiped data and logs of ${ALL_CLUSTERS[*]}"
}

status() {
  local rc=0
  for c in "${ALL_CLUSTERS[@]}"; do
    if pid_alive "$BED/$c/broker.pid"; then echo "$c running pid $(cat "$BED/$c/broker.pid") 127.0.0.1:$(base_port "$c")"
    else echo "$c stopped"; rc=1; fi
  done
  return $rc
}

cmd="${1:-}"; shift || true
case "$cmd" in
  fetch) fetch ;;
  up) up "$@" ;;
  down|stop) down "$@" ;;
  reset) reset ;;
  status) status ;;
  classpath) classpath ;;
  logs) tail -n "${2:-80}" "$BED/${1:?cluster}/logs/broker.log" ;;
  wan) base_port "${1:?cluster}" >/dev/null; cd "$ROOT" && exec go run ./scripts/wanlink/cmd/wanlink -latency "${2:-50ms}" "$1" ;;
  *) sed -n '2,23p' "$0" >&2; exit 2 ;;
esac
